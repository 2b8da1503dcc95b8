#!/bin/bash
# Everything docs/BENCHMARKS.md quotes, in one device call. Build first, here:
#   CGO_ENABLED=1 go build -ldflags="-s -w" -o bin/bench-web ./cmd/web
# then on the GPU machine, from the repository root, with bin/ carried: bash bench/device.sh
# Results land in $OUT/results.tgz (one archive: the device tool returns at most 8 files).
set -u
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to a folder for the results}"
W=./bin/bench-web
R=/tmp/res; rm -rf $R; mkdir -p $R
C=/tmp/cubin-cache
t() { date +%s.%N; }
log() { tar czf $OUT/results.tgz -C $R . 2>/dev/null; echo; echo "=== $*"; }
log "device"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv
python3 -c 'import torch;print("torch",torch.__version__,torch.version.cuda)'
for p in nvfp4_group_gemm nvfp4_dual_gemm; do
  log "tests $p (GPU ref vs CPU ref, baseline correctness, A/A)"
  s=$(t); $W bench --problem $p --variant baseline --suite tests --device 0 --cache-dir $C --max-time 60s --json $R/tests-$p.json > $R/tests-$p.jsonl; echo "exit $? wall $(awk "BEGIN{print $(t)-$s}")"
done
for p in nvfp4_group_gemm nvfp4_dual_gemm; do
  log "A/A benchmarks $p"
  s=$(t); $W bench --problem $p --aa --suite benchmarks --device 0 --cache-dir $C --max-time 100s --json $R/aa-$p.json > $R/aa-$p.jsonl; echo "exit $? wall $(awk "BEGIN{print $(t)-$s}")"
done
log "peers"
s=$(t); PYTHONUNBUFFERED=1 python3 bench/peer/peer.py --out $R/peer.json; echo "exit $? wall $(awk "BEGIN{print $(t)-$s}")"
log "cold compile-and-bench: baseline?stages=2 vs baseline, group GEMM benchmarks, empty cubin cache"
rm -rf /tmp/cold-cache
s=$(t); $W bench --problem nvfp4_group_gemm --variant 'baseline?stages=2' --suite benchmarks --cache-dir /tmp/cold-cache --max-time 60s --json $R/cold.json > $R/cold.jsonl; echo "exit $? wall_cold $(awk "BEGIN{print $(t)-$s}")"
log "warm: the same command again, cubin cache filled"
s=$(t); $W bench --problem nvfp4_group_gemm --variant 'baseline?stages=2' --suite benchmarks --cache-dir /tmp/cold-cache --max-time 60s --json $R/warm.json > $R/warm.jsonl; echo "exit $? wall_warm $(awk "BEGIN{print $(t)-$s}")"
log "edge shapes"
echo '[{"m":[1],"n":64,"k":128},{"m":[7,33,1],"n":64,"k":128},{"m":[1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31],"n":64,"k":128},{"m":[129],"n":64,"k":256}]' > $R/edge-group-shapes.json
echo '[{"m":[1],"n":64,"k":128},{"m":[33],"n":64,"k":128},{"m":[7],"n":128,"k":256}]' > $R/edge-dual-shapes.json
$W bench --problem nvfp4_group_gemm --variant baseline --shapes $R/edge-group-shapes.json --cache-dir $C --max-time 30s --json $R/edge-group.json > $R/edge-group.jsonl; echo "exit $?"
$W bench --problem nvfp4_dual_gemm --variant baseline --shapes $R/edge-dual-shapes.json --cache-dir $C --max-time 30s --json $R/edge-dual.json > $R/edge-dual.jsonl; echo "exit $?"
echo '[{"m":[8],"n":100,"k":256}]' > $R/n100.json; echo '[{"m":[8],"n":64,"k":96}]' > $R/k96.json
$W bench --problem nvfp4_group_gemm --variant baseline --shapes $R/n100.json > /dev/null; echo "N=100 exit $?"
$W bench --problem nvfp4_dual_gemm --variant baseline --shapes $R/k96.json > /dev/null; echo "K=96 exit $?"
log "variant knob sample (grouped launch) vs baseline, group GEMM benchmarks"
$W bench --problem nvfp4_group_gemm --variant 'baseline?launch=grouped' --suite benchmarks --cache-dir $C --max-time 50s --json $R/grouped.json > $R/grouped.jsonl; echo "exit $?"
date -u
tar czf $OUT/results.tgz -C $R .
