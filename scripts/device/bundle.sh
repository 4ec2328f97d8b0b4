#!/usr/bin/env bash
# scripts/device/bundle.sh: packs build-gpu (and build-avx512 when present) with the shared
# libraries the device machine lacks into .dev/bundle.tar.xz, for scripts/device/gpu_run.sh.
# Build first: cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
#   -DBENCHDB_CUDA=ON -DBENCHDB_NATIVE=OFF -DCMAKE_C_FLAGS=-march=x86-64-v3 (the device's CPU may differ)
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .git/info; grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo /.dev/ >>.git/info/exclude
rm -rf .dev && mkdir -p .dev/lib .dev/bin
cp /usr/bin/sqlite3 .dev/bin/   # the CLI tests query the database with it
for l in libyaml-0.so.2 libjansson.so.4 libsqlite3.so.0 libdnnl.so.2 libcmocka.so.0 libOpenCL.so.1 libgomp.so.1 libreadline.so.8; do
	cp -L "$(ldconfig -p | awk -v l="$l" '$1 == l { print $NF; exit }')" .dev/lib/
done
dirs=build-gpu; [ -d build-avx512 ] && dirs="$dirs build-avx512"
# a build configured against .deps/onednn (scripts/get_onednn.sh) loads its libdnnl by rpath
if ldd build-gpu/runner/runner | grep -q "$PWD/.deps/onednn"; then dirs="$dirs .deps/onednn/lib"; fi
tar -cJf .dev/bundle.tar.xz --exclude='*.o' --exclude='*.a' --exclude=CMakeFiles $dirs .dev/lib .dev/bin
rm -rf .dev/lib .dev/bin
ls -la .dev/bundle.tar.xz
