// Test kernels for package gpu. No toolkit headers: NVRTC alone compiles
// this on any machine (NVRTC 11.8 and later).

// Affine is passed by value to exercise []byte struct arguments: 12 bytes,
// 4-byte aligned.
struct Affine {
	float scale;
	float shift;
	int bias;
};

// saxpy: y[i] = (a*x[i] + y[i]) * t.scale + t.shift + t.bias, for i < n.
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n, Affine t) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		y[i] = (a * x[i] + y[i]) * t.scale + t.shift + (float)t.bias;
	}
}

// add_u32 adds v to each of n words: used for stream ordering and graphs.
extern "C" __global__ void add_u32(unsigned int *p, unsigned int v, long long n) {
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		p[i] += v;
	}
}

// spin busy-waits ns nanoseconds on the global timer, then writes 1.
extern "C" __global__ void spin(unsigned long long ns, unsigned int *done) {
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		*done = 1u;
	}
}

// oob_write stores far outside any allocation: CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void oob_write(float *p, long long offset) {
	p[offset] = 1.0f;
}

#ifdef PT_DEFINED_VALUE
// defined_value writes the compile-time define, proving -D reached NVRTC.
extern "C" __global__ void defined_value(int *out) {
	*out = PT_DEFINED_VALUE;
}
#endif
