#!/usr/bin/env bash
# configs/perf/build_onednn.sh: oneDNN 3.13.1 built from source with GNU OpenMP (the threading
# of Debian's oneDNN and of benchdb's own kernels), laid out as scripts/get_onednn.sh lays out
# PyPI's 3.2, for the comparison of the two (docs/performance.md, "The GEMM library": 3.13 was
# measured and not taken; `GEMM_LIBS_B_ROOT=DIR configs/perf/gemm_libs.sh`):
#
#   configs/perf/build_onednn.sh DIR [SRC]
#
# SRC is a oneDNN source tree at v3.13.1 (e.g. a `git clone --branch v3.13.1
# https://github.com/uxlfoundation/oneDNN`); without it the script clones that tag into
# DIR/src (needs git and network access to GitHub). Only what benchdb calls is built: the CPU
# engine, the matmul and reorder primitives and the sgemm API (ONEDNN_ENABLE_PRIMITIVE), every
# ISA dispatched at run time, no tests, no examples, no graph API; 25 minutes on 2 cores
# (2026-11-26). Then DIR/include/oneapi/dnnl/*.h and DIR/lib/libdnnl.so*; benchdb itself builds
# against it with -DBENCHDB_ONEDNN_ROOT=DIR, and `runner sysinfo` (blas) and every run's system
# record then say oneDNN 3.13.1.
#
# Needs cmake and a C++ compiler (Debian: cmake g++; ninja-build is used when present).
# Idempotent: a DIR that already holds 3.13.1 is left as it is.
set -euo pipefail

tag=v3.13.1
dest=${1:?usage: build_onednn.sh DIR [SRC]}
src=${2:-}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

version_of() {   # the version a dnnl_version.h says, e.g. 3.13.1
	sed -n 's/^#define DNNL_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$1" | paste -sd.
}
if [ -e "$dest/include/oneapi/dnnl/dnnl_version.h" ] && [ -e "$dest/lib/libdnnl.so.3" ] &&
   [ "$(version_of "$dest/include/oneapi/dnnl/dnnl_version.h")" = "${tag#v}" ]; then
	echo "build_onednn: oneDNN ${tag#v} is already in $dest"
	exit 0
fi
for tool in cmake c++; do
	command -v "$tool" >/dev/null || {
		echo "build_onednn: '$tool' is not installed (Debian: apt-get install cmake g++)" >&2
		exit 1
	}
done
if [ -z "$src" ]; then
	src=$dest/src
	if [ ! -e "$src/CMakeLists.txt" ]; then
		command -v git >/dev/null || { echo "build_onednn: git is not installed" >&2; exit 1; }
		rm -rf "$src"
		git clone --quiet --depth 1 --branch "$tag" https://github.com/uxlfoundation/oneDNN "$src"
	fi
fi
src=$(cd "$src" && pwd)
grep -q 'set(PROJECT_NAME "oneDNN")' "$src/CMakeLists.txt" 2>/dev/null ||
	{ echo "build_onednn: '$src' is not a oneDNN source tree" >&2; exit 1; }
if ! grep -q "set(PROJECT_VERSION \"${tag#v}\")" "$src/CMakeLists.txt"; then
	echo "build_onednn: '$src' is not oneDNN ${tag#v} (its CMakeLists.txt says" \
	     "$(grep -o 'PROJECT_VERSION "[0-9.]*"' "$src/CMakeLists.txt" | head -1)); check out $tag" >&2
	exit 1
fi

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
build=$dest/build
cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_INSTALL_PREFIX="$dest/install" -DCMAKE_INSTALL_LIBDIR=lib \
	-DONEDNN_CPU_RUNTIME=OMP -DONEDNN_GPU_RUNTIME=NONE -DONEDNN_BUILD_GRAPH=OFF \
	-DONEDNN_BUILD_TESTS=OFF -DONEDNN_BUILD_EXAMPLES=OFF -DONEDNN_BUILD_DOC=OFF \
	-DONEDNN_ENABLE_PRIMITIVE="MATMUL;REORDER" >/dev/null
cmake --build "$build" -j "$(nproc)"
cmake --install "$build" >/dev/null
rm -rf "$dest/include" "$dest/lib"
mkdir -p "$dest/lib"
cp -a "$dest/install/include" "$dest/include"
cp -L "$dest/install/lib/libdnnl.so.3" "$dest/lib/libdnnl.so.3"
ln -s libdnnl.so.3 "$dest/lib/libdnnl.so"
rm -rf "$dest/install" "$build"
echo "build_onednn: oneDNN $(version_of "$dest/include/oneapi/dnnl/dnnl_version.h") in $dest"
