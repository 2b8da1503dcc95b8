package runner

import (
	"fmt"
	"strings"
)

// Exit codes of `web bench` (docs/bench-result.md). Any other code, a
// signal, or exit 2 without bench's usage error line is a crash.
const (
	exitOK        = 0
	exitIncorrect = 1
	exitUsage     = 2
	exitCouldNot  = 3
	exitSuspect   = 4
)

// maxReasonItems bounds how many failures or suspect reasons a run's reason
// lists; the result document keeps them all.
const maxReasonItems = 4

// Classify decides the status of a finished measurement from bench's exit
// code and its parsed document: succeeded only when bench exited 0, every
// shape is correct and nothing is suspect; incorrect when some shape failed
// a check (exit 1, document status "incorrect", or a shape marked incorrect),
// with a reason naming the shape and the check; suspect when every shape is
// correct but the document (or exit 4) says a figure is implausible, with
// the reasons. A document that contradicts its exit code fails the run: a
// result nobody can interpret is not stored as one.
func Classify(code int, res *Result) (Status, string) {
	switch res.Status {
	case "", "ok", "incorrect", "suspect":
	case "error":
		return StatusFailed, fmt.Sprintf("no valid result: bench exited %d but its document says status error", code)
	default:
		return StatusFailed, fmt.Sprintf("no valid result: unknown document status %q", res.Status)
	}
	incorrect := !res.Correct || res.Status == "incorrect" || len(res.Failures) > 0
	suspect := res.Status == "suspect" || len(res.Suspect) > 0
	switch code {
	case exitOK:
		if incorrect || suspect {
			return StatusFailed, fmt.Sprintf("no valid result: bench exited 0 but its document says %s", docVerdict(incorrect))
		}
		return StatusSucceeded, ""
	case exitIncorrect:
		if !incorrect {
			return StatusFailed, "no valid result: exit 1 (kernel incorrect) but the document says every shape is correct"
		}
		return StatusIncorrect, IncorrectReason(res)
	case exitSuspect:
		if incorrect {
			// An incorrect shape outranks an implausible time: the kernel is wrong.
			return StatusIncorrect, IncorrectReason(res)
		}
		return StatusSuspect, SuspectReason(res)
	}
	return StatusFailed, fmt.Sprintf("no valid result: unexpected exit code %d with a result document", code)
}

func docVerdict(incorrect bool) string {
	if incorrect {
		return "some shape is incorrect"
	}
	return "the result is suspect"
}

// IncorrectReason names the shapes and the checks that failed:
// "incorrect: shape 2 (g=8 N=4096 K=7168): variant check timed_sample: 4096 of 4096 elements differ".
func IncorrectReason(res *Result) string {
	fs := res.Failures
	if len(fs) == 0 {
		fs = res.failedChecks
	}
	if len(fs) == 0 {
		for _, s := range res.Shapes {
			if !s.Correct {
				fs = append(fs, Failure{Shape: s.Index, Role: "variant", Check: "correct", Detail: "the shape is marked incorrect"})
			}
		}
	}
	if len(fs) == 0 {
		return "incorrect: some shape failed a correctness check"
	}
	// One item per shape, role and check: the same check failing on every
	// input set of a shape says one thing, with how often.
	type key struct {
		shape       int
		role, check string
	}
	times := map[key]int{}
	var uniq []Failure
	for _, f := range fs {
		k := key{f.Shape, f.Role, f.Check}
		if times[k] == 0 {
			uniq = append(uniq, f)
		}
		times[k]++
	}
	fs = uniq
	parts := make([]string, 0, min(len(fs), maxReasonItems))
	for i, f := range fs {
		if i == maxReasonItems {
			parts = append(parts, fmt.Sprintf("and %d more", len(fs)-maxReasonItems))
			break
		}
		p := fmt.Sprintf("shape %d", f.Shape)
		if l := res.shapeLabel(f.Shape); l != "" {
			p += " (" + l + ")"
		}
		role := f.Role
		if role == "" {
			role = "variant"
		}
		p += fmt.Sprintf(": %s check %s", role, f.Check)
		if n := times[key{f.Shape, f.Role, f.Check}]; n > 1 {
			p += fmt.Sprintf(" (failed %d times)", n)
		}
		if f.Detail != "" {
			p += ": " + f.Detail
		}
		parts = append(parts, p)
	}
	return clip("incorrect: " + strings.Join(parts, "; "))
}

// SuspectReason lists why the figures are implausible.
func SuspectReason(res *Result) string {
	if len(res.Suspect) == 0 {
		return "suspect: bench exited 4 (suspect) without naming why; see the shapes' flags"
	}
	items := res.Suspect
	extra := ""
	if len(items) > maxReasonItems {
		extra = fmt.Sprintf("; and %d more", len(items)-maxReasonItems)
		items = items[:maxReasonItems]
	}
	return clip("suspect: " + strings.Join(items, "; ") + extra)
}

func (res *Result) shapeLabel(idx int) string {
	for _, s := range res.Shapes {
		if s.Index == idx {
			return s.Label
		}
	}
	return ""
}
