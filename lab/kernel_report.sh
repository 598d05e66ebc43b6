#!/usr/bin/env bash
# Resource usage (ptxas -v) and load/store widths of vecadd's CUDA kernels for one arch,
# without a GPU. Needs nvcc, cuobjdump and nvdisasm on PATH (pip: nvidia-cuda-cuobjdump;
# triton ships nvdisasm). Usage: tools/kernel_report.sh [arch=90] [build dir with generated/]
set -euo pipefail
arch=${1:-90}
generated=$(ls -d "${2:-build}"/*/generated/include 2>/dev/null | head -1 || true)
[ -n "$generated" ] || generated=$(ls -d "${2:-build}"/generated/include)
object=$(mktemp --suffix=.o)
nvcc -O3 -std=c++17 -arch=sm_$arch -I src/include -I src/kernels -I "$generated" -Xptxas -v \
  -c src/kernels/add_cuda.cu -o "$object" 2>&1 |
  awk '/Compiling entry function/ {match($0, /_Z[^'"'"']*/); name=substr($0, RSTART, RLENGTH)}
       /Used/ {sub(/.*Used/, "Used"); print name ": " $0}' |
  c++filt | sed 's/vecadd::detail:://; s/vecadd::(anonymous namespace):://' | sort -u
echo
cuobjdump --dump-sass "$object" | c++filt | awk '
  /Function :/ {name=$0; sub(/.*Function : /, "", name)}
  match($0, /(LDG|STG)(\.[A-Z0-9]+)*/) {opcode = substr($0, RSTART, RLENGTH);
             width = (opcode ~ /\.128/) ? "128-bit" : ((opcode ~ /\.64/) ? "64-bit" : "<=32-bit");
             op = (opcode ~ /LDG/) ? "loads" : "stores"; count[name " " op " " width]++}
  END {for (key in count) print count[key], key}' | sort -k2
rm -f "$object"
