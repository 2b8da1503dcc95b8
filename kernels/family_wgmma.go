package kernels

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// The wgmma family (wg_group_gemm.cu): warp-specialized, Hopper only. A
// producer warpgroup decodes the token rows of each 128-wide K chunk once
// per block into shared memory; two consumer warpgroups decode their weight
// rows into wgmma's register fragment and issue wgmma.mma_async. For the
// dual GEMM (entry wg_dual_gemm) consumer 0 holds a tile's B1 rows and
// consumer 1 the same B2 rows, so the token decode serves both products.
// With tokens=once a first launch (wg_tokens) decodes the tokens once into
// the workspace and the producer fills each stage with one bulk copy.
//
// This file and cuda/wg_group_gemm.cu are the whole family: what it takes
// to add one.

func init() { registerFamily(wgmmaFamily{}) }

type wgmmaFamily struct{}

func (wgmmaFamily) Info() FamilyInfo { return FamilyInfo{Name: "wgmma", Order: 30} }

func (wgmmaFamily) KnobSpace(problem string) []KnobSpec { return wgmmaKnobSpace(problem) }

// Fixed by the kernel (wg_group_gemm.cu): 128-wide K chunks, swapped, one
// persistent launch (grouped over the groups' tiles; the dual GEMM's one
// group: sequential), one block per SM; the dual tiles run at full width.
func (wgmmaFamily) Fixed(problem string) Knobs {
	k := Knobs{TileK: 128, Epilogue: "simt", WarpRoles: "producer_consumer", Launch: "grouped", SplitK: 1, SwapAB: true,
		BlocksPerSM: 1, Grid: "persistent"}
	if isDual(problem) {
		k.Launch, k.TailWidth = "sequential", "full"
	}
	return k
}

func (wgmmaFamily) Check(problem string, k Knobs) error { return checkWgmma(problem, k) }
func (wgmmaFamily) MinArch(string, Knobs) int           { return 90 }

func (wgmmaFamily) Defines(v Variant, d map[string]string) map[string]string {
	return wgmmaDefines(v.Problem, v.Knobs, d)
}

func (wgmmaFamily) Entries(v Variant) []string {
	e := "wg_group_gemm"
	if isDual(v.Problem) {
		e = "wg_dual_gemm"
	}
	if wgmmaTokensOnce(v.Knobs) {
		return []string{"wg_tokens", e}
	}
	return []string{e}
}

// CheckDevice: wgmma exists on sm_90a only: Blackwell (sm_100) has tcgen05
// instead, so every other device is refused before anything is built.
func (wgmmaFamily) CheckDevice(v Variant, arch string) error {
	if a := archNumber(arch); a != 0 && a != 90 {
		return fmt.Errorf("kernels: %s uses wgmma, which exists on Hopper (sm_90a) only; the device is %s", v.Name, arch)
	}
	return nil
}

// wgmmaConsumers is the kernel's consumer warpgroup count (WG_CONS): two,
// so one decodes while the other's wgmmas run, or for the group GEMM with
// consumers=3 three (one 64-row block each, 192 weight rows per tile). The
// dual GEMM's two are B1's and B2's; with consumers=4 two of each, one
// 64-row block each (wgmmaFold).
func wgmmaConsumers(problem string, k Knobs) int {
	switch {
	case !isDual(problem) && k.Value("consumers") == "3":
		return 3
	case isDual(problem) && k.Value("consumers") == "4":
		return 4
	}
	return 2
}

// wgmmaFold reports whether k's block has no producer warpgroup (WG_FOLD,
// producer=folded): consumer 0's first thread fills the token ring for the
// block's first chunks, and the warp that releases a stage last refills it. The dual GEMM's four consumers need it: with a producer
// warpgroup they would get 96 registers each at launch (112 after
// setmaxnreg), with a producer warp 96 as well (ptxas: 17 warps put five on
// one of the SM's four schedulers, whose register files are separate; it
// spilled 160-172 bytes and serialized the wgmmas), alone 128 (ptxas 127,
// no spill: kernel-notes step 22). Two consumers alone get 248 each, what
// the wide tile needs without setmaxnreg.
func wgmmaFold(problem string, k Knobs) bool { return k.Value("producer") == "folded" }

// wgmmaSharedA reports whether k's weights reach the wgmmas from shared
// memory, decoded there by the producer warpgroup (WG_SSA).
func wgmmaSharedA(k Knobs) bool { return k.Value("weights") == "shared" }

// wgmmaStagedA reports whether k's consumers decode their own weights into
// fp16 A buffers in shared memory and issue SS wgmmas (WG_CSA).
func wgmmaStagedA(k Knobs) bool { return k.Value("weights") == "staged" }

// wgmmaLaunchRegs is what each thread of the block gets at launch: 65536
// registers over 128 x (1 + consumers) threads, a multiple of 8 (168 for
// 384 threads, 128 for 512), as the kernel's WG_LREGS.
func wgmmaLaunchRegs(problem string, k Knobs) int {
	return min(65536/WgmmaThreads(problem, k), 248) &^ 7 // a thread addresses at most 255
}

// wgmmaRawStages is the per-thread cp.async ring of raw FP4 bytes (WG_RS):
// four where the shared memory allows, else three; two for the dual GEMM's
// 256-token tile, whose 64 KB stages leave no room for more. (Two slots
// still run two chunks ahead: the kernel's WG_LA reuses a slot as soon as
// its words are in registers, kernel-notes step 47.)
func wgmmaRawStages(problem string, k Knobs) int {
	switch {
	case wgmmaSharedBytesRS(problem, k, 4) <= hopperSharedOptin:
		return 4
	case k.TileM == 256:
		return 2
	}
	return 3
}

func wgmmaKnobSpace(problem string) []KnobSpec {
	if isDual(problem) {
		return []KnobSpec{
			{Key: "tile_m", Values: []string{"64", "128", "256", "auto"}, Default: "128", Doc: "token rows (M) per tile = the wgmma N width; 256 (m64n256k16: each decoded weight register feeds twice the token columns) needs tokens=once, tile_n=64, registers=split and stages=2 (its 64 KB stages); auto (with tile_n=auto and tokens=once) = per shape, 256 by 64 where those tiles fill at least 70% of the SMs and compute no more token rows than 128-token tiles would, else tile_n=auto's 128-token tiles (wgmmaAutoTall; measured 1.025x and 1.017x the 128-token tiles on the M512 shapes, 0.77x and 0.89x on the M256 ones: H100, dev/gpucall/dual.sh epi3, docs/kernel-notes.md step 29, all before step 47 made the 256-token tile's loop ~15% faster, H100, dev/gpucall/dual.sh wla; as a variant with epilogue=split 1.0096x the dual best and 5.26x the baseline, the new dual best: dual.sh tl, tl2, docs/BENCHMARKS.md section 24)"},
			{Key: "tile_n", Values: []string{"64", "128", "auto"}, Default: "64", Doc: "output columns per tile: consumer 0 holds these rows of B1, consumer 1 the same rows of B2 (one or two 64-row blocks each); auto = per shape, 128 (at stages=2, registers=split) where its tiles fill at least 70% of the SMs, else 64 (wgmmaAutoTile)"},
			wgmmaStagesKnob,
			{Key: "warp_roles", Values: []string{"producer_consumer"}, Default: "producer_consumer", Doc: "producer_consumer = warpgroup 0 decodes the tokens once per chunk for both products; warpgroup 1 multiplies by B1, warpgroup 2 by B2, and hands its sums to warpgroup 1 for the SiLU gate (sm_90a)"},
			wgmmaScheduleKnob,
			wgmmaRegistersKnob,
			wgmmaPipelineKnob,
			wgmmaDecodeKnob,
			wgmmaTokensKnob,
			wgmmaOverlapKnob,
			wgmmaPrefetchKnob,
			{Key: "consumers", Values: []string{"2", "4"}, Default: "2", Doc: "consumer warpgroups: 2 (one per product), or 4 (two per product, one 64-row block each, so a 128-column tile has four warps per scheduler instead of two; needs producer=folded, whose 512 threads keep 128 registers each, and tile_n=128; measured 1.019x two consumers with a producer warpgroup on the same tile, whole tiles, once the folded refill came from a cursor (0.94-0.96x before; H100, dev/gpucall/dual.sh foldcursor, docs/BENCHMARKS.md section 19 call 4)"},
			wgmmaWeightsKnob,
			wgmmaEpilogueKnob,
			wgmmaStagingKnob,
			wgmmaTokenWaitKnob,
			{Key: "producer", Values: []string{"warpgroup", "folded"}, Default: "warpgroup", Doc: "warpgroup = warpgroup 0 fills the token ring; folded = no producer warpgroup: with the tokens decoded ahead the producer's work is one bulk copy per chunk, which the consumers issue themselves: consumer 0's first thread for the block's first chunks, then, for each stage, the warp that releases it last (a count per stage in shared memory; WG_FOLD), so the consumers keep the block's registers without setmaxnreg (two: 248 each); needs tokens=once, whole tiles (schedule=tiles), overlap none or pdl, registers=even and pipeline=halves; each warp keeps a cursor of the next refill's source, so the refill is short (the warp that counts last is the consumer that is behind, and its warpgroup waits for it); measured 0.92-0.97x the same tile with a producer warpgroup (H100, dev/gpucall/dual.sh foldcursor, docs/BENCHMARKS.md section 19 call 4; 0.87-0.91x with the tile lookup in the refill, dual.sh fold2, section 18)"},
		}
	}
	return []KnobSpec{
		{Key: "tile_m", Values: []string{"64", "128"}, Default: "128", Doc: "token rows (M) per tile, the widest wgmma N used; a tile's wgmma is as wide as its live token rows rounded up to 16"},
		{Key: "tile_n", Values: []string{"128", "192", "256", "auto"}, Default: "128", Doc: "weight rows (N) per tile: two consumer warpgroups of 64 (128) or 2x64 (256) rows each, or three of 64 (192, consumers=3); auto = per shape, 256 (at stages=2, registers=split) where its tiles fill at least 70% of the SMs, else 128 (wgmmaAutoTile)"},
		wgmmaStagesKnob,
		{Key: "tail_width", Values: []string{"full", "fit", "fit64"}, Default: "full", Doc: "full = every tile runs wgmma at width tile_m (rows past M are zeros); fit = a tail tile runs at its live token rows rounded up to 32 (four wgmma widths compiled; at the even budget, or with three consumers at 160, ptxas serializes the wgmmas for lack of registers, C7512; measured 4.51x the baseline against 5.36x for full on an H100, docs/BENCHMARKS.md section 9); fit64 = rounded up to 64 (two widths, n64 and n128: less saved per tail, half the widths' code)"},
		{Key: "warp_roles", Values: []string{"producer_consumer"}, Default: "producer_consumer", Doc: "producer_consumer = warpgroup 0 loads and decodes the token operand into shared memory; warpgroups 1-2 decode the weights in registers and issue wgmma (sm_90a); the fused family is the uniform alternative"},
		wgmmaScheduleKnob,
		wgmmaRegistersKnob,
		wgmmaPipelineKnob,
		wgmmaDecodeKnob,
		wgmmaTokensKnob,
		wgmmaOverlapKnob,
		wgmmaPrefetchKnob,
		wgmmaWeightsKnob,
		wgmmaStagingKnob,
		{Key: "consumers", Values: []string{"2", "3"}, Default: "2", Doc: "consumer warpgroups: 2, or 3 (512 threads: a third warp per scheduler to hide the decode chains' latency, and a token stage shared by 192 weight rows instead of 128; needs tokens=once, whose producer is one thread, so registers=split gives each consumer 160 and the producer 32); with tile_n=auto, 3 makes the wide candidate three consumers' 192 rows instead of two consumers' 256"},
		wgmmaRangesKnob,
		wgmmaTokenRowsKnob,
		wgmmaTokenCopyKnob,
		wgmmaTokenWaitKnob,
	}
}

// wgmmaTokenRowsKnob is which rows of a token stage the decode-ahead launch
// writes (WG_TOKLIVE).
var wgmmaTokenRowsKnob = KnobSpec{Key: "token_rows", Values: []string{"all", "live"}, Default: "all", Narrows: true,
	Doc: "all = wg_tokens writes every stage whole, with zeros for a token tile's rows past its group's M; live = only the rows that exist (one bulk store per 64-K block), the rest keeping what the workspace held, which a wgmma reads only into token columns no epilogue stores (WG_TOKLIVE); needs tokens=once; group bench1 and bench2 decode 1,408 and 1,664 token rows for the 1,024 that exist, and the GEMM waits for that launch; measured 1.0019x the group best on an H100 (bench1 1.009x, the others within 0.3%; four small test shapes 1.2-3.6% slower: dev/gpucall/dual.sh live, docs/kernel-notes.md step 34)"}

// wgmmaTokenCopyKnob is how much of a token stage the GEMM's producer
// copies into shared memory per chunk (WG_TOKW).
var wgmmaTokenCopyKnob = KnobSpec{Key: "token_copy", Values: []string{"stage", "width"}, Default: "stage", Narrows: true,
	Doc: "stage = the producer thread copies every token stage whole (tile_m x 256 bytes) whatever the tile's wgmma width; width = only the rows the tile's wgmma reads (its fit width: two bulk copies of width x 128 bytes, one per 64-K block), so a narrower tail tile pulls fewer token bytes through L2; needs tokens=once and tail_width fit or fit64, with the producer thread streaming the stages (not weights=shared or staged, not producer=folded); measured on an H100 against the group best: 1.012x, 0.999x, 1.005x, 1.000x on bench1-4 (and 1.214x on a 256-token tile whose stages were 64 KB, since removed; dev/gpucall/dual.sh gtw, gtw2; docs/kernel-notes.md step 66)"}

// wgmmaTokenWaitKnob is how a consumer waits for its next token stage
// (WG_TWE).
var wgmmaTokenWaitKnob = KnobSpec{Key: "token_wait", Values: []string{"block", "early"}, Default: "block", Narrows: true,
	Doc: "block = each consumer waits for the next chunk's token stage in a try_wait loop once it has decoded its next X half; early = it tests the stage (mbarrier.test_wait) as soon as it has issued the next weights' copies and skips the loop where the stage was full then, so the test's latency overlaps the weights' wait and the decode; the halves pipeline only (not pipeline=chunks, producer=folded, weights=shared or staged); built because each consumer of the group best waited ~150-190 cycles a chunk at stages that had landed long before, one try_wait's latency; measured on an H100: the group best 1.009x and 1.007x on bench1-2, the dual best 1.011x, 0.998x, 1.003x, 0.998x on bench1-4; the group best with token_copy=width as well 1.019x, 1.008x, 0.990x, 1.000x against the best without either (dev/gpucall/dual.sh gtwe, gtwe2; docs/kernel-notes.md step 67)"}

// wgmmaRangesKnob says how stream-K cuts the group GEMM's chunks between
// blocks (WG_RANGES).
var wgmmaRangesKnob = KnobSpec{Key: "ranges", Values: []string{"chunks", "cost"}, Default: "chunks", Narrows: true,
	Doc: "chunks = stream-K gives every block the same number of K chunks; cost = the same estimated cost instead, its whole tiles included, where a chunk of a tail tile computed at a narrower wgmma width costs less (0.84 of a full-width chunk at 64 of 128 tokens: kernels.wgmmaChunkCost, from group bench1's blocks on an H100), from a table of ranges the host builds per launch (WG_RANGES; costRanges); needs a schedule with stream-K (streamk, hybrid, auto, autohybrid) and tail_width fit or fit64, and not prefetch=producer, whose copiers walk equal ranges; on shapes that auto runs as whole tiles it changes nothing; built because group bench1's last block ended 16 us after the median block under equal ranges; measured on an H100 against the group best: 0.970x and 0.978x on bench1-2 with a 64-token chunk at 0.65, 0.997x and 1.003x at 0.84 (dev/gpucall/dual.sh ranges, ranges2; docs/kernel-notes.md step 33)"}

// wgmmaCostRanges reports whether k's module takes cost-balanced stream-K
// ranges (WG_RANGES): ranges=cost on a module that cuts tiles.
func wgmmaCostRanges(k Knobs) bool { return k.Value("ranges") == "cost" && wgmmaStreamK(k) }

// wgmmaWholeTiles is k run as whole tiles (an auto schedule's pick): its
// stream-K ranges, if any, have nothing to cut, so it is the whole-tile
// module.
func wgmmaWholeTiles(k Knobs) Knobs {
	k = k.withCustom("schedule", "tiles")
	if k.Value("ranges") == "cost" {
		k = k.withCustom("ranges", "chunks")
	}
	return k
}

// wgmmaRegistersKnob is the per-role register budget (WG_CREGS).
var wgmmaRegistersKnob = KnobSpec{Key: "registers", Values: []string{"even", "split"}, Default: "even",
	Doc: "even = every thread keeps the 168 registers a 384-thread block gets at launch; split = setmaxnreg moves registers from the producer to the consumers: 224 each for two 64-row blocks (tile_n=256 group, tile_n=128 dual, at tile_m=128), 216 for the whole-chunk pipeline (the producer keeps 56 or 72; ptxas spills 36-40 or 8-16 bytes there); only where the even budget cannot hold the tile, or for tail_width=fit's four wgmma widths"}

// wgmmaPipelineKnob is the consumers' software pipeline (WG_DB).
var wgmmaPipelineKnob = KnobSpec{Key: "pipeline", Values: []string{"halves", "chunks"}, Default: "halves",
	Doc: "halves = a chunk's eight k16 wgmmas go out as two commit groups of four, each half's weights decoded while the other half runs (32 fragment registers); chunks = two whole-chunk fragment sets, the next chunk decoded while all eight wgmmas of this one run (64 fragment registers: needs registers=split)"}

// wgmmaDecodeKnob is how both operands' FP4 codes become fp16 (WG_DEC).
var wgmmaDecodeKnob = KnobSpec{Key: "decode", Values: []string{"shift", "prmt"}, Default: "shift",
	Doc: "shift = each fp16x2 from two nibbles by shifts and masks (four integer instructions per fp16x2); prmt = each 32-bit word's eight signs and magnitudes moved into fp16 high bytes once, then each fp16x2 by one byte permute (eleven instructions per eight values against fifteen; the values pair up in another order inside the word, the same for both operands)"}

// wgmmaTokensKnob is where the token operand is decoded (WG_TOK).
var wgmmaTokensKnob = KnobSpec{Key: "tokens", Values: []string{"block", "once"}, Default: "block",
	Doc: "block = the producer warpgroup copies and decodes each chunk of a tile's token rows in every block that uses them; once = a first launch (wg_tokens) decodes every token tile's chunks once into the workspace, byte for byte the shared-memory stage, and one producer thread fills each stage with one bulk async copy (cp.async.bulk, completing on the stage's mbarrier)"}

// wgmmaOverlapKnob is how the GEMM follows the decode-ahead launch.
var wgmmaOverlapKnob = KnobSpec{Key: "overlap", Values: []string{"none", "pdl", "ready", "prologue"}, Default: "none",
	Doc: "none = the GEMM launch starts once wg_tokens has finished; pdl = programmatic dependent launch (needs tokens=once): wg_tokens lets the GEMM launch as soon as all its blocks have started, the GEMM's blocks set up and load and decode their first weight chunks on the SMs wg_tokens frees, and only the producer thread waits (griddepcontrol.wait) before its first copy of the decoded tokens (WG_PDL: the instructions are compiled only into these modules); ready = pdl, but the producer waits per token tile instead of for the whole token pass: each wg_tokens block counts its token tile done in the launch table (release) once its bulk store has completed, the producer acquires all of a token tile's blocks done before a piece's first copy and counts the chunks read, and the last reader sets both counts back to zero, so every launch leaves them zero (WG_RDY); prologue = no wg_tokens launch: the GEMM's own blocks decode the token stages at their start, every warpgroup of every block a stage at a time in chunk-major order (every token tile's first chunks first), into the same workspace, each stage released by a flag with the launch's epoch that the producer acquires before copying it, until every block has counted its prologue done (WG_PRO); no kernel boundary and no hand-over of SMs, and the weights' first copies run beside the decode; needs tokens=once and a producer warpgroup, not weights=shared or staged; built because the GEMM's first wgmma came 6-16 us into every launch, its blocks waiting for the SMs the token pass held (H100, dev/gpucall/dual.sh tl, docs/kernel-notes.md steps 33 and 39; measured 0.909x (dual) and 0.915x (group) the best variants on an H100, each launch ~3 us longer, since the launch's setup and the weights' first copies no longer run beside the decode: dev/gpucall/dual.sh pro)"}

// WgmmaPairwiseKnobs are the wgmma knobs whose other values the exhaustive
// compile (kernels' TestCompileDeclaredSpace) and the device family test
// (engine's TestWgmmaFamily) check in a pairwise cover rather than in full:
// each changes one corner of the kernel (the token producer, the tail
// widths, where a consumer's weight ring starts, the epilogue, how much of
// a token stage is copied, how the next one is waited for), and the full
// product would not fit those steps' time. A knob of that kind is added
// here once.
var WgmmaPairwiseKnobs = []string{"tokens", "tail_width", "prefetch", "epilogue", "staging", "token_copy", "token_wait"}

// wgmmaStagingKnob is how the epilogue stages a tile's fp16 rows (WG_STM).
var wgmmaStagingKnob = KnobSpec{Key: "staging", Values: []string{"scalar", "stmatrix"}, Default: "scalar", Free: true,
	Doc: "how a consumer stages its fp16 output rows in shared memory before the 16-byte global stores: scalar = one conversion and one 16-bit store per value; stmatrix = two values per conversion (cvt f16x2) and stmatrix .x4 .trans, which stores four 8x8 blocks of the accumulator fragment transposed into the staged token rows (eight stores per 64-row block where scalar has 64 per thread) (WG_STM); measured on an H100 against the best variants: group 1.0070x (every shape 1.004-1.011x), dual 0.9822x (dev/gpucall/dual.sh stm, docs/kernel-notes.md step 31)"}

// wgmmaEpilogueKnob is who gates and stores a dual tile (WG_EPI).
var wgmmaEpilogueKnob = KnobSpec{Key: "epilogue", Values: []string{"one", "split"}, Default: "one", Free: true,
	Doc: "one = the B2 consumer hands its sums to the B1 consumer through shared memory, and the B1 consumer gates (SiLU with an IEEE division), stages and stores the whole tile while the B2 consumer starts its next one; split = the two trade halves, and each gates, stages and stores half the tile's tokens, with the SiLU's division a fast reciprocal (WG_EPI; built because consumer 0 spent ~10,000 cycles per tile between its last wgmma and the next tile's first against consumer 1's ~4,800: H100, dev/gpucall/dual.sh ablmarks); measured on an H100 1.0915x the dual best without it (every shape faster, 1.065-1.148x), of which the split alone 1.027x and the fast reciprocal 1.067x (dev/gpucall/dual.sh epi, docs/kernel-notes.md step 29)"}

// wgmmaWeightsKnob is where the weights are decoded (WG_SSA, WG_CSA).
var wgmmaWeightsKnob = KnobSpec{Key: "weights", Values: []string{"registers", "shared", "staged"}, Default: "registers",
	Doc: "registers = each consumer copies its weight rows (a cp.async ring) and decodes them into wgmma A fragments in its own registers, between its wgmmas; shared = the producer warpgroup copies the tile's 128 weight rows (the dual GEMM: both products' 64) and decodes them, with the token pass's row decode, into an fp16 stage beside each token stage, and the consumers issue wgmmas with both operands in shared memory and nothing of their own between them (WG_SSA; with the consumers' copies and decode taken out the dual ran at 0.71 of its cycles on an H100, dev/gpucall/dual.sh ablate, docs/kernel-notes.md step 25); the narrow tile only (two consumers of one 64-row block each, a producer warpgroup: dual tile_n=64, group tile_n=128 with tail_width=full), with tokens=once, schedule=tiles, stages=2 (two 32 KB token and two 32 KB weight stages), registers=even, pipeline=halves, prefetch=none and overlap none or pdl; measured slower on an H100: 0.865x the same tile with register weights on the dual GEMM and 0.851x on the group's, 0.79x and 0.75x their best variants, with the one producer warpgroup's decode and its hand-offs on the critical path (a second decoding warpgroup, on alternate chunks or on half of each chunk, measured 0.97x and 0.63x; dev/gpucall/dual.sh ssa and ssaprof, docs/kernel-notes.md step 26); staged = each consumer copies its weight rows as with registers and decodes them into one of two fp16 A buffers in shared memory (the token stage's layout), the next chunk's while its eight SS wgmmas of this one run, since an H100 probe ran a warpgroup's own integer work at about half rate beside its SS wgmma chain and not at all beside a register-A chain (WG_CSA); the same tiles and knobs as shared, with two 32 KB A buffers in place of the weight stages; measured slower on an H100: 0.806x the register tile on the dual GEMM and 0.814x on the group's, 0.740x and 0.716x the best variants (dev/gpucall/dual.sh staged, docs/kernel-notes.md step 27)"}

// wgmmaProducerWeights reports whether the producer warpgroup fills the
// consumers' weight ring (prefetch=producer, WG_PW).
func wgmmaProducerWeights(k Knobs) bool { return k.Value("prefetch") == "producer" }

// wgmmaPrefetchKnob is when a block's next piece starts its weight ring (WG_PF).
var wgmmaPrefetchKnob = KnobSpec{Key: "prefetch", Values: []string{"none", "next", "producer"}, Default: "none",
	Doc: "none = each tile (or stream-K piece) starts with an empty weight ring and waits out a global load before its first wgmma; next = each consumer issues the first weight copies of its block's next piece as soon as this piece's last chunk is decoded, so they land under this piece's last wgmmas and its epilogue (WG_PF); producer = the producer warpgroup's three spare warps copy every chunk's weight rows into the ring, up to the ring's depth ahead of the consumers and across pieces, completing on a full mbarrier per slot that the consumers wait on and an empty one they give back, so the consumers neither issue the copies nor wait out a tile's first global load (WG_PW; needs tokens=once, whose producer is one thread, and a producer warpgroup); built because the dual narrow tile's chunk took 0.86x the cycles with the consumers' copies taken out (H100, dev/gpucall/dual.sh ablmarks); measured on an H100 against the best variants: dual 1.007x (the narrow whole tiles of bench1 1.04-1.09x, the wide 1.00-1.02x), group 0.959x with its three consumers' producer at 32 registers (spilling) and ~0.99x with the consumers at 152 and the producer at 56 (no spill), while the group's two-consumer tiles gain 1.17x on bench1-2 but stay under three consumers (dev/gpucall/dual.sh pw3, pwg2, pwg3; docs/kernel-notes.md step 28)"}

// wgmmaOverlap reports whether k's GEMM launch overlaps wg_tokens.
func wgmmaOverlap(k Knobs) bool { return k.Value("overlap") == "pdl" || wgmmaReady(k) }

// wgmmaPrologue reports whether k's GEMM decodes the tokens itself at its
// start, with no wg_tokens launch (WG_PRO).
func wgmmaPrologue(k Knobs) bool { return k.Value("overlap") == "prologue" }

// wgmmaReady reports whether k's producer waits per stage on the token
// pass's ready counts (WG_RDY) rather than for the whole pass.
func wgmmaReady(k Knobs) bool { return k.Value("overlap") == "ready" }

// wgmmaFit reports whether k runs tail tiles at their live width (WG_FIT
// 1 or 2: rounded up to 32 or 64 token rows).
func wgmmaFit(k Knobs) bool { return k.TailWidth == "fit" || k.TailWidth == "fit64" }

// wgmmaTokensOnce reports whether k decodes the tokens ahead (WG_TOK).
func wgmmaTokensOnce(k Knobs) bool { return k.Value("tokens") == "once" }

// wgmmaConsumerRegs is a consumer thread's register budget under k (0: the
// even 168, no setmaxnreg); the producer keeps what is left of 168 x 384.
// Measured with nvcc 13.0 (dev/gpucall/dual.sh regs): a consumer holding
// two 64-row blocks at tile_m=128 needs 224 (at 216 ptxas serializes its
// wgmmas, C7512); the producer spills 36-40 bytes at 56 (consumers 224) and
// 8-16 at 72 (216).
//
// With three consumers (512 threads, 128 each at launch) the split gives
// each consumer 160 and the one-thread producer 32.
func wgmmaConsumerRegs(problem string, k Knobs) int {
	switch {
	case k.Value("registers") != "split":
		return 0
	case wgmmaConsumers(problem, k) == 3 && wgmmaProducerWeights(k):
		// The producer's weight copies (prefetch=producer) spilled 28-340
		// bytes at its 32 (docs/kernel-notes.md step 28): 56 for it, and
		// the consumers, who copy nothing then, 152.
		return 152
	case wgmmaConsumers(problem, k) == 3:
		return 160
	case wgmmaChunks(k):
		return 216
	default:
		return 224
	}
}

// wgmmaFragRegs is how many accumulator and fragment registers a consumer
// thread may hold under k's register budget: what ptxas leaves beside the
// addresses, loop state and the raw words it keeps.
func wgmmaFragRegs(problem string, k Knobs) int {
	if c := wgmmaConsumerRegs(problem, k); c > 0 {
		return c - 32
	}
	return wgmmaEvenFragRegs(problem, k)
}

// wgmmaEvenFragRegs is the same without the split: 128 of the 168 a
// 384-thread block gets at launch, 88 of the 128 for 512 threads.
// Without the producer's code in the kernel (wgmmaFold) ptxas held a
// consumer's 96 in 127 of 128 with no spill, so 32 are left there.
func wgmmaEvenFragRegs(problem string, k Knobs) int {
	if wgmmaFold(problem, k) {
		return wgmmaLaunchRegs(problem, k) - 32
	}
	return wgmmaLaunchRegs(problem, k) - 40
}

// wgmmaHeldRegs is how many accumulator and fragment registers a consumer
// thread holds: tile_m/2 accumulators per 64-row block, and per block 32
// fragment registers (two halves) or 64 (two whole chunks).
func wgmmaHeldRegs(problem string, k Knobs) int {
	frag := 32
	if wgmmaChunks(k) {
		frag = 64
	}
	return wgmmaBlocks(problem, k) * (k.TileM/2 + frag)
}

// wgmmaScheduleKnob is the tile schedule (WG_SK).
var wgmmaScheduleKnob = KnobSpec{Key: "schedule", Values: []string{"tiles", "streamk", "hybrid", "auto", "autohybrid"}, Default: "tiles",
	Doc: "tiles = each block walks whole tiles (tile, tile + grid, ...); streamk = the tiles' K chunks are cut into one equal range per SM, a tile cut between blocks is finished by the block holding its first chunk after adding the others' fp32 partial sums (workspace, flags in the launch table), so no SM idles through a partial last wave; hybrid = whole tiles for the waves that fill every SM, stream-K only over the last, partial wave's tiles (fewer tiles cut); auto = both modules compiled, stream-K taken where whole tiles would fill under 80% of the waves they take, one wave included, and the SMs would get at least 4 K chunks each (wgmmaAutoStreamK), whole tiles elsewhere; autohybrid = auto, but hybrid where the tiles take more than one whole wave and leave a partial one (wgmmaAutoHybrid)"}

// wgmmaStagesKnob is the decoded-token ring's depth (STAGES), the same for both problems.
var wgmmaStagesKnob = KnobSpec{Key: "stages", Values: []string{"2", "3", "4"}, Default: "3", Doc: "ring of decoded token chunks (fp16, 128-byte swizzle) between the producer and the consumers, with full/empty mbarriers"}

// wgmmaChunks reports whether k's consumers run the whole-chunk pipeline.
func wgmmaChunks(k Knobs) bool { return k.Value("pipeline") == "chunks" }

// wgmmaStreamK reports whether k's module cuts tiles (stream-K over all of
// them, or hybrid: over the last wave's): both need the partial sums'
// workspace, the flags and a grid of one block per SM.
func wgmmaStreamK(k Knobs) bool {
	return k.Value("schedule") == "streamk" || k.Value("schedule") == "hybrid"
}

// schedule=auto stands for the whole-tile and the stream-K module; the
// shape's tile count picks one. (One module with stream-K behind a launch
// argument measured 0.86-0.96x whole tiles on the shapes it did not cut:
// kernel-notes step 6.) tile_n=auto stands for the narrow and the wide tile
// (wgmmaTileCandidates); the tile is picked first, then the schedule for it.
func (wgmmaFamily) isAuto(k Knobs) bool { return wgmmaAutoSchedule(k) || k.TileN == TileAuto }

// wgmmaAutoSchedule reports whether k's schedule is picked per shape.
// autohybrid is a value of its own so that auto keeps the rule the rungs
// named with it were measured under.
func wgmmaAutoSchedule(k Knobs) bool {
	return k.Value("schedule") == "auto" || k.Value("schedule") == "autohybrid"
}
func (wgmmaFamily) candidates(problem string, k Knobs) []Knobs {
	var out []Knobs
	for _, c := range wgmmaTileCandidates(problem, k) {
		if c.Value("schedule") == "autohybrid" {
			out = append(out, wgmmaWholeTiles(c), c.withCustom("schedule", "streamk"), c.withCustom("schedule", "hybrid"))
		} else if c.Value("schedule") == "auto" {
			out = append(out, wgmmaWholeTiles(c), c.withCustom("schedule", "streamk"))
		} else {
			out = append(out, c)
		}
	}
	return out
}
func (wgmmaFamily) resolve(problem string, s Shape, k Knobs, lim Limits) (Knobs, error) {
	if k.TileN == TileAuto {
		c := wgmmaTileCandidates(problem, k)
		switch {
		case len(c) == 3 && wgmmaAutoTall(s.M[0], wgmmaTiles(problem, s, c[2]), lim.SMs):
			k = c[2]
		case wgmmaAutoTile(wgmmaTiles(problem, s, c[1]), lim.SMs):
			k = c[1]
		default:
			k = c[0]
		}
	}
	if !wgmmaAutoSchedule(k) {
		return k, nil
	}
	tiles := wgmmaTiles(problem, s, k)
	if k.Value("schedule") == "autohybrid" && wgmmaAutoHybrid(tiles, lim.SMs) {
		return k.withCustom("schedule", "hybrid"), nil
	}
	if wgmmaAutoStreamK(tiles, s.K/128, lim.SMs) {
		return k.withCustom("schedule", "streamk"), nil
	}
	return wgmmaWholeTiles(k), nil
}

// wgmmaTileCandidates is what tile_n=auto stands for: the narrow tile (one
// 64-row block per consumer: 64 dual output columns, 128 group weight rows)
// at k's own stages and registers (3, even: checkWgmma allows auto only
// there; split with tail_width=fit, whose four wgmma widths the even budget
// serialized), and the wide one (two blocks per consumer: 128 columns, 256 rows)
// at 2 stages with the register split (the shared memory and the two
// blocks' accumulators need both). With consumers=3 (group) the wide tile is
// three consumers' 192 rows at 3 stages instead (measured 1.049x and
// 1.062x the 256-row tile on bench1 and bench2, kernel-notes step 16), and
// the narrow one keeps two. Concrete knobs give themselves.
//
// The dual GEMM's tile_m=auto adds a third, the tall tile: 256 tokens by 64
// columns at 2 stages with the register split.
func wgmmaTileCandidates(problem string, k Knobs) []Knobs {
	if k.TileN != TileAuto {
		return []Knobs{k}
	}
	if isDual(problem) && k.TileM == TileAuto {
		k.TileM = 128
		tall := k.withCustom("registers", "split")
		tall.TileM, tall.TileN, tall.Stages = 256, 64, 2
		return append(wgmmaTileCandidates(problem, k), tall)
	}
	if wgmmaConsumers(problem, k) == 3 {
		narrow, wide := k.withCustom("consumers", "2"), k
		narrow.TileN, wide.TileN = 128, 192
		if wgmmaFit(k) {
			narrow = narrow.withCustom("registers", "split") // as below
		}
		return []Knobs{narrow, wide.withCustom("registers", "split")}
	}
	block := 64 * wgmmaConsumers(problem, k) // the group GEMM's consumers split a tile's rows
	if isDual(problem) {
		block = 64 // each dual consumer holds the tile's rows of its own B
	}
	narrow, wide := k, k
	narrow.TileN = block
	if wgmmaFit(k) {
		// Four wgmma widths' code: the even budget serialized them (C7512).
		narrow = narrow.withCustom("registers", "split")
	}
	wide.TileN, wide.Stages = 2*block, 2
	return []Knobs{narrow, wide.withCustom("registers", "split")}
}

// wgmmaAutoTile is tile_n=auto's rule: the wide tile where its tiles fill
// at least 70% of the SMs, else the narrow one. Measured on the H100
// (docs/BENCHMARKS.md section 13, call 8), wide against narrow, paired:
// dual 1.221x at 128 wide tiles for 132 SMs (bench2, one wave instead of
// two), 1.115x at 96 (bench4), 0.997x at 64 (bench1), 0.898x at 48
// (bench3); group 1.121x at 176 (bench1), 1.074x at 364 (bench2), 0.972x at
// 60 (bench3), 0.736x at 64 (bench4).
func wgmmaAutoTile(wide, sms int) bool {
	return sms > 0 && float64(wide) >= 0.7*float64(sms)
}

// wgmmaAutoTall is the dual GEMM's tile_m=auto rule for m token rows: the
// tall tile (256 tokens, each decoded weight register feeding twice the
// token columns) where its tiles fill at least 70% of the SMs, as
// wgmmaAutoTile's, and it computes no more token rows than 128-token tiles
// (m mod 256 is 0 or over 128). Measured on the H100 (kernel-notes step 29,
// call 3), paired with tile_n=auto's pick: 1.025x at 128 tall tiles for 132
// SMs (bench2, M 512), 1.017x at 96 under stream-K (bench4); 0.770x and
// 0.886x at 64 and 48 (bench1 and bench3, M 256), which the fill excludes.
func wgmmaAutoTall(m, tiles, sms int) bool {
	return wgmmaAutoTile(tiles, sms) && ceilDiv(m, 256)*256 == ceilDiv(m, 128)*128
}

// wgmmaTiles is the number of output tiles of shape s.
func wgmmaTiles(problem string, s Shape, k Knobs) int {
	if isDual(problem) {
		return ceilDiv(s.M[0], k.TileM) * ceilDiv(s.N, k.TileN)
	}
	return len(FusedTiles(s, k))
}

// wgmmaAutoStreamK is schedule=auto's rule for tiles of chunks 128-wide K
// chunks each: stream-K where whole tiles fill under 80% of the waves they
// take, and the SMs would get at least streamKMinChunks chunks each.
// Measured on the H100 (docs/kernel-notes.md step 6): stream-K won 1.255x
// where 192 tiles filled 73% of two waves (dual bench4), and lost 1-5% at
// 89-97% fill, where its pieces' extra pipeline fills and partial sums cost
// more than the idle SMs it fills. The chunk floor is from the test shapes
// (call 20, BENCHMARKS section 13): with under 2 chunks per SM, stream-K ran
// 0.74-0.94x whole tiles; the smallest win had 23 (dual bench3).
func wgmmaAutoStreamK(tiles, chunks, sms int) bool {
	if sms <= 0 || tiles <= 0 || tiles*chunks < streamKMinChunks*sms {
		return false
	}
	waves := ceilDiv(tiles, sms)
	return float64(tiles) < 0.8*float64(waves*sms)
}

// wgmmaAutoHybrid is schedule=autohybrid's rule: hybrid where the tiles
// fill at least one whole wave and leave a partial last one. Measured on
// the H100 (kernel-notes step 18), paired with whole tiles: 1.048x at 242
// tiles for 132 SMs (group bench1), 1.022x at 494 (bench2); under one wave
// hybrid is stream-K, which lost there (0.889x at 120 tiles, 0.760x at 128).
func wgmmaAutoHybrid(tiles, sms int) bool {
	return sms > 0 && tiles > sms && tiles%sms != 0
}

// streamKMinChunks is the fewest K chunks per SM for which schedule=auto
// takes stream-K: between the test shapes' under 2 (a loss) and the
// benchmark shapes' 23 or more (wins); the value in between is not measured.
const streamKMinChunks = 4

// Variant is the family's default variant of p.
func (wgmmaFamily) Variant(p *Problem) (Variant, bool) {
	v := Variant{
		Name: "wgmma", Base: "wgmma", Title: "Warp-specialized wgmma: producer warpgroup, consumer warpgroups", Problem: p.Name,
		Description: "wg_group_gemm.cu (Hopper sm_90a only): one persistent launch over the fused family's tile table, one block per SM. A producer warpgroup cp.asyncs the raw token FP4 bytes and scales, decodes them once per block to fp16 with the scale folded in and writes them in wgmma's 128-byte-swizzled K-major layout to a ring of shared-memory stages (full/empty mbarriers); two consumer warpgroups decode their 64 weight rows each into wgmma's register A fragment and issue wgmma.mma_async m64nNk16 with the tokens as the shared-memory B operand, so one decoded weight register feeds up to 128 token columns. Output staged in shared memory for 16-byte stores.",
		SourceFile:  "wg_group_gemm.cu", MinArch: 90,
	}
	if p.Dual() {
		v.Title = "Warp-specialized wgmma dual GEMM: one token decode, B1 and B2 in two consumer warpgroups"
		v.Description = "wg_group_gemm.cu with DUAL=1 (entry wg_dual_gemm, Hopper sm_90a only): one persistent launch, one block per SM. The producer warpgroup decodes each 128-wide K chunk of the tile's token rows once into the shared-memory ring; consumer warpgroup 0 decodes the tile's 64 rows of B1, consumer 1 the same rows of B2, each into wgmma's register A fragment, and both issue wgmma.mma_async against the same decoded tokens. In the epilogue consumer 1 hands its fp32 sums to consumer 0 through shared memory; consumer 0 computes silu(acc1) * acc2, rounds once to fp16 and stores 16-byte rows."
	}
	v.Knobs, _ = defaultKnobs(p.Name, wgmmaFamily{})
	return v, true
}

// wgmmaBlocks is how many 64-row weight blocks each consumer holds (WG_MB):
// the group GEMM's tile_n weight rows are split between the consumers; in
// the dual GEMM each product's consumers split tile_n rows of its own B.
func wgmmaBlocks(problem string, k Knobs) int {
	if isDual(problem) {
		return k.TileN / (64 * wgmmaConsumers(problem, k) / 2)
	}
	return k.TileN / (64 * wgmmaConsumers(problem, k))
}

// WgmmaThreads is the block size: one producer and wgmmaConsumers consumer
// warpgroups, or the consumers alone (wgmmaFold).
func WgmmaThreads(problem string, k Knobs) int {
	if wgmmaFold(problem, k) {
		return 128 * wgmmaConsumers(problem, k)
	}
	return 128 * (1 + wgmmaConsumers(problem, k))
}

// WgmmaSharedBytes mirrors the kernel's FG_SMEM_BYTES for knobs k of problem.
func WgmmaSharedBytes(problem string, k Knobs) int {
	return wgmmaSharedBytesRS(problem, k, wgmmaRawStages(problem, k))
}

func wgmmaSharedBytesRS(problem string, k Knobs, rs int) int {
	mb := wgmmaBlocks(problem, k)
	cons := wgmmaConsumers(problem, k)
	tm, tn := k.TileM, 64*mb*cons // weight rows per block (TILE_N)
	tok := k.Stages * tm * 256    // decoded tokens
	wraw := rs * tn * 64          // raw weight rows
	wsc := rs * tn * 16           // weight scales, per (row, lane%4)
	traw := rs * tm * 80          // raw token rows, padded
	tsc := rs * tm * 8            // token scales
	if wgmmaTokensOnce(k) {
		traw, tsc = 0, 0 // decoded ahead: no raw token ring
	}
	astg := 0
	if wgmmaStagedA(k) {
		astg = 2 * tn * 256 // the consumers' two A buffers
	}
	if wgmmaSharedA(k) {
		// The producer's raw weight rows in the token ring's layout, and a
		// decoded weight stage per token stage; no consumer ring.
		wraw, wsc = 0, 0
		traw, tsc = rs*tn*80, rs*tn*8
		astg = k.Stages * tn * 256
	}
	ep := cons * tm * (128*mb + 16) // epilogue staging per consumer
	wbar := 0
	if wgmmaProducerWeights(k) {
		wbar = 2 * rs * 8 // the weight ring's full and empty mbarriers
	}
	return tok + wraw + wsc + traw + tsc + astg + ep + 2*k.Stages*8 + wbar + 1024
}

// checkWgmma keeps the family to combinations that fit: 384 threads get at
// most 168 registers each (a consumer 216 or 224 with registers=split,
// wgmmaConsumerRegs), and a consumer holds what wgmmaHeldRegs counts.
func checkWgmma(problem string, k Knobs) error {
	if (wgmmaOverlap(k) || wgmmaPrologue(k)) && !wgmmaTokensOnce(k) {
		return &KnobError{Knob: "overlap", Value: k.Value("overlap"), Reason: "the overlap is with the decode-ahead launch: it needs tokens=once"}
	}
	if wgmmaFold(problem, k) {
		// The folded producer walks whole tiles only (WG_FOLD): no
		// stream-K, no per-tile ready counts, no setmaxnreg (whole
		// warpgroups would have to give registers up).
		if !wgmmaTokensOnce(k) || wgmmaReady(k) || wgmmaPrologue(k) || k.Value("schedule") != "tiles" || k.Value("registers") != "even" || wgmmaChunks(k) {
			return &KnobError{Knob: "producer", Value: "folded", Reason: "the producer folded into consumer 0 needs tokens=once, overlap none or pdl, schedule=tiles, registers=even and pipeline=halves"}
		}
	}
	if (wgmmaSharedA(k) || wgmmaStagedA(k)) && (wgmmaBlocks(problem, k) != 1 || wgmmaConsumers(problem, k) != 2 || k.TileM != 128 || k.Stages != 2 ||
		wgmmaFold(problem, k) || wgmmaFit(k) || !wgmmaTokensOnce(k) || k.Value("schedule") != "tiles" ||
		k.Value("registers") != "even" || wgmmaChunks(k) || wgmmaReady(k) || wgmmaPrologue(k) || k.Value("prefetch") != "none") {
		return &KnobError{Knob: "weights", Value: k.Value("weights"), Reason: "weights decoded into shared memory are for the narrow tile (two consumers of one 64-row block each: dual tile_n=64, group tile_n=128; tile_m=128, stages=2, a producer warpgroup, tail_width=full) with tokens=once, schedule=tiles, registers=even, pipeline=halves, prefetch=none and overlap none or pdl"}
	}
	if k.Value("token_rows") == "live" && !wgmmaTokensOnce(k) {
		return &KnobError{Knob: "token_rows", Value: "live", Reason: "only the decode-ahead launch writes token stages: token_rows=live needs tokens=once"}
	}
	if k.Value("token_copy") == "width" && (!wgmmaTokensOnce(k) || !wgmmaFit(k) || wgmmaSharedA(k) || wgmmaStagedA(k) || wgmmaFold(problem, k)) {
		return &KnobError{Knob: "token_copy", Value: "width", Reason: "copies of a tile's wgmma width need tokens=once, tail_width fit or fit64 and the producer thread streaming the stages (not weights=shared or staged, not producer=folded)"}
	}
	if k.Value("token_wait") == "early" && (wgmmaChunks(k) || wgmmaFold(problem, k) || wgmmaSharedA(k) || wgmmaStagedA(k)) {
		return &KnobError{Knob: "token_wait", Value: "early", Reason: "the early test of the next token stage is in the halves pipeline: not with pipeline=chunks, producer=folded or weights=shared or staged"}
	}
	if k.Value("ranges") == "cost" && (k.Value("schedule") == "tiles" || !wgmmaFit(k) || wgmmaProducerWeights(k)) {
		return &KnobError{Knob: "ranges", Value: "cost", Reason: "cost-balanced ranges cut stream-K's chunks by their tiles' wgmma widths: they need a schedule with stream-K (streamk, hybrid, auto or autohybrid), tail_width fit or fit64 (otherwise every chunk costs the same) and a prefetch other than producer (its copiers walk equal ranges)"}
	}
	if wgmmaProducerWeights(k) && (!wgmmaTokensOnce(k) || wgmmaFold(problem, k)) {
		return &KnobError{Knob: "prefetch", Value: "producer", Reason: "the producer warpgroup copies the weights only with tokens=once (the token pass's producer is one thread then) and producer=warpgroup"}
	}
	if wgmmaConsumers(problem, k) == 4 && (!wgmmaFold(problem, k) || k.TileN != 128 || k.TileM == 256) {
		return &KnobError{Knob: "consumers", Value: "4", Reason: "four dual consumers need producer=folded (512 threads at 128 registers), tile_n=128 (two 64-row blocks per product) and tile_m 64 or 128"}
	}
	if wgmmaConsumers(problem, k) == 3 {
		// The producer must be the one bulk-copying thread: with the token
		// decode in the block it needs the registers the third consumer
		// takes (a harness build at 152 per consumer spilled 40 bytes and
		// ran 0.90x two consumers, kernel-notes step 7).
		switch {
		case !wgmmaTokensOnce(k):
			return &KnobError{Knob: "consumers,tokens", Value: "3," + k.Value("tokens"), Reason: "three consumer warpgroups need tokens=once (a producer of one thread, whose registers the third consumer takes)"}
		case wgmmaChunks(k):
			// tail_width=fit is allowed: its four widths were serialized
			// (C7512) only where a consumer held two 64-row blocks.
			return &KnobError{Knob: "consumers,pipeline", Value: "3," + k.Value("pipeline"), Reason: "three consumers get 160 registers each: two whole-chunk fragment sets do not fit"}
		}
	}
	if k.TileM == TileAuto && (!isDual(problem) || k.TileN != TileAuto || !wgmmaTokensOnce(k)) {
		return &KnobError{Knob: "tile_m", Value: "auto", Reason: "tile_m=auto is the dual GEMM's, with tile_n=auto and tokens=once (its 256-token tile needs both)"}
	}
	if k.TileN == TileAuto {
		if (k.TileM != 128 && k.TileM != TileAuto) || k.Stages != 3 || k.Value("registers") != "even" || wgmmaChunks(k) {
			return &KnobError{Knob: "tile_n", Value: "auto", Reason: "tile_n=auto picks the stages and registers with the tile (narrow: 3 stages, even; wide: 2 stages, split): it needs tile_m=128 (or auto, dual) and stages, registers and pipeline at their defaults"}
		}
		for _, c := range wgmmaTileCandidates(problem, k) {
			if err := checkWgmma(problem, c); err != nil {
				return err
			}
		}
		return nil
	}
	mb := wgmmaBlocks(problem, k)
	if isDual(problem) {
		if k.TileM == 256 && (k.TileN != 64 || !wgmmaTokensOnce(k)) {
			return &KnobError{Knob: "tile_m,tile_n,tokens", Value: fmt.Sprintf("256,%d,%s", k.TileN, k.Value("tokens")), Reason: "a 256-token tile (64 KB per stage) fits only with the tokens decoded ahead (tokens=once: no raw token ring) and 64 output columns"}
		}
		if mb < 1 || mb > 2 || k.TileN%64 != 0 || (k.TileM != 64 && k.TileM != 128 && k.TileM != 256) {
			return &KnobError{Knob: "tile_m,tile_n", Value: fmt.Sprintf("%d,%d", k.TileM, k.TileN), Reason: "the wgmma dual tile is 64 or 128 token rows by 64 or 128 output columns, or 256 by 64"}
		}
	} else if cons := wgmmaConsumers(problem, k); mb < 1 || mb > 2 || k.TileN%(64*cons) != 0 || (k.TileM != 64 && k.TileM != 128) {
		return &KnobError{Knob: "tile_m,tile_n,consumers", Value: fmt.Sprintf("%d,%d,%d", k.TileM, k.TileN, cons), Reason: fmt.Sprintf("the wgmma tile is 64 or 128 token rows by one or two 64-row blocks per consumer: %d or %d weight rows with %d consumers", 64*cons, 128*cons, cons)}
	}
	chunks := wgmmaChunks(k)
	if chunks && k.Value("registers") != "split" {
		return &KnobError{Knob: "pipeline,registers", Value: "chunks," + k.Value("registers"), Reason: "two whole-chunk fragment sets need registers=split (at the even 168 ptxas spilled them)"}
	}
	regs, most := wgmmaHeldRegs(problem, k), wgmmaFragRegs(problem, k)
	if regs > most {
		return &KnobError{Knob: "tile_m,tile_n,registers,pipeline", Value: fmt.Sprintf("%d,%d,%s,%s", k.TileM, k.TileN, k.Value("registers"), k.Value("pipeline")),
			Reason: fmt.Sprintf("a consumer thread would hold %d accumulator and fragment registers; at most %d fit in its budget", regs, most)}
	}
	if even := wgmmaEvenFragRegs(problem, k); k.Value("registers") == "split" && regs <= even && !chunks && !wgmmaFit(k) {
		// The even budget already holds this tile; the split would only
		// spill the producer (40 bytes at 56 registers, ptxas -v). With
		// tail_width=fit it holds four wgmma widths' code, whose wgmmas
		// ptxas serialized at the even budget (C7512).
		return &KnobError{Knob: "registers", Value: "split", Reason: fmt.Sprintf("a %dx%d tile fits in the even budget (%d accumulator and fragment registers of %d); split is for the tiles and pipelines that do not", k.TileN, k.TileM, regs, even)}
	}
	if sb := WgmmaSharedBytes(problem, k); sb > hopperSharedOptin {
		return &KnobError{Knob: "stages", Value: strconv.Itoa(k.Stages),
			Reason: fmt.Sprintf("%d stages of a %dx%d tile need %d bytes of shared memory; at most %d per block", k.Stages, k.TileN, k.TileM, sb, hopperSharedOptin)}
	}
	return nil
}

func wgmmaDefines(problem string, k Knobs, d map[string]string) map[string]string {
	d["WG_TM"] = strconv.Itoa(k.TileM)
	d["WG_CONS"] = strconv.Itoa(wgmmaConsumers(problem, k))
	d["WG_MB"] = strconv.Itoa(wgmmaBlocks(problem, k))
	d["STAGES"] = strconv.Itoa(k.Stages)
	d["WG_RS"] = strconv.Itoa(wgmmaRawStages(problem, k))
	d["WG_FIT"] = map[string]string{"fit": "1", "fit64": "2"}[k.TailWidth]
	if d["WG_FIT"] == "" {
		d["WG_FIT"] = "0"
	}
	d["WG_CREGS"] = strconv.Itoa(wgmmaConsumerRegs(problem, k))
	for def, on := range map[string]bool{
		"WG_FOLD":    wgmmaFold(problem, k),
		"WG_DB":      wgmmaChunks(k),
		"WG_DEC":     k.Value("decode") == "prmt",
		"WG_TOK":     wgmmaTokensOnce(k),
		"WG_PDL":     wgmmaOverlap(k),
		"WG_RDY":     wgmmaReady(k),
		"WG_PRO":     wgmmaPrologue(k),
		"WG_PF":      k.Value("prefetch") == "next",
		"WG_PW":      wgmmaProducerWeights(k),
		"WG_EPI":     k.Value("epilogue") == "split",
		"WG_STM":     k.Value("staging") == "stmatrix",
		"WG_RANGES":  wgmmaCostRanges(k),
		"WG_TOKLIVE": k.Value("token_rows") == "live",
		"WG_TOKW":    k.Value("token_copy") == "width",
		"WG_TWE":     k.Value("token_wait") == "early",
		"WG_SSA":     wgmmaSharedA(k),
		"WG_CSA":     wgmmaStagedA(k),
	} {
		d[def] = map[bool]string{false: "0", true: "1"}[on]
	}
	d["WG_SK"] = map[string]string{"streamk": "1", "hybrid": "2"}[k.Value("schedule")]
	if d["WG_SK"] == "" {
		d["WG_SK"] = "0"
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
	smem := WgmmaSharedBytes(v.Problem, k)
	if lim.MaxSharedOptin > 0 && smem > lim.MaxSharedOptin {
		return nil, fmt.Errorf("kernels: %s needs %d bytes of shared memory per block; the device allows %d", v.Name, smem, lim.MaxSharedOptin)
	}
	block := [3]uint32{uint32(WgmmaThreads(v.Problem, k)), 1, 1}
	cons := wgmmaConsumers(v.Problem, k)
	// One block per SM over the work items: whole tiles, or for stream-K
	// every (tile, K chunk) pair (Launch.Tiles: the engine caps the grid at
	// it, and a cap at the tile count would idle the SMs stream-K fills).
	kch := s.K / 128 // K chunks per tile
	items := func(tiles int) int {
		if wgmmaStreamK(k) {
			return tiles * kch
		}
		return tiles
	}
	grid := func(tiles int) int {
		n := items(tiles)
		if lim.SMs > 0 {
			n = min(n, lim.SMs)
		}
		return n
	}
	// The workspace: stream-K's partial sums (one slot per block) first,
	// then (tokens=once) the decoded token stages at tokOff.
	partials := func(g int) int64 {
		if !wgmmaStreamK(k) {
			return 0
		}
		return int64(g) * int64(cons) * 128 * int64(wgmmaBlocks(v.Problem, k)*k.TileM/2) * 4
	}
	// args are the kernel's last three arguments: stream-K's workspace and
	// flags (one u32 per block and consumer, at flagsOff in the table:
	// uploaded as zeros, and every launch leaves them zero), and the tokens
	// decoded ahead; null pointers where unused.
	args := func(flagsOff int, tokOff int64) []Arg {
		out := []Arg{{Kind: ArgI64}, {Kind: ArgI64}, {Kind: ArgI64}}
		if wgmmaStreamK(k) {
			out[0], out[1] = ptr(BufWork, 0), Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(flagsOff)}
		}
		if wgmmaTokensOnce(k) {
			out[2] = Arg{Kind: ArgPtr, Buf: BufWork, Value: tokOff}
		}
		return out
	}
	// tokens prepends the decode-ahead launch over tokTiles token tiles
	// (groups described at offset 0 of the table) and sizes the workspace.
	// overlap=ready: both launches also take the table's ready counts at
	// readyOff (done and seen, two u32 per token tile, uploaded as zeros,
	// and every launch leaves them zero); the GEMM's are its last two
	// arguments, see withReady.
	tokens := func(pl *Plan, g, tokTiles, readyOff int) int64 {
		tokOff := (partials(g) + 1023) &^ 1023
		pl.WorkspaceBytes = partials(g)
		if !wgmmaTokensOnce(k) {
			return tokOff
		}
		stage := k.TileM * 256
		pl.WorkspaceBytes = tokOff + int64(tokTiles*kch*stage)
		if wgmmaPrologue(k) {
			return tokOff // the GEMM decodes the stages itself
		}
		// Two threads per token row, a 64-K block each (the kernel's wg_tokens).
		tl := Launch{Kernel: "wg_tokens", Grid: [3]uint32{uint32(tokTiles * kch), 1, 1},
			Block: [3]uint32{uint32(2 * k.TileM), 1, 1}, SharedBytes: uint32(stage + 1024), Group: -1,
			Args: []Arg{{Kind: ArgPtr, Buf: BufTable}, i32(len(s.M)), {Kind: ArgPtr, Buf: BufWork, Value: tokOff}}}
		if wgmmaReady(k) {
			tl.Args = append(tl.Args, Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(readyOff)})
		}
		pl.Launches = append([]Launch{tl}, pl.Launches...)
		pl.Launches[1].Overlap = wgmmaOverlap(k)
		return tokOff
	}
	flagBytes := func(g int) int {
		if !wgmmaStreamK(k) {
			return 0
		}
		return g * cons * 4
	}
	// readyBytes is the size of overlap=ready's counts (0 without).
	readyBytes := func(tokTiles int) int {
		if !wgmmaReady(k) {
			return 0
		}
		return tokTiles * 8
	}
	// withReady gives the GEMM launch its last arguments under
	// overlap=ready: the counts and readers, the chunk reads of one token
	// tile (kch per tile that reads it: one per tile of its token rows).
	withReady := func(gemm *Launch, readyOff, tilesPerTokenTile int) {
		if wgmmaReady(k) {
			gemm.Args = append(gemm.Args, Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(readyOff)}, i32(kch*tilesPerTokenTile))
		}
	}
	// overlap=prologue: a flag per token stage after the other table parts
	// (uploaded as zeros; the kernel's epochs make them reusable), and the
	// GEMM's last two arguments, the number of groups and the flags.
	proBytes := func(tokTiles int) int {
		if !wgmmaPrologue(k) {
			return 0
		}
		return tokTiles * kch * 4
	}
	withPrologue := func(gemm *Launch, proOff int) {
		if wgmmaPrologue(k) {
			gemm.Args = append(gemm.Args, i32(len(s.M)), Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(proOff)})
		}
	}
	if isDual(v.Problem) {
		m := s.M[0]
		tiles := wgmmaTiles(v.Problem, s, k)
		g := grid(tiles)
		pl := &Plan{Mode: "sequential"}
		// The table: the token operand as one FgGroup (tokens=once), then
		// stream-K's flags.
		flagsOff := 0
		var group func(func(Buffer, int) uint64) []byte
		if wgmmaTokensOnce(k) {
			flagsOff = fgGroupBytes
			group = fgTable(s, nil, nil, 1, fgGroupBytes, 0)
		}
		pl.Launches = []Launch{{Kernel: "wg_dual_gemm",
			Grid: [3]uint32{uint32(g), 1, 1}, Block: block, SharedBytes: uint32(smem), Group: 0, PersistentPerSM: 1, Tiles: items(tiles),
			Args: []Arg{ptr(BufA, 0), ptr(BufSA, 0), ptr(BufB, 0), ptr(BufSB, 0), ptr(BufB2, 0), ptr(BufSB2, 0),
				ptr(BufC, 0), i32(m), i32(s.N), i32(s.K)}}}
		tokTiles := ceilDiv(m, k.TileM)
		readyOff := flagsOff + flagBytes(g)
		tokOff := tokens(pl, g, tokTiles, readyOff)
		last := &pl.Launches[len(pl.Launches)-1]
		last.Args = append(last.Args, args(flagsOff, tokOff)...)
		withReady(last, readyOff, ceilDiv(s.N, k.TileN))
		withPrologue(last, readyOff+readyBytes(tokTiles))
		if n := flagBytes(g) + readyBytes(tokTiles) + proBytes(tokTiles); group != nil || n > 0 {
			pl.TableBytes = func(addr func(Buffer, int) uint64) []byte {
				var b []byte
				if group != nil {
					b = group(addr)
				}
				return append(b, make([]byte, n)...)
			}
		}
		return pl, nil
	}
	tiles := FusedTiles(s, k)
	entries := fusedItems(tiles, 1)
	tilesOff := ceilDiv(len(s.M)*fgGroupBytes, 16) * 16
	flagsOff := tilesOff + 16*len(entries)
	g := grid(len(entries))
	pl := &Plan{Mode: "grouped", SplitK: 1}
	pl.Launches = []Launch{{Kernel: "wg_group_gemm",
		Grid: [3]uint32{uint32(g), 1, 1}, Block: block, SharedBytes: uint32(smem), Group: -1,
		PersistentPerSM: 1, Tiles: items(len(entries)),
		Args: []Arg{{Kind: ArgPtr, Buf: BufTable}, {Kind: ArgPtr, Buf: BufTable, Value: int64(tilesOff)}, i32(len(entries))}}}
	// Token tiles are numbered group by group: first[g] is group g's first.
	first, tokTiles := make([]int, len(s.M)), 0
	for gi, m := range s.M {
		first[gi] = tokTiles
		tokTiles += ceilDiv(m, k.TileM)
	}
	readyOff := flagsOff + flagBytes(g)
	tokOff := tokens(pl, g, tokTiles, readyOff)
	last := &pl.Launches[len(pl.Launches)-1]
	last.Args = append(last.Args, args(flagsOff, tokOff)...)
	withReady(last, readyOff, ceilDiv(s.N, k.TileN))
	table := fgTable(s, tiles, entries, 1, tilesOff, flagsOff)
	if wgmmaTokensOnce(k) {
		// Each tile entry's pad field names its token tile.
		plain := table
		table = func(addr func(Buffer, int) uint64) []byte {
			b := plain(addr)
			for i, it := range entries {
				t := tiles[it.base]
				binary.LittleEndian.PutUint32(b[tilesOff+16*i+12:], uint32(first[t.Group]+t.M0/k.TileM))
			}
			return b
		}
	}
	pl.TableBytes = table
	// ranges=cost: the blocks' stream-K ranges follow the flags and the
	// ready counts (G, then G + 1 chunk indices, int32), the GEMM's last
	// argument.
	var ranges []byte
	rangesOff := readyOff + readyBytes(tokTiles)
	if wgmmaCostRanges(k) {
		ranges = wgmmaRangesTable(s, k, tiles, g)
		last.Args = append(last.Args, Arg{Kind: ArgPtr, Buf: BufTable, Value: int64(rangesOff)})
	}
	withPrologue(last, rangesOff+len(ranges))
	if n := flagBytes(g) + readyBytes(tokTiles); n > 0 || ranges != nil || proBytes(tokTiles) > 0 {
		pro := make([]byte, proBytes(tokTiles))
		pl.TableBytes = func(addr func(Buffer, int) uint64) []byte {
			return append(append(append(table(addr), make([]byte, n)...), ranges...), pro...)
		}
	}
	return pl, nil
}

// wgmmaFitWidth is the wgmma width of a tile with live token rows under k:
// the kernel's wg_fit_width (rounded up to 32, or 64 with fit64, at most
// tile_m), tile_m without tail_width=fit.
func wgmmaFitWidth(k Knobs, live int) int {
	q := map[string]int{"fit": 32, "fit64": 64}[k.TailWidth]
	if q == 0 {
		return k.TileM
	}
	return min(ceilDiv(live, q)*q, k.TileM)
}

// wgmmaRangesTable is ranges=cost's table for a grid of g blocks over the
// group GEMM's tiles (table order): g, then costRanges' g + 1 chunk
// indices, little-endian int32.
func wgmmaRangesTable(s Shape, k Knobs, tiles []FusedTile, g int) []byte {
	kch := s.K / 128
	cost := make([]float64, len(tiles))
	for i, t := range tiles {
		cost[i] = wgmmaChunkCost(wgmmaFitWidth(k, min(k.TileM, s.M[t.Group]-t.M0)), k.TileM)
	}
	r := costRanges(cost, kch, g, wgmmaHybridStart(len(tiles), kch, g, k.Value("schedule") == "hybrid"))
	b := binary.LittleEndian.AppendUint32(nil, uint32(g))
	for _, x := range r {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}
