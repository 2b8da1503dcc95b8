#!/usr/bin/env bash
# The final device call of issue 4 (dev/gpucall/README.md). From the
# repository root on the GPU machine, with bin/ carried:
#   bash dev/gpucall/final.sh            # optional first argument: total budget in s (default 560)
# Steps, in order of importance, each capped by `timeout` at what is left of
# the budget, so the call ends in time and keeps what finished:
#   1. the server end-to-end test (TestGPUServerRuns)
#   2. the ladder rungs lost or never benched in the 2026-11-22 calls, paired
#      with baseline on the group GEMM's benchmarks; then fused vs baseline
#      on both problems
#   3. the PyTorch peers (bench/peer/peer.py)
# Output (the device tool returns at most 8 files): $OUT/e2e.log,
# $OUT/bench.log, $OUT/peer.log, $OUT/steps.txt, $OUT/device.txt,
# $OUT/summary.md and $OUT/results.tar.gz (every JSON and log, repacked after
# each step).
set -u
: "${OUT:?set OUT to a folder for the results}"
cd "$(dirname "$0")/../.."
TOTAL=${1:-560}
START=$(date +%s)
. dev/gpucall/lib.sh
for f in bin/web bin/webgpu.test; do
	[ -x "$f" ] || { echo "missing $f: build it here first (dev/gpucall/README.md)" | tee -a "$OUT/steps.txt"; exit 2; }
done
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
} >"$OUT/device.txt" 2>&1
export PITCHTANK_REQUIRE_NVRTC=1
export PITCHTANK_REQUIRE_GPU=1

# 1. The server end to end. Its runs use the server's own cubin cache.
step e2e 330 e2e.log env PITCHTANK_GPU_E2E=1 PITCHTANK_WEB_BIN=./bin/web \
	./bin/webgpu.test -test.run '^TestGPUServerRuns$' -test.v -test.timeout 320s

# 2. Ladder rungs, then fused (bench: lib.sh).
bench g_stages3 nvfp4_group_gemm 'baseline?stages=3'
bench g_tile_m64 nvfp4_group_gemm 'baseline?tile_m=64'
bench g_streams nvfp4_group_gemm 'baseline?launch=streams'
bench g_graph nvfp4_group_gemm 'baseline?launch=graph'
bench g_stages2 nvfp4_group_gemm 'baseline?stages=2'
bench g_stages4 nvfp4_group_gemm 'baseline?stages=4'
bench g_fused nvfp4_group_gemm fused
bench d_fused nvfp4_dual_gemm fused

# 3. PyTorch peers.
step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"

TITLE="Final device call" summarize
pack
cat "$OUT/summary.md" | head -60
echo "done in $(($(date +%s) - START))s"
