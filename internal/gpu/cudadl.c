// Run-time loading of the CUDA driver and NVRTC (see cudadl.h).
#include "cudadl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	int required;
	size_t offset;
	const char *symbol;
} pt_sym;

// pt_bind looks up each symbol into the struct at base. On a missing
// required symbol it writes its name to err and returns 0.
static int pt_bind(void *handle, void *base, const pt_sym *syms, size_t n, char *err, size_t errlen) {
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(handle, syms[i].symbol);
		if (p == NULL && syms[i].required) {
			snprintf(err, errlen, "symbol %s not found", syms[i].symbol);
			return 0;
		}
		memcpy((char *)base + syms[i].offset, &p, sizeof p);
	}
	return 1;
}

static void *pt_dlopen(const char *path, char *err, size_t errlen) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
	}
	return h;
}

#define PT_CU_SYM(req, name, sym, params, args) {req, offsetof(pt_cu_api, name), sym},
static const pt_sym pt_cu_syms[] = {
	PT_CU_LIST(PT_CU_SYM)
	{1, offsetof(pt_cu_api, cuCtxSynchronize), "cuCtxSynchronize"},
};

pt_cu_api *pt_cu_open(const char *path, char *err, size_t errlen) {
	void *h = pt_dlopen(path, err, errlen);
	if (h == NULL) return NULL;
	pt_cu_api *a = calloc(1, sizeof *a);
	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		dlclose(h);
		return NULL;
	}
	a->handle = h;
	if (!pt_bind(h, a, pt_cu_syms, sizeof pt_cu_syms / sizeof pt_cu_syms[0], err, errlen)) {
		dlclose(h);
		free(a);
		return NULL;
	}
	return a;
}

#define PT_NVRTC_SYM(req, name, sym, params, args) {req, offsetof(pt_nvrtc_api, name), sym},
static const pt_sym pt_nvrtc_syms[] = {
	PT_NVRTC_LIST(PT_NVRTC_SYM)
	{1, offsetof(pt_nvrtc_api, nvrtcGetErrorString), "nvrtcGetErrorString"},
};

pt_nvrtc_api *pt_nvrtc_open(const char *path, char *err, size_t errlen) {
	void *h = pt_dlopen(path, err, errlen);
	if (h == NULL) return NULL;
	pt_nvrtc_api *a = calloc(1, sizeof *a);
	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		dlclose(h);
		return NULL;
	}
	a->handle = h;
	if (!pt_bind(h, a, pt_nvrtc_syms, sizeof pt_nvrtc_syms / sizeof pt_nvrtc_syms[0], err, errlen)) {
		dlclose(h);
		free(a);
		return NULL;
	}
	return a;
}
