// pt_common.cuh: device helpers shared by pitchtank's kernels and free for
// submitted ones (#include "pt_common.cuh"; NVRTC gets it as a header).
// Every helper is static __forceinline__, so a kernel that includes this file
// and uses none of them compiles to the same code as before: an unused
// static inline function emits nothing.
//
// Operand layout (internal/nvfp4): K-major FP4 e2m1, two codes per byte
// (element 2i in the low nibble of byte i); one e4m3 scale per 16 K
// elements, row-major; C is fp16 row-major.
//
// No toolkit headers: NVRTC alone compiles this on any version from 11.8.

#ifndef PT_COMMON_CUH
#define PT_COMMON_CUH

typedef unsigned int fg_u32;
typedef unsigned short fg_u16;
typedef unsigned char fg_u8;

struct __attribute__((aligned(16))) FgV4 {
  fg_u32 x, y, z, w;
};

// for (i = tid; i < COUNT; i += FG_THREADS) with a compile-time trip count.
#define FG_FOR_THREAD(i, COUNT)                                                 \
  _Pragma("unroll") for (int i##_it = 0; i##_it < ((COUNT) + FG_THREADS - 1) / FG_THREADS; ++i##_it) \
    if (const int i = tid + i##_it * FG_THREADS; ((COUNT) % FG_THREADS) == 0 || i < (COUNT))

static __device__ __forceinline__ fg_u32 fg_smem_addr(const void* p) {
  fg_u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

// src_bytes 0 makes cp.async fill zeros: rows past M or N cost no reads.
static __device__ __forceinline__ void fg_cp16(fg_u32 dst, const void* src, fg_u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
static __device__ __forceinline__ void fg_cp8(fg_u32 dst, const void* src, fg_u32 src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}
static __device__ __forceinline__ void fg_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void fg_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ void fg_lds128(fg_u32 addr, fg_u32 (&v)[4]) {
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "r"(addr));
}
static __device__ __forceinline__ fg_u32 fg_lds16(fg_u32 addr) {
  fg_u16 v;
  asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(addr));
  return v;
}

static __device__ __forceinline__ fg_u32 fg_prmt(fg_u32 a, fg_u32 b, fg_u32 sel) {
  fg_u32 d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}

static __device__ __forceinline__ fg_u32 fg_hmul2(fg_u32 a, fg_u32 b) {
  fg_u32 d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Two e4m3 scale bytes (low byte: scale group 2t, high byte: 2t+1) to two
// fp16x2 registers holding scale * 2^7 in both halves. Bit placement gives
// scale * 2^-8 exactly (e4m3 subnormals land on fp16 subnormals); the
// multiply by 2^15 is exact.
static __device__ __forceinline__ void fg_scales(fg_u32 x, fg_u32& lo, fg_u32& hi) {
  fg_u32 z = fg_prmt(x, 0u, 0x4140u); // byte0 -> bits 0..7, byte1 -> bits 16..23
  fg_u32 h = ((z & 0x007F007Fu) << 7) | ((z & 0x00800080u) << 8);
  h = fg_hmul2(h, 0x78007800u); // * 2^15
  lo = fg_prmt(h, h, 0x1010u);
  hi = fg_prmt(h, h, 0x3232u);
}

// Nibbles P and P+4 of w to an fp16x2 (low half from nibble P): magnitude
// bits to fp16 bits 9..11 (value e2m1 * 2^-14), sign to bit 15.
template <int P>
static __device__ __forceinline__ fg_u32 fg_dec(fg_u32 w) {
  fg_u32 mag, sgn;
  if (P == 0) {
    mag = (w << 9) & 0x0E000E00u;
    sgn = (w << 12) & 0x80008000u;
  } else if (P == 1) {
    mag = (w << 5) & 0x0E000E00u;
    sgn = (w << 8) & 0x80008000u;
  } else if (P == 2) {
    mag = (w << 1) & 0x0E000E00u;
    sgn = (w << 4) & 0x80008000u;
  } else {
    mag = (w >> 3) & 0x0E000E00u;
    sgn = w & 0x80008000u;
  }
  return mag | sgn;
}

static __device__ __forceinline__ void fg_mma(float (&c)[4], const fg_u32 (&a)[4], fg_u32 b0, fg_u32 b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

static __device__ __forceinline__ fg_u16 fg_f2h(float f) {
  fg_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

static __device__ __forceinline__ void fg_lds64(fg_u32 addr, fg_u32 (&v)[2]) {
  asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];\n" : "=r"(v[0]), "=r"(v[1]) : "r"(addr));
}
static __device__ __forceinline__ fg_u32 fg_lds8(fg_u32 addr) {
  fg_u16 v;
  asm volatile("ld.shared.u8 %0, [%1];\n" : "=h"(v) : "r"(addr));
  return v;
}
// One e4m3 byte to an fp16x2 holding scale * 2^7 in both halves.
static __device__ __forceinline__ fg_u32 fg_scale1(fg_u32 x) {
  fg_u32 h = ((x & 0x7Fu) << 7) | ((x & 0x80u) << 8);
  return fg_hmul2(h | (h << 16), 0x78007800u);
}

#endif // PT_COMMON_CUH
