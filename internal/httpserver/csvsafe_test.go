package httpserver

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/internal/runner"
)

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1+cmd":                   "'+1+cmd",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\tx":                      "'\tx",
		"\rx":                      "'\rx",
		"-0.5":                     "-0.5", // a number stays a number
		"+3":                       "+3",
		"baseline?stages=3":        "baseline?stages=3",
		"":                         "",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// The runs export (pages and API) writes an imported run's free-text device
// label, typed by whoever imported it, as text.
func TestRunsCSVNeutralisesFormulas(t *testing.T) {
	var buf strings.Builder
	run := &runner.Run{ID: 7, Problem: "nvfp4_group_gemm", Suite: "benchmarks", Variant: "baseline?stages=3", Baseline: "baseline",
		Device: "=HYPERLINK(\"http://evil\",\"B200\")", Imported: true, Status: runner.StatusSucceeded}
	if err := writeRunsCSV(&buf, []runJSON{{Run: run, DeviceLabel: run.Device}}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("export: %v\n%s", err, buf.String())
	}
	if got := rows[1][5]; got != "'=HYPERLINK(\"http://evil\",\"B200\")" {
		t.Fatalf("device cell %q, want the formula neutralised", got)
	}
	if rows[1][3] != "baseline?stages=3" {
		t.Fatalf("plain cell changed: %q", rows[1][3])
	}
}
