#!/bin/sh
# scripts/main_sweep.sh [RUNNER]: the sweep the README's main job runs on this machine:
# configs/attention_gpu.yaml where `runner sysinfo` (RUNNER, default build/runner/runner) sees a
# usable CUDA GPU, else configs/attention_cpu.yaml. Prints the path, relative to the repository.
runner=${1:-build/runner/runner}
info=$("$runner" sysinfo 2>/dev/null)
if printf '%s\n' "$info" | grep -Eq '^gpu ' && ! printf '%s\n' "$info" | grep -Eq '^gpu +none visible'; then
	echo configs/attention_gpu.yaml
else
	echo configs/attention_cpu.yaml
fi
