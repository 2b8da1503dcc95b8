// Declarations for the slice of the CUDA driver API and NVRTC that package
// gpu uses, written here so the package builds without a CUDA toolkit. Both
// libraries are opened with dlopen at run time; every wrapper checks its
// function pointer and returns PT_MISSING instead of calling through NULL.
#ifndef PITCHTANK_CUDADL_H
#define PITCHTANK_CUDADL_H

#include <stddef.h>

// PT_MISSING is returned by a wrapper whose symbol was not found. It is
// outside both libraries' result ranges.
#define PT_MISSING (-424242)

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct { char bytes[16]; } CUuuid;

// cuLaunchKernelEx's configuration (CUDA 12.0+), laid out as the driver's
// cuda.h declares it: an attribute is a 4-byte id, 4 bytes of padding and a
// 64-byte value union.
typedef struct {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int i;
	} value;
} CUlaunchAttribute;
typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes in cuda.h");
_Static_assert(offsetof(CUlaunchConfig, hStream) == 32 && offsetof(CUlaunchConfig, attrs) == 40 &&
		sizeof(CUlaunchConfig) == 56, "CUlaunchConfig's layout in cuda.h");
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the launch may
// begin before the previous kernel on its stream has finished, once that
// kernel's blocks have all executed griddepcontrol.launch_dependents (or
// exited); the kernel's griddepcontrol.wait then waits for it to complete.
#define PT_ATTR_PROGRAMMATIC_SERIALIZATION 6

// X(required, field, symbol, (params), (args))
#define PT_CU_LIST(X) \
	X(1, cuInit, "cuInit", (unsigned int flags), (flags)) \
	X(1, cuDriverGetVersion, "cuDriverGetVersion", (int *v), (v)) \
	X(1, cuGetErrorName, "cuGetErrorName", (CUresult e, const char **s), (e, s)) \
	X(1, cuGetErrorString, "cuGetErrorString", (CUresult e, const char **s), (e, s)) \
	X(1, cuDeviceGetCount, "cuDeviceGetCount", (int *n), (n)) \
	X(1, cuDeviceGet, "cuDeviceGet", (CUdevice *d, int ordinal), (d, ordinal)) \
	X(1, cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice d), (name, len, d)) \
	X(0, cuDeviceGetUuid, "cuDeviceGetUuid", (CUuuid *u, CUdevice d), (u, d)) \
	X(1, cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t *b, CUdevice d), (b, d)) \
	X(1, cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *v, int attr, CUdevice d), (v, attr, d)) \
	X(1, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *c, CUdevice d), (c, d)) \
	X(1, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice d), (d)) \
	X(0, cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", (CUdevice d), (d)) \
	X(1, cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext c), (c)) \
	X(1, cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *p, size_t n), (p, n)) \
	X(1, cuMemFree, "cuMemFree_v2", (CUdeviceptr p), (p)) \
	X(1, cuMemGetInfo, "cuMemGetInfo_v2", (size_t *free, size_t *total), (free, total)) \
	X(1, cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void *src, size_t n), (dst, src, n)) \
	X(1, cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *dst, CUdeviceptr src, size_t n), (dst, src, n)) \
	X(1, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s)) \
	X(1, cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr p, unsigned char v, size_t n, CUstream s), (p, v, n, s)) \
	X(1, cuModuleLoadData, "cuModuleLoadData", (CUmodule *m, const void *image), (m, image)) \
	X(1, cuModuleUnload, "cuModuleUnload", (CUmodule m), (m)) \
	X(1, cuModuleGetFunction, "cuModuleGetFunction", (CUfunction *f, CUmodule m, const char *name), (f, m, name)) \
	X(1, cuFuncGetAttribute, "cuFuncGetAttribute", (int *v, int attr, CUfunction f), (v, attr, f)) \
	X(1, cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attr, int v), (f, attr, v)) \
	X(0, cuFuncGetParamInfo, "cuFuncGetParamInfo", (CUfunction f, size_t i, size_t *off, size_t *size), (f, i, off, size)) \
	X(1, cuLaunchKernel, "cuLaunchKernel", \
		(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params, void **extra), \
		(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra)) \
	X(0, cuLaunchKernelEx, "cuLaunchKernelEx", (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra), (cfg, f, params, extra)) \
	X(0, cuMemHostAlloc, "cuMemHostAlloc", (void **p, size_t n, unsigned int flags), (p, n, flags)) \
	X(0, cuMemFreeHost, "cuMemFreeHost", (void *p), (p)) \
	X(0, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", (CUdeviceptr *d, void *p, unsigned int flags), (d, p, flags)) \
	X(0, cuStreamWaitValue32, "cuStreamWaitValue32_v2", (CUstream s, CUdeviceptr addr, unsigned int value, unsigned int flags), (s, addr, value, flags)) \
	X(1, cuStreamCreate, "cuStreamCreate", (CUstream *s, unsigned int flags), (s, flags)) \
	X(1, cuStreamDestroy, "cuStreamDestroy_v2", (CUstream s), (s)) \
	X(1, cuStreamSynchronize, "cuStreamSynchronize", (CUstream s), (s)) \
	X(1, cuStreamQuery, "cuStreamQuery", (CUstream s), (s)) \
	X(1, cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream s, CUevent e, unsigned int flags), (s, e, flags)) \
	X(1, cuEventCreate, "cuEventCreate", (CUevent *e, unsigned int flags), (e, flags)) \
	X(1, cuEventDestroy, "cuEventDestroy_v2", (CUevent e), (e)) \
	X(1, cuEventRecord, "cuEventRecord", (CUevent e, CUstream s), (e, s)) \
	X(1, cuEventSynchronize, "cuEventSynchronize", (CUevent e), (e)) \
	X(1, cuEventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent a, CUevent b), (ms, a, b)) \
	X(0, cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream s, int mode), (s, mode)) \
	X(0, cuStreamEndCapture, "cuStreamEndCapture", (CUstream s, CUgraph *g), (s, g)) \
	X(0, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", (CUgraphExec *ge, CUgraph g, unsigned long long flags), (ge, g, flags)) \
	X(0, cuGraphLaunch, "cuGraphLaunch", (CUgraphExec ge, CUstream s), (ge, s)) \
	X(0, cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec ge), (ge)) \
	X(0, cuGraphDestroy, "cuGraphDestroy", (CUgraph g), (g))

#define PT_FIELD(req, name, sym, params, args) CUresult (*name) params;

typedef struct pt_cu_api {
	void *handle;
	PT_CU_LIST(PT_FIELD)
	CUresult (*cuCtxSynchronize)(void);
} pt_cu_api;

#define PT_UNPAREN(...) __VA_ARGS__
#define PT_EXPAND(x) x
#define PT_WRAP(req, name, sym, params, args) \
	static inline CUresult pt_##name(const pt_cu_api *pt_api, PT_EXPAND(PT_UNPAREN params)) { \
		if (pt_api == NULL || pt_api->name == NULL) return PT_MISSING; \
		return pt_api->name args; \
	}
PT_CU_LIST(PT_WRAP)

static inline CUresult pt_cuCtxSynchronize(const pt_cu_api *a) {
	if (a == NULL || a->cuCtxSynchronize == NULL) return PT_MISSING;
	return a->cuCtxSynchronize();
}

// CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP: pinned host memory
// the device can read, at an address of its own.
#define PT_MEMHOSTALLOC_MAPPED 0x3
// CU_STREAM_WAIT_VALUE_GEQ: the stream waits until (int32)(*addr - value) >= 0.
#define PT_STREAM_WAIT_GEQ 0x0

// pt_store_release writes v to a host word the device polls: a volatile
// store after a compiler barrier, so everything enqueued before it is
// enqueued before the device can see it.
static inline void pt_store_release(void *p, unsigned int v) {
	__atomic_store_n((unsigned int *)p, v, __ATOMIC_RELEASE);
}

// pt_launch_overlapped launches f like cuLaunchKernel with programmatic
// stream serialization allowed (PT_ATTR_PROGRAMMATIC_SERIALIZATION), or
// returns PT_MISSING where the driver has no cuLaunchKernelEx.
static inline CUresult pt_launch_overlapped(const pt_cu_api *a, CUfunction f, unsigned int gx, unsigned int gy,
		unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, CUstream s,
		void **params) {
	CUlaunchAttribute attr;
	CUlaunchConfig cfg;
	for (size_t i = 0; i < sizeof attr; i++) ((char *)&attr)[i] = 0;
	attr.id = PT_ATTR_PROGRAMMATIC_SERIALIZATION;
	attr.value.i = 1;
	cfg.gridDimX = gx;
	cfg.gridDimY = gy;
	cfg.gridDimZ = gz;
	cfg.blockDimX = bx;
	cfg.blockDimY = by;
	cfg.blockDimZ = bz;
	cfg.sharedMemBytes = shmem;
	cfg.hStream = s;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	return pt_cuLaunchKernelEx(a, &cfg, f, params, NULL);
}

// pt_cu_open dlopens path and looks up every symbol. It returns NULL and
// writes a message to err when the library or a required symbol is missing;
// optional symbols stay NULL.
pt_cu_api *pt_cu_open(const char *path, char *err, size_t errlen);

// NVRTC.
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

#define PT_NVRTC_LIST(X) \
	X(1, nvrtcVersion, "nvrtcVersion", (int *major, int *minor), (major, minor)) \
	X(1, nvrtcCreateProgram, "nvrtcCreateProgram", \
		(nvrtcProgram *p, const char *src, const char *name, int nh, const char *const *headers, const char *const *names), \
		(p, src, name, nh, headers, names)) \
	X(1, nvrtcDestroyProgram, "nvrtcDestroyProgram", (nvrtcProgram *p), (p)) \
	X(1, nvrtcCompileProgram, "nvrtcCompileProgram", (nvrtcProgram p, int n, const char *const *opts), (p, n, opts)) \
	X(1, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", (nvrtcProgram p, size_t *n), (p, n)) \
	X(1, nvrtcGetProgramLog, "nvrtcGetProgramLog", (nvrtcProgram p, char *log), (p, log)) \
	X(1, nvrtcGetPTXSize, "nvrtcGetPTXSize", (nvrtcProgram p, size_t *n), (p, n)) \
	X(1, nvrtcGetPTX, "nvrtcGetPTX", (nvrtcProgram p, char *ptx), (p, ptx)) \
	X(1, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", (nvrtcProgram p, size_t *n), (p, n)) \
	X(1, nvrtcGetCUBIN, "nvrtcGetCUBIN", (nvrtcProgram p, char *cubin), (p, cubin))

#define PT_NVRTC_FIELD(req, name, sym, params, args) nvrtcResult (*name) params;

typedef struct pt_nvrtc_api {
	void *handle;
	PT_NVRTC_LIST(PT_NVRTC_FIELD)
	const char *(*nvrtcGetErrorString)(nvrtcResult r);
} pt_nvrtc_api;

#define PT_NVRTC_WRAP(req, name, sym, params, args) \
	static inline nvrtcResult pt_##name(const pt_nvrtc_api *pt_api, PT_EXPAND(PT_UNPAREN params)) { \
		if (pt_api == NULL || pt_api->name == NULL) return PT_MISSING; \
		return pt_api->name args; \
	}
PT_NVRTC_LIST(PT_NVRTC_WRAP)

static inline const char *pt_nvrtcGetErrorString(const pt_nvrtc_api *a, nvrtcResult r) {
	if (a == NULL || a->nvrtcGetErrorString == NULL) return "nvrtcGetErrorString unavailable";
	return a->nvrtcGetErrorString(r);
}

pt_nvrtc_api *pt_nvrtc_open(const char *path, char *err, size_t errlen);

#endif
