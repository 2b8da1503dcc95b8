package kernels

import (
	"fmt"
	"math"
)

// The group GEMM's per-width split (token_split=192). Three consumers'
// registers hold the wgmmas of a {64, 128}-token module or of a 192-token
// one, not both (C7512: docs/kernel-notes.md steps 52 and 55), and a group
// of 129-192 tokens costs less as one 192-token tile (3,189 cycles a chunk
// on an H100) than as fit64's 128 + 64 (2,327 + ~1,970). So the split plan
// runs those groups from a second module, tile_m=192 at one width, in a
// launch of its own (with its own token pass) on a side stream, beside the
// other groups' launch, each persistent grid on its share of the SMs.

// wgmmaTokenSplit reports whether k runs the groups of 129-192 tokens from
// a 192-token module of their own.
func wgmmaTokenSplit(k Knobs) bool { return k.Value("token_split") == "192" }

// wgmmaTokenSplitKnob declares the split (the group GEMM's).
var wgmmaTokenSplitKnob = KnobSpec{Key: "token_split", Values: []string{"none", "192"}, Default: "none", Narrows: true,
	Doc: "none = one module and launch for every group; 192 = the groups of 129-192 tokens run as one 192-token tile each (m64n192k16, tail_width=full, 2 stages, registers=split) from a second module, with their own token pass, on a side stream beside the other groups' launch; the SMs divided by the two parts' estimated chunk costs (an n192 chunk 1.37x an n128 one, from an H100: docs/kernel-notes.md step 55); three consumers' registers hold the 192-token wgmmas or fit64's two widths, not both (C7512); needs consumers=3, tokens=once, tile_m=128, tail_width=fit64, tile_n auto or 192, overlap none or pdl"}

// wgmmaWideChunkCost is an n192 chunk's cost in units of an n128 chunk of
// three consumers when the two parts run side by side: 1.90 us against
// 1.25 us from each part's first piece on group bench1 (WG_TL, H100,
// docs/kernel-notes.md step 56). Alone, one launch each, the chunks were
// 3,189 and 2,327 cycles (1.37x, WG_STAMP, step 55), and the SMs divided
// by that ratio left the 192-token part ending 10 us after the other.
const wgmmaWideChunkCost = 1.90 / 1.25

// wgmmaSplitKnobs returns the split's two modules: narrow is k without the
// split; wide runs 192-token tiles at one width.
func wgmmaSplitKnobs(k Knobs) (narrow, wide Knobs) {
	narrow = k.withCustom("token_split", "none")
	wide = narrow
	wide.TileM, wide.TileN, wide.Stages, wide.TailWidth = 192, 192, 2, "full"
	wide = wide.withCustom("registers", "split")
	if wide.Value("ranges") == "cost" {
		wide = wide.withCustom("ranges", "chunks") // every chunk is one width
	}
	return narrow, wide
}

// checkTokenSplit is checkWgmma's rule for token_split=192.
func checkTokenSplit(problem string, k Knobs) error {
	if isDual(problem) || !wgmmaTokensOnce(k) || wgmmaConsumers(problem, k) != 3 || k.TileM != 128 || k.TailWidth != "fit64" ||
		(k.TileN != TileAuto && k.TileN != 192) || wgmmaReady(k) || wgmmaPrologue(k) {
		return &KnobError{Knob: "token_split", Value: "192", Reason: "the split runs beside the group GEMM's three consumers on fit64's 64- and 128-token tiles: it needs consumers=3, tokens=once, tile_m=128, tail_width=fit64, tile_n auto or 192, and overlap none or pdl"}
	}
	_, wide := wgmmaSplitKnobs(k)
	if err := checkWgmma(problem, wide); err != nil {
		return fmt.Errorf("kernels: token_split=192's 192-token module: %w", err)
	}
	return nil
}

// wgmmaSplitCandidates lists the modules a split variant compiles: the
// narrow module's candidates and the wide one's.
func wgmmaSplitCandidates(problem string, k Knobs) []Knobs {
	narrow, wide := wgmmaSplitKnobs(k)
	f := wgmmaFamily{}
	return append(f.candidates(problem, narrow), f.candidates(problem, wide)...)
}

// wgmmaSplitWide reports whether group m goes to the 192-token module.
func wgmmaSplitWide(m int) bool { return m > 128 && m <= 192 }

// wgmmaSplitSMs is the wide part's share of sms: in proportion to the two
// parts' estimated chunk costs per 192 weight rows (fit64 widths for the
// narrow part, wgmmaChunkCost), at least one SM each. 0 without a device.
func wgmmaSplitSMs(s Shape, sms int) int {
	if sms < 2 {
		return 0
	}
	var wide, narrow float64
	for _, m := range s.M {
		if wgmmaSplitWide(m) {
			wide += wgmmaWideChunkCost
			continue
		}
		for m0 := 0; m0 < m; m0 += 128 {
			w := min(ceilDiv(m-m0, 64)*64, 128)
			narrow += wgmmaChunkCost(w, 128)
		}
	}
	n := int(math.Round(float64(sms) * wide / (wide + narrow)))
	return min(max(n, 1), sms-1)
}

// subShape is s restricted to groups gs, in that order.
func subShape(s Shape, gs []int) Shape {
	out := Shape{N: s.N, K: s.K, M: make([]int, len(gs))}
	for i, g := range gs {
		out.M[i] = s.M[g]
	}
	return out
}

// planSplit is the token_split=192 plan of v on s: nil without the split.
// Without a group of 129-192 tokens, or with nothing else, it is the plan
// of the part there is; where the plain plan's tiles fit in one wave, the
// plain plan. Without the device's SM count (lim.SMs = 0) it splits, each
// part on every SM.
func (f wgmmaFamily) planSplit(v Variant, s Shape, lim Limits) (*Plan, error) {
	if !wgmmaTokenSplit(v.Knobs) {
		return nil, nil
	}
	p, err := LookupProblem(v.Problem)
	if err != nil {
		return nil, err
	}
	nk, wk := wgmmaSplitKnobs(v.Knobs)
	nv, wv := p.withValidKnobs(v, nk), p.withValidKnobs(v, wk)
	var wide, narrow []int
	for g, m := range s.M {
		if wgmmaSplitWide(m) {
			wide = append(wide, g)
		} else {
			narrow = append(narrow, g)
		}
	}
	switch {
	case len(wide) == 0:
		return nv.Plan(s, lim)
	case len(narrow) == 0:
		return wv.Plan(s, lim)
	case lim.SMs > 0:
		// Under one wave of the plain plan's tiles the launch takes one
		// tile's time, and the other groups' tiles still take it: group
		// bench3 (120 tiles for 132 SMs) ran 0.76x split (H100, step 56).
		rk, err := f.resolve(v.Problem, s, nk, lim)
		if err != nil {
			return nil, err
		}
		if wgmmaTiles(v.Problem, s, rk) <= lim.SMs {
			return nv.Plan(s, lim)
		}
	}
	sw := wgmmaSplitSMs(s, lim.SMs)
	sn := 0
	if sw > 0 {
		sn = lim.SMs - sw
	}
	lw, ln := lim, lim
	lw.SMs, ln.SMs = sw, sn
	pw, err := wv.Plan(subShape(s, wide), lw)
	if err != nil {
		return nil, fmt.Errorf("kernels: %s: the 192-token part: %w", v.Name, err)
	}
	pn, err := nv.Plan(subShape(s, narrow), ln)
	if err != nil {
		return nil, fmt.Errorf("kernels: %s: the narrow part: %w", v.Name, err)
	}
	return mergeSplit(part{pn, narrow, moduleName(nv, pn), sn, 0}, part{pw, wide, moduleName(wv, pw), sw, 1}), nil
}

// moduleName is the concrete variant (a candidate) plan pl of v runs.
func moduleName(v Variant, pl *Plan) string {
	if pl.Resolved != "" {
		return pl.Resolved
	}
	return v.Name
}

// part is one side of a split plan: its plan over a sub-shape, the groups
// of the whole shape it covers (in sub-shape order), its module, its SMs
// (0: all) and its stream.
type part struct {
	plan   *Plan
	groups []int
	module string
	sms    int
	stream int
}

// mergeSplit makes one plan of two parts: a graph captured from two streams
// (launched as streams, the fork's and the join's event waits cost ~4 us
// each on group bench3: H100, step 56), the second part's launches on side
// stream 1, its table and workspace after the first's,
// group indices mapped back to the whole shape. Launches keep their order
// within a part (a launch's Overlap follows the one before it on its
// stream); the token passes go first, so both start before either GEMM.
func mergeSplit(a, b part) *Plan {
	noAddr := func(Buffer, int) uint64 { return 0 }
	tableLen := func(pl *Plan) int64 {
		if pl.TableBytes == nil {
			return 0
		}
		return int64(len(pl.TableBytes(noAddr)))
	}
	const align = 256
	tableOff := [2]int64{0, (tableLen(a.plan) + align - 1) / align * align}
	workOff := [2]int64{0, (a.plan.WorkspaceBytes + align - 1) / align * align}
	out := &Plan{Mode: "graph", Streams: 1, SplitK: 1,
		WorkspaceBytes: workOff[1] + b.plan.WorkspaceBytes,
		Resolved:       a.module + " + " + b.module}
	parts := [2]part{a, b}
	var launches [2][]Launch
	for i, pt := range parts {
		for _, l := range pt.plan.Launches {
			l.Module, l.Stream = pt.module, pt.stream
			if l.PersistentPerSM > 0 {
				l.SMs = pt.sms
			}
			if l.Group >= 0 {
				l.Group = pt.groups[l.Group]
			}
			args := make([]Arg, len(l.Args))
			for n, x := range l.Args {
				switch {
				case x.Kind != ArgPtr:
				case x.Buf == BufTable:
					x.Value += tableOff[i]
				case x.Buf == BufWork:
					x.Value += workOff[i]
				default:
					x.Group = pt.groups[x.Group]
				}
				args[n] = x
			}
			l.Args = args
			launches[i] = append(launches[i], l)
		}
	}
	// Each part's launches but its last (the token pass) first, then the
	// GEMMs.
	for i := range launches {
		out.Launches = append(out.Launches, launches[i][:len(launches[i])-1]...)
	}
	for i := range launches {
		out.Launches = append(out.Launches, launches[i][len(launches[i])-1])
	}
	if a.plan.TableBytes != nil || b.plan.TableBytes != nil {
		out.TableBytes = func(addr func(Buffer, int) uint64) []byte {
			var tb []byte
			for i, pt := range parts {
				if pt.plan.TableBytes == nil {
					continue
				}
				tb = append(tb, make([]byte, tableOff[i]-int64(len(tb)))...)
				tb = append(tb, pt.plan.TableBytes(func(buf Buffer, g int) uint64 {
					switch buf {
					case BufTable:
						return addr(buf, 0) + uint64(tableOff[i])
					case BufWork:
						return addr(buf, 0) + uint64(workOff[i])
					}
					return addr(buf, pt.groups[g])
				})...)
			}
			return tb
		}
	}
	return out
}
