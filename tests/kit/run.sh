#!/usr/bin/env bash
# tests/kit/run.sh: the peer kit's unit tests (tests/kit/test_kit.py) with BENCHDB_PYTHON, else
# the first python3 that has torch, else python3 (the torch tests then skip with the reason).
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=
for cand in "${BENCHDB_PYTHON:-}" python3 /usr/bin/python3; do
	[ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 || continue
	"$cand" -c 'import torch' >/dev/null 2>&1 && { py=$cand; break; }
done
py=${py:-python3}
echo "python: $(command -v "$py")"
cd "$here" && exec "$py" -m unittest -v test_kit
