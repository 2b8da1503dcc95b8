// fast_group_gemm.cu - fused NVFP4 grouped GEMM for Hopper (and any sm_80+),
// one persistent launch over a host-built tile table.
//
// Problem: for each group g, C_g (M_g x N_g, fp16, row-major) =
//   (A_g * SA_g) @ (B_g * SB_g)^T
// A_g is M_g x K_g and B_g is N_g x K_g, FP4 e2m1, K-major, two values per
// byte (element 2i in the LOW nibble of byte i); SA_g (M_g x K_g/16) and
// SB_g (N_g x K_g/16) are row-major FP8 e4m3 scales, one per 16 consecutive
// K elements. Accumulation is fp32, output fp16 (round to nearest).
// Shape rules: M_g >= 1, N_g % 64 == 0, K_g % 128 == 0; every pointer 16-byte
// aligned (A, B, C rows are then 16-byte aligned too, scale rows 8-byte aligned).
//
// Method (why it looks like this): Hopper has no FP4 tensor cores. Each
// thread loads raw FP4 bytes and scale bytes from shared memory (cp.async
// multi-stage pipeline), decodes e2m1 to fp16 with bit operations and folds
// the e4m3 scale in with one fp16 multiply, then issues mma.sync m16n8k16
// (f16 x f16 -> f32). A and B are swapped: the weight rows (N) fill the MMA's
// 16-row dimension and the token rows (M, often < 128 here) its 8-column
// dimension, so small groups waste little.
// Exactness: the decode places the e2m1 magnitude bits in fp16 bits 9..11,
// giving e2m1 * 2^-14 exactly (subnormals included); the scale is decoded to
// scale * 2^7 (<= 57344, exact in fp16), so each fp16 operand is exactly
// value * scale * 2^-7 and the fp32 accumulator holds the dot product times
// 2^-14, undone in the epilogue. No rounding happens before the MMA.
//
// Inside a 128-wide K chunk, thread t of each MMA quad owns the 32 K values
// [32t, 32t+32) of every row it touches (one 16-byte shared load per row, two
// scale bytes), and maps them onto the MMA's logical K positions with the
// same permutation for both operands (a dot product does not depend on the
// order of K), so no data shuffling is needed. FG_HALF=1 switches to an
// 8-byte-per-row layout (thread t owns [64h + 16t, +16) of each 64-wide
// half h, 80-byte shared rows) that needs fewer registers.
//
// ---------------------------------------------------------------------------
// Launch interface
// ---------------------------------------------------------------------------
// Entry point:
//   extern "C" __global__ void fast_group_gemm(const FgGroup* groups,
//                                              const FgTile* tiles,
//                                              int num_tiles)
// groups: device array, one FgGroup per group (layout below, 64 bytes, 8-byte
//         aligned fields: a, sa, b, sb, c pointers, int m, n, k, splits, then
//         the split-K workspace pointer ws).
// tiles:  device array of FgTile {int group, m0, n0, pad} (16 bytes): one
//         entry per output tile of TILE_M rows (of C) x TILE_N columns,
//         m0 % TILE_M == 0, n0 % TILE_N == 0, covering every group: for each
//         group, m0 = 0, TILE_M, ... < M_g and n0 = 0, TILE_N, ... < N_g.
//         Any order is correct. Fastest measured order ("order 1"): groups by
//         M_g descending, then n0, then m0; then a stable sort by rows in the
//         tile (min(TILE_M, M_g - m0)) descending, so full tiles go first and
//         the short tails fill the last wave.
// grid:   (min(num_tiles, SMs * resident blocks per SM), 1, 1), resident
//         blocks from cuOccupancyMaxActiveBlocksPerMultiprocessor (2 for the
//         defaults on H100, so 264); each block walks tiles blockIdx.x,
//         blockIdx.x + gridDim.x, ... (any grid >= 1 is correct).
// Defaults (the fastest measured on H100): WARP_N 64, WARP_M 32, WARPS_N 4,
// WARPS_M 1 (tile 256 x 32, 128 threads), STAGES 4, MIN_BLOCKS 2, FG_HALF 0:
// 82944 bytes of dynamic shared memory. Timings in dev/fastkern/NOTES.md.
// block:  (FG_THREADS, 1, 1), FG_THREADS = 32 * WARPS_N * WARPS_M.
// dynamic shared memory: FG_SMEM_BYTES = max(STAGES * (TILE_N + TILE_M) * (ROWB + 8),
//         TILE_M * (2 * TILE_N + 16)) bytes, ROWB = 80 if FG_HALF else 64;
//         above 48 KiB the caller must
//         raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first.
// Tile sizes: TILE_N = WARP_N * WARPS_N, TILE_M = WARP_M * WARPS_M (macros
// below, all overridable with -D). No prepack step: B and SB are read as given.
// Output rows m >= M_g and columns n >= N_g are never written; every other
// element of each C_g is written exactly once.
//
// Split-K (groups[g].splits = S > 1, for shapes with fewer tiles than
// resident blocks): the table holds S entries per output tile, entry pad =
// base * S + ks computing K chunks [kch*ks/S, kch*(ks+1)/S) (kch = K/128)
// into workspace slot pad (FG_WS_TILE fp32, fragment order) instead of C;
// then a second launch on the same stream,
//   fast_group_reduce(groups, base_tiles, num_base_tiles)
// (one entry per output tile, pad = base, FG_EP_BYTES dynamic shared
// memory), adds the S slots of each tile in order ks = 0..S-1 and writes C.
// Every slot the reduce reads is written by the first launch of the same
// execution, so the workspace needs no zeroing; the sum is deterministic.
// Workspace bytes: S * num_base_tiles * TILE_N * TILE_M * 4.
// FG_EPI_TMA=1 (sm_90+, CUDA 12+): C rows leave shared memory by
// cp.async.bulk (one per row) instead of 16-byte stores.
// ---------------------------------------------------------------------------

#ifndef WARP_N
#define WARP_N 64 // weight rows (N) per warp, multiple of 16
#endif
#ifndef WARP_M
#define WARP_M 32 // token rows (M) per warp, multiple of 8
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef WARPS_M
#define WARPS_M 1
#endif
#ifndef STAGES
#define STAGES 4 // cp.async pipeline depth, >= 2
#endif
#ifndef FG_HALF
#define FG_HALF 0 // 1: half-split layout (8-byte loads, 80-byte rows), see fg_half
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2 // __launch_bounds__ minimum resident blocks per SM
#endif
#ifndef FG_EPI_TMA
#define FG_EPI_TMA 0 // 1: C rows leave shared memory by bulk async copies (sm_90, PTX 8.0)
#endif
// The bulk copy engine and the async-proxy fence exist from sm_90 and PTX
// ISA 8.0 (CUDA 12.0): refuse the build anywhere else rather than fall back
// silently (kernels.Plan refuses epilogue=tma for devices below sm_90).
#if FG_EPI_TMA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900 || __CUDACC_VER_MAJOR__ < 12)
#error "fast_group_gemm: FG_EPI_TMA=1 needs sm_90 or newer and CUDA 12.0 or newer (cp.async.bulk)"
#endif

#define TILE_N (WARP_N * WARPS_N)
#define TILE_M (WARP_M * WARPS_M)
#define FG_THREADS (32 * WARPS_N * WARPS_M)
#define FG_MT (WARP_N / 16) // m16 MMA tiles per warp (weight rows)
#define FG_NT (WARP_M / 8)  // n8 MMA tiles per warp (token rows)
// One stage: 64 FP4 bytes (in a FG_ROWB-byte row) and 8 scale bytes for each
// of TILE_N + TILE_M rows.
#define FG_ROWB (FG_HALF ? 80 : 64)
#define FG_OFF_BD 0
#define FG_OFF_AD (TILE_N * FG_ROWB)
#define FG_OFF_BS ((TILE_N + TILE_M) * FG_ROWB)
#define FG_OFF_AS (FG_OFF_BS + TILE_N * 8)
#define FG_STAGE_BYTES ((TILE_N + TILE_M) * (FG_ROWB + 8))
#define FG_EP_STRIDE (2 * TILE_N + 16) // epilogue staging row, padded vs banks
#define FG_PIPE_BYTES (STAGES * FG_STAGE_BYTES)
#define FG_EP_BYTES (TILE_M * FG_EP_STRIDE)
#define FG_SMEM_BYTES (FG_PIPE_BYTES > FG_EP_BYTES ? FG_PIPE_BYTES : FG_EP_BYTES)

#if (WARP_N % 16) != 0 || (WARP_M % 8) != 0 || STAGES < 2 || WARP_M > 64
#error "fast_group_gemm: WARP_N must be a multiple of 16, WARP_M a multiple of 8 and <= 64, STAGES >= 2"
#endif

#include "pt_common.cuh"

struct FgGroup {
  const fg_u8* a;  // M x K/2 bytes
  const fg_u8* sa; // M x K/16 e4m3
  const fg_u8* b;  // N x K/2 bytes
  const fg_u8* sb; // N x K/16 e4m3
  fg_u16* c;       // M x N fp16
  int m, n, k;
  int splits;      // K partitions per output tile; <= 1: no split (C written directly)
  float* ws;       // split-K workspace (fp32 partial tiles); unused when splits <= 1
};

struct FgTile {
  // pad: for fast_group_gemm with splits > 1 the workspace slot, base * splits
  // + ks (base = the tile's index in fast_group_reduce's table, ks = the K
  // partition); for fast_group_reduce the base index; else ignored.
  int group, m0, n0, pad;
};

struct __attribute__((aligned(16))) FgF4 {
  float x, y, z, w;
};

// One workspace slot holds a tile's fp32 accumulators in fragment order:
// element ((i * FG_NT + j) * FG_THREADS + tid) * 4 + e is acc[i][j][e] of
// thread tid, so the partial stores and the reduce's loads are 16-byte
// accesses coalesced across the block, and no layout change is needed
// before the sum.
#define FG_WS_TILE (TILE_N * TILE_M)

// Chunks [kb, ke) of K partition ks out of S over kch 128-wide chunks:
// kb = kch * ks / S (rounded down), so the S ranges cover [0, kch) exactly
// once and differ in length by at most one chunk (kernels.FusedSplitRange
// is the same formula on the host).
static __device__ __forceinline__ void fg_split_range(int kch, int ks, int S, int& kb, int& ke) {
  kb = (int)(((long long)kch * ks) / S);
  ke = (int)(((long long)kch * (ks + 1)) / S);
}


// One k16 MMA step for all live n8 tiles: W is the thread's word index for
// this step, P the first nibble pair (pairs P and P+1 give the MMA's low and
// high K halves), sa/sb the fp16x2 scales of the rows for this step.
// NTL (live n8 tiles) is a template parameter so the fully unrolled body has
// no branches and the compiler can interleave the independent decode chains.
template <int NTL, int W, int P, int NW>
static __device__ __forceinline__ void fg_step(float (&acc)[FG_MT][FG_NT][4], const fg_u32 (&wa)[FG_MT][2][NW],
                                               const fg_u32 (&sa)[FG_MT][2], const fg_u32 (&wb)[FG_NT][NW],
                                               const fg_u32 (&sb)[FG_NT]) {
  fg_u32 af[FG_MT][4];
#pragma unroll
  for (int i = 0; i < FG_MT; ++i) {
    af[i][0] = fg_hmul2(fg_dec<P>(wa[i][0][W]), sa[i][0]);
    af[i][1] = fg_hmul2(fg_dec<P>(wa[i][1][W]), sa[i][1]);
    af[i][2] = fg_hmul2(fg_dec<P + 1>(wa[i][0][W]), sa[i][0]);
    af[i][3] = fg_hmul2(fg_dec<P + 1>(wa[i][1][W]), sa[i][1]);
  }
#pragma unroll
  for (int j = 0; j < NTL; ++j) {
    const fg_u32 b0 = fg_hmul2(fg_dec<P>(wb[j][W]), sb[j]);
    const fg_u32 b1 = fg_hmul2(fg_dec<P + 1>(wb[j][W]), sb[j]);
#pragma unroll
    for (int i = 0; i < FG_MT; ++i) fg_mma(acc[i][j], af[i], b0, b1);
  }
}

#if FG_HALF
// Half-split layout: in half h of the 128-wide chunk, thread t owns K values
// [64h + 16t, +16) of each row: one 8-byte shared load (row stride 80 bytes
// makes these conflict-free) and one scale byte per row and half. Fewer
// registers live than the 16-byte layout.
template <int NTL, int H>
static __device__ __forceinline__ void fg_half(float (&acc)[FG_MT][FG_NT][4], fg_u32 s0, int wn, int wm, int g,
                                               int t) {
  fg_u32 wa[FG_MT][2][2], sa[FG_MT][2];
#pragma unroll
  for (int i = 0; i < FG_MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wn * WARP_N + i * 16 + h * 8 + g;
      fg_lds64(s0 + FG_OFF_BD + r * FG_ROWB + H * 32 + t * 8, wa[i][h]);
      sa[i][h] = fg_scale1(fg_lds8(s0 + FG_OFF_BS + r * 8 + H * 4 + t));
    }
  fg_u32 wb[FG_NT][2], sb[FG_NT];
#pragma unroll
  for (int j = 0; j < NTL; ++j) {
    const int r = wm * WARP_M + j * 8 + g;
    fg_lds64(s0 + FG_OFF_AD + r * FG_ROWB + H * 32 + t * 8, wb[j]);
    sb[j] = fg_scale1(fg_lds8(s0 + FG_OFF_AS + r * 8 + H * 4 + t));
  }
  fg_step<NTL, 0, 0, 2>(acc, wa, sa, wb, sb);
  fg_step<NTL, 0, 2, 2>(acc, wa, sa, wb, sb);
  fg_step<NTL, 1, 0, 2>(acc, wa, sa, wb, sb);
  fg_step<NTL, 1, 2, 2>(acc, wa, sa, wb, sb);
}
#endif

// All eight k16 steps of one 128-wide chunk held in stage buffer s0.
template <int NTL>
static __device__ __forceinline__ void fg_stage(float (&acc)[FG_MT][FG_NT][4], fg_u32 s0, int wn, int wm, int g,
                                                int t) {
#if FG_HALF
  fg_half<NTL, 0>(acc, s0, wn, wm, g, t);
  fg_half<NTL, 1>(acc, s0, wn, wm, g, t);
#else
  // 16-byte layout: thread t owns K values [32t, 32t+32) of each row (one
  // 16-byte shared load, conflict-free at a 64-byte row stride) and the two
  // scale bytes 2t, 2t+1; word W covers [32t + 8W, +8), scale W/2.
  fg_u32 wa[FG_MT][2][4], sa[FG_MT][2][2];
#pragma unroll
  for (int i = 0; i < FG_MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wn * WARP_N + i * 16 + h * 8 + g;
      fg_lds128(s0 + FG_OFF_BD + r * FG_ROWB + t * 16, wa[i][h]);
      fg_scales(fg_lds16(s0 + FG_OFF_BS + r * 8 + t * 2), sa[i][h][0], sa[i][h][1]);
    }
  fg_u32 wb[FG_NT][4], sb[FG_NT][2];
#pragma unroll
  for (int j = 0; j < NTL; ++j) {
    const int r = wm * WARP_M + j * 8 + g;
    fg_lds128(s0 + FG_OFF_AD + r * FG_ROWB + t * 16, wb[j]);
    fg_scales(fg_lds16(s0 + FG_OFF_AS + r * 8 + t * 2), sb[j][0], sb[j][1]);
  }
  fg_u32 sa0[FG_MT][2], sa1[FG_MT][2], sb0[FG_NT], sb1[FG_NT];
#pragma unroll
  for (int i = 0; i < FG_MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      sa0[i][h] = sa[i][h][0];
      sa1[i][h] = sa[i][h][1];
    }
#pragma unroll
  for (int j = 0; j < NTL; ++j) {
    sb0[j] = sb[j][0];
    sb1[j] = sb[j][1];
  }
  fg_step<NTL, 0, 0, 4>(acc, wa, sa0, wb, sb0);
  fg_step<NTL, 0, 2, 4>(acc, wa, sa0, wb, sb0);
  fg_step<NTL, 1, 0, 4>(acc, wa, sa0, wb, sb0);
  fg_step<NTL, 1, 2, 4>(acc, wa, sa0, wb, sb0);
  fg_step<NTL, 2, 0, 4>(acc, wa, sa1, wb, sb1);
  fg_step<NTL, 2, 2, 4>(acc, wa, sa1, wb, sb1);
  fg_step<NTL, 3, 0, 4>(acc, wa, sa1, wb, sb1);
  fg_step<NTL, 3, 2, 4>(acc, wa, sa1, wb, sb1);
#endif
}

// Epilogue shared by both entry points: stage the tile as fp16 [m][n] in
// shared memory (acc holds the sums times 2^-14), then write the rows of C
// that exist. FG_EPI_TMA=0: 16-byte stores by every thread, coalesced.
// FG_EPI_TMA=1 (sm_90, PTX 8.0): one bulk async copy per row by the copy
// engine (cp.async.bulk, no tensor map), so the threads issue 1 instruction
// per row instead of TILE_N / 8 / (FG_THREADS / TILE_M) stores each.
// Ends with a barrier: the caller may reuse the shared memory at once.
static __device__ __forceinline__ void fg_store_c(const float (&acc)[FG_MT][FG_NT][4], fg_u8* smem, const FgGroup& gp,
                                                  const FgTile& tile, int tid, int wn, int wm, int g, int t) {
#pragma unroll
  for (int i = 0; i < FG_MT; ++i)
#pragma unroll
    for (int j = 0; j < FG_NT; ++j) {
      const int n = wn * WARP_N + i * 16 + g;
      const int m = wm * WARP_M + j * 8 + 2 * t;
      fg_u16* row0 = (fg_u16*)(smem + m * FG_EP_STRIDE);
      fg_u16* row1 = (fg_u16*)(smem + (m + 1) * FG_EP_STRIDE);
      row0[n] = fg_f2h(acc[i][j][0] * 16384.f);
      row1[n] = fg_f2h(acc[i][j][1] * 16384.f);
      row0[n + 8] = fg_f2h(acc[i][j][2] * 16384.f);
      row1[n + 8] = fg_f2h(acc[i][j][3] * 16384.f);
    }
  const int M = gp.m, N = gp.n;
#if FG_EPI_TMA
  // The staged rows were written by the generic proxy; the copy engine reads
  // through the async proxy, so each writing thread fences before the barrier.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  // N % 64 == 0 and n0 % TILE_N == 0: a row's length is a multiple of 128
  // bytes, its global address 128-byte aligned, its shared address 16-byte
  // aligned (FG_EP_STRIDE % 16 == 0), as the bulk copy requires.
  const int rows = M - tile.m0 < TILE_M ? M - tile.m0 : TILE_M;
  if (tid < rows) {
    const int cols = N - tile.n0 < TILE_N ? N - tile.n0 : TILE_N;
    const fg_u16* dst = gp.c + (size_t)(tile.m0 + tid) * N + tile.n0;
    unsigned long long gdst;
    asm("cvta.to.global.u64 %0, %1;" : "=l"(gdst) : "l"(dst));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gdst),
                 "r"(fg_smem_addr(smem + tid * FG_EP_STRIDE)), "r"(cols * 2)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    // The next tile's loads overwrite the staging rows: wait until the copy
    // engine has read them (not until the global writes land).
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  }
  __syncthreads();
#else
  __syncthreads();
  FG_FOR_THREAD(i, TILE_M * (TILE_N / 8)) {
    const int r = i / (TILE_N / 8), c = i % (TILE_N / 8);
    const int m = tile.m0 + r, n = tile.n0 + c * 8;
    if (m < M && n < N) {
      const FgV4 v = *(const FgV4*)(smem + r * FG_EP_STRIDE + c * 16);
      *(FgV4*)(gp.c + (size_t)m * N + n) = v;
    }
  }
  __syncthreads(); // the next tile's cp.async reuses this shared memory
#endif
}

// n8 tiles of warp row wm that hold at least one real token row.
static __device__ __forceinline__ int fg_nt_live(int M, int m0, int wm) {
  int n = (M - m0 - wm * WARP_M + 7) >> 3;
  return n < 0 ? 0 : (n > FG_NT ? FG_NT : n);
}

extern "C" __global__ void __launch_bounds__(FG_THREADS, MIN_BLOCKS)
    fast_group_gemm(const FgGroup* __restrict__ groups, const FgTile* __restrict__ tiles, int num_tiles) {
  extern __shared__ __attribute__((aligned(128))) fg_u8 fg_smem[];
  const fg_u32 sbase = fg_smem_addr(fg_smem);
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wn = warp % WARPS_N;
  const int wm = warp / WARPS_N;
  const int g = lane >> 2;
  const int t = lane & 3;

  for (int ti = blockIdx.x; ti < num_tiles; ti += gridDim.x) {
    const FgTile tile = tiles[ti];
    const FgGroup gp = groups[tile.group];
    const int M = gp.m, N = gp.n, K = gp.k;
    const int kch = K >> 7;
    const size_t rowb = (size_t)(K >> 1);
    const size_t rows = (size_t)(K >> 4);
    // Split-K: this item computes K chunks [kb, ke) of its output tile.
    const int S = gp.splits > 1 ? gp.splits : 1;
    int kb = 0, ke = kch;
    if (S > 1) fg_split_range(kch, tile.pad % S, S, kb, ke);
    const int nkc = ke - kb;

    // Issue one stage of cp.async: FP4 bytes and scales of the tile's B and
    // A rows for K chunk kc. Rows past N or M are zero-filled.
    auto load = [&](int st, int kc) {
      const fg_u32 s0 = sbase + st * FG_STAGE_BYTES;
      FG_FOR_THREAD(i, TILE_N * 4) {
        const int r = i >> 2, c = i & 3;
        const int n = tile.n0 + r;
        const bool ok = n < N;
        const fg_u8* src = gp.b + (ok ? n : 0) * rowb + kc * 64 + c * 16;
        fg_cp16(s0 + FG_OFF_BD + r * FG_ROWB + c * 16, src, ok ? 16u : 0u);
      }
      FG_FOR_THREAD(i, TILE_M * 4) {
        const int r = i >> 2, c = i & 3;
        const int m = tile.m0 + r;
        const bool ok = m < M;
        const fg_u8* src = gp.a + (ok ? m : 0) * rowb + kc * 64 + c * 16;
        fg_cp16(s0 + FG_OFF_AD + r * FG_ROWB + c * 16, src, ok ? 16u : 0u);
      }
      FG_FOR_THREAD(i, TILE_N) {
        const int n = tile.n0 + i;
        const bool ok = n < N;
        fg_cp8(s0 + FG_OFF_BS + i * 8, gp.sb + (ok ? n : 0) * rows + kc * 8, ok ? 8u : 0u);
      }
      FG_FOR_THREAD(i, TILE_M) {
        const int m = tile.m0 + i;
        const bool ok = m < M;
        fg_cp8(s0 + FG_OFF_AS + i * 8, gp.sa + (ok ? m : 0) * rows + kc * 8, ok ? 8u : 0u);
      }
    };

    float acc[FG_MT][FG_NT][4];
#pragma unroll
    for (int i = 0; i < FG_MT; ++i)
#pragma unroll
      for (int j = 0; j < FG_NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    const int nt_live = fg_nt_live(M, tile.m0, wm);

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < nkc) load(s, kb + s);
      fg_cp_commit();
    }

    for (int it = 0; it < nkc; ++it) {
      fg_cp_wait<STAGES - 2>();
      __syncthreads();
      {
        const int nx = it + STAGES - 1;
        if (nx < nkc) load(nx % STAGES, kb + nx);
        fg_cp_commit();
      }
      {
        const fg_u32 s0 = sbase + (it % STAGES) * FG_STAGE_BYTES;
        // Warp-uniform dispatch on the n8 tiles that hold real token rows.
#define FG_CASE(n)                                                       \
  case n:                                                                \
    if constexpr ((n) <= FG_NT) fg_stage<(n) <= FG_NT ? (n) : 1>(acc, s0, wn, wm, g, t); \
    break;
        switch (nt_live) {
          FG_CASE(1)
          FG_CASE(2)
          FG_CASE(3)
          FG_CASE(4)
          FG_CASE(5)
          FG_CASE(6)
          FG_CASE(7)
          FG_CASE(8)
          default:
            break;
        }
#undef FG_CASE
      }
    }

    fg_cp_wait<0>();
    __syncthreads();
    if (S > 1) {
      // Partial sums of one K partition: the live fragments go to the tile's
      // workspace slot as they are (fast_group_reduce adds the partitions in
      // a fixed order, so the result does not depend on which finished first).
      // Registers to global only: the barrier above already lets the next
      // tile's loads reuse the shared memory.
      float* w = gp.ws + (size_t)tile.pad * FG_WS_TILE;
#pragma unroll
      for (int i = 0; i < FG_MT; ++i)
#pragma unroll
        for (int j = 0; j < FG_NT; ++j)
          if (j < nt_live) {
            FgF4 v;
            v.x = acc[i][j][0];
            v.y = acc[i][j][1];
            v.z = acc[i][j][2];
            v.w = acc[i][j][3];
            *(FgF4*)(w + ((size_t)(i * FG_NT + j) * FG_THREADS + tid) * 4) = v;
          }
    } else {
      fg_store_c(acc, fg_smem, gp, tile, tid, wn, wm, g, t);
    }
  }
}

// Split-K reduction: one block per output tile of the unsplit table (pad =
// its base index), FG_THREADS threads laid out as in fast_group_gemm. Each
// thread adds its fragments of the groups' splits partitions, partition 0
// first (deterministic), then the tile leaves through the same epilogue.
// Dynamic shared memory: FG_EP_BYTES. Any grid >= 1 is correct.
extern "C" __global__ void __launch_bounds__(FG_THREADS)
    fast_group_reduce(const FgGroup* __restrict__ groups, const FgTile* __restrict__ tiles, int num_tiles) {
  extern __shared__ __attribute__((aligned(128))) fg_u8 fg_smem[];
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wn = warp % WARPS_N;
  const int wm = warp / WARPS_N;
  const int g = lane >> 2;
  const int t = lane & 3;
  for (int ti = blockIdx.x; ti < num_tiles; ti += gridDim.x) {
    const FgTile tile = tiles[ti];
    const FgGroup gp = groups[tile.group];
    const int S = gp.splits > 1 ? gp.splits : 1;
    const int nt_live = fg_nt_live(gp.m, tile.m0, wm);
    const float* w = gp.ws + (size_t)tile.pad * S * FG_WS_TILE;
    float acc[FG_MT][FG_NT][4];
#pragma unroll
    for (int i = 0; i < FG_MT; ++i)
#pragma unroll
      for (int j = 0; j < FG_NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
    // Partition by partition (fixed order), all live fragments' loads of a
    // partition independent of each other.
    for (int ks = 0; ks < S; ++ks) {
      const float* wk = w + (size_t)ks * FG_WS_TILE + (size_t)tid * 4;
#pragma unroll
      for (int i = 0; i < FG_MT; ++i)
#pragma unroll
        for (int j = 0; j < FG_NT; ++j)
          if (j < nt_live) {
            const FgF4 v = *(const FgF4*)(wk + (size_t)(i * FG_NT + j) * FG_THREADS * 4);
            acc[i][j][0] += v.x;
            acc[i][j][1] += v.y;
            acc[i][j][2] += v.z;
            acc[i][j][3] += v.w;
          }
    }
    fg_store_c(acc, fg_smem, gp, tile, tid, wn, wm, g, t);
  }
}
