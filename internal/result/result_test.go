package result

import "testing"

func TestComparable(t *testing.T) {
	dev := Device{Name: "NVIDIA H100 80GB HBM3", DriverVersion: "580.95.05", NVRTCVersion: "13.0"}
	a := &Result{Fingerprint: NewFingerprint(dev)}
	b := &Result{Fingerprint: NewFingerprint(dev)}
	if ok, why := Comparable(a, b); !ok {
		t.Fatalf("same fingerprint not comparable: %s", why)
	}
	for _, mod := range []func(*Device){
		func(d *Device) { d.Name = "NVIDIA H200" },
		func(d *Device) { d.DriverVersion = "575.1" },
		func(d *Device) { d.NVRTCVersion = "12.8" },
	} {
		d2 := dev
		mod(&d2)
		c := &Result{Fingerprint: NewFingerprint(d2)}
		if ok, why := Comparable(a, c); ok || why == "" {
			t.Fatalf("%+v comparable with %+v", d2, dev)
		}
		if c.Fingerprint.Key == a.Fingerprint.Key {
			t.Fatalf("fingerprint keys equal for different devices")
		}
	}
	d3 := dev
	d3.UUID = "GPU-other"
	if ok, _ := Comparable(a, &Result{Fingerprint: NewFingerprint(d3)}); !ok {
		t.Fatalf("two cards of one model, driver and NVRTC must be comparable")
	}
}
