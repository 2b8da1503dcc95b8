// wg_group_gemm.cu - warp-specialized NVFP4 grouped GEMM for Hopper (sm_90a):
// a producer warpgroup decodes the token operand into shared memory once per
// block (or, with WG_TOK, a first launch wg_tokens decodes it once for all
// blocks and the producer bulk-copies each stage), consumer warpgroups
// decode the weights in registers and issue wgmma.
//
// Problem and launch interface: the same as fast_group_gemm.cu (FgGroup,
// FgTile, one persistent launch over a host-built tile table, any tile order
// and any grid >= 1 correct), with TILE_M token rows and TILE_N weight rows
// per tile. Shape rules: M_g >= 1, N_g % 64 == 0, K_g % 128 == 0, pointers
// 16-byte aligned. Split-K is not supported here (groups[g].splits must be
// <= 1).
//
// Why it looks like this. fast_group_gemm.cu is limited by instruction issue:
// each warp decodes both operands for its own mma.sync tile, about 9 issued
// instructions per HMMA (dev/fastkern/NOTES.md). Here each operand is decoded
// once per block:
// - Producer warpgroup (warps 0-3): copies raw token FP4 bytes and scales
//   (cp.async, each thread the rows it decodes itself, so it only waits for
//   its own copies), decodes them to fp16 with the scale folded in and writes
//   them to a ring of STAGES shared-memory buffers in the 128-byte-swizzled
//   K-major layout that wgmma reads as its B operand; then arrives on the
//   stage's "full" mbarrier (after fence.proxy.async: the tensor core reads
//   through the async proxy).
// - Consumer warpgroups (warps 4..): each owns WG_MB blocks of 64 weight rows,
//   cp.asyncs exactly the weight bytes and scales its own thread needs into a
//   private ring of WG_RS stages, decodes them into wgmma's register A
//   fragment, waits for the stage's tokens and issues wgmma.mma_async
//   m64nTILE_Mk16 (fp16 x fp16 -> fp32), then arrives on the stage's "empty"
//   mbarrier once its wgmmas have finished reading it.
// The weights (N) fill wgmma's 64-row M side and the tokens its N side
// (A/B swapped), so a weight register decoded once feeds TILE_M token
// columns: at TILE_M = 128 that is 4 decoded registers per 64x128x16 wgmma,
// against 1.5 per 16x8x16 mma.sync in fast_group_gemm.cu.
//
// K order. A dot product does not depend on the order of K, so both operands
// only have to agree on one permutation. Inside a 128-wide K chunk, consumer
// thread t (lane % 4) owns the 32 physical K values [32t, 32t+32) of each of
// its rows (one 16-byte shared load per row); in k16 step s its fragment
// holds logical positions 16s + {2t, 2t+1, 2t+8, 2t+9} = physical
// 32t + 8(s/2) + 2(s%2) + {0, 4, 1, 5}. The producer writes token value
// physical p at the logical position that maps to it: the 16-byte chunk c
// (logical K 8c..8c+7) of a token row is, for j = 0..3, the nibble pair
// (c%4, c%4+4) of the row's 32-bit word 4j + c/4 times scale 2j + c/8.
// (With WG_DEC 1 the four pairs of a word are nibbles (0,2), (1,3), (4,6),
// (5,7) instead of (0,4) .. (3,7): another order inside each word, taken by
// both operands through the same wg_dec.)
//
// Exactness: each fp16 operand is exact. A token is value * scale * 2^-7
// (e2m1 bits placed at fp16 bits 9..11, the scale decoded to scale * 2^7,
// as in fast_group_gemm.cu); a consumer's weight is value * scale * 2^-14
// (the same bits times the scale converted by cvt, wg_wscale). Products are
// exact in fp32, and the epilogue multiplies by 2^21 (WG_ACC_SCALE).
//
// Launch: grid (min(num_tiles, SMs), 1, 1) (one block per SM: the rings use
// most of the shared memory), block (FG_THREADS, 1, 1), FG_SMEM_BYTES dynamic
// shared memory (the caller raises the dynamic limit first).
// Built for anything but sm_90a the entry point traps: wgmma exists on
// sm_90a only (not on sm_100, which has tcgen05), and kernels.Plan refuses
// other devices before any launch.
//
// No toolkit headers: NVRTC alone compiles this.
//
// Dual GEMM (DUAL = 1, entry wg_dual_gemm): C = silu(A B1^T) * (A B2^T) with
// the same producer and ring. A tile is WG_TM tokens by 64*WG_MB output
// columns; consumer warpgroup 0 holds those rows of B1, consumer 1 the same
// rows of B2, so the tokens of a chunk are decoded once for both products
// and each consumer keeps the group kernel's register budget (the two
// products in one warpgroup need twice the accumulators: the g3 shape that
// spilled). In the epilogue consumer 1 hands its fp32 sums to consumer 0
// through its (otherwise unused) staging buffer, a quarter of a 64-row
// block per round (named barriers 3 = full, 4 = empty), and consumer 0
// gates, rounds once to fp16 and stores. Consumer 1 meanwhile starts its
// next tile; the ring keeps the two within STAGES chunks of each other.
// With four consumers (WG_CONS 4, WG_FOLD: no producer warpgroup, 512
// threads at 128 registers) a tile is 128 output columns: consumers 0 and
// 1 hold its two 64-row blocks of B1, consumers 2 and 3 the same blocks of
// B2, and consumer c + 2 hands its sums to consumer c.

#ifndef WG_TM
#define WG_TM 128 // token rows per tile = wgmma N: 32, 64, 128, or 256 (whole tiles, tokens decoded ahead)
#endif
#ifndef WG_CONS
#define WG_CONS 2 // consumer warpgroups
#endif
#ifndef WG_MB
#define WG_MB 1 // 64-row weight blocks per consumer warpgroup
#endif
#ifndef STAGES
#define STAGES 3 // decoded token ring (full/empty mbarrier pairs), >= 2
#endif
#ifndef WG_RS
#define WG_RS 4 // raw cp.async ring per thread, >= 2
#endif
#ifndef WG_EXP
// Timing experiments only (wrong results), bits: 1 = the producer skips the
// token decode, 2 = the consumers skip the weight decode (raw words as
// fragments), 4 = the consumers issue no wgmma (everything else runs), 8 =
// nobody copies or decodes anything (the ring's barriers and the wgmmas
// alone, on whatever the buffers hold), 16 = only consumer 0 issues
// wgmmas (the halves pipeline; its tensor pipe then serves one consumer),
// 32 = the consumers copy no weights (they decode whatever their ring
// holds), 64 = the consumers issue their weight copies but never wait for
// them, 128 = the consumers decode words made from the ring slot's number
// instead of loading them (kernel-notes step 25's ablation), 256 = with
// tokens=once the producer streams no decoded tokens: it arrives on each
// stage's full barrier without a copy, so no token stage crosses L2 and
// the wgmmas read whatever the stage holds (kernel-notes step 46).
#define WG_EXP 0
#endif
#ifndef WG_SSA
// Weights from shared memory (kernel-notes step 25): 1 = the producer
// warpgroup decodes each chunk's 128 weight rows (the dual GEMM: both
// products' 64 each) into
// an fp16 stage beside the token stage, with the token pass's row decode,
// and the consumers issue SS wgmmas with nothing of their own between them;
// 0 = each consumer decodes its weights into register fragments (RS).
#define WG_SSA 0
#endif
#ifndef WG_CSA
// Weights staged in shared memory by the consumers themselves (kernel-notes
// step 27): 1 = each consumer decodes its own weight rows, from its cp.async
// ring as with register weights, into an fp16 A buffer (two, used in turn)
// and issues SS wgmmas, so its decode of the next chunk runs beside its
// in-flight chain (a probe ran a warp's own integer work at about half
// rate beside its SS chain, and not at all beside its register-A chain).
// Measured 0.81x the register tile: the decode starts with loads of the
// raw words, and a warpgroup's own loads wait for its wgmmas (call 7).
#define WG_CSA 0
#endif
#ifndef WG_PP
// Experiment (kernel-notes step 25): 1 = the dual GEMM's two consumers take
// turns issuing their wgmma halves (named barriers WG_PP_ID, WG_PP_ID + 1).
#define WG_PP 0
#endif
#ifndef WG_EPI
// The dual GEMM's epilogue (kernel-notes step 29): 0 = the B2 consumer
// hands its sums to the B1 consumer, which gates, stages and stores the
// whole tile while the B2 consumer starts its next one (consumer 0 spent
// ~10,000 cycles per tile there against consumer 1's ~4,800, kernel-notes
// step 28); 1 = the two trade halves, each gates, stages and stores half
// the tile's tokens (the B1 consumer the first half), and the SiLU takes
// a fast reciprocal.
#define WG_EPI 0
#endif
#ifndef WG_STM
// The epilogue's fp16 staging (kernel-notes step 31): 0 = one cvt and one
// 16-bit shared store per value; 1 = two values per cvt (f16x2) and
// stmatrix (.trans: the accumulator fragment's weight rows become the
// staged token rows), 8 stores of four 8x8 matrices per 64-row block
// where there were 64 of one value each.
#define WG_STM 0
#endif
#ifndef WG_RCP
// Experiment: 1 = the SiLU's fast reciprocal without WG_EPI, to tell its
// share of WG_EPI's gain from the split's.
#define WG_RCP 0
#endif
#ifndef WG_TL
// Timeline diagnostic only (kernel-notes step 33): 1 = every block of the
// GEMM and of wg_tokens records global-timer marks outside the mainloop
// (block start, tokens visible to the producer, consumer 0's first tokens,
// its last mainloop's end, its last store, block end; the end of its first
// piece, its last piece's entry and first tokens), and the GEMM block
// that ends last at the module's launches 2, 30 and 60 prints each mark's
// minimum, median and maximum over the blocks, from the token pass's first
// block start (WGTL lines, dev/gpucall/dual.sh tl reads them); 2 = also
// every block's marks and its SM (WGTLB lines) at launch 30.
#define WG_TL 0
#endif
#ifndef WG_STAMP
// Timing diagnostics only (kernel-notes steps 23-25; whole tiles, since the
// prints follow a block barrier): 1 = block 0 records, per token chunk, the
// SM clock when its bulk copy is issued, when consumers 0 and 1 start and
// end their wait on its full barrier, and at seven points of consumers 0
// and 1's chunk (wg_consume's marks), and prints them with its SM clock rate
// (device printf, dev/gpucall/stamps.py reads them) at the module's
// launches 0, 2, 30 and 60; the block that ends last prints every block's
// span on the global timer.
#define WG_STAMP 0
#endif
#ifndef WG_DEC
// FP4 decode (both operands, the same permutation; see "K order"):
// 0 = each fp16x2 from nibbles (P, P+4) of a word by shifts and masks (four
// integer instructions per fp16x2); 1 = the word's sign and magnitude bits
// moved once into fp16 high bytes (seven instructions per word), then each
// fp16x2 from nibbles (0,2), (1,3), (4,6) or (5,7) by one byte permute
// (eleven per word against fifteen).
#define WG_DEC 0
#endif
#ifndef WG_XDEC
// Experiment (kernel-notes step 92; no knob sets it): the consumers' weight
// fragments by wg_xdec, the decode of a pre-packed weight word (four shifts
// and four LOP3 per word against WG_DEC 1's eleven). Nothing packs the
// weights yet, so the sums are wrong: a build with it only times the decode
// (WG_STAMP marks).
#define WG_XDEC 0
#endif
#ifndef WG_FIT
// 0: every tile runs wgmma at width WG_TM (rows past M are zeros);
// 1: a tail tile runs at its live token rows rounded up to 32 (four wgmma
// widths compiled: ptxas then serializes the wgmmas for lack of registers,
// C7512, and on an H200 it measured slower; kept as a variant).
#define WG_FIT 0
#endif
// 2: the same at live rows rounded up to 64 (two widths, n64 and n128): a
// tail saves less, and ptxas has two wgmma widths' code to hold instead of
// four (WG_FIT 1 serialized them at 160 registers too, C7512).
#define WG_FITQ (WG_FIT == 2 ? 64 : 32)
// A tail tile's wgmma width: its live token rows rounded up to WG_FITQ, at most WG_TM.
#define wg_fit_width(live) (((live) + WG_FITQ - 1) / WG_FITQ * WG_FITQ < WG_TM ? ((live) + WG_FITQ - 1) / WG_FITQ * WG_FITQ : WG_TM)
// The wgmma width of a tile whose token rows start at m0 in a group of m:
// its live rows (at most WG_TM) at the fit width, or WG_TM without WG_FIT.
// The consumers' width dispatch and the producers' copies both size by it.
static __device__ __forceinline__ int wg_tile_width(int m, int m0) {
  const int live = m - m0 < WG_TM ? m - m0 : WG_TM;
  return WG_FIT ? wg_fit_width(live) : WG_TM;
}
#ifndef WG_LAYOUT
// Decoded token layout: 0 = K-major, 128-byte swizzle (two 64-K blocks);
// 1, 2 = K-major without swizzle (8x16-byte core matrices, 16 per 8-row
// group along K), descriptor offsets (LBO, SBO) = (128, 2048) or (2048, 128).
#define WG_LAYOUT 0
#endif

#ifndef DUAL
#define DUAL 0 // 1: the dual GEMM entry wg_dual_gemm instead of wg_group_gemm
#endif
#ifndef WG_SK
// 1: stream-K. The T tiles x kch chunks of the launch are cut into gridDim.x
// equal contiguous ranges, one per block, so no block idles through a last
// partial wave. A tile cut between blocks b..e is finished by b (its
// "owner", which holds chunk 0 and reaches it at the end of its range):
// blocks b+1..e start their ranges with the rest of the tile, write their
// fp32 sums to workspace slot b+1..e and set their flag; b adds them before
// its epilogue. A block writes at most one partial (only its first piece
// can start mid-tile). The flags (one u32 per block and consumer) start at
// zero and every launch leaves them at zero: each is set once and cleared
// by its one reader. Owners wait only at the end of their range for pieces
// that ran at the start of other blocks' ranges, and every block of the
// grid (at most one per SM) is resident, so the wait ends. With WG_FIT a
// tile's pieces all run at the tile's one width, and the slots keep the
// full width's stride.
#define WG_SK 0
#endif
// 2: hybrid. Whole tiles for the waves that fill the grid, stream-K (as
// 1) only over the tiles of the last, partial wave: fewer tiles cut, and
// so fewer partial sums and pipeline refills, than stream-K over all.
#ifndef WG_PRO
// 1 (needs WG_TOK, not WG_PDL/WG_RDY/WG_FOLD/WG_SSA/WG_CSA): no wg_tokens
// launch; the GEMM's own blocks decode the token stages at their start
// (overlap=prologue, kernel-notes step 39). Before the roles split, every
// warpgroup of every block decodes stages in chunk-major order (round j of
// the grid covers the next G x warpgroups stages: every token tile's first
// chunks come first) into a scratch stage in its shared memory, bulk-stores
// it to the workspace and releases the stage's flag with this launch's
// epoch. The producer then copies a stage once its flag holds the epoch,
// acquiring flags only until every block has counted its prologue done.
// No kernel boundary and no hand-over of SMs between the decode and the
// GEMM, and the weights' first copies run beside it. The epoch, the count
// of prologues done and of blocks left are module globals; the block that
// leaves last advances the epoch, so the flags (in the launch table) are
// never reset.
#define WG_PRO 0
#endif
#if WG_PRO && (!WG_TOK || WG_PDL || WG_RDY || WG_FOLD || WG_SSA || WG_CSA)
#error "wg_group_gemm: WG_PRO decodes the tokens inside the GEMM: it needs WG_TOK's workspace and its one-thread producer, without WG_PDL, WG_RDY, WG_FOLD, WG_SSA or WG_CSA"
#endif
#ifndef WG_TWE
// 1 (the halves pipeline, not WG_DB, WG_FOLD, WG_SSA or WG_CSA): each
// consumer tests the next chunk's token stage (mbarrier.test_wait) right
// after it has issued the next weights' copies, before it waits for them
// and decodes its next X half, and skips the blocking try_wait loop where
// that test found the stage full. Each consumer waited ~150-190 cycles a
// chunk at a stage whose copy had landed long before: one try_wait's
// latency, which the test's overlaps with the wait and the decode
// (kernel-notes steps 62 and 67: the group best 1.009x and 1.007x on
// bench1-2; with WG_TOKW 0.990x on bench3, so in neither best).
#define WG_TWE 0
#endif
#if WG_TWE && (WG_DB || WG_FOLD || WG_SSA || WG_CSA)
#error "wg_group_gemm: WG_TWE tests the next token stage in the halves pipeline: not with WG_DB, WG_FOLD, WG_SSA or WG_CSA"
#endif
#ifndef WG_TOKW
// 1 (needs WG_TOK and WG_FIT, the producer thread streaming the stages):
// the GEMM copies only the token rows a tile's wgmma reads, its fit width
// (two bulk copies of width x 128 bytes, one per 64-K block), instead of
// the whole stage. The rows past that width keep an earlier tile's tokens,
// which no wgmma of this tile reads. The group best's n64 tiles then read
// half a stage (kernel-notes step 66: 1.012x on group bench1).
#define WG_TOKW 0
#endif
#if WG_TOKW && (!WG_TOK || !WG_FIT || WG_SSA || WG_CSA || WG_FOLD)
#error "wg_group_gemm: WG_TOKW copies a tail tile's fit width: it needs WG_TOK, WG_FIT and the producer thread's copies (not WG_SSA, WG_CSA or WG_FOLD)"
#endif
#ifndef WG_TOKLIVE
// 1 (needs WG_TOK): wg_tokens writes only the stage rows that exist (a
// token tile's first M_g - m0 rows, if under WG_TM: one bulk store of
// those rows per 64-K block) instead of the whole stage with zeros past M_g.
// The rows past M_g keep whatever the workspace held; a wgmma reads them
// only into accumulator columns of token rows past M_g, which no epilogue
// stores (every sum over K stays within its own token column). Group bench1
// and bench2 decode 1,408 and 1,664 token rows for 1,024 that exist.
#define WG_TOKLIVE 0
#endif
#if WG_TOKLIVE && !WG_TOK
#error "wg_group_gemm: WG_TOKLIVE trims the decode-ahead launch's stores: it needs WG_TOK"
#endif
#ifndef WG_RANGES
// 1 (needs WG_SK, the group GEMM): the blocks' stream-K ranges come from the
// launch table (the GEMM's last parameter) instead of equal chunk counts:
// the host balances each block's estimated cost, whole tiles included, so
// a block whose range falls on narrow tail tiles (WG_FIT) takes more of
// them (kernels.WgmmaCostRanges). Table: G, then G + 1 ascending chunk
// indices, block b's range [r[b], r[b + 1]), each at least one chunk; a
// table that does not match the launch (its grid, its chunk count) is
// ignored for equal ranges, so a wrong table costs balance, never sums.
#define WG_RANGES 0
#endif
#ifndef WG_DB
// Consumer pipeline. 0: each chunk's eight k16 steps in two commit groups of
// four (fragment sets X and Y, 32 registers), one half decoded while the
// other runs. 1: two whole-chunk fragment sets (64 registers): chunk i+1 is
// decoded while all of chunk i's wgmmas run, which a 168-register budget
// cannot hold (it spilled), so it needs WG_CREGS.
#define WG_DB 0
#endif
#ifndef WG_TOK
// Token operand. 0: the producer warpgroup copies each chunk's raw token
// rows and decodes them into the ring (above). 1: decoded once ahead: a
// first launch (wg_tokens) writes every (token tile, K chunk) stage to
// global memory byte for byte as the producer would write it to shared
// memory, and one producer thread fills each ring stage with one bulk
// async copy (cp.async.bulk) that completes on the stage's "full"
// mbarrier. Why: the token decode was 38% of a block's issued instructions
// (docs/kernel-notes.md step 8), repeated by every block that shares the
// token tile; ahead it runs once per token tile, and the producer issues
// almost nothing beside the consumers. A stage always holds WG_TM rows
// (rows past M are decoded as zeros); with WG_FIT the consumers read the
// first ones.
#define WG_TOK 0
#endif
#ifndef WG_PDL
// 1 (needs WG_TOK): the GEMM is launched overlapped with wg_tokens
// (programmatic dependent launch, the overlap=pdl knob): wg_tokens signals
// griddepcontrol.launch_dependents, the producer thread executes
// griddepcontrol.wait before its first copy. Compiled only where used, so
// a module launched plainly is the one measured before the knob existed.
#define WG_PDL 0
#endif
#ifndef WG_PF
// 1: each consumer issues the first WG_LA weight copies of its block's
// next piece as soon as this piece's last chunk is decoded, so they land
// under this piece's last wgmmas and its epilogue; 0: every piece starts
// with an empty ring and waits out a global load before its first wgmma
// (group bench2: four 16-chunk tiles per block). Each thread reads only the
// ring bytes it copied itself, so its own cp.async groups order the reuse.
#define WG_PF 0
#endif
#ifndef WG_PW
// 1 (needs WG_TOK and a producer warpgroup): the producer warpgroup's warps
// 1-3 fill the weight ring (raw rows and scales, the layout the consumers'
// own copies use) for every chunk of the block's pieces, up to WG_RS chunks
// ahead of the consumers and across pieces, each thread's cp.asyncs
// completing on the slot's "full" mbarrier; the consumers wait on it,
// decode, and give the slot back on its "empty" one. 0: each consumer
// copies its own rows (cp.async, its own commit groups). Why: with the
// copies taken out of the consumers, a chunk of the dual narrow tile took
// 0.86x the cycles (eleventh session's marks, docs/kernel-notes.md step 28).
// Measured against the best variants on an H100: dual 1.007x (narrow whole
// tiles 1.04-1.09x), group ~0.99x (three consumers at 152 registers, the
// producer at 56; two consumers gain 1.17x but stay under three).
#define WG_PW 0
#endif
#if WG_PDL && !WG_TOK
#error "wg_group_gemm: WG_PDL overlaps the GEMM with wg_tokens: it needs WG_TOK"
#endif
#ifndef WG_RDY
// 1 (needs WG_PDL): the producer waits per token tile instead of for the
// whole token pass. The launch table holds two u32 per token tile, ready:
// done, which each of the tile's wg_tokens blocks raises by one (release)
// once its stage's bulk store has completed, and seen, the chunks read so
// far. Before a piece's first copy the producer acquires done == kch, then
// adds its chunk count to seen; the piece that brings seen to readers
// (every chunk read by every tile of the token tile: all other pieces have
// passed their wait) sets both back to zero, so every launch leaves them
// zero, as the stream-K flags. Why: on the short shapes the pass is a
// quarter of the kernel time and almost all latency (cold loads, the
// store's completion, the grid's end), and griddepcontrol.wait waits for
// all of it. (A count per stage, acquired before every copy, put an L2
// round trip in front of each stage: bench4 lost 4%, kernel-notes step 21.)
#define WG_RDY 0
#endif
#if WG_RDY && !WG_PDL
#error "wg_group_gemm: WG_RDY replaces the overlapped GEMM's wait: it needs WG_PDL"
#endif
#ifndef WG_CREGS
// > 0: registers per thread split by role with setmaxnreg (sm_90a): the
// consumers raise theirs to WG_CREGS, the producer lowers its own to what is
// left of what the block got at launch (WG_LREGS, 168 for 384 threads),
// WG_PREGS. ptxas then allocates each role's code against its own budget,
// which a consumer holding two 64-row blocks of 128-wide accumulators (128
// registers) needs.
// ptxas needs the register count at entry (__launch_bounds__ with a minimum
// of one block per SM) and warp-uniform role branches.
#define WG_CREGS 0
#endif
#ifndef WG_FOLD
// 1 (needs WG_TOK, whole tiles: WG_SK 0, no WG_RDY, no WG_CREGS): no
// producer warpgroup. With the tokens decoded ahead the producer's work is
// one bulk copy per chunk: consumer 0's first thread fills the ring for
// the block's first chunks, and the warp that releases a stage last
// refills it (wg_consume). The block is WG_CONS warpgroups: 512 threads at
// 128 registers each for four consumers. A producer warp after them does
// not give them 120: the register file is split between the SM's four
// schedulers, so 17 warps put five on one and ptxas capped the block at 96
// registers and spilled. Measured 0.92-0.97x the same tile with a
// producer warpgroup (kernel-notes steps 22-23).
#define WG_FOLD 0
#endif
// Consumers per product: the dual GEMM's first half multiplies by B1, the
// second by B2, each half splitting the tile's output columns in 64*WG_MB
// row blocks; the group GEMM's consumers all split one B.
#define WG_HALF (DUAL ? WG_CONS / 2 : WG_CONS)
// Named barriers of the dual hand-off between consumer cl (B1) and cl +
// WG_HALF (B2); 1..WG_CONS are the consumers' own.
#define WG_XFULL(cl) (1 + WG_CONS + 2 * (cl))
#define WG_XEMPTY(cl) (2 + WG_CONS + 2 * (cl))
#define WG_PP_ID 13 // WG_PP's two named barriers (13, 14), above the hand-off's
#define WG_SKT_ID 15 // all consumers, before an owner's bulk loads overwrite the token stages
#if WG_PP && (!DUAL || WG_CONS != 2 || WG_DB || WG_EXP || WG_SK || WG_FOLD)
#error "wg_group_gemm: WG_PP is for the dual GEMM's two consumers in the halves pipeline, whole tiles, with a producer warpgroup"
#endif
#define WG_LREGS ((65536 / FG_THREADS) > 255 ? 248 : (65536 / FG_THREADS) & ~7) // per thread at launch
#define WG_PREGS ((WG_LREGS * (1 + WG_CONS) - WG_CONS * WG_CREGS) & ~7)
#define WG_DN (64 * WG_MB * WG_HALF) // dual: output columns per tile

#if WG_TM != 32 && WG_TM != 64 && WG_TM != 128 && WG_TM != 256
#error "wg_group_gemm: WG_TM must be 32, 64, 128 or 256"
#endif
#if WG_TM == 256 && (!WG_TOK || WG_FIT)
// 256 token rows: a 64 KB stage per chunk, which only fits beside the rest
// without the raw token ring; and only whole-width tiles are compiled.
#error "wg_group_gemm: WG_TM 256 needs the tokens decoded ahead (WG_TOK) and whole tiles (WG_FIT 0)"
#endif
#if WG_DB && !WG_CREGS
#error "wg_group_gemm: the whole-chunk pipeline (WG_DB) needs the register split (WG_CREGS)"
#endif
#if DUAL && WG_CONS != 2 && !(WG_CONS == 4 && WG_MB == 1)
#error "wg_group_gemm: the dual GEMM has two consumers (B1 and B2), or four with one 64-row block each"
#endif
#if STAGES < 2 || WG_RS < 2 || WG_CONS < 1 || WG_CONS > (DUAL ? 4 : 3) || WG_MB < 1 || WG_MB > 2
#error "wg_group_gemm: STAGES >= 2, WG_RS >= 2, 1 <= WG_CONS <= 3 (dual: 2 or 4), 1 <= WG_MB <= 2"
#endif
#if WG_FOLD && (!WG_TOK || WG_SK || WG_RDY || WG_CREGS)
#error "wg_group_gemm: the producer folded into consumer 0 (WG_FOLD) needs the tokens decoded ahead, whole tiles, the plain overlap and no setmaxnreg"
#endif
#if WG_RANGES && (!WG_SK || DUAL || WG_PW)
#error "wg_group_gemm: WG_RANGES balances the group GEMM's stream-K ranges: it needs WG_SK, and the producer's weight ring (WG_PW) walks equal ranges"
#endif
#if WG_PW && (!WG_TOK || WG_FOLD || WG_PF)
#error "wg_group_gemm: the producer's weight ring (WG_PW) needs the tokens decoded ahead (its warps are free then), a producer warpgroup and no WG_PF"
#endif

#define TILE_M WG_TM
#define TILE_N (64 * WG_MB * WG_CONS)
#define WARPS_N (4 * WG_CONS) // for harness printouts: consumer warps
#define WARPS_M 1
#if WG_SSA && (WG_MB != 1 || WG_CONS != 2 || !WG_TOK || WG_SK || WG_FOLD || WG_DB || WG_RDY || WG_PF || WG_PW || WG_FIT || \
                WG_TM != 128 || WG_CREGS || WG_EXP || WG_PP)
#error "wg_group_gemm: WG_SSA is the narrow tile (two consumers, one 64-row block each, 128 tokens) with the tokens decoded ahead, whole tiles, the halves' defaults"
#endif
#if WG_CSA && (WG_SSA || WG_MB != 1 || WG_CONS != 2 || !WG_TOK || WG_SK || WG_FOLD || WG_DB || WG_RDY || WG_PF || WG_PW || \
               WG_FIT || WG_TM != 128 || WG_CREGS || WG_EXP || WG_PP || STAGES != 2)
#error "wg_group_gemm: WG_CSA is the narrow tile (two consumers, one 64-row block each, 128 tokens) with the tokens decoded ahead, whole tiles, two stages, the halves' defaults"
#endif
#define FG_THREADS (128 * (WG_CONS + (WG_FOLD ? 0 : 1)))
// Chunks a consumer's weight copies run ahead of its decode: WG_RS - 1, or
// two with a ring of two slots. A chunk's slot is free once frags_x has
// loaded its raw words into registers (each thread reads only the bytes it
// copied; the held words are decoded before the next copy is issued), a
// chunk before the slot's turn comes round, so two slots can hold two
// chunks ahead. The dual's 256-token tile (two slots: its 64 KB stages
// leave no room for more) waited out a global load every chunk with one
// (~1,000 of ~3,700 cycles); two made dual bench2 and bench4 1.146x and
// 1.155x, while four slots running four ahead measured 0.98-1.00x (H100,
// dev/gpucall/dual.sh wla, kernel-notes step 47).
#define WG_LA (WG_RS == 2 ? 2 : WG_RS - 1)
#if WG_CREGS && (WG_CREGS % 8 || WG_CREGS > 256 || WG_PREGS < 24)
#error "wg_group_gemm: WG_CREGS must be a multiple of 8 that leaves the producer at least 24 registers"
#endif
#define WG_NACC (WG_TM / 2) // fp32 accumulators per thread per 64-row block

// Shared memory, from a 1024-byte aligned base (the 128-byte swizzle repeats
// every 8 rows of 128 bytes and is computed from address bits):
#define WG_TOK_STAGE (WG_TM * 256)                 // two 64-K blocks of WG_TM rows x 128 B
#define WG_OFF_WRAW (STAGES * WG_TOK_STAGE)        // weights: TILE_N rows x 64 B per stage
#define WG_WRAW_STAGE (WG_SSA ? 0 : TILE_N * 64) // WG_SSA: no consumer ring
#define WG_OFF_WSC (WG_OFF_WRAW + WG_RS * WG_WRAW_STAGE) // 4 B per (row, lane % 4) per stage
#define WG_WSC_STAGE (WG_SSA ? 0 : TILE_N * 16)
#define WG_TROWB 80                                // token raw rows padded: conflict-free 16 B reads
#define WG_OFF_TRAW (WG_OFF_WSC + WG_RS * WG_WSC_STAGE)
// No raw token ring when decoded ahead; WG_SSA: the producer's raw weight rows.
#define WG_TRAW_STAGE (WG_SSA ? TILE_N * WG_TROWB : WG_TOK ? 0 : WG_TM * WG_TROWB)
#define WG_OFF_TSC (WG_OFF_TRAW + WG_RS * WG_TRAW_STAGE)
#define WG_TSC_STAGE (WG_SSA ? TILE_N * 8 : WG_TOK ? 0 : WG_TM * 8)
#define WG_OFF_ASTG (WG_OFF_TSC + WG_RS * WG_TSC_STAGE) // WG_SSA: decoded weights, one per token stage; WG_CSA: two A buffers
#define WG_ASTG_STAGE (WG_SSA || WG_CSA ? TILE_N * 256 : 0) // two 64-K blocks of TILE_N rows x 128 B
#define WG_EP_STRIDE (128 * WG_MB + 16)            // epilogue staging row: 64*WG_MB fp16 + pad
#define WG_EP_BYTES (WG_TM * WG_EP_STRIDE)         // per consumer warpgroup
#define WG_OFF_EP (WG_OFF_ASTG + STAGES * WG_ASTG_STAGE)
#define WG_OFF_BAR (WG_OFF_EP + WG_CONS * WG_EP_BYTES)
// Token-stage bytes per consumer, whole KB: a bulk copy's address is
// 16-byte aligned (a third of two 16 KB stages, the group's 64-token
// three-consumer tile, was not: misaligned address, kernel-notes step 80).
#define WG_SKA (STAGES * WG_TOK_STAGE / WG_CONS / 1024 * 1024)
// Whether an early take (steps 81, 83) fits f partial sums per thread: half
// of them in the staging buffer below its last 16 bytes, one partner's
// whole sums in the consumer's token-stage bytes.
#define WG_SKE_FITS(f) ((f) * 256 + 16 <= WG_EP_BYTES && WG_SKA >= (f) * 512)
#define WG_OFF_WBAR (WG_OFF_BAR + 2 * STAGES * 8) // WG_PW: the weight ring's full, then empty mbarriers
#define WG_PW_THREADS 96                         // WG_PW: the producer's warps 1-3 copy the weights
#define FG_SMEM_BYTES (WG_OFF_WBAR + (WG_PW ? 2 * WG_RS * 8 : 0) + 1024) // + slack for the 1024-byte alignment

typedef unsigned int fg_u32;
typedef unsigned short fg_u16;
// Consumer c's staging buffer from a shared base (the shared-window
// address or the generic pointer), and what stream-K keeps in its last 16
// bytes, which no staging round reaches: the owner's hand-over mbarrier (8
// bytes). Written as the sum the kernel spelled out before, so its code is
// unchanged.
template <class B>
static __device__ __forceinline__ B wg_ep(B base, int c) {
  return base + WG_OFF_EP + c * WG_EP_BYTES;
}
template <class B>
static __device__ __forceinline__ B wg_ep_bar(B base, int c) {
  return base + WG_OFF_EP + c * WG_EP_BYTES + WG_EP_BYTES - 16;
}
typedef unsigned char fg_u8;
typedef unsigned long long fg_u64;

// WG_STAMP: kinds 0-4 the token ring (the copy's issue, consumers 0 and 1's
// wait around it), 5-11 consumer 0's chunk (wg_consume's marks), 12-18
// consumer 1's (the same marks: whether the two issue at once), 19-23
// consumer 0 at a piece boundary, indexed by the next piece's first chunk:
// the last wgmmas drained, the tile staged, its stores issued, the next
// piece entered (its tile fetched), its first weight chunk landed; 24-25
// consumer 2's wait for the tokens (in, out) and 26-32 its chunk marks
// (the group's third consumer, printed on a second line).
#define WG_STAMP_KINDS 33
#if WG_STAMP
__device__ unsigned long long wg_stamps[WG_STAMP_KINDS][512];
__device__ unsigned wg_stamp_launch;
// Every block's start and end on the global timer, and how many have ended.
__device__ unsigned long long wg_spans[2][1024];
__device__ unsigned wg_span_done;
static __device__ __forceinline__ void wg_stamp(int kind, fg_u32 j) {
  if (blockIdx.x == 0 && j < 512u) wg_stamps[kind][j] = clock64();
}
#else
static __device__ __forceinline__ void wg_stamp(int, fg_u32) {}
#endif

// WG_TL: marks 0-5 of the GEMM's blocks and the token pass's start and end
// (global timer, ns), the launches counted by the GEMM's block 0 as it starts.
#define WG_TL_MARKS 9
#define WG_TL_BLOCKS 1024
#if WG_TL
__device__ unsigned long long wg_tl[WG_TL_MARKS][WG_TL_BLOCKS];
__device__ unsigned long long wg_tl_tok[2][WG_TL_BLOCKS];
__device__ unsigned wg_tl_launch, wg_tl_done, wg_tl_tokn;
__device__ unsigned wg_tl_sm[WG_TL_BLOCKS]; // the SM each block ran on
static __device__ __forceinline__ unsigned long long wg_gtime() {
  unsigned long long g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  return g;
}
static __device__ __forceinline__ void wg_tl_mark(int k) {
  if (blockIdx.x < WG_TL_BLOCKS) wg_tl[k][blockIdx.x] = wg_gtime();
}
// Sorts v[0..n) in place (one thread, a diagnostic launch only).
static __device__ void wg_tl_sort(unsigned long long* v, unsigned n) {
  for (unsigned i = 1; i < n; ++i) {
    const unsigned long long x = v[i];
    unsigned j = i;
    for (; j > 0 && v[j - 1] > x; --j) v[j] = v[j - 1];
    v[j] = x;
  }
}
// Prints "WGTL launch blocks tokblocks" then per mark "name min p50 max"
// in ns from t0, the earliest start (sorting the marks in place: they are
// rewritten by the next launch).
static __device__ void wg_tl_print(unsigned n, unsigned nb) {
  const unsigned nt = wg_tl_tokn < WG_TL_BLOCKS ? wg_tl_tokn : WG_TL_BLOCKS;
  unsigned long long t0 = wg_tl[0][0];
  for (unsigned b = 0; b < nb; ++b) t0 = wg_tl[0][b] < t0 ? wg_tl[0][b] : t0;
  for (unsigned b = 0; b < nt; ++b) t0 = wg_tl_tok[0][b] < t0 ? wg_tl_tok[0][b] : t0;
  if (WG_TL == 2 && n == 30u)
    for (unsigned b = 0; b < nb; ++b)
      printf("WGTLB %u %u %u %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", n, b, wg_tl_sm[b], wg_tl[0][b] - t0,
             wg_tl[1][b] - t0, wg_tl[2][b] - t0, wg_tl[3][b] - t0, wg_tl[4][b] - t0, wg_tl[5][b] - t0, wg_tl[6][b] - t0,
             wg_tl[7][b] - t0, wg_tl[8][b] - t0);
  for (int k = 0; k < WG_TL_MARKS; ++k) wg_tl_sort(wg_tl[k], nb);
  for (int k = 0; k < 2; ++k) wg_tl_sort(wg_tl_tok[k], nt);
  printf("WGTL %u %u %u tok_start %llu %llu %llu tok_end %llu %llu %llu\n", n, nb, nt,
         nt ? wg_tl_tok[0][0] - t0 : 0ull, nt ? wg_tl_tok[0][nt / 2] - t0 : 0ull, nt ? wg_tl_tok[0][nt - 1] - t0 : 0ull,
         nt ? wg_tl_tok[1][0] - t0 : 0ull, nt ? wg_tl_tok[1][nt / 2] - t0 : 0ull, nt ? wg_tl_tok[1][nt - 1] - t0 : 0ull);
  const char* names[WG_TL_MARKS] = {"start", "tokens", "first", "mainloop", "stored", "end", "piece1", "lastin", "lastfirst"};
  for (int k = 0; k < WG_TL_MARKS; ++k)
    printf("WGTL %u %s %llu %llu %llu\n", n, names[k], wg_tl[k][0] - t0, wg_tl[k][nb / 2] - t0, wg_tl[k][nb - 1] - t0);
  wg_tl_tokn = 0u;
}
#else
static __device__ __forceinline__ void wg_tl_mark(int) {}
#endif

struct FgGroup {
  const fg_u8* a;  // M x K/2 bytes (tokens)
  const fg_u8* sa; // M x K/16 e4m3
  const fg_u8* b;  // N x K/2 bytes (weights)
  const fg_u8* sb; // N x K/16 e4m3
  fg_u16* c;       // M x N fp16
  int m, n, k;
  int splits; // must be <= 1 here
  float* ws;  // unused here
};

struct FgTile {
  int group, m0, n0, pad;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

static __device__ __forceinline__ fg_u32 wg_smem_addr(const void* p) {
  fg_u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}
// src_bytes 0 fills zeros: rows past M or N cost no reads.
static __device__ __forceinline__ void wg_cp16(fg_u32 dst, const void* src, fg_u32 n) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
static __device__ __forceinline__ void wg_cp8(fg_u32 dst, const void* src, fg_u32 n) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
static __device__ __forceinline__ void wg_cp4(fg_u32 dst, const void* src, fg_u32 n) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
static __device__ __forceinline__ void wg_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void wg_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
static __device__ __forceinline__ void wg_lds128(fg_u32 addr, fg_u32& x, fg_u32& y, fg_u32& z, fg_u32& w) {
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(addr));
}
static __device__ __forceinline__ void wg_lds64(fg_u32 addr, fg_u32& x, fg_u32& y) {
  asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];\n" : "=r"(x), "=r"(y) : "r"(addr));
}
static __device__ __forceinline__ fg_u32 wg_lds32(fg_u32 addr) {
  fg_u32 v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}
static __device__ __forceinline__ void wg_sts32(fg_u32 addr, fg_u32 x) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(x) : "memory");
}
static __device__ __forceinline__ void wg_sts128(fg_u32 addr, fg_u32 x, fg_u32 y, fg_u32 z, fg_u32 w) {
  asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}
// Chunk kc's raw ring slot. kc is never negative, but under stream-K it
// starts at a piece's k0 (a remainder the compiler cannot bound), and a
// signed remainder costs four or five instructions where the unsigned one
// is one AND: twice per chunk in every consumer warp of a stream-K or
// hybrid module (kernel-notes step 74).
static __device__ __forceinline__ int wg_ring_slot(int kc) { return (int)((fg_u32)kc % WG_RS); }
static __device__ __forceinline__ fg_u32 wg_prmt(fg_u32 a, fg_u32 b, fg_u32 sel) {
  fg_u32 d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}
static __device__ __forceinline__ fg_u32 wg_hmul2(fg_u32 a, fg_u32 b) {
  fg_u32 d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
static __device__ __forceinline__ fg_u16 wg_f2h(float f) {
  fg_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
// Byte B of x (an e4m3 scale) to an fp16x2 holding scale * 2^7 in both
// halves: bit placement gives scale * 2^-8 exactly (e4m3 subnormals land on
// fp16 subnormals), the multiply by 2^15 is exact.
template <int B>
static __device__ __forceinline__ fg_u32 wg_scale(fg_u32 x) {
  const fg_u32 z = wg_prmt(x, 0u, 0x4040u + B * 0x0101u); // byte B -> bits 0..7 and 16..23
  const fg_u32 h = ((z & 0x007F007Fu) << 7) | ((z & 0x00800080u) << 8);
  return wg_hmul2(h, 0x78007800u);
}
// A consumer's weight scale: byte B of x (an e4m3 scale) as an fp16x2
// holding the scale in both halves, exactly (fp16 holds every e4m3 value),
// by one byte permute and one conversion (wg_scale's bit placement takes
// five instructions). The weight operand is then value * scale * 2^-14:
// every such product is a multiple of 2^-24 and at most 6 * 448 * 2^-14,
// exact in fp16 down to its subnormals (internal/nvfp4's
// TestKernelOperandsExactInF16 checks every code pair).
template <int B>
static __device__ __forceinline__ fg_u32 wg_wscale(fg_u32 x) {
  const fg_u32 z = wg_prmt(x, 0u, B * 0x11u); // byte B -> bytes 0 and 1
  fg_u32 d;
  asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.rn.f16x2.e4m3x2 %0, lo; }" : "=r"(d) : "r"(z));
  return d;
}
// What the accumulators hold: the sums times 2^-21 (tokens at 2^-7 from
// wg_scale, weights at 2^-14 from wg_wscale), or 2^-14 with WG_SSA, whose
// producer decodes the weights as it does the tokens.
#define WG_ACC_SCALE (WG_SSA ? 16384.f : 2097152.f)
// Pair P of w's eight FP4 values as an fp16x2: magnitude to fp16 bits 9..11
// (value e2m1 * 2^-14), sign to bit 15, and the low byte zero. WG_DEC 0:
// nibbles P and P+4 (low half from nibble P). WG_DEC 1: nibbles (0,2),
// (1,3), (4,6), (5,7) for P = 0..3: hb holds the fp16 high bytes of the
// word's even nibbles (byte b from nibble 2b) or of its odd ones (from
// 2b + 1), and a byte permute puts two of them over zero low bytes. The
// calls for one word share the two hb (the compiler keeps one copy each).
template <int P>
static __device__ __forceinline__ fg_u32 wg_dec(fg_u32 w) {
#if WG_DEC
  // Odd nibble (bits 4..7 of a byte): sign already at bit 7, magnitude
  // bits 4..6 down to 1..3. The even nibble is the same after w << 4.
  const fg_u32 src = (P & 1) ? w : w << 4;
  const fg_u32 hb = (src & 0x80808080u) | ((src >> 3) & 0x0E0E0E0Eu);
  return wg_prmt(hb, 0u, P < 2 ? 0x1404u : 0x3424u); // bytes {0, b, 0, b+1}, b = 0 or 2
#else
  fg_u32 mag, sgn;
  if (P == 0) {
    mag = (w << 9) & 0x0E000E00u;
    sgn = (w << 12) & 0x80008000u;
  } else if (P == 1) {
    mag = (w << 5) & 0x0E000E00u;
    sgn = (w << 8) & 0x80008000u;
  } else if (P == 2) {
    mag = (w << 1) & 0x0E000E00u;
    sgn = (w << 4) & 0x80008000u;
  } else {
    mag = (w >> 3) & 0x0E000E00u;
    sgn = w & 0x80008000u;
  }
  return mag | sgn;
#endif
}

// The four fp16x2 of a pre-packed weight word u (WG_XDEC): p[P] equals
// wg_dec<P>(w) (WG_DEC 1) for the word w that u packs. Packing is a fixed
// invertible map of a word's 32 bits over GF(2) (each bit of u is one bit
// of w or the XOR of two to five), solved so that every pair is one LOP3 of
// at most two shifted copies of u under the pair mask: no placement of the
// bits alone lets four pairs come out of a word with one mask each.
static __device__ __forceinline__ void wg_xdec(fg_u32 u, fg_u32 (&p)[4]) {
  const fg_u32 m = 0x8E008E00u; // sign and magnitude bits of both halves
  p[0] = (u << 6) & m;
  p[1] = (u << 9) & m;
  p[2] = (u ^ (u << 2)) & m;
  p[3] = (u ^ (u >> 3)) & m;
}

// silu(x) = x / (1 + e^-x) in fp32 (as fast_dual_gemm.cu): ex2.approx's
// ~2 ulp are far under the fp16 rounding of the result.
// WG_EPI and WG_RCP: times rcp.approx (~1 ulp) instead of the IEEE
// division's subroutine; 1 + e = inf (x below about -88) gives -0 either way.
static __device__ __forceinline__ float wg_silu(float x) {
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(-x * 1.4426950408889634f));
#if WG_EPI || WG_RCP
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.f + e));
  return x * r;
#else
  return x / (1.f + e);
#endif
}

static __device__ __forceinline__ void wg_named_sync(int id) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory");
}
static __device__ __forceinline__ void wg_named_arrive(int id) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(id) : "memory");
}

// WG_EPI: consumer H of a dual pair (0: B1, sums X; 1: B2, sums Y) gates
// half H of the tile's tokens, the fragments acc[b][H*R .. H*R + R) (R =
// NW/4: token rows 8j + 2t + {0, 1} for j in [H*NW/16, (H+1)*NW/16)). It
// writes the other half of its sums to its own staging buffer (mine,
// [value][thread]: conflict-free), and once both have (named barrier bar,
// 256 threads) reads its partner's (theirs) for its half; the second
// barrier keeps each buffer until its partner has read it, since the
// epilogue then stages its fp16 rows there.
template <int H, int NW>
static __device__ __forceinline__ void wg_gate_half(float (&acc)[WG_MB][NW / 2], float* mine, const float* theirs,
                                                    int lt, int bar) {
  constexpr int R = NW / 4;
#pragma unroll
  for (int b = 0; b < WG_MB; ++b)
#pragma unroll
    for (int i = 0; i < R; ++i) mine[(b * R + i) * 128 + lt] = acc[b][(1 - H) * R + i];
  wg_named_sync(bar);
#pragma unroll
  for (int b = 0; b < WG_MB; ++b)
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float own = acc[b][H * R + i] * WG_ACC_SCALE, other = theirs[(b * R + i) * 128 + lt] * WG_ACC_SCALE;
      acc[b][H * R + i] = H == 0 ? wg_silu(own) * other : wg_silu(other) * own;
    }
  wg_named_sync(bar);
}

// mbarriers (shared::cta, no cluster).
static __device__ __forceinline__ void wg_bar_init(fg_u32 bar, fg_u32 count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void wg_bar_arrive(fg_u32 bar) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared.b64 st, [%0]; }\n" ::"r"(bar) : "memory");
}
// One arrival that also expects bytes of a bulk copy (WG_TOK): the phase
// completes once they have landed.
static __device__ __forceinline__ void wg_bar_expect(fg_u32 bar, fg_u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Bulk async copy global -> shared, completing on mbarrier bar (the CTA's
// own shared address is its shared::cluster address: no cluster launched).
static __device__ __forceinline__ void wg_bulk_load(fg_u32 dst, const void* src, fg_u32 bytes, fg_u32 bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// Whether the phase of parity has completed, without blocking (WG_TWE).
static __device__ __forceinline__ fg_u32 wg_bar_test(fg_u32 bar, fg_u32 parity) {
  fg_u32 done;
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done;
}
static __device__ __forceinline__ void wg_bar_wait(fg_u32 bar, fg_u32 parity) {
  fg_u32 done;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// wgmma shared-memory descriptor of a K-major operand tile in the 128-byte
// swizzle: start address >> 4 (bits 0-13), leading byte offset (unused for
// this layout, 1), stride byte offset 1024 >> 4 (8 rows of 128 bytes, bits
// 32-45), swizzle mode 1 = 128 B (bits 62-63). Stepping K by 16 inside the
// 64-wide swizzle atom adds 32 bytes to the start address.
static __device__ __forceinline__ fg_u64 wg_desc(fg_u32 addr) {
#if WG_LAYOUT == 0
  return (fg_u64)((addr & 0x3FFFFu) >> 4) | ((fg_u64)1 << 16) | ((fg_u64)(1024 >> 4) << 32) | ((fg_u64)1 << 62);
#elif WG_LAYOUT == 1
  return (fg_u64)((addr & 0x3FFFFu) >> 4) | ((fg_u64)(128 >> 4) << 16) | ((fg_u64)(2048 >> 4) << 32);
#else
  return (fg_u64)((addr & 0x3FFFFu) >> 4) | ((fg_u64)(2048 >> 4) << 16) | ((fg_u64)(128 >> 4) << 32);
#endif
}
// Start of k16 step s (0..7) of a decoded stage.
static __device__ __forceinline__ fg_u32 wg_step_addr(fg_u32 tok, int s) {
#if WG_LAYOUT == 0
  return tok + (s >> 2) * (WG_TM * 128) + (s & 3) * 32;
#else
  return tok + s * 256;
#endif
}
// The descriptor of k16 step s (0..7) of the decoded stage at tok: the
// stage's descriptor plus the step's offset >> 4 in its address field,
// which cannot carry out of it (shared addresses are under 2^18), so a
// chunk builds one descriptor and each wgmma adds a constant (ncu: 6.2
// uniform instructions per warp and wgmma rebuilding it from the address,
// kernel-notes step 42).
static __device__ __forceinline__ fg_u64 wg_tdesc(fg_u32 tok, int s) {
  const fg_u64 d0 = wg_desc(tok);
  return (d0 & 0xFFFFFFFF00000000ull) | (fg_u32)((fg_u32)d0 + (wg_step_addr(0u, s) >> 4));
}
// Shared address of logical 16-byte chunk c (K 8c..8c+7) of token row r.
static __device__ __forceinline__ fg_u32 wg_chunk_addr(fg_u32 tok, int r, int c) {
#if WG_LAYOUT == 0
  // 64-K block c / 8, 16-byte unit c % 8 of the row, swizzled by the row's
  // index in its 8-row group.
  return tok + (c >> 3) * (WG_TM * 128) + r * 128 + (((c & 7) ^ (r & 7)) << 4);
#else
  return tok + (r >> 3) * 2048 + c * 128 + (r & 7) * 16;
#endif
}

static __device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

#define WG_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define WG_F16(i) WG_F4(i), WG_F4(i + 4), WG_F4(i + 8), WG_F4(i + 12)
#define WG_A4 "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3])

// D(64 x NW, fp32) += A(64 x 16, fp16 registers) * B(16 x NW, fp16, shared
// memory, K-major), accumulating (scale-d = 1). One specialization per wgmma
// width NW = 32, 64, 96, 128: a tile's width is its live token rows rounded
// up to 32, so short tails waste little tensor time.
template <int NW>
__device__ __forceinline__ void wg_mma(float (&d)[NW / 2], const fg_u32 (&a)[4], fg_u64 bdesc);
template <>
__device__ __forceinline__ void wg_mma<32>(float (&d)[16], const fg_u32 (&a)[4], fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0; }\n"
               : WG_F4(0), WG_F4(4), WG_F4(8), WG_F4(12)
               : WG_A4, "l"(bdesc));
}
template <>
__device__ __forceinline__ void wg_mma<64>(float (&d)[32], const fg_u32 (&a)[4], fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0; }\n"
               : WG_F4(0), WG_F4(4), WG_F4(8), WG_F4(12), WG_F4(16), WG_F4(20), WG_F4(24), WG_F4(28)
               : WG_A4, "l"(bdesc));
}
template <>
__device__ __forceinline__ void wg_mma<96>(float (&d)[48], const fg_u32 (&a)[4], fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, {%48, %49, %50, %51}, %52, p, 1, 1, 0; }\n"
               : WG_F4(0), WG_F4(4), WG_F4(8), WG_F4(12), WG_F4(16), WG_F4(20), WG_F4(24), WG_F4(28), WG_F4(32), WG_F4(36), WG_F4(40), WG_F4(44)
               : WG_A4, "l"(bdesc));
}
template <>
__device__ __forceinline__ void wg_mma<128>(float (&d)[64], const fg_u32 (&a)[4], fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0; }\n"
               : WG_F4(0), WG_F4(4), WG_F4(8), WG_F4(12), WG_F4(16), WG_F4(20), WG_F4(24), WG_F4(28), WG_F4(32), WG_F4(36), WG_F4(40), WG_F4(44), WG_F4(48), WG_F4(52), WG_F4(56), WG_F4(60)
               : WG_A4, "l"(bdesc));
}

// D(64 x 128, fp32) += A(64 x 16, fp16, shared memory, descriptor adesc) *
// B(16 x 128, fp16, shared memory): both operands K-major in the 128-byte
// swizzle (WG_SSA; dev/wgprobe's shared-memory form).
static __device__ __forceinline__ void wg_mma_ss128(float (&d)[64], fg_u64 adesc, fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0; }\n"
               : WG_F4(0), WG_F4(4), WG_F4(8), WG_F4(12), WG_F4(16), WG_F4(20), WG_F4(24), WG_F4(28), WG_F4(32), WG_F4(36), WG_F4(40), WG_F4(44), WG_F4(48), WG_F4(52), WG_F4(56), WG_F4(60)
               : "l"(adesc), "l"(bdesc));
}

// m64n256k16 (WG_TM 256): 128 accumulators per thread. Each weight
// register decoded feeds 256 token columns, half the decode per FLOP of
// the 128-wide tile.
#define WG_F64(i) WG_F16(i), WG_F16(i + 16), WG_F16(i + 32), WG_F16(i + 48)
template <>
__device__ __forceinline__ void wg_mma<256>(float (&d)[128], const fg_u32 (&a)[4], fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, 0; }\n"
               : WG_F64(0), WG_F64(64)
               : WG_A4, "l"(bdesc));
}
#undef WG_F64

// wg_dec<q>(x) for q known once the caller's loop is unrolled.
static __device__ __forceinline__ fg_u32 wg_dec_at(fg_u32 x, int q) {
  switch (q) {
    case 0: return wg_dec<0>(x);
    case 1: return wg_dec<1>(x);
    case 2: return wg_dec<2>(x);
    default: return wg_dec<3>(x);
  }
}

// Units u0..u0 + U - 1 of row r of decoded stage tok (128-byte swizzle):
// fp16x2 j of unit c is nibble pair c & 3 of raw word word(j, c), times the
// fp16x2 scale scale(j, c). The producer's whole-row decode and the token
// pass's half-row one differ only in which words and scales they hold.
template <int U, class Word, class Scale>
static __device__ __forceinline__ void wg_decode_units(fg_u32 tok, int r, int u0, const Word& word, const Scale& scale) {
#pragma unroll
  for (int c = 0; c < U; ++c) {
    fg_u32 h[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) h[j] = wg_hmul2(wg_dec_at(word(j, c), c & 3), scale(j, c));
    wg_sts128(wg_chunk_addr(tok, r, u0 + c), h[0], h[1], h[2], h[3]);
  }
}

// Producer: decode one token row's 128-wide K chunk (16 raw words at raw, 8
// scale bytes at sc) into decoded stage tok, row r, 128-byte swizzle.
static __device__ __forceinline__ void wg_decode_words(const fg_u32 (&w)[16], fg_u32 s03, fg_u32 s47, fg_u32 tok,
                                                       int r) {
  // s[i]: scale of physical K group i (16 values) of this chunk.
  const fg_u32 s[8] = {wg_scale<0>(s03), wg_scale<1>(s03), wg_scale<2>(s03), wg_scale<3>(s03),
                       wg_scale<0>(s47), wg_scale<1>(s47), wg_scale<2>(s47), wg_scale<3>(s47)};
  wg_decode_units<16>(tok, r, 0, [&](int j, int c) { return w[4 * j + (c >> 2)]; },
                      [&](int j, int c) { return s[2 * j + (c >> 3)]; });
}
static __device__ __forceinline__ void wg_decode_row(fg_u32 raw, fg_u32 sc, fg_u32 tok, int r) {
  fg_u32 w[16];
#pragma unroll
  for (int j = 0; j < 4; ++j) wg_lds128(raw + 16 * j, w[4 * j], w[4 * j + 1], w[4 * j + 2], w[4 * j + 3]);
  fg_u32 s03, s47;
  wg_lds64(sc, s03, s47);
  wg_decode_words(w, s03, s47, tok, r);
}

// The token pass's half of wg_decode_words: 64-K block h of a token row's
// chunk (its logical units 8h..8h+7), from w[2j + i] = raw word 4j + 2h + i
// (bytes 16j + 8h..+8 of the row's 64) and scale bytes 2j + h (s03 holds
// bytes 0-3, s47 bytes 4-7), so two threads share a row and each runs half
// of the dependent chain wg_decode_words runs.
static __device__ __forceinline__ void wg_decode_half(const fg_u32 (&w)[8], fg_u32 s03, fg_u32 s47, fg_u32 tok,
                                                      int r, int h) {
  // Scale bytes h, 2 + h of each word moved to bytes 0 and 2.
  const fg_u32 a = s03 >> (8 * h), b = s47 >> (8 * h);
  const fg_u32 s[4] = {wg_scale<0>(a), wg_scale<2>(a), wg_scale<0>(b), wg_scale<2>(b)};
  wg_decode_units<8>(tok, r, 8 * h, [&](int j, int c) { return w[2 * j + (c >> 2)]; },
                     [&](int j, int) { return s[j]; });
}

// Consumer: the A fragments of k16 steps 4H..4H+3 of one 128-wide chunk for
// one 64-row block. u0/u1 are raw words 2H and 2H+1 of rows g and g+8
// (physical K [32t + 16H, +16)), c0/c1 their fp16x2 scales (group 2t + H).
static __device__ __forceinline__ void wg_frags_half(fg_u32 (&a)[4][4], fg_u32 u00, fg_u32 u01, fg_u32 u10,
                                                     fg_u32 u11, fg_u32 c0, fg_u32 c1) {
#if WG_EXP & 2
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    a[j][0] = u00 ^ j;
    a[j][1] = u10 ^ j;
    a[j][2] = u01 ^ c0;
    a[j][3] = u11 ^ c1;
  }
  return;
#endif
  // Step 4H + j uses word 2H + j/2, nibble pair 2(j%2) (and 2(j%2) + 1 for
  // the MMA's upper K half).
#if WG_XDEC
  {
    fg_u32 p00[4], p10[4], p01[4], p11[4];
    wg_xdec(u00, p00);
    wg_xdec(u10, p10);
    wg_xdec(u01, p01);
    wg_xdec(u11, p11);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      a[j][0] = wg_hmul2(p00[2 * j], c0);
      a[j][1] = wg_hmul2(p10[2 * j], c1);
      a[j][2] = wg_hmul2(p00[2 * j + 1], c0);
      a[j][3] = wg_hmul2(p10[2 * j + 1], c1);
      a[2 + j][0] = wg_hmul2(p01[2 * j], c0);
      a[2 + j][1] = wg_hmul2(p11[2 * j], c1);
      a[2 + j][2] = wg_hmul2(p01[2 * j + 1], c0);
      a[2 + j][3] = wg_hmul2(p11[2 * j + 1], c1);
    }
    return;
  }
#endif
  a[0][0] = wg_hmul2(wg_dec<0>(u00), c0);
  a[0][1] = wg_hmul2(wg_dec<0>(u10), c1);
  a[0][2] = wg_hmul2(wg_dec<1>(u00), c0);
  a[0][3] = wg_hmul2(wg_dec<1>(u10), c1);
  a[1][0] = wg_hmul2(wg_dec<2>(u00), c0);
  a[1][1] = wg_hmul2(wg_dec<2>(u10), c1);
  a[1][2] = wg_hmul2(wg_dec<3>(u00), c0);
  a[1][3] = wg_hmul2(wg_dec<3>(u10), c1);
  a[2][0] = wg_hmul2(wg_dec<0>(u01), c0);
  a[2][1] = wg_hmul2(wg_dec<0>(u11), c1);
  a[2][2] = wg_hmul2(wg_dec<1>(u01), c0);
  a[2][3] = wg_hmul2(wg_dec<1>(u11), c1);
  a[3][0] = wg_hmul2(wg_dec<2>(u01), c0);
  a[3][1] = wg_hmul2(wg_dec<2>(u11), c1);
  a[3][2] = wg_hmul2(wg_dec<3>(u01), c0);
  a[3][3] = wg_hmul2(wg_dec<3>(u11), c1);
}

// Where stream-K partial sums go: ws holds one slot of WG_CONS x 128 x
// WG_MB * WG_TM / 2 floats per block, flags one u32 per block and consumer.
struct WgStream {
  float* ws;
  fg_u32* flags;
  fg_u32* ready;    // WG_RDY: done and seen per token tile, else null
  unsigned readers; // WG_RDY: chunk reads per token tile (kch x its tiles)
#if WG_RANGES
  const int* ranges; // the stream-K ranges' table (WG_RANGES)
#endif
#if WG_PRO
  const FgGroup* pro_groups; // the token operand's groups (WG_PRO)
  int pro_ng;
  fg_u32* pro_flags; // a flag per stage, in the launch table
#endif
};
// Stream-K: block b's partial sums for consumer c, WG_SK_FMAX floats per
// thread at the widest tile ([value][thread]), and their flag; each has one
// writer (block b) and one reader (the piece that takes them). B is b's
// type as the caller has it (blockIdx.x is unsigned, a partner's index an
// int): the address arithmetic stays what it was before these helpers, and
// so does every measured module's PTX.
#define WG_SK_FMAX (WG_MB * (WG_TM / 2))
template <class B>
static __device__ __forceinline__ float* wg_sk_slot(const WgStream& sk, B b, int c) {
  return sk.ws + ((size_t)b * WG_CONS + c) * WG_SK_FMAX * 128;
}
template <class B>
static __device__ __forceinline__ fg_u32* wg_sk_flag(const WgStream& sk, B b, int c) {
  return sk.flags + b * WG_CONS + c;
}
// The stream-K ranges' table of sk (WG_RANGES), else null: equal ranges.
static __device__ __forceinline__ const int* wg_ranges_of(const WgStream& sk) {
#if WG_RANGES
  return sk.ranges;
#else
  return nullptr;
#endif
}
static __device__ __forceinline__ fg_u32 wg_ld_acquire(const fg_u32* p) {
  fg_u32 v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ void wg_st_release(fg_u32* p, fg_u32 v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
// An owner takes a partner's partial sums: waits for its flag (acquire),
// then clears it for the next launch (each flag has this one reader).
static __device__ __forceinline__ void wg_sk_take(fg_u32* flag) {
  while (wg_ld_acquire(flag) == 0u) {
  }
  *flag = 0u;
}
// A dual stream-K piece in the middle of its tile (a one-piece block
// between the owner and the tail) adds its later partners' sums to its own
// before it publishes, so every owner or middle piece takes one partner,
// the next block (piece_at's last): the owners with two partners ended
// bench4's launch ~0.9 us after the rest. Measured (kernel-notes step 84,
// H200, A/A): the 256-token tile (bench4) 1.0198x; the 128-token tile
// (bench3) 0.9950x, so there owners still take both; the group's hybrid
// module (group bench2's 24 three-block tiles) 0.9966x (step 85).
#define WG_SKM_ON (DUAL && WG_TM == 256)
// The early take (kernel-notes steps 81, 83): the dual's plain decode-ahead
// producer (one thread) takes the first half of the sums of an owner's
// (or, WG_SKM_ON, a middle piece's) last partner while the consumers still
// run the piece's last chunks; their chunk loops carry no test, and no
// consumer warp waits on the flag (step 81's take by consumer thread 0, in
// the loop, lost 1.2% on the 128-token tile; this form measured 1.0023x on
// bench4 and 1.0069x on bench3 against it, H200, A/A). Whether piece (k0,
// k1, last) of this block is such a piece (first: no epilogue has used
// the staging buffers in this block yet): with at least STAGES + 2 chunks,
// the producer's last token copy waits for the consumers to free chunk
// k1 - 1 - STAGES's stage, which they do after the previous piece's
// staging has drained (skt_flush at chunk k0 + 1), so the staging buffers
// are free for the load. The producer and the consumers decide alike.
#define WG_SKEP_ON (DUAL && WG_SK && WG_TOK && !WG_SSA && !WG_FOLD && !WG_FIT && !WG_TOKW && !WG_RDY && !WG_PRO)
static __device__ __forceinline__ bool wg_skep_piece(int k0, int k1, int last, bool first) {
  return WG_SKEP_ON && (k0 == 0 || WG_SKM_ON) && last > (int)blockIdx.x && first && k1 - k0 >= STAGES + 2;
}
// Partial sums go through L2 only (.cg): the owner's SM never caches them.
static __device__ __forceinline__ void wg_st_cg(float* p, float v) {
  asm volatile("st.global.cg.f32 [%0], %1;\n" ::"l"(p), "f"(v) : "memory");
}
static __device__ __forceinline__ float wg_ld_cg(const float* p) {
  float v;
  asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(p) : "memory");
  return v;
}
// Stream-K hand-over by the TMA engine (kernel-notes step 80: dual bench4
// 1.020x, bench3 1.011x, group bench2's hybrid 1.008x on an H200, against
// 4-byte stores and loads from every consumer thread). A piece that leaves
// partial sums writes them into its consumer's epilogue staging buffer, a
// round at a time, and one thread bulk-stores each round, so no warp issues
// global stores or waits for L2; the flag is released by that thread alone
// once they have landed, after the block's next piece has issued its second
// chunk (wg_skt_release). The owner takes its partners' sums with bulk loads
// into the token stages, free once every consumer's mainloop is over.
//
// Where the staging buffer is not the consumer's own between pieces (the
// dual hand-off without WG_EPI, under the hybrid schedule: the B1 consumer
// may still read the B2 consumer's buffer from the whole tile before, and
// the hand-off's named barriers pair one wait with one arrival), the sums
// go out as 4-byte stores instead, each thread's ordered before the
// warpgroup's barrier and the flag's release (the family test caught the
// race there, 78-3,249 wrong outputs on dual bench2: kernel-notes step 80).
#define WG_SKT_STAGED (!(DUAL && !WG_EPI && WG_SK == 2))
//
// Floats per thread in one round of f partial sums through a consumer's
// staging buffer (128 threads, [value][thread]): the largest whole part of
// f that fits.
static __host__ __device__ constexpr int wg_skt_round(int f) {
  int d = 1;
  while (f % d != 0 || (f / d) * 512 > WG_EP_BYTES) ++d;
  return f / d;
}
// Consumer c's F partial sums per thread (flat) to its workspace slot dst
// ([value][thread]) through its staging buffer (stg, sstg its shared
// address), round by round; thread lt 0 bulk-stores a round once every
// thread has written it (each thread's proxy fence, then the barrier), and
// before the next round overwrites the buffer waits for the engine to have
// read it. The stores stay in flight: wg_skt_release waits for them.
template <int F>
static __device__ __forceinline__ void wg_skt_store(const float* flat, float* dst, float* stg, fg_u32 sstg, int c,
                                                    int lt) {
  constexpr int R = wg_skt_round(F);
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); // an earlier epilogue's reads are done
#pragma unroll
  for (int r = 0; r < F / R; ++r) {
    if (r > 0) {
      if (lt == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
      asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
    }
#pragma unroll
    for (int i = 0; i < R; ++i) stg[i * 128 + lt] = flat[r * R + i];
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
    if (lt == 0) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst + r * R * 128),
                   "r"(sstg), "r"(R * 512)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    }
  }
}
// The owner's flag, by the thread that issued wg_skt_store's bulk stores,
// once they have landed.
static __device__ __forceinline__ void wg_skt_release(fg_u32* flag) {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
  wg_st_release(flag, 1u);
}

// A piece that starts mid-tile publishes consumer c's F partial sums per
// thread (flat) in its block's workspace slot for the owner; with another
// piece after it in this block (more) that piece releases the flag (pend).
template <int F>
static __device__ __forceinline__ void wg_sk_publish(const float* flat, const WgStream& sk, fg_u8* sgen, fg_u32 sbase,
                                                     int c, int lt, bool more, fg_u32*& pend) {
  float* const dst = wg_sk_slot(sk, blockIdx.x, c);
  if constexpr (WG_SKT_STAGED) {
    // wg_ep's addresses, spelled out: through the helper one instruction of
    // the group's hybrid module moves and one add of dual bench4's swaps
    // its operands (dev/ptxloop), so the measured modules would change.
    wg_skt_store<F>(flat, dst, (float*)(sgen + WG_OFF_EP + c * WG_EP_BYTES), sbase + WG_OFF_EP + c * WG_EP_BYTES, c,
                    lt);
    if (more) { // released by the next piece
      pend = wg_sk_flag(sk, blockIdx.x, c);
      return;
    }
    if (lt == 0) wg_skt_release(wg_sk_flag(sk, blockIdx.x, c));
  } else {
#pragma unroll
    for (int i = 0; i < F; ++i) wg_st_cg(dst + i * 128 + lt, flat[i]);
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
    if (lt == 0) wg_st_release(wg_sk_flag(sk, blockIdx.x, c), 1u);
  }
}

// One piece of a block's work: chunks [k0, k1) of tile t; last >
// blockIdx.x: the owner of a cut tile adds the partials of blocks
// blockIdx.x + 1 .. last. Without stream-K a piece is a whole tile.
struct WgPiece {
  int t, k0, k1, last;
};

// The pieces of work of this block, in order: fn(piece, more, next); more:
// another piece follows in this block; next: that piece where WG_PF needs
// it (and more), else zeros. (A value, not a callback: NVRTC 11.8 treats a
// generic lambda's operator as host code.)
// rng: WG_RANGES's table (null: equal ranges).
template <class Fn>
static __device__ __forceinline__ void wg_pieces(const int* rng, int num_tiles, int kch, const Fn& fn) {
  const int G = gridDim.x, b = blockIdx.x;
#if WG_SK
  // Stream-K over tiles [t0, num_tiles): WG_SK 1 all of them; WG_SK 2
  // (hybrid) only the last, partial wave, after whole tiles for the full
  // waves, so only that wave's tiles are cut. Every block must get a chunk
  // of the stream-K part, because an owner waits on each block after it up
  // to the one holding its tile's last chunk: where the last wave has
  // fewer chunks than blocks, the wave before it joins the stream-K part
  // (without this, group bench2 at 64-token tiles hung: 6 tiles x 16 chunks
  // for 132 blocks). (With WG_SK 1 the grid is at most tiles x chunks.)
#if WG_SK == 2
  int t0 = num_tiles / G * G;
  if (t0 < num_tiles && (long long)(num_tiles - t0) * kch < G) t0 -= G;
#else
  const int t0 = 0;
#endif
  const long long I = (long long)(num_tiles - t0) * kch;
#if WG_RANGES
  const bool tab = rng != nullptr && rng[0] == G && rng[1 + G] == I;
  auto begin = [&](int x) { return tab ? rng[1 + x] : (int)((long long)x * I / G); };
#else
  (void)rng;
  auto begin = [&](int x) { return (int)((long long)x * I / G); };
#endif
  int cur = begin(b);
  const int end = begin(b + 1);
  // The stream-K piece that starts at chunk x (< end) of this block's range.
  auto piece_at = [&](int x) {
    const int t = x / kch, k0 = x % kch;
    const int k1 = k0 + (end - x) < kch ? k0 + (end - x) : kch;
    int last = b;
    if ((k0 == 0 || WG_SKM_ON) && k1 < kch) {
      const int i = (t + 1) * kch - 1; // the tile's last chunk
      last = (int)((long long)i * G / I);
      while (begin(last + 1) <= i) ++last;
      while (begin(last) > i) --last;
      // WG_SKM_ON: the next block's sums hold those of every block after it.
      if (WG_SKM_ON && last > b + 1) last = b + 1;
    }
    return WgPiece{t0 + t, k0, k1, last};
  };
#if WG_SK == 2
  for (int t = b; t < t0; t += G) {
    const bool more = t + G < t0 || cur < end;
    fn(WgPiece{t, 0, kch, b}, more,
       WG_PF && more ? (t + G < t0 ? WgPiece{t + G, 0, kch, b} : piece_at(cur)) : WgPiece{0, 0, 0, 0});
  }
#endif
  while (cur < end) {
    const WgPiece p = piece_at(cur);
    cur += p.k1 - p.k0;
    fn(p, cur < end, WG_PF && cur < end ? piece_at(cur) : WgPiece{0, 0, 0, 0});
  }
#else
  for (int t = b; t < num_tiles; t += G)
    fn(WgPiece{t, 0, kch, b}, t + G < num_tiles, WgPiece{t + G, 0, kch, b});
#endif
}

// Consumer warpgroup c: one tile at wgmma width NW (the tile's live token
// rows rounded up to 32). Each chunk's eight k16 steps go out as two commit
// groups of four (register sets X: steps 0-3, Y: steps 4-7), so the decode
// of one half overlaps the tensor work of the other with 32 fragment
// registers: X(it) issued; Y(it) decoded while X(it) runs; Y(it) issued;
// wait for X(it) (wait_group 1); X(it+1) decoded while Y(it) runs; and the
// stage is freed once Y(it) has finished, after X(it+1) is issued.
// Chunks [k0, k1) only; with stream-K a piece that starts mid-tile (k0 > 0)
// leaves its sums in the block's workspace slot, and an owner whose tile
// was cut (last > blockIdx.x) adds those of blocks blockIdx.x+1..last.
// Dual GEMM: first = this block's first hand-off, more = another piece
// follows (they pair the epilogue's named-barrier arrivals with its waits).
// WG_PF: warm = the previous piece issued this one's first weight copies;
// next(tile, gp, k0, k1) gives the following piece (called where more).
template <int NW, class Next, class Produce>
static __device__ __forceinline__ void wg_consume(const FgTile& tile, const FgGroup& gp, fg_u32 sbase, fg_u8* sgen,
                                                  int c, int tid, fg_u32 full0, fg_u32 empty0, fg_u32& q, int k0,
                                                  int k1, int last, bool first, bool more, const WgStream& sk,
                                                  bool warm, const Next& next, const Produce& produce,
                                                  fg_u32*& pend) {
  const int w = (tid >> 5) & 3;
  const int lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int M = gp.m, N = gp.n, K = gp.k;
  // WG_STAMP: consumer 0's first thread marks a piece boundary (kinds 19-23).
  auto boundary_mark = [&](int kind) {
    if (WG_STAMP && c == 0 && (tid & 127) == 0) wg_stamp(kind, q);
  };
  const size_t rowb = (size_t)(K >> 1), srow = (size_t)(K >> 4);
  // Block b, half h: local weight row (c * WG_MB + b) * 64 + 16w + 8h + g.
  auto lrow = [&](int b, int h) { return (c * WG_MB + b) * 64 + 16 * w + 8 * h + g; };
  // This thread's raw words and scale word of row lrow(0, 0) in ring slot 0.
  const fg_u32 wraw0 = sbase + WG_OFF_WRAW + lrow(0, 0) * 64 + 16 * t;
  const fg_u32 wsc0 = sbase + WG_OFF_WSC + lrow(0, 0) * 16 + 4 * t;
  // Block b, half h's weight row of the tile at row n0 of g's weights:
  // whether it exists, and nn, its index (0 if not).
  auto wrow = [&](int n0, const FgGroup& g, int b, int h, size_t& nn) {
    // Dual: each product's consumers start at the tile's first row of their own B.
    const int n = n0 + lrow(b, h) - (DUAL ? (c - c % WG_HALF) * WG_MB * 64 : 0);
    const bool ok = n < g.n;
    nn = (size_t)(ok ? n : 0);
    return ok;
  };
  // This piece's copy sources, per row: the row's raw bytes and scales at
  // chunk 0 and whether it exists, computed once, so a chunk's copies add
  // kc * 64 and kc * 8 to them (ncu: ~30 SASS instructions per chunk and
  // warp went to the copies, the group parameters reloaded each chunk;
  // kernel-notes step 44: 1.005x dual, 1.022x group bench1-2 on an H100,
  // dev/gpucall/dual.sh cph at 362716e).
  const fg_u8* cp16[WG_MB][2];
  const fg_u8* cp4[WG_MB][2];
  // The copies' existence (their byte counts, 0 past the weights' rows).
  // Opaque below with the addresses in whole-tile modules; under stream-K
  // the test stays visible to NVVM, since made opaque there too the narrow
  // stream-K module (dual bench3) lost 1.5-1.6% twice (kernel-notes steps
  // 76-77): its chunk loop loses five instructions, and ptxas orders the
  // decode among the wgmmas differently.
#if WG_SK
  bool cpok[WG_MB][2];
  auto cpn16 = [&](int b, int h) { return cpok[b][h] ? 16u : 0u; };
  auto cpn4 = [&](int b, int h) { return cpok[b][h] ? 4u : 0u; };
#else
  fg_u32 cpb16[WG_MB][2], cpb4[WG_MB][2];
  auto cpn16 = [&](int b, int h) { return cpb16[b][h]; };
  auto cpn4 = [&](int b, int h) { return cpb4[b][h]; };
#endif
#pragma unroll
  for (int b = 0; b < WG_MB; ++b)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      size_t nn;
      const bool ok = wrow(tile.n0, gp, b, h, nn);
      cp16[b][h] = gp.b + nn * rowb + 16 * t;
      cp4[b][h] = gp.sb + nn * srow + 4 * (t >> 1);
      // Opaque from here on: NVVM otherwise rebuilt the addresses (and the
      // counts) inside the chunk loop (the tall modules ~28 PTX
      // instructions per chunk and consumer warp, the narrow whole-tile one
      // 14 for the counts; kernel-notes steps 75-76), undoing what
      // computing them once was for.
#if WG_SK
      cpok[b][h] = ok;
      asm("" : "+l"(cp16[b][h]), "+l"(cp4[b][h]));
#else
      cpb16[b][h] = ok ? 16u : 0u;
      cpb4[b][h] = ok ? 4u : 0u;
      asm("" : "+l"(cp16[b][h]), "+l"(cp4[b][h]), "+r"(cpb16[b][h]), "+r"(cpb4[b][h]));
#endif
    }
  // Weight chunk kc of the tile at row n0 of g's weights (one K for all
  // groups) into its ring slot; cur: the tile is this piece's (the
  // sources above hold its rows; the next piece's, under prefetch=next,
  // take the long way).
  auto load_at = [&](int n0, const FgGroup& g, int kc, bool cur) {
    if ((WG_EXP & 40) || WG_PW) return; // WG_PW: the producer's warps copy them
    const int slot = wg_ring_slot(kc);
#pragma unroll
    for (int b = 0; b < WG_MB; ++b)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (cur) {
          wg_cp16(wraw0 + slot * WG_WRAW_STAGE + b * 64 * 64 + h * 8 * 64, cp16[b][h] + kc * 64, cpn16(b, h));
          wg_cp4(wsc0 + slot * WG_WSC_STAGE + b * 64 * 16 + h * 8 * 16, cp4[b][h] + kc * 8, cpn4(b, h));
          continue;
        }
        const int r = lrow(b, h);
        size_t nn;
        const bool ok = wrow(n0, g, b, h, nn);
        wg_cp16(sbase + WG_OFF_WRAW + slot * WG_WRAW_STAGE + r * 64 + 16 * t, g.b + nn * rowb + kc * 64 + 16 * t,
                ok ? 16u : 0u);
        wg_cp4(sbase + WG_OFF_WSC + slot * WG_WSC_STAGE + r * 16 + 4 * t, g.sb + nn * srow + kc * 8 + 4 * (t >> 1),
               ok ? 4u : 0u);
      }
  };
  auto load_of = [&](int n0, const FgGroup& g, int kc) { load_at(n0, g, kc, false); };
  auto load = [&](int kc) { load_at(tile.n0, gp, kc, true); };
  // WG_PW: the producer fills weight ring slot n % WG_RS with the block's
  // n-th chunk (n counts chunks as q does); the consumer waits for it to
  // land and gives it back once its raw words are decoded.
  const fg_u32 wfull0 = sbase + WG_OFF_WBAR, wempty0 = wfull0 + 8 * WG_RS;
  auto wland = [&](fg_u32 n) { wg_bar_wait(wfull0 + 8 * (n % WG_RS), (n / WG_RS) & 1); };
  // One arrival per warp, once all its lanes have read the slot: a
  // barrier every thread arrives on takes 128 per warpgroup and chunk.
  auto wfree = [&](fg_u32 n) {
    __syncwarp();
    if (lane == 0) wg_bar_arrive(wempty0 + 8 * (n % WG_RS));
  };
  fg_u32 xa[WG_MB][4][4], ya[WG_MB][4][4];
  float acc[WG_MB][NW / 2];
#pragma unroll
  for (int b = 0; b < WG_MB; ++b)
#pragma unroll
    for (int i = 0; i < NW / 2; ++i) acc[b][i] = 0.f;
  // Words 2, 3 and the scale pair of each row, kept for the Y half.
  fg_u32 hw0[WG_MB][2], hw1[WG_MB][2], hx0[WG_MB], hx1[WG_MB];
  // Block b's raw words (rows g and g+8) and scale pairs in ring slot slot.
  auto raw = [&](int b, int slot, fg_u32 (&w0)[4], fg_u32 (&w1)[4], fg_u32& x0, fg_u32& x1) {
    if (WG_EXP & 128) { // no loads: words from the slot number (not foldable)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        w0[i] = (fg_u32)(slot + i) * 0x01234567u;
        w1[i] = (fg_u32)(slot + i + b) * 0x07654321u;
      }
      x0 = (fg_u32)slot * 0x3F3Fu;
      x1 = x0 ^ 0x0101u;
      return;
    }
    // Rows lrow(b, 0) and lrow(b, 1) = lrow(0, 0) + 64b (+ 8): the bases
    // plus the slot's offset, the rest immediates.
    const fg_u32 ra = wraw0 + slot * WG_WRAW_STAGE + b * 64 * 64, sa = wsc0 + slot * WG_WSC_STAGE + b * 64 * 16;
    wg_lds128(ra, w0[0], w0[1], w0[2], w0[3]);
    wg_lds128(ra + 8 * 64, w1[0], w1[1], w1[2], w1[3]);
    // Scale bytes 2t, 2t+1 of the chunk: half (t & 1) of the copied word.
    x0 = wg_lds32(sa) >> (16 * (t & 1));
    x1 = wg_lds32(sa + 8 * 16) >> (16 * (t & 1));
  };
  // Block b's words 2, 3 and scale pairs, kept for the Y half.
  auto hold = [&](int b, const fg_u32 (&w0)[4], const fg_u32 (&w1)[4], fg_u32 x0, fg_u32 x1) {
    hw0[b][0] = w0[2];
    hw0[b][1] = w0[3];
    hw1[b][0] = w1[2];
    hw1[b][1] = w1[3];
    hx0[b] = x0;
    hx1[b] = x1;
  };
  // Raw words of chunk kc, the block's n-th (its copies have landed):
  // decode X, keep Y's.
  auto frags_x = [&](int kc, fg_u32 n) {
    const int slot = WG_PW ? (int)(n % WG_RS) : wg_ring_slot(kc);
#pragma unroll
    for (int b = 0; b < WG_MB && (WG_EXP & 8); ++b) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) xa[b][j][i] = (fg_u32)(kc + j + i);
      hw0[b][0] = hw0[b][1] = hw1[b][0] = hw1[b][1] = hx0[b] = hx1[b] = (fg_u32)kc;
    }
#pragma unroll
    for (int b = 0; b < WG_MB && !(WG_EXP & 8); ++b) {
      fg_u32 w0[4], w1[4], x0, x1;
      raw(b, slot, w0, w1, x0, x1);
      wg_frags_half(xa[b], w0[0], w0[1], w1[0], w1[1], wg_wscale<0>(x0), wg_wscale<0>(x1));
      hold(b, w0, w1, x0, x1);
    }
  };
  auto frags_y = [&]() {
#pragma unroll
    for (int b = 0; b < WG_MB && (WG_EXP & 8); ++b)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) ya[b][j][i] = hw0[b][0] + (fg_u32)(j + i);
#pragma unroll
    for (int b = 0; b < WG_MB && !(WG_EXP & 8); ++b)
      wg_frags_half(ya[b], hw0[b][0], hw0[b][1], hw1[b][0], hw1[b][1], wg_wscale<1>(hx0[b]), wg_wscale<1>(hx1[b]));
  };
  boundary_mark(22);
  if (!(WG_PF && warm) && !WG_SSA && !WG_PW) {
#pragma unroll
    for (int s = 0; s < WG_LA; ++s) {
      if (k0 + s < k1) load(k0 + s);
      wg_cp_commit();
    }
  }
#if WG_FOLD
  // The folded producer: consumer 0's first thread fills the whole ring
  // for the block's first chunks, once its first weight copies are out
  // (launched overlapped with wg_tokens it waits for that grid first);
  // later stages are refilled by whichever consumer releases them last.
  if (c == 0 && (tid & 127) == 0 && q == 0) {
#if WG_PDL
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
#pragma unroll
    for (int j = 0; j < STAGES; ++j) produce(j, 0, true);
  }
#endif
  // The previous piece's partial sums (pend, thread 0 of each consumer
  // warpgroup), released at this piece's second chunk or its end: by then
  // the bulk stores have drained, and no other thread waits. (A local copy:
  // the reference tested in the loop cost 10-16 PTX instructions a chunk,
  // counted by `go run ./dev/ptxloop`; the copy costs 5-9.)
#if WG_SK
  fg_u32* skp = (tid & 127) == 0 ? pend : nullptr;
  pend = nullptr;
#endif
  auto skt_flush = [&]() {
#if WG_SK
    if (skp != nullptr) {
      wg_skt_release(skp);
      skp = nullptr;
    }
#endif
  };
  (void)pend;
#if WG_SK
  // Stream-K partial sums: F floats per thread at this tile's width (in a
  // slot of WG_SK_FMAX); SKA token-stage bytes per consumer (WG_SKA), SKP
  // one partner's sums per consumer.
  constexpr int F = WG_MB * (NW / 2);
  constexpr int SKA = WG_SKA, SKP = F * 512;
  // The producer's early take (wg_skep_piece), on every tile that fits.
  constexpr bool skep_on = WG_SKEP_ON && WG_SKE_FITS(F);
#endif
  if (WG_PW)
    wland(q); // chunk k0 landed
  else if (!(WG_EXP & 64) && !WG_SSA)
    wg_cp_wait<WG_LA - 1>(); // chunk k0 landed
  boundary_mark(23);
  int prev = -1; // stage of the previous chunk, freed once its wgmmas are done
  // The ring's next stage of tokens, once the producer has filled it.
#if WG_TL
  bool tl_pf = true; // this piece's first tokens not yet marked
#endif
  fg_u32 landed = 0; // WG_TWE: the next stage tested full early
  auto tokens = [&](int& st) {
    st = q % STAGES;
#if WG_STAMP
    if (c < 3 && (tid & 127) == 0) wg_stamp(c < 2 ? 1 + 2 * c : 24, q);
#endif
    if (!WG_TWE || !landed) wg_bar_wait(full0 + 8 * st, (q / STAGES) & 1);
    landed = 0;
#if WG_STAMP
    if (c < 3 && (tid & 127) == 0) wg_stamp(c < 2 ? 2 + 2 * c : 25, q);
#endif
#if WG_TL
    if (c == 0 && (tid & 127) == 0 && q == 0u) wg_tl_mark(2);
    if (c == 0 && (tid & 127) == 0 && tl_pf) wg_tl_mark(8); // the last piece's, in the end
    tl_pf = false;
#endif
    wg_fence();
    return sbase + st * WG_TOK_STAGE;
  };
  // Once all but the newest commit group are done, the previous chunk's
  // stage goes back to the producer.
#if WG_FOLD
  // The folded producer's release of stage st (chunk j): once its wgmmas
  // have read it, each warp's first lane counts it in the stage's slot (the
  // empty barrier's, unused here), and the warp that counts last refills
  // the stage with chunk j + STAGES at once, so no warp waits for another.
  // The refill must be short: the warp that counts last is the consumer
  // that is behind, and its warpgroup's next wgmma waits for it, so a long
  // refill keeps it behind while the other consumer waits for data
  // (kernel-notes step 23: with the tile lookup in the refill the two
  // drifted 1.5 chunks apart, 0.87-0.91x a producer warpgroup; from a
  // cursor, 0.92-0.97x).
  auto release = [&](int st) {
    __syncwarp();
    if (lane == 0) {
      fg_u32 old;
      // Relaxed: the warp's wgmmas have finished reading the stage
      // (wait_group) before it counts, and the copy that overwrites the
      // stage is issued only after the last count. (acq_rel measured the
      // same.)
      asm volatile("atom.relaxed.cta.shared::cta.add.u32 %0, [%1], 1;\n" : "=r"(old) : "r"(empty0 + 8 * st) : "memory");
      produce(-1, st, old % (4 * WG_CONS) == 4 * WG_CONS - 1);
    }
  };
#endif
  auto release_prev = [&]() {
    if (prev >= 0) {
      wg_wait<1>();
#if WG_FOLD
      release(prev);
#else
      wg_bar_arrive(empty0 + 8 * prev);
#endif
    }
  };
#if WG_SSA
  // The weights come decoded with the tokens: per chunk, once the stage is
  // full, this consumer's eight SS wgmmas (its 64 rows of the weight stage
  // against the token stage) go out as one commit group; once the previous
  // chunk's group is done its stage goes back. (Whole tiles are 128 wide:
  // the narrower widths the dispatch instantiates never run.)
  if constexpr (NW == 128) {
    for (int it = k0; it < k1; ++it, ++q) {
      int st;
      const fg_u32 tok = tokens(st);
      const fg_u32 wst = sbase + WG_OFF_ASTG + st * WG_ASTG_STAGE + c * 64 * 128; // this consumer's rows
#pragma unroll
      for (int j = 0; j < 8; ++j)
        wg_mma_ss128(acc[0], wg_tdesc(wst, j), wg_tdesc(tok, j));
      wg_commit();
      release_prev();
      prev = st;
    }
  }
#elif WG_CSA
  // This consumer decodes its own 64 weight rows of each chunk into one of
  // two A buffers (the token stage's layout, its rows at c * 64), the next
  // chunk's while this one's eight SS wgmmas run: lanes t = 0..3 of a quad
  // hold 16 bytes of row lrow (words 4t..4t+3, physical K 32t..32t+31, as
  // they copied them) and write fp16x2 t of each of the row's sixteen
  // 16-byte units, the token pass's order (wg_decode_words), four bytes at
  // a time (eight rows per warp store: one wavefront). Its copies are its
  // own, so only the stores need a barrier before the wgmmas read them.
  if constexpr (NW == 128) {
    // WG_STAMP: consumers 0 and 1's first threads mark the chunk (kinds
    // 5-8, consumer 1's 7 higher; stamps.py --staged): its wgmmas issued,
    // the previous chunk's done, the next chunk's copies landed, its
    // decode done.
    auto mark = [&](int kind) {
      if (WG_STAMP && c < 2 && (tid & 127) == 0) wg_stamp(kind + 7 * c, q);
    };
    auto abuf = [&](int i) { return sbase + WG_OFF_ASTG + (i & 1) * WG_ASTG_STAGE; };
    auto decode_a = [&](int kc, fg_u32 a) {
      const int slot = wg_ring_slot(kc);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = lrow(0, h);
        fg_u32 x[4];
        wg_lds128(sbase + WG_OFF_WRAW + slot * WG_WRAW_STAGE + r * 64 + 16 * t, x[0], x[1], x[2], x[3]);
        const fg_u32 sc = wg_lds32(sbase + WG_OFF_WSC + slot * WG_WSC_STAGE + r * 16 + 4 * t) >> (16 * (t & 1));
        const fg_u32 s0 = wg_wscale<0>(sc), s1 = wg_wscale<1>(sc);
#pragma unroll
        for (int u = 0; u < 16; ++u) {
          const fg_u32 v = (u & 3) == 0   ? wg_dec<0>(x[u >> 2])
                           : (u & 3) == 1 ? wg_dec<1>(x[u >> 2])
                           : (u & 3) == 2 ? wg_dec<2>(x[u >> 2])
                                          : wg_dec<3>(x[u >> 2]);
          wg_sts32(wg_chunk_addr(a, r, u) + 4 * t, wg_hmul2(v, u < 8 ? s0 : s1));
        }
      }
      // The wgmmas read these stores through the async proxy, after every
      // thread of this warpgroup has made them.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
    };
    decode_a(k0, abuf(0));
    for (int it = k0; it < k1; ++it, ++q) {
      int st;
      const fg_u32 tok = tokens(st);
      const fg_u32 a = abuf(it - k0) + c * 64 * 128; // this consumer's rows
#pragma unroll
      for (int j = 0; j < 8; ++j) wg_mma_ss128(acc[0], wg_tdesc(a, j), wg_tdesc(tok, j));
      wg_commit();
      mark(5);
      release_prev(); // chunk it-1's wgmmas done: its stage and A buffer are free
      mark(6);
      if (it + WG_LA < k1) load(it + WG_LA);
      wg_cp_commit();
      if (it + 1 < k1) {
        wg_cp_wait<WG_LA - 1>(); // chunk it + 1 landed
        mark(7);
        decode_a(it + 1, abuf(it + 1 - k0));
        mark(8);
      }
      prev = st;
    }
  }
#elif WG_DB
  // Two whole-chunk fragment sets, F0 and F1, used in turn: chunk it's
  // eight wgmmas go out as one commit group from one set, then (once chunk
  // it-1's group, which read the other set, is done) the next chunk is
  // decoded into the other set while they run. The loop body is written
  // twice (it even, it odd) so that every set index is a constant and the
  // sets stay in registers.
  fg_u32 f0[WG_MB][2][4][4], f1[WG_MB][2][4][4];
  auto frags = [&](int kc, fg_u32 n, fg_u32 (&f)[WG_MB][2][4][4]) {
    frags_x(kc, n);
    if (WG_PW) wfree(n);
    frags_y();
#pragma unroll
    for (int b = 0; b < WG_MB; ++b)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          f[b][0][j][i] = xa[b][j][i];
          f[b][1][j][i] = ya[b][j][i];
        }
  };
  auto chunk = [&](int it, fg_u32 (&cur)[WG_MB][2][4][4], fg_u32 (&nxt)[WG_MB][2][4][4]) {
    int st;
    const fg_u32 tok = tokens(st);
#pragma unroll
    for (int b = 0; b < WG_MB; ++b)
#pragma unroll
      for (int j = 0; j < 8 && !(WG_EXP & 4); ++j)
        wg_mma<NW>(acc[b], cur[b][j >> 2][j & 3], wg_tdesc(tok, j));
    wg_commit();
    release_prev(); // chunk it-1 done: nxt and its stage are free
    if (!WG_PW) {
      if (it + WG_LA < k1) load(it + WG_LA);
      wg_cp_commit();
    }
    if (it + 1 < k1) {
      if (WG_PW)
        wland(q + 1);
      else if (!(WG_EXP & 64))
        wg_cp_wait<WG_LA - 1>(); // chunk it + 1 landed
      frags(it + 1, q + 1, nxt);
    }
    prev = st;
    ++q;
  };
  frags(k0, q, f0);
  for (int it = k0; it < k1; it += 2) {
    chunk(it, f0, f1);
    if (it + 1 < k1) chunk(it + 1, f1, f0);
  }
#else
  // WG_STAMP: consumers 0-2's first threads mark their way through each
  // chunk (kinds 5-11 below; consumer 1's 7 higher, consumer 2's 21).
  auto mark = [&](int kind) {
    if (WG_STAMP && c < 3 && (tid & 127) == 0) wg_stamp(kind + (c < 2 ? 7 * c : 21), q);
  };
  // WG_PP: the two dual consumers take turns issuing halves (consumer 1
  // after consumer 0's same half, consumer 0 after consumer 1's previous),
  // so one decodes while the other's wgmmas go out. Per block each arrives
  // as often as the other waits: consumer 0 skips its wait before the
  // block's first half, consumer 1 its arrival after the block's last.
  auto turn = [&](bool firsthalf) {
    if (!WG_PP) return;
    if (c == 1) {
      wg_named_sync(WG_PP_ID);
    } else if (!(first && firsthalf)) {
      wg_named_sync(WG_PP_ID + 1);
    }
  };
  auto pass = [&](bool lasthalf) {
    if (!WG_PP) return;
    if (c == 0) {
      wg_named_arrive(WG_PP_ID);
    } else if (!(!more && lasthalf)) {
      wg_named_arrive(WG_PP_ID + 1);
    }
  };
  frags_x(k0, q);
  if (WG_PW) wfree(q);
  for (int it = k0; it < k1; ++it, ++q) {
    int st;
    const fg_u32 tok = tokens(st);
    turn(it == k0);
#pragma unroll
    for (int b = 0; b < WG_MB; ++b)
#pragma unroll
      for (int j = 0; j < 4 && !(WG_EXP & 4) && !((WG_EXP & 16) && c != 0); ++j)
        wg_mma<NW>(acc[b], xa[b][j], wg_tdesc(tok, j));
    wg_commit();
    pass(false);
    mark(5);
    release_prev(); // Y of the previous chunk done: ya and its stage are free
    mark(6);
    frags_y();
    wg_fence();
    mark(7);
    turn(false);
#pragma unroll
    for (int b = 0; b < WG_MB; ++b)
#pragma unroll
      for (int j = 0; j < 4 && !(WG_EXP & 4) && !((WG_EXP & 16) && c != 0); ++j)
        wg_mma<NW>(acc[b], ya[b][j], wg_tdesc(tok, 4 + j));
    wg_commit();
    pass(it + 1 == k1);
    mark(8);
    wg_wait<1>(); // X of this chunk done: xa is free
    mark(9);
    if (WG_SK && it == k0 + 1) skt_flush();
    if (!WG_PW) {
      if (it + WG_LA < k1) load(it + WG_LA);
      wg_cp_commit();
    }
    if (WG_TWE && it + 1 < k1) landed = wg_bar_test(full0 + 8 * ((q + 1) % STAGES), ((q + 1) / STAGES) & 1);
    if (it + 1 < k1) {
      if (WG_PW)
        wland(q + 1);
      else if (!(WG_EXP & 64))
        wg_cp_wait<WG_LA - 1>(); // chunk it + 1 landed
      mark(10);
      frags_x(it + 1, q + 1);
      if (WG_PW) wfree(q + 1);
      mark(11);
    }
    prev = st;
  }
#endif
#if WG_PF
  // Every copy of this piece has landed (its last chunk is decoded), so the
  // ring is free: the next piece's first chunks go in now, under this
  // piece's last wgmmas and its epilogue, in WG_LA commit groups as the
  // prologue above would issue them.
  wg_cp_wait<0>();
  if (more) {
    FgTile nt;
    FgGroup ng;
    int nk0, nk1;
    next(nt, ng, nk0, nk1);
#pragma unroll
    for (int s = 0; s < WG_LA; ++s) {
      if (nk0 + s < nk1) load_of(nt.n0, ng, nk0 + s);
      wg_cp_commit();
    }
  }
#endif
  wg_wait<0>();
  boundary_mark(19);
#if WG_SK
  // Released at the latest here; the barrier orders the issuing thread's
  // wait (the engine has read the staging buffer) before the epilogue's
  // and the hand-over's writes to it.
  skt_flush();
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
#endif
#if WG_TL
  if (c == 0 && (tid & 127) == 0) wg_tl_mark(3); // the last piece's, in the end
#endif
  // The accumulators are register outputs of the wgmma asm statements, so
  // nothing stops the compiler from moving arithmetic on them (the epilogue's
  // conversions are plain asm) above the wait, while the tensor cores still
  // write them. This empty asm "redefines" each one after the wait and
  // keeps every later read below it (CUTLASS fences its accumulators the
  // same way).
#pragma unroll
  for (int b = 0; b < WG_MB; ++b)
#pragma unroll
    for (int i = 0; i < NW / 2; ++i) asm volatile("" : "+f"(acc[b][i])::"memory");
#if WG_FOLD
  if (prev >= 0) release(prev);
#else
  if (prev >= 0) wg_bar_arrive(empty0 + 8 * prev);
#endif
#if !WG_PF
  wg_cp_wait<0>();
#endif
#if WG_SK
  {
    // Partial sums, laid out [slot][consumer][value][thread]: coalesced.
    const int lt = tid & 127;
    float* const flat = &acc[0][0];
    // A piece that starts mid-tile publishes its sums, the owner finishes
    // the tile; under WG_SKM_ON a middle piece first takes its partner.
    if (!WG_SKM_ON && k0 > 0) {
      wg_sk_publish<F>(flat, sk, sgen, sbase, c, lt, more, pend);
      return;
    }
    // An owner (or, WG_SKM_ON, a middle piece) adds its partners' sums;
    // for any other piece last == blockIdx.x.
    if constexpr (SKA >= SKP) {
      if (last > (int)blockIdx.x) {
        // Every consumer's mainloop is over (each has waited for its last
        // wgmmas), so the token stages are free for the partners' sums.
        asm volatile("bar.sync %0, %1;\n" ::"n"(WG_SKT_ID), "n"(128 * WG_CONS) : "memory");
        const fg_u32 land = sbase + c * SKA;
        const float* const landg = (const float*)(sgen + c * SKA);
        // wg_ep_bar's address, spelled out: through the helper one instruction
        // of the group's measured hybrid module moves (dev/ptxloop).
        const fg_u32 bar = sbase + WG_OFF_EP + c * WG_EP_BYTES + WG_EP_BYTES - 16;
        // The producer took partner last's flag and loads the first half of
        // its sums into this consumer's staging buffer (wg_skep_piece).
        const bool early = skep_on && wg_skep_piece(k0, k1, last, first);
        if (lt == 0 && !early) wg_bar_init(bar, 1); // early: the producer initialized it
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
        int ph = 0;
        if constexpr (skep_on) {
          if (early) {
            // The second half goes to the token stages while the first is added.
            wg_bar_wait(bar, 0);
            if (lt == 0) {
              wg_bar_expect(bar, SKP / 2);
              wg_bulk_load(land, wg_sk_slot(sk, last, c) + F / 2 * 128, SKP / 2, bar);
            }
            const float* const epg = (const float*)wg_ep(sgen, c);
#pragma unroll
            for (int i = 0; i < F / 2; ++i) flat[i] += epg[i * 128 + lt];
            wg_bar_wait(bar, 1);
#pragma unroll
            for (int i = 0; i < F / 2; ++i) flat[F / 2 + i] += landg[i * 128 + lt];
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); // read out before the next loads
            // Two phases done: the next wait is on parity 0 again (ph).
          }
        }
        const int lastw = early ? last - 1 : last; // the partners taken whole here
        for (int s0 = blockIdx.x + 1; s0 <= lastw; s0 += SKA / SKP) {
          const int n = lastw + 1 - s0 < SKA / SKP ? lastw + 1 - s0 : SKA / SKP;
          if (lt == 0) {
            for (int j = 0; j < n; ++j) wg_sk_take(wg_sk_flag(sk, s0 + j, c));
            asm volatile("fence.proxy.async.global;\n" ::: "memory");
            wg_bar_expect(bar, n * SKP);
            for (int j = 0; j < n; ++j)
              wg_bulk_load(land + j * SKP, wg_sk_slot(sk, s0 + j, c), SKP, bar);
          }
          wg_bar_wait(bar, ph);
          ph ^= 1;
          for (int j = 0; j < n; ++j) {
#pragma unroll
            for (int i = 0; i < F; ++i) flat[i] += landg[(j * F + i) * 128 + lt];
          }
          asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); // read out before the next loads
        }
        if (lt == 0) asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
      }
    } else
      // One partner's sums do not fit the token stages (the group's
      // 256-row tile): 4-byte loads.
      for (int s = blockIdx.x + 1; s <= last; ++s) {
        if (lt == 0) wg_sk_take(wg_sk_flag(sk, s, c));
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
        const float* const src = wg_sk_slot(sk, s, c);
#pragma unroll
        for (int i = 0; i < F; ++i) flat[i] += wg_ld_cg(src + i * 128 + lt);
      }
    if (WG_SKM_ON && k0 > 0) {
      wg_sk_publish<F>(flat, sk, sgen, sbase, c, lt, more, pend);
      return; // the owner finishes the tile
    }
  }
#endif

  // acc holds the sums times 1 / WG_ACC_SCALE; osc scales them back while staging.
  float osc = WG_ACC_SCALE;
  int half = -1; // WG_EPI: the half of the tile's tokens this consumer stores (-1: all)
#if DUAL && WG_EPI
  {
    const int cl = c % WG_HALF;
    half = c / WG_HALF;
    float* const mine = (float*)(sgen + WG_OFF_EP + c * WG_EP_BYTES);
    const float* const theirs = (const float*)(sgen + WG_OFF_EP + (half ? cl : cl + WG_HALF) * WG_EP_BYTES);
    if (half == 0)
      wg_gate_half<0, NW>(acc, mine, theirs, tid & 127, WG_XFULL(cl));
    else
      wg_gate_half<1, NW>(acc, mine, theirs, tid & 127, WG_XFULL(cl));
    osc = 1.f;
  }
#elif DUAL
  {
    // Consumer cl + WG_HALF (B2) hands its sums to consumer cl (B1, the
    // same output columns) in 2*WG_MB rounds of NW/4 floats per thread
    // through its staging buffer (NW * 128 bytes per round fit in
    // WG_EP_BYTES), laid out [value][thread]: conflict-free.
    constexpr int R = NW / 4;
    const int cl = c % WG_HALF;
    float* const xch = (float*)(sgen + WG_OFF_EP + (cl + WG_HALF) * WG_EP_BYTES);
    const int lt = tid & 127;
#pragma unroll
    for (int r = 0; r < 2 * WG_MB; ++r) {
      const int b = r >> 1, i0 = (r & 1) * R;
      if (c / WG_HALF == 1) {
        if (!(first && r == 0)) wg_named_sync(WG_XEMPTY(cl)); // consumer cl has read the last round
#pragma unroll
        for (int i = 0; i < R; ++i) xch[i * 128 + lt] = acc[b][i0 + i];
        wg_named_arrive(WG_XFULL(cl));
      } else {
        wg_named_sync(WG_XFULL(cl));
#pragma unroll
        for (int i = 0; i < R; ++i)
          acc[b][i0 + i] = wg_silu(acc[b][i0 + i] * WG_ACC_SCALE) * (xch[i * 128 + lt] * WG_ACC_SCALE);
        if (more || r + 1 < 2 * WG_MB) wg_named_arrive(WG_XEMPTY(cl));
      }
    }
    if (c / WG_HALF == 1) return; // consumer cl stores the gated tile
    osc = 1.f;
  }
#endif
  // Epilogue: stage this warpgroup's 64*WG_MB weight columns of the tile as
  // fp16 [token][weight], then 16-byte stores of the rows of C that exist.
  fg_u8* ep = sgen + WG_OFF_EP + c * WG_EP_BYTES;
#if WG_STM
  {
    // stmatrix.x4.trans over token groups j, j + 1: matrix q of the four is
    // weights g + 8 (q & 1) by tokens 8 (j + q / 2) + {2t, 2t + 1}, this
    // thread's two values per matrix packed low token first; lane L gives
    // the address of row L % 8 (token 8 (j + L / 16) + L % 8) of matrix
    // L / 8 (weights b*64 + 16w + 8 ((L / 8) & 1), 16 bytes).
    const fg_u32 ep0 = wg_smem_addr(ep) + (8 * (lane >> 4) + (lane & 7)) * WG_EP_STRIDE + (16 * w + 8 * ((lane >> 3) & 1)) * 2;
#pragma unroll
    for (int b = 0; b < WG_MB; ++b)
#pragma unroll
      for (int j = 0; j < NW / 8; j += 2) {
        if (half >= 0 && j / (NW / 16) != half) continue;
        fg_u32 r[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int i = 4 * (j + q / 2) + 2 * (q & 1);
          asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r[q]) : "f"(acc[b][i + 1] * osc), "f"(acc[b][i] * osc));
        }
        asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                         ep0 + 8 * j * WG_EP_STRIDE + b * 128),
                     "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                     : "memory");
      }
  }
#else
#pragma unroll
  for (int b = 0; b < WG_MB; ++b)
#pragma unroll
    for (int j = 0; j < NW / 8; ++j) {
      if (half >= 0 && j / (NW / 16) != half) continue;
      const int n = b * 64 + 16 * w + g;
      const int m = 8 * j + 2 * t;
      fg_u16* row0 = (fg_u16*)(ep + m * WG_EP_STRIDE);
      fg_u16* row1 = (fg_u16*)(ep + (m + 1) * WG_EP_STRIDE);
      row0[n] = wg_f2h(acc[b][4 * j + 0] * osc);
      row1[n] = wg_f2h(acc[b][4 * j + 1] * osc);
      row0[n + 8] = wg_f2h(acc[b][4 * j + 2] * osc);
      row1[n + 8] = wg_f2h(acc[b][4 * j + 3] * osc);
    }
#endif
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
  boundary_mark(20);
  const int nb = tile.n0 + (DUAL ? c % WG_HALF : c) * WG_MB * 64; // first output column of this warpgroup
  constexpr int CPR = WG_MB * 8;           // 16-byte units per staged row
  const int r0 = half > 0 ? NW / 2 : 0, nr = half >= 0 ? NW / 2 : NW; // the staged rows this warpgroup stores
  for (int i = tid & 127; i < nr * CPR; i += 128) {
    const int r = r0 + i / CPR, u = i % CPR;
    const int m = tile.m0 + r, n = nb + u * 8;
    if (m < M && n < N) {
      fg_u32 x, y, z, v;
      wg_lds128(wg_smem_addr(ep + r * WG_EP_STRIDE + u * 16), x, y, z, v);
      fg_u32* dst = (fg_u32*)(gp.c + (size_t)m * N + n);
      asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"l"(dst), "r"(x), "r"(y), "r"(z), "r"(v) : "memory");
    }
  }
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); // staging reused by the next tile
  boundary_mark(21);
}

// Producer: the ring of raw FP4 rows (tokens=block: token rows; WG_SSA:
// weight rows): this thread's rows r = tid, tid + 128, ... below nrows of
// chunks [k0, k1) are copied by cp.async (bytes(r, kc, ok) gives row r's
// bytes of chunk kc and whether the row exists, scales(r, kc) its scale
// bytes; rows that do not exist decode to zeros), and once the chunk's ring stage is free
// each is decoded into the stage at dst(st), after before(st, it) (WG_SSA:
// the chunk's token copy). The full barrier gets this thread's arrival.
template <class Bytes, class Scales, class Dst, class Before>
static __device__ __forceinline__ void wg_rows_ring(fg_u32 sbase, fg_u32 full0, fg_u32 empty0, int tid, fg_u32& q,
                                                  int k0, int k1, int nrows, const Bytes& bytes, const Scales& scales,
                                                  const Dst& dst, const Before& before) {
  auto load = [&](int kc) {
    if (WG_EXP & 8) return;
    const int slot = wg_ring_slot(kc);
#pragma unroll
    for (int r = tid; r < nrows; r += 128) {
      bool ok;
      const fg_u8* src = bytes(r, kc, ok);
      const fg_u32 dst = sbase + WG_OFF_TRAW + slot * WG_TRAW_STAGE + r * WG_TROWB;
#pragma unroll
      for (int j = 0; j < 4; ++j) wg_cp16(dst + 16 * j, src + 16 * j, ok ? 16u : 0u);
      wg_cp8(sbase + WG_OFF_TSC + slot * WG_TSC_STAGE + r * 8, scales(r, kc), ok ? 8u : 0u);
    }
  };
#pragma unroll
  for (int s = 0; s < WG_RS - 1; ++s) {
    if (k0 + s < k1) load(k0 + s);
    wg_cp_commit();
  }
  for (int it = k0; it < k1; ++it, ++q) {
    if (it + WG_RS - 1 < k1) load(it + WG_RS - 1);
    wg_cp_commit();
    wg_cp_wait<WG_RS - 1>(); // this thread's copies of chunk it have landed
    const int st = q % STAGES;
    wg_bar_wait(empty0 + 8 * st, ((q / STAGES) & 1) ^ 1);
    before(st, it);
    const int slot = wg_ring_slot(it);
#pragma unroll
    for (int r = tid; r < nrows && !(WG_EXP & 9); r += 128)
      wg_decode_row(sbase + WG_OFF_TRAW + slot * WG_TRAW_STAGE + r * WG_TROWB,
                    sbase + WG_OFF_TSC + slot * WG_TSC_STAGE + r * 8, dst(st), r);
    // The consumers' wgmma reads these rows through the async proxy.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    wg_bar_arrive(full0 + 8 * st);
  }
  wg_cp_wait<0>();
}

// WG_PW: the producer warpgroup's warps 1-3 (u = tid - 32, 0..95) fill the
// weight ring for every chunk of the block's pieces, in the consumers'
// order: slot n % WG_RS of the block's n-th chunk, once the consumers have
// given it back. Four threads per row, as the consumers copied them (lane
// quad t: raw bytes 16t..16t+15 at row * 64 + 16t, the scale word of lane t
// at row * 16 + 4t), so each copy instruction of a warp covers eight whole
// 64-byte rows; a thread's rows are u / 4, + 24, ... in a loop that is not
// unrolled, its addresses computed per row. (docs/kernel-notes.md step 28:
// one thread per row issued four times the requests per row, and the same
// rows unrolled with their addresses kept spilled the producer's 32 or 56
// registers, 0.34-0.42x.) Each thread's copies complete on the slot's full
// barrier (cp.async.mbarrier.arrive.noinc: WG_PW_THREADS arrivals).
template <class Fetch>
static __device__ __forceinline__ void wg_weights_ring(int num_tiles, int kch, const Fetch& fetch, fg_u32 sbase, int u) {
  constexpr int RPP = WG_PW_THREADS / 4; // rows per pass
  const fg_u32 wfull0 = sbase + WG_OFF_WBAR, wempty0 = wfull0 + 8 * WG_RS;
  const int t = u & 3, r0 = u >> 2;
  fg_u32 n = 0;
  wg_pieces(nullptr, num_tiles, kch, [&](const WgPiece& p, bool, const WgPiece&) { // equal ranges: WG_RANGES refuses WG_PW
    FgTile tile;
    FgGroup g, g2;
    fetch(p.t, tile, g, 0);
    if (DUAL) fetch(p.t, tile, g2, WG_HALF); // the dual GEMM's B2 (the same tile)
    const fg_u8* const w2 = DUAL ? g2.b : nullptr;
    const fg_u8* const s2 = DUAL ? g2.sb : nullptr;
    const fg_u32 rowb = (fg_u32)(g.k >> 1), srow = (fg_u32)(g.k >> 4);
    // Rows [lo, hi) of the tile from weights w (scales sc), weight row
    // n0 + r - lo for tile row r: this thread's r = r0 (mod RPP).
    auto span = [&](int lo, int hi, const fg_u8* w, const fg_u8* sc, int kc, int slot) {
      const fg_u32 dw = sbase + WG_OFF_WRAW + slot * WG_WRAW_STAGE + 16 * t;
      const fg_u32 ds = sbase + WG_OFF_WSC + slot * WG_WSC_STAGE + 4 * t;
      w += kc * 64 + 16 * t;
      sc += kc * 8 + 4 * (t >> 1);
      const int nb = tile.n0 - lo;
#pragma unroll 1
      for (int r = r0 + (lo > r0 ? (lo - r0 + RPP - 1) / RPP * RPP : 0); r < hi; r += RPP) {
        const bool ok = nb + r < g.n;
        const fg_u32 nn = ok ? (fg_u32)(nb + r) : 0u;
        wg_cp16(dw + r * 64, w + (size_t)nn * rowb, ok ? 16u : 0u);
        wg_cp4(ds + r * 16, sc + (size_t)nn * srow, ok ? 4u : 0u);
      }
    };
    for (int kc = p.k0; kc < p.k1; ++kc, ++n) {
      const int slot = n % WG_RS;
      wg_bar_wait(wempty0 + 8 * slot, ((n / WG_RS) & 1) ^ 1);
      if (DUAL) {
        // The first WG_HALF consumers' rows from B1, the others' (the same
        // output rows) from B2.
        constexpr int H = WG_HALF * WG_MB * 64;
        span(0, H, g.b, g.sb, kc, slot);
        span(H, TILE_N, w2, s2, kc, slot);
      } else {
        span(0, TILE_N, g.b, g.sb, kc, slot);
      }
      asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(wfull0 + 8 * slot) : "memory");
    }
  });
  wg_cp_wait<0>(); // none of this thread's copies outlives it
}

// The kernel body of both entries: fetch(ti, tile, gp, role) gives tile ti
// and its problem as role sees it (-1 producer, 0.. the consumers: the
// dual GEMM's consumers WG_HALF.. see B2 as their weights).
// tok: the tokens decoded ahead (WG_TOK 1), stage (tile.pad, chunk) at
// tok + (tile.pad * kch + chunk) * WG_TOK_STAGE; unused otherwise.
#if WG_TOK
// Token tile tt's group (token tiles numbered group by group) and, in t0,
// the group's first token tile: the decode-ahead pass's lookup.
static __device__ __forceinline__ int wg_token_group(const FgGroup* groups, int ng, int tt, int& t0) {
  int g = 0, t = 0;
  for (; g + 1 < ng; ++g) {
    const int n = (groups[g].m + WG_TM - 1) / WG_TM;
    if (tt < t + n) break;
    t += n;
  }
  t0 = t;
  return g;
}
// The raw FP4 words and scales of K chunk kc of token row m of gp (zeros
// past its M): 4 x W words, W of each 16-byte unit of the row's 64 bytes
// (a whole row, W = 4, or the token pass's half h of it, W = 2 from byte
// 8h of each unit), and the chunk's 8 scale bytes.
template <int W>
static __device__ __forceinline__ void wg_token_words(const FgGroup& gp, int m, int K, int kc, int h,
                                                      fg_u32 (&w)[4 * W], fg_u32& s03, fg_u32& s47) {
  s03 = 0u;
  s47 = 0u;
#pragma unroll
  for (int j = 0; j < 4 * W; ++j) w[j] = 0u;
  if (m < gp.m) {
    const fg_u8* src = gp.a + (size_t)m * (K >> 1) + kc * 64 + (W == 4 ? 0 : 8 * h);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if constexpr (W == 4)
        asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(w[4 * j]), "=r"(w[4 * j + 1]), "=r"(w[4 * j + 2]), "=r"(w[4 * j + 3])
                     : "l"(src + 16 * j));
      else
        asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];\n" : "=r"(w[2 * j]), "=r"(w[2 * j + 1]) : "l"(src + 16 * j));
    }
    asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];\n"
                 : "=r"(s03), "=r"(s47)
                 : "l"(gp.sa + (size_t)m * (K >> 4) + kc * 8));
  }
}
// A whole row's words, as the prologue's decode takes them.
static __device__ __forceinline__ void wg_token_row(const FgGroup& gp, int m, int K, int kc, fg_u32 (&w)[16],
                                                    fg_u32& s03, fg_u32& s47) {
  wg_token_words<4>(gp, m, K, kc, 0, w, s03, s47);
}
// The token pass's half of wg_token_row: the raw words wg_decode_half
// takes for 64-K block h of K chunk kc of token row m (zeros past its M).
static __device__ __forceinline__ void wg_token_half(const FgGroup& gp, int m, int K, int kc, int h,
                                                     fg_u32 (&w)[8], fg_u32& s03, fg_u32& s47) {
  wg_token_words<2>(gp, m, K, kc, h, w, s03, s47);
}
#endif

#if WG_PRO
// WG_PRO's module globals: this launch's epoch is wg_pro_epoch + 1 (the
// value a stage's flag holds once it is written), wg_pro_cnt the blocks
// whose prologue is done, wg_pro_left the blocks that have ended; the last
// to end advances the epoch and zeroes the counts for the next launch.
__device__ unsigned wg_pro_epoch, wg_pro_cnt, wg_pro_left;

// The prologue of block blockIdx.x: its warpgroups decode token stages in
// chunk-major order, the grid's round j covering the next G x PW of them,
// each warpgroup through its own scratch stage at the start of shared
// memory (nothing else uses it before the roles start); the decode is
// wg_tokens', a row per thread and round of 128 rows.
static __device__ __forceinline__ void wg_prologue(const FgGroup* groups, int ng, fg_u8* out, fg_u32 sbase,
                                                   int tid, fg_u32 epoch, fg_u32* flags) {
  // Warpgroups with a scratch stage: all of them, where the stages fit
  // below the barriers.
  constexpr int W = FG_THREADS / 128;
  constexpr int PW = WG_OFF_BAR / WG_TOK_STAGE < W ? WG_OFF_BAR / WG_TOK_STAGE : W;
  const int w = tid >> 7, lt = tid & 127;
  if (w >= PW) return;
  const int K = groups[0].k, kch = K >> 7;
  int tiles = 0;
  for (int g = 0; g < ng; ++g) tiles += (groups[g].m + WG_TM - 1) / WG_TM;
  const int S = tiles * kch, G = gridDim.x;
  const fg_u32 stage = sbase + w * WG_TOK_STAGE;
  for (int s = blockIdx.x * PW + w; s < S; s += G * PW) {
    const int kc = s / tiles, tt = s % tiles, u = tt * kch + kc;
    int t0;
    const FgGroup gp = groups[wg_token_group(groups, ng, tt, t0)];
    for (int r = lt; r < WG_TM; r += 128) {
      fg_u32 wd[16], s03, s47;
      wg_token_row(gp, (tt - t0) * WG_TM + r, K, kc, wd, s03, s47);
      wg_decode_words(wd, s03, s47, stage, r);
    }
    // The bulk copy reads the stage through the async proxy; its bytes
    // written, the flag releases them to the other blocks' producers.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory");
    if (lt == 0) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(out + (size_t)u * WG_TOK_STAGE),
                   "r"(stage), "n"(WG_TOK_STAGE)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
      asm volatile("fence.proxy.async.global;\n" ::: "memory");
      wg_st_release(flags + u, epoch);
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + w) : "memory"); // the next stage overwrites this one
  }
}

// The producer's wait for stage u (WG_PRO): its flag's epoch, acquired
// only until every block has counted its prologue done (all then set).
static __device__ __forceinline__ void wg_pro_wait(const fg_u32* flags, int u, fg_u32 epoch, bool& all) {
  if (all) return;
  if (wg_ld_acquire(&wg_pro_cnt) >= gridDim.x) {
    all = true;
  } else {
    while (wg_ld_acquire(flags + u) != epoch) {
    }
  }
  asm volatile("fence.proxy.async.global;\n" ::: "memory"); // the stage's bytes before the copy reads them
}
#endif

// The stream-K ranges' table where wg_main's sk is in scope (WG_RANGES).
#define WG_RNG wg_ranges_of(sk)
template <class Fetch>
static __device__ __forceinline__ void wg_main(int num_tiles, const Fetch& fetch, const WgStream& sk,
                                               const fg_u8* tok) {
  extern __shared__ __attribute__((aligned(1024))) fg_u8 wg_smem[];
  const fg_u32 raw_base = wg_smem_addr(wg_smem);
  const fg_u32 sbase = (raw_base + 1023u) & ~1023u;
  fg_u8* const sgen = wg_smem + (sbase - raw_base);
  const int tid = threadIdx.x;
#if WG_TL
  if (tid == 0) {
    wg_tl_mark(0);
    if (blockIdx.x < WG_TL_BLOCKS) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      wg_tl_sm[blockIdx.x] = sm;
    }
    if (blockIdx.x == 0) atomicAdd(&wg_tl_launch, 1u);
  }
#endif
#if WG_STAMP
  // Block 0's SM clock against the global timer over the whole block: the
  // clock rate the stamps' cycles ran at.
  fg_u64 c0 = clock64(), g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  // This launch's number: block 0 counts the module's launches as it starts.
  const fg_u32 nl = blockIdx.x == 0 && tid == 0 ? atomicAdd(&wg_stamp_launch, 1u) : 0u;
#endif
#if WG_PRO
  const fg_u32 pro_epoch = *(volatile fg_u32*)&wg_pro_epoch + 1u;
  wg_prologue(sk.pro_groups, sk.pro_ng, (fg_u8*)tok, sbase, tid, pro_epoch, sk.pro_flags);
  __syncthreads();
  if (tid == 0) {
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;\n" ::"l"(&wg_pro_cnt) : "memory");
  }
  bool pro_all = false; // the producer: every stage known written
#endif
  const fg_u32 full0 = sbase + WG_OFF_BAR;
  const fg_u32 empty0 = full0 + STAGES * 8;
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      // WG_TOK: one arrival with the copy's bytes; WG_SSA: and the 128
      // decoding producer threads'.
      wg_bar_init(full0 + 8 * s, WG_SSA ? 129 : WG_TOK ? 1 : 128);
#if WG_FOLD
      *(fg_u32*)(sgen + WG_OFF_BAR + (STAGES + s) * 8) = 0u; // release count (wg_consume)
#else
      wg_bar_init(empty0 + 8 * s, 128 * WG_CONS);
#endif
    }
#if WG_PW
#pragma unroll
    for (int s = 0; s < WG_RS; ++s) {
      wg_bar_init(sbase + WG_OFF_WBAR + 8 * s, WG_PW_THREADS);                   // full: the copiers' arrivals
      wg_bar_init(sbase + WG_OFF_WBAR + 8 * (WG_RS + s), 4 * WG_CONS); // empty: every consumer warp
    }
#endif
  }
  __syncthreads();

  fg_u32 q = 0; // chunks through the decoded ring so far (same count in every role)
  // Chunks per tile: one K for all groups (the problems have one K per shape).
  int kch;
  {
    FgTile t0;
    FgGroup g0;
    fetch(0, t0, g0, -1);
    kch = g0.k >> 7;
  }
  // The role, warp-uniform as far as ptxas can tell (setmaxnreg must be
  // reached by whole warpgroups).
  const int role = __shfl_sync(0xffffffffu, tid >> 7, 0);
  if (!WG_FOLD && role == 0) {
    // ---------------- producer warpgroup: token rows ----------------
#if WG_CREGS
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(WG_PREGS));
#endif
#if WG_SSA
    // Every producer thread decodes one weight row per chunk (the tile's
    // 128 rows; the dual GEMM: rows 0-63 of the tile's B1 rows, 64-127 the
    // same rows of B2) from a cp.async ring of raw
    // rows into the chunk's weight stage, as the token pass decodes token
    // rows; thread 0 also streams the chunk's decoded tokens in. The stage's
    // full barrier counts the copy's arrival and the 128 decoders'.
#if WG_PDL
    if (tid == 0) asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
    wg_pieces(WG_RNG, num_tiles, kch, [&](const WgPiece& p, bool, const WgPiece&) {
      FgTile tile;
      FgGroup gp;
      fetch(p.t, tile, gp, DUAL ? tid >> 6 : 0); // dual: consumer 0 sees B1, consumer 1 B2
      const int n = tile.n0 + (DUAL ? tid & 63 : tid);
      const bool ok = n < gp.n;
      const fg_u8* const wsrc = gp.b + (size_t)(ok ? n : 0) * (size_t)(gp.k >> 1);
      const fg_u8* const ssrc = gp.sb + (size_t)(ok ? n : 0) * (size_t)(gp.k >> 4);
      const fg_u8* src = tok + ((size_t)tile.pad * kch + p.k0) * WG_TOK_STAGE;
      wg_rows_ring(
          sbase, full0, empty0, tid, q, p.k0, p.k1, TILE_N, // 128 rows: row tid only, fetched above
          [&](int, int kc, bool& exists) {
            exists = ok;
            return wsrc + kc * 64;
          },
          [&](int, int kc) { return ssrc + kc * 8; },
          [&](int st) { return sbase + WG_OFF_ASTG + st * WG_ASTG_STAGE; },
          [&](int st, int) {
            if (tid == 0) {
              wg_bar_expect(full0 + 8 * st, WG_TOK_STAGE);
              wg_bulk_load(sbase + st * WG_TOK_STAGE, src, WG_TOK_STAGE, full0 + 8 * st);
            }
            src += WG_TOK_STAGE;
          });
    });
#elif WG_TOK
    // One thread streams the decoded stages of its pieces into the ring.
    // Launched overlapped with wg_tokens (WG_PDL) it waits for that grid's
    // writes before the first copy; the consumers meanwhile load and decode
    // their first weight chunks.
    if (tid == 0) {
#if WG_PDL && !WG_RDY
      asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
      wg_tl_mark(1);
#if WG_SKEP_ON
      bool pfirst = true; // as the consumers' first: no piece with k0 == 0 yet
#endif
      wg_pieces(WG_RNG, num_tiles, kch, [&](const WgPiece& p, bool, const WgPiece&) {
        FgTile tile;
        FgGroup gp;
        fetch(p.t, tile, gp, -1);
        const fg_u8* src = tok + ((size_t)tile.pad * kch + p.k0) * WG_TOK_STAGE;
#if WG_SKEP_ON
        // The sums' sizes at the tile's width (WG_FIT is off: NW == WG_TM).
        constexpr int F = WG_SK_FMAX, SKP = F * 512;
        const bool early = WG_SKE_FITS(F) && wg_skep_piece(p.k0, p.k1, p.last, pfirst);
        if (early) {
          // Each consumer's hand-over barrier, before this piece's first
          // token copy: a consumer's wait on that copy orders the init
          // before its own wait on the barrier at the piece's end.
          for (int c = 0; c < WG_CONS; ++c) wg_bar_init(wg_ep_bar(sbase, c), 1);
          asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        }
        if (p.k0 == 0) pfirst = false;
#endif
#if WG_TOKW
        const fg_u32 half = (fg_u32)wg_tile_width(gp.m, tile.m0) * 128u; // one 64-K block's rows that the wgmma reads
#endif
#if WG_RDY
        {
          // The token tile's stages are in global memory once all its
          // wg_tokens blocks have released; the bulk copies read them
          // through the async proxy, so a proxy fence orders them after the
          // acquire. They stay in the workspace until the next launch's
          // wg_tokens, which starts after this grid has ended.
          fg_u32* const done = sk.ready + 2 * (size_t)tile.pad;
          while (wg_ld_acquire(done) != (fg_u32)kch) {
          }
          asm volatile("fence.proxy.async.global;\n" ::: "memory");
          const fg_u32 n = (fg_u32)(p.k1 - p.k0);
          if (atomicAdd(done + 1, n) + n == sk.readers) {
            done[0] = 0u; // the last reader: every other piece has passed its wait
            done[1] = 0u;
          }
        }
#endif
        for (int it = p.k0; it < p.k1; ++it, ++q, src += WG_TOK_STAGE) {
          const int st = q % STAGES;
          wg_bar_wait(empty0 + 8 * st, ((q / STAGES) & 1) ^ 1);
#if WG_STAMP
          wg_stamp(0, q);
#endif
#if WG_PRO
          wg_pro_wait(sk.pro_flags, tile.pad * kch + it, pro_epoch, pro_all);
#endif
          if (WG_EXP & 256) {
            wg_bar_arrive(full0 + 8 * st);
            continue;
          }
#if WG_TOKW
          wg_bar_expect(full0 + 8 * st, 2u * half);
          wg_bulk_load(sbase + st * WG_TOK_STAGE, src, half, full0 + 8 * st);
          wg_bulk_load(sbase + st * WG_TOK_STAGE + WG_TM * 128, src + WG_TM * 128, half, full0 + 8 * st);
#else
          wg_bar_expect(full0 + 8 * st, WG_TOK_STAGE);
          wg_bulk_load(sbase + st * WG_TOK_STAGE, src, WG_TOK_STAGE, full0 + 8 * st);
#endif
        }
#if WG_SKEP_ON
        if (early) {
          // Every token copy of the piece is out; the last partner ran the
          // tile's tail as its block's first piece, so its flag is usually
          // set by now. The consumers wait for these bytes at their end.
          for (int c = 0; c < WG_CONS; ++c) {
            const fg_u32 bar = wg_ep_bar(sbase, c);
            wg_sk_take(wg_sk_flag(sk, p.last, c));
            asm volatile("fence.proxy.async.global;\n" ::: "memory");
            wg_bar_expect(bar, SKP / 2);
            wg_bulk_load(wg_ep(sbase, c), wg_sk_slot(sk, p.last, c), SKP / 2, bar);
          }
        }
#endif
      });
    }
#if WG_PW
    else if (tid >= 32) {
      wg_weights_ring(num_tiles, kch, fetch, sbase, tid - 32);
    }
#endif
#else
    wg_pieces(WG_RNG, num_tiles, kch, [&](const WgPiece& p, bool, const WgPiece&) {
      FgTile tile;
      FgGroup gp;
      fetch(p.t, tile, gp, -1);
      const int M = gp.m, K = gp.k;
      const size_t rowb = (size_t)(K >> 1), srow = (size_t)(K >> 4);
      // The consumers read the first nw rows (the tile's wgmma width: live
      // rows rounded up to 32; rows past M decode to zeros).
      const int nw = wg_tile_width(M, tile.m0);
      wg_rows_ring(
          sbase, full0, empty0, tid, q, p.k0, p.k1, nw,
          [&](int r, int kc, bool& ok) {
            const int m = tile.m0 + r;
            ok = m < M;
            return gp.a + (size_t)(ok ? m : 0) * rowb + kc * 64;
          },
          [&](int r, int kc) {
            const int m = tile.m0 + r;
            return gp.sa + (size_t)(m < M ? m : 0) * srow + kc * 8;
          },
          [&](int st) { return sbase + st * WG_TOK_STAGE; }, [](int, int) {});
    });
#endif
  } else {
    // ---------------- consumer warpgroups: weight rows + wgmma ----------------
#if WG_CREGS
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(WG_CREGS));
#endif
    const int c = WG_FOLD ? role : role - 1;
    // WG_FOLD: block chunk j's token stage into ring stage j % STAGES, which
    // every consumer has released (whole tiles: this block's tiles are b,
    // b + G, ..., kch chunks each); nothing past the block's last chunk.
#if WG_FOLD
    // The refill's cursor: the chunk rr the next release refills its stage
    // with, rr's chunk within its tile and its source. Every warp's lane 0
    // releases every chunk once, in order, so each advances its copy of the
    // cursor by one chunk per release: a pointer increment, and the
    // divisions and the tile lookup once per tile.
    int rr = STAGES, rk = 0;
    const fg_u8* rsrc = nullptr;
    auto seek = [&]() {
      const int ti = (int)blockIdx.x + rr / kch * (int)gridDim.x;
      rk = rr % kch;
      rsrc = nullptr;
      if (ti < num_tiles) {
        FgTile tile;
        FgGroup gp;
        fetch(ti, tile, gp, -1);
        rsrc = tok + ((size_t)tile.pad * kch + rk) * WG_TOK_STAGE;
      }
    };
    seek();
#endif
    // produce(j, ...), j >= 0: chunk j into stage j % STAGES (the first
    // fill). produce(-1, st, issue): the cursor's chunk into stage st if
    // issue (the release was the stage's last), then the cursor moves on.
    auto produce = [&](int j, int st, bool issue) {
#if WG_FOLD
      if (j < 0) {
        if (issue && rsrc != nullptr) {
#if WG_STAMP
          wg_stamp(0, (fg_u32)rr);
#endif
          wg_bar_expect(full0 + 8 * st, WG_TOK_STAGE);
          wg_bulk_load(sbase + st * WG_TOK_STAGE, rsrc, WG_TOK_STAGE, full0 + 8 * st);
        }
        ++rr;
        if (rsrc != nullptr) rsrc += WG_TOK_STAGE; // null past the block's last tile
        if (++rk == kch) seek();
        return;
      }
#endif
      const int ti = (int)blockIdx.x + j / kch * (int)gridDim.x;
      if (!WG_FOLD || ti >= num_tiles) return;
      FgTile tile;
      FgGroup gp;
      fetch(ti, tile, gp, -1);
      st = j % STAGES;
#if WG_STAMP
      wg_stamp(0, (fg_u32)j);
#endif
      wg_bar_expect(full0 + 8 * st, WG_TOK_STAGE);
      wg_bulk_load(sbase + st * WG_TOK_STAGE, tok + ((size_t)tile.pad * kch + j % kch) * WG_TOK_STAGE, WG_TOK_STAGE,
                   full0 + 8 * st);
    };
    bool first = true; // no epilogue hand-off yet (dual GEMM)
    bool warm = false; // WG_PF: this piece's first weight copies already issued
    fg_u32* pend = nullptr; // stream-K: the flag of partial sums not yet released
#if WG_TL
    bool tl_first = true; // WG_TL: the block's first piece
#endif
    wg_pieces(WG_RNG, num_tiles, kch, [&](const WgPiece& p, bool more, const WgPiece& np) {
      const int k0 = p.k0, k1 = p.k1, last = p.last;
#if WG_TL
      if (c == 0 && (tid & 127) == 0) wg_tl_mark(7); // the last piece's entry, in the end
#endif
      FgTile tile;
      FgGroup gp;
      fetch(p.t, tile, gp, c);
      auto next = [&](FgTile& nt, FgGroup& ng, int& nk0, int& nk1) {
        fetch(np.t, nt, ng, c);
        nk0 = np.k0;
        nk1 = np.k1;
      };
      // Warp-uniform dispatch on the tile's wgmma width (live rows rounded up to 32).
      // Keep this a switch: written as `if constexpr (!WG_FIT) wg_consume<WG_TM>
      // ... else switch`, NVRTC 13 folded the dual hand-off's `first` to true
      // (consumer 1 skipped its wait for consumer 0 from the second tile on:
      // wrong sums; docs/kernel-notes.md step 14).  The PTX of this form is
      // the one measured before.
#define WG_CASE(k)                                                                          \
  case k:                                                                                   \
    if constexpr (32 * (k) <= WG_TM && ((32 * (k)) % WG_FITQ == 0 || 32 * (k) == WG_TM)) wg_consume<32 * (k) <= WG_TM ? 32 * (k) : 32>(tile, gp, sbase, sgen, c, tid, full0, empty0, q, k0, k1, last, first, more, sk, warm, next, produce, pend); \
    break;
      switch (wg_tile_width(gp.m, tile.m0) >> 5) {
        WG_CASE(1)
        WG_CASE(2)
        WG_CASE(3)
        WG_CASE(4)
        WG_CASE(8)
        default:
          break;
      }
#undef WG_CASE
#if WG_TL
      if (c == 0 && (tid & 127) == 0) {
        wg_tl_mark(4); // the last piece's, in the end
        if (tl_first) wg_tl_mark(6);
      }
      tl_first = false;
#endif
      if (k0 == 0) first = false;
      warm = WG_PF && more;
    });
#if WG_SK
    if ((tid & 127) == 0 && pend != nullptr) wg_skt_release(pend); // no piece took it (none should remain)
#endif
  }
#if WG_PRO
  // Every role has left its loop; the block that ends last sets up the
  // next launch's epoch.
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    if (atomicAdd(&wg_pro_left, 1u) == gridDim.x - 1u) {
      wg_pro_left = 0u;
      wg_pro_cnt = 0u;
      wg_pro_epoch = pro_epoch;
      __threadfence();
    }
  }
#endif
#if WG_TL
  // Every role has left its loop; the block that ends last prints.
  __syncthreads();
  if (tid == 0) {
    wg_tl_mark(5);
    __threadfence();
    if (atomicAdd(&wg_tl_done, 1u) == gridDim.x - 1u) {
      wg_tl_done = 0u;
      const fg_u32 n = wg_tl_launch - 1u;
      if (n == 2u || n == 30u || n == 60u) wg_tl_print(n, gridDim.x < WG_TL_BLOCKS ? gridDim.x : WG_TL_BLOCKS);
      wg_tl_tokn = 0u; // the next launch's token pass counts its blocks again
    }
  }
#endif
#if WG_STAMP
  // Every role has left its loop (whole tiles only: no early return).
  __syncthreads();
  if (tid == 0) {
    fg_u64 g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    const fg_u64 c1 = clock64();
    // Every block's span on the global timer; the block that ends last in
    // a printed launch prints their spread (block 0 counted the launch as
    // it started, before any block ended).
    if (blockIdx.x < 1024u) {
      wg_spans[0][blockIdx.x] = g0;
      wg_spans[1][blockIdx.x] = g1;
    }
    __threadfence();
    if (atomicAdd(&wg_span_done, 1u) == gridDim.x - 1u) {
      wg_span_done = 0u;
      const fg_u32 n = wg_stamp_launch - 1u;
      if (n == 0u || n == 2u || n == 30u || n == 60u) {
        fg_u64 lo = ~0ull, hi = 0, dmin = ~0ull, dmax = 0, dsum = 0;
        const fg_u32 nb = gridDim.x < 1024u ? gridDim.x : 1024u;
        for (fg_u32 b = 0; b < nb; ++b) {
          const fg_u64 s0 = wg_spans[0][b], s1 = wg_spans[1][b];
          lo = s0 < lo ? s0 : lo;
          hi = s1 > hi ? s1 : hi;
          dmin = s1 - s0 < dmin ? s1 - s0 : dmin;
          dmax = s1 - s0 > dmax ? s1 - s0 : dmax;
          dsum += s1 - s0;
        }
        printf("WGSPAN %u %u %llu %llu %llu %llu %llu %llu %llu\n", n, nb, hi - lo, dmin, dsum / nb, dmax,
               wg_spans[1][0] - wg_spans[0][0], wg_spans[0][0] - lo, hi - wg_spans[1][0]);
      }
    }
    if (blockIdx.x == 0) {
      const fg_u32 n = nl;
      // Launch 0 is the bench's first correctness check, the only launch
      // a timing experiment with wrong sums (WG_EXP) gets.
      const bool print = n == 0u || n == 2u || n == 30u || n == 60u;
      if (print) printf("WGCLOCK %u %llu %llu\n", n, c1 - c0, g1 - g0);
      for (fg_u32 j = 0; print && j < q && j < 512u; ++j)
        printf("WGSTAMP %u %u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
               "%llu %llu %llu %llu %llu %llu\n",
               n, j, wg_stamps[0][j], wg_stamps[1][j], wg_stamps[2][j], wg_stamps[3][j], wg_stamps[4][j],
               wg_stamps[5][j], wg_stamps[6][j], wg_stamps[7][j], wg_stamps[8][j], wg_stamps[9][j], wg_stamps[10][j],
               wg_stamps[11][j], wg_stamps[12][j], wg_stamps[13][j], wg_stamps[14][j], wg_stamps[15][j],
               wg_stamps[16][j], wg_stamps[17][j], wg_stamps[18][j], wg_stamps[19][j], wg_stamps[20][j],
               wg_stamps[21][j], wg_stamps[22][j], wg_stamps[23][j]);
      // printf takes at most 32 arguments: consumer 2's kinds on their own line.
      for (fg_u32 j = 0; print && WG_CONS == 3 && j < q && j < 512u; ++j)
        printf("WGSTAMP2 %u %u %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", n, j, wg_stamps[24][j],
               wg_stamps[25][j], wg_stamps[26][j], wg_stamps[27][j], wg_stamps[28][j], wg_stamps[29][j],
               wg_stamps[30][j], wg_stamps[31][j], wg_stamps[32][j]);
    }
  }
#endif
}

#endif // __CUDA_ARCH_FEAT_SM90_ALL

// overlap=ready's two trailing parameters of both GEMM entries (WG_RDY:
// the ready counts and the chunk reads per token tile), and the stream
// state each entry hands wg_main, null counts without them.
// WG_RANGES appends the ranges' table as a parameter, WG_PRO the number of
// groups and the stages' flags (the dual GEMM passes its one token operand
// as pro_g0).
#if WG_PRO
#define WG_PRO_PARAM , int pro_ng, fg_u32 *__restrict__ pro_flags
#define WG_PRO_FIELD , WG_PRO_GROUPS, pro_ng, pro_flags
#else
#define WG_PRO_PARAM
#define WG_PRO_FIELD
#endif
#if WG_RANGES
#define WG_RANGES_PARAM , const int *__restrict__ ranges WG_PRO_PARAM
#define WG_RANGES_FIELD , ranges WG_PRO_FIELD
#else
#define WG_RANGES_PARAM WG_PRO_PARAM
#define WG_RANGES_FIELD WG_PRO_FIELD
#endif
#if WG_RDY
#define WG_RDY_PARAMS , fg_u32 *__restrict__ ready, unsigned readers WG_RANGES_PARAM
#define WG_STREAM WgStream{ws, flags, ready, readers WG_RANGES_FIELD}
#else
#define WG_RDY_PARAMS WG_RANGES_PARAM
#define WG_STREAM WgStream{ws, flags, nullptr, 0u WG_RANGES_FIELD}
#endif

#if DUAL
extern "C" __global__ void __launch_bounds__(FG_THREADS, 1)
    wg_dual_gemm(const fg_u8* __restrict__ a, const fg_u8* __restrict__ sa, const fg_u8* __restrict__ b1,
                 const fg_u8* __restrict__ sb1, const fg_u8* __restrict__ b2, const fg_u8* __restrict__ sb2,
                 fg_u16* __restrict__ c, int M, int N, int K, float* __restrict__ ws, fg_u32* __restrict__ flags,
                 const fg_u8* __restrict__ tok WG_RDY_PARAMS) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // Tile ti: token tile ti % mt, output columns (ti / mt) * WG_DN: the token
  // tiles that share weight rows run side by side (L2 reuse of B1, B2).
  const int mt = (M + WG_TM - 1) / WG_TM;
  const int num_tiles = mt * ((N + WG_DN - 1) / WG_DN);
#if WG_PRO
  FgGroup pro_g0;
  pro_g0.a = a;
  pro_g0.sa = sa;
  pro_g0.m = M;
  pro_g0.k = K;
#define WG_PRO_GROUPS &pro_g0
#endif
  wg_main(num_tiles, [&](int ti, FgTile& t, FgGroup& g, int role) {
    t.group = 0;
    t.m0 = (ti % mt) * WG_TM;
    t.n0 = (ti / mt) * WG_DN;
    t.pad = ti % mt; // the token tile (WG_TOK)
    g.a = a;
    g.sa = sa;
    g.b = role / WG_HALF == 1 ? b2 : b1; // consumers WG_HALF.. multiply by B2
    g.sb = role / WG_HALF == 1 ? sb2 : sb1;
    g.c = c;
    g.m = M;
    g.n = N;
    g.k = K;
    g.splits = 1;
    g.ws = nullptr;
  }, WG_STREAM, tok);
#else
  // wgmma is sm_90a only; kernels.Plan refuses every other device.
  asm volatile("trap;");
#endif
}
#else
// tiles[i].pad is tile i's token tile (WG_TOK): the group's first token
// tile plus m0 / WG_TM, token tiles numbered group by group.
extern "C" __global__ void __launch_bounds__(FG_THREADS, 1)
    wg_group_gemm(const FgGroup* __restrict__ groups, const FgTile* __restrict__ tiles, int num_tiles,
                  float* __restrict__ ws, fg_u32* __restrict__ flags,
                  const fg_u8* __restrict__ tok WG_RDY_PARAMS) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#if WG_PRO
#undef WG_PRO_GROUPS
#define WG_PRO_GROUPS groups
#endif
  wg_main(num_tiles, [&](int ti, FgTile& t, FgGroup& g, int) {
    t = tiles[ti];
    g = groups[t.group];
  }, WG_STREAM, tok);
#else
  // wgmma is sm_90a only; kernels.Plan refuses every other device.
  asm volatile("trap;");
#endif
}
#endif

#if WG_TOK
// The tokens decoded ahead (WG_TOK 1), launched before the GEMM on the same
// stream: block u decodes K chunk u % kch of token tile u / kch (token tiles
// numbered group by group, ceil(M_g / WG_TM) per group; the dual GEMM
// passes its one token operand as a single group), threads 2r and 2r + 1
// its row r, each one 64-K block (wg_decode_half, the producer's decode in
// halves), into a shared-memory stage; then one bulk copy writes the stage
// to out + u * WG_TOK_STAGE. Rows past M_g are zeros. A block holds one
// stage, so on the short shapes the pass waits on its threads' chains;
// halving them measured 1.004x on the dual, within noise on the group's
// short shapes (H100, dev/gpucall/dual.sh tok2; kernel-notes step 45).
// Block (2 * WG_TM, 1, 1), WG_TOK_STAGE + 1024 bytes of dynamic shared
// memory.
extern "C" __global__ void __launch_bounds__(2 * WG_TM)
    wg_tokens(const FgGroup* __restrict__ groups, int ngroups, fg_u8* __restrict__ out
#if WG_RDY
              ,
              fg_u32* __restrict__ ready
#endif
    ) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // The GEMM, launched overlapped (WG_PDL), may start once every block of
  // this grid has passed here; it waits for this grid to finish before it
  // reads the stages, so signalling first costs nothing.
#if WG_TL
  unsigned long long tl0 = 0;
  if (threadIdx.x == 0) tl0 = wg_gtime();
#endif
#if WG_PDL
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  extern __shared__ __attribute__((aligned(1024))) fg_u8 wg_tok_smem[]; // own name: one extern per entry
  const fg_u32 raw_base = wg_smem_addr(wg_tok_smem);
  const fg_u32 stage = (raw_base + 1023u) & ~1023u; // the swizzle needs the ring's alignment
  const int K = groups[0].k, kch = K >> 7;
  const int u = blockIdx.x, tt = u / kch, kc = u % kch;
  int t0;
  const FgGroup gp = groups[wg_token_group(groups, ngroups, tt, t0)];
  const int r = threadIdx.x >> 1, h = threadIdx.x & 1;
  fg_u32 w[8], s03, s47;
  wg_token_half(gp, (tt - t0) * WG_TM + r, K, kc, h, w, s03, s47);
  wg_decode_half(w, s03, s47, stage, r, h);
  // The bulk copy reads the stage through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
#if WG_TOKLIVE
    // The rows that exist, one bulk store per 64-K block (WG_TM rows of
    // 128 bytes each); a whole tile in one, as without WG_TOKLIVE.
    const int live = gp.m - (tt - t0) * WG_TM;
    if (live < WG_TM) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
                         out + (size_t)u * WG_TOK_STAGE + h * (WG_TM * 128)),
                     "r"(stage + h * (WG_TM * 128)), "r"(live * 128)
                     : "memory");
    } else
#endif
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(out + (size_t)u * WG_TOK_STAGE),
                   "r"(stage), "n"(WG_TOK_STAGE)
                   : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#if WG_RDY
    // The stage's bytes written (not only read from shared memory), then
    // counted done for its token tile (tt), released to the producers.
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;\n" ::"l"(ready + 2 * tt) : "memory");
#else
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); // the stage outlives the copy's reads
#endif
#if WG_TL
    if (u < WG_TL_BLOCKS) {
      wg_tl_tok[0][u] = tl0;
      wg_tl_tok[1][u] = wg_gtime();
    }
    atomicAdd(&wg_tl_tokn, 1u);
#endif
  }
#else
  asm volatile("trap;");
#endif
}
#endif
