#!/bin/bash
# Device call for the warp-specialized wgmma kernel (wg_group_gemm.cu):
# build the g* variants and the fused w1 for comparison, check the edge
# shapes, time the ones that pass, SASS check for HGMMA.
# Usage on the GPU machine, from the repo root: bash dev/fastkern/wg_call1.sh [variant ...]
O=${OUT:-/tmp/out}
mkdir -p $O /tmp/fkout
VS=${@:-g1 g1i g1j g2 g3 g4 g5 w1}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
FK_TIMEOUT=30 HARNESS_ARGS="--check-only --edges" timeout 240 bash dev/fastkern/run.sh /tmp/fkout $VS 2>&1 | tee $O/edges.txt
PASS=""
for v in $VS; do grep -q "ALL PASS" /tmp/fkout/run_$v.txt 2>/dev/null && PASS="$PASS $v"; done
echo "passed edges:$PASS" | tee -a $O/edges.txt
for v in $PASS; do
  [ $SECONDS -gt ${FK_BUDGET:-330} ] && { echo "skip timing $v: call budget"; continue; }
  echo "=== timing $v"
  timeout 60 /tmp/fk_$v > /tmp/fkout/time_$v.txt 2>&1; echo "rc=$?"
  grep -E "^(FAIL|ALL|SOME|TIME)" /tmp/fkout/time_$v.txt | head -40
done 2>&1 | tee $O/timing.txt
for v in $VS; do
  [ -x /tmp/fk_$v ] && echo "$v HGMMA=$(/usr/local/cuda/bin/cuobjdump -sass /tmp/fk_$v | grep -c HGMMA) HMMA=$(/usr/local/cuda/bin/cuobjdump -sass /tmp/fk_$v | grep -c 'HMMA')"
done | tee $O/sass.txt
tar czf $O/fkout.tgz -C /tmp fkout 2>/dev/null
