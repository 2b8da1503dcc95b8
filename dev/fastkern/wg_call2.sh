#!/bin/bash
# Device call 2 for wg_group_gemm.cu: per-tile wgmma width + pipelined
# consumers (nvcc harness), then the app's own path (engine test: NVRTC
# build for sm_90a, plan, run) over every wgmma combination and shape.
O=${OUT:-/tmp/out}
mkdir -p $O /tmp/fkout
VS=${WG_VARIANTS:-g1 g1i g2 g3}
FK_BUDGET=${FK_BUDGET:-200} bash dev/fastkern/wg_call1.sh $VS > $O/call1.txt 2>&1
grep -E "passed|^=== |HGMMA" $O/call1.txt
grep -ih "wgmma\|warning" /tmp/fkout/build_*.txt | sort | uniq -c | head -20
echo "--- engine TestWgmmaFamily"
timeout ${ENGINE_TIMEOUT:-200} ./bin/engine.test -test.run 'TestWgmmaFamily' -test.v > $O/engine.txt 2>&1; echo "rc=$?"
grep -E "^(---|===|ok|FAIL|PASS)|wgmma" $O/engine.txt | head -40
tar czf $O/fkout.tgz -C /tmp fkout 2>/dev/null
