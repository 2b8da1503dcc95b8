// Stand-in for the CUDA execution-space keywords (both passes; device.h
// includes it), for clang -fsyntax-only only (dev/cudasyntax/check.sh).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline)) inline
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
// A thread block cluster's shape (sm_90); clang-14 has no attribute for it.
#define __cluster_dims__(...)
