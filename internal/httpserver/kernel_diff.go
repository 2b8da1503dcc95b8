package httpserver

import (
	"fmt"
	"strings"

	"github.com/pitchtank/pitchtank/templates"
)

// A unified line diff for the kernel page (a submission against its
// previous version and against the round's baseline source), by Myers'
// O(ND) algorithm: the shortest edit script, so the diff shows what
// changed and nothing more. Past maxDiffEdits the files are too different
// for a diff to help and the page says so.

const (
	maxDiffEdits   = 2000
	diffContext    = 3
	maxDiffLines   = 20000 // per side; larger files are not diffed
	maxDiffShownLn = 4000  // lines of diff output shown
)

type editOp byte

const (
	opKeep editOp = ' '
	opDel  editOp = '-'
	opAdd  editOp = '+'
)

type edit struct {
	op   editOp
	a, b int // line index in a (keep, del) and in b (keep, add)
}

// splitLines splits text into lines without their newlines; a final
// newline does not make an empty last line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// myers returns the edit script turning a into b, or ok false when it
// needs more than maxEdits insertions and deletions.
func myers(a, b []string, maxEdits int) (script []edit, ok bool) {
	n, m := len(a), len(b)
	max := n + m
	if max > maxEdits {
		max = maxEdits
	}
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	found := false
	d := 0
	for ; d <= max; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return nil, false
	}
	// Walk back through the saved frontiers.
	x, y := n, m
	for ; d > 0; d-- {
		vd := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && vd[off+k-1] < vd[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vd[off+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			script = append(script, edit{opKeep, x, y})
		}
		if x == px {
			y--
			script = append(script, edit{opAdd, x, y})
		} else {
			x--
			script = append(script, edit{opDel, x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		script = append(script, edit{opKeep, x, y})
	}
	for i, j := 0, len(script)-1; i < j; i, j = i+1, j-1 {
		script[i], script[j] = script[j], script[i]
	}
	return script, true
}

// unifiedDiff is the diff of a (named aName) and b as hunks with context
// lines, for the template. Equal texts give a diff with no hunks.
func unifiedDiff(aName, bName, a, b string) templates.KernelDiff {
	d := templates.KernelDiff{From: aName, To: bName}
	al, bl := splitLines(a), splitLines(b)
	if len(al) > maxDiffLines || len(bl) > maxDiffLines {
		d.Note = fmt.Sprintf("not diffed: more than %d lines", maxDiffLines)
		return d
	}
	script, ok := myers(al, bl, maxDiffEdits)
	if !ok {
		d.Note = fmt.Sprintf("not diffed: more than %d lines differ", maxDiffEdits)
		return d
	}
	shown := 0
	for i := 0; i < len(script); {
		// Find the next change.
		for i < len(script) && script[i].op == opKeep {
			i++
		}
		if i >= len(script) {
			break
		}
		start := max(0, i-diffContext)
		// Extend while changes are within 2*context of each other.
		end := i
		for j := i; j < len(script); j++ {
			if script[j].op != opKeep {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		stop := min(len(script), end+diffContext+1)
		h := templates.DiffHunk{}
		first := script[start]
		h.FromLine, h.ToLine = first.a+1, first.b+1
		for _, e := range script[start:stop] {
			line := templates.DiffLine{Op: string(e.op)}
			switch e.op {
			case opKeep:
				line.Text = al[e.a]
				h.FromCount++
				h.ToCount++
			case opDel:
				line.Text = al[e.a]
				h.FromCount++
				d.Deleted++
			case opAdd:
				line.Text = bl[e.b]
				h.ToCount++
				d.Added++
			}
			if shown < maxDiffShownLn {
				h.Lines = append(h.Lines, line)
			}
			shown++
		}
		d.Hunks = append(d.Hunks, h)
		i = stop
	}
	if shown > maxDiffShownLn {
		d.Note = fmt.Sprintf("the diff is cut after %d lines", maxDiffShownLn)
	}
	return d
}
