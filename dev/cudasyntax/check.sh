#!/usr/bin/env bash
# A clang syntax pass over dev/wgprobe/probe.cu, device and host code, which
# nvcc builds only on the GPU machine and no CI step compiled before. The
# GEMMs' own sources need no such pass: the exhaustive compile check
# (kernels' TestCompileDeclaredSpace) already puts each wgmma module's
# sm_90a path through NVRTC's front end to PTX. clang's CUDA front end with
# the stand-in headers here checks the C++ and the inline asm's operand
# lists, not the PTX: a wrong instruction still surfaces only under ptxas.
# It is cheap, and a probe that does not parse no longer costs a device call
# to find out.
#   bash dev/cudasyntax/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CLANG=${CLANG:-$(command -v clang-14 || command -v clang || true)}
if [ -z "$CLANG" ]; then
	echo "cudasyntax: no clang (apt-get install clang-14)" >&2
	exit 1
fi
here=dev/cudasyntax
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
# Device: the sm_90a feature macro on, as nvcc defines it for sm_90a (clang-14
# knows sm_80 at most, so the arch is sm_80 with the macro set).
run "dev/wgprobe/probe.cu (device)" "$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib \
	-fsyntax-only -include "$here/device.h" -D__CUDA_ARCH_FEAT_SM90_ALL -D__CUDACC_RTC__ -Wno-unknown-cuda-version \
	dev/wgprobe/probe.cu
run "dev/wgprobe/probe.cu (host)" "$CLANG" -x cuda --cuda-host-only -nocudainc -nocudalib -fsyntax-only -std=c++17 \
	-include "$here/host.h" -I "$here/include" -Wno-unknown-cuda-version dev/wgprobe/probe.cu
exit $fail
