// The measurement harness's own device code (not a kernel variant): what
// internal/bench does to a role's buffers between timed samples, outside
// the timed region, so that no kernel can reuse an earlier launch's work.
//
// pt_fill writes seeded random bytes over a buffer (the output and any
// workspace before every checked and timed launch): a kernel that leaves an
// element unwritten leaves random bits there, which the check catches, and
// the pattern differs per launch, so no kernel can recognise "the poison"
// and tell a checked launch from a timed one.
//
// pt_flip_rows negates a seeded random half of an operand's rows by
// flipping the sign bit of both FP4 codes of every byte in them (e2m1's
// sign is bit 3 of each nibble). That changes the inputs' contents between
// samples while the exact result stays known on the host: in the group GEMM
// a negated row of A negates that row of C and a negated row of B that
// column (both are flipped, so even M = 1 changes N bits); in the dual GEMM
// a negated row of B2 negates that column of C (silu(A B1^T) * (A B2^T) is
// linear in B2). Every product and sum is negated exactly, so the
// reference is the old one with those rows and columns negated
// (engine.FlipColumnBase numbers the bits).
//
// The row mask must match internal/bench's flipBit bit for bit: row r flips
// when the splitmix64 finaliser of seed + (r + 1) * golden is odd.
//
// No headers: NVRTC alone compiles this from 11.8 on.

typedef unsigned char u8;
typedef unsigned long long u64;

__device__ __forceinline__ u64 pt_mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// pt_fill: byte i of p gets byte (i % 8) of pt_mix(seed + (i / 8 + 1) * golden).
extern "C" __global__ void pt_fill(u8* p, long long n, u64 seed) {
    long long words = (n + 7) / 8;
    for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < words;
         w += (long long)gridDim.x * blockDim.x) {
        u64 v = pt_mix(seed + (u64)(w + 1) * 0x9E3779B97F4A7C15ull);
        long long base = w * 8;
        if (base + 8 <= n && (((unsigned long long)p + base) & 7ull) == 0) {
            *(u64*)(p + base) = v;
        } else {
            for (int b = 0; b < 8 && base + b < n; b++) p[base + b] = (u8)(v >> (8 * b));
        }
    }
}

// pt_flip_rows: rows of rowBytes bytes, back to back; row r is negated when
// flip bit rowBase + r of seed is set. One block walks rows, its threads
// the row's 16-byte words (rowBytes is a multiple of 16: K % 32 == 0).
extern "C" __global__ void pt_flip_rows(u8* p, int rows, int rowBytes, u64 seed, int rowBase) {
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        u64 z = pt_mix(seed + (u64)(rowBase + r + 1) * 0x9E3779B97F4A7C15ull);
        if ((z & 1ull) == 0ull) continue;
        uint4* row = (uint4*)(p + (long long)r * rowBytes);
        for (int i = threadIdx.x; i < rowBytes / 16; i += blockDim.x) {
            uint4 v = row[i];
            v.x ^= 0x88888888u;
            v.y ^= 0x88888888u;
            v.z ^= 0x88888888u;
            v.w ^= 0x88888888u;
            row[i] = v;
        }
    }
}
