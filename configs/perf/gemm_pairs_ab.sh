#!/bin/sh
# configs/perf/gemm_pairs_ab.sh: a layer's dW and dX one after the other against at once
# (BENCHDB_GEMM_PAIRS, kernels/cpu/backend_cpu.c), whole runs alternating, the order swapped
# every round; then report regress with the runs as the unit (phase total, then bwd).
#
#   configs/perf/gemm_pairs_ab.sh RUNNER_DIR DB ROUNDS [SWEEP [A [B]]]
#
# RUNNER_DIR holds runner/runner and report/report (a build folder, e.g. build-onednn3); SWEEP
# defaults to configs/perf/gemm_pairs_cpu_bf16.yaml; A and B are the two settings (off, auto).
# Labels: pairs-A and pairs-B. OMP_NUM_THREADS is left to the caller (pairs need two threads).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 RUNNER_DIR DB ROUNDS [SWEEP [A [B]]]" >&2; exit 2; }
dir=$1 db=$2 rounds=$3
sweep=${4:-configs/perf/gemm_pairs_cpu_bf16.yaml} a=${5:-off} b=${6:-auto}
one() { BENCHDB_GEMM_PAIRS=$1 "$dir/runner/runner" run "$sweep" --db "$db" --label "pairs-$1" >/dev/null; }
r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) -eq 1 ]; then one "$a"; one "$b"; else one "$b"; one "$a"; fi
	echo "round $r of $rounds done" >&2
	r=$((r + 1))
done
for phase in total bwd; do
	"$dir/report/report" regress --db "$db" --baseline-label "pairs-$a" \
		--candidate-label "pairs-$b" --threshold 1 --phase "$phase" || true
done
