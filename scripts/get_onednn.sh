#!/usr/bin/env bash
# scripts/get_onednn.sh: oneDNN 3.2 (GNU OpenMP runtime, as Debian's 2.6 and benchdb's own
# kernels) from PyPI's onednn-cpu-gomp wheels, laid out for the build:
#
#   scripts/get_onednn.sh [DIR]        (default: .deps/onednn in the repository)
#
# DIR/include/oneapi/dnnl/*.h and DIR/lib/libdnnl.so*. CMake takes .deps/onednn by itself when
# it exists (a fresh configure, or `cmake -S . -B build -DBENCHDB_ONEDNN_ROOT=`), any other DIR
# with -DBENCHDB_ONEDNN_ROOT=DIR; the binaries load that libdnnl (rpath). `runner sysinfo`
# (blas) and every run's system record then say oneDNN 3.2.0. -DBENCHDB_ONEDNN_ROOT=system goes
# back to the system's. Why 3.2: docs/performance.md, "the GEMM library".
#
# Needs network access to PyPI and `python3 -m pip` (Debian: python3-pip); the wheels are kept
# in DIR/wheels, so a second run downloads nothing. Idempotent.
set -euo pipefail

version=2023.2.0                # onednn-cpu-gomp wheel version; carries oneDNN 3.2.0
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$repo/.deps/onednn}
mkdir -p "$dest/wheels"
dest=$(cd "$dest" && pwd)

if ! python3 -m pip --version >/dev/null 2>&1; then
	echo "get_onednn: python3 -m pip is not available (Debian: apt-get install python3-pip)" >&2
	exit 1
fi
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$dest/wheels" \
	"onednn-cpu-gomp==$version" "onednn-devel-cpu-gomp==$version"

tmp=$(mktemp -d "$dest/unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for whl in "$dest/wheels/onednn_cpu_gomp-$version"-*.whl \
	   "$dest/wheels/onednn_devel_cpu_gomp-$version"-*.whl; do
	python3 -m zipfile -e "$whl" "$tmp"
done
lib=$tmp/onednn_cpu_gomp-$version.data/data/lib
include=$tmp/onednn_devel_cpu_gomp-$version.data/data/include
for f in "$lib/libdnnl.so.3" "$include/oneapi/dnnl/dnnl.h" "$include/oneapi/dnnl/dnnl_version.h"; do
	[ -e "$f" ] || { echo "get_onednn: '$f' is not in the wheels" >&2; exit 1; }
done
rm -rf "$dest/include" "$dest/lib"
mkdir -p "$dest/lib"
cp -a "$include" "$dest/include"
cp "$lib/libdnnl.so.3" "$dest/lib/"      # the wheel holds three copies (a zip has no links)
ln -s libdnnl.so.3 "$dest/lib/libdnnl.so"
echo "get_onednn: oneDNN $(sed -n 's/^#define DNNL_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
	"$dest/include/oneapi/dnnl/dnnl_version.h" | paste -sd.) in $dest"
