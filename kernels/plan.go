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
	PersistentPerSM int
	Tiles           int
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

// Plan returns the launch plan of v for shape s.
func (v Variant) Plan(s Shape, lim Limits) (*Plan, error) {
	p, err := LookupProblem(v.Problem)
	if err != nil {
		return nil, err
	}
	if err := p.CheckShape(s); err != nil {
		return nil, err
	}
	dual := p.Kind == DualGEMM
	if v.Reference {
		pl := &Plan{Mode: "sequential"}
		for g, m := range s.M {
			args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
			kern := "ref_group"
			if dual {
				kern = "ref_dual"
				args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
			}
			args = append(args, ptr(BufRef, g), i32(m), i32(s.N), i32(s.K))
			pl.Launches = append(pl.Launches, Launch{Kernel: kern,
				Grid:  [3]uint32{uint32(ceilDiv(s.N, 16)), uint32(ceilDiv(m, 16)), 1},
				Block: [3]uint32{16, 16, 1}, Group: g, Args: args})
		}
		return pl, nil
	}

	k := v.Knobs
	if err := checkCombination(v.Problem, v.Base, k); err != nil {
		return nil, err
	}
	if v.Base == "baseline" && k.tileAuto() {
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
	switch v.Base {
	case "fused":
		return v.fusedPlan(s, lim)
	case "wgmma":
		return v.wgmmaPlan(s, lim)
	case "fault":
		return v.faultPlan(s), nil
	case "cheat":
		return v.cheatPlan(s), nil
	}
	if k.Epilogue == "tma" {
		if a := archNumber(lim.Arch); a > 0 && a < 90 {
			return nil, &KnobError{Knob: "epilogue", Value: "tma",
				Reason: fmt.Sprintf("the bulk async copy (cp.async.bulk) needs sm_90 or newer; the device is %s (use epilogue=simt)", lim.Arch)}
		}
	}
	smem := SharedBytes(v.Problem, k)
	if lim.MaxSharedOptin > 0 && smem > lim.MaxSharedOptin {
		return nil, fmt.Errorf("kernels: %s needs %d bytes of shared memory per block; the device allows %d", v.Name, smem, lim.MaxSharedOptin)
	}
	block := [3]uint32{baselineThreads, 1, 1}
	pl := &Plan{Mode: k.Launch}
	switch k.Launch {
	case "sequential", "graph", "streams":
		for g, m := range s.M {
			args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
			kern := "gemm_group"
			if dual {
				kern = "gemm_dual"
				args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
			}
			args = append(args, ptr(BufC, g), i32(m), i32(s.N), i32(s.K))
			l := Launch{Kernel: kern,
				Grid:  [3]uint32{uint32(ceilDiv(s.N, k.TileN)), uint32(ceilDiv(m, k.TileM)), 1},
				Block: block, SharedBytes: uint32(smem), Group: g, Args: args}
			if k.Launch == "streams" {
				l.Stream = g + 1
			}
			pl.Launches = append(pl.Launches, l)
		}
		if k.Launch == "streams" {
			pl.Streams = len(s.M)
		}
	case "grouped":
		if dual {
			return nil, fmt.Errorf("kernels: %s: the grouped launch is for the group GEMM", v.Name)
		}
		tiles := groupedTiles(s, k)
		pl.Launches = []Launch{{Kernel: "gemm_grouped",
			Grid:  [3]uint32{uint32(len(tiles)), 1, 1},
			Block: block, SharedBytes: uint32(smem), Group: -1,
			Args: []Arg{ptr(BufTable, 0), i32(len(s.M)), i32(len(tiles)), i32(s.N), i32(s.K)}}}
		groups := len(s.M)
		pl.TableBytes = func(addr func(Buffer, int) uint64) []byte {
			return groupedTable(s, groups, tiles, addr)
		}
	default:
		return nil, &KnobError{Knob: "launch", Value: k.Launch, Allowed: KnobSpace(v.Problem)[6].Values}
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

// fusedPlan is the fused kernels' plan: for the group GEMM one launch over
// a table of FgGroup descriptors followed by FgTile entries; for the dual
// GEMM one launch with pointer arguments.
func (v Variant) fusedPlan(s Shape, lim Limits) (*Plan, error) {
	k := v.Knobs
	smem := FusedSharedBytes(v.Problem, k)
	if lim.MaxSharedOptin > 0 && smem > lim.MaxSharedOptin {
		return nil, fmt.Errorf("kernels: %s needs %d bytes of shared memory per block; the device allows %d", v.Name, smem, lim.MaxSharedOptin)
	}
	block := [3]uint32{uint32(FusedThreads(v.Problem, k)), 1, 1}
	grid := func(tiles int) (uint32, int) {
		if k.Grid == "persistent" && lim.SMs > 0 {
			return uint32(min(tiles, lim.SMs*k.BlocksPerSM)), k.BlocksPerSM
		}
		return uint32(tiles), 0
	}
	if v.Problem == "nvfp4_dual_gemm" {
		m := s.M[0]
		tiles := ceilDiv(m, k.TileM) * ceilDiv(s.N, k.TileN)
		gx, per := grid(tiles)
		return &Plan{Mode: "sequential", Launches: []Launch{{Kernel: "fast_dual_gemm",
			Grid: [3]uint32{gx, 1, 1}, Block: block, SharedBytes: uint32(smem), Group: 0,
			PersistentPerSM: per, Tiles: tiles,
			Args: []Arg{ptr(BufA, 0), ptr(BufSA, 0), ptr(BufB, 0), ptr(BufSB, 0), ptr(BufB2, 0), ptr(BufSB2, 0),
				ptr(BufC, 0), i32(m), i32(s.N), i32(s.K)}}}}, nil
	}
	if k.Epilogue == "tma" {
		if a := archNumber(lim.Arch); a > 0 && a < 90 {
			return nil, &KnobError{Knob: "epilogue", Value: "tma",
				Reason: fmt.Sprintf("the bulk async copy (cp.async.bulk) needs sm_90 or newer; the device is %s (use epilogue=simt)", lim.Arch)}
		}
	}
	tiles := FusedTiles(s, k)
	splits := FusedSplitK(s, k, lim)
	items := fusedItems(tiles, splits)
	groups := len(s.M)
	tilesOff := ceilDiv(groups*fgGroupBytes, 16) * 16 // FgTile entries 16-byte aligned
	baseOff := tilesOff + 16*len(items)               // the reduce's table (split-K only)
	gx, per := grid(len(items))
	pl := &Plan{Mode: "grouped", SplitK: splits, Launches: []Launch{{Kernel: "fast_group_gemm",
		Grid: [3]uint32{gx, 1, 1}, Block: block, SharedBytes: uint32(smem), Group: -1,
		PersistentPerSM: per, Tiles: len(items),
		Args: []Arg{{Kind: ArgPtr, Buf: BufTable}, {Kind: ArgPtr, Buf: BufTable, Value: int64(tilesOff)}, i32(len(items))}}}}
	if splits > 1 {
		pl.WorkspaceBytes = FusedWorkspaceBytes(s, k, splits)
		// One block per output tile: the reduction reads S x 32 KiB and
		// writes 16 KiB per tile (default tile), memory-bound and short.
		pl.Launches = append(pl.Launches, Launch{Kernel: "fast_group_reduce",
			Grid: [3]uint32{uint32(len(tiles)), 1, 1}, Block: block, SharedBytes: uint32(fusedEpilogueBytes(v.Problem, k)), Group: -1,
			Args: []Arg{{Kind: ArgPtr, Buf: BufTable}, {Kind: ArgPtr, Buf: BufTable, Value: int64(baseOff)}, i32(len(tiles))}})
	}
	pl.TableBytes = fgTable(s, tiles, items, splits, tilesOff, baseOff)
	return pl, nil
}

// fgTable builds the table of the fused-style group kernels
// (fast_group_gemm.cu, wg_group_gemm.cu): one FgGroup per group, the FgTile
// entries of items at tilesOff and, with split-K, the reduction's table of
// output tiles at baseOff.
func fgTable(s Shape, tiles []FusedTile, items []fusedItem, splits, tilesOff, baseOff int) func(func(Buffer, int) uint64) []byte {
	groups := len(s.M)
	return func(addr func(Buffer, int) uint64) []byte {
		le := binary.LittleEndian
		b := make([]byte, 0, baseOff+16*len(tiles))
		var ws uint64
		if splits > 1 {
			ws = addr(BufWork, 0)
		}
		for g := 0; g < groups; g++ {
			for _, buf := range []Buffer{BufA, BufSA, BufB, BufSB, BufC} {
				b = le.AppendUint64(b, addr(buf, g))
			}
			b = le.AppendUint32(b, uint32(s.M[g]))
			b = le.AppendUint32(b, uint32(s.N))
			b = le.AppendUint32(b, uint32(s.K))
			b = le.AppendUint32(b, uint32(splits))
			b = le.AppendUint64(b, ws)
		}
		b = append(b, make([]byte, tilesOff-len(b))...)
		for _, it := range items {
			t := tiles[it.base]
			b = le.AppendUint32(b, uint32(t.Group))
			b = le.AppendUint32(b, uint32(t.M0))
			b = le.AppendUint32(b, uint32(t.N0))
			b = le.AppendUint32(b, uint32(it.base*splits+it.ks))
		}
		if splits > 1 {
			for i, t := range tiles {
				b = le.AppendUint32(b, uint32(t.Group))
				b = le.AppendUint32(b, uint32(t.M0))
				b = le.AppendUint32(b, uint32(t.N0))
				b = le.AppendUint32(b, uint32(i))
			}
		}
		return b
	}
}

// fusedItem is one work item of the fused group kernel: K partition ks of
// output tile base (an index into FusedTiles).
type fusedItem struct{ base, ks int }

// fusedItems lists the work items in launch order: each tile's partitions
// next to each other, tiles in FusedTiles order, so the longest items
// still start first.
func fusedItems(tiles []FusedTile, splits int) []fusedItem {
	out := make([]fusedItem, 0, len(tiles)*splits)
	for i := range tiles {
		for ks := 0; ks < splits; ks++ {
			out = append(out, fusedItem{i, ks})
		}
	}
	return out
}

// FusedSplitRange is the K chunks [kb, ke) (128 K elements each) that
// partition ks of splits computes out of kch: the kernel's fg_split_range.
// The ranges of ks = 0..splits-1 cover [0, kch) exactly once, in order,
// and differ in length by at most one chunk.
func FusedSplitRange(kch, ks, splits int) (kb, ke int) {
	return kch * ks / splits, kch * (ks + 1) / splits
}

// FusedWorkspaceBytes is the split-K workspace of the fused group kernel:
// one fp32 slot of tile_n x tile_m per output tile and partition.
func FusedWorkspaceBytes(s Shape, k Knobs, splits int) int64 {
	wn, wm := FusedWarps("nvfp4_group_gemm", k)
	return int64(splits) * int64(len(FusedTiles(s, k))) * int64(wn*fusedWarpN) * int64(wm*fusedWarpM) * 4
}

// fusedEpilogueBytes is the fused kernels' C staging area (FG_EP_BYTES):
// the reduction launch's dynamic shared memory.
func fusedEpilogueBytes(problem string, k Knobs) int {
	wn, wm := FusedWarps(problem, k)
	return wm * fusedWarpM * (2*wn*fusedWarpN + 16)
}

// FusedTile is one entry of the fused group kernel's tile table.
type FusedTile struct{ Group, M0, N0 int }

// FusedTiles is the fused group kernel's tile order, the fastest measured
// ("order 1" in dev/fastkern/NOTES.md): groups by M descending, then n0,
// then m0; then a stable sort by rows in the tile, descending, so full
// tiles go first and the short tails fill the last wave.
func FusedTiles(s Shape, k Knobs) []FusedTile {
	order := make([]int, len(s.M))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return s.M[order[a]] > s.M[order[b]] })
	var ts []FusedTile
	for _, g := range order {
		for n0 := 0; n0 < s.N; n0 += k.TileN {
			for m0 := 0; m0 < s.M[g]; m0 += k.TileM {
				ts = append(ts, FusedTile{g, m0, n0})
			}
		}
	}
	rows := func(t FusedTile) int { return min(k.TileM, s.M[t.Group]-t.M0) }
	sort.SliceStable(ts, func(a, b int) bool { return rows(ts[a]) > rows(ts[b]) })
	return ts
}

// faultPlan runs the test-only fault kernels: one launch per group with the
// baseline's arguments. One block per group is enough to fault or hang, and
// keeps the illegal_address stores few.
func (v Variant) faultPlan(s Shape) *Plan {
	pl := &Plan{Mode: "sequential"}
	for g, m := range s.M {
		args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
		kern := "fault_group"
		if v.Problem == "nvfp4_dual_gemm" {
			kern = "fault_dual"
			args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
		}
		args = append(args, ptr(BufC, g), i32(m), i32(s.N), i32(s.K))
		pl.Launches = append(pl.Launches, Launch{Kernel: kern,
			Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{32, 1, 1}, Group: g, Args: args})
	}
	return pl
}

// cheatPlan runs the test-only cheat kernels (cheat.cu): cheat_before
// decides, one compute launch per group (64x64 tiles of 16x16 threads)
// does or skips the work, cheat_after keeps the books. In detached mode the
// compute launches go to a side stream that Run never joins.
func (v Variant) cheatPlan(s Shape) *Plan {
	dual := v.Problem == "nvfp4_dual_gemm"
	pl := &Plan{Mode: "sequential"}
	stream := 0
	if v.Knobs.Mode == "detached" {
		pl.Mode, pl.Streams, pl.Detached, stream = "streams", 1, true, 1
	}
	one := [3]uint32{1, 1, 1}
	pl.Launches = append(pl.Launches, Launch{Kernel: "cheat_before", Grid: one, Block: one, Group: -1,
		Args: []Arg{ptr(BufA, 0), ptr(BufB, 0), ptr(BufC, 0), {Kind: ArgI64, Value: int64(s.SumM()) * int64(s.N)}}})
	off := 0
	for g, m := range s.M {
		args := []Arg{ptr(BufA, g), ptr(BufSA, g), ptr(BufB, g), ptr(BufSB, g)}
		if dual {
			args = append(args, ptr(BufB2, g), ptr(BufSB2, g))
		}
		args = append(args, ptr(BufC, g), i32(m), i32(s.N), i32(s.K), i32(off))
		pl.Launches = append(pl.Launches, Launch{Kernel: "cheat_compute",
			Grid:  [3]uint32{uint32(ceilDiv(s.N, 64)), uint32(ceilDiv(m, 64)), 1},
			Block: [3]uint32{16, 16, 1}, Group: g, Stream: stream, Args: args})
		off += m * s.N
	}
	pl.Launches = append(pl.Launches, Launch{Kernel: "cheat_after", Grid: one, Block: one, Group: -1})
	return pl
}
