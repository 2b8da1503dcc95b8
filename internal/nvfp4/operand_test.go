package nvfp4

import (
	"strings"
	"testing"
)

func TestNibbleOrderAndScaleIndex(t *testing.T) {
	o := NewOperand(2, 32)
	// Row 0, byte 0: element 0 is the low nibble (0x2 = 1.0), element 1 the
	// high nibble (0xB = -1.5).
	o.Data[0] = 0xB2
	// Row 1 starts at byte 16; its element 17 is the high nibble of byte 16+8.
	o.Data[24] = 0x70
	o.Scales[0] = 0x40 // row 0, elements 0..15: 2.0
	o.Scales[1] = 0x01 // row 0, elements 16..31: 2^-9
	o.Scales[3] = 0x3C // row 1, elements 16..31: 1.5
	checks := []struct {
		r, k int
		want float64
	}{
		{0, 0, 2}, {0, 1, -3}, {0, 2, 0}, {1, 16, 0}, {1, 17, 9}, {1, 0, 0},
	}
	for _, c := range checks {
		if got := o.Value(c.r, c.k); got != c.want {
			t.Errorf("Value(%d,%d) = %v, want %v", c.r, c.k, got, c.want)
		}
	}
	row := make([]float64, 32)
	for r := range 2 {
		o.DecodeRow(r, row)
		for k := range 32 {
			if row[k] != o.Value(r, k) {
				t.Errorf("DecodeRow(%d)[%d] = %v, Value = %v", r, k, row[k], o.Value(r, k))
			}
		}
	}
}

func TestSetCodeRoundTrip(t *testing.T) {
	o := NewOperand(3, 48)
	r := newStream(1, 1)
	want := make([]uint8, 3*48)
	for i := range want {
		want[i] = uint8(r.Intn(16))
		o.SetCode(i/48, i%48, want[i])
	}
	for i := range want {
		if got := o.Code(i/48, i%48); got != want[i] {
			t.Fatalf("element %d: code %#x, want %#x", i, got, want[i])
		}
	}
	sub := o.SubRows(1, 3)
	for i := range 2 * 48 {
		if sub.Code(i/48, i%48) != want[48+i] {
			t.Fatalf("SubRows: element %d differs", i)
		}
	}
}

func TestShapeChecksNameTheRule(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{CheckOperandShape(0, 16), "rows must be >= 1"},
		{CheckOperandShape(1, 24), "multiple of 16"},
		{CheckGroupShape(nil, 64, 128), "at least one group"},
		{CheckGroupShape([]int{4, 0}, 64, 128), "group 1: M must be >= 1"},
		{CheckGroupShape([]int{4}, 100, 128), "N must be a positive multiple of 64"},
		{CheckGroupShape([]int{4}, 64, 200), "K must be a positive multiple of 128"},
		{CheckDualShape(0, 64, 128), "M must be >= 1"},
		{CheckDualShape(1, 0, 128), "N must be"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", c.err, c.want)
		}
	}
	if err := CheckGroupShape([]int{1, 40}, 64, 128); err != nil {
		t.Errorf("valid group shape rejected: %v", err)
	}
	if err := CheckDualShape(1, 4096, 7168); err != nil {
		t.Errorf("valid dual shape rejected: %v", err)
	}
}
