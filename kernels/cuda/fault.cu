// TEST-ONLY kernels that fail on purpose, so the server's end-to-end test
// can show that a run whose kernel faults or never finishes fails with the
// CUDA error or the time limit, and that the next run on the same device
// succeeds. kernels.ResolveVariant hands out the "fault" variant only when
// PITCHTANK_TEST_KERNELS=1 is set in the resolving process.
//
// FAULT_MODE 1 (illegal_address): every block's thread 0 stores through C
// plus 1 TiB, an address no allocation of this process maps, so the launch
// ends with CUDA_ERROR_ILLEGAL_ADDRESS (700, sticky: the context is dead).
// FAULT_MODE 2 (hang): every thread spins on a volatile device global that
// nothing ever writes. volatile forces a load per iteration and the value
// is not a compile-time fact, so the compiler cannot prove the loop ends or
// remove it; only killing the process (the runner's time limit or the
// bench's --max-time watchdog) ends it.
//
// The entry points take the baseline's arguments so the plan passes the
// same buffers. No headers: NVRTC alone compiles this from 11.8 on.

#ifndef FAULT_MODE
#define FAULT_MODE 1
#endif

typedef unsigned char u8;
typedef unsigned short u16;

// Never written by any code; 0 from module load on.
__device__ volatile int pt_fault_release;

__device__ __forceinline__ void pt_fault(u16* c) {
#if FAULT_MODE == 1
    if (threadIdx.x == 0) {
        volatile u16* wild = (volatile u16*)((u8*)c + (1ull << 40));
        *wild = (u16)blockIdx.x;
    }
#elif FAULT_MODE == 2
    while (pt_fault_release == 0) {
    }
    // Unreachable in practice; the store keeps c live.
    c[0] = (u16)pt_fault_release;
#else
#error "FAULT_MODE must be 1 (illegal_address) or 2 (hang)"
#endif
}

extern "C" __global__ void fault_group(const u8* a, const u8* sa, const u8* b, const u8* sb,
                                       u16* c, int M, int N, int K) {
    pt_fault(c);
}

extern "C" __global__ void fault_dual(const u8* a, const u8* sa, const u8* b1, const u8* sb1,
                                      const u8* b2, const u8* sb2, u16* c, int M, int N, int K) {
    pt_fault(c);
}
