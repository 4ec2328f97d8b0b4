#!/usr/bin/env bash
# configs/perf/eta_replay.sh: replay the runner's ETA (runner/progress.c of this checkout) over a
# stored run: the cases' own times (cases.elapsed_ns) in the order they finished, each case's
# work from its stored FLOPs per iteration x (warm-up + iterations). It answers "what would this
# ETA have said on that run" for a change to the model, without running the sweep again;
# configs/perf/eta.sh measures the live ETA. Interleaved impls of one shape (`--interleave`, the
# default) start together and are reported in the sweep's order: the order is the cases' start,
# then the sweep's order. docs/performance.md, "ETA".
#   configs/perf/eta_replay.sh DB [RUN_ID]   (default: the last run)
# ETA_REPLAY_SOURCE=FILE replays another progress.c (an A/B: `git show REV:runner/progress.c`).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
db=${1:?usage: eta_replay.sh DB [RUN_ID]}
run=${2:-$(sqlite3 "$db" "select max(id) from runs")}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O2 -std=gnu11 -I"$repo/runner" -I"$repo/common" -I"$repo/kernels" -I"$repo/kernels/dev" -I"$repo/db" \
	"$repo/configs/perf/eta_replay.c" "${ETA_REPLAY_SOURCE:-$repo/runner/progress.c}" "$repo/common/escape.c" "$repo/common/strbuf.c" \
	"$repo/common/xalloc.c" "$repo/common/vocab.c" -lm -o "$out/eta_replay"
sqlite3 -separator ' ' "$db" "
	select case when status = 'ok' then (coalesce(flops_fwd, 0) + coalesce(flops_bwd, 0) +
		coalesce(flops_opt, 0)) * (warmup + iters) else 0 end, elapsed_ns,
		dense_rank() over (order by suite, device, dtype,
				   '')
	from cases where run_id = $run
	order by started_at, ord" | "$out/eta_replay"
