// Stand-in for the CUDA runtime header, for clang -fsyntax-only only.
#pragma once
#include <cstddef>
typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyDeviceToHost = 2 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
struct cudaDeviceProp { char name[256]; int multiProcessorCount, major, minor; };
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
typedef struct CUstream_st* cudaStream_t;
cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int);
cudaError_t cudaMalloc(void**, size_t);
template <class T> cudaError_t cudaMalloc(T** p, size_t n) { return cudaMalloc((void**)p, n); }
template <class T> cudaError_t cudaFuncSetAttribute(T, cudaFuncAttribute, int);
cudaError_t cudaGetLastError();
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind);
const char* cudaGetErrorString(cudaError_t);
extern "C" unsigned __cudaPushCallConfiguration(dim3, dim3, size_t = 0, void* = 0);
extern "C" int cudaConfigureCall(dim3, dim3, size_t = 0, cudaStream_t = 0);
