// harness.cu - correctness and timing harness for kernels/cuda/fast_group_gemm.cu.
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

#ifdef FK_WG
// -DFK_WG: the warp-specialized wgmma kernel (same launch interface).
#ifdef FK_WG_OLD
#include "../../bin/wg_v1.cu" // an earlier version, copied in by the device script
#else
#include "../../kernels/cuda/wg_group_gemm.cu"
#endif
#define fast_group_gemm wg_group_gemm
#else
#include "../../kernels/cuda/fast_group_gemm.cu"
#endif

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
enum ScaleMode { SCALE_NORMAL = 0, SCALE_TINY_A = 1, SCALE_SIGNED = 2 };

struct Case {
  std::string name;
  std::vector<int> ms;
  int n, k;
  ScaleMode mode;
  bool bench;
};

struct GroupData {
  int m;
  std::vector<uint8_t> a, sa, b, sb;
  uint8_t *da, *dsa, *db, *dsb;
  uint16_t* dc;
  double* dref;
  std::vector<double> ref;
};

static uint8_t random_scale(std::mt19937_64& rng, int emin, int emax, bool allow_neg) {
  for (;;) {
    int e = emin + (int)(rng() % (emax - emin + 1));
    int m = (int)(rng() % 8);
    int s = allow_neg ? (int)(rng() % 2) : 0;
    uint8_t x = (uint8_t)((s << 7) | (e << 3) | m);
    if ((x & 0x7F) == 0x7F) continue; // NaN codes
    return x;
  }
}

static void fill(GroupData& gd, int n, int k, ScaleMode mode, std::mt19937_64& rng) {
  int m = gd.m;
  gd.a.resize((size_t)m * k / 2);
  gd.b.resize((size_t)n * k / 2);
  gd.sa.resize((size_t)m * k / 16);
  gd.sb.resize((size_t)n * k / 16);
  for (auto& x : gd.a) x = (uint8_t)rng();
  for (auto& x : gd.b) x = (uint8_t)rng();
  // Exponent fields 3..8 (2^-4 .. 2^1 with mantissa) keep K=7168 sums well
  // inside fp16 range. TINY_A: A scales are e4m3 subnormals (2^-9..2^-7) and
  // B scales up to 448, so decoded A operands are fp16 subnormals.
  for (auto& x : gd.sa) x = mode == SCALE_TINY_A ? random_scale(rng, 0, 0, false) | 1 : random_scale(rng, 3, 8, mode == SCALE_SIGNED);
  for (auto& x : gd.sb) x = mode == SCALE_TINY_A ? random_scale(rng, 10, 15, false) : random_scale(rng, 3, 8, mode == SCALE_SIGNED);
}

struct Launch {
  int order; // 0: groups by M desc, n0, m0; 1: same then stable by rows in tile desc
  bool persistent;
};

static std::vector<FgTile> build_tiles(const std::vector<GroupData>& gs, int n, int order) {
  std::vector<int> gidx(gs.size());
  for (size_t i = 0; i < gs.size(); ++i) gidx[i] = (int)i;
  std::stable_sort(gidx.begin(), gidx.end(), [&](int x, int y) { return gs[x].m > gs[y].m; });
  std::vector<FgTile> tiles;
  for (int g : gidx)
    for (int n0 = 0; n0 < n; n0 += TILE_N)
      for (int m0 = 0; m0 < gs[g].m; m0 += TILE_M) tiles.push_back(FgTile{g, m0, n0, 0});
  if (order == 1)
    std::stable_sort(tiles.begin(), tiles.end(), [&](const FgTile& x, const FgTile& y) {
      int rx = std::min(TILE_M, gs[x.group].m - x.m0), ry = std::min(TILE_M, gs[y.group].m - y.m0);
      return rx > ry;
    });
  return tiles;
}

static int g_sms = 0, g_occ = 0;
static uint8_t* g_flush = nullptr;
static const size_t FLUSH_BYTES = 128u << 20;

static void launch(const FgGroup* dgroups, const FgTile* dtiles, int ntiles, bool persistent, cudaStream_t st) {
  int grid = persistent ? std::min(ntiles, g_sms * g_occ) : ntiles;
#ifdef FK_WG
  // wg_group_gemm's stream-K workspace and flags, and its tokens decoded
  // ahead: unused with WG_SK 0 and WG_TOK 0 (the app's bench runs WG_TOK 1).
  fast_group_gemm<<<grid, FG_THREADS, FG_SMEM_BYTES, st>>>(dgroups, dtiles, ntiles, nullptr, nullptr, nullptr);
#else
  fast_group_gemm<<<grid, FG_THREADS, FG_SMEM_BYTES, st>>>(dgroups, dtiles, ntiles);
#endif
}

static bool run_case(const Case& cs, std::mt19937_64& rng, bool timing, std::vector<std::string>& summary) {
  int G = (int)cs.ms.size(), N = cs.n, K = cs.k;
  std::vector<GroupData> gs(G);
  double flops = 0;
  for (int g = 0; g < G; ++g) {
    gs[g].m = cs.ms[g];
    fill(gs[g], N, K, cs.mode, rng);
    flops += 2.0 * cs.ms[g] * (double)N * K;
    CK(cudaMalloc(&gs[g].da, gs[g].a.size()));
    CK(cudaMalloc(&gs[g].dsa, gs[g].sa.size()));
    CK(cudaMalloc(&gs[g].db, gs[g].b.size()));
    CK(cudaMalloc(&gs[g].dsb, gs[g].sb.size()));
    CK(cudaMalloc(&gs[g].dc, (size_t)gs[g].m * N * 2));
    CK(cudaMalloc(&gs[g].dref, (size_t)gs[g].m * N * 8));
    CK(cudaMemcpy(gs[g].da, gs[g].a.data(), gs[g].a.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gs[g].dsa, gs[g].sa.data(), gs[g].sa.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gs[g].db, gs[g].b.data(), gs[g].b.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(gs[g].dsb, gs[g].sb.data(), gs[g].sb.size(), cudaMemcpyHostToDevice));
    long long tot = (long long)gs[g].m * N;
    ref_kernel<<<(unsigned)((tot + 255) / 256), 256>>>(gs[g].da, gs[g].dsa, gs[g].db, gs[g].dsb, gs[g].dref, gs[g].m, N, K);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  // Spot-check the GPU reference against the CPU one.
  double spot_err = 0;
  for (int g = 0; g < G; ++g) {
    gs[g].ref.resize((size_t)gs[g].m * N);
    CK(cudaMemcpy(gs[g].ref.data(), gs[g].dref, gs[g].ref.size() * 8, cudaMemcpyDeviceToHost));
    for (int s = 0; s < 24; ++s) {
      int m = (int)(rng() % gs[g].m), n = (int)(rng() % N);
      double acc = 0;
      for (int k = 0; k < K; ++k) {
        int ca = (gs[g].a[(size_t)m * K / 2 + k / 2] >> (4 * (k & 1))) & 15;
        int cb = (gs[g].b[(size_t)n * K / 2 + k / 2] >> (4 * (k & 1))) & 15;
        acc += e2m1_value(ca) * e4m3_value(gs[g].sa[(size_t)m * K / 16 + k / 16]) * e2m1_value(cb) *
               e4m3_value(gs[g].sb[(size_t)n * K / 16 + k / 16]);
      }
      double r = gs[g].ref[(size_t)m * N + n];
      spot_err = std::max(spot_err, std::fabs(acc - r) / std::max(1e-30, std::fabs(acc)));
    }
  }
  if (spot_err > 1e-9) {
    printf("FAIL %-22s GPU reference disagrees with CPU reference (rel %.3g)\n", cs.name.c_str(), spot_err);
    return false;
  }

  std::vector<FgGroup> hg(G);
  for (int g = 0; g < G; ++g) hg[g] = FgGroup{gs[g].da, gs[g].dsa, gs[g].db, gs[g].dsb, gs[g].dc, gs[g].m, N, K, 0};
  FgGroup* dgroups;
  CK(cudaMalloc(&dgroups, sizeof(FgGroup) * G));
  CK(cudaMemcpy(dgroups, hg.data(), sizeof(FgGroup) * G, cudaMemcpyHostToDevice));

  bool ok_all = true;
  const Launch launches[] = {{0, true}, {0, false}, {1, true}};
  for (const Launch& L : launches) {
    std::vector<FgTile> tiles = build_tiles(gs, N, L.order);
    FgTile* dtiles;
    CK(cudaMalloc(&dtiles, sizeof(FgTile) * tiles.size()));
    CK(cudaMemcpy(dtiles, tiles.data(), sizeof(FgTile) * tiles.size(), cudaMemcpyHostToDevice));
    // Poison every output: fp16 0xFFFF is a NaN, so an unwritten element fails.
    for (int g = 0; g < G; ++g) CK(cudaMemset(gs[g].dc, 0xFF, (size_t)gs[g].m * N * 2));
    launch(dgroups, dtiles, (int)tiles.size(), L.persistent, 0);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    double num = 0, den = 0, maxerr = 0, maxref = 0;
    long long bad = 0, nonfinite = 0;
    for (int g = 0; g < G; ++g)
      for (double r : gs[g].ref) maxref = std::max(maxref, std::fabs(r));
    for (int g = 0; g < G; ++g) {
      std::vector<uint16_t> out((size_t)gs[g].m * N);
      CK(cudaMemcpy(out.data(), gs[g].dc, out.size() * 2, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < out.size(); ++i) {
        float o = half_to_float(out[i]);
        double r = gs[g].ref[i];
        if (!std::isfinite(o)) {
          ++nonfinite;
          continue;
        }
        double d = o - r;
        num += d * d;
        den += r * r;
        maxerr = std::max(maxerr, std::fabs(d));
        // fp16 output: half an ulp is 2^-11 relative; allow 2^-10 plus an
        // absolute floor for sums that cancel to near zero (fp32 accumulation
        // error scales with the terms, not with the result).
        if (std::fabs(d) > std::fabs(r) * (1.0 / 1024) + 1e-4 * maxref + 1e-30) ++bad;
      }
    }
    double rel = den > 0 ? std::sqrt(num / den) : 0;
    bool ok = nonfinite == 0 && rel < 1e-3 && bad == 0;
    ok_all = ok_all && ok;
    printf("%s %-22s order=%d persistent=%d tiles=%zu rel_l2=%.3e max_abs=%.3e max_ref=%.3e bad=%lld nonfinite=%lld\n",
           ok ? "PASS" : "FAIL", cs.name.c_str(), L.order, (int)L.persistent, tiles.size(), rel, maxerr, maxref, bad,
           nonfinite);
    if ((ok || getenv("FK_TIME_ANYWAY")) && timing) {
      cudaEvent_t e0, e1;
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      for (int w = 0; w < 3; ++w) launch(dgroups, dtiles, (int)tiles.size(), L.persistent, 0);
      CK(cudaGetLastError());
      std::vector<float> cold, warm;
      for (int s = 0; s < 50; ++s) {
        CK(cudaMemsetAsync(g_flush, s & 0xFF, FLUSH_BYTES, 0));
        CK(cudaEventRecord(e0, 0));
        launch(dgroups, dtiles, (int)tiles.size(), L.persistent, 0);
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        cold.push_back(ms * 1000);
      }
      for (int s = 0; s < 50; ++s) {
        CK(cudaEventRecord(e0, 0));
        launch(dgroups, dtiles, (int)tiles.size(), L.persistent, 0);
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        warm.push_back(ms * 1000);
      }
      CK(cudaGetLastError());
      std::sort(cold.begin(), cold.end());
      std::sort(warm.begin(), warm.end());
      double med = cold[cold.size() / 2];
      char buf[256];
      snprintf(buf, sizeof buf, "TIME %-22s order=%d persistent=%d cold_med=%8.2f us (p10 %.2f p90 %.2f) warm_med=%8.2f us  %6.1f TFLOP/s",
               cs.name.c_str(), L.order, (int)L.persistent, med, cold[5], cold[45], warm[warm.size() / 2],
               flops / med * 1e-6);
      printf("%s\n", buf);
      summary.push_back(buf);
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
    }
    CK(cudaFree(dtiles));
  }
  CK(cudaFree(dgroups));
  for (auto& g : gs) {
    CK(cudaFree(g.da));
    CK(cudaFree(g.dsa));
    CK(cudaFree(g.db));
    CK(cudaFree(g.dsb));
    CK(cudaFree(g.dc));
    CK(cudaFree(g.dref));
  }
  return ok_all;
}

int main(int argc, char** argv) {
  bool timing = true, edges_only = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check-only")
      timing = false;
    else if (a == "--edges")
      edges_only = true;
    else if (a == "--case" && i + 1 < argc)
      only = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--check-only] [--edges] [--case NAME]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  CK(cudaFuncSetAttribute(fast_group_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, FG_SMEM_BYTES));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g_occ, fast_group_gemm, FG_THREADS, FG_SMEM_BYTES));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, fast_group_gemm));
  printf("device %s SMs=%d | tile %dx%d (N x M) warps %dx%d stages %d threads %d smem %d regs %d local %zu occ %d\n",
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

  std::vector<Case> cases = {
      {"edge_M1_N64_K128", {1}, 64, 128, SCALE_SIGNED, false},
      {"edge_oddM_N192_K256", {33, 77, 5}, 192, 256, SCALE_SIGNED, false},
      {"edge_tinyA_K384", {70, 9}, 320, 384, SCALE_TINY_A, false},
      {"edge_16groups_K640", {1, 300, 17, 64, 65, 128, 129, 200, 8, 7, 255, 31, 96, 40, 3, 190}, 448, 640, SCALE_NORMAL, false},
      {"edge_bigK_tinyA", {100}, 128, 7168, SCALE_TINY_A, false},
      {"bench1_8x_N4096_K7168", {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, SCALE_NORMAL, true},
      {"bench2_8x_N7168_K2048", {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, SCALE_NORMAL, true},
      {"bench3_2x_N3072_K4096", {192, 320}, 3072, 4096, SCALE_NORMAL, true},
      {"bench4_2x_N4096_K1536", {128, 384}, 4096, 1536, SCALE_NORMAL, true},
  };
  std::mt19937_64 rng(20261121);
  bool all = true;
  std::vector<std::string> summary;
  for (const Case& cs : cases)
    if (!(edges_only && cs.bench) && (only.empty() || only == cs.name)) all = run_case(cs, rng, timing && cs.bench, summary) && all;
  printf("---- summary (tile %dx%d warps %dx%d stages %d regs %d occ %d) ----\n", TILE_N, TILE_M, WARPS_N, WARPS_M,
         STAGES, fa.numRegs, g_occ);
  for (auto& s : summary) printf("%s\n", s.c_str());
  printf("%s\n", all ? "ALL PASS" : "SOME FAILED");
  return all ? 0 : 1;
}
