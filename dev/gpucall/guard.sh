#!/usr/bin/env bash
# Device call for issue 9: the timing guard on the GPU machine.
#   bash dev/gpucall/guard.sh [TOTAL_SECONDS] [all | a comma list of honest,cheats,aa]
# lite: a quick subset of honest.
# honest: every family's default and the knobs that change how a run
#   touches memory (graph, streams, grouped, split-K workspace, swap_ab,
#   the TMA epilogue) pass the guard on the test shapes (the content
#   changes are exact for all of them);
# cheats: every test-only cheat mode on both problems' benchmark shapes
#   (each must end "incorrect", named), and the replay cheat unguarded (it
#   passes as a large speedup, which is what the guard is for);
# aa: the A/A test on both problems' benchmark shapes, guarded and
#   unguarded (every interval in [0.99, 1.01]; the wall-time cost).
# Needs bin/web (CGO_ENABLED=1 go build -o bin/web ./cmd/web) carried along.
set -u
cd "$(dirname "$0")/../.."
TOTAL=${1:-560}
WHAT=${2:-all}
START=$(date +%s)
TITLE="Timing guard (issue 9), $WHAT"
# shellcheck source=lib.sh
source dev/gpucall/lib.sh
nvidia-smi >"$OUT/device.txt" 2>&1
export PITCHTANK_TEST_KERNELS=1

# gb NAME PROBLEM SUITE VARIANT [web bench flags...]
gb() {
	local name=$1 p=$2 suite=$3 v=$4
	shift 4
	local mt=$(($(left) - 15))
	[ "$mt" -gt 150 ] && mt=150
	step "$name" 160 bench.log ./bin/web bench --problem "$p" --variant "$v" --suite "$suite" --device 0 \
		--cache-dir "$C" --max-time "${mt}s" --json "$R/$name.json" "$@"
}

G=nvfp4_group_gemm
D=nvfp4_dual_gemm
want() { [ "$WHAT" = all ] || [[ ",$WHAT," == *",$1,"* ]]; }
if want honest; then
	for v in baseline fused wgmma 'baseline?launch=graph' 'baseline?launch=streams' 'baseline?launch=grouped' \
		'fused?split_k=2' 'baseline?swap_ab=true' 'baseline?epilogue=tma'; do
		gb "honest_group_$v" $G tests "$v"
	done
	for v in baseline fused 'baseline?launch=graph'; do
		gb "honest_dual_$v" $D tests "$v"
	done
fi
if want lite; then
	# The families whose code paths differ most, after a change to the guard.
	for v in baseline wgmma 'fused?split_k=2' 'baseline?launch=graph'; do
		gb "honest_group_$v" $G tests "$v"
	done
	gb honest_dual_fused $D tests fused
fi
if want aa; then
	gb aa_group_guarded $G benchmarks baseline --aa
	gb aa_group_unguarded $G benchmarks baseline --aa --unguarded
	gb aa_dual_guarded $D benchmarks baseline --aa
	gb aa_dual_unguarded $D benchmarks baseline --aa --unguarded
fi
if want cheats; then
	for m in replay sentinel keyed_content keyed_address detached alternate; do
		gb "cheat_group_$m" $G benchmarks "cheat?mode=$m"
		gb "cheat_dual_$m" $D benchmarks "cheat?mode=$m"
	done
	gb cheat_group_replay_unguarded $G benchmarks 'cheat?mode=replay' --unguarded
fi
# The summary exits 1 when a run did not end as expected (a cheat not
# caught, an honest run failed): said here and in the call's exit status.
rc=0
python3 dev/gpucall/guard_summary.py "$R" >"$OUT/summary.md" 2>&1 || rc=1
tail -1 "$OUT/summary.md"
cat "$OUT/steps.txt" >>"$OUT/summary.md"
pack
exit "$rc"
