package pitches

import (
	"strings"
	"testing"
)

// A round measurement's fields are single lines: every control character
// (unicode.IsControl: C0 with tab and line breaks, DEL, C1) is refused,
// naming the field; "H100" and a non-ASCII label pass.
func TestValidateMeasurementRefusesControlCharacters(t *testing.T) {
	ok := RoundMeasurement{Problem: "nvfp4_group_gemm", Suite: "benchmarks", DeviceClass: "H100"}
	if err := ValidateMeasurement(ok); err != nil {
		t.Fatalf("valid measurement refused: %v", err)
	}
	if err := ValidateMeasurement(RoundMeasurement{Problem: "nvfp4_group_gemm", DeviceClass: "GH200 · 96 GB"}); err != nil {
		t.Fatalf("a non-ASCII device class refused: %v", err)
	}
	for _, bad := range []string{"H\x1b100", "H\x00100", "H100\n", "H\t100", "H\r100", "H\x7f100", "H\u0085100", "H\u009b100", "H\x07"} {
		for _, field := range []string{"problem", "suite", "device_class"} {
			m := ok
			switch field {
			case "problem":
				m.Problem = bad
			case "suite":
				m.Suite = bad
			case "device_class":
				m.DeviceClass = bad
			}
			err := ValidateMeasurement(m)
			if ErrorCode(err) != EINVALID || fieldOf(err) != field || !strings.Contains(ErrorMessage(err), "control characters") {
				t.Errorf("%s %q: got %v, want invalid %s (control characters)", field, bad, err, field)
			}
		}
	}
	m := ok
	m.DeviceClass = strings.Repeat("H", MaxMeasurementChars+1)
	if err := ValidateMeasurement(m); ErrorCode(err) != EINVALID || fieldOf(err) != "device_class" {
		t.Errorf("long device class: %v", err)
	}
	m.DeviceClass = "H\xff100"
	if err := ValidateMeasurement(m); ErrorCode(err) != EINVALID || fieldOf(err) != "device_class" {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

// A variant spec with a control character is refused as one, naming the
// field, before its form is judged.
func TestValidateVariantRefusesControlCharacters(t *testing.T) {
	for _, bad := range []string{"baseline\x1b[2J", "baseline?stages=3\n", "base\u0085line"} {
		err := ValidateVariant("variant", bad)
		if ErrorCode(err) != EINVALID || fieldOf(err) != "variant" || !strings.Contains(ErrorMessage(err), "control characters") {
			t.Errorf("%q: got %v, want invalid variant (control characters)", bad, err)
		}
	}
}

func TestCheckLine(t *testing.T) {
	if err := CheckLine("label", "B200, measured elsewhere", 200); err != nil {
		t.Fatalf("a plain line refused: %v", err)
	}
	if err := CheckLine("label", strings.Repeat("x", 201), 200); fieldOf(err) != "label" {
		t.Errorf("too long: %v", err)
	}
	if err := CheckLine("label", strings.Repeat("x", 5000), 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := CheckLine("label", "a\x1bb", 0); fieldOf(err) != "label" || !strings.Contains(ErrorMessage(err), "U+001B at byte 1") {
		t.Errorf("control character: %v", err)
	}
}
