package kernels

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
)

// The fused family (fast_group_gemm.cu, fast_dual_gemm.cu): one persistent
// launch over a host-built tile table, A and B swapped, a multi-stage
// cp.async ring, register decode, mma.sync; the dual GEMM shares one A
// tile between B1 and B2.

func init() { registerFamily(fusedFamily{}) }

type fusedFamily struct{}

func (fusedFamily) Info() FamilyInfo { return FamilyInfo{Name: "fused", Order: 20} }

func (fusedFamily) Variant(p *Problem) (Variant, bool) {
	v := Variant{
		Name: "fused", Base: "fused", Title: "Fused: one persistent launch, swapped A/B, 4-stage cp.async", Problem: p.Name,
		Description: "fast_group_gemm.cu: one persistent launch over a host-built tile table covering all groups (largest groups first, full tiles before tails), A and B swapped so the weight rows (N) fill the MMA's 16-row side and small token groups waste little, a multi-stage cp.async ring of raw FP4 and scales, branch-free register decode with the scale folded in by one fp16 multiply, mma.sync m16n8k16, output staged in shared memory for 16-byte stores.",
		SourceFile:  "fast_group_gemm.cu", MinArch: 80,
	}
	if p.Dual() {
		v.Title = "Fused: A tile shared by B1 and B2, SiLU gate in the epilogue"
		v.Description = "fast_dual_gemm.cu: each block holds tile_n rows of B1 and the same rows of B2 next to one A tile, so the token tile is loaded and decoded once for both products; two fp32 accumulators per output, silu(acc1)*acc2 in registers and one fp16 rounding; swapped A/B, multi-stage cp.async, register decode with the scale folded in, mma.sync m16n8k16."
		v.SourceFile = "fast_dual_gemm.cu"
	}
	v.Knobs, _ = defaultKnobs(p.Name, fusedFamily{})
	return v, true
}

func (fusedFamily) KnobSpace(problem string) []KnobSpec { return fusedKnobSpace(problem) }

// Fixed by the kernel: 128-wide K chunks, SIMT epilogue through shared
// memory, every warp loads and computes, one launch (over all groups:
// "grouped"; the dual GEMM's one group: "sequential"), swapped.
func (fusedFamily) Fixed(problem string) Knobs {
	k := Knobs{TileK: 128, Epilogue: "simt", WarpRoles: "uniform", Launch: "grouped", SplitK: 1, SwapAB: true}
	if isDual(problem) {
		k.Launch = "sequential"
	}
	return k
}

func (fusedFamily) Check(problem string, k Knobs) error { return checkFused(problem, k) }

// MinArch: the TMA epilogue's bulk copies are sm_90.
func (fusedFamily) MinArch(_ string, k Knobs) int {
	if k.Epilogue == "tma" {
		return 90
	}
	return 80
}

func (fusedFamily) CheckDevice(v Variant, arch string) error { return checkArchAtLeast(v, arch) }

// Defines: the fused sources' own macros (see their headers).
func (fusedFamily) Defines(v Variant, d map[string]string) map[string]string {
	wn, wm := FusedWarps(v.Problem, v.Knobs)
	half := "0"
	if v.Knobs.Layout == "half" {
		half = "1"
	}
	d["WARP_N"], d["WARP_M"] = strconv.Itoa(fusedWarpN), strconv.Itoa(fusedWarpM)
	d["WARPS_N"], d["WARPS_M"] = strconv.Itoa(wn), strconv.Itoa(wm)
	d["STAGES"] = strconv.Itoa(v.Knobs.Stages)
	d["FG_HALF"] = half
	d["MIN_BLOCKS"] = strconv.Itoa(v.Knobs.BlocksPerSM)
	if !isDual(v.Problem) {
		// Split-K is host-side (the table's splits field and a second
		// launch), so only the epilogue adds a define.
		d["FG_EPI_TMA"] = "0"
		if v.Knobs.Epilogue == "tma" {
			d["FG_EPI_TMA"] = "1"
		}
	}
	return d
}

func (fusedFamily) Entries(v Variant) []string {
	if isDual(v.Problem) {
		return []string{"fast_dual_gemm"}
	}
	return []string{"fast_group_gemm", "fast_group_reduce"}
}

// fusedKnobSpace is the declared knob space of the fused family
// (fast_group_gemm.cu, fast_dual_gemm.cu). tile_n is output columns per
// tile in both problems: the group kernel puts tile_n weight rows in a CTA
// tile, the dual kernel tile_n rows of B1 and the same tile_n rows of B2.
// Warp tiles are fixed at 64 weight rows x 32 token rows (the measured
// best; wider warp tiles spilled, docs/kernel-notes.md), so the tile sizes
// set the warp grid. Defaults are the fastest configurations measured on
// H100 with the nvcc harness.
func fusedKnobSpace(problem string) []KnobSpec {
	if isDual(problem) {
		return []KnobSpec{
			{Key: "tile_n", Values: []string{"64", "128"}, Default: "64", Doc: "output columns per block: the block holds tile_n rows of B1 and the same rows of B2, so one A decode feeds both products"},
			{Key: "tile_m", Values: []string{"32", "64"}, Default: "64", Doc: "token rows (M) per block"},
			{Key: "stages", Values: []string{"2", "3", "4"}, Default: "3", Doc: "cp.async pipeline depth over 128-wide K chunks"},
			{Key: "layout", Values: []string{"wide", "half"}, Default: "half", Doc: "wide = each thread loads 16 bytes per row per K chunk; half = 8 bytes per 64-wide half (80-byte shared rows): fewer registers, more resident blocks"},
			{Key: "blocks_per_sm", Values: []string{"1", "2", "3"}, Default: "3", Doc: "minimum resident blocks per SM the compiler must allow (__launch_bounds__), and the persistent grid's blocks per SM"},
			{Key: "grid", Values: []string{"tiles", "persistent"}, Default: "tiles", Doc: "tiles = one block per output tile (the hardware scheduler balances the tail); persistent = min(tiles, SMs x resident blocks) blocks walking the tiles"},
		}
	}
	return []KnobSpec{
		{Key: "tile_n", Values: []string{"128", "256"}, Default: "256", Doc: "output columns (weight rows of B) per block: A and B are swapped so N fills the MMA's 16-row side"},
		{Key: "tile_m", Values: []string{"32", "64"}, Default: "32", Doc: "token rows (M) per block"},
		{Key: "stages", Values: []string{"2", "3", "4"}, Default: "4", Doc: "cp.async pipeline depth over 128-wide K chunks"},
		{Key: "layout", Values: []string{"wide", "half"}, Default: "wide", Doc: "wide = each thread loads 16 bytes per row per K chunk; half = 8 bytes per 64-wide half (80-byte shared rows): fewer registers, more resident blocks"},
		{Key: "blocks_per_sm", Values: []string{"1", "2", "3"}, Default: "2", Doc: "minimum resident blocks per SM the compiler must allow (__launch_bounds__), and the persistent grid's blocks per SM"},
		{Key: "grid", Values: []string{"persistent", "tiles"}, Default: "persistent", Doc: "persistent = min(tiles, SMs x resident blocks) blocks walking one tile table over all groups (largest groups first, full tiles before tails); tiles = one block per tile"},
		{Key: "split_k", Values: []string{"1", "2", "4", "auto"}, Default: "1", Doc: "K partitions per output tile: each writes fp32 partial sums to a workspace, a second launch adds them in a fixed order and writes C; auto = the partition count a per-shape cost model (docs/KNOBS.md) predicts fastest for the device's SM count"},
		{Key: "epilogue", Values: []string{"simt", "tma"}, Default: "simt", Doc: "how the staged C tile leaves shared memory: simt = 16-byte stores by every thread; tma = one bulk async copy per row (cp.async.bulk, sm_90 and CUDA 12 or newer)"},
	}
}

// The fused kernels' warp tile: 64 weight rows x 32 token rows.
const (
	fusedWarpN = 64
	fusedWarpM = 32
)

// FusedWarps is the fused kernel's warp grid for knobs k: warps along the
// weight rows (WARPS_N) and along the token rows (WARPS_M).
func FusedWarps(problem string, k Knobs) (warpsN, warpsM int) {
	rows := k.TileN // weight rows per block
	if isDual(problem) {
		rows = 2 * k.TileN // B1 and B2
	}
	return rows / fusedWarpN, k.TileM / fusedWarpM
}

// FusedThreads is the fused kernel's block size.
func FusedThreads(problem string, k Knobs) int {
	wn, wm := FusedWarps(problem, k)
	return 32 * wn * wm
}

// FusedSharedBytes is the fused kernel's dynamic shared memory (its
// FG_SMEM_BYTES): the cp.async ring (64 or 80 data bytes + 8 scale bytes per
// weight and token row per stage) or the epilogue's staging rows, the larger.
func FusedSharedBytes(problem string, k Knobs) int {
	wn, wm := FusedWarps(problem, k)
	tileN, tileM := wn*fusedWarpN, wm*fusedWarpM
	rowb := 64
	if k.Layout == "half" {
		rowb = 80
	}
	pipe := k.Stages * (tileN + tileM) * (rowb + 8)
	ep := tileM * (2*tileN + 16)
	if isDual(problem) {
		ep = tileM * (tileN + 16)
	}
	return max(pipe, ep)
}

// checkFused keeps the fused family to combinations that run as declared:
// blocks_per_sm resident blocks must fit the register file with at least
// 168 registers per thread (below that the decode spills: docs/kernel-notes.md h3, h4)
// and the shared memory of an SM.
func checkFused(problem string, k Knobs) error {
	threads := FusedThreads(problem, k)
	if threads < 32 || k.TileN%32 != 0 || k.TileM%fusedWarpM != 0 {
		return &KnobError{Knob: "tile_m,tile_n", Value: fmt.Sprintf("%d,%d", k.TileM, k.TileN), Reason: "the fused tile must hold whole 64x32 warp tiles"}
	}
	if regs := 65536 / (k.BlocksPerSM * threads); regs < 168 {
		return &KnobError{Knob: "blocks_per_sm", Value: strconv.Itoa(k.BlocksPerSM),
			Reason: fmt.Sprintf("%d blocks of %d threads leave %d registers per thread; the fused decode needs 168 or more (fewer spill)", k.BlocksPerSM, threads, regs)}
	}
	sb := FusedSharedBytes(problem, k)
	if sb > hopperSharedOptin {
		return &KnobError{Knob: "stages", Value: strconv.Itoa(k.Stages),
			Reason: fmt.Sprintf("%d stages of a %dx%d tile need %d bytes of shared memory; at most %d per block", k.Stages, k.TileN, k.TileM, sb, hopperSharedOptin)}
	}
	if need := k.BlocksPerSM * (sb + sharedPerBlockRes); need > hopperSharedPerSM {
		return &KnobError{Knob: "blocks_per_sm", Value: strconv.Itoa(k.BlocksPerSM),
			Reason: fmt.Sprintf("%d blocks of %d bytes of shared memory need %d bytes per SM; an SM has %d", k.BlocksPerSM, sb, need, hopperSharedPerSM)}
	}
	return nil
}

// Plan is the fused kernels' plan: for the group GEMM one launch over
// a table of FgGroup descriptors followed by FgTile entries; for the dual
// GEMM one launch with pointer arguments.
func (fusedFamily) Plan(v Variant, s Shape, lim Limits) (*Plan, error) {
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
	if isDual(v.Problem) {
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
// ("order 1" in docs/kernel-notes.md): groups by M descending, then n0,
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
