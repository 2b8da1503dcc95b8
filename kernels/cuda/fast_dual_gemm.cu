// fast_dual_gemm.cu - fused NVFP4 dual GEMM with SiLU gate for Hopper (and
// any sm_80+): C = silu((A*SA) @ (B1*SB1)^T) * ((A*SA) @ (B2*SB2)^T).
//
// A is M x K, B1 and B2 are N x K, FP4 e2m1, K-major, two values per byte
// (element 2i in the LOW nibble of byte i); SA (M x K/16), SB1, SB2
// (N x K/16) are row-major FP8 e4m3 scales, one per 16 consecutive K
// elements. Both products accumulate in fp32; silu(x) = x / (1 + exp(-x)) and
// the product are taken in fp32 and rounded once to fp16. C is M x N fp16,
// row-major. Shape rules: M >= 1, N % 64 == 0, K % 128 == 0; pointers 16-byte
// aligned.
//
// Method: the same decode and mma.sync core as fast_group_gemm.cu (see there
// for the exactness argument and the K permutation). Each CTA's weight tile
// holds TILE_N/2 rows of B1 and the same TILE_N/2 rows of B2, so one A tile in
// shared memory (and its decode) feeds both products, and each thread holds
// the B1 and B2 accumulators of the same (m, n) outputs: the SiLU gate and the
// product happen in registers in the epilogue, with no second pass.
//
// ---------------------------------------------------------------------------
// Launch interface
// ---------------------------------------------------------------------------
// Entry point:
//   extern "C" __global__ void fast_dual_gemm(
//       const unsigned char* a, const unsigned char* sa,
//       const unsigned char* b1, const unsigned char* sb1,
//       const unsigned char* b2, const unsigned char* sb2,
//       unsigned short* c, int m, int n, int k)
// Tiles: TILE_M rows of C by TILE_N/2 columns; tile ti (0 <= ti < T,
//   T = ceil(m / TILE_M) * ceil(n / (TILE_N/2))) covers m-tile ti % mt and
//   n-tile ti / mt (mt = ceil(m / TILE_M)): the M tiles sharing B rows run
//   next to each other.
// grid:  (T, 1, 1) measured fastest (the hardware block scheduler balances the
//   tail); (min(T, SMs * resident blocks per SM), 1, 1) also works: each block
//   walks tiles blockIdx.x, blockIdx.x + gridDim.x, ...; any grid >= 1 is correct.
// block: (FG_THREADS, 1, 1), FG_THREADS = 32 * WARPS_N * WARPS_M.
// dynamic shared memory: FG_SMEM_BYTES = max(STAGES * (TILE_N + TILE_M) * (ROWB + 8),
//   TILE_M * (TILE_N + 16)) bytes, ROWB = 80 if FG_HALF else 64; above 48 KiB
//   raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first.
// TILE_N = WARP_N * WARPS_N (B1 and B2 rows together; WARP_N % 32 == 0),
// TILE_M = WARP_M * WARPS_M. No prepack step.
// Defaults (the fastest measured on H100): FG_HALF 1, WARP_N 64, WARP_M 32,
// WARPS_N 2, WARPS_M 2 (64 output columns x 64 rows per tile, 128 threads),
// STAGES 3, MIN_BLOCKS 3: 50688 bytes of dynamic shared memory.
// ---------------------------------------------------------------------------

#ifndef WARP_N
#define WARP_N 64 // B1 + B2 rows per warp (half each), multiple of 32
#endif
#ifndef WARP_M
#define WARP_M 32 // token rows (M) per warp, multiple of 8
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef STAGES
#define STAGES 3 // cp.async pipeline depth, >= 2
#endif
#ifndef FG_HALF
#define FG_HALF 1 // 1: half-split layout (8-byte loads, 80-byte rows), see fg_half
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3 // __launch_bounds__ minimum resident blocks per SM
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
#define FG_EP_STRIDE (TILE_N + 16) // epilogue staging row (TILE_N/2 fp16), padded vs banks
#define FG_PIPE_BYTES (STAGES * FG_STAGE_BYTES)
#define FG_EP_BYTES (TILE_M * FG_EP_STRIDE)
#define FG_SMEM_BYTES (FG_PIPE_BYTES > FG_EP_BYTES ? FG_PIPE_BYTES : FG_EP_BYTES)

#if (WARP_N % 32) != 0 || (WARP_M % 8) != 0 || STAGES < 2 || WARP_M > 64
#error "fast_dual_gemm: WARP_N must be a multiple of 32, WARP_M a multiple of 8 and <= 64, STAGES >= 2"
#endif

#include "pt_common.cuh"

// silu(x) = x / (1 + e^-x) in fp32; ex2.approx has ~2 ulp error, far under
// the fp16 rounding of the result; e^-x -> inf gives -0 for very negative x.
static __device__ __forceinline__ float fd_silu(float x) {
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(-x * 1.4426950408889634f));
  return x / (1.f + e);
}

// Shared-memory row of the weight tile for m16 tile i (half h, lane row g)
// of warp wn: tiles i < MT/2 are B1 rows, the rest the same rows of B2,
// which sit TILE_N/2 rows further down.
static __device__ __forceinline__ int fd_brow(int wn, int i, int h, int g) {
  return (i < FG_MT / 2 ? 0 : TILE_N / 2) + wn * (WARP_N / 2) + (i % (FG_MT / 2)) * 16 + h * 8 + g;
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
      const int r = fd_brow(wn, i, h, g);
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
      const int r = fd_brow(wn, i, h, g);
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

extern "C" __global__ void __launch_bounds__(FG_THREADS, MIN_BLOCKS)
    fast_dual_gemm(const fg_u8* __restrict__ a, const fg_u8* __restrict__ sa, const fg_u8* __restrict__ b1,
                   const fg_u8* __restrict__ sb1, const fg_u8* __restrict__ b2, const fg_u8* __restrict__ sb2,
                   fg_u16* __restrict__ c, int M, int N, int K) {
  extern __shared__ __attribute__((aligned(128))) fg_u8 fg_smem[];
  const fg_u32 sbase = fg_smem_addr(fg_smem);
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wn = warp % WARPS_N;
  const int wm = warp / WARPS_N;
  const int g = lane >> 2;
  const int t = lane & 3;
  constexpr int HN = TILE_N / 2; // output columns per tile
  const int mtiles = (M + TILE_M - 1) / TILE_M;
  const int num_tiles = mtiles * ((N + HN - 1) / HN);
  const int kch = K >> 7;
  const size_t rowb = (size_t)(K >> 1);
  const size_t rows = (size_t)(K >> 4);

  for (int ti = blockIdx.x; ti < num_tiles; ti += gridDim.x) {
    const int m0 = (ti % mtiles) * TILE_M;
    const int n0 = (ti / mtiles) * HN;

    // Issue one stage of cp.async: B1 rows n0.. (tile rows 0..HN-1), the same
    // B2 rows (tile rows HN..TILE_N-1), A rows m0.., and their scales, for K
    // chunk kc. Rows past N or M are zero-filled.
    auto load = [&](int st, int kc) {
      const fg_u32 s0 = sbase + st * FG_STAGE_BYTES;
      FG_FOR_THREAD(i, TILE_N * 4) {
        const int r = i >> 2, cc = i & 3;
        const int n = n0 + (r < HN ? r : r - HN);
        const bool ok = n < N;
        const fg_u8* src = (r < HN ? b1 : b2) + (ok ? n : 0) * rowb + kc * 64 + cc * 16;
        fg_cp16(s0 + FG_OFF_BD + r * FG_ROWB + cc * 16, src, ok ? 16u : 0u);
      }
      FG_FOR_THREAD(i, TILE_M * 4) {
        const int r = i >> 2, cc = i & 3;
        const int m = m0 + r;
        const bool ok = m < M;
        const fg_u8* src = a + (ok ? m : 0) * rowb + kc * 64 + cc * 16;
        fg_cp16(s0 + FG_OFF_AD + r * FG_ROWB + cc * 16, src, ok ? 16u : 0u);
      }
      FG_FOR_THREAD(i, TILE_N) {
        const int n = n0 + (i < HN ? i : i - HN);
        const bool ok = n < N;
        fg_cp8(s0 + FG_OFF_BS + i * 8, (i < HN ? sb1 : sb2) + (ok ? n : 0) * rows + kc * 8, ok ? 8u : 0u);
      }
      FG_FOR_THREAD(i, TILE_M) {
        const int m = m0 + i;
        const bool ok = m < M;
        fg_cp8(s0 + FG_OFF_AS + i * 8, sa + (ok ? m : 0) * rows + kc * 8, ok ? 8u : 0u);
      }
    };

    float acc[FG_MT][FG_NT][4];
#pragma unroll
    for (int i = 0; i < FG_MT; ++i)
#pragma unroll
      for (int j = 0; j < FG_NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    // n8 tiles of this warp that hold at least one real token row.
    int nt_live = (M - m0 - wm * WARP_M + 7) >> 3;
    nt_live = nt_live < 0 ? 0 : (nt_live > FG_NT ? FG_NT : nt_live);

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < kch) load(s, s);
      fg_cp_commit();
    }

    for (int kc = 0; kc < kch; ++kc) {
      fg_cp_wait<STAGES - 2>();
      __syncthreads();
      {
        const int nk = kc + STAGES - 1;
        if (nk < kch) load(nk % STAGES, nk);
        fg_cp_commit();
      }
      {
        const fg_u32 s0 = sbase + (kc % STAGES) * FG_STAGE_BYTES;
        // Warp-uniform dispatch on the n8 tiles that hold real token rows.
#define FG_CASE(n)                                                                        \
  case n:                                                                                 \
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

    // Epilogue: gate in registers (B1 and B2 accumulators of the same output
    // are in the same thread), stage as fp16 [m][n], write 16-byte segments.
    fg_cp_wait<0>();
    __syncthreads();
#pragma unroll
    for (int i = 0; i < FG_MT / 2; ++i)
#pragma unroll
      for (int j = 0; j < FG_NT; ++j) {
        const int n = wn * (WARP_N / 2) + i * 16 + g;
        const int m = wm * WARP_M + j * 8 + 2 * t;
        fg_u16* row0 = (fg_u16*)(fg_smem + m * FG_EP_STRIDE);
        fg_u16* row1 = (fg_u16*)(fg_smem + (m + 1) * FG_EP_STRIDE);
        float v[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) v[e] = fd_silu(acc[i][j][e] * 16384.f) * (acc[i + FG_MT / 2][j][e] * 16384.f);
        row0[n] = fg_f2h(v[0]);
        row1[n] = fg_f2h(v[1]);
        row0[n + 8] = fg_f2h(v[2]);
        row1[n + 8] = fg_f2h(v[3]);
      }
    __syncthreads();
    FG_FOR_THREAD(i, TILE_M * (HN / 8)) {
      const int r = i / (HN / 8), cc = i % (HN / 8);
      const int m = m0 + r, n = n0 + cc * 8;
      if (m < M && n < N) {
        const FgV4 v = *(const FgV4*)(fg_smem + r * FG_EP_STRIDE + cc * 16);
        *(FgV4*)(c + (size_t)m * N + n) = v;
      }
    }
    __syncthreads(); // the next tile's cp.async reuses this shared memory
  }
}
