#!/usr/bin/env bash
# Device calls of issue 10's submitted kernels. From the repository root on the
# GPU machine, with bin/ carried (built here, see README.md):
#   CGO_ENABLED=1 go build -o bin/web ./cmd/web
#   CGO_ENABLED=1 go test -c -o bin/engine.test ./internal/engine
#   CGO_ENABLED=1 go test -c -o bin/kernelcheck.test ./internal/kernelcheck
#   CGO_ENABLED=1 go test -c -o bin/kernels.test ./kernels
#   CGO_ENABLED=1 go test -c -o bin/gpu.test ./internal/gpu  (check runs it when present)
#
#   bash dev/gpucall/kernels.sh check [TOTAL]  # engine device tests of submissions (the examples as
#                                              # CUDA in every launch mode, PTX through the driver JIT,
#                                              # a cubin as is, a wrong-arch cubin refused, a buggy
#                                              # kernel caught); the Blackwell compile test (every family
#                                              # default and example for sm_90a/sm_100a/sm_120a, figures
#                                              # in $OUT/compile.jsonl); the fused families again, whose
#                                              # helpers moved into cuda/pt_common.cuh; internal/gpu's own
#                                              # device tests (bin/gpu.test), which no other call ran
#   bash dev/gpucall/kernels.sh bench [TOTAL]  # web bench --kernel of the examples paired with baseline;
#                                              # with nvcc on the machine, a PTX and a cubin of the clear
#                                              # example built by nvcc, benched the same way
#   bash dev/gpucall/kernels.sh server [TOTAL] # TestGPUServerKernels (cmd/web/gpu_kernels_e2e_test.go),
#                                              # needs bin/webgpu.test too:
#                                              #   CGO_ENABLED=1 go test -c -o bin/webgpu.test ./cmd/web
#                                              # the built `web serve --devices 0` on an empty database;
#                                              # through the API an admin makes a pitching round (group
#                                              # GEMM, tests, vs baseline), uploads the clear example as
#                                              # .cu, as PTX and as a cubin built by nvcc (with nvcc on
#                                              # the machine), and a copy with a one-line bug, each to its
#                                              # own pitch, and runs each on GPU 0: the three succeed and
#                                              # are correct, the bug ends incorrect naming shape and
#                                              # check. Capped at 400 s (or TOTAL if less); test log in
#                                              # $OUT/server.log, its step lines (run id, status, geomean
#                                              # speedup, wall time) in $OUT/summary.md
# TOTAL (default 540 s) caps the whole call. Output: $OUT/steps.txt, $OUT/*.log, $OUT/summary.md,
# $OUT/results.tar.gz.
set -u
: "${OUT:?set OUT to a folder for the results}"
cd "$(dirname "$0")/../.."
MODE=${1:?check, bench or server}
TOTAL=${2:-540}
START=$(date +%s)
. dev/gpucall/lib.sh
engine_env
# kbench NAME DIR SPEC: web bench of a submission folder against baseline.
kbench() {
	local mt=$(($(left) - 15))
	[ "$mt" -gt 90 ] && mt=90
	step "$1" 100 bench.log ./bin/web bench --kernel "$2" --variant "$3" --baseline baseline \
		--suite benchmarks --device 0 --cache-dir "$C" --max-time "${mt}s" --json "$R/$1.json"
}
case "$MODE" in
check)
	step submitted 240 engine.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^TestSubmitted'
	(cd internal/kernelcheck && PITCHTANK_COMPILE_RECORD="$OUT/compile.jsonl" \
		step blackwell 200 compile.log ../../bin/kernelcheck.test -test.v -test.timeout 600s -test.run '^(TestCompileBlackwellAndBeyond|TestBinaryArchsOfNVRTCCubins)$')
	step header 150 header.log ./bin/engine.test -test.v -test.timeout 600s -test.run '^(TestVariantsCorrectAllShapes)$'
	# The driver layer's device tests, from their package folder (testdata/);
	# engine_env's PITCHTANK_REQUIRE_GPU=1 makes a GPU that does not open
	# fail them rather than skip them.
	if [ -x bin/gpu.test ]; then
		(cd internal/gpu && step gpu 120 gpu.log ../../bin/gpu.test -test.v -test.count=1 -test.timeout 110s)
	else
		echo "SKIP gpu: bin/gpu.test not built (CGO_ENABLED=1 go test -c -o bin/gpu.test ./internal/gpu)" | tee -a "$OUT/steps.txt"
	fi
	grep -E -- '^(---|ok|FAIL|PASS)|shapes correct|WRONG|refused|build:|panic|sm_1[02]0a' "$OUT"/engine.log "$OUT"/compile.log "$OUT"/header.log "$OUT"/gpu.log 2>/dev/null |
		cut -c1-300 >"$OUT/summary.md"
	;;
bench)
	kbench g_clear examples/kernels/clear kernel
	kbench g_kbaseline examples/kernels/baseline kernel
	kbench g_kbaseline_s3 examples/kernels/baseline 'kernel?stages=3'
	if command -v nvcc >/dev/null; then
		sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
		for kind in ptx cubin; do
			d=/tmp/pt-sub-$kind
			rm -rf "$d" && mkdir -p "$d"
			if [ $kind = ptx ]; then
				nvcc -ptx -arch=compute_80 -Iexamples/kernels/clear -Ikernels/cuda -o "$d/clear_gemm.ptx" examples/kernels/clear/clear_gemm.cu
			else
				nvcc -cubin -arch=sm_$sm -Ikernels/cuda -o "$d/clear_gemm.cubin" examples/kernels/clear/clear_gemm.cu
			fi
			python3 - "$d" "$kind" <<'PY'
import json, sys
d, kind = sys.argv[1], sys.argv[2]
m = json.load(open("examples/kernels/clear/manifest.json"))
m["kind"], m["source"] = kind, "clear_gemm." + kind
m["knobs"] = []  # built with the default STAGES
json.dump(m, open(d + "/manifest.json", "w"), indent=2)
PY
			./bin/web kernel check "$d" >>"$OUT/check.log" 2>&1
			kbench g_clear_$kind "$d" kernel
		done
	else
		echo "no nvcc here: PTX and cubin benches skipped" | tee -a "$OUT/steps.txt"
	fi
	TITLE="submitted kernels bench call" summarize
	;;
server)
	for f in bin/web bin/webgpu.test; do
		[ -x "$f" ] || { echo "missing $f: build it here first (see the header)" | tee -a "$OUT/steps.txt"; exit 2; }
	done
	# The PTX and cubin parts build with nvcc; CUDA installs put it outside PATH.
	command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"; }
	command -v nvcc >/dev/null || echo "no nvcc here: the test skips its PTX and cubin parts" | tee -a "$OUT/steps.txt"
	step server 400 server.log env PITCHTANK_GPU_E2E=1 PITCHTANK_WEB_BIN=./bin/web \
		./bin/webgpu.test -test.run '^TestGPUServerKernels$' -test.v -test.timeout 390s
	{
		echo "# submitted kernels through the server, $(date -u +%FT%TZ), $(($(date +%s) - START))s"
		echo
		echo '```'
		cat "$OUT/steps.txt"
		echo '```'
		echo
		echo '```'
		grep -E -- '--- (PASS|FAIL|SKIP)|gpu_kernels_e2e_test.go:[0-9]+: (\([a-f]\)|server |no nvcc|total )' "$OUT/server.log" | cut -c1-600
		echo '```'
	} >"$OUT/summary.md" 2>&1
	;;
*)
	echo "usage: kernels.sh check|bench|server [TOTAL]" >&2
	exit 2
	;;
esac
pack
head -80 "$OUT/summary.md"
echo "done in $(($(date +%s) - START))s"
