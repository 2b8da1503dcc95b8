// Fused NVFP4 GEMM for sm_80+ (the baseline family of pitchtank).
//
// One block of THREADS (128) threads computes a TILE_M x TILE_N tile of C.
// Raw FP4 bytes and e4m3 scales of A and B are copied to shared memory with
// cp.async into a ring of STAGES buffers (STAGES = 1: load, wait, compute);
// each thread then decodes the bytes it needs straight into mma.sync
// fragments, with the scale folded in, and issues
// mma.sync.m16n8k16.row.col.f32.f16.f16.f32. With DUAL = 1 the A tile feeds
// two products (B1 and B2) and the epilogue writes silu(acc1) * acc2.
//
// Exactness. An FP4 nibble s.e1e0.m placed as fp16 bits s at 15 and e1e0m at
// 11..9 is exactly e2m1 * 2^-14 (exponent field 0 is subnormal in both
// formats). An e4m3 code placed as s at 15 and eeeemmm at 13..7 is exactly
// scale * 2^-8; multiplying by 2^15 gives scale * 2^7 (at most 57344, fits).
// Their fp16 product e2m1 * scale * 2^-7 is a multiple of 2^-24 below 2^-14
// and has at most 6 significant bits above it, so it is exact; the MMA
// products are exact in fp32, and the epilogue multiplies by 2^14.
//
// Fragment mapping. The dot product over K does not depend on the order of
// K, so A and B may agree on any permutation of it. Per row, a 64-element
// chunk is 8 little-endian 32-bit words; lane (g = lane/4, t = lane%4)
// reads words t and t+4. Byte 2s of a word fills the MMA slot of K (2t,2t+1)
// in K-step s of that word and byte 2s+1 the slot of K (2t+8,2t+9); each
// byte is two FP4 elements, exactly one fp16x2 register. A and B use the
// same mapping, so the sum is the same. Data rows are TILE_K/2 + 16 bytes
// apart in shared memory, so the 8 rows x 4 words of a warp's load hit 32
// different banks.
//
// Shape handling: rows of A past M and of B past N load as zeros (cp.async
// zero-fill) and are never stored; the last K step may be shorter than
// TILE_K (K is a multiple of 128, so it is a whole number of 64-chunks).
//
// SWAP_AB = 1 computes C^T = B A^T: the weight rows (N) fill the MMA's
// 16-row side and the token rows (M) its 8-column side, so a tile of few
// tokens wastes 8-row, not 16-row, slices; n8 token slices past M are
// skipped (no decode, no MMA). TILE_M still counts token rows and TILE_N
// weight rows (output columns): the block's C tile and grid are the same
// as without the swap. The accumulators then hold C transposed, so the
// epilogue stages the tile in shared memory as [m][n] and writes rows.
//
// EPI_TMA = 1 (sm_90+, CUDA 12+): the staged C rows leave shared memory by
// cp.async.bulk, one per row, instead of 16-byte stores by the threads
// (fast_group_gemm.cu's FG_EPI_TMA, the same protocol). With SWAP_AB = 0
// and EPI_TMA = 0 the threads store their accumulators straight to global.
//
// No toolkit headers: NVRTC alone compiles this on any version from 11.8.

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#ifndef DUAL
#define DUAL 0
#endif
#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef TILE_K
#define TILE_K 256
#endif
#ifndef STAGES
#define STAGES 1
#endif
#ifndef THREADS
#define THREADS 128
#endif
#ifndef SWAP_AB
#define SWAP_AB 0
#endif
#ifndef EPI_TMA
#define EPI_TMA 0
#endif
// The bulk copy engine and the async-proxy fence exist from sm_90 and PTX
// ISA 8.0 (CUDA 12.0): refuse the build anywhere else rather than fall back
// silently (kernels.Plan refuses epilogue=tma for devices below sm_90).
#if EPI_TMA && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 900 || __CUDACC_VER_MAJOR__ < 12)
#error "gemm: EPI_TMA=1 needs sm_90 or newer and CUDA 12.0 or newer (cp.async.bulk)"
#endif

#if THREADS != 128
#error "the warp layout is 2x2 warps: THREADS must be 128"
#endif
#if TILE_K % 128 != 0
#error "TILE_K must be a multiple of 128"
#endif

#define WARP_M (TILE_M / 2)
#define WARP_N (TILE_N / 2)
#if SWAP_AB
#define MT (WARP_N / 16)  // m16 MMA tiles per warp: weight rows
#define NT (WARP_M / 8)   // n8 MMA tiles per warp: token rows
#else
#define MT (WARP_M / 16)  // m16 MMA tiles per warp: token rows
#define NT (WARP_N / 8)   // n8 MMA tiles per warp: weight rows
#endif
#define ROW_BYTES (TILE_K / 2 + 16)
#define SROW (TILE_K / 16)
#if DUAL
#define B_ROWS (2 * TILE_N)
#else
#define B_ROWS TILE_N
#endif
#define STAGE_BYTES ((TILE_M + B_ROWS) * (ROW_BYTES + SROW))
// The staged epilogue: fp16 C tile [TILE_M][TILE_N], rows padded by 16
// bytes (4 banks) so the transposed fragment writes spread over banks, and
// 16-byte aligned for the 16-byte loads and the bulk copy. It reuses the
// pipeline's shared memory (kernels.SharedBytes takes the larger).
#define STAGED (SWAP_AB || EPI_TMA)
#define EP_STRIDE (2 * TILE_N + 16)

__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u64 a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (u32)a;
}

// 16-byte copy; src_bytes 0 fills zeros (rows past M or N).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async8(void* dst, const void* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ u32 hmul2(u32 a, u32 b) {
    u32 d;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

// Two FP4 codes (low byte of b; element 2i low nibble) as fp16x2 of
// e2m1 * 2^-14 each; see the header.
__device__ __forceinline__ u32 fp4x2_to_h2(u32 b) {
    return ((b & 0x8u) << 12) | ((b & 0x7u) << 9) | ((b & 0x80u) << 24) | ((b & 0x70u) << 21);
}

// An e4m3 scale code as fp16x2 (both halves) of scale * 2^7.
__device__ __forceinline__ u32 scale_h2(u32 code) {
    u32 h = ((code & 0x80u) << 8) | ((code & 0x7fu) << 7);  // scale * 2^-8
    return hmul2(h | (h << 16), 0x78007800u);                // * 2^15
}

__device__ __forceinline__ void mma16816(float* c, const u32* a, u32 b0, u32 b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ u32 pack_h2(float lo, float hi) {
    u16 l, h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(l) : "f"(lo));
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(hi));
    return (u32)l | ((u32)h << 16);
}

__device__ __forceinline__ u16 f2h(float x) {
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

struct __align__(16) V4 {
    u32 x, y, z, w;
};

__device__ __forceinline__ float silu(float x) {
    float e;
    asm("ex2.approx.f32 %0, %1;" : "=f"(e) : "f"(-x * 1.4426950408889634f));
    return x / (1.0f + e);
}

struct Operands {
    const u8 *a, *sa, *b, *sb, *b2, *sb2;
    u16* c;
    int M, N, K, m0, n0;
};

// Issue the cp.async copies of K step [k0, k0 + kvalid) into stage buffer sm.
__device__ __forceinline__ void load_stage(u8* sm, const Operands& op, int k0, int kvalid, int tid) {
    const int rows = TILE_M + B_ROWS;
    const int cpr = TILE_K / 32;  // 16-byte data chunks per row
    const long long rowB = op.K / 2;
    for (int i = tid; i < rows * cpr; i += THREADS) {
        int r = i / cpr, c = i % cpr;
        if (c * 32 >= kvalid) continue;
        const u8* base;
        int gr, lim;
        if (r < TILE_M) {
            base = op.a; gr = op.m0 + r; lim = op.M;
        } else {
            int br = r - TILE_M;
            base = op.b;
#if DUAL
            if (br >= TILE_N) { base = op.b2; br -= TILE_N; }
#endif
            gr = op.n0 + br; lim = op.N;
        }
        bool ok = gr < lim;
        const u8* src = base + (ok ? gr : 0) * rowB + k0 / 2 + c * 16;
        cp_async16(sm + r * ROW_BYTES + c * 16, src, ok ? 16 : 0);
    }
    u8* ss = sm + rows * ROW_BYTES;
    const int spr = TILE_K / 128;  // 8-byte scale chunks per row
    const long long rowS = op.K / 16;
    for (int i = tid; i < rows * spr; i += THREADS) {
        int r = i / spr, c = i % spr;
        if (c * 128 >= kvalid) continue;
        const u8* base;
        int gr, lim;
        if (r < TILE_M) {
            base = op.sa; gr = op.m0 + r; lim = op.M;
        } else {
            int br = r - TILE_M;
            base = op.sb;
#if DUAL
            if (br >= TILE_N) { base = op.sb2; br -= TILE_N; }
#endif
            gr = op.n0 + br; lim = op.N;
        }
        bool ok = gr < lim;
        const u8* src = base + (ok ? gr : 0) * rowS + k0 / 16 + c * 8;
        cp_async8(ss + r * SROW + c * 8, src, ok ? 8 : 0);
    }
}

#if !SWAP_AB
// Decode and multiply one K step held in stage buffer sm. nt_live is
// unused here (every m16 token slice is computed, as in the seeds).
__device__ __forceinline__ void compute_stage(const u8* sm, int kvalid, float (&acc)[MT][NT][4],
#if DUAL
                                              float (&acc2)[MT][NT][4],
#endif
                                              int lane, int wm, int wn, int nt_live) {
    const u8* sA = sm;
    const u8* sB = sm + TILE_M * ROW_BYTES;
    const u8* sSA = sm + (TILE_M + B_ROWS) * ROW_BYTES;
    const u8* sSB = sSA + TILE_M * SROW;
    const int g = lane >> 2, t = lane & 3;
    const int nch = kvalid / 64;
#pragma unroll 1
    for (int ch = 0; ch < nch; ch++) {
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            const int wofs = ch * 32 + (t + 4 * hf) * 4;
            const int sg = ch * 4 + hf * 2 + (t >> 1);
            u32 aw[MT][2], as[MT][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    int r = wm * WARP_M + mt * 16 + g + 8 * h;
                    aw[mt][h] = *(const u32*)(sA + r * ROW_BYTES + wofs);
                    as[mt][h] = scale_h2(sSA[r * SROW + sg]);
                }
            }
#pragma unroll
            for (int s = 0; s < 2; s++) {
                u32 af[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    af[mt][0] = hmul2(fp4x2_to_h2(aw[mt][0] >> (16 * s)), as[mt][0]);
                    af[mt][1] = hmul2(fp4x2_to_h2(aw[mt][1] >> (16 * s)), as[mt][1]);
                    af[mt][2] = hmul2(fp4x2_to_h2(aw[mt][0] >> (16 * s + 8)), as[mt][0]);
                    af[mt][3] = hmul2(fp4x2_to_h2(aw[mt][1] >> (16 * s + 8)), as[mt][1]);
                }
#pragma unroll
                for (int nt = 0; nt < NT; nt++) {
                    int r = wn * WARP_N + nt * 8 + g;
                    u32 bw = *(const u32*)(sB + r * ROW_BYTES + wofs);
                    u32 bs = scale_h2(sSB[r * SROW + sg]);
                    u32 b0 = hmul2(fp4x2_to_h2(bw >> (16 * s)), bs);
                    u32 b1 = hmul2(fp4x2_to_h2(bw >> (16 * s + 8)), bs);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) mma16816(acc[mt][nt], af[mt], b0, b1);
#if DUAL
                    int r2 = TILE_N + r;
                    u32 bw2 = *(const u32*)(sB + r2 * ROW_BYTES + wofs);
                    u32 bs2 = scale_h2(sSB[r2 * SROW + sg]);
                    u32 c0 = hmul2(fp4x2_to_h2(bw2 >> (16 * s)), bs2);
                    u32 c1 = hmul2(fp4x2_to_h2(bw2 >> (16 * s + 8)), bs2);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) mma16816(acc2[mt][nt], af[mt], c0, c1);
#endif
                }
            }
        }
    }
}
#else
// Swapped: weight rows are the MMA's A operand (m16 tiles, MT per warp),
// token rows its B operand (n8 tiles, NT per warp). The fragment mapping
// over K is the one above, for both operands. Only the first nt_live n8
// token slices of the warp hold rows below M; the others are skipped
// (warp-uniform). Per 32-K half chunk the warp decodes its token slices
// once for both K steps (4 registers each), then walks its weight m16
// tiles, each decoded right before its MMAs, so few fragments are live
// next to the accumulators. With DUAL the B1 and B2 rows of the same
// columns share the decoded token fragments.
__device__ __forceinline__ void weight_frag(const u8* sB, const u8* sSB, int r, int wofs, int sg, u32 (&af)[2][4]) {
    u32 w0 = *(const u32*)(sB + r * ROW_BYTES + wofs);
    u32 w1 = *(const u32*)(sB + (r + 8) * ROW_BYTES + wofs);
    u32 s0 = scale_h2(sSB[r * SROW + sg]);
    u32 s1 = scale_h2(sSB[(r + 8) * SROW + sg]);
#pragma unroll
    for (int s = 0; s < 2; s++) {
        af[s][0] = hmul2(fp4x2_to_h2(w0 >> (16 * s)), s0);
        af[s][1] = hmul2(fp4x2_to_h2(w1 >> (16 * s)), s1);
        af[s][2] = hmul2(fp4x2_to_h2(w0 >> (16 * s + 8)), s0);
        af[s][3] = hmul2(fp4x2_to_h2(w1 >> (16 * s + 8)), s1);
    }
}

// FULL: every token slice of the warp is live, so the slice guards below
// compile away and the unrolled body has no branches for the compiler to
// schedule around (guarded per slice it measured 25% slower than the
// unswapped kernel on the H100, docs/KNOBS.md).
template <bool FULL>
__device__ __forceinline__ void compute_stage_sw(const u8* sm, int kvalid, float (&acc)[MT][NT][4],
#if DUAL
                                                 float (&acc2)[MT][NT][4],
#endif
                                                 int lane, int wm, int wn, int nt_live) {
    const u8* sA = sm;
    const u8* sB = sm + TILE_M * ROW_BYTES;
    const u8* sSA = sm + (TILE_M + B_ROWS) * ROW_BYTES;
    const u8* sSB = sSA + TILE_M * SROW;
    const int g = lane >> 2, t = lane & 3;
    const int nch = kvalid / 64;
#pragma unroll 1
    for (int ch = 0; ch < nch; ch++) {
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            const int wofs = ch * 32 + (t + 4 * hf) * 4;
            const int sg = ch * 4 + hf * 2 + (t >> 1);
            u32 tb[NT][2][2];  // [token slice][K step][b0, b1]
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                tb[nt][0][0] = tb[nt][0][1] = tb[nt][1][0] = tb[nt][1][1] = 0u;
                if (FULL || nt < nt_live) {
                    int r = wm * WARP_M + nt * 8 + g;
                    u32 w = *(const u32*)(sA + r * ROW_BYTES + wofs);
                    u32 sc = scale_h2(sSA[r * SROW + sg]);
#pragma unroll
                    for (int s = 0; s < 2; s++) {
                        tb[nt][s][0] = hmul2(fp4x2_to_h2(w >> (16 * s)), sc);
                        tb[nt][s][1] = hmul2(fp4x2_to_h2(w >> (16 * s + 8)), sc);
                    }
                }
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                const int r = wn * WARP_N + mt * 16 + g;
                u32 af[2][4];
                weight_frag(sB, sSB, r, wofs, sg, af);
#pragma unroll
                for (int s = 0; s < 2; s++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
                        if (FULL || nt < nt_live) mma16816(acc[mt][nt], af[s], tb[nt][s][0], tb[nt][s][1]);
#if DUAL
                weight_frag(sB, sSB, TILE_N + r, wofs, sg, af);
#pragma unroll
                for (int s = 0; s < 2; s++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
                        if (FULL || nt < nt_live) mma16816(acc2[mt][nt], af[s], tb[nt][s][0], tb[nt][s][1]);
#endif
            }
        }
    }
}

__device__ __forceinline__ void compute_stage(const u8* sm, int kvalid, float (&acc)[MT][NT][4],
#if DUAL
                                              float (&acc2)[MT][NT][4],
#endif
                                              int lane, int wm, int wn, int nt_live) {
    // A warp whose token rows all lie past M has nothing to compute: it
    // leaves the issue slots to the warps that do (it still meets every
    // barrier, which are outside this function).
    if (nt_live <= 0) return;
    if (nt_live >= NT)
        compute_stage_sw<true>(sm, kvalid, acc,
#if DUAL
                               acc2,
#endif
                               lane, wm, wn, nt_live);
    else
        compute_stage_sw<false>(sm, kvalid, acc,
#if DUAL
                                acc2,
#endif
                                lane, wm, wn, nt_live);
}
#endif

__device__ __forceinline__ void gemm_tile(const Operands& op) {
    extern __shared__ __align__(16) u8 smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 1, wn = warp & 1;

    float acc[MT][NT][4];
#if DUAL
    float acc2[MT][NT][4];
#endif
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                acc[mt][nt][i] = 0.f;
#if DUAL
                acc2[mt][nt][i] = 0.f;
#endif
            }

    // Swapped: n8 token slices of this warp that hold rows below M.
    int nt_live = NT;
#if SWAP_AB
    nt_live = (op.M - op.m0 - wm * WARP_M + 7) >> 3;
    nt_live = nt_live < 0 ? 0 : (nt_live > NT ? NT : nt_live);
#endif
    const int nk = (op.K + TILE_K - 1) / TILE_K;
#if STAGES == 1
#pragma unroll 1
    for (int kt = 0; kt < nk; kt++) {
        int k0 = kt * TILE_K, kv = imin(TILE_K, op.K - k0);
        load_stage(smem, op, k0, kv, tid);
        cp_async_commit();
        cp_async_wait<0>();
        __syncthreads();
#if DUAL
        compute_stage(smem, kv, acc, acc2, lane, wm, wn, nt_live);
#else
        compute_stage(smem, kv, acc, lane, wm, wn, nt_live);
#endif
        __syncthreads();  // the next load overwrites the buffer
    }
#else
    // Prologue: K steps 0 .. STAGES-2 in flight, one commit group each (empty
    // groups past the end keep the count uniform).
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) load_stage(smem + s * STAGE_BYTES, op, s * TILE_K, imin(TILE_K, op.K - s * TILE_K), tid);
        cp_async_commit();
    }
#pragma unroll 1
    for (int kt = 0; kt < nk; kt++) {
        cp_async_wait<STAGES - 2>();  // step kt has landed
        __syncthreads();              // for every thread, and step kt-1's buffer is free
        int nxt = kt + STAGES - 1;
        if (nxt < nk) load_stage(smem + (nxt % STAGES) * STAGE_BYTES, op, nxt * TILE_K, imin(TILE_K, op.K - nxt * TILE_K), tid);
        cp_async_commit();
        int kv = imin(TILE_K, op.K - kt * TILE_K);
#if DUAL
        compute_stage(smem + (kt % STAGES) * STAGE_BYTES, kv, acc, acc2, lane, wm, wn, nt_live);
#else
        compute_stage(smem + (kt % STAGES) * STAGE_BYTES, kv, acc, lane, wm, wn, nt_live);
#endif
    }
    cp_async_wait<0>();
#endif

    // Epilogue: undo the 2^-7 on each operand (and with DUAL apply
    // silu(acc1) * acc2), round to fp16.
    const float unscale = 16384.0f;
    const int g = lane >> 2, t = lane & 3;
#if STAGED
    // Stage the tile as fp16 [m][n]; the pipeline's buffers are free once
    // every warp is past its last compute_stage.
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            float x[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                x[e] = acc[mt][nt][e] * unscale;
#if DUAL
                x[e] = silu(x[e]) * (acc2[mt][nt][e] * unscale);
#endif
            }
#if SWAP_AB
            // Fragment rows are weight rows n, columns token rows m.
            const int n = wn * WARP_N + mt * 16 + g, m = wm * WARP_M + nt * 8 + 2 * t;
            u16* row0 = (u16*)(smem + m * EP_STRIDE);
            u16* row1 = (u16*)(smem + (m + 1) * EP_STRIDE);
            row0[n] = f2h(x[0]);
            row1[n] = f2h(x[1]);
            row0[n + 8] = f2h(x[2]);
            row1[n + 8] = f2h(x[3]);
#else
            const int m = wm * WARP_M + mt * 16 + g, n = wn * WARP_N + nt * 8 + 2 * t;
            *(u32*)(smem + m * EP_STRIDE + 2 * n) = pack_h2(x[0], x[1]);
            *(u32*)(smem + (m + 8) * EP_STRIDE + 2 * n) = pack_h2(x[2], x[3]);
#endif
        }
    }
    const int rows = imin(TILE_M, op.M - op.m0), cols = imin(TILE_N, op.N - op.n0);
#if EPI_TMA
    // The staged rows were written by the generic proxy; the copy engine
    // reads through the async proxy, so each writing thread fences before
    // the barrier. N % 64 == 0 and n0 % TILE_N == 0: a row is a multiple of
    // 128 bytes, its global address 128-byte aligned, its shared address
    // 16-byte aligned (EP_STRIDE % 16 == 0), as the bulk copy requires.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (tid < rows) {
        const u16* dst = op.c + (long long)(op.m0 + tid) * op.N + op.n0;
        u64 gdst;
        asm("cvta.to.global.u64 %0, %1;" : "=l"(gdst) : "l"(dst));
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gdst),
                     "r"(smem_addr(smem + tid * EP_STRIDE)), "r"(cols * 2)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        // The shared memory must stay valid until the copy engine has read
        // it: wait for the reads (the global writes complete on their own
        // before the grid does).
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
#else
    __syncthreads();
    // 16-byte stores, consecutive threads on consecutive chunks of a row.
    for (int i = tid; i < TILE_M * (TILE_N / 8); i += THREADS) {
        const int r = i / (TILE_N / 8), c = i % (TILE_N / 8);
        if (r < rows && c * 8 < cols) {
            const V4 v = *(const V4*)(smem + r * EP_STRIDE + c * 16);
            *(V4*)(op.c + (long long)(op.m0 + r) * op.N + op.n0 + c * 8) = v;
        }
    }
#endif
#else
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            int col = op.n0 + wn * WARP_N + nt * 8 + 2 * t;
            if (col >= op.N) continue;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int row = op.m0 + wm * WARP_M + mt * 16 + g + 8 * h;
                if (row >= op.M) continue;
                float x0 = acc[mt][nt][2 * h] * unscale, x1 = acc[mt][nt][2 * h + 1] * unscale;
#if DUAL
                x0 = silu(x0) * (acc2[mt][nt][2 * h] * unscale);
                x1 = silu(x1) * (acc2[mt][nt][2 * h + 1] * unscale);
#endif
                *(u32*)(op.c + (long long)row * op.N + col) = pack_h2(x0, x1);
            }
        }
    }
#endif
}

#if DUAL
extern "C" __global__ void __launch_bounds__(THREADS) gemm_dual(const u8* a, const u8* sa, const u8* b1, const u8* sb1,
                                                             const u8* b2, const u8* sb2, u16* c, int M, int N, int K) {
    Operands op = {a, sa, b1, sb1, b2, sb2, c, M, N, K, (int)blockIdx.y * TILE_M, (int)blockIdx.x * TILE_N};
    gemm_tile(op);
}
#else
extern "C" __global__ void __launch_bounds__(THREADS) gemm_group(const u8* a, const u8* sa, const u8* b, const u8* sb,
                                                              u16* c, int M, int N, int K) {
    Operands op = {a, sa, b, sb, 0, 0, c, M, N, K, (int)blockIdx.y * TILE_M, (int)blockIdx.x * TILE_N};
    gemm_tile(op);
}

// One launch for all groups: block i computes tile i of the table built by
// kernels.groupedTable: G descriptors {A, SA, B, SB, C, M} of 8 bytes each,
// then {group, m0, n0, 0} int32 per tile.
extern "C" __global__ void __launch_bounds__(THREADS) gemm_grouped(const u8* table, int G, int ntiles, int N, int K) {
    int i = blockIdx.x;
    if (i >= ntiles) return;
    const int* te = (const int*)(table + (long long)G * 48) + 4 * i;
    int grp = te[0];
    const u64* d = (const u64*)table + 6 * grp;
    Operands op = {(const u8*)d[0], (const u8*)d[1], (const u8*)d[2], (const u8*)d[3], 0, 0, (u16*)d[4],
                   (int)d[5], N, K, te[1], te[2]};
    gemm_tile(op);
}
#endif
