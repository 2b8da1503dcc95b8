#!/bin/bash
# Build the harness for several tile variants with nvcc (in parallel) and run
# each: correctness on edge and benchmark shapes, then cold-L2 timings.
# Usage on the GPU machine, from the repo root:
#   bash dev/fastkern/run.sh [OUTDIR] [variant ...]
# Variants are named below; default: all of them.
set -u
OUTDIR=${1:-/tmp/fk}
shift || true
mkdir -p "$OUTDIR"
declare -A V
# call 1 variants (16-byte layout, FG_HALF=0)
V[v1]="-DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=2 -DSTAGES=4 -DMIN_BLOCKS=1"
V[v2]="-DWARP_N=64 -DWARP_M=32 -DWARPS_N=2 -DWARPS_M=2 -DSTAGES=4 -DMIN_BLOCKS=2"
V[v3]="-DWARP_N=32 -DWARP_M=64 -DWARPS_N=8 -DWARPS_M=1 -DSTAGES=4 -DMIN_BLOCKS=1"
V[v4]="-DWARP_N=64 -DWARP_M=64 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=4 -DMIN_BLOCKS=1"
V[v5]="-DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=4 -DMIN_BLOCKS=2"
# call 2 variants (branch-free stage bodies; h* use the half-split layout)
V[w1]="-DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=4 -DMIN_BLOCKS=2"
V[w3]="-DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=2 -DSTAGES=4 -DMIN_BLOCKS=1"
V[h1]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=2 -DMIN_BLOCKS=3"
V[h2]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=2 -DWARPS_M=2 -DSTAGES=3 -DMIN_BLOCKS=3"
V[h3]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=2 -DWARPS_M=2 -DSTAGES=3 -DMIN_BLOCKS=4"
V[h4]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=2 -DSTAGES=3 -DMIN_BLOCKS=2"
V[h5]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=4 -DMIN_BLOCKS=2"
V[h6]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=48 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=2 -DMIN_BLOCKS=3"
V[h7]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=64 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=3 -DMIN_BLOCKS=2"
# dual GEMM variants (harness_dual.cu; WARP_N counts B1 + B2 rows)
V[d1]="-DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=4 -DMIN_BLOCKS=2"
V[d2]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=2 -DMIN_BLOCKS=3"
V[d3]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=32 -DWARPS_N=2 -DWARPS_M=2 -DSTAGES=3 -DMIN_BLOCKS=3"
V[d4]="-DFG_HALF=1 -DWARP_N=64 -DWARP_M=64 -DWARPS_N=4 -DWARPS_M=1 -DSTAGES=3 -DMIN_BLOCKS=2"
# warp-specialized wgmma kernel (wg_group_gemm.cu via harness.cu -DFK_WG)
V[g1]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=1"
V[g1i]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_LAYOUT=1"
V[g2]="-DFK_WG -DWG_TM=64 -DWG_CONS=2 -DSTAGES=4 -DWG_RS=4"
V[g3]="-DFK_WG -DWG_TM=64 -DWG_CONS=2 -DWG_MB=2 -DSTAGES=4 -DWG_RS=3"
V[g4]="-DFK_WG -DWG_TM=128 -DWG_CONS=3 -DSTAGES=2 -DWG_RS=3"
V[g0]="-DFK_WG -DFK_WG_OLD -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4"
V[gf]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0"
V[g14]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=2 -DWG_RS=4"
V[gx1]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0 -DWG_EXP=1"
V[gx2]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0 -DWG_EXP=2"
V[gx12]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0 -DWG_EXP=3"
V[gx4]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0 -DWG_EXP=4"
V[gx8]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0 -DWG_EXP=8"
V[g4r]="-DFK_WG -DWG_TM=128 -DWG_CONS=3 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=152"
V[g4r8]="-DFK_WG -DWG_TM=128 -DWG_CONS=3 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=152 -DWG_EXP=8"
V[gf2]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=2 -DWG_RS=3 -DWG_FIT=0"
V[gs]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=224"
V[gs3]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=224 -DWG_EXP=3"
V[gs8]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=224 -DWG_EXP=8"
V[gs1]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DWG_MB=2 -DSTAGES=2 -DWG_RS=3 -DWG_CREGS=224 -DWG_EXP=1"
V[g5]="-DFK_WG -DWG_TM=32 -DWG_CONS=2 -DSTAGES=4 -DWG_RS=4"
# the prmt decode (kernel-notes step 9); step 10's two producer warpgroups
# (gp2*, WG_PROD=2) were measured in cb826ad and taken out again
V[gfd]="-DFK_WG -DWG_TM=128 -DWG_CONS=2 -DSTAGES=3 -DWG_RS=4 -DWG_FIT=0 -DWG_DEC=1"
NAMES=${@:-v1 v2 v3 v4 v5}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
for n in $NAMES; do
  ( $NVCC -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v ${V[$n]} \
      -o /tmp/fk_$n dev/fastkern/$( [ "${n:0:1}" = d ] && echo harness_dual.cu || echo harness.cu ) > "$OUTDIR/build_$n.txt" 2>&1 \
    || echo "BUILD FAILED $n" >> "$OUTDIR/build_$n.txt" ) &
done
wait
for n in $NAMES; do
  echo "=== $n: ${V[$n]}"
  grep -E "registers|spill|error|FAILED" "$OUTDIR/build_$n.txt" | grep -v "^$" | head -8
  if [ -x /tmp/fk_$n ]; then
    timeout ${FK_TIMEOUT:-90} /tmp/fk_$n ${HARNESS_ARGS:-} > "$OUTDIR/run_$n.txt" 2>&1
    echo "rc=$?"
    grep -E "^(device|FAIL|ALL|SOME)" "$OUTDIR/run_$n.txt"
  fi
done
