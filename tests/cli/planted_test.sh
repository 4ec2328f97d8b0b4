#!/usr/bin/env bash
# tests/cli/planted_test.sh: the verdicts (regress, compare, history, nodes) against planted data
# of known truth whose RUNS vary (tests/make_planted.c): a run-to-run spread of a case's median
# (--between; a quarter of its variance shared by the runs of one session, half of each part
# shared by the run's cases), within a run AR(1) noise of 2% with lag-1 autocorrelation 0.5 and
# 2% outliers; 24 cases, 30 measured iterations; many trials per database (tK-base / tK-cand,
# each trial on its own system, so no trial is another's history).
#   planted_test.sh REPORT MAKE_PLANTED [RUNNER]
# The bounds asserted here are the issue's goals at fewer trials than docs/performance.md's table
# ("Measurement validity"), which configs/perf/verdict_planted.sh measures in full; this prints
# the rates it measures.
set -u
REPORT=$1
PLANTED=$2
RUNNER=${3:-}
source "$(dirname "$0")/lib.sh"

# Trials per cell; under AddressSanitizer (CI's second pass) half as many, the bounds the same
# fractions. at_most PCT N / at_least PCT N: the count PCT% of N allows.
scale=1
ldd "$REPORT" 2>/dev/null | grep -q libasan && scale=2
n_aa=$((60 / scale)) n_pow=$((40 / scale)) n_two=$((30 / scale)) n_hist=$((20 / scale)) n_nodes=$((20 / scale))
at_most() { echo $(($1 * $2 / 100)); }
at_least() { echo $((($1 * $2 + 99) / 100)); }

# rate DB TRIALS [regress options]: sets exit0, exit1, exit2 (how many trials exited 0, 1, 2)
rate() {
	local db=$1 n=$2 k e
	shift 2
	exit0=0
	exit1=0
	exit2=0
	for ((k = 0; k < n; k++)); do
		"$REPORT" regress --db "$db" --baseline-label "t$k-base" --candidate-label "t$k-cand" "$@" >/dev/null 2>&1
		e=$?
		[ "$e" = 0 ] && exit0=$((exit0 + 1))
		[ "$e" = 1 ] && exit1=$((exit1 + 1))
		[ "$e" = 2 ] && exit2=$((exit2 + 1))
	done
	note "$(basename "$db") $*: exit 0 in $exit0, exit 1 in $exit1, exit 2 in $exit2 of $n trials"
}

# ---- regress: false alarms, power, never a pass it cannot tell --------------------------------
# A/A at 6% run noise (the issue measured 5.8% loaded): 4 baseline runs of one --repeat group
# against one candidate run, and one run a side. False alarms (exit 1) at most 5%.
check "A/A, 4 vs 1, 6%" "$PLANTED" "$T/aa41.db" --trials $n_aa --seed 11 --between 0.06 base:4:1 cand:1:1
rate "$T/aa41.db" $n_aa
check "A/A 6%, 4 baseline runs: exit 1 in <= 5% of $n_aa trials ($exit1)" [ "$exit1" -le "$(at_most 5 $n_aa)" ]
check "A/A, 1 vs 1, 6%" "$PLANTED" "$T/aa11.db" --trials $n_aa --seed 16 --between 0.06 base:1:1 cand:1:1
rate "$T/aa11.db" $n_aa
check "A/A 6%, one run a side: exit 1 in <= 5% of $n_aa trials ($exit1)" [ "$exit1" -le "$(at_most 5 $n_aa)" ]
# two of the 24 cases three times as noisy as the others: found noisier, no false alarm
check "A/A, noisy cases" "$PLANTED" "$T/noisy.db" --trials $n_aa --seed 19 --between 0.04 --noisy 2:3 h:6t:1 base:4:1 cand:1:1
rate "$T/noisy.db" $n_aa
check "A/A 4% with 2 cases at 12%: exit 1 in <= 5% of $n_aa trials ($exit1)" [ "$exit1" -le "$(at_most 5 $n_aa)" ]
"$REPORT" regress --db "$T/noisy.db" --baseline-label t0-base --candidate-label t0-cand >"$T/out" 2>&1
contains "$T/out" "noisier than the pool" "the noisy cases are found noisier"

# Power: every case 10% slower, 4 runs a side made at different times.
check "10% slower, 4 vs 4 runs, 2%" "$PLANTED" "$T/p2.db" --trials $n_pow --seed 12 --between 0.02 base:4t:1 cand:4t:1.10
rate "$T/p2.db" $n_pow
check "10% slower at 2%, 4 runs a side: exit 1 in >= 95% of $n_pow trials ($exit1)" [ "$exit1" -ge "$(at_least 95 $n_pow)" ]
check "10% slower, 4 vs 4 runs, 4%" "$PLANTED" "$T/p4.db" --trials $n_pow --seed 22 --between 0.04 base:4t:1 cand:4t:1.10
rate "$T/p4.db" $n_pow
check "10% slower at 4%, 4 runs a side: exit 1 in >= 70% of $n_pow trials ($exit1; docs/performance.md)" [ "$exit1" -ge "$(at_least 70 $n_pow)" ]
check "10% slower at 4%: never exit 0 ($exit0)" [ "$exit0" = 0 ]
"$REPORT" regress --db "$T/p4.db" --baseline-label t0-base --candidate-label t0-cand >"$T/out" 2>"$T/err"
contains "$T/out" "smallest slowdown these runs detect \\(90% of the time, alpha 0.01; column detect\\): [0-9.]+%" "the detectable change is stated"

# A 2x slowdown never exits 0, however the runs were selected.
check "2x, 1 vs 1 and 4 vs 1, 6%" "$PLANTED" "$T/two.db" --trials $n_two --seed 13 --between 0.06 base:4:1 cand:1:2 one-base:1:1 one-cand:1:2
rate "$T/two.db" $n_two
check "2x at 6%, 4 vs 1: exit 1 in every trial ($exit1)" [ "$exit1" = $n_two ]
two_one=0
for ((k = 0; k < n_two; k++)); do
	"$REPORT" regress --db "$T/two.db" --baseline-label "t$k-one-base" --candidate-label "t$k-one-cand" --lenient >/dev/null 2>&1
	[ $? = 1 ] && two_one=$((two_one + 1))
done
check "2x at 6%, one run a side, even --lenient: exit 1 in every trial ($two_one)" [ "$two_one" = $n_two ]

# Cannot tell is exit 2 with the size that could be told, never 0; --lenient passes only unsure
# cases within the threshold.
check "10% slower, one run a side" "$PLANTED" "$T/one.db" --seed 14 --between 0.02 base:1:1 cand:1:1.10
expect_status 2 "10% in one run pair, nothing measured: cannot tell" "$REPORT" regress --db "$T/one.db" --baseline-label base --candidate-label cand
contains "$T/err" "cannot tell: unsure \\(a 10% change would not be detected with these runs; about [0-9]+ runs a side, each at a different time, would detect it\\)" "says how many runs would tell"
contains "$T/out" "noise between runs NOT measured \\(one run a side, no history of this system\\): assumed 6% per run" "the assumption is printed"
expect_status 2 "--lenient does not pass what looks 10% slower" "$REPORT" regress --db "$T/one.db" --baseline-label base --candidate-label cand --lenient

# Sessions: one --repeat group a side measures the spread within a session only; the part a
# later session adds is assumed, and said.
check "session database" "$PLANTED" "$T/sess.db" --seed 15 --between 0.04 base:4:1 cand:4:1
"$REPORT" regress --db "$T/sess.db" --baseline-label base --candidate-label cand >"$T/out" 2>"$T/err"
contains "$T/out" "between sessions NOT measured .* and assumed 0.5 x the within variance" "between sessions assumed, and said"
# with history (8 earlier runs at different times) it is measured
check "session database with history" "$PLANTED" "$T/hist.db" --seed 15 --between 0.04 h:8t:1 base:4:1 cand:4:1
"$REPORT" regress --db "$T/hist.db" --baseline-label base --candidate-label cand >"$T/out" 2>"$T/err"
contains "$T/out" "noise between runs, measured: .*within a session [0-9.]+%, between sessions [0-9.]+%" "history measures the between part"
# stored summaries (runner noise) give the same verdicts as the runs read from their samples
if [ -n "$RUNNER" ]; then
	"$REPORT" regress --db "$T/hist.db" --baseline-label base --candidate-label cand >"$T/before" 2>&1
	expect_status 0 "runner noise folds the runs" "$RUNNER" noise --db "$T/hist.db"
	contains "$T/out" "16 runs folded now" "every run folded"
	check "folded once" [ "$(sql "$T/hist.db" "select count(*) from noise_runs")" = 16 ]
	"$REPORT" regress --db "$T/hist.db" --baseline-label base --candidate-label cand >"$T/after" 2>&1
	check "the same report from stored summaries" cmp -s "$T/before" "$T/after"
	expect_status 0 "runner noise again folds nothing" "$RUNNER" noise --db "$T/hist.db"
	contains "$T/out" "0 runs folded now" "nothing twice"
	check "the run_noise view" [ "$(sql "$T/hist.db" "select sessions || ',' || runs from run_noise where phase = 'total' limit 1")" = "10,16" ]
fi

# ---- contention -------------------------------------------------------------------------------
# A candidate 50% slower while it waited for a CPU 34% of its time (cases.cpu_wait) against a
# baseline that waited 1% -> contended, exit 2; the same slowdown with the waits alike stays a
# regression (exit 1); a baseline that waited 30% does not excuse a quiet candidate's slowdown;
# a candidate that waited 34% against a baseline whose wait is unknown is contended too (5% level).
check "contention database" "$PLANTED" "$T/wait.db" --seed 31 base:4:1:0.01 cand:1:1.5:0.34 real:1:1.5:0.01 bwait:4:1:0.3 nowait:4:1
expect_status 2 "a slower candidate that waited for a CPU: exit 2" "$REPORT" regress --db "$T/wait.db" --baseline-label base --candidate-label cand --format csv
check "every case contended" [ "$(grep -c ',contended$' "$T/out")" = 24 ]
contains "$T/err" "up to 34% of its time against 1% on the other side" "the waits named"
contains "$T/out" ",1/34,contended" "the cpu wait column"
expect_status 1 "the same slowdown without the wait: exit 1" "$REPORT" regress --db "$T/wait.db" --baseline-label base --candidate-label real
expect_status 1 "the baseline waited, the candidate did not: still slower" "$REPORT" regress --db "$T/wait.db" --baseline-label bwait --candidate-label real
expect_status 2 "a baseline with no wait recorded, a candidate that waited 34%: contended" "$REPORT" regress --db "$T/wait.db" --baseline-label nowait --candidate-label cand
# the waits named are the slower side's and the other's, whichever waited more: a candidate 30%
# faster that waited 40% against a baseline that waited 10% (the baseline is the slower side), and
# a candidate 30% slower that waited 10% against a baseline that waited 40%
check "contention database, the other side waited more" "$PLANTED" "$T/wait2.db" --cases 2 --seed 32 \
	base:4:1:0.10 fast:1:0.7:0.40 bwait:4:1:0.40 slow:1:1.3:0.10
expect_status 2 "a faster candidate, its baseline waited: contended" "$REPORT" regress --db "$T/wait2.db" --baseline-label base --candidate-label fast
contains "$T/err" "slower side waited for a CPU, up to 10% of its time against 40% on the other side" "the slower side is the baseline"
expect_status 2 "a slower candidate that waited less than its baseline: contended" "$REPORT" regress --db "$T/wait2.db" --baseline-label bwait --candidate-label slow
contains "$T/err" "slower side waited for a CPU, up to 10% of its time against 40% on the other side" "the slower side is the candidate"
# compare across runs: either side contended is never a plain faster/slower
expect_status 0 "compare: the busy candidate run" "$REPORT" compare --db "$T/wait.db" --run cand --baseline real --format csv
check "compare: no plain faster or slower with a contended side" [ "$(csv_cols "$T/out" verdict | grep -cE '^(faster|slower|\?)$')" = 0 ]
check "compare: the candidate's wait is shown (the times agree: no change, so not contended)" [ "$(csv_cols "$T/out" cpu_wait_% | sort -u)" = "1/34" ]
expect_status 0 "compare: a quiet candidate against a contended baseline run" "$REPORT" compare --db "$T/wait.db" --run real --baseline 7 --format csv
check "compare: a contended baseline is never a plain faster/slower either" [ "$(csv_cols "$T/out" verdict | grep -cE '^(faster|slower|\?)$')" = 0 ]

# ---- small n ---------------------------------------------------------------------------------
check "2x at 5 iterations" "$PLANTED" "$T/five.db" --iters 5 --seed 13 base:4:1 cand:1:2 one-base:1:1 one-cand:1:2
expect_status 1 "2x at 5 iterations, 4 baseline runs: exit 1" "$REPORT" regress --db "$T/five.db" --baseline-label base --candidate-label cand --format csv
check "every case slower" [ "$(grep -c ',slower$' "$T/out")" = 24 ]
expect_status 1 "2x at 5 iterations, one run a side: exit 1" "$REPORT" regress --db "$T/five.db" --baseline-label one-base --candidate-label one-cand
check "4 iterations" "$PLANTED" "$T/four.db" --iters 4 --seed 14 base:4:1 cand:1:2
expect_status 2 "2x at 4 iterations: insufficient data, exit 2" "$REPORT" regress --db "$T/four.db" --baseline-label base --candidate-label cand
contains "$T/err" "cannot tell: insufficient data" "insufficient: reason printed"

# ---- selecting the runs ------------------------------------------------------------------------
check "selection database" "$PLANTED" "$T/sel.db" --cases 3 --seed 15 base:5:1 cand:2:1
expect_status 0 "baseline label, 2 candidate runs (--lenient, --threshold 50: the selection is the point)" "$REPORT" regress --db "$T/sel.db" --baseline-label base --candidate-label cand --format csv --lenient --threshold 50
contains "$T/out" ",30x5,30x2," "n: iterations x runs"
expect_status 0 "the last 3 baseline runs" "$REPORT" regress --db "$T/sel.db" --baseline-label base --baseline-last 3 --candidate-label cand --lenient --threshold 50
contains "$T/out" "vs baseline runs 3, 4, 5 " "the last 3 runs"
expect_status 0 "--baseline-last alone: the runs before the candidate" "$REPORT" regress --db "$T/sel.db" --baseline-last 2 --candidate 7 --lenient --threshold 50
contains "$T/out" "run 7 vs baseline runs 5, 6 " "the 2 runs before run 7"
expect_status 0 "runs one by one" "$REPORT" regress --db "$T/sel.db" --baseline 1 --baseline 2 --candidate 6 --candidate 7 --lenient --threshold 50
contains "$T/out" "runs 6, 7 vs baseline runs 1, 2 " "runs named one by one"
expect_status 2 "a label no run has" "$REPORT" regress --db "$T/sel.db" --baseline-label nosuch
contains "$T/err" "no run matches the baseline selection: no run is labelled nosuch" "unknown label named"
sql "$T/sel.db" "UPDATE runs SET status = 'interrupted' WHERE id = 7"
expect_status 1 "a candidate group with an interrupted run" "$REPORT" regress --db "$T/sel.db" --baseline-label base --candidate-label cand
contains "$T/err" "candidate run 7 is interrupted, not complete" "interrupted run named"

# ---- history: steps against the noise between runs --------------------------------------------
# 12 runs at different times at 2% run noise, the last 6 of them 20% slower: one step, at the
# seventh run; and 30 histories of 12 runs at 4% without a change: a false step in at most 2.
check "history database" "$PLANTED" "$T/steps.db" --seed 41 --between 0.02 --cases 4 a:6t:1 b:6t:1.2
expect_status 0 "history" "$REPORT" history --db "$T/steps.db" --where seq_len=256 --format csv
check "one step, slower +~20%, at run 7" awk -F, '$12 ~ /^slower \+/ { n++; ok = $2 == 7 } END { exit !(n == 1 && ok) }' "$T/out"
false_steps=0
for ((k = 0; k < n_hist; k++)); do
	"$PLANTED" "$T/steps_aa.db" --seed $((420 + k)) --between 0.04 --cases 4 a:12t:1 >/dev/null
	"$REPORT" history --db "$T/steps_aa.db" --where seq_len=256 --format csv >"$T/out" 2>/dev/null
	grep -q ',slower +\|,faster -' "$T/out" && false_steps=$((false_steps + 1))
done
note "history A/A: a false step in $false_steps of $n_hist histories of 12 runs"
check "history A/A: a false step in <= 5% of $n_hist histories ($false_steps)" [ "$false_steps" -le "$(at_most 5 $n_hist)" ]
check "contended history" "$PLANTED" "$T/steps_wait.db" --seed 43 --between 0.02 --cases 4 a:4t:1:0 b:1:1.5:0.4
expect_status 0 "history with a contended run" "$REPORT" history --db "$T/steps_wait.db" --where seq_len=256 --format csv
check "the contended run's step is contended, not slower" awk -F, '$2 == 5 && $12 ~ /^contended/ { ok = 1 } END { exit !ok }' "$T/out"
check "its cpu wait shown" awk -F, '$2 == 5 && $11 > 39.9 && $11 < 40.1 { ok = 1 } END { exit !ok }' "$T/out"

# ---- nodes: a slow node is found, never passed for want of runs; a healthy cluster is vouched for
# where the runs can -----------------------------------------------------------------------------
# nodes_rate NOISE FACTOR TRIALS [nodes options]: one database per trial (nodes compares every host
# of a file): two nodes with 3 runs each at different times, node B's times FACTOR. Sets pass,
# out (exit 1), flagged (node B flagged), cannot (exit 2).
nodes_rate() {
	local k e noise=$1 factor=$2 n=$3
	shift 3
	pass=0 out=0 flagged=0 cannot=0
	for ((k = 0; k < n; k++)); do
		"$PLANTED" "$T/nodes.db" --seed $((100 + k)) --between "$noise" n@nodeA:3t:1 n@nodeB:3t:"$factor" >/dev/null
		"$REPORT" nodes --db "$T/nodes.db" --format csv "$@" >"$T/nodes.csv" 2>/dev/null
		e=$?
		[ "$e" = 0 ] && pass=$((pass + 1))
		[ "$e" = 1 ] && out=$((out + 1))
		[ "$e" = 2 ] && cannot=$((cannot + 1))
		[ "$e" = 1 ] && grep -q ',nodeB,3,.*,✗,' "$T/nodes.csv" && flagged=$((flagged + 1))
	done
	note "nodes at $noise, node B x$factor${*:+ ($*)}: exit 0 in $pass, 1 in $out (node B flagged in $flagged), 2 in $cannot of $n trials"
}
nodes_rate 0.04 1 $n_nodes
check "a healthy cluster at 4%, 3 runs per node: out of bounds (exit 1) in <= 5% of $n_nodes trials ($out)" [ "$out" -le "$(at_most 5 $n_nodes)" ]
# A node 7% slower, beyond the 5% band, at 4% run noise: 3 runs per node cannot show it (the notes
# say these runs flag a node 12% off) — cannot tell (exit 2), never a pass (exit 0 used to be the
# answer in most trials: ~ was "not a failure")
nodes_rate 0.04 1.07 $n_nodes
check "a node 7% slower at 4%, 3 runs per node: never passed (exit 0 in $pass of $n_nodes)" [ "$pass" = 0 ]
nodes_rate 0.04 1.07 $n_nodes --lenient
check "... nor with --lenient (exit 0 in $pass)" [ "$pass" = 0 ]
nodes_rate 0.02 1 $n_nodes --lenient
check "a healthy cluster at 2%, 3 runs per node, --lenient: passes in >= 90% of $n_nodes trials ($pass)" [ "$pass" -ge "$(at_least 90 $n_nodes)" ]
nodes_rate 0.02 1.10 $n_nodes
check "a node 10% slower at 2%: flagged in >= 95% of $n_nodes trials ($flagged)" [ "$flagged" -ge "$(at_least 95 $n_nodes)" ]
finish planted
