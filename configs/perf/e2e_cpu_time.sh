#!/usr/bin/env bash
# configs/perf/e2e_cpu_time.sh: build configs/perf/e2e_cpu_time.c against BUILD_DIR's kernels
# (made by the README's build: its oneDNN, its flags) and run it.
#
#   configs/perf/e2e_cpu_time.sh BUILD_DIR float32|bfloat16 [ITERS]
#   OMP_WAIT_POLICY=passive configs/perf/e2e_cpu_time.sh build float32 4
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: e2e_cpu_time.sh BUILD_DIR float32|bfloat16 [ITERS]}" && pwd)
# the libdnnl the build's runner loads (the system's, BENCHDB_ONEDNN_ROOT's or .deps/onednn's)
dnnl=$(readlink -f "$(ldd "$build/runner/runner" | sed -n 's/.*libdnnl[^ ]* => \([^ ]*\).*/\1/p')")
flags=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$build/CMakeCache.txt")
out=$build/e2e_cpu_time
# shellcheck disable=SC2086
gcc -O2 $flags -fopenmp -D_GNU_SOURCE -I"$repo/kernels/cpu" -I"$repo/kernels" \
	-I"$repo/kernels/ref" -I"$repo/kernels/dev" -I"$repo/kernels/model" -I"$repo/common" \
	"$repo/configs/perf/e2e_cpu_time.c" "$build/kernels/libbenchdb_kernels.a" \
	"$build/kernels/libbenchdb_kernels_core.a" "$build/common/libbenchdb_common.a" \
	"$dnnl" -Wl,-rpath,"$(dirname "$dnnl")" -lm -o "$out"
exec "$out" "${@:2}"
