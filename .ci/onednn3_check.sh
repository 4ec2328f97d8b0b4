#!/usr/bin/env bash
# .ci/onednn3_check.sh: build the oneDNN kernels against oneDNN 3.x and run their tests, to show
# that kernels/cpu/dnnl_wrap.c still builds and passes on 3.x when the system has 2.x (Debian 12).
#
#   .ci/onednn3_check.sh [WORK_DIR]        (default: a new directory under /tmp)
#
# Needs network access to PyPI (pip), Python 3, x86-64 Linux and the build dependencies of
# .ci/deps. It is not part of .ci/run. oneDNN 3.2 (GNU OpenMP runtime) comes from PyPI wheels
# through scripts/get_onednn.sh: WORK_DIR/onednn holds them (kept, so a second run reuses them),
# the headers and libdnnl.so.3; WORK_DIR/build is a fresh build of the repository against them
# (-DBENCHDB_ONEDNN_ROOT; the binaries load that libdnnl through their rpath).
# Exits 0 when dnnl_wrap.c compiles without warnings and test_matmul, test_attention and
# test_model pass, and `runner sysinfo` reports the 3.x library; nonzero otherwise.
set -euo pipefail

want="oneDNN 3.2."              # what `runner sysinfo` must report
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/onednn3_check.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "== oneDNN 3.2 from PyPI into $work/onednn (scripts/get_onednn.sh)"
"$repo/scripts/get_onednn.sh" "$work/onednn"

echo "== configuring $work/build"
rm -rf "$work/build"
cmake -S "$repo" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBENCHDB_CUDA=OFF \
	-DBENCHDB_ONEDNN_ROOT="$work/onednn" >/dev/null

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
