package kernels

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// Buffer names a device buffer an engine allocates per group.
type Buffer int

const (
	BufA     Buffer = iota // FP4 data of A (rows x K/2 bytes)
	BufSA                  // e4m3 scales of A (rows x K/16)
	BufB                   // FP4 data of B (group GEMM: one per group) or B1 (dual)
	BufSB                  // scales of B / B1
	BufB2                  // FP4 data of B2 (dual only)
	BufSB2                 // scales of B2 (dual only)
	BufC                   // fp16 output, M x N row-major per group
	BufRef                 // float64 output of the reference, M x N per group
	BufTable               // host-built table (Plan.TableBytes), one for all groups
	BufWork                // scratch of Plan.WorkspaceBytes (split-K partial sums), one for all groups
)

func (b Buffer) String() string {
	names := [...]string{"A", "SA", "B", "SB", "B2", "SB2", "C", "Ref", "Table", "Work"}
	if b >= 0 && int(b) < len(names) {
		return names[b]
	}
	return fmt.Sprintf("Buffer(%d)", int(b))
}

// ArgKind is the type of one kernel argument.
type ArgKind int

const (
	ArgPtr ArgKind = iota // device pointer of (Buf, Group); Group is ignored for BufTable and BufWork
	ArgI32                // Value as int32
	ArgI64                // Value as int64
)

// Arg is one kernel argument. For ArgPtr, Value is a byte offset added to
// the buffer's address (the fused kernels take two arrays inside one table).
type Arg struct {
	Kind  ArgKind
	Buf   Buffer
	Group int
	Value int64
}

// Launch is one kernel launch of a plan.
type Launch struct {
	Kernel      string
	Grid, Block [3]uint32
	SharedBytes uint32 // dynamic shared memory
	Group       int    // the group it computes, -1 = all groups
	Stream      int    // 0 = the caller's stream, i >= 1 = side stream i
	Args        []Arg
	// PersistentPerSM > 0 marks a persistent launch over Tiles work items:
	// Grid[0] is min(Tiles, SMs x PersistentPerSM), and the engine lowers it
	// to the blocks that can really be resident once the loaded kernel's
	// registers and shared memory are known (any grid >= 1 is correct).
	// A work item is an output tile, or for stream-K a (tile, K chunk)
	// pair: a block per tile would leave SMs idle that stream-K can use.
	PersistentPerSM int
	Tiles           int
	// Overlap lets the launch begin while the one before it on the same
	// stream finishes (programmatic dependent launch, sm_90+): the kernel
	// waits (griddepcontrol.wait) before it reads what that launch wrote,
	// and the launch before it signals (griddepcontrol.launch_dependents).
	Overlap bool
}

// Plan says how one variant runs one shape: the launches in issue order and
// how they are issued. Modes: "sequential" (all on the caller's stream),
// "streams" (launch i on its side stream, forked from and joined back to the
// caller's stream with events), "graph" (the launches captured once into a
// CUDA graph, replayed per run), "grouped" (one launch over all groups; a
// split-K plan adds its reduction launch after it on the same stream).
type Plan struct {
	Mode     string
	Streams  int // side streams used (streams mode), else 0
	Launches []Launch
	// TableBytes builds the table the kernel reads from BufTable, given the
	// device address of each (buffer, group); nil when there is none.
	TableBytes func(ptr func(Buffer, int) uint64) []byte
	// WorkspaceBytes is the size of BufWork the engine allocates (0: none).
	// Every byte a launch reads from it is written earlier in the same
	// execution, so it needs no zeroing between runs.
	WorkspaceBytes int64
	// SplitK is the K partitions per output tile the plan uses (1: none);
	// for split_k=auto, the partition count FusedSplitK chose.
	SplitK int
	// Resolved names the concrete variant a variant with auto tile sizes
	// runs as on this shape (Variant.Resolve); "" for concrete variants.
	Resolved string
	// Detached (TEST ONLY: the cheat family's detached mode) leaves the
	// side streams unjoined, so work continues after Run's stream is
	// done: what the bench must catch. No real family sets it.
	Detached bool
}

// Limits are the device facts a plan depends on.
type Limits struct {
	SMs, MaxSharedOptin int
	Arch                string // e.g. "sm_90a"
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func ptr(b Buffer, g int) Arg { return Arg{Kind: ArgPtr, Buf: b, Group: g} }
func i32(v int) Arg           { return Arg{Kind: ArgI32, Value: int64(v)} }

// groupedDescBytes is one group descriptor of the grouped kernel's table:
// five u64 pointers (A, SA, B, SB, C) and M as u64 (see gemm.cu).
const groupedDescBytes = 48

// Plan returns the launch plan of v for shape s: the shape and the knobs
// are checked, an auto tile is resolved to the candidate the shape picks
// (Plan.Resolved names it), and v's family lays out the launches.
func (v Variant) Plan(s Shape, lim Limits) (*Plan, error) {
	p, err := LookupProblem(v.Problem)
	if err != nil {
		return nil, err
	}
	if err := p.CheckShape(s); err != nil {
		return nil, err
	}
	f := v.family()
	if !v.Reference {
		if err := f.Check(v.Problem, v.Knobs); err != nil {
			return nil, err
		}
		if ar, ok := f.(autoResolver); ok && ar.isAuto(v.Knobs) {
			cv, err := v.Resolve(s, lim)
			if err != nil {
				return nil, err
			}
			pl, err := cv.Plan(s, lim)
			if err != nil {
				return nil, err
			}
			pl.Resolved = cv.Name
			return pl, nil
		}
	}
	return f.Plan(v, s, lim)
}

// perGroup describes a per-group kernel's launches: the baseline's and a
// submitted kernel's share the argument lists, grids and launch modes.
type perGroup struct {
	// Group and Dual are the per-group entry points (a, sa, b, sb, c, M,
	// N, K) and (a, sa, b1, sb1, b2, sb2, c, M, N, K); Grouped is the one
	// launch over the grouped table (table, groups, tiles, N, K).
	Group, Dual, Grouped string
	Block                [3]uint32
	TileM, TileN         int
	SharedBytes          int
	// Launches are the modes the kernel allows, for the error on another.
	Launches []string
}

// perGroupPlan lays out mode's launches of a per-group kernel for shape s:
// sequential, streams and graph issue one launch per group with grid
// (ceil(N/tile_n), ceil(M_g/tile_m)); grouped issues one launch with one
// block per tile over groupedTable.
func perGroupPlan(name, mode string, dual bool, s Shape, pg perGroup) (*Plan, error) {
	pl := &Plan{Mode: mode}
	switch mode {
	case "sequential", "graph", "streams":
		for g, m := range s.M {
			args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
			kern := pg.Group
			if dual {
				kern = pg.Dual
				args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
			}
			args = append(args, ptr(BufC, g), i32(m), i32(s.N), i32(s.K))
			l := Launch{Kernel: kern,
				Grid:  [3]uint32{uint32(ceilDiv(s.N, pg.TileN)), uint32(ceilDiv(m, pg.TileM)), 1},
				Block: pg.Block, SharedBytes: uint32(pg.SharedBytes), Group: g, Args: args}
			if mode == "streams" {
				l.Stream = g + 1
			}
			pl.Launches = append(pl.Launches, l)
		}
		if mode == "streams" {
			pl.Streams = len(s.M)
		}
	case "grouped":
		if dual {
			return nil, fmt.Errorf("kernels: %s: the grouped launch is for the group GEMM", name)
		}
		tiles := groupedTiles(s, Knobs{TileM: pg.TileM, TileN: pg.TileN})
		pl.Launches = []Launch{{Kernel: pg.Grouped,
			Grid:  [3]uint32{uint32(len(tiles)), 1, 1},
			Block: pg.Block, SharedBytes: uint32(pg.SharedBytes), Group: -1,
			Args: []Arg{ptr(BufTable, 0), i32(len(s.M)), i32(len(tiles)), i32(s.N), i32(s.K)}}}
		groups := len(s.M)
		pl.TableBytes = func(addr func(Buffer, int) uint64) []byte {
			return groupedTable(s, groups, tiles, addr)
		}
	default:
		return nil, &KnobError{Knob: "launch", Value: mode, Allowed: pg.Launches}
	}
	return pl, nil
}

// tile is one output tile of the grouped launch.
type tile struct{ group, m0, n0 int }

// groupedTiles lists every output tile, groups with the most rows first
// (their tiles take the longest to finish in aggregate, so they start
// first), row tiles then column tiles within a group.
func groupedTiles(s Shape, k Knobs) []tile {
	order := make([]int, len(s.M))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return s.M[order[a]] > s.M[order[b]] })
	var ts []tile
	for _, g := range order {
		for m0 := 0; m0 < s.M[g]; m0 += k.TileM {
			for n0 := 0; n0 < s.N; n0 += k.TileN {
				ts = append(ts, tile{g, m0, n0})
			}
		}
	}
	return ts
}

// groupedTable lays out the grouped kernel's table: G descriptors of
// groupedDescBytes, then one 16-byte entry {group, m0, n0, 0} (int32 each)
// per tile. Little-endian, as the GPU reads it.
func groupedTable(s Shape, groups int, tiles []tile, addr func(Buffer, int) uint64) []byte {
	b := make([]byte, 0, groups*groupedDescBytes+16*len(tiles))
	le := binary.LittleEndian
	for g := 0; g < groups; g++ {
		for _, buf := range []Buffer{BufA, BufSA, BufB, BufSB, BufC} {
			b = le.AppendUint64(b, addr(buf, g))
		}
		b = le.AppendUint64(b, uint64(s.M[g]))
	}
	for _, t := range tiles {
		b = le.AppendUint32(b, uint32(t.group))
		b = le.AppendUint32(b, uint32(t.m0))
		b = le.AppendUint32(b, uint32(t.n0))
		b = le.AppendUint32(b, 0)
	}
	return b
}

// fgGroupBytes is one FgGroup of fast_group_gemm.cu: five u64 pointers
// (a, sa, b, sb, c), int32 m, n, k, splits, then the u64 workspace pointer.
const fgGroupBytes = 64

// archNumber is the compute capability of an arch name ("sm_90a" -> 90),
// 0 when it cannot tell.
func archNumber(arch string) int {
	n := 0
	for _, c := range strings.TrimPrefix(arch, "sm_") {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
