#!/usr/bin/env bash
# tests/cli/damage_trials.sh: the randomized trials behind docs/reliability.md's issue-26 figures
# (the fixed checks are cli_damage_*): kill -9 of a shard run at random points and its resume
# without --shard; runs stopped by a file-size limit (SIGXFSZ) at many sizes; merges stopped by
# SIGTERM at random points. Prints one line per trial and the counts; exit 1 on a bad outcome.
#   damage_trials.sh RUNNER MAKE_FIXTURE [KILLS] [MERGE_STOPS]
set -u
RUNNER=$1
FIXTURE=$2
KILLS=${3:-20}
STOPS=${4:-10}
source "$(dirname "$0")/lib.sh"
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
sweep=$T/resume.yaml
cp "$SRC/tests/cli/resume.yaml" "$sweep"
ords() { sql "$1" "select group_concat(ord) from (select ord from cases order by ord)"; }

# ---- kill -9 of shard 0/2, resumed the README's way (no --shard), merged with shard 1/2 --------
"$RUNNER" run "$sweep" --shard 0/2 --group k --db "$T/ref0.db" >/dev/null 2>&1
"$RUNNER" run "$sweep" --shard 1/2 --group k --db "$T/ref1.db" >/dev/null 2>&1
want=$(ords "$T/ref0.db")
start=$(date +%s%N)
"$RUNNER" run "$sweep" --shard 0/2 --group k --db "$T/span.db" >/dev/null 2>&1
span=$((($(date +%s%N) - start) / 1000000))
RANDOM=26
resumed=0
for k in $(seq 1 "$KILLS"); do
	rm -f "$T"/k.db* "$T"/m.db*
	"$RUNNER" run "$sweep" --shard 0/2 --group k --db "$T/k.db" >/dev/null 2>&1 &
	pid=$!
	d=$((RANDOM % (span + 1)))
	sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	before=$(sql "$T/k.db" "select count(*) from cases" 2>/dev/null || echo 0)
	if [ "$(sql "$T/k.db" "select count(*) from runs" 2>/dev/null)" != 1 ]; then
		"$RUNNER" run "$sweep" --shard 0/2 --group k --db "$T/k.db" >/dev/null 2>&1   # killed before its run row
	elif [ "$(sql "$T/k.db" "select status from runs")" != complete ]; then
		resumed=$((resumed + 1))
		"$RUNNER" run "$sweep" --db "$T/k.db" --resume latest >/dev/null 2>&1
	fi
	"$RUNNER" merge --db "$T/m.db" "$T/k.db" "$T/ref1.db" >/dev/null 2>&1
	got="$(ords "$T/k.db") | $(sql "$T/k.db" "select status || ' ' || shard_index || '/' || shard_count from runs") | $(sql "$T/m.db" "select count(*) || ' ' || count(distinct case_key) from cases")"
	echo "kill $k at $d ms ($before cases stored): $got"
	check "kill $k: the shard's cases once, the run complete 0/2, merged 12 of 12" [ "$got" = "$want | complete 0/2 | 12 12" ]
done
note "shard kills: $KILLS, resumed mid-run: $resumed"

# ---- file-size limits from 20 to 200 KiB: a run that started ends interrupted ------------------
started=0
for lim in $(seq 20 8 200); do
	rm -f "$T"/x.db*
	(ulimit -f "$lim"; "$RUNNER" run "$sweep" --db "$T/x.db" >/dev/null 2>"$T/x.err")
	st=$?
	run=$(sql "$T/x.db" "select status from runs" 2>/dev/null)
	echo "limit $lim KiB: exit $st, run '${run}', $(grep -c . "$T/x.err") lines on stderr"
	if [ -n "$run" ]; then
		started=$((started + 1))
		check "limit $lim: the run ends interrupted (exit 130)" [ "$st/$run" = 130/interrupted ]
		check "limit $lim: each stored case whole" [ "$(sql "$T/x.db" "select count(*) from cases c where (select count(*) from samples s where s.case_id = c.id) != 2 * (c.warmup + c.iters)")" = 0 ]
	else
		check "limit $lim: no run row, exit 1 with the reason" [ "$st" = 1 ] && grep -q "x.db: " "$T/x.err"
	fi
done
note "file-size limits: 23, runs that got their run row: $started"

# ---- SIGTERM during merges: all of the input or nothing, no copy left ------------------------
"$FIXTURE" "$T/large.db" --cases 400 --iters 100 >/dev/null
sql "$T/large.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
all=$(sql "$T/large.db" "select count(*) from cases")
stopped=0
for k in $(seq 1 "$STOPS"); do
	rm -f "$T"/mi.db*
	"$RUNNER" merge --db "$T/mi.db" "$T/large.db" >/dev/null 2>&1 &
	pid=$!
	# from its temporary copy's appearance on (before, the program may still be loading)
	for _ in $(seq 1 600); do [ -n "$(ls -A "$TMPDIR")" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.02; done
	d=$((RANDOM % 3000))
	sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	st=$?
	[ "$st" = 130 ] && stopped=$((stopped + 1))
	n=$(sql "$T/mi.db" "select count(*) from cases")
	echo "merge stopped $d ms into its copy: exit $st, $n of $all cases, TMPDIR: $(ls -A "$TMPDIR" | wc -l) files"
	got="$st/$n/$(ls -A "$TMPDIR" | wc -l)"
	check "merge $k: all or nothing, no copy left ($got)" [ "$got" = "130/0/0" -o "$got" = "0/$all/0" ]
done
note "merges stopped: $STOPS, mid-way: $stopped"
finish damage_trials
