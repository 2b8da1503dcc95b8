// How a warpgroup's m64n128k16 wgmmas pace the tensor pipe (kernel-notes
// steps 24-25), one block per SM, every SM busy, as in the GEMMs:
//   (no argument) A from registers or shared memory, one to four issuing
//     warpgroups, ALU work after each wgmma, register A at widths 64-256;
//   data   the same on zeros, random fp16 and random FP4 operands, and with
//     B's address walking a token stage's k16 steps (the values and
//     addresses turned out not to matter);
//   roles  one warpgroup issuing the GEMMs' chains of four beside 0-3
//     warpgroups of decode-like ALU work or shared-memory traffic, and with
//     its own such work between chains (OWN);
//   issue  when each of a chain's eight issues returns (issueq);
//   skel   the GEMMs' consumer skeleton, one element at a time (skel).
// On the GPU machine, from the repository root:
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -Xptxas -v -o /tmp/wgprobe dev/wgprobe/probe.cu && /tmp/wgprobe [data|roles]
// (dev/gpucall/dual.sh wgprobe, roles and skelprobe do this). Check ptxas's output for
// C7514/C7515 first: a serialized build times each wgmma's latency.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <string>
#include <cuda_runtime.h>
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

#include "../../kernels/cuda/wg_group_gemm.cu" // the GEMMs' own wgmma wrappers, as dev/fastkern does

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// m64n192k16, 96 accumulators per thread: skelw's n192 halves (kernel-notes
// steps 64-65). The GEMMs compile no n192 tile, so this width of their
// wg_mma lives here, built from their operand macros.
template <>
__device__ __forceinline__ void wg_mma<192>(float (&d)[96], const fg_u32 (&a)[4], fg_u64 bdesc) {
  asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, {%96, %97, %98, %99}, %100, p, 1, 1, 0; }\n"
               : WG_F16(0), WG_F16(16), WG_F16(32), WG_F16(48), WG_F16(64), WG_F16(80)
               : WG_A4, "l"(bdesc));
}

// D(64 x NW) += A(64 x 16) B(16 x NW), B from shared memory: A from
// registers is the GEMMs' own wg_mma (NW 64, 128 or 256), A from shared
// memory their wg_mma_ss128 (width 128 only).
template <bool RS, int NW>
static __device__ __forceinline__ void probe_mma(float (&d)[NW / 2], const u32 (&a)[4], u64 adesc, u64 bdesc) {
  if constexpr (RS) {
    wg_mma<NW>(d, a, bdesc);
  } else {
    static_assert(NW == 128, "wgprobe: shared-memory A at width 128 only");
    wg_mma_ss128(d, adesc, bdesc);
  }
}
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// One fp16x2 of operand data: data 0 zeros, 1 random fp16 of magnitude
// [0.5, 2) with random signs and mantissas, 2 random FP4 (e2m1) values as
// the GEMMs decode them (unscaled), 3 zeros with B's address walking a
// token stage's k16 steps (probe). Does the tensor pipe's pace depend on
// the values or on B's addresses (kernel-notes step 25)?
static __device__ __forceinline__ u32 probe_word(u32 data, u32 i) {
  u32 h = i * 2654435761u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  if (data == 0 || data == 3) return 0u;
  if (data == 1) {
    const u32 lo = (h & 0x83FFu) | ((14u + ((h >> 10) & 1u)) << 10);
    const u32 hi = ((h >> 16) & 0x83FFu) | ((14u + ((h >> 26) & 1u)) << 10);
    return lo | (hi << 16);
  }
  // e2m1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 as fp16, and a sign.
  const u32 mag[8] = {0x0000u, 0x3800u, 0x3C00u, 0x3E00u, 0x4000u, 0x4200u, 0x4400u, 0x4600u};
  const u32 lo = mag[h & 7u] | ((h & 8u) << 12);
  const u32 hi = mag[(h >> 4) & 7u] | (((h >> 4) & 8u) << 12);
  return lo | (hi << 16);
}

// The block's 48 KB of operand data (1024-aligned, for the 128-byte
// swizzle; probe_word), made visible to the async proxy.
static __device__ __forceinline__ u32 probe_smem(u32 data = 0) {
  extern __shared__ __align__(1024) unsigned char smem[];
  u32 base;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(base) : "l"(smem));
  base = (base + 1023u) & ~1023u;
  for (int i = threadIdx.x; i < (48 * 1024) / 4; i += blockDim.x) {
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(base + 4 * i), "r"(probe_word(data, (u32)i)) : "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  return base;
}
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// A chain's registers: zero accumulators, and N register-A fragment sets,
// one per wgmma, distinct as the GEMMs' are (B is zeros, so their values
// do not matter).
template <int N>
static __device__ __forceinline__ void probe_chain_regs(float (&d)[64], u32 (&a)[N][4], u32 seed) {
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
#pragma unroll
  for (int j = 0; j < N; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[j][r] = (seed + threadIdx.x + 4 * j + r) * 0x3C00u;
}
#endif

template <int N>
static __device__ __forceinline__ void wg_pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Each warpgroup of the block issues iters wgmmas. GROUPED: commit groups
// of eight and wait_group 1 after each (the halves pipeline); else one
// group per wgmma and wait_group 7 after each (WG_ILV). ALU: independent
// 32-bit operations (eight chains, like a decode's) placed after each wgmma.
// Per warpgroup: the cycles from the first issue to the last wait.
template <bool RS, bool GROUPED, int ALU, int NW>
__global__ void __launch_bounds__(NW == 256 ? 256 : 512, 1) probe(int iters, u64* cycles, u32* sink, u32 seed, u32 data) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int tid = threadIdx.x;
  const u32 base = probe_smem(data);
  const u64 bdesc = wg_desc(base), adesc = wg_desc(base + 32768);
  float d[NW / 2];
#pragma unroll
  for (int i = 0; i < NW / 2; ++i) d[i] = 0.f;
  u32 x[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) x[c] = seed + tid + c;
  // Four distinct registers, as a decoded fragment is (B is zeros, so
  // their values do not matter).
  const u32 a[4] = {data ? probe_word(data, 7919u * tid + 1u) : x[0] * 0x3C00u,
                    data ? probe_word(data, 7919u * tid + 2u) : x[1] * 0x3C00u,
                    data ? probe_word(data, 7919u * tid + 3u) : x[2] * 0x3C00u,
                    data ? probe_word(data, 7919u * tid + 4u) : x[3] * 0x3C00u};
  wg_fence();
  __syncthreads();
  const u64 t0 = clock64();
  // Not unrolled, and the accumulators pinned around each wgmma (an empty
  // asm, no instruction): otherwise ptxas moves accumulator registers
  // between wgmmas and serializes them (C7515), and the probe would time
  // each wgmma's latency instead of its issue.
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    wg_pin(d);
    // data 3: B walks a token stage's eight k16 steps as the GEMMs' do.
    probe_mma<RS, NW>(d, a, adesc, data == 3 ? wg_desc(wg_step_addr(base, i & 7)) : bdesc);
    wg_pin(d);
    if (!GROUPED) {
      wg_commit();
      wg_wait<7>();
    } else if ((i & 7) == 7) {
      wg_commit();
      wg_wait<1>();
    }
#pragma unroll
    for (int k = 0; k < ALU; ++k) x[k & 7] = __byte_perm(x[k & 7], x[(k + 3) & 7], 0x5140u) * 3u + 1u;
  }
  wg_commit();
  wg_wait<0>();
  const u64 t1 = clock64();
#pragma unroll
  for (int i = 0; i < NW / 2; ++i) asm volatile("" : "+f"(d[i])::"memory");
  u32 s = 0;
#pragma unroll
  for (int c = 0; c < 8; ++c) s ^= x[c];
  s ^= __float_as_uint(d[0]);
  if (s == 0x12345678u) sink[tid] = s; // keeps the ALU chains and the sums alive
  if ((tid & 127) == 0) cycles[blockIdx.x * 4 + (tid >> 7)] = t1 - t0;
#else
  asm volatile("trap;"); // wgmma is sm_90a only
#endif
}

// Roles (kernel-notes step 25): does integer and fp16 work in other warps
// slow one warpgroup's wgmmas? Warpgroup 0 issues iters RS m64n128k16
// wgmmas, in the GEMMs' form (CHAIN: one fence, four wgmmas, one commit,
// wait_group 1) or one group per wgmma; warpgroups 1..ALUWG meanwhile run
// decode-like PRMT, LOP3 and HMUL2 in eight independent chains until
// warpgroup 0 is done. Per block: warpgroup 0's cycles and the ALU
// warpgroups' loop count (one loop: eight chains of PRMT, LOP3, HMUL2).
// MMA (step 26): 0 the GEMMs' register-A wgmmas, 1 A from shared memory
// (wg_mma_ss128), 2 none: warpgroup 0 runs only its OWN work (the control
// for what that work costs alone), or with OWN 0 spins on the clock for 64
// cycles per iteration, so the ALU warpgroups' rate alone is measured.
// OWNLDS (step 27): each OWN round is four 16-byte shared-memory loads
// folded into the chains by one XOR each (what a consumer loading decoded
// fragments with ldmatrix would do) instead of the ALU round.
enum { MMA_RS = 0, MMA_SS = 1, MMA_NONE = 2 };
template <bool CHAIN, int ALUWG, bool SMEM = false, int OWN = 0, int MMA = MMA_RS, bool OWNLDS = false>
__global__ void __launch_bounds__(512, 1) roles(int iters, u64* cycles, u32* sink, u32 seed) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ volatile int stop;
  const int tid = threadIdx.x;
  if (tid == 0) stop = 0;
  const u32 base = probe_smem();
  if (tid < 128) {
    const u64 bdesc = wg_desc(base), adesc = wg_desc(base + 32768);
    float d[64];
    // Four fragment sets, one per wgmma of a chain, as the GEMMs' halves.
    u32 a[4][4];
    probe_chain_regs(d, a, seed);
    u32 own[8], oh[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      own[c] = seed * (tid + c);
      oh[c] = 0x3C003C00u + c;
    }
    wg_fence();
    const u64 t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i += CHAIN ? 4 : 1) {
      // As the GEMMs do: only the wgmmas touch the accumulators in the loop
      // (an empty asm pinning them here made ptxas serialize, C7514).
      if constexpr (MMA == MMA_NONE) {
        if (OWN == 0)
          while (clock64() - t0 < (u64)(i + (CHAIN ? 4 : 1)) * 64u) {
          }
      } else {
        wg_fence();
#pragma unroll
        for (int j = 0; j < (CHAIN ? 4 : 1); ++j) {
          if constexpr (MMA == MMA_RS) {
            wg_mma<128>(d, a[j], bdesc);
          } else {
            wg_mma_ss128(d, adesc, bdesc);
          }
        }
        wg_commit();
      }
      // OWN: the issuing warps' own decode-like work while their chain is
      // in the pipe (as the GEMMs decode the next half), OWN rounds of
      // eight PRMT, LOP3, HMUL2 chains, before the wait for the chain
      // before it.
#pragma unroll 1
      for (int r = 0; r < OWN; ++r) {
        if constexpr (OWNLDS) {
#pragma unroll
          for (int c = 0; c < 8; c += 2) {
            u32 w0, w1, w2, w3;
            wg_lds128(base + 32768 + ((tid * 16 + (r * 4 + c) * 2048) & 16383), w0, w1, w2, w3);
            own[c] ^= w0 ^ w1;
            own[c + 1] ^= w2 ^ w3;
          }
        } else {
#pragma unroll
          for (int c = 0; c < 8; ++c) {
            own[c] = __byte_perm(own[c], seed, 0x5140u);
            own[c] = (own[c] & 0x0F0F0F0Fu) ^ seed;
            oh[c] = wg_hmul2(oh[c], own[c] | 0x3C003C00u);
          }
        }
      }
      if (CHAIN) {
        wg_wait<1>();
      } else {
        wg_wait<7>();
      }
    }
    wg_wait<0>();
    const u64 t1 = clock64();
    wg_pin(d); // after the last wait, as probe does
    u32 ox = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) ox ^= own[c] ^ oh[c];
    if (ox == 0x12345678u) sink[tid] = ox;
    if (tid == 0) {
      stop = 1;
      cycles[2 * blockIdx.x] = t1 - t0;
    }
    // A fixed index: a computed one makes ptxas read the accumulators
    // inside the loop's pipeline stage and serialize the wgmmas (C7514).
    if (__float_as_uint(d[0]) == 0x12345678u) sink[tid] = 1u;
  } else if (SMEM && tid < 128 * (1 + ALUWG)) {
    // Shared-memory traffic instead (SMEM): 16-byte loads and stores over
    // the 16 KB past the B tile, as a decode's raw loads and a copy's
    // writes would add, until warpgroup 0 is done.
    const u32 t = tid - 128;
    u32 v0 = t, v1 = t + 1, v2 = t + 2, v3 = t + 3;
    u64 n = 0;
    while (!stop) {
#pragma unroll 1
      for (int r = 0; r < 16; ++r) {
        const u32 off = (t * 16 + r * 2048) & 16383;
        const u32 addr = base + 32768 + off;
        u32 w0, w1, w2, w3;
        wg_lds128(addr, w0, w1, w2, w3);
        v0 ^= w0;
        v1 ^= w1;
        v2 ^= w2;
        v3 ^= w3;
        asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(base + 32768 + (off ^ 8192u)), "r"(v0), "r"(v1), "r"(v2),
                     "r"(v3)
                     : "memory");
      }
      n += 16;
    }
    if ((v0 ^ v1 ^ v2 ^ v3) == 0x12345678u) sink[tid] = v0;
    if (tid == 128) cycles[2 * blockIdx.x + 1] = n;
  } else if (tid < 128 * (1 + ALUWG)) {
    u32 x[8], h[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      x[c] = seed * (tid + c);
      h[c] = 0x3C003C00u + c;
    }
    // Eight independent chains, the flag read once per 16 loops, so the
    // warps issue at the schedulers' rate rather than at a chain's latency.
    u64 n = 0;
    const u32 k1 = seed ^ 0x9E3779B9u;
    while (!stop) {
#pragma unroll 1
      for (int r = 0; r < 16; ++r) {
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          x[c] = __byte_perm(x[c], k1, 0x5140u);
          x[c] = (x[c] & 0x0F0F0F0Fu) ^ k1;
          h[c] = wg_hmul2(h[c], x[c] | 0x3C003C00u);
        }
      }
      n += 16;
    }
    u32 acc = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) acc ^= x[c] ^ h[c];
    if (acc == 0x12345678u) sink[tid] = acc;
    if (tid == 128) cycles[2 * blockIdx.x + 1] = n;
  }
#else
  asm volatile("trap;");
#endif
}

// Issue (kernel-notes step 27): how far ahead of the tensor pipe a
// warpgroup's wgmma issue runs. NWG warpgroups each issue a chain of eight
// m64n128k16 (register A if RS, from eight fragment sets, one per wgmma;
// else A from shared memory), reading the clock after each issue returns,
// then wait_group 0. Per warpgroup, the mean over iters chains of
// the cycles from the chain's start to each issue's return and to the
// wait's: if the issue queue is shallow, the later issues return only as
// the pipe frees a place, and the issuing warps cannot start other work
// until then (step 27's marks of weights=staged).
// INFLIGHT: each chain is issued while the previous one is still in the
// pipe (commit, then wait_group 1, as the GEMMs' consumers do), so the
// issue meets a busy pipe; FENCE: the chain starts with wgmma.fence, as
// each of the GEMMs' chunks does (without it ptxas 13.0 injects one anyway,
// C7519, so call 2's forms without it measured the same code). The last
// time is then wait_group 1's.
template <int NWG, bool RS, bool INFLIGHT = false, bool FENCE = true>
__global__ void __launch_bounds__(256, 1) issueq(int iters, u64* cycles, u32* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int tid = threadIdx.x;
  const u32 base = probe_smem();
  const u64 bdesc = wg_desc(base), adesc = wg_desc(base + 32768);
  float d[64];
  u32 a[8][4];
  probe_chain_regs(d, a, 0u);
  u64 t[9];
#pragma unroll
  for (int j = 0; j < 9; ++j) t[j] = 0;
  wg_fence();
  __syncthreads();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    const u64 t0 = clock64();
    if (FENCE) wg_fence();
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      probe_mma<RS, 128>(d, a[j], adesc, bdesc);
      t[j] += clock64() - t0;
    }
    wg_commit();
    if (INFLIGHT)
      wg_wait<1>();
    else
      wg_wait<0>();
    t[8] += clock64() - t0;
  }
  wg_wait<0>();
  wg_pin(d); // after the last wait, as roles does
  if (__float_as_uint(d[0]) == 0x12345678u) sink[tid] = 1u;
  if ((tid & 127) == 0)
#pragma unroll
    for (int j = 0; j < 9; ++j) cycles[(blockIdx.x * NWG + (tid >> 7)) * 9 + j] = t[j] / (u64)iters;
#else
  asm volatile("trap;");
#endif
}


#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The block's dynamic shared memory, 1024-aligned (the 128-byte swizzle),
// its first bytes zeroed (skel, skelw).
static __device__ __forceinline__ u32 skel_smem(int bytes) {
  extern __shared__ __align__(1024) unsigned char smem[];
  u32 raw;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(raw) : "l"(smem));
  const u32 base = (raw + 1023u) & ~1023u;
  for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x)
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(base + 4 * i), "r"(0u) : "memory");
  return base;
}

// The skeletons' decode-like work (skel, skelw): own and oh start from the
// thread and the seed; a round is eight PRMT, LOP3, HMUL2 chains, as
// roles' OWN; a half's fragments are then made from their results and the
// chunk index q (so that they change every chunk), as a decode's output
// feeds the next half's wgmmas.
static __device__ __forceinline__ void skel_own_init(u32 (&own)[8], u32 (&oh)[8], u32 seed, int tid) {
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    own[c] = seed + tid + c;
    oh[c] = 0x3C003C00u + c;
  }
}
// A skeleton consumer's start (skel, skelx): zero accumulators, the two
// halves' fragments from the thread and the seed, and skel_own_init.
static __device__ __forceinline__ void skel_consumer_init(float (&d)[64], u32 (&xa)[4][4], u32 (&ya)[4][4], u32 (&own)[8],
                                                          u32 (&oh)[8], u32 seed, int tid) {
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      xa[j][r] = (seed + tid + 4 * j + r) * 0x3C00u;
      ya[j][r] = (seed + tid + 4 * j + r + 16) * 0x3C00u;
    }
  skel_own_init(own, oh, seed, tid);
}
template <int OWN>
static __device__ __forceinline__ void skel_own(u32 (&own)[8], u32 (&oh)[8], u32 seed) {
#pragma unroll 1
  for (int r = 0; r < OWN; ++r) {
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      own[c] = __byte_perm(own[c], seed, 0x5140u);
      own[c] = (own[c] & 0x0F0F0F0Fu) ^ seed;
      oh[c] = wg_hmul2(oh[c], own[c] | 0x3C003C00u);
    }
  }
}
// Fragments from the rounds' results (USE_OH), or from q alone.
template <bool USE_OH>
static __device__ __forceinline__ void skel_frags(u32 (&f)[4][4], const u32 (&oh)[8], int q) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) f[j][r] = (USE_OH ? oh[(4 * j + r) & 7] : 0u) ^ ((u32)(q + j + r) * 0x3C00u);
}
#endif

// Skel (kernel-notes step 64): the GEMMs' consumer skeleton, built up one
// element at a time, to find what runs the pipe at ~104 cycles per
// m64n128k16 in the group GEMM's chunk with no copies and no decode
// (step 62) where three warpgroups' register-A chains run at ~66 (step 25).
// Warpgroups 1..W are consumers; each runs iters chunks of two halves, four
// RS m64n128k16 each (k16 steps 0-3, then 4-7 of a 32 KB stage of zeros),
// each half its own commit group, in the GEMMs' order: X(j), wait_group 1
// (Y(j-1) done), Y(j), wait_group 1 (X(j) done). With everything on it is
// the kernel's halves pipeline under WG_EXP=264. Elements:
//   FENCE  wgmma.fence before each half (else once, before the loop);
//   WALK   B walks three stages in turn (else stage 0 for every chunk);
//   AREW   each half's 16 fragment registers rewritten from the chunk index
//          once its previous use is done (else fixed registers);
//   OWN    rounds of decode-like work (eight PRMT, LOP3, HMUL2 chains, as
//          roles' OWN) after each wait, that the half's rewritten fragments
//          then depend on (with AREW), as a decode's output feeds the next
//          half's wgmmas;
//   BAR    the token ring's barriers: warpgroup 0's first thread arrives on
//          stage q % 3's full mbarrier once every consumer thread has
//          arrived on its empty one (chunk q - 3 released), and every
//          consumer thread waits on the full one before its X half and
//          arrives on the empty one after its Y(j-1) is done.
// Per consumer warpgroup: cycles from its first chunk to its last wait.
template <int W, bool FENCE, bool WALK, bool AREW, bool BAR, int OWN = 0>
__global__ void __launch_bounds__(512, 1) skel(int iters, u64* cycles, u32* sink, u32 seed) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int tid = threadIdx.x, role = tid >> 7;
  const u32 base = skel_smem(3 * 32768);
  const u32 full0 = base + 3 * 32768, empty0 = full0 + 3 * 8;
  if (tid == 0)
    for (int s = 0; s < 3; ++s) {
      wg_bar_init(full0 + 8 * s, 1);
      wg_bar_init(empty0 + 8 * s, 128 * W);
    }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  __syncthreads();
  if (role == 0) {
    if (BAR && tid == 0)
      for (int q = 0; q < iters; ++q) {
        wg_bar_wait(empty0 + 8 * (q % 3), ((q / 3) & 1) ^ 1);
        wg_bar_arrive(full0 + 8 * (q % 3));
      }
    return;
  }
  if (role > W) return;
  float d[64];
  u32 xa[4][4], ya[4][4], own[8], oh[8];
  skel_consumer_init(d, xa, ya, own, oh, seed, tid);
  // OWN rounds of decode-like work, then (AREW) a half's fragments.
  auto work = [&](u32 (&f)[4][4], int q) {
    skel_own<OWN>(own, oh, seed);
    if (AREW) skel_frags<(OWN > 0)>(f, oh, q);
  };
  wg_fence();
  const u64 t0 = clock64();
  int prev = -1;
#pragma unroll 1
  for (int q = 0; q < iters; ++q) {
    const int st = WALK ? q % 3 : 0;
    if (BAR) wg_bar_wait(full0 + 8 * (q % 3), (q / 3) & 1);
    if (FENCE) wg_fence();
    const u32 tok = base + st * 32768;
#pragma unroll
    for (int j = 0; j < 4; ++j) wg_mma<128>(d, xa[j], wg_tdesc(tok, j));
    wg_commit();
    wg_wait<1>(); // Y(j-1) done
    if (BAR && prev >= 0) wg_bar_arrive(empty0 + 8 * prev);
    work(ya, q);
    if (FENCE) wg_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) wg_mma<128>(d, ya[j], wg_tdesc(tok, 4 + j));
    wg_commit();
    wg_wait<1>(); // X(j) done
    work(xa, q + 1);
    prev = q % 3;
  }
  wg_wait<0>();
  if (BAR && prev >= 0) wg_bar_arrive(empty0 + 8 * prev);
  const u64 t1 = clock64();
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
  u32 s = __float_as_uint(d[0]) ^ xa[0][0] ^ ya[3][3] ^ own[0] ^ oh[7];
  if (s == 0x12345678u) sink[tid & 511] = s;
  if ((tid & 127) == 0) cycles[blockIdx.x * 4 + role - 1] = t1 - t0;
#else
  asm volatile("trap;"); // wgmma is sm_90a only
#endif
}


// Skelw (kernel-notes step 64): the skeleton's halves with OWN rounds of
// decode-like work at a token width NW of 128 or 256, on W = 1 or 2
// consumer warpgroups and no others (256 threads: room for n256's 128
// accumulators), without the ring's barriers and on one 64 KB stage: does
// a wider token tile, more tensor work per decoded fragment, hide the
// decode that three n128 consumers do not?
template <int W, int NW, int OWN>
__global__ void __launch_bounds__(256, 1) skelw(int iters, u64* cycles, u32* sink, u32 seed) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int tid = threadIdx.x, role = tid >> 7;
  const u32 base = skel_smem(65536);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (role >= W) return;
  float d[NW / 2];
  u32 xa[4][4], ya[4][4], own[8], oh[8];
#pragma unroll
  for (int i = 0; i < NW / 2; ++i) d[i] = 0.f;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) xa[j][r] = ya[j][r] = (seed + tid + 4 * j + r) * 0x3C00u;
  skel_own_init(own, oh, seed, tid);
  auto work = [&](u32 (&f)[4][4], int q) {
    skel_own<OWN>(own, oh, seed);
    skel_frags<true>(f, oh, q);
  };
  wg_fence();
  const u64 t0 = clock64();
#pragma unroll 1
  for (int q = 0; q < iters; ++q) {
    wg_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) wg_mma<NW>(d, xa[j], wg_tdesc(base, j));
    wg_commit();
    wg_wait<1>(); // Y(j-1) done
    work(ya, q);
    wg_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) wg_mma<NW>(d, ya[j], wg_tdesc(base, 4 + j));
    wg_commit();
    wg_wait<1>(); // X(j) done
    work(xa, q + 1);
  }
  wg_wait<0>();
  const u64 t1 = clock64();
#pragma unroll
  for (int i = 0; i < NW / 2; ++i) asm volatile("" : "+f"(d[i])::"memory");
  u32 s = __float_as_uint(d[0]) ^ xa[0][0] ^ ya[3][3] ^ own[0] ^ oh[7];
  if (s == 0x12345678u) sink[tid & 511] = s;
  if ((tid & 127) == 0) cycles[blockIdx.x * 4 + role] = t1 - t0;
#else
  asm volatile("trap;"); // wgmma is sm_90a only
#endif
}


// Skelx (kernel-notes step 91): skel's whole form (three n128 consumers,
// fences, B walking three stages, fragments rewritten, the token ring's
// barriers, OWN rounds of decode-like work) in two-block clusters, with
// CH chains per round (8: a consumer's whole decode; 4: half of it) and,
// with XCH, the half each block decodes passed to the peer: every consumer
// thread stores its 32 bytes into the peer's slot for the half (two slots,
// alternating; st.shared::cluster), arrives on the peer's barrier for it
// (release.cluster, 128 arrivals), waits on its own (acquire.cluster) and
// loads the peer's 32 bytes, half of the next fragments' sources. A slot
// is written again two halves later, after its reader has sent the half
// in between, so two suffice. XCH 1: every thread arrives on the peer's
// barrier (release.cluster each); 2: one lane a warp, counting 32, after
// __syncwarp; 3: as 2, but a half takes the peer's previous half (the
// exchange's latency gets one half of slack), over four slots: a slot is
// written again four halves later, once its reader has sent the half
// after the one it read. XCH 4: the bulk form: a consumer's threads stage
// their 32 bytes locally, a named barrier, and one thread sends the 4 KB
// with one cp.async.bulk into the peer's slot, completing on the peer's
// barrier (count 1: the receiver's own expect_tx). The staging slot's
// reuse two halves later is not fenced against the copy's read: the probe
// times the path and does not check the data. XCH 6: the bulk form with
// XCH 3's half of slack, four slots; XCH 7: as 6, each warp sending its
// own 1 KB (no named barrier across the consumer). XCH 5: XCH 2's sending
// half alone, nothing waited for or loaded (what the send costs).
template <int CH, int XCH, int OWN>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 1) skelx(int iters, u64* cycles, u32* sink, u32 seed) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const int tid = threadIdx.x, role = tid >> 7, lane = tid & 127;
  constexpr bool BULK = XCH == 4 || XCH == 6 || XCH == 7;
  constexpr int NS = XCH == 3 || XCH >= 6 ? 4 : 2; // exchange slots
  constexpr int NG = BULK ? NS : 0;                 // staging slots of the bulk forms
  const u32 base = skel_smem(3 * 32768 + (NS + NG) * 3 * 128 * 32);
  const u32 xs0 = base + 3 * 32768, stg0 = xs0 + NS * 3 * 128 * 32;
  const u32 full0 = stg0 + NG * 3 * 128 * 32, empty0 = full0 + 3 * 8, xbar0 = empty0 + 3 * 8;
  if (tid == 0) {
    for (int s = 0; s < 3; ++s) {
      wg_bar_init(full0 + 8 * s, 1);
      wg_bar_init(empty0 + 8 * s, 128 * 3);
    }
    for (int s = 0; s < NS * 3; ++s) wg_bar_init(xbar0 + 8 * s, BULK ? 1 : 128);
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  __syncthreads();
  // The peer's barriers exist before anyone arrives on them.
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
  u32 rank;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  const u32 peer = rank ^ 1u;
  auto remote = [&](u32 a) {
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(peer));
    return r;
  };
  if (role == 0) {
    if (tid == 0)
      for (int q = 0; q < iters; ++q) {
        wg_bar_wait(empty0 + 8 * (q % 3), ((q / 3) & 1) ^ 1);
        wg_bar_arrive(full0 + 8 * (q % 3));
      }
  } else {
    const int c = role - 1;
    float d[64];
    u32 xa[4][4], ya[4][4], own[8], oh[8];
    skel_consumer_init(d, xa, ya, own, oh, seed, tid);
    // CH of the round's eight chains, OWN rounds; then (XCH) the half
    // passed both ways; then the half's fragments.
    auto work = [&](u32 (&f)[4][4], int q, int h) {
#pragma unroll 1
      for (int r = 0; r < OWN; ++r) {
#pragma unroll
        for (int k = 0; k < CH; ++k) {
          own[k] = __byte_perm(own[k], seed, 0x5140u);
          own[k] = (own[k] & 0x0F0F0F0Fu) ^ seed;
          oh[k] = wg_hmul2(oh[k], own[k] | 0x3C003C00u);
        }
      }
      if (BULK) {
        // The bulk forms: the consumer's 128 threads stage their 32 bytes
        // each here, and one thread sends the 4 KB to the peer's slot with
        // one cp.async.bulk completing on the peer's barrier (its own
        // thread expects the peer's 4 KB on this block's barrier). XCH 6
        // takes the peer's previous half (one half of slack).
        const int slot = h % NS;
        const u32 off = (slot * 3 + c) * 4096, bar = xbar0 + 8 * (slot * 3 + c);
        const u32 stg = stg0 + off + lane * 32;
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(stg), "r"(oh[0]), "r"(oh[1]), "r"(oh[2]), "r"(oh[3]) : "memory");
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(stg + 16), "r"(own[0]), "r"(own[1]), "r"(own[2]), "r"(own[3]) : "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        if (XCH == 7) {
          // Each warp sends its own 1 KB: no barrier across the consumer.
          __syncwarp();
          if ((lane & 31) == 0) {
            const u32 w = (lane >> 5) * 1024;
            if (lane == 0) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;\n" ::"r"(bar) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];\n"
                         ::"r"(remote(xs0 + off + w)), "r"(stg0 + off + w), "r"(remote(bar)) : "memory");
          }
        } else {
          asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
          if (lane == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;\n" ::"r"(bar) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];\n"
                         ::"r"(remote(xs0 + off)), "r"(stg0 + off), "r"(remote(bar)) : "memory");
          }
        }
        const int hr = XCH >= 6 ? h - 1 : h;
        if (hr >= 0) {
          const int rs = hr % NS;
          const u32 roff = (rs * 3 + c) * 4096, rbar = xbar0 + 8 * (rs * 3 + c);
          u32 done;
          do {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n"
                         : "=r"(done) : "r"(rbar), "r"((u32)((hr / NS) & 1)) : "memory");
          } while (!done);
          const u32 got = xs0 + roff + lane * 32;
          u32 g[4];
          asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(oh[4]), "=r"(oh[5]), "=r"(oh[6]), "=r"(oh[7]) : "r"(got) : "memory");
          asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(g[0]), "=r"(g[1]), "=r"(g[2]), "=r"(g[3]) : "r"(got + 16) : "memory");
#pragma unroll
          for (int k = 0; k < 4; ++k) oh[4 + k] ^= g[k] & 0x00FF00FFu;
        }
      } else if (XCH) {
        // Send half h; take the peer's half h (XCH 1, 2) or h - 1 (XCH 3,
        // one half of slack: the peer decodes a half ahead).
        const int slot = h % NS;
        const u32 mine = xs0 + ((slot * 3 + c) * 128 + lane) * 32, bar = xbar0 + 8 * (slot * 3 + c);
        const u32 there = remote(mine), tbar = remote(bar);
        asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(there), "r"(oh[0]), "r"(oh[1]), "r"(oh[2]), "r"(oh[3]) : "memory");
        asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(there + 16), "r"(own[0]), "r"(own[1]), "r"(own[2]), "r"(own[3]) : "memory");
        if (XCH == 1) {
          asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(tbar) : "memory");
        } else {
          __syncwarp();
          if ((lane & 31) == 0) asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0], 32;\n" ::"r"(tbar) : "memory");
        }
        const int hr = XCH == 3 ? h - 1 : h;
        if (XCH != 5 && hr >= 0) {
          const int rs = hr % NS;
          const u32 rmine = xs0 + ((rs * 3 + c) * 128 + lane) * 32, rbar = xbar0 + 8 * (rs * 3 + c);
          u32 done;
          do {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n"
                         : "=r"(done) : "r"(rbar), "r"((u32)((hr / NS) & 1)) : "memory");
          } while (!done);
          u32 g[4];
          asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(oh[4]), "=r"(oh[5]), "=r"(oh[6]), "=r"(oh[7]) : "r"(rmine) : "memory");
          asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(g[0]), "=r"(g[1]), "=r"(g[2]), "=r"(g[3]) : "r"(rmine + 16) : "memory");
#pragma unroll
          for (int k = 0; k < 4; ++k) oh[4 + k] ^= g[k] & 0x00FF00FFu;
        }
      }
      skel_frags<true>(f, oh, q);
    };
    wg_fence();
    const u64 t0 = clock64();
    int prev = -1;
#pragma unroll 1
    for (int q = 0; q < iters; ++q) {
      const int st = q % 3;
      wg_bar_wait(full0 + 8 * (q % 3), (q / 3) & 1);
      wg_fence();
      const u32 tok = base + st * 32768;
#pragma unroll
      for (int j = 0; j < 4; ++j) wg_mma<128>(d, xa[j], wg_tdesc(tok, j));
      wg_commit();
      wg_wait<1>(); // Y(j-1) done
      if (prev >= 0) wg_bar_arrive(empty0 + 8 * prev);
      work(ya, q, 2 * q);
      wg_fence();
#pragma unroll
      for (int j = 0; j < 4; ++j) wg_mma<128>(d, ya[j], wg_tdesc(tok, 4 + j));
      wg_commit();
      wg_wait<1>(); // X(j) done
      work(xa, q + 1, 2 * q + 1);
      prev = q % 3;
    }
    wg_wait<0>();
    if (prev >= 0) wg_bar_arrive(empty0 + 8 * prev);
    const u64 t1 = clock64();
#pragma unroll
    for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
    u32 s = __float_as_uint(d[0]) ^ xa[0][0] ^ ya[3][3] ^ own[0] ^ oh[7];
    if (s == 0x12345678u) sink[tid & 511] = s;
    if (lane == 0) cycles[blockIdx.x * 4 + c] = t1 - t0;
  }
  // No block leaves while its peer may still store into it.
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
#else
  asm volatile("trap;"); // wgmma is sm_90a only
#endif
}

#ifdef __CUDACC_RTC__
template __global__ void issueq<2, true>(int, u64*, u32*);
template __global__ void issueq<1, false>(int, u64*, u32*);
template __global__ void issueq<2, true, true, true>(int, u64*, u32*);
template __global__ void issueq<2, false, true, false>(int, u64*, u32*);
template __global__ void probe<true, true, 16, 128>(int, u64*, u32*, u32, u32);
template __global__ void probe<false, false, 0, 128>(int, u64*, u32*, u32, u32);
template __global__ void probe<true, true, 0, 64>(int, u64*, u32*, u32, u32);
template __global__ void probe<true, false, 0, 256>(int, u64*, u32*, u32, u32);
template __global__ void roles<true, 3>(int, u64*, u32*, u32);
template __global__ void roles<false, 1>(int, u64*, u32*, u32);
template __global__ void roles<true, 0, false, 4>(int, u64*, u32*, u32);
template __global__ void roles<true, 0, false, 4, MMA_SS>(int, u64*, u32*, u32);
template __global__ void roles<true, 0, false, 4, MMA_NONE>(int, u64*, u32*, u32);
template __global__ void roles<true, 3, false, 0, MMA_NONE>(int, u64*, u32*, u32);
template __global__ void roles<true, 0, false, 4, MMA_RS, true>(int, u64*, u32*, u32);
template __global__ void roles<true, 3, true, 0, MMA_SS>(int, u64*, u32*, u32);
template __global__ void skel<3, true, true, true, true>(int, u64*, u32*, u32);
template __global__ void skel<3, true, true, true, true, 4>(int, u64*, u32*, u32);
template __global__ void skelw<2, 256, 3>(int, u64*, u32*, u32);
template __global__ void skelw<2, 192, 3>(int, u64*, u32*, u32);
template __global__ void skelx<8, 0, 3>(int, u64*, u32*, u32);
template __global__ void skelx<4, 1, 3>(int, u64*, u32*, u32);
template __global__ void skelx<4, 3, 3>(int, u64*, u32*, u32);
template __global__ void skelx<4, 4, 3>(int, u64*, u32*, u32);
template __global__ void skelx<4, 5, 3>(int, u64*, u32*, u32);
template __global__ void skelx<4, 6, 3>(int, u64*, u32*, u32);
template __global__ void skelx<4, 7, 3>(int, u64*, u32*, u32);
#else
#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "wgprobe: %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

// The probes' 48 KB of operands and the 1 KB alignment slack.
static const size_t kShm = 48 * 1024 + 1024;

// Runs kernel k (one block per SM, threads threads, kShm of dynamic shared
// memory; its arguments after the iteration count in args) once with 64
// iterations to warm up, then three times with iters, handing each run's
// per-block slots of the cycles buffer to take.
template <class Kernel, class Take, class... Args>
static void timed(Kernel k, int sms, int threads, int iters, int slots, u64* dcycles, const Take& take, Args... args) {
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kShm));
  k<<<sms, threads, kShm>>>(64, dcycles, args...);
  CK(cudaGetLastError());
  for (int rep = 0; rep < 3; ++rep) {
    k<<<sms, threads, kShm>>>(iters, dcycles, args...);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<u64> c((size_t)sms * slots);
    CK(cudaMemcpy(c.data(), dcycles, c.size() * sizeof(u64), cudaMemcpyDeviceToHost));
    take(c);
  }
}

// The p-quantile of v (sorted here).
static double quantile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, (size_t)(p * v.size()))];
}

template <bool RS, bool GROUPED, int ALU, int NW = 128>
static void run(int sms, int nwg, u64* dcycles, u32* dsink, u32 data = 0) {
  const int iters = 4096;
  std::vector<double> per;
  timed(probe<RS, GROUPED, ALU, NW>, sms, 128 * nwg, iters, 4, dcycles, [&](const std::vector<u64>& c) {
    for (int b = 0; b < sms; ++b)
      for (int w = 0; w < nwg; ++w) per.push_back((double)c[b * 4 + w] / iters);
  }, dsink, 1u, data);
  const double med = quantile(per, 0.5);
  // FMA per cycle per SM: nwg warpgroups, 64 x NW x 16 each per wgmma.
  static const char* const names[] = {"zeros", "random", "fp4", "walk"};
  printf("%-3s m64n%-3dk16 %-8s %2d warpgroup(s)  ALU %2d %-6s: %7.1f cycles per wgmma per warpgroup (p10 %.1f, p90 %.1f), %6.0f FMA/cycle/SM\n",
         RS ? "RS" : "SS", NW, GROUPED ? "8/group" : "1/group", nwg, ALU, names[data], med, quantile(per, 0.1),
         quantile(per, 0.9), nwg * 1024.0 * NW / med);
}

template <bool RS, bool GROUPED>
static void sweep(int sms, u64* dc, u32* ds) {
  for (int nwg = 1; nwg <= 4; ++nwg) run<RS, GROUPED, 0>(sms, nwg, dc, ds);
  for (int nwg = 1; nwg <= 2; ++nwg) {
    run<RS, GROUPED, 16>(sms, nwg, dc, ds);
    run<RS, GROUPED, 32>(sms, nwg, dc, ds);
    run<RS, GROUPED, 64>(sms, nwg, dc, ds);
  }
}

template <bool CHAIN, int ALUWG, bool SMEM = false, int OWN = 0, int MMA = MMA_RS, bool OWNLDS = false>
static void roles_run(int sms, u64* dcycles, u32* dsink) {
  const int iters = 8192;
  std::vector<double> per, alu;
  timed(roles<CHAIN, ALUWG, SMEM, OWN, MMA, OWNLDS>, sms, 128 * (1 + ALUWG), iters, 2, dcycles, [&](const std::vector<u64>& c) {
    for (int b = 0; b < sms; ++b) {
      per.push_back((double)c[2 * b] / iters);
      // ALU loops per 1,000 cycles per warp (the SASS gives the
      // instructions per loop).
      if (ALUWG) alu.push_back(1000.0 * (double)c[2 * b + 1] / (double)c[2 * b]);
    }
  }, dsink, 1u);
  static const char* const mma[] = {"RS", "SS", "no"};
  printf("roles: %s m64n128k16 %-13s own %2d%s + %d %s warpgroup(s): %6.1f cycles per wgmma (p10 %.1f, p90 %.1f), %.1f loops per kcycle per warp\n",
         mma[MMA], CHAIN ? "4 per group" : "1 per group", OWN, OWNLDS ? " lds" : "", ALUWG, SMEM ? "smem" : "ALU ", quantile(per, 0.5),
         quantile(per, 0.1), quantile(per, 0.9), ALUWG ? quantile(alu, 0.5) : 0.0);
}

template <int NWG, bool RS, bool INFLIGHT = false, bool FENCE = true>
static void issue_run(int sms, u64* dcycles, u32* dsink) {
  const int iters = 512;
  std::vector<std::vector<double>> at(9);
  timed(issueq<NWG, RS, INFLIGHT, FENCE>, sms, 128 * NWG, iters, 9 * NWG, dcycles, [&](const std::vector<u64>& c) {
    for (int b = 0; b < sms; ++b)
      for (int w = 0; w < NWG; ++w)
        for (int j = 0; j < 9; ++j) at[j].push_back((double)c[(b * NWG + w) * 9 + j]);
  }, dsink);
  printf("issue: %s m64n128k16, %d warpgroup(s), %s, %s: cycles from a chain's start to each of its eight issues returning, then to wait_group %d:",
         RS ? "RS" : "SS", NWG, INFLIGHT ? "previous chain in flight" : "empty pipe", FENCE ? "fence" : "no fence", INFLIGHT ? 1 : 0);
  for (int j = 0; j < 9; ++j) printf(" %.0f", quantile(at[j], 0.5));
  printf("\n");
}


// The skeletons' cycles per chunk: kernel k (one block per SM, threads
// threads, shm bytes of dynamic shared memory) warmed up once, then run
// three times for 2,048 chunks; per chunk, each block's first w warpgroup
// slots.
template <class Kernel>
static std::vector<double> skel_chunks(Kernel k, int sms, int threads, size_t shm, int w, u64* dcycles, u32* dsink) {
  const int iters = 2048; // chunks: eight wgmmas each
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
  std::vector<double> per;
  for (int rep = 0; rep < 4; ++rep) {
    k<<<sms, threads, shm>>>(rep == 0 ? 64 : iters, dcycles, dsink, 1u);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (rep == 0) continue;
    std::vector<u64> c((size_t)sms * 4);
    CK(cudaMemcpy(c.data(), dcycles, c.size() * sizeof(u64), cudaMemcpyDeviceToHost));
    for (int b = 0; b < sms; ++b)
      for (int i = 0; i < w; ++i) per.push_back((double)c[b * 4 + i] / iters);
  }
  return per;
}

// The skeleton's forms (skel): its 96 KB of stages, barriers and slack.
template <int W, bool FENCE, bool WALK, bool AREW, bool BAR, int OWN = 0>
static void skel_run(int sms, u64* dcycles, u32* dsink) {
  std::vector<double> per = skel_chunks(skel<W, FENCE, WALK, AREW, BAR, OWN>, sms, 512, 3 * 32768 + 64 + 1024, W, dcycles, dsink);
  const double med = quantile(per, 0.5);
  printf("skel: %d consumer(s)%s%s%s%s own %d: %7.1f cycles per chunk per consumer, %6.1f per wgmma of the SM's pipe (p10 %.1f, p90 %.1f per chunk)\n",
         W, FENCE ? " +fence" : "", WALK ? " +walk" : "", AREW ? " +arew" : "", BAR ? " +barriers" : "", OWN, med, med / (8.0 * W),
         quantile(per, 0.1), quantile(per, 0.9));
}

// The wide skeleton's forms (skelw): one 64 KB stage and the slack.
template <int W, int NW, int OWN>
static void skelw_run(int sms, u64* dcycles, u32* dsink) {
  std::vector<double> per = skel_chunks(skelw<W, NW, OWN>, sms, 256, 65536 + 1024, W, dcycles, dsink);
  const double med = quantile(per, 0.5);
  printf("skelw: %d consumer(s) n%d own %d: %7.1f cycles per chunk per consumer, %6.1f per m64n128k16 of tensor work (p10 %.1f, p90 %.1f per chunk)\n",
         W, NW, OWN, med, med / (8.0 * W * NW / 128), quantile(per, 0.1), quantile(per, 0.9));
}


// The cluster skeleton's forms (skelx): skel's 96 KB, the exchange slots,
// the barriers and slack; an even grid of two-block clusters.
template <int CH, int XCH, int OWN>
static void skelx_run(int sms, u64* dcycles, u32* dsink) {
  const int ns = XCH == 3 ? 4 : XCH == 4 ? 4 : XCH >= 6 ? 8 : 2;
  std::vector<double> per = skel_chunks(skelx<CH, XCH, OWN>, sms & ~1, 512, 3 * 32768 + ns * 3 * 128 * 32 + 256 + 1024, 3, dcycles, dsink);
  const double med = quantile(per, 0.5);
  static const char* const how[] = {"", ", the half passed to the peer (every thread arrives)", ", the half passed to the peer (a lane a warp arrives)",
                                    ", the half passed to the peer a half ahead (a lane a warp arrives)",
                                    ", the half passed to the peer by one bulk copy a consumer",
                                    ", the half sent to the peer and nothing taken (a lane a warp arrives)",
                                    ", the half passed to the peer a half ahead by one bulk copy a consumer",
                                    ", the half passed to the peer a half ahead by one bulk copy a warp"};
  printf("skelx: 3 consumers, clusters of 2, %d of 8 chains a round%s, own %d: %7.1f cycles per chunk per consumer, %6.1f per wgmma of the SM's pipe (p10 %.1f, p90 %.1f per chunk)\n",
         CH, how[XCH], OWN, med, med / 24.0, quantile(per, 0.1), quantile(per, 0.9));
}

int main(int argc, char** argv) {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("%s, %d SMs, sm_%d%d; one block per SM, 4096 wgmmas per warpgroup, medians over blocks and 3 runs\n",
         p.name, p.multiProcessorCount, p.major, p.minor);
  u64* dc;
  u32* ds;
  CK(cudaMalloc(&dc, p.multiProcessorCount * 4 * sizeof(u64)));
  CK(cudaMalloc(&ds, 512 * sizeof(u32)));
  if (argc > 1 && std::string(argv[1]) == "skelx") {
    // Step 91: half the decode per block, the other half passed by the
    // cluster's peer; step 64's forms first, on this device.
    skel_run<3, true, true, true, true, 2>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, true, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<8, 0, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 0, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 1, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 2, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 3, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 4, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 5, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 6, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 7, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<8, 0, 3>(p.multiProcessorCount, dc, ds);
    skelx_run<4, 7, 3>(p.multiProcessorCount, dc, ds);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "skel") {
    // Step 64: the GEMM's consumer skeleton, one element at a time, three
    // consumers, then the whole of it with one and two.
    skel_run<3, false, false, false, false>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, false, false, false>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, false, false>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, false>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, true>(p.multiProcessorCount, dc, ds);
    skel_run<3, false, false, false, true>(p.multiProcessorCount, dc, ds);
    skel_run<1, true, true, true, true>(p.multiProcessorCount, dc, ds);
    skel_run<2, true, true, true, true>(p.multiProcessorCount, dc, ds);
    // The decode's own work after each wait (24 instructions a round; the
    // GEMMs' decode of a half is ~60, with its raw loads).
    skel_run<3, true, true, true, true, 1>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, true, 2>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, true, 4>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, true, 8>(p.multiProcessorCount, dc, ds);
    skel_run<2, true, true, true, true, 2>(p.multiProcessorCount, dc, ds);
    skel_run<2, true, true, true, true, 4>(p.multiProcessorCount, dc, ds);
    // Wider token tiles: the same halves at n256, two consumers.
    skelw_run<2, 128, 0>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 128, 2>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 128, 3>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 256, 0>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 256, 2>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 256, 3>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 256, 4>(p.multiProcessorCount, dc, ds);
    skelw_run<1, 256, 3>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 192, 2>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 192, 3>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 192, 4>(p.multiProcessorCount, dc, ds);
    skelw_run<2, 64, 3>(p.multiProcessorCount, dc, ds);
    skel_run<3, true, true, true, true, 3>(p.multiProcessorCount, dc, ds);
    run<true, true, 0>(p.multiProcessorCount, 3, dc, ds);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "issue") {
    // Step 27: how far a warpgroup's issue runs ahead of the pipe.
    u64* di;
    CK(cudaMalloc(&di, p.multiProcessorCount * 18 * sizeof(u64)));
    issue_run<1, true>(p.multiProcessorCount, di, ds);
    issue_run<2, true>(p.multiProcessorCount, di, ds);
    issue_run<1, false>(p.multiProcessorCount, di, ds);
    issue_run<2, false>(p.multiProcessorCount, di, ds);
    // The GEMMs' way: the previous chain still in the pipe, with and
    // without the chunk's fence.
    issue_run<1, true, true, true>(p.multiProcessorCount, di, ds);
    issue_run<2, true, true, true>(p.multiProcessorCount, di, ds);
    issue_run<2, true, true, false>(p.multiProcessorCount, di, ds);
    issue_run<2, false, true, true>(p.multiProcessorCount, di, ds);
    issue_run<2, false, true, false>(p.multiProcessorCount, di, ds);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "data") {
    // The same wgmmas on zeros, random fp16 and FP4 values, and B walking
    // a stage's k16 steps, one and two warpgroups.
    for (u32 data = 0; data < 4; ++data)
      for (int nwg = 1; nwg <= 2; ++nwg) {
        run<true, false, 0>(p.multiProcessorCount, nwg, dc, ds, data);
        run<true, true, 0>(p.multiProcessorCount, nwg, dc, ds, data);
        run<false, true, 0>(p.multiProcessorCount, nwg, dc, ds, data);
      }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "roles") {
    roles_run<true, 0>(p.multiProcessorCount, dc, ds);
    roles_run<true, 1>(p.multiProcessorCount, dc, ds);
    roles_run<true, 2>(p.multiProcessorCount, dc, ds);
    roles_run<true, 3>(p.multiProcessorCount, dc, ds);
    roles_run<false, 0>(p.multiProcessorCount, dc, ds);
    roles_run<false, 1>(p.multiProcessorCount, dc, ds);
    roles_run<false, 3>(p.multiProcessorCount, dc, ds);
    roles_run<true, 1, true>(p.multiProcessorCount, dc, ds);
    roles_run<true, 3, true>(p.multiProcessorCount, dc, ds);
    // The issuing warps' own work while their chain runs (one round: 24
    // decode-like instructions per thread; the GEMMs' half decode is ~100).
    roles_run<true, 0, false, 1>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 4>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 8>(p.multiProcessorCount, dc, ds);
    roles_run<true, 1, false, 4>(p.multiProcessorCount, dc, ds);
    // Step 26's controls: the own work with A from shared memory, and with
    // no wgmma at all (what it costs alone); the ALU warpgroups' rate with
    // no wgmma beside them.
    roles_run<true, 0, false, 4, MMA_SS>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 8, MMA_SS>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 1, MMA_NONE>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 4, MMA_NONE>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 8, MMA_NONE>(p.multiProcessorCount, dc, ds);
    roles_run<true, 1, false, 0, MMA_NONE>(p.multiProcessorCount, dc, ds);
    roles_run<true, 3, false, 0, MMA_NONE>(p.multiProcessorCount, dc, ds);
    roles_run<true, 3, false, 0, MMA_SS>(p.multiProcessorCount, dc, ds);
    // Step 27: SS chains beside shared-memory traffic (the SS designs'
    // price), and the issuing warps' own shared-memory loads beside their
    // chains, RS and SS, with the loads' time alone.
    roles_run<true, 1, true, 0, MMA_SS>(p.multiProcessorCount, dc, ds);
    roles_run<true, 3, true, 0, MMA_SS>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 4, MMA_RS, true>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 4, MMA_SS, true>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 4, MMA_NONE, true>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 16, MMA_RS, true>(p.multiProcessorCount, dc, ds);
    roles_run<true, 0, false, 16, MMA_NONE, true>(p.multiProcessorCount, dc, ds);
    return 0;
  }
  sweep<true, true>(p.multiProcessorCount, dc, ds);
  sweep<true, false>(p.multiProcessorCount, dc, ds);
  sweep<false, true>(p.multiProcessorCount, dc, ds);
  // Is a register-sourced wgmma's issue cost per instruction or per FLOP?
  for (int nwg = 1; nwg <= 2; ++nwg) {
    run<true, true, 0, 64>(p.multiProcessorCount, nwg, dc, ds);
    run<true, true, 0, 256>(p.multiProcessorCount, nwg, dc, ds);
  }
  return 0;
}
#endif
