#!/bin/bash
# Device call: raw bytes straight to registers (WG_DIRECT=1) against the
# shared-memory path (gf), edges + timing, ncu on the direct variant.
O=${OUT:-/tmp/out}
mkdir -p $O /tmp/fkout
FK_BUDGET=240 bash dev/fastkern/wg_call1.sh gf gd gd4 gd2 > $O/call1.txt 2>&1
grep -E "passed|HGMMA" $O/call1.txt
for v in gf gd gd4 gd2; do echo "$v: $(grep -h "Used\|spill\|C75" /tmp/fkout/build_$v.txt | grep -v '32 registers\|0 bytes spill stores, 0 bytes spill loads' | tr -s ' ' | tr '\n' ' ' | cut -c1-250)"; done
FK_TIME_ANYWAY=1 FK_TIMEOUT=60 HARNESS_ARGS="--case bench1_8x_N4096_K7168" bash dev/fastkern/run.sh /tmp/fkout gdx12 > /dev/null 2>&1; grep ^TIME /tmp/fkout/run_gdx12.txt
timeout 120 /usr/local/cuda/bin/ncu -k wg_group_gemm -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section MemoryWorkloadAnalysis /tmp/fk_gd --check-only --case bench1_8x_N4096_K7168 > $O/ncu_gd.txt 2>&1
grep -E "Duration|Throughput|Issue Slots|Executed Ipc A|No Eligible|Shared" $O/ncu_gd.txt | head -20
