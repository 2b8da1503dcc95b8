package bench

import (
	"encoding/json"
	"io"
	"math"
	"sync"

	"github.com/pitchtank/pitchtank/internal/result"
)

// Progress is one line on stdout: the runner reads stdout line by line and
// parses each as JSON. Type is "progress", "error" or "result".
type Progress struct {
	Type     string   `json:"type"`
	Phase    string   `json:"phase,omitempty"` // compile, correctness, warmup, timing, done
	Shape    int      `json:"shape"`           // 0-based shape index
	Shapes   int      `json:"shapes"`
	Variant  string   `json:"variant,omitempty"` // the role being worked on: its spec
	Role     string   `json:"role,omitempty"`
	Samples  int      `json:"samples"`
	MedianUs *float64 `json:"median_us,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// Phases of progress lines.
const (
	PhaseCompile     = "compile"
	PhaseCorrectness = "correctness"
	PhaseWarmup      = "warmup"
	PhaseTiming      = "timing"
	PhaseDone        = "done"
)

// ErrorLine is the line written when the run cannot go on (exit code 3).
type ErrorLine struct {
	Type     string `json:"type"` // "error"
	Phase    string `json:"phase"`
	Shape    int    `json:"shape"`
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code"`
}

// ResultLine is the final line. With --json FILE, Path names the file and
// Document is absent; without it, the document travels in this line.
type ResultLine struct {
	Type           string         `json:"type"` // "result"
	Path           *string        `json:"path"`
	Status         string         `json:"status"`
	ExitCode       int            `json:"exit_code"`
	GeomeanSpeedup *float64       `json:"geomean_speedup"`
	GeomeanUs      *float64       `json:"geomean_median_us"`
	Document       *result.Result `json:"document,omitempty"`
}

// Emitter writes JSON lines; it is safe for concurrent use and a nil
// *Emitter discards everything.
type Emitter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEmitter writes lines to w.
func NewEmitter(w io.Writer) *Emitter { return &Emitter{w: w} }

// Line writes v as one JSON line. Errors writing progress are ignored on
// purpose: a closed stdout must not stop a measurement that also goes to a file.
func (e *Emitter) Line(v any) {
	if e == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	b = append(b, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(b)
}

func usPtr(ns float64) *float64 {
	if ns <= 0 || math.IsNaN(ns) || math.IsInf(ns, 0) {
		return nil
	}
	us := ns / 1e3
	return &us
}
