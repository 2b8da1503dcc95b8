#!/bin/bash
# Device call 1: build all variants, check + time, sanitizer on edges, SASS
# histogram and an ncu look at bench1 for v1.
O=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
cat $O/gpu.txt
bash dev/fastkern/run.sh /tmp/fkout v1 v2 v3 v4 v5 2>&1 | tee $O/summary.txt
tar czf $O/fkout.tgz -C /tmp fkout 2>/dev/null
if [ -x /tmp/fk_v1 ]; then
  /usr/local/cuda/bin/cuobjdump -sass /tmp/fk_v1 | awk '/Function : fast_group_gemm/{f=1} f' > /tmp/v1.sass
  echo "--- v1 SASS opcode histogram (fast_group_gemm)"
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+[@!P0-9 ]*[A-Z][A-Z0-9_.]+' /tmp/v1.sass | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25
  gzip -c /tmp/v1.sass > $O/v1.sass.gz
  echo "--- memcheck v1 edges"
  timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck /tmp/fk_v1 --check-only --edges 2>&1 | tail -4
  echo "--- ncu v1 bench1"
  timeout 90 /usr/local/cuda/bin/ncu -k fast_group_gemm -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy /tmp/fk_v1 --check-only --case bench1_8x_N4096_K7168 > $O/ncu_v1.txt 2>&1
  grep -E "Duration|Throughput|Pipe|Issue|Stall|Occupancy|Registers|Warp Cycles|Executed Ipc|Active Warps|No Eligible|One or More" $O/ncu_v1.txt | head -40
fi
