package kernels

import (
	"fmt"
	"strconv"
)

// The wgmma family (wg_group_gemm.cu): warp-specialized, Hopper only. A
// producer warpgroup decodes the token rows of each 128-wide K chunk once
// per block into shared memory; two consumer warpgroups decode their weight
// rows into wgmma's register fragment and issue wgmma.mma_async. Group GEMM
// only (the dual GEMM keeps the fused family).
//
// This file and cuda/wg_group_gemm.cu are the whole family: what it takes
// to add one.

func init() { registerFamily(wgmmaFamily{}) }

type wgmmaFamily struct{}

func (wgmmaFamily) Info() FamilyInfo { return FamilyInfo{Name: "wgmma", Order: 30} }

func (wgmmaFamily) KnobSpace(problem string) []KnobSpec { return wgmmaKnobSpace(problem) }

// Fixed by the kernel (wg_group_gemm.cu): 128-wide K chunks, swapped, one
// persistent grouped launch, one block per SM.
func (wgmmaFamily) Fixed(string) Knobs {
	return Knobs{TileK: 128, Epilogue: "simt", WarpRoles: "producer_consumer", Launch: "grouped", SplitK: 1, SwapAB: true,
		BlocksPerSM: 1, Grid: "persistent"}
}

func (wgmmaFamily) Check(problem string, k Knobs) error { return checkWgmma(problem, k) }
func (wgmmaFamily) MinArch(string, Knobs) int           { return 90 }

func (wgmmaFamily) Defines(v Variant, d map[string]string) map[string]string {
	return wgmmaDefines(v.Knobs, d)
}

func (wgmmaFamily) Entries(Variant) []string { return []string{"wg_group_gemm"} }

// CheckDevice: wgmma exists on sm_90a only: Blackwell (sm_100) has tcgen05
// instead, so every other device is refused before anything is built.
func (wgmmaFamily) CheckDevice(v Variant, arch string) error {
	if a := archNumber(arch); a != 0 && a != 90 {
		return fmt.Errorf("kernels: %s uses wgmma, which exists on Hopper (sm_90a) only; the device is %s", v.Name, arch)
	}
	return nil
}

// wgmmaConsumers is the kernel's consumer warpgroup count (WG_CONS): two,
// so one decodes while the other's wgmmas run.
const wgmmaConsumers = 2

// wgmmaRawStages is the per-thread cp.async ring of raw FP4 bytes (WG_RS):
// four where the shared memory allows, else three.
func wgmmaRawStages(k Knobs) int {
	if wgmmaSharedBytesRS(k, 4) <= hopperSharedOptin {
		return 4
	}
	return 3
}

func wgmmaKnobSpace(problem string) []KnobSpec {
	if isDual(problem) {
		return nil
	}
	return []KnobSpec{
		{Key: "tile_m", Values: []string{"64", "128"}, Default: "128", Doc: "token rows (M) per tile, the widest wgmma N used; a tile's wgmma is as wide as its live token rows rounded up to 16"},
		{Key: "tile_n", Values: []string{"128", "256"}, Default: "128", Doc: "weight rows (N) per tile: two consumer warpgroups of 64 (128) or 2x64 (256) rows each"},
		{Key: "stages", Values: []string{"2", "3", "4"}, Default: "3", Doc: "ring of decoded token chunks (fp16, 128-byte swizzle) between the producer and the consumers, with full/empty mbarriers"},
		{Key: "tail_width", Values: []string{"full", "fit"}, Default: "full", Doc: "full = every tile runs wgmma at width tile_m (rows past M are zeros); fit = a tail tile runs at its live token rows rounded up to 32 (four wgmma widths compiled; ptxas serializes the wgmmas for lack of registers; measured 4.51x the baseline against 5.36x for full on an H100, docs/BENCHMARKS.md section 9)"},
		{Key: "warp_roles", Values: []string{"producer_consumer"}, Default: "producer_consumer", Doc: "producer_consumer = warpgroup 0 loads and decodes the token operand into shared memory; warpgroups 1-2 decode the weights in registers and issue wgmma (sm_90a); the fused family is the uniform alternative"},
	}
}

// Variant is the family's default variant of p; the dual GEMM has none.
func (wgmmaFamily) Variant(p *Problem) (Variant, bool) {
	if p.Dual() {
		return Variant{}, false
	}
	v := Variant{
		Name: "wgmma", Base: "wgmma", Title: "Warp-specialized wgmma: producer warpgroup, consumer warpgroups", Problem: p.Name,
		Description: "wg_group_gemm.cu (Hopper sm_90a only): one persistent launch over the fused family's tile table, one block per SM. A producer warpgroup cp.asyncs the raw token FP4 bytes and scales, decodes them once per block to fp16 with the scale folded in and writes them in wgmma's 128-byte-swizzled K-major layout to a ring of shared-memory stages (full/empty mbarriers); two consumer warpgroups decode their 64 weight rows each into wgmma's register A fragment and issue wgmma.mma_async m64nNk16 with the tokens as the shared-memory B operand, so one decoded weight register feeds up to 128 token columns. Output staged in shared memory for 16-byte stores.",
		SourceFile:  "wg_group_gemm.cu", MinArch: 90,
	}
	v.Knobs, _ = defaultKnobs(p.Name, wgmmaFamily{})
	return v, true
}

// wgmmaBlocks is how many 64-row weight blocks each consumer holds (WG_MB).
func wgmmaBlocks(k Knobs) int { return k.TileN / (64 * wgmmaConsumers) }

// WgmmaThreads is the block size: one producer and wgmmaConsumers consumer
// warpgroups.
func WgmmaThreads() int { return 128 * (1 + wgmmaConsumers) }

// WgmmaSharedBytes mirrors the kernel's FG_SMEM_BYTES for knobs k.
func WgmmaSharedBytes(k Knobs) int { return wgmmaSharedBytesRS(k, wgmmaRawStages(k)) }

func wgmmaSharedBytesRS(k Knobs, rs int) int {
	tm, tn := k.TileM, k.TileN
	mb := wgmmaBlocks(k)
	tok := k.Stages * tm * 256                // decoded tokens
	wraw := rs * tn * 64                      // raw weight rows
	wsc := rs * tn * 16                       // weight scales, per (row, lane%4)
	traw := rs * tm * 80                      // raw token rows, padded
	tsc := rs * tm * 8                        // token scales
	ep := wgmmaConsumers * tm * (128*mb + 16) // epilogue staging per consumer
	return tok + wraw + wsc + traw + tsc + ep + 2*k.Stages*8 + 1024
}

// checkWgmma keeps the family to combinations that fit: 384 threads get at
// most 168 registers each, and a consumer holds tile_m/2 fp32 accumulators
// per 64-row block plus 32 fragment registers per block.
func checkWgmma(problem string, k Knobs) error {
	if isDual(problem) {
		return fmt.Errorf("kernels: the wgmma family is for the group GEMM")
	}
	mb := wgmmaBlocks(k)
	if mb < 1 || mb > 2 || k.TileN%(64*wgmmaConsumers) != 0 || (k.TileM != 64 && k.TileM != 128) {
		return &KnobError{Knob: "tile_m,tile_n", Value: fmt.Sprintf("%d,%d", k.TileM, k.TileN), Reason: "the wgmma tile is 64 or 128 token rows by 128 or 256 weight rows"}
	}
	if regs := mb * (k.TileM/2 + 32); regs > 128 {
		return &KnobError{Knob: "tile_m,tile_n", Value: fmt.Sprintf("%d,%d", k.TileM, k.TileN),
			Reason: fmt.Sprintf("a consumer thread would hold %d accumulator and fragment registers; at most 128 of its 168 fit", regs)}
	}
	if sb := WgmmaSharedBytes(k); sb > hopperSharedOptin {
		return &KnobError{Knob: "stages", Value: strconv.Itoa(k.Stages),
			Reason: fmt.Sprintf("%d stages of a %dx%d tile need %d bytes of shared memory; at most %d per block", k.Stages, k.TileN, k.TileM, sb, hopperSharedOptin)}
	}
	return nil
}

func wgmmaDefines(k Knobs, d map[string]string) map[string]string {
	d["WG_TM"] = strconv.Itoa(k.TileM)
	d["WG_CONS"] = strconv.Itoa(wgmmaConsumers)
	d["WG_MB"] = strconv.Itoa(wgmmaBlocks(k))
	d["STAGES"] = strconv.Itoa(k.Stages)
	d["WG_RS"] = strconv.Itoa(wgmmaRawStages(k))
	d["WG_FIT"] = "0"
	if k.TailWidth == "fit" {
		d["WG_FIT"] = "1"
	}
	return d
}

// Plan is one persistent launch (one block per SM) over the fused
// family's table: FgGroup descriptors, then FgTile entries in FusedTiles
// order. A device other than sm_90a is refused first (CheckDevice).
func (wgmmaFamily) Plan(v Variant, s Shape, lim Limits) (*Plan, error) {
	if err := v.CheckDevice(lim.Arch); err != nil {
		return nil, err
	}
	k := v.Knobs
	smem := WgmmaSharedBytes(k)
	if lim.MaxSharedOptin > 0 && smem > lim.MaxSharedOptin {
		return nil, fmt.Errorf("kernels: %s needs %d bytes of shared memory per block; the device allows %d", v.Name, smem, lim.MaxSharedOptin)
	}
	tiles := FusedTiles(s, k)
	items := fusedItems(tiles, 1)
	tilesOff := ceilDiv(len(s.M)*fgGroupBytes, 16) * 16
	grid := len(items)
	if lim.SMs > 0 {
		grid = min(grid, lim.SMs)
	}
	pl := &Plan{Mode: "grouped", SplitK: 1, Launches: []Launch{{Kernel: "wg_group_gemm",
		Grid: [3]uint32{uint32(grid), 1, 1}, Block: [3]uint32{uint32(WgmmaThreads()), 1, 1}, SharedBytes: uint32(smem), Group: -1,
		PersistentPerSM: 1, Tiles: len(items),
		Args: []Arg{{Kind: ArgPtr, Buf: BufTable}, {Kind: ArgPtr, Buf: BufTable, Value: int64(tilesOff)}, i32(len(items))}}}}
	pl.TableBytes = fgTable(s, tiles, items, 1, tilesOff, tilesOff+16*len(items))
	return pl, nil
}
