#!/usr/bin/env bash
# Evidence for: docs/kernel-notes.md, "Resource report and SASS".
# Resource usage and load/store widths of vecadd's CUDA kernels for one arch, read from the
# built kernel library (no GPU, no sources). Needs cuobjdump and nvdisasm on PATH (pip:
# nvidia-cuda-cuobjdump; triton ships nvdisasm).
# Usage: lab/kernel_report.sh [arch=90] [libvecadd_cuda.so, default: the one the installed vecadd loads]
set -euo pipefail
arch=${1:-90}
library=${2:-}
if [ -z "$library" ]; then
  library=$(python3 -c 'import vecadd; print(vecadd.build_info()["cuda_library"])')/libvecadd_cuda.so
fi
[ -f "$library" ] || { echo "kernel_report: no kernel library at $library" >&2; exit 1; }
tidy() { c++filt | sed 's/vecadd::detail:://g; s/vecadd::(anonymous namespace):://g'; }
echo "$library, sm_$arch"
# LOCAL is the per-thread local memory: 0 means no spills and no stack arrays.
cuobjdump -arch "sm_$arch" --dump-resource-usage "$library" | tidy |
  awk '/Function / {name=$0; sub(/^ *Function /, "", name); sub(/:$/, "", name)}
       /REG:/ {print name ": " $1 " " $2 " " $4}' | sort -u
echo
cuobjdump -arch "sm_$arch" --dump-sass "$library" | tidy | awk '
  /Function :/ {name=$0; sub(/.*Function : /, "", name)}
  match($0, /(LDG|STG)(\.[A-Z0-9]+)*/) {opcode = substr($0, RSTART, RLENGTH);
             width = (opcode ~ /\.128/) ? "128-bit" : ((opcode ~ /\.64/) ? "64-bit" : "<=32-bit");
             op = (opcode ~ /LDG/) ? "loads" : "stores"; count[name " " op " " width]++}
  END {for (key in count) print count[key], key}' | sort -k2
