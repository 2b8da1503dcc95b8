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
R=/tmp/pt-final
rm -rf "$R"
mkdir -p "$R"
C=/tmp/pt-cubin-cache
left() { echo $((TOTAL - ($(date +%s) - START))); }
pack() {
	cp -f "$OUT"/*.log "$OUT"/*.txt "$R"/ 2>/dev/null
	tar czf "$OUT/results.tar.gz.tmp" -C "$R" . && mv -f "$OUT/results.tar.gz.tmp" "$OUT/results.tar.gz"
}
# step NAME CAP LOG cmd...: run cmd with min(CAP, what is left) seconds,
# appending its output to $OUT/LOG.
step() {
	local name=$1 cap=$2 log=$3
	shift 3
	local l t t0 rc
	l=$(left)
	if [ "$l" -lt 20 ]; then
		echo "SKIP $name: ${l}s left" | tee -a "$OUT/steps.txt"
		return
	fi
	t=$((cap < l ? cap : l))
	t0=$(date +%s)
	echo "=== $name (cap ${t}s): $*" >>"$OUT/$log"
	timeout -k 10 "$t" "$@" >>"$OUT/$log" 2>&1
	rc=$?
	echo "$name rc=$rc cap=${t}s took=$(($(date +%s) - t0))s" | tee -a "$OUT/steps.txt"
	pack
}
for f in bin/web bin/webgpu.test; do
	[ -x "$f" ] || { echo "missing $f: build it here first (dev/gpucall/README.md)" | tee -a "$OUT/steps.txt"; exit 2; }
done
{
	date -u +%FT%TZ
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
} >"$OUT/device.txt" 2>&1
export PITCHTANK_REQUIRE_NVRTC=1

# 1. The server end to end. Its runs use the server's own cubin cache.
step e2e 330 e2e.log env PITCHTANK_GPU_E2E=1 PITCHTANK_WEB_BIN=./bin/web \
	./bin/webgpu.test -test.run '^TestGPUServerRuns$' -test.v -test.timeout 320s

# 2. Ladder rungs, then fused. --max-time is what is left minus a margin, at
# most 90s, so bench ends on its own with a document before `timeout`.
bench() { # bench NAME PROBLEM VARIANT
	local mt=$(($(left) - 15))
	[ "$mt" -gt 90 ] && mt=90
	step "$1" 100 bench.log ./bin/web bench --problem "$2" --variant "$3" --baseline baseline \
		--suite benchmarks --device 0 --cache-dir "$C" --max-time "${mt}s" --json "$R/$1.json"
}
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

# Summary: one line per bench document, then the full Markdown reports.
{
	echo "# Final device call, $(date -u +%FT%TZ), $(($(date +%s) - START))s"
	echo
	echo '```'
	cat "$OUT/steps.txt"
	echo '```'
	echo
	grep -E -- '--- (PASS|FAIL|SKIP)|^\s+gpu_e2e_test.go:[0-9]+: \((a|b|c|d|e|f)\)|healthz|total ' "$OUT/e2e.log" | cut -c1-400
	echo
	echo "| step | variant | baseline | status | geomean speedup | geomean us (variant / baseline) | faster / slower / same shapes |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	for j in "$R"/g_*.json "$R"/d_*.json; do
		[ -f "$j" ] || continue
		python3 - "$j" <<'PY'
import json, os, sys
p = sys.argv[1]
name = os.path.basename(p)[:-5]
try:
    d = json.load(open(p))
    s = d.get("summary") or {}
    g = s.get("geomean_speedup")
    v, b = s.get("geomean_median_ns") or 0, s.get("geomean_baseline_median_ns") or 0
    vd = s.get("verdicts") or {}
    print("| %s | %s | %s | %s | %s | %.1f / %.1f | %s / %s / %s |" % (
        name, (d.get("variant") or {}).get("spec", "?"), (d.get("baseline") or {}).get("spec", "?"),
        d.get("status"), "n/a" if g is None else "%.4f" % g, v / 1e3, b / 1e3,
        vd.get("faster", "?"), vd.get("slower", "?"), vd.get("no_clear_difference", vd.get("same", "?"))))
except Exception as e:
    print("| %s | unreadable: %s | | | | | |" % (name, e))
PY
	done
	echo
	for j in "$R"/g_*.json "$R"/d_*.json; do
		[ -f "$j" ] || continue
		echo "## $(basename "$j")"
		./bin/web bench --report "$j" 2>&1
		echo
	done
} >"$OUT/summary.md" 2>&1
pack
cat "$OUT/summary.md" | head -60
echo "done in $(($(date +%s) - START))s"
