// GPU reference for the NVFP4 GEMMs: one thread per output element, every
// FP4 element and e4m3 scale decoded from its bit definition, products
// accumulated in double, the result written as double. Written to be
// obviously correct, not fast: it checks the CPU reference on small shapes
// and every fast variant on all shapes.
//
// Layout (see internal/nvfp4): an operand of R rows x K is K-major, two FP4
// codes per byte (element 2i in the low nibble of byte i), rows back to back;
// one e4m3 scale per 16 K elements, row-major R x K/16.
//
// No toolkit headers: NVRTC alone compiles this on any version from 11.8.

typedef unsigned char u8;

// e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is
// subnormal: 0.m * 2^0.
__device__ double ref_e2m1(unsigned code) {
    double sign = (code & 8u) ? -1.0 : 1.0;
    unsigned e = (code >> 1) & 3u;
    double m = (double)(code & 1u);
    if (e == 0u) return sign * (m / 2.0);
    double p = 1.0;
    for (unsigned i = 1u; i < e; i++) p *= 2.0;  // 2^(e-1)
    return sign * (1.0 + m / 2.0) * p;
}

// e4m3 ("FN"): sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0
// is subnormal: 0.mmm * 2^-6. The NaN codes decode to NaN so that a bad
// scale cannot pass silently.
__device__ double ref_e4m3(unsigned code) {
    double sign = (code & 0x80u) ? -1.0 : 1.0;
    unsigned e = (code >> 3) & 15u;
    double m = (double)(code & 7u);
    if (e == 15u && (code & 7u) == 7u) return __longlong_as_double(0x7ff8000000000000LL);
    if (e == 0u) return sign * (m / 8.0) / 64.0;
    double p = 1.0;
    int ex = (int)e - 7;
    for (int i = 0; i < ex; i++) p *= 2.0;
    for (int i = 0; i > ex; i--) p /= 2.0;
    return sign * (1.0 + m / 8.0) * p;
}

// Element (r, k) of an operand with K columns.
__device__ double ref_elem(const u8* data, const u8* scales, int r, int k, int K) {
    long long idx = (long long)r * K + k;
    unsigned byte = data[idx / 2];
    unsigned code = (k & 1) ? (byte >> 4) : (byte & 15u);
    unsigned sc = scales[(long long)r * (K / 16) + k / 16];
    return ref_e2m1(code) * ref_e4m3(sc);
}

__device__ double ref_dot(const u8* a, const u8* sa, const u8* b, const u8* sb, int row, int col, int K) {
    double acc = 0.0;
    for (int k = 0; k < K; k++) acc += ref_elem(a, sa, row, k, K) * ref_elem(b, sb, col, k, K);
    return acc;
}

// out[row*N + col] = sum_k A[row,k] * B[col,k]
extern "C" __global__ void ref_group(const u8* a, const u8* sa, const u8* b, const u8* sb,
                                     double* out, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    out[(long long)row * N + col] = ref_dot(a, sa, b, sb, row, col, K);
}

// out = silu(A B1^T) * (A B2^T), silu(x) = x / (1 + e^-x).
extern "C" __global__ void ref_dual(const u8* a, const u8* sa, const u8* b1, const u8* sb1,
                                    const u8* b2, const u8* sb2, double* out, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    double g = ref_dot(a, sa, b1, sb1, row, col, K);
    double u = ref_dot(a, sa, b2, sb2, row, col, K);
    out[(long long)row * N + col] = g / (1.0 + exp(-g)) * u;
}
