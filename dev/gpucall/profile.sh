#!/usr/bin/env bash
# Device call: Nsight Compute on the wgmma dual GEMM through `web bench`
# (issue 11: where a full wave's time goes, and why stream-K gains nothing on
# bench3). From the repository root on the GPU machine, bin/ carried (bin/web):
#   bash dev/gpucall/profile.sh [TOTAL]
# Profiles one launch (after 10 warm-up launches) of wg_dual_gemm per case:
# bench1 (M256 N4096 K7168: 128 tiles, one wave) and bench3 (M256 N3072
# K4096: 96 tiles) with whole tiles, bench3 with stream-K. ncu holds the clocks
# at base, so its durations are longer than the benches'. Output: $OUT/ncu_*.txt,
# $OUT/summary.md.
set -u
: "${OUT:?set OUT to a folder for the results}"
cd "$(dirname "$0")/../.."
TOTAL=${1:-500}
START=$(date +%s)
. dev/gpucall/lib.sh
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$OUT/device.txt" 2>&1
"$NCU" --version >>"$OUT/device.txt" 2>&1
echo '[{"m":[256],"n":4096,"k":7168}]' >/tmp/b1.json
echo '[{"m":[256],"n":3072,"k":4096}]' >/tmp/b3.json
prof() {
	local name=$1 shapes=$2 variant=$3
	step "ncu_$name" 150 "ncu_$name.txt" "$NCU" -k regex:wg_dual_gemm --launch-skip 10 --launch-count 1 \
		--section SpeedOfLight --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
		--section LaunchStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_elapsed.max,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
		./bin/web bench --problem nvfp4_dual_gemm --aa --baseline "$variant" --shapes "$shapes" \
		--device 0 --cache-dir "$C" --max-time 140s --json "$R/prof_$name.json"
}
prof b1_tiles /tmp/b1.json wgmma
prof b3_tiles /tmp/b3.json wgmma
prof b3_streamk /tmp/b3.json 'wgmma?schedule=streamk'
{
	echo "# ncu on wg_dual_gemm, $(date -u +%FT%TZ)"
	cat "$OUT/steps.txt"
	for f in "$OUT"/ncu_*.txt; do
		echo "## $(basename "$f")"
		grep -E "Duration|SM Frequency|Elapsed Cycles|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Throughput|Issue Slots Busy|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|gmma|inst_executed|cycles_active|cycles_elapsed|wavefronts|Registers Per|Grid Size|Shared Memory Bandwidth|==ERR|==WARN|Error" "$f" | head -40
	done
} >"$OUT/summary.md"
pack
cat "$OUT/summary.md"
echo "done in $(($(date +%s) - START))s"
