// Stand-in for the CUDA device builtins, for clang -fsyntax-only only
// (dev/cudasyntax/check.sh): each declaration is what the checked sources
// use, with the signature CUDA gives it.
#include "host.h" // the execution-space keywords
struct __dim3 { unsigned x, y, z; };
extern const __device__ __dim3 threadIdx, blockIdx, blockDim, gridDim;
__device__ void __syncthreads();
__device__ void __syncwarp(unsigned m = 0xffffffffu);
__device__ long long clock64();
__device__ unsigned __byte_perm(unsigned, unsigned, unsigned);
__device__ unsigned __float_as_uint(float);
__device__ unsigned __shfl_sync(unsigned, unsigned, int);
__device__ int __shfl_sync(unsigned, int, int);
__device__ unsigned atomicAdd(unsigned*, unsigned);
__device__ int atomicAdd(int*, int);
typedef unsigned long size_t;
