#!/bin/sh
# The kernel section of flash.cu (everything from "// ---- kernels" up to the end of its
# anonymous namespace), compiled unchanged on the host; emu_prims.h stands in for the
# "PTX primitives" section above it.
set -e
src=${1:-$(dirname "$0")/../../kernels/cuda/flash.cu}
awk '/^\/\/ ---- kernels/ {on=1} on && /^}  \/\/ namespace/ {exit} on {print}' "$src" > kernels_extracted.inc
grep -c . kernels_extracted.inc >/dev/null
echo "extracted $(wc -l < kernels_extracted.inc) lines from $src"
