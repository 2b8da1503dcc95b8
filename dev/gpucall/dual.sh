#!/usr/bin/env bash
# Device call of issue 11's wgmma dual GEMM. From the repository root on the
# GPU machine, with bin/ carried (bin/web, bin/engine.test, built here):
#   bash dev/gpucall/dual.sh [TOTAL]
# Steps, in order of importance: ptxas's resource report of the dual entry
# (nvcc, where installed); `web bench --suite tests` (correctness on every test
# shape, paired with fused); the benches: the new rungs paired with baseline,
# wgmma paired with fused, the group GEMM's wgmma and fused (the same call's
# table); the PyTorch peers; then every dual wgmma combination on every test
# and benchmark shape (TestWgmmaFamily/nvfp4_dual_gemm) with what is left.
# TOTAL (default 560 s) caps the whole call. Output: $OUT/steps.txt, $OUT/*.log,
# $OUT/summary.md, $OUT/results.tar.gz.
set -u
: "${OUT:?set OUT to a folder for the results}"
cd "$(dirname "$0")/../.."
TOTAL=${1:-560}
START=$(date +%s)
. dev/gpucall/lib.sh
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
} >"$OUT/device.txt" 2>&1
export PITCHTANK_REQUIRE_NVRTC=1
export PITCHTANK_TEST_CACHE=/tmp/pt-test-cache
mkdir -p "$PITCHTANK_TEST_CACHE"
if command -v nvcc >/dev/null; then
	for v in "128 1 3 4" "64 1 3 4" "64 2 4 3"; do
		set -- $v
		step "ptxas_tm$1_mb$2" 60 ptxas.log nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v \
			-DDUAL=1 -DWG_TM=$1 -DWG_MB=$2 -DSTAGES=$3 -DWG_RS=$4 -o /tmp/wgd.cubin kernels/cuda/wg_group_gemm.cu
	done
fi
step d_tests 120 tests.log ./bin/web bench --problem nvfp4_dual_gemm --variant wgmma --baseline fused \
	--suite tests --device 0 --cache-dir "$C" --max-time 110s --json "$R/d_tests.json"
bench d_wgmma nvfp4_dual_gemm wgmma
bench d_wgmma_vs_fused nvfp4_dual_gemm wgmma fused
bench d_wgmma_tm64 nvfp4_dual_gemm 'wgmma?tile_m=64'
bench g_wgmma nvfp4_group_gemm wgmma
step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
TITLE="wgmma dual call" summarize
step family 400 family.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestWgmmaFamily$/^nvfp4_dual_gemm$'
{
	grep -E 'registers|spill|C75|error' "$OUT/ptxas.log" 2>/dev/null | cut -c1-200
	grep -E -- '^(---|ok|FAIL|PASS)|WRONG|build:|panic' "$OUT/family.log" "$OUT/tests.log" 2>/dev/null | cut -c1-300
	grep -c 'shapes correct' "$OUT/family.log" 2>/dev/null
} >>"$OUT/summary.md"
pack
head -120 "$OUT/summary.md"
echo "done in $(($(date +%s) - START))s"
