package kernelcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitchtank/pitchtank/kernels"
)

// RecordEnv names a file TestCompileBlackwellAndBeyond writes its figures
// to (JSON lines: one per module), for docs/BENCHMARKS.md.
const RecordEnv = "PITCHTANK_COMPILE_RECORD"

// blackwellArchs are the targets beyond CI's NVRTC 11.8.
var blackwellArchs = []string{"sm_90a", "sm_100a", "sm_120a"}

// Every built-in family's default (both problems) and every example
// compile for sm_90a, sm_100a and sm_120a, with their registers and
// spills recorded. Needs NVRTC 12.8 or newer (the GPU machine's 13): CI's
// 11.8 cannot target these, so it skips and says so.
func TestCompileBlackwellAndBeyond(t *testing.T) {
	ver := nvrtcVersion(t, "")
	if nvrtcNumber(ver) < 128 {
		t.Skipf("NVRTC %s cannot target sm_100a and sm_120a (12.8 or newer; the GPU machine's NVRTC 13 runs this test)", ver)
	}
	var rec *json.Encoder
	if path := os.Getenv(RecordEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rec = json.NewEncoder(f)
	}
	type job struct {
		what string
		v    kernels.Variant
		dyn  int
	}
	var jobs []job
	for _, p := range kernels.Problems() {
		for _, v := range p.Variants() {
			jobs = append(jobs, job{p.Name + " " + v.Name, v, 0})
		}
	}
	ents, err := os.ReadDir(filepath.Join("..", "..", "examples", "kernels"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		s, err := kernels.LoadSubmission(filepath.Join("..", "..", "examples", "kernels", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		v := s.Variant()
		jobs = append(jobs, job{"example " + e.Name(), v, s.SharedBytes(v)})
	}
	for _, j := range jobs {
		for _, arch := range blackwellArchs {
			vr := compile(j.v, arch, j.dyn)
			if !vr.OK {
				t.Errorf("%s for %s (NVRTC %s):\n%s", j.what, arch, ver, vr.Messages)
				continue
			}
			var figs []string
			for _, e := range vr.Entries {
				figs = append(figs, e.Name+": "+strings.TrimSpace(formatEntry(e)))
			}
			t.Logf("%-40s %-8s %s", j.what, arch, strings.Join(figs, "; "))
			if rec != nil {
				if err := rec.Encode(map[string]any{"module": j.what, "arch": arch, "nvrtc": ver, "entries": vr.Entries, "compile_seconds": vr.CompileSeconds}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func formatEntry(e Entry) string {
	return fmt.Sprintf("%d regs, %d/%d B spill st/ld, %d B stack", e.Registers, e.SpillStores, e.SpillLoads, e.StackBytes)
}
