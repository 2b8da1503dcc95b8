// TEST-ONLY kernels that cheat the timer, so the bench's tests can show that
// every class of cheat GPU MODE's leaderboard has seen is caught and named:
// the kernel computes a correct result when it believes it is being checked
// and skips the work otherwise. kernels.ResolveVariant hands out the "cheat"
// variant only when PITCHTANK_TEST_KERNELS=1 is set in the resolving process.
//
// Every mode runs the same three steps (kernels/plan.go's cheatPlan):
// cheat_before (one thread) decides whether this execution skips the work or
// copies a cached result, the compute launches (one per group) do as told,
// and cheat_after (one thread) does the bookkeeping. The state lives in
// __device__ globals, so it lasts as long as the module stays loaded.
//
// CHEAT_MODE
//   1 replay:        computes on the first execution, then leaves C as it is
//                    (an earlier launch's output reused: passed as 14x before
//                    timed samples were poisoned and checked).
//   2 sentinel:      computes only when C[0] holds a NaN, i.e. when the
//                    harness has just poisoned C for a check.
//   3 keyed_content: caches C and replays it while the first 16 bytes of A's
//                    and B's first rows are unchanged (a cheap content key).
//   4 keyed_address: caches C and replays it while C and A sit at the same
//                    addresses.
//   5 detached:      computes honestly, but its plan launches the work on a
//                    side stream that is never joined, so the timer's stop
//                    event fires before the work is done.
//   6 alternate:     computes on every other execution only.
//
// The compute kernel is a plain tiled SIMT GEMM (64x64 tile, 4x4 per
// thread, FP4 and scales decoded to float in shared memory, fp32 sums): far
// slower than the real variants, which makes a skipped execution stand out.
//
// Layout as in reference.cu: K-major FP4, two codes per byte (element 2i in
// the low nibble of byte i), one e4m3 scale per 16 K elements, row-major.
// No headers: NVRTC alone compiles this from 11.8 on.

#ifndef CHEAT_MODE
#define CHEAT_MODE 1
#endif
#ifndef DUAL
#define DUAL 0
#endif

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned long long u64;

#define CT 64          // output tile edge
#define CK 32          // K chunk
#define CACHE_ELEMS (1 << 24)

__device__ unsigned ct_launches;
__device__ int ct_skip;
__device__ int ct_copy;
__device__ int ct_store;
__device__ int ct_have;
__device__ u64 ct_key;
__device__ u16 ct_cache[CACHE_ELEMS];

__device__ __forceinline__ float ct_e2m1(unsigned c) {
    const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    float v = mag[c & 7u];
    return (c & 8u) ? -v : v;
}

__device__ __forceinline__ float ct_e4m3(unsigned c) {
    unsigned e = (c >> 3) & 15u, m = c & 7u;
    float v = e == 0u ? ldexpf((float)m / 8.0f, -6) : ldexpf(1.0f + (float)m / 8.0f, (int)e - 7);
    return (c & 0x80u) ? -v : v;
}

__device__ __forceinline__ float ct_elem(const u8* d, const u8* s, int r, int k, int K) {
    long long i = (long long)r * K + k;
    unsigned byte = d[i / 2];
    unsigned code = (k & 1) ? (byte >> 4) : (byte & 15u);
    return ct_e2m1(code) * ct_e4m3(s[(long long)r * (K / 16) + k / 16]);
}

__device__ __forceinline__ u16 ct_f16(float x) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

extern "C" __global__ void cheat_before(const u8* a0, const u8* b0, const u16* c0, long long outElems) {
    ct_copy = 0;
    ct_skip = 0;
    ct_store = 0;
#if CHEAT_MODE == 1
    ct_skip = ct_launches > 0u;
#elif CHEAT_MODE == 2
    unsigned h = c0[0];
    ct_skip = !((h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0u);
#elif CHEAT_MODE == 3 || CHEAT_MODE == 4
#if CHEAT_MODE == 3
    u64 key = 1469598103934665603ull;
    for (int i = 0; i < 16; i++) key = (key ^ a0[i]) * 1099511628211ull;
    for (int i = 0; i < 16; i++) key = (key ^ b0[i]) * 1099511628211ull;
#else
    u64 key = (u64)c0 ^ ((u64)a0 << 1);
#endif
    if (outElems <= CACHE_ELEMS) {
        if (ct_have && key == ct_key) {
            ct_copy = 1;
        } else {
            ct_store = 1;
            ct_key = key;
        }
    }
#elif CHEAT_MODE == 6
    ct_skip = (ct_launches & 1u) != 0u;
#endif
}

extern "C" __global__ void cheat_after() {
    ct_launches++;
    if (ct_store) ct_have = 1;
}

#if DUAL
extern "C" __global__ void cheat_compute(const u8* a, const u8* sa, const u8* b, const u8* sb,
                                         const u8* b2, const u8* sb2, u16* c, int M, int N, int K, int coff)
#else
extern "C" __global__ void cheat_compute(const u8* a, const u8* sa, const u8* b, const u8* sb,
                                         u16* c, int M, int N, int K, int coff)
#endif
{
    if (ct_skip) return;
    int n0 = blockIdx.x * CT, m0 = blockIdx.y * CT;
    int tx = threadIdx.x, ty = threadIdx.y;  // 16 x 16
    if (ct_copy) {
        for (int i = ty; i < CT; i += 16)
            for (int j = tx; j < CT; j += 16) {
                int m = m0 + i, n = n0 + j;
                if (m < M && n < N) c[(long long)m * N + n] = ct_cache[coff + (long long)m * N + n];
            }
        return;
    }
    __shared__ float sA[CT][CK + 1], sB[CT][CK + 1];
#if DUAL
    __shared__ float sB2[CT][CK + 1];
    float acc2[4][4] = {};
#endif
    float acc[4][4] = {};
    int tid = ty * 16 + tx;
    for (int k0 = 0; k0 < K; k0 += CK) {
        for (int e = tid; e < CT * CK; e += 256) {
            int r = e / CK, k = e % CK;
            sA[r][k] = (m0 + r < M) ? ct_elem(a, sa, m0 + r, k0 + k, K) : 0.0f;
            sB[r][k] = (n0 + r < N) ? ct_elem(b, sb, n0 + r, k0 + k, K) : 0.0f;
#if DUAL
            sB2[r][k] = (n0 + r < N) ? ct_elem(b2, sb2, n0 + r, k0 + k, K) : 0.0f;
#endif
        }
        __syncthreads();
        for (int k = 0; k < CK; k++) {
            float av[4], bv[4];
            for (int i = 0; i < 4; i++) av[i] = sA[ty * 4 + i][k];
            for (int j = 0; j < 4; j++) bv[j] = sB[tx * 4 + j][k];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
#if DUAL
            for (int j = 0; j < 4; j++) bv[j] = sB2[tx * 4 + j][k];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc2[i][j] += av[i] * bv[j];
#endif
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int m = m0 + ty * 4 + i, n = n0 + tx * 4 + j;
            if (m >= M || n >= N) continue;
            float v = acc[i][j];
#if DUAL
            v = v / (1.0f + expf(-v)) * acc2[i][j];
#endif
            u16 h = ct_f16(v);
            c[(long long)m * N + n] = h;
            if (ct_store) ct_cache[coff + (long long)m * N + n] = h;
        }
}
