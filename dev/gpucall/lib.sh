#!/usr/bin/env bash
# Shared by the device-call scripts of dev/gpucall (sourced, not run):
# results folder, budgeted steps, bench runs and the summary. The caller
# sets OUT, TOTAL and START first.
R=/tmp/pt-final
rm -rf "$R"
mkdir -p "$R"
C=/tmp/pt-cubin-cache
left() { echo $((TOTAL - ($(date +%s) - START))); }
# engine_env: the card and driver into $OUT/device.txt, and the engine tests'
# settings: NVRTC and the GPU required, builds cached in a folder shared by the steps and
# by later calls while the machine stays warm (NVRTC 13 takes ~20 s per module).
engine_env() {
	{
		date -u +%FT%TZ
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
	} >"$OUT/device.txt" 2>&1
	export PITCHTANK_REQUIRE_NVRTC=1
	# A device that does not open fails the engine's device tests here
	# instead of skipping them all (a run of skips exits 0).
	export PITCHTANK_REQUIRE_GPU=1
	export PITCHTANK_TEST_CACHE=/tmp/pt-test-cache
	mkdir -p "$PITCHTANK_TEST_CACHE"
}
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
# bench NAME PROBLEM VARIANT [BASELINE]: --max-time is what is left minus a margin, at
# most BENCH_MAX (default 90) seconds, so bench ends on its own with a document before
# `timeout`. The group GEMM's baseline takes longer: give it BENCH_MAX=150.
# WEB names another build of bin/web (an experiment's, see dual.sh expbuild);
# BENCH_SHAPES a shapes file to bench instead of the problem's benchmark suite.
bench() {
	local max=${BENCH_MAX:-90}
	local mt=$(($(left) - 15))
	[ "$mt" -gt "$max" ] && mt=$max
	local what=(--suite benchmarks)
	[ -n "${BENCH_SHAPES:-}" ] && what=(--shapes "$BENCH_SHAPES")
	step "$1" $((max + 10)) bench.log "${WEB:-./bin/web}" bench --problem "$2" --variant "$3" --baseline "${4:-baseline}" \
		"${what[@]}" --device 0 --cache-dir "$C" --max-time "${mt}s" --json "$R/$1.json"
}

# summarize: one line per bench document, then the full Markdown reports,
# into $OUT/summary.md.
summarize() {
# Summary: one line per bench document, then the full Markdown reports.
{
	echo "# ${TITLE:-Device call}, $(date -u +%FT%TZ), $(($(date +%s) - START))s"
	echo
	echo '```'
	cat "$OUT/steps.txt"
	echo '```'
	echo
	grep -E -- '--- (PASS|FAIL|SKIP)|^\s+gpu_e2e_test.go:[0-9]+: \((a|b|c|d|e|f)\)|healthz|total ' "$OUT/e2e.log" 2>/dev/null | cut -c1-400
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
}
