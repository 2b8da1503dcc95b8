// harness_dual.cu - correctness and timing harness for kernels/cuda/fast_dual_gemm.cu
// (derived from harness.cu; same checks, reference silu(r1) * r2 in float64).
// Built with nvcc on the GPU machine (see README.md); the kernel's tile
// macros come in as -D flags, so each variant is its own binary.
//
// Correctness: random FP4 bytes (all 16 codes) and random e4m3 scales, the
// output poisoned with NaN before every run, compared with a GPU reference
// (decode by table, fp32 partial sums per 16-element scale block, which are
// exact, then float64 accumulation) that is itself spot-checked against a CPU
// float64 reference written from the format definitions.
// Timing: CUDA events around one launch, L2 flushed (128 MiB memset) before
// every sample, median of 50 samples after 3 warm-ups.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "../../kernels/cuda/fast_dual_gemm.cu"

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_), __FILE__, __LINE__, #x); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

// ---------------------------------------------------------------- formats (CPU)
static double e2m1_value(int code) {
  int s = (code >> 3) & 1, e = (code >> 1) & 3, m = code & 1;
  double v = e ? std::ldexp(1.0 + 0.5 * m, e - 1) : 0.5 * m;
  return s ? -v : v;
}
static double e4m3_value(uint8_t x) {
  int s = x >> 7, e = (x >> 3) & 15, m = x & 7;
  double v = e ? std::ldexp(1.0 + m / 8.0, e - 7) : std::ldexp(m / 8.0, -6);
  return s ? -v : v;
}
static float half_to_float(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 0)
    v = std::ldexp((float)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = std::ldexp(1.0f + m / 1024.0f, e - 15);
  return s ? -v : v;
}

// ---------------------------------------------------------------- reference (GPU)
__constant__ float c_e2m1[16];

__device__ double ref_e4m3(uint8_t x) {
  int s = x >> 7, e = (x >> 3) & 15, m = x & 7;
  double v = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
  return s ? -v : v;
}

__global__ void ref_kernel(const uint8_t* A, const uint8_t* SA, const uint8_t* B, const uint8_t* SB, double* out,
                           int M, int N, int K) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= (long long)M * N) return;
  int m = idx / N, n = idx % N;
  const uint8_t* a = A + (size_t)m * (K / 2);
  const uint8_t* b = B + (size_t)n * (K / 2);
  double acc = 0;
  for (int kg = 0; kg < K / 16; ++kg) {
    float part = 0.f; // exact: 16 products of e2m1 values, each a multiple of 1/4, |p| <= 36
    for (int e = 0; e < 8; ++e) {
      uint8_t x = a[kg * 8 + e], y = b[kg * 8 + e];
      part += c_e2m1[x & 15] * c_e2m1[y & 15];
      part += c_e2m1[x >> 4] * c_e2m1[y >> 4];
    }
    acc += (double)part * ref_e4m3(SA[(size_t)m * (K / 16) + kg]) * ref_e4m3(SB[(size_t)n * (K / 16) + kg]);
  }
  out[idx] = acc;
}

// ---------------------------------------------------------------- cases
struct Case {
  std::string name;
  int m, n, k;
  int emin, emax; // scale exponent-field range
  bool bench;
};

static uint8_t random_scale(std::mt19937_64& rng, int emin, int emax, bool allow_neg) {
  for (;;) {
    int e = emin + (int)(rng() % (emax - emin + 1));
    int m = (int)(rng() % 8);
    int s = allow_neg ? (int)(rng() % 2) : 0;
    uint8_t x = (uint8_t)((s << 7) | (e << 3) | m);
    if ((x & 0x7F) == 0x7F) continue;
    return x;
  }
}

static int g_sms = 0, g_occ = 0;
static uint8_t* g_flush = nullptr;
static const size_t FLUSH_BYTES = 128u << 20;

static int num_tiles(int M, int N) { return ((M + TILE_M - 1) / TILE_M) * ((N + TILE_N / 2 - 1) / (TILE_N / 2)); }

static void launch(const uint8_t* a, const uint8_t* sa, const uint8_t* b1, const uint8_t* sb1, const uint8_t* b2,
                   const uint8_t* sb2, uint16_t* c, int M, int N, int K, bool persistent) {
  int nt = num_tiles(M, N);
  int grid = persistent ? std::min(nt, g_sms * g_occ) : nt;
  fast_dual_gemm<<<grid, FG_THREADS, FG_SMEM_BYTES>>>(a, sa, b1, sb1, b2, sb2, c, M, N, K);
}

static bool run_case(const Case& cs, std::mt19937_64& rng, bool timing, std::vector<std::string>& summary) {
  const int M = cs.m, N = cs.n, K = cs.k;
  std::vector<uint8_t> a((size_t)M * K / 2), b1((size_t)N * K / 2), b2((size_t)N * K / 2);
  std::vector<uint8_t> sa((size_t)M * K / 16), sb1((size_t)N * K / 16), sb2((size_t)N * K / 16);
  for (auto& x : a) x = (uint8_t)rng();
  for (auto& x : b1) x = (uint8_t)rng();
  for (auto& x : b2) x = (uint8_t)rng();
  bool neg = !cs.bench;
  for (auto& x : sa) x = random_scale(rng, cs.emin, cs.emax, neg);
  for (auto& x : sb1) x = random_scale(rng, cs.emin, cs.emax, neg);
  for (auto& x : sb2) x = random_scale(rng, cs.emin, cs.emax, neg);
  uint8_t *da, *dsa, *db1, *dsb1, *db2, *dsb2;
  uint16_t* dc;
  double *dr1, *dr2;
  auto up = [](uint8_t** d, const std::vector<uint8_t>& h) {
    CK(cudaMalloc(d, h.size()));
    CK(cudaMemcpy(*d, h.data(), h.size(), cudaMemcpyHostToDevice));
  };
  up(&da, a);
  up(&dsa, sa);
  up(&db1, b1);
  up(&dsb1, sb1);
  up(&db2, b2);
  up(&dsb2, sb2);
  CK(cudaMalloc(&dc, (size_t)M * N * 2));
  CK(cudaMalloc(&dr1, (size_t)M * N * 8));
  CK(cudaMalloc(&dr2, (size_t)M * N * 8));
  long long tot = (long long)M * N;
  ref_kernel<<<(unsigned)((tot + 255) / 256), 256>>>(da, dsa, db1, dsb1, dr1, M, N, K);
  ref_kernel<<<(unsigned)((tot + 255) / 256), 256>>>(da, dsa, db2, dsb2, dr2, M, N, K);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> r1(tot), r2(tot), ref(tot);
  CK(cudaMemcpy(r1.data(), dr1, tot * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r2.data(), dr2, tot * 8, cudaMemcpyDeviceToHost));
  double spot_err = 0;
  for (int s = 0; s < 32; ++s) {
    int m = (int)(rng() % M), n = (int)(rng() % N);
    double acc = 0;
    for (int k = 0; k < K; ++k) {
      int ca = (a[(size_t)m * K / 2 + k / 2] >> (4 * (k & 1))) & 15;
      int cb = (b1[(size_t)n * K / 2 + k / 2] >> (4 * (k & 1))) & 15;
      acc += e2m1_value(ca) * e4m3_value(sa[(size_t)m * K / 16 + k / 16]) * e2m1_value(cb) *
             e4m3_value(sb1[(size_t)n * K / 16 + k / 16]);
    }
    double r = r1[(size_t)m * N + n];
    spot_err = std::max(spot_err, std::fabs(acc - r) / std::max(1e-30, std::fabs(acc)));
  }
  if (spot_err > 1e-9) {
    printf("FAIL %-22s GPU reference disagrees with CPU reference (rel %.3g)\n", cs.name.c_str(), spot_err);
    return false;
  }
  double maxref = 0;
  for (long long i = 0; i < tot; ++i) {
    double x = r1[i];
    ref[i] = x / (1.0 + std::exp(-x)) * r2[i];
    maxref = std::max(maxref, std::fabs(ref[i]));
  }
  bool ok_all = true;
  for (bool persistent : {true, false}) {
    CK(cudaMemset(dc, 0xFF, (size_t)M * N * 2));
    launch(da, dsa, db1, dsb1, db2, dsb2, dc, M, N, K, persistent);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint16_t> out(tot);
    CK(cudaMemcpy(out.data(), dc, tot * 2, cudaMemcpyDeviceToHost));
    double num = 0, den = 0, maxerr = 0;
    long long bad = 0, nonfinite = 0;
    for (long long i = 0; i < tot; ++i) {
      float o = half_to_float(out[i]);
      double r = ref[i];
      if (!std::isfinite(o)) {
        ++nonfinite;
        continue;
      }
      double d = o - r;
      num += d * d;
      den += r * r;
      maxerr = std::max(maxerr, std::fabs(d));
      if (std::fabs(d) > std::fabs(r) * (1.0 / 1024) + 1e-4 * maxref + 1e-30) ++bad;
    }
    double rel = den > 0 ? std::sqrt(num / den) : 0;
    bool ok = nonfinite == 0 && rel < 1e-3 && bad == 0;
    ok_all = ok_all && ok;
    printf("%s %-22s persistent=%d tiles=%d rel_l2=%.3e max_abs=%.3e max_ref=%.3e bad=%lld nonfinite=%lld\n",
           ok ? "PASS" : "FAIL", cs.name.c_str(), (int)persistent, num_tiles(M, N), rel, maxerr, maxref, bad,
           nonfinite);
    if (ok && timing) {
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      for (int w = 0; w < 3; ++w) launch(da, dsa, db1, dsb1, db2, dsb2, dc, M, N, K, persistent);
      CK(cudaGetLastError());
      std::vector<float> cold;
      for (int s = 0; s < 50; ++s) {
        CK(cudaMemsetAsync(g_flush, s & 0xFF, FLUSH_BYTES, 0));
        CK(cudaEventRecord(e0, 0));
        launch(da, dsa, db1, dsb1, db2, dsb2, dc, M, N, K, persistent);
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        cold.push_back(ms * 1000);
      }
      CK(cudaGetLastError());
      std::sort(cold.begin(), cold.end());
      double med = cold[cold.size() / 2];
      double flops = 4.0 * M * (double)N * K;
      char buf[256];
      snprintf(buf, sizeof buf, "TIME %-22s order=0 persistent=%d cold_med=%8.2f us (p10 %.2f p90 %.2f) %6.1f TFLOP/s",
               cs.name.c_str(), (int)persistent, med, cold[5], cold[45], flops / med * 1e-6);
      printf("%s\n", buf);
      summary.push_back(buf);
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
    }
  }
  CK(cudaFree(da));
  CK(cudaFree(dsa));
  CK(cudaFree(db1));
  CK(cudaFree(dsb1));
  CK(cudaFree(db2));
  CK(cudaFree(dsb2));
  CK(cudaFree(dc));
  CK(cudaFree(dr1));
  CK(cudaFree(dr2));
  return ok_all;
}

int main(int argc, char** argv) {
  bool timing = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check-only")
      timing = false;
    else {
      fprintf(stderr, "usage: %s [--check-only]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  CK(cudaFuncSetAttribute(fast_dual_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, FG_SMEM_BYTES));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g_occ, fast_dual_gemm, FG_THREADS, FG_SMEM_BYTES));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, fast_dual_gemm));
  printf("device %s SMs=%d | dual tile %dx%d (B1+B2 rows x M) warps %dx%d stages %d threads %d smem %d regs %d local %zu occ %d\n",
         prop.name, g_sms, TILE_N, TILE_M, WARPS_N, WARPS_M, STAGES, FG_THREADS, FG_SMEM_BYTES, fa.numRegs,
         fa.localSizeBytes, g_occ);
  if (g_occ < 1) {
    printf("FAIL kernel cannot be resident\n");
    return 1;
  }
  float lut[16];
  for (int i = 0; i < 16; ++i) lut[i] = (float)e2m1_value(i);
  CK(cudaMemcpyToSymbol(c_e2m1, lut, sizeof lut));
  CK(cudaMalloc(&g_flush, FLUSH_BYTES));
  // Scale exponent fields 2..4 keep silu(x) * y of K=7168 sums inside fp16.
  std::vector<Case> cases = {
      {"dual_edge_M1_N64_K128", 1, 64, 128, 2, 5, false},
      {"dual_edge_M77_N192_K384", 77, 192, 384, 2, 5, false},
      {"dual_edge_M300_N320_K640", 300, 320, 640, 2, 5, false},
      {"dual1_M256_N4096_K7168", 256, 4096, 7168, 2, 4, true},
      {"dual2_M512_N4096_K7168", 512, 4096, 7168, 2, 4, true},
      {"dual3_M256_N3072_K4096", 256, 3072, 4096, 2, 4, true},
      {"dual4_M512_N3072_K7168", 512, 3072, 7168, 2, 4, true},
  };
  std::mt19937_64 rng(20261122);
  bool all = true;
  std::vector<std::string> summary;
  for (const Case& cs : cases) all = run_case(cs, rng, timing && cs.bench, summary) && all;
  printf("---- summary dual (tile %dx%d warps %dx%d stages %d regs %d occ %d) ----\n", TILE_N, TILE_M, WARPS_N,
         WARPS_M, STAGES, fa.numRegs, g_occ);
  for (auto& s : summary) printf("%s\n", s.c_str());
  printf("%s\n", all ? "ALL PASS" : "SOME FAILED");
  return all ? 0 : 1;
}
