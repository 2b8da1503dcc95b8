#!/usr/bin/env bash
# Builds bin/web with a kernel experiment's defaults, here (not on the GPU
# machine): the tracked tree is copied to a temporary folder, each NAME=VALUE
# turns wg_group_gemm.cu's `#define NAME 0` into `#define NAME VALUE` (the
# defines of timing experiments, e.g. WG_STAMP, WG_FOLDX, that no knob sets),
# and the binary goes gzipped to bin/web_TAG.gz, which dual.sh unpacks
# (unpackexp); with EXPBUILD_TEST=1 the engine's device tests too, to
# bin/engine_TAG.test.gz (the family test over such a build).
#   [EXPBUILD_TEST=1] bash dev/gpucall/expbuild.sh TAG NAME=VALUE...
set -euo pipefail
tag=${1:?TAG}
shift
cd "$(dirname "$0")/../.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tracked files as they are in the working tree (uncommitted edits too).
git ls-files -z | xargs -0 cp --parents -t "$tmp"
for kv in "$@"; do
	name=${kv%%=*}
	grep -q "^#define $name 0\b" "$tmp/kernels/cuda/wg_group_gemm.cu" || {
		echo "expbuild: no '#define $name 0' in wg_group_gemm.cu" >&2
		exit 1
	}
	sed -i "s/^#define $name 0\b/#define $name ${kv#*=}/" "$tmp/kernels/cuda/wg_group_gemm.cu"
done
mkdir -p "$root/bin"
(cd "$tmp" && CGO_ENABLED=1 go build -ldflags="-s -w" -o "$tmp/web.bin" ./cmd/web)
gzip -9c "$tmp/web.bin" >"$root/bin/web_$tag.gz"
echo "bin/web_$tag.gz: $*"
if [ "${EXPBUILD_TEST:-0}" = 1 ]; then
	(cd "$tmp" && CGO_ENABLED=1 go test -ldflags="-s -w" -c -o "$tmp/engine.test" ./internal/engine)
	gzip -9c "$tmp/engine.test" >"$root/bin/engine_$tag.test.gz"
	echo "bin/engine_$tag.test.gz: $*"
fi
