#!/usr/bin/env bash
# A clang syntax pass over the CUDA sources that CI's NVRTC 11.8 cannot
# see whole: dev/wgprobe/probe.cu (device and host code; nvcc builds it only
# on the GPU machine) and kernels/cuda/wg_group_gemm.cu as the sm_90a
# modules of the bests and of the measured knobs compile it (NVRTC 11.8
# predates sm_90a, so CI compiles the wgmma paths only as sm_90 stubs).
# clang's CUDA front end with the stand-in headers here checks the C++ and
# the inline asm's operand lists, not the PTX: a wrong instruction still
# surfaces only under ptxas. It is cheap, and a probe or kernel that does
# not parse no longer costs a device call to find out.
#   bash dev/cudasyntax/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CLANG=${CLANG:-$(command -v clang-14 || command -v clang || true)}
if [ -z "$CLANG" ]; then
	echo "cudasyntax: no clang (apt-get install clang-14)" >&2
	exit 1
fi
here=dev/cudasyntax
# device: the sm_90a feature macro on, as nvcc and NVRTC define it for sm_90a
# (clang-14 knows sm_80 at most, so the arch is sm_80 with the macro set).
dev=("$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib -fsyntax-only
	-include "$here/device.h" -D__CUDA_ARCH_FEAT_SM90_ALL -Wno-unknown-cuda-version)
host=("$CLANG" -x cuda --cuda-host-only -nocudainc -nocudalib -fsyntax-only -std=c++17
	-include "$here/host.h" -I "$here/include" -Wno-unknown-cuda-version)
fail=0
run() {
	local what=$1
	shift
	if ! out=$("$@" 2>&1) || grep -q "error:" <<<"$out"; then
		echo "cudasyntax: $what" >&2
		grep -E "error" <<<"$out" | head -20 >&2
		fail=1
	else
		echo "ok  $what"
	fi
}
run "dev/wgprobe/probe.cu (device)" "${dev[@]}" -D__CUDACC_RTC__ dev/wgprobe/probe.cu
run "dev/wgprobe/probe.cu (host)" "${host[@]}" dev/wgprobe/probe.cu
# The bests (dev/gpucall/dual.sh's bestvars: GW, DT) and the knob values
# measured beside them, on every benchmark shape.
G='wgmma?tile_n=auto&tail_width=fit64&schedule=autohybrid&decode=prmt&tokens=once&overlap=pdl&consumers=3&staging=stmatrix'
D='wgmma?tile_m=auto&tile_n=auto&schedule=auto&decode=prmt&tokens=once&overlap=pdl&epilogue=split'
sets=$(go run ./dev/cudasyntax "nvfp4_group_gemm=$G&token_copy=width" "nvfp4_group_gemm=$G&token_copy=width&token_wait=early" \
	"nvfp4_dual_gemm=$D" "nvfp4_dual_gemm=$D&token_wait=early")
while read -r defs; do
	# shellcheck disable=SC2086 # one word per define
	run "wg_group_gemm.cu $defs" "${dev[@]}" -D__CUDACC_RTC__ $defs kernels/cuda/wg_group_gemm.cu
done <<<"$sets"
exit $fail
