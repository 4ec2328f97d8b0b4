#!/usr/bin/env bash
# tests/cli/planted_test.sh: `report regress` against planted data of known truth (issue 14).
# Databases from tests/make_planted.c (run-to-run noise 2%: half shared by the run's cases, half
# per case; within a run AR(1) noise of 2% with lag-1 autocorrelation 0.5 and 2% outliers;
# 24 cases, 30 measured iterations), many trials per database, labelled tK-base / tK-cand.
#   planted_test.sh REPORT MAKE_PLANTED
# Prints the rates it measures (docs/performance.md, "Measurement validity", quotes them).
set -u
REPORT=$1
PLANTED=$2
source "$(dirname "$0")/lib.sh"

# rate DB TRIALS [regress options]: sets exit1, exit2 (how many trials exited 1, 2)
rate() {
	local db=$1 n=$2 k e
	shift 2
	exit1=0
	exit2=0
	for ((k = 0; k < n; k++)); do
		"$REPORT" regress --db "$db" --baseline-label "t$k-base" --candidate-label "t$k-cand" "$@" >/dev/null 2>&1
		e=$?
		[ "$e" = 1 ] && exit1=$((exit1 + 1))
		[ "$e" = 2 ] && exit2=$((exit2 + 1))
	done
	note "$(basename "$db") $*: exit 1 in $exit1 of $n trials, exit 2 in $exit2"
}

# A/A: 4 baseline runs and 1 candidate run of unchanged code, 200 trials: at most 5% exit 1.
check "A/A database" "$PLANTED" "$T/aa.db" --trials 200 --seed 11 base:4:1 cand:1:1
rate "$T/aa.db" 200
check "A/A, 4 baseline runs: exit 1 in <= 10 of 200 trials ($exit1)" [ "$exit1" -le 10 ]
check "A/A: never cannot-tell ($exit2)" [ "$exit2" = 0 ]
# the same with no threshold at all: any significant slowdown counts
rate "$T/aa.db" 200 --threshold 0
check "A/A, threshold 0: exit 1 in <= 10 of 200 trials ($exit1)" [ "$exit1" -le 10 ]

# A/A with one run a side: run-to-run noise cannot be measured; the assumed 2% (--run-noise)
# keeps the false alarms down (without it, 24 of 200 such trials exited 1 while developing).
check "one-run A/A database" "$PLANTED" "$T/one.db" --trials 100 --seed 16 base:1:1 cand:1:1
rate "$T/one.db" 100
check "A/A, one run a side: exit 1 in <= 5 of 100 trials ($exit1)" [ "$exit1" -le 5 ]

# Power: every case 5% slower, 8 baseline runs against 8 candidate runs (a --repeat 8 group),
# 1% threshold (at the default 5% a change of exactly 5% is not beyond it): >= 95% exit 1.
check "slowdown database" "$PLANTED" "$T/slow.db" --trials 100 --seed 12 base:8:1 cand:8:1.05
rate "$T/slow.db" 100 --threshold 1
check "5% slowdown, 8 vs 8 runs: exit 1 in >= 95 of 100 trials ($exit1)" [ "$exit1" -ge 95 ]

# A contended candidate (schema 9's cpu_wait): 50% slower while it waited for a CPU 34% of its
# time against the baseline's 1% -> contended, exit 2; the same slowdown with the waits alike, or
# with the baseline the one that waited, stays a regression (exit 1).
check "contention database" "$PLANTED" "$T/wait.db" --seed 31 base:4:1:0.01 cand:1:1.5:0.34 real:1:1.5:0.01 bwait:4:1:0.3 nowait:4:1
expect_status 2 "a slower candidate that waited for a CPU: exit 2" "$REPORT" regress --db "$T/wait.db" --baseline-label base --candidate-label cand --format csv
check "every case contended" [ "$(grep -c ',contended$' "$T/out")" = 24 ]
contains "$T/err" "up to 34% against 1%" "the waits named"
expect_status 1 "the same slowdown without the wait: exit 1" "$REPORT" regress --db "$T/wait.db" --baseline-label base --candidate-label real
expect_status 1 "the baseline waited, the candidate did not: still slower" "$REPORT" regress --db "$T/wait.db" --baseline-label bwait --candidate-label real
expect_status 1 "a baseline with no wait recorded (older runs): slower" "$REPORT" regress --db "$T/wait.db" --baseline-label nowait --candidate-label cand

# 2x at 5 iterations: exit 1, with one run a side (exact rank test) and with runs.
check "2x at 5 iterations" "$PLANTED" "$T/two.db" --iters 5 --seed 13 base:4:1 cand:1:2 one-base:1:1 one-cand:1:2
expect_status 1 "2x at 5 iterations, 4 baseline runs: exit 1" "$REPORT" regress --db "$T/two.db" --baseline-label base --candidate-label cand --format csv
check "every case slower" [ "$(grep -c ',slower$' "$T/out")" = 24 ]
expect_status 1 "2x at 5 iterations, one run a side: exit 1" "$REPORT" regress --db "$T/two.db" --baseline one-base --candidate one-cand
check "every case slower (one run)" [ "$(grep -c '| slower  |$' "$T/out")" = 24 ]
contains "$T/out" "ONE baseline run: the noise between runs is not measured" "a single baseline run says so"
check "4 iterations" "$PLANTED" "$T/four.db" --iters 4 --seed 14 base:4:1 cand:1:2
check "1 iteration" "$PLANTED" "$T/single.db" --iters 1 --cases 2 --seed 17 base:1:1 cand:1:1
expect_status 2 "one iteration a side: insufficient data, exit 2" "$REPORT" regress --db "$T/single.db" --baseline base --candidate cand --format csv
check "no interval from one sample" grep -q '^flash float32 fwd B8 H1 S256 D64,1/1,[0-9.]*,[0-9.]*,[-0-9.e]*,,,' "$T/out"
expect_status 2 "2x at 4 iterations: insufficient data, exit 2" "$REPORT" regress --db "$T/four.db" --baseline-label base --candidate-label cand
contains "$T/err" "cannot tell: insufficient data" "insufficient: reason printed"

# Selecting the baseline: a label, the last K of it, runs one by one; n shows iterations x runs.
check "selection database" "$PLANTED" "$T/sel.db" --cases 3 --seed 15 base:5:1 cand:2:1
expect_status 0 "baseline label, 2 candidate runs" "$REPORT" regress --db "$T/sel.db" --baseline-label base --candidate-label cand --format csv
contains "$T/out" ",30x5,30x2," "n: iterations x runs"
expect_status 0 "the last 3 baseline runs" "$REPORT" regress --db "$T/sel.db" --baseline-label base --baseline-last 3 --candidate-label cand
contains "$T/out" "vs baseline runs 3, 4, 5 " "the last 3 runs"
expect_status 0 "--baseline-last alone: the runs before the candidate" "$REPORT" regress --db "$T/sel.db" --baseline-last 2 --candidate 7
contains "$T/out" "run 7 vs baseline runs 5, 6 " "the 2 runs before run 7"
expect_status 0 "runs one by one" "$REPORT" regress --db "$T/sel.db" --baseline 1 --baseline 2 --candidate 6 --candidate 7
contains "$T/out" "runs 6, 7 vs baseline runs 1, 2 " "runs named one by one"
expect_status 0 "one baseline run, 2 candidate runs" "$REPORT" regress --db "$T/sel.db" --baseline 5 --candidate-label cand
contains "$T/out" "ONE baseline run: the spread between runs is estimated from the candidate" "one baseline run says so"
expect_status 2 "a label no run has" "$REPORT" regress --db "$T/sel.db" --baseline-label nosuch
contains "$T/err" "no run matches the baseline selection: no run is labelled nosuch" "unknown label named"
# one candidate run of a group interrupted: exit 1
sql "$T/sel.db" "UPDATE runs SET status = 'interrupted' WHERE id = 7"
expect_status 1 "a candidate group with an interrupted run" "$REPORT" regress --db "$T/sel.db" --baseline-label base --candidate-label cand
contains "$T/err" "candidate run 7 is interrupted, not complete" "interrupted run named"
finish planted
