// clear_gemm.cu: the NVFP4 group GEMM written to be read, not to be fast.
// It follows docs/kernel-contract.md: one launch per group of
//
//   clear_gemm(a, sa, b, sb, c, M, N, K)
//
// computing C[m][n] = sum_k A[m][k] * B[n][k] for one group, with
//   a  : M x K FP4 (e2m1) codes, K-major, two per byte (element 2i in the
//        low nibble of byte i), rows back to back: M * K/2 bytes;
//   sa : one e4m3 scale per 16 K elements, row-major: M * K/16 bytes;
//   b, sb : the same for the N x K weights;
//   c  : M x N fp16, row-major.
// The grid is (ceil(N / TILE_N), ceil(M / TILE_M)) blocks of 16 x 16
// threads (manifest.json: launch.block, tile_m, tile_n); K is a multiple
// of 128 (the problem's shape rules), so it is a multiple of K_STEP.
//
// Each block computes a TILE_M x TILE_N tile of C. It walks K in steps of
// K_STEP elements: the threads decode the step's A and B elements to float
// into shared memory, then each thread multiplies its 2 x 2 outputs' rows
// and columns. STAGES (the knob "stages") is the number of shared-memory
// buffers: with 2, the next step is decoded into the other buffer while
// this one is used, so each step needs one barrier instead of two.
//
// The only include is the project's shared header (pt_common.cuh), given
// to NVRTC with every CUDA kernel: fg_f2h rounds a float to fp16.

#include "pt_common.cuh"

#ifndef STAGES
#define STAGES 2
#endif
#if STAGES != 1 && STAGES != 2
#error "clear_gemm: STAGES must be 1 or 2"
#endif

#define TILE_M 32 // token rows per block (manifest: launch.tile_m)
#define TILE_N 32 // output columns per block (manifest: launch.tile_n)
#define K_STEP 64 // K elements decoded to shared memory per step
#define THREADS 256

// e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit. Exponent 0 is
// subnormal (0 or 0.5); the eight magnitudes are 0, 0.5, 1, 1.5, 2, 3, 4, 6.
__device__ __forceinline__ float decode_e2m1(unsigned code) {
    float sign = (code & 8u) ? -1.0f : 1.0f;
    unsigned e = (code >> 1) & 3u;
    float m = (float)(code & 1u);
    if (e == 0u) return sign * 0.5f * m;
    return sign * (1.0f + 0.5f * m) * (float)(1u << (e - 1u));
}

// e4m3 (the "FN" variant): sign, 4 exponent bits (bias 7), 3 mantissa
// bits; exponent 0 is subnormal (m/8 * 2^-6); S.1111.111 is NaN, so a bad
// scale shows as a wrong result rather than passing silently.
__device__ __forceinline__ float decode_e4m3(unsigned code) {
    float sign = (code & 0x80u) ? -1.0f : 1.0f;
    unsigned e = (code >> 3) & 15u;
    unsigned m = code & 7u;
    if (e == 15u && m == 7u) return __int_as_float(0x7fc00000);
    if (e == 0u) return sign * (float)m / 512.0f;
    return sign * (1.0f + (float)m / 8.0f) * (float)(1u << e) / 128.0f;
}

// Element (row, k) of an operand with K columns, scale folded in; rows at
// or past `rows` read as zero so partial tiles need no other care.
__device__ __forceinline__ float element(const unsigned char* data, const unsigned char* scales,
                                         int row, int rows, int k, int K) {
    if (row >= rows) return 0.0f;
    unsigned byte = data[(long long)row * (K / 2) + k / 2];
    unsigned code = (k & 1) ? (byte >> 4) : (byte & 15u);
    unsigned scale = scales[(long long)row * (K / 16) + k / 16];
    return decode_e2m1(code) * decode_e4m3(scale);
}

// Decodes step k0's TILE_M rows of A and TILE_N rows of B into one buffer.
// The +1 column keeps a warp's reads of one k from hitting one bank.
__device__ void load_step(float (*as)[K_STEP + 1], float (*bs)[K_STEP + 1],
                          const unsigned char* a, const unsigned char* sa,
                          const unsigned char* b, const unsigned char* sb,
                          int m0, int n0, int M, int N, int K, int k0, int tid) {
    for (int i = tid; i < TILE_M * K_STEP; i += THREADS) {
        int r = i / K_STEP, k = i % K_STEP;
        as[r][k] = element(a, sa, m0 + r, M, k0 + k, K);
    }
    for (int i = tid; i < TILE_N * K_STEP; i += THREADS) {
        int r = i / K_STEP, k = i % K_STEP;
        bs[r][k] = element(b, sb, n0 + r, N, k0 + k, K);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
clear_gemm(const unsigned char* a, const unsigned char* sa, const unsigned char* b, const unsigned char* sb,
           unsigned short* c, int M, int N, int K) {
    __shared__ float as[STAGES][TILE_M][K_STEP + 1];
    __shared__ float bs[STAGES][TILE_N][K_STEP + 1];

    const int tid = threadIdx.y * 16 + threadIdx.x;
    const int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
    // This thread's 2 x 2 outputs: rows ty, ty + 16; columns tx, tx + 16.
    const int ty = threadIdx.y, tx = threadIdx.x;
    float acc[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};

    const int steps = K / K_STEP;
    load_step(as[0], bs[0], a, sa, b, sb, m0, n0, M, N, K, 0, tid);
    __syncthreads();
    for (int s = 0; s < steps; s++) {
        const int cur = (STAGES == 2) ? (s & 1) : 0;
        if (STAGES == 2 && s + 1 < steps) {
            // The other buffer was last read in step s - 1, which every
            // thread finished before the barrier at the end of that step.
            load_step(as[cur ^ 1], bs[cur ^ 1], a, sa, b, sb, m0, n0, M, N, K, (s + 1) * K_STEP, tid);
        }
        for (int k = 0; k < K_STEP; k++) {
            float x0 = as[cur][ty][k], x1 = as[cur][ty + 16][k];
            float y0 = bs[cur][tx][k], y1 = bs[cur][tx + 16][k];
            acc[0][0] += x0 * y0;
            acc[0][1] += x0 * y1;
            acc[1][0] += x1 * y0;
            acc[1][1] += x1 * y1;
        }
        __syncthreads(); // everyone is done with buffer cur (and the next one is written)
        if (STAGES == 1 && s + 1 < steps) {
            load_step(as[0], bs[0], a, sa, b, sb, m0, n0, M, N, K, (s + 1) * K_STEP, tid);
            __syncthreads();
        }
    }

    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
            if (m < M && n < N) c[(long long)m * N + n] = fg_f2h(acc[i][j]);
        }
    }
}
