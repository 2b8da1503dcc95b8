#!/bin/bash
# Device call: where the wgmma kernel's time goes. Times gf (fixed width)
# against timing-only variants that skip the producer's token decode (gx1),
# the consumers' weight decode (gx2) or both (gx12), then ncu on gf bench1.
O=${OUT:-/tmp/out}
mkdir -p $O /tmp/fkout
FK_TIME_ANYWAY=1 FK_TIMEOUT=60 HARNESS_ARGS="" timeout 300 bash dev/fastkern/run.sh /tmp/fkout gf gx1 gx2 gx12 > $O/run.txt 2>&1
for v in gf gx1 gx2 gx12; do echo "=== timing $v"; grep ^TIME /tmp/fkout/run_$v.txt; done > $O/timing.txt
echo "--- ncu gf bench1"
timeout 150 /usr/local/cuda/bin/ncu -k wg_group_gemm -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section SchedulerStats --section InstructionStats --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg /tmp/fk_gf --check-only --case bench1_8x_N4096_K7168 > $O/ncu_gf.txt 2>&1
grep -E "Duration|Throughput|Issue Slots|Issued Ipc|Executed Ipc|Warp Cycles Per Issued|Active Warps|No Eligible|gmma|inst_executed|cycles_elapsed|Stall|stall" $O/ncu_gf.txt | head -40
/usr/local/cuda/bin/cuobjdump -sass /tmp/fk_gf | gzip -c > $O/gf.sass.gz
tar czf $O/fkout.tgz -C /tmp fkout 2>/dev/null
