#!/usr/bin/env bash
# configs/perf/gemm_libs.sh: build and run configs/perf/gemm_libs.c, the transformer's GEMMs
# through Debian's oneDNN (2.6), PyPI's oneDNN 3.2 and PyPI's MKL, interleaved call by call
# (docs/performance.md, "The GEMM library").
#
#   configs/perf/gemm_libs.sh WORK_DIR [float32|bfloat16] [REPS] [ROLE-SUBSTRING]
#
# WORK_DIR keeps the wheels (oneDNN through scripts/get_onednn.sh; mkl, mkl-include: about
# 230 MB) and the builds, so a second run downloads and builds nothing new. Needs PyPI access,
# python3 -m pip, gcc and Debian's libdnnl-dev. Runs with the environment it is given: e.g.
#   GEMM_LIBS_CLOCK=cpu OMP_WAIT_POLICY=passive configs/perf/gemm_libs.sh /tmp/gl float32 15
# for process CPU time (a shared machine), ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
# for the AVX2 paths, OMP_NUM_THREADS for the thread count, GEMM_LIBS_PREFER=gemm:jit for
# oneDNN's gemm:jit in place of the wrapper's choice (bfloat16: against brgemm).
#
# GEMM_LIBS_B_ROOT=DIR puts the oneDNN in DIR (DIR/include, DIR/lib/libdnnl.so.3; e.g. 3.13.1
# from configs/perf/build_onednn.sh DIR) in place of Debian's, as contender B beside PyPI's 3.2
# as A: its library is copied under another soname (patchelf, Debian: apt-get install patchelf)
# so that the two libdnnl.so.3 load side by side in one process.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:?usage: gemm_libs.sh WORK_DIR [float32|bfloat16] [REPS] [ROLE]}
dtype=${2:-float32}
reps=${3:-15}
mkdir -p "$work/mkl/wheels"
work=$(cd "$work" && pwd)

"$repo/scripts/get_onednn.sh" "$work/onednn" >&2
mkl=2026.2.0
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work/mkl/wheels" \
	"mkl==$mkl" "mkl-include==$mkl"
if [ ! -e "$work/mkl/lib/libmkl_core.so.3" ]; then
	rm -rf "$work/mkl/unpacked"
	for whl in "$work/mkl/wheels"/mkl*-"$mkl"-*.whl; do
		python3 -m zipfile -e "$whl" "$work/mkl/unpacked"
	done
	rm -rf "$work/mkl/lib" "$work/mkl/include"
	mv "$work/mkl/unpacked/mkl-$mkl.data/data/lib" "$work/mkl/lib"
	mv "$work/mkl/unpacked/mkl_include-$mkl.data/data/include" "$work/mkl/include"
	rm -rf "$work/mkl/unpacked"
fi

inc="-I$repo/kernels/cpu -I$repo/kernels -I$repo/kernels/ref -I$repo/common"
src="$repo/kernels/cpu/dnnl_wrap.c $repo/kernels/mem.c $repo/common/error.c $repo/common/params.c
     $repo/common/strbuf.c $repo/common/xalloc.c $repo/common/values.c $repo/common/escape.c
     $repo/common/vocab.c"
cflags="-O2 -fopenmp -D_GNU_SOURCE -fPIC -shared -Wl,-Bsymbolic -Wl,--no-undefined"
# shellcheck disable=SC2086
gcc $cflags $inc $src -ldnnl -lm -o "$work/wrap_system.so"
# shellcheck disable=SC2086
gcc $cflags -I"$work/onednn/include" $inc $src "$work/onednn/lib/libdnnl.so.3" -lm \
	-Wl,-rpath,"$work/onednn/lib" -o "$work/wrap_onednn3.so"
# shellcheck disable=SC2086
gcc -O2 -Wall -Wextra -fopenmp $inc -I"$work/mkl/include" "$repo/configs/perf/gemm_libs.c" \
	"$work/mkl/lib/libmkl_intel_lp64.so.3" "$work/mkl/lib/libmkl_gnu_thread.so.3" \
	"$work/mkl/lib/libmkl_core.so.3" -Wl,-rpath,"$work/mkl/lib" -ldl -lm -o "$work/gemm_libs"
cd "$work"
if [ -n "${GEMM_LIBS_B_ROOT:-}" ]; then
	b=$(cd "$GEMM_LIBS_B_ROOT" && pwd)
	command -v patchelf >/dev/null ||
		{ echo "gemm_libs: GEMM_LIBS_B_ROOT needs patchelf (apt-get install patchelf)" >&2; exit 1; }
	mkdir -p "$work/b"
	cp -L "$b/lib/libdnnl.so.3" "$work/b/libdnnl_b.so"
	patchelf --set-soname libdnnl_b.so "$work/b/libdnnl_b.so"
	gcc $cflags -I"$b/include" $inc $src "$work/b/libdnnl_b.so" -lm -Wl,-rpath,"$work/b" \
		-o "$work/wrap_b.so"
	exec ./gemm_libs ./wrap_onednn3.so ./wrap_b.so "$dtype" "$reps" ${4:+"$4"}
fi
exec ./gemm_libs ./wrap_system.so ./wrap_onednn3.so "$dtype" "$reps" ${4:+"$4"}
