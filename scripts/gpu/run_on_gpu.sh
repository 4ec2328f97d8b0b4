#!/usr/bin/env bash
# scripts/gpu/run_on_gpu.sh: run THERE, on the lent GPU machine, from the repository root, with
# .gpudeps/ carried (scripts/gpu/fetch_deps.sh). Unpacks the dependencies into /tmp/deps, builds
# for Hopper (sm_90), runs the gpu-labelled tests, then each sweep given as an argument into
# $OUT/gpu.db (or ./gpu.db), and leaves the logs in $OUT.
#   bash scripts/gpu/run_on_gpu.sh                                   # build + gpu tests
#   bash scripts/gpu/run_on_gpu.sh configs/e2e_vs_pytorch_gpu.yaml    # + a sweep
#   bash scripts/gpu/run_on_gpu.sh configs/flash_vs_sdpa.yaml configs/attention_gpu.yaml
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
D=/tmp/deps
mkdir -p "$D"
for f in .gpudeps/*.deb; do dpkg -x "$f" "$D"; done
LIB=$D/usr/lib/x86_64-linux-gnu
# the .pc files name /usr as their prefix
sed -i "s|^prefix=.*|prefix=$D/usr|" "$LIB"/pkgconfig/*.pc
export PKG_CONFIG_PATH=$LIB/pkgconfig LD_LIBRARY_PATH=$LIB:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
nvcc --version | tail -2 | tee -a "$OUT/gpu.txt"
# cuDNN (impl sdpa): the system's, else the one in PyTorch's python packages (nvidia-cudnn-cu*),
# which ships no unversioned libcudnn.so for the linker: link one into $D/cudnn.
CUDNN_ARG=
if ! ls /usr/include/cudnn.h /usr/include/*/cudnn.h /usr/local/cuda/include/cudnn.h >/dev/null 2>&1; then
	croot=$(python3 -c 'import os, nvidia.cudnn as c; print(os.path.dirname(c.__file__) if c.__file__ else list(c.__path__)[0])' 2>/dev/null)
	if [ -n "$croot" ] && [ -f "$croot/include/cudnn.h" ]; then
		mkdir -p "$D/cudnn/lib"
		ln -sfn "$croot/include" "$D/cudnn/include"
		for l in "$croot"/lib/libcudnn*.so*; do ln -sf "$l" "$D/cudnn/lib/"; done
		ln -sf "$(ls "$croot"/lib/libcudnn.so.* | head -1)" "$D/cudnn/lib/libcudnn.so"
		CUDNN_ARG=-DCUDNN_ROOT=$D/cudnn
		export LD_LIBRARY_PATH=$croot/lib:$LD_LIBRARY_PATH
		echo "cuDNN from $croot" | tee -a "$OUT/gpu.txt"
	fi
fi
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DBENCHDB_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
	-DCMAKE_PREFIX_PATH="$D/usr" -DCMAKE_LIBRARY_PATH="$LIB" $CUDNN_ARG 2>&1 | tee "$OUT/build.log" | grep benchdb
cmake --build build-gpu -j"$(nproc)" >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
build-gpu/runner/runner sysinfo | tee -a "$OUT/gpu.txt"
ctest --test-dir build-gpu -L gpu --output-on-failure 2>&1 | tee "$OUT/gpu-tests.log" | tail -40
for sweep in "$@"; do
	echo "== $sweep"
	build-gpu/runner/runner run "$sweep" --db "$OUT/gpu.db" 2>&1 | tee -a "$OUT/sweeps.log" | tail -5
done
