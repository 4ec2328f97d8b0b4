#!/bin/sh
# configs/perf/gemm_pairs_ab.sh: a layer's dW and dX one after the other against at once
# (BENCHDB_GEMM_PAIRS, kernels/cpu/backend_cpu.c), whole runs alternating, the order swapped
# every round; then each round's medians and their ratio, and report regress with the runs as
# the unit (phase total, then fwd and bwd). AB_VAR=BENCHDB_GEMM_TUNE compares the settings of
# that variable instead (labels tune-A, tune-B), e.g. the float32 products' tuning:
#   AB_VAR=BENCHDB_GEMM_TUNE configs/perf/gemm_pairs_ab.sh build-onednn3 DB 10 \
#       configs/perf/gemm_pairs_cpu_f32.yaml off auto
#
#   configs/perf/gemm_pairs_ab.sh RUNNER_DIR DB ROUNDS [SWEEP [A [B]]]
#
# RUNNER_DIR holds runner/runner and report/report (a build folder, e.g. build-onednn3); SWEEP
# defaults to configs/perf/gemm_pairs_cpu_bf16.yaml; A and B are the two settings (off, auto).
# Labels: pairs-A and pairs-B (tune-A and tune-B with AB_VAR=BENCHDB_GEMM_TUNE).
# OMP_NUM_THREADS is left to the caller (pairs need two threads).
# ROUNDS 0 runs nothing and prints the tables of the runs already in DB.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 RUNNER_DIR DB ROUNDS [SWEEP [A [B]]]" >&2; exit 2; }
dir=$1 db=$2 rounds=$3
sweep=${4:-configs/perf/gemm_pairs_cpu_bf16.yaml} a=${5:-off} b=${6:-auto}
var=${AB_VAR:-BENCHDB_GEMM_PAIRS}
case $var in
BENCHDB_GEMM_PAIRS) tag=pairs ;;
BENCHDB_GEMM_TUNE) tag=tune ;;
*) echo "$0: AB_VAR is '$var': expected BENCHDB_GEMM_PAIRS or BENCHDB_GEMM_TUNE" >&2; exit 2 ;;
esac
one() { env "$var=$1" "$dir/runner/runner" run "$sweep" --db "$db" --label "$tag-$1" >/dev/null; }
r=1
while [ "$r" -le "$rounds" ]; do
	if [ $((r % 2)) -eq 1 ]; then one "$a"; one "$b"; else one "$b"; one "$a"; fi
	echo "round $r of $rounds done" >&2
	r=$((r + 1))
done
# per run: the median over measured iterations of the iteration's phases summed; the k-th run of
# each label is round k
sqlite3 -header -column "$db" <<SQL
WITH it AS (
  SELECT c.run_id, s.iter, sum(s.ns) AS ns FROM cases c JOIN samples s ON s.case_id = c.id
  WHERE c.status = 'ok' AND s.iter >= c.warmup GROUP BY c.run_id, s.iter),
ranked AS (
  SELECT run_id, ns, row_number() OVER (PARTITION BY run_id ORDER BY ns) AS k,
         count(*) OVER (PARTITION BY run_id) AS n FROM it),
med AS (
  SELECT r.label, m.run_id, avg(m.ns) / 1e6 AS ms,
         row_number() OVER (PARTITION BY r.label ORDER BY m.run_id) AS round
  FROM ranked m JOIN runs r ON r.id = m.run_id
  WHERE m.k IN ((m.n + 1) / 2, (m.n + 2) / 2) AND r.label IN ('$tag-$a', '$tag-$b')
  GROUP BY m.run_id)
SELECT x.round, round(x.ms, 1) AS "$a (ms)", round(y.ms, 1) AS "$b (ms)",
       round(x.ms / y.ms, 3) AS "$a / $b"
FROM med x JOIN med y ON y.round = x.round AND y.label = '$tag-$b'
WHERE x.label = '$tag-$a' ORDER BY x.round;
SQL
for phase in total fwd bwd; do
	"$dir/report/report" regress --db "$db" --baseline-label "$tag-$a" \
		--candidate-label "$tag-$b" --threshold 1 --phase "$phase" || true
done
