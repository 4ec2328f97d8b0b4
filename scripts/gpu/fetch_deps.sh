#!/usr/bin/env bash
# scripts/gpu/fetch_deps.sh: run HERE (a Debian machine with a package registry) before using the
# lent GPU machine, which has nvcc, CMake and PyTorch but no registry. Downloads the .deb files
# of benchdb's C dependencies into .gpudeps/ (ignored by git; about 9 MB), which the device
# tool's `carry` takes along:
#   device run: carry [".gpudeps"], command "bash scripts/gpu/run_on_gpu.sh [sweep.yaml ...]"
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpudeps
grep -qx '/.gpudeps/' .git/info/exclude 2>/dev/null || echo /.gpudeps/ >> .git/info/exclude
apt-get update -qq
(cd .gpudeps && apt-get download -qq libdnnl2 libdnnl-dev libsqlite3-0 libsqlite3-dev libyaml-0-2 \
	libyaml-dev libcmocka0 libcmocka-dev)
ls -la .gpudeps
