package gpu

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVML is initialised once per process and never shut down: telemetry is
// read before and after every measured shape, and go-nvml's Init/Shutdown
// pair reloads the library each time.
var nvmlState struct {
	once sync.Once
	err  error
}

func loadNVML() error {
	nvmlState.once.Do(func() {
		if ret := nvml.Init(); ret != nvml.SUCCESS {
			nvmlState.err = &UnavailableError{What: "NVML", Err: fmt.Errorf("nvmlInit: %s (%d)", nvmlErrorString(ret), int(ret))}
		}
	})
	return nvmlState.err
}

// nvmlErrorString avoids nvml.ErrorString before the library is loaded
// (go-nvml falls back to a table then, but say it plainly).
func nvmlErrorString(ret nvml.Return) string {
	if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return "libnvidia-ml.so.1 not found"
	}
	return nvml.ErrorString(ret)
}

func nvmlDevice(uuid string) (nvml.Device, error) {
	if err := loadNVML(); err != nil {
		return nil, err
	}
	if uuid == "" {
		return nil, &UnavailableError{What: "NVML", Err: errors.New("the CUDA driver gave no device UUID to look the device up by")}
	}
	dev, ret := nvml.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml: device %s: %s", uuid, nvmlErrorString(ret))
	}
	return dev, nil
}

type nvmlStaticInfo struct {
	driverVersion string
	maxSMClockMHz int
}

func nvmlStatic(uuid string) (nvmlStaticInfo, error) {
	var s nvmlStaticInfo
	dev, err := nvmlDevice(uuid)
	if err != nil {
		return s, err
	}
	if v, ret := nvml.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		s.driverVersion = v
	}
	if v, ret := dev.GetMaxClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		s.maxSMClockMHz = int(v)
	}
	return s, nil
}

// Telemetry reads clocks, temperature, power and clock-event reasons
// through NVML, looking the device up by its UUID. It does not use the
// device thread and may be called from any goroutine, also during Do.
func (d *Device) Telemetry() (Telemetry, error) {
	t := Telemetry{At: time.Now()}
	d.closeMu.RLock()
	closed := d.closed
	d.closeMu.RUnlock()
	if closed {
		return t, ErrClosed
	}
	dev, err := nvmlDevice(d.info.UUID)
	if err != nil {
		return t, err
	}
	var errs []error
	get := func(what string, ret nvml.Return) bool {
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("%s: %s", what, nvmlErrorString(ret)))
			return false
		}
		return true
	}
	if v, ret := dev.GetClockInfo(nvml.CLOCK_SM); get("SM clock", ret) {
		t.SMClockMHz = int(v)
	}
	if v, ret := dev.GetClockInfo(nvml.CLOCK_MEM); get("memory clock", ret) {
		t.MemClockMHz = int(v)
	}
	if v, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); get("temperature", ret) {
		t.TempC = int(v)
	}
	if v, ret := dev.GetPowerUsage(); get("power", ret) {
		t.PowerW = float64(v) / 1000
	}
	if v, ret := dev.GetEnforcedPowerLimit(); get("power limit", ret) {
		t.PowerLimitW = float64(v) / 1000
	}
	// The event-reasons call replaced the throttle-reasons call in newer
	// drivers; fall back for older ones.
	v, ret := dev.GetCurrentClocksEventReasons()
	if ret != nvml.SUCCESS {
		v, ret = dev.GetCurrentClocksThrottleReasons()
	}
	if get("clock event reasons", ret) {
		t.ClockEventReasons = v
		t.Flags = ReasonFlags(v)
	}
	if len(errs) > 0 {
		return t, fmt.Errorf("nvml: telemetry of %s: %w", d.info.UUID, errors.Join(errs...))
	}
	return t, nil
}

// TelemetryUnavailable reports whether NVML itself is missing, without a
// device (for callers that want to say so once).
func TelemetryUnavailable() error { return loadNVML() }
