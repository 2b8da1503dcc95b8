#!/usr/bin/env bash
# Device calls of issue 5's wgmma family. From the repository root on the GPU
# machine, with bin/ carried (bin/web, bin/engine.test, built here):
#   bash dev/gpucall/wgmma.sh check [TOTAL]   # engine device tests: every wgmma combination on every
#                                             # test and benchmark shape, the resource reports, every new
#                                             # baseline combination (swap_ab, tma, auto tiles) on the test
#                                             # and edge shapes, the sampled variants on every shape, the
#                                             # edge cases
#   bash dev/gpucall/wgmma.sh baseknobs [TOTAL] # web bench of the baseline's swap_ab, tma and auto tiles
#   bash dev/gpucall/wgmma.sh swapfix [TOTAL]  # bench of baseline?swap_ab=true, then TestBaselineNewKnobs
#   bash dev/gpucall/wgmma.sh newknobs [TOTAL] # TestBaselineNewKnobs alone (swap_ab, tma, auto tiles)
#   bash dev/gpucall/wgmma.sh every [TOTAL]   # every combination of every family on the test shapes
#                                             # (PITCHTANK_FAMILIES=fused,wgmma limits the families)
#   bash dev/gpucall/wgmma.sh bench [TOTAL]   # web bench of the wgmma rungs paired with baseline (and
#                                             # wgmma with fused), fused again, the PyTorch peers
# TOTAL (default 540 s) caps the whole call; each step is capped by what is left.
# Output: $OUT/steps.txt, $OUT/device.txt, $OUT/*.log, $OUT/summary.md, $OUT/results.tar.gz.
set -u
: "${OUT:?set OUT to a folder for the results}"
cd "$(dirname "$0")/../.."
MODE=${1:?check or bench}
TOTAL=${2:-540}
START=$(date +%s)
. dev/gpucall/lib.sh
engine_env
case "$MODE" in
check)
	step wgmma 120 engine.log ./bin/engine.test -test.v -test.timeout 600s \
		-test.run '^(TestWgmmaFamily|TestBestVariantResources)$'
	step newknobs 300 newknobs.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestBaselineNewKnobs$'
	step sample 150 sample.log ./bin/engine.test -test.v -test.timeout 600s \
		-test.run '^(TestSampleSpecsResolve|TestVariantsCorrectAllShapes|TestEdgeCases)$'
	grep -E -- '^(---|ok|FAIL|PASS)|shapes correct|WRONG|build:|registers|panic' "$OUT"/engine.log "$OUT"/newknobs.log "$OUT"/sample.log 2>/dev/null |
		grep -v ' 13/13 shapes correct\| 10/10 shapes correct' | cut -c1-300 >"$OUT/summary.md"
	grep -c 'shapes correct' "$OUT"/*.log >>"$OUT/summary.md"
	;;
newknobs)
	step newknobs 560 newknobs.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestBaselineNewKnobs$'
	grep -E -- '^(---|ok|FAIL|PASS)|WRONG|build:|panic|distinct modules' "$OUT/newknobs.log" | cut -c1-300 >"$OUT/summary.md"
	grep -c 'shapes correct' "$OUT/newknobs.log" >>"$OUT/summary.md"
	;;
every)
	step every 520 every.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestEveryCombinationOnTestShapes$'
	grep -E -- '^(---|ok|FAIL|PASS)|WRONG|build:|panic' "$OUT/every.log" | cut -c1-300 >"$OUT/summary.md"
	grep -c 'shapes correct' "$OUT/every.log" >>"$OUT/summary.md"
	;;
bench)
	bench g_wgmma nvfp4_group_gemm wgmma
	bench g_wgmma_vs_fused nvfp4_group_gemm wgmma fused
	bench g_wgmma_tm64 nvfp4_group_gemm 'wgmma?tile_m=64'
	bench g_wgmma_fit nvfp4_group_gemm 'wgmma?tail_width=fit'
	bench g_fused nvfp4_group_gemm fused
	step peer 120 peer.log env PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out "$R/peer.json"
	TITLE="wgmma bench call" summarize
	;;
swapfix)
	bench g_swap nvfp4_group_gemm 'baseline?swap_ab=true'
	step newknobs 420 newknobs.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestBaselineNewKnobs$'
	TITLE="swap_ab call" summarize
	grep -E -- '^(---|ok|FAIL|PASS)|WRONG|build:|panic|distinct modules' "$OUT/newknobs.log" | cut -c1-300 >>"$OUT/summary.md"
	grep -c 'shapes correct' "$OUT/newknobs.log" >>"$OUT/summary.md"
	;;
baseknobs)
	bench g_auto nvfp4_group_gemm 'baseline?tile_m=auto&tile_n=auto'
	bench g_swap nvfp4_group_gemm 'baseline?swap_ab=true'
	bench g_tma nvfp4_group_gemm 'baseline?epilogue=tma'
	bench d_auto nvfp4_dual_gemm 'baseline?tile_m=auto&tile_n=auto'
	bench g_auto_grouped nvfp4_group_gemm 'baseline?tile_m=auto&tile_n=auto&launch=grouped' 'baseline?launch=grouped'
	TITLE="baseline knobs bench call" summarize
	;;
*)
	echo "usage: wgmma.sh check|bench [TOTAL]" >&2
	exit 2
	;;
esac
pack
head -80 "$OUT/summary.md"
echo "done in $(($(date +%s) - START))s"
