#!/bin/bash
# Device call 2: build the branch-free kernel variants, check + time, geomean
# table, then sanitizer and ncu on the best variant.
O=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
bash dev/fastkern/run.sh /tmp/fkout w1 w3 h1 h2 h3 h4 h5 h6 h7 d1 d2 d3 d4 2>&1 | tee $O/summary.txt
python3 dev/fastkern/geomean.py /tmp/fkout | tee $O/geomean.txt
tar czf $O/fkout.tgz -C /tmp fkout 2>/dev/null
B=$(awk '$1=="BEST"{print $2}' $O/geomean.txt)
[ -n "$B" ] || exit 1
/usr/local/cuda/bin/cuobjdump -sass /tmp/fk_$B | awk '/Function : fast_group_gemm/{f=1} f' | gzip -c > $O/best.sass.gz
echo "--- memcheck + racecheck $B edges"
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck /tmp/fk_$B --check-only --edges 2>&1 | tail -2
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool racecheck /tmp/fk_$B --check-only --case edge_oddM_N192_K256 2>&1 | tail -2
echo "--- ncu $B bench1"
timeout 100 /usr/local/cuda/bin/ncu -k fast_group_gemm -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis /tmp/fk_$B --check-only --case bench1_8x_N4096_K7168 > $O/ncu_best.txt 2>&1
grep -E "Duration|Throughput|Issue Slots|Executed Ipc A|Warp Cycles Per Issued|Achieved Active|Registers|highest-utilized|stalled" $O/ncu_best.txt | head -30
