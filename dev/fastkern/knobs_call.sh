#!/bin/bash
# knobs_call.sh - the one device call behind docs/KNOBS.md (split_k, split_k=auto,
# epilogue=tma of the fused group GEMM). Built on the dev machine first:
#   CGO_ENABLED=1 go test -c -o bin/kn_engine.test ./internal/engine
#   CGO_ENABLED=1 go test -c -o bin/kn_kernels.test ./kernels
#   CGO_ENABLED=1 go build -ldflags="-s -w" -o bin/kn_web ./cmd/web
# then run from the repo root on the GPU machine (carry the three binaries).
# Everything lands in one archive, $OUT/knobs.tgz (the device tool returns at
# most 8 files).
set -u
O=${OUT:-/tmp/knobs_out}
R=/tmp/knobs
rm -rf "$R" && mkdir -p "$R" "$O"
S="$O/summary.txt" # in $OUT at once: it comes back even if the call is cut short
date -u +"start %FT%TZ" | tee "$S"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee -a "$S"

# Correctness of every new variant on test, benchmark and edge shapes.
timeout 120 ./bin/kn_engine.test -test.v -test.run 'TestFusedSplitKAndTMA' >"$R/engine.txt" 2>&1
echo "engine test rc=$?" | tee -a "$S"
grep -E "shapes correct|WRONG|differs|split_k=auto on|^--- |^(ok|FAIL|PASS)" "$R/engine.txt" | tee -a "$S"

# The declared space compiled with this machine's NVRTC (13.x: sm_90a and the tma builds too).
timeout 70 ./bin/kn_kernels.test -test.v -test.run 'TestCompileDeclaredSpace' >"$R/compile.txt" 2>&1
echo "compile test rc=$?" | tee -a "$S"
grep -E "fused|^--- |skipped|modules" "$R/compile.txt" | grep -E "group|^--- |modules" | head -40 | tee -a "$S"

bench() { # name variant baseline seconds
  timeout $(($4 + 25)) ./bin/kn_web bench --problem nvfp4_group_gemm --variant "$2" --baseline "$3" \
    --suite benchmarks --device 0 --max-time "${4}s" --json "$R/$1.json" >"$R/$1.txt" 2>&1
  echo "bench $1 ($2 vs $3) rc=$?" | tee -a "$S"
  tail -12 "$R/$1.txt" | tee -a "$S"
}
bench auto_vs_fused 'fused?split_k=auto' fused 55
bench auto_vs_baseline 'fused?split_k=auto' baseline 45
bench tma_vs_fused 'fused?epilogue=tma' fused 35
bench split2_vs_fused 'fused?split_k=2' fused 25
bench split4_vs_fused 'fused?split_k=4' fused 25
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv | tee -a "$S"
date -u +"end %FT%TZ" | tee -a "$S"
cp "$S" "$R/" && tar czf "$O/knobs.tgz" -C "$R" .
