#!/usr/bin/env bash
# The device call behind docs/VARIANTS.md: engine device tests (every variant,
# fused included, on the test and benchmark shapes and the edge cases), then
# `web bench` of fused against the baseline on both problems, the PyTorch
# peers, and the ladder rungs against the baseline on the group GEMM, in that
# order of importance. Each step gets what is left of a total budget (first
# argument, seconds), so the call ends in time and keeps what it finished.
# Built here first:
#   CGO_ENABLED=1 go test -c -o bin/engine.test ./internal/engine
#   CGO_ENABLED=1 go build -o bin/web ./cmd/web
# Run there: bash dev/fastkern/ladder_call.sh 330 (with $OUT set).
set -u
TOTAL=${1:-330}
START=$(date +%s)
left() { echo $((TOTAL - ($(date +%s) - START))); }
step() { # step NAME CAP cmd...: run with min(CAP, what is left) seconds
	local name=$1 cap=$2
	shift 2
	local l
	l=$(left)
	if [ "$l" -lt 15 ]; then
		echo "SKIP $name: ${l}s left" | tee -a "$OUT/steps.txt"
		return
	fi
	local t=$((cap < l ? cap : l))
	local t0
	t0=$(date +%s)
	timeout "$t" "$@" >"$OUT/$name.log" 2>&1
	echo "$name rc=$? ${t}s cap, took $(($(date +%s) - t0))s" | tee -a "$OUT/steps.txt"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/device.txt" 2>&1
date -u +%FT%TZ >>"$OUT/device.txt"
export PITCHTANK_REQUIRE_NVRTC=1
step engine 100 ./bin/engine.test -test.v -test.run 'TestVariantsCorrectAllShapes|TestEdgeCases|TestFusedPersistentGrid|TestUploadFreshInputs|TestResourceReport'
B="./bin/web bench --suite benchmarks --device 0 --cache-dir /tmp/ptcache"
step g_fused 70 $B --problem nvfp4_group_gemm --variant fused --baseline baseline --max-time 65s --json "$OUT/g_fused.json"
step d_fused 70 $B --problem nvfp4_dual_gemm --variant fused --baseline baseline --max-time 65s --json "$OUT/d_fused.json"
if [ -f bench/peer/peer.py ]; then
	step peer 60 python3 bench/peer/peer.py --out "$OUT/peer.json"
fi
for r in grouped:"baseline?launch=grouped" stages3:"baseline?stages=3" tile_m64:"baseline?tile_m=64" streams:"baseline?launch=streams"; do
	step "g_${r%%:*}" 45 $B --problem nvfp4_group_gemm --variant "${r#*:}" --baseline baseline --max-time 40s --json "$OUT/g_${r%%:*}.json"
done
step everycombo 60 ./bin/engine.test -test.v -test.run 'TestEveryCombinationOnTestShapes'
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >>"$OUT/device.txt" 2>&1
echo "done in $(($(date +%s) - START))s" | tee -a "$OUT/steps.txt"
# The device tool returns at most a few files from $OUT: pack everything
# into one archive (the 2026-11-22 run lost half its results to that limit).
tar czf /tmp/ladder.tgz -C "$OUT" . && rm -f "$OUT"/*.json "$OUT"/*.log && mv /tmp/ladder.tgz "$OUT/ladder.tgz"
