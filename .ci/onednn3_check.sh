#!/usr/bin/env bash
# .ci/onednn3_check.sh: build the oneDNN kernels against oneDNN 3.x and run their tests, to show
# that kernels/cpu/dnnl_wrap.c still builds and passes on 3.x when the system has 2.x (Debian 12).
#
#   .ci/onednn3_check.sh [WORK_DIR]        (default: a new directory under /tmp)
#
# Needs network access to PyPI (pip), Python 3, x86-64 Linux and the build dependencies of
# .ci/deps. It is not part of .ci/run. oneDNN 3.2 (GNU OpenMP runtime) comes from PyPI wheels:
# WORK_DIR/wheels holds them (kept, so a second run reuses them), WORK_DIR/onednn the unpacked
# headers and libdnnl.so.3, WORK_DIR/build a fresh build of the repository against them.
# Exits 0 when dnnl_wrap.c compiles without warnings and test_matmul, test_attention and
# test_model pass, and `runner sysinfo` reports the 3.x library; nonzero otherwise.
set -euo pipefail

version=2023.2.0                # onednn-cpu-gomp wheel version; carries oneDNN 3.2
want="oneDNN 3.2."              # what `runner sysinfo` must report
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/onednn3_check.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "== downloading oneDNN wheels $version into $work/wheels"
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work/wheels" \
	"onednn-cpu-gomp==$version" "onednn-devel-cpu-gomp==$version"

echo "== unpacking into $work/onednn"
rm -rf "$work/onednn"
for whl in "$work/wheels/onednn_cpu_gomp-$version"-*.whl \
	   "$work/wheels/onednn_devel_cpu_gomp-$version"-*.whl; do
	python3 -m zipfile -e "$whl" "$work/onednn"
done
lib_dir=$work/onednn/onednn_cpu_gomp-$version.data/data/lib
include_dir=$work/onednn/onednn_devel_cpu_gomp-$version.data/data/include
for f in "$lib_dir/libdnnl.so.3" "$include_dir/oneapi/dnnl/dnnl.h"; do
	[ -e "$f" ] || { echo "onednn3_check: '$f' is not in the wheels" >&2; exit 1; }
done

echo "== configuring $work/build"
rm -rf "$work/build"
cmake -S "$repo" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBENCHDB_CUDA=OFF \
	-DDNNL_LIBRARY="$lib_dir/libdnnl.so.3" -DDNNL_INCLUDE_DIR="$include_dir" >/dev/null

echo "== building"
if ! cmake --build "$work/build" -j"$(nproc)" --target test_matmul test_attention test_model \
	runner >"$work/build.log" 2>&1; then
	grep -E -A3 'error' "$work/build.log" | head -n 40 >&2 || true
	echo "onednn3_check: build failed, see $work/build.log" >&2
	exit 1
fi
grep -E 'warning' "$work/build.log" || true
if grep -E 'dnnl_wrap\.[ch]:[0-9]+:[0-9]+: warning' "$work/build.log" >&2; then
	echo "onednn3_check: dnnl_wrap has warnings against oneDNN 3.x" >&2
	exit 1
fi

export LD_LIBRARY_PATH=$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
for t in test_matmul test_attention test_model; do
	echo "== $t"
	(cd "$repo" && "$work/build/tests/$t") 2>&1 | tail -n 2 || status=1
done
blas=$("$work/build/runner/runner" sysinfo | grep '^blas') || blas=""
echo "== sysinfo: $blas"
case $blas in
*"$want"*) ;;
*) echo "onednn3_check: runner sysinfo does not report $want" >&2; status=1 ;;
esac

[ $status -eq 0 ] && echo "onednn3_check: ok" || echo "onednn3_check: FAILED" >&2
exit $status
