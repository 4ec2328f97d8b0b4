#!/usr/bin/env bash
# tests/cli/resume_test.sh: runs that end badly (issue 15, item 1): SIGKILL at random points, each
# resumed with `runner run --resume` (every case stored exactly once, integrity ok, the run
# `complete`); a dead run shown `abandoned` and ended by `runner close`; SIGHUP and SIGTERM end a
# run like SIGINT; a closed pipe drops the progress, not the sweep (issue 29); a resume refused when the sweep text differs, unless --force; a write lock held
# for longer than the old 10 s busy timeout is waited out (item 2).
#   resume_test.sh RUNNER REPORT MAKE_FIXTURE [KILLS]
set -u
RUNNER=$1
REPORT=$2
KILLS=${4:-${BENCHDB_RESUME_KILLS:-20}}
source "$(dirname "$0")/lib.sh"
sweep=$T/resume.yaml
cp "$SRC/tests/cli/resume.yaml" "$sweep"
ncases=$("$RUNNER" list "$sweep" | sed -n "1s/.*: \([0-9]*\) cases$/\1/p")
check "the sweep has 12 cases" [ "$ncases" = 12 ]

# How long a whole run takes here, to spread the kills over it.
db=$T/timing.db
start=$(date +%s%N)
expect_status 0 "a whole run" "$RUNNER" run "$sweep" --db "$db"
span_ms=$((($(date +%s%N) - start) / 1000000))
note "a whole run takes $span_ms ms; $KILLS kills spread over it"

# ---- SIGKILL at random points, then resume ---------------------------------------------------
RANDOM=15   # the kill points are the same on every run of the test
resumed=0
for k in $(seq 1 "$KILLS"); do
	db=$T/kill$k.db
	delay=$((RANDOM % (span_ms + 1)))
	"$RUNNER" run "$sweep" --db "$db" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ ! -s "$db" ] || [ "$(sql "$db" "select count(*) from runs" 2>/dev/null)" != 1 ]; then
		# killed before the run was stored: nothing to resume, a new run stores it
		expect_status 0 "kill $k at ${delay} ms (before the run row): a new run" "$RUNNER" run "$sweep" --db "$db"
	elif [ "$(sql "$db" "select status from runs")" = complete ]; then
		ok   # killed after the end
	else
		"$REPORT" runs --db "$db" --format csv >"$T/runs" 2>&1
		contains "$T/runs" ",abandoned," "kill $k at ${delay} ms: report runs says abandoned"
		expect_status 0 "kill $k at ${delay} ms: resume" "$RUNNER" run "$sweep" --db "$db" --resume latest
		contains "$T/out" "run 1 complete: 12 of 12 cases stored" "kill $k: the summary counts every case"
		resumed=$((resumed + 1))
	fi
	check "kill $k: one run" [ "$(sql "$db" "select count(*) from runs")" = 1 ]
	check "kill $k: run complete" [ "$(sql "$db" "select status from runs")" = complete ]
	check "kill $k: every case exactly once" \
		[ "$(sql "$db" "select count(*) || ' ' || count(distinct ord) || ' ' || min(ord) || ' ' || max(ord) from cases")" = "12 12 0 11" ]
	check "kill $k: every case has its samples" \
		[ "$(sql "$db" "select count(*) from cases c where c.status = 'ok' and (select count(*) from samples s where s.case_id = c.id) != 2 * (c.warmup + c.iters)")" = 0 ]
	check "kill $k: integrity ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
	check "kill $k: foreign keys ok" [ -z "$(sql "$db" "pragma foreign_key_check")" ]
done
note "kills: $KILLS, resumed mid-run: $resumed"

# A run held in the middle whatever this machine's speed (resume.yaml takes 0.2 s on a quiet
# 2-core machine, less than the polling can catch): midrun.yaml's 16 cases of a few tenths of a
# second each (oneDNN's products, as quick under ASan), the runner stopped (SIGSTOP: alive, not
# moving) once it has stored a case. Sets pid.
slow=$T/midrun.yaml
cp "$SRC/tests/cli/midrun.yaml" "$slow"
start_held() {
	"$RUNNER" run "$2" --db "$1" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 600); do [ "$(sql "$1" "select count(*) from cases" 2>/dev/null)" -ge 1 ] 2>/dev/null && break; sleep 0.02; done
	kill -STOP "$pid"
}
check "the slow sweep has 16 cases" [ "$("$RUNNER" list "$slow" | sed -n "1s/.*: \([0-9]*\) cases$/\1/p")" = 16 ]

# ---- runner close -----------------------------------------------------------------------------
db=$T/close.db
start_held "$db" "$slow"
check "the held run is in the middle" [ "$(sql "$db" "select status || ' ' || ((select count(*) from cases) < 16) from runs")" = "running 1" ]
expect_status 1 "close refuses a live run" "$RUNNER" close 1 --db "$db"
contains "$T/err" "is alive" "close says the run is alive"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
expect_status 0 "close a dead run" "$RUNNER" close 1 --db "$db"
contains "$T/out" "run 1 closed: interrupted" "close says what it did"
check "closed run is interrupted" [ "$(sql "$db" "select status from runs")" = interrupted ]
check "closed run ended at its heartbeat" [ "$(sql "$db" "select ended_at = heartbeat_at from runs")" = 1 ]
expect_status 1 "close refuses a run that is not running" "$RUNNER" close 1 --db "$db"
expect_status 0 "an interrupted run resumes too" "$RUNNER" run "$slow" --db "$db" --resume 1
check "resumed closed run complete" [ "$(sql "$db" "select runs.status || count(*) from runs join cases on cases.run_id = runs.id")" = complete16 ]
expect_status 2 "a complete run is not resumed" "$RUNNER" run "$slow" --db "$db" --resume 1
contains "$T/err" "run 1 is complete: nothing to resume" "complete run message"

# ---- a runner with the pid of the one that died (a container with a fixed host name starts its
# runner with the same pid each time): close and resume are not refused by their own pid ---------
db=$T/samepid.db
"$RUNNER" run "$sweep" --db "$db" >/dev/null 2>&1
sql "$db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord >= 4; UPDATE runs SET status = 'running'"
# exec keeps the shell's pid: the run's recorded runner is the process that looks at it
expect_status 0 "close a run whose dead runner had this pid" \
	sh -c 'sqlite3 "$1" "UPDATE runs SET pid = $$"; exec "$2" close 1 --db "$1"' sh "$db" "$RUNNER"
contains "$T/out" "run 1 closed: interrupted \(its runner \(pid [0-9]+ on .*\) is gone\)" "close: the runner is gone"
sql "$db" "UPDATE runs SET status = 'running', ended_at = NULL"
expect_status 0 "resume a run whose dead runner had this pid" \
	sh -c 'sqlite3 "$1" "UPDATE runs SET pid = $$"; exec "$2" run "$3" --db "$1" --resume latest' sh "$db" "$RUNNER" "$sweep"
check "the run resumed to complete" [ "$(sql "$db" "select status || ' ' || (select count(*) from cases) from runs")" = "complete 12" ]

# ---- several resumes of one run at once: one takes it over, the others find it running -----------
# Four resumers start while another process holds the write lock, so that they reach the run
# together; each once looked at the run, found it not running and took it over, so that two or
# more measured its missing cases (one failing on a UNIQUE constraint, a `failed` end written over
# the run, two resumes recorded). The interleaving is the scheduler's: 8 rounds, where without the
# look and the takeover in one transaction about half the rounds had two resumers.
for round in $(seq 1 8); do
	db=$T/together$round.db
	"$RUNNER" run "$sweep" --db "$db" >/dev/null 2>&1
	sql "$db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord >= 4; UPDATE runs SET status = 'interrupted'"
	sqlite3 -batch "$db" "BEGIN IMMEDIATE; SELECT 1;" ".shell sleep 1" "COMMIT;" >/dev/null &
	holder=$!
	sleep 0.3
	pids=()
	for k in 1 2 3 4; do
		"$RUNNER" run "$sweep" --db "$db" --resume latest >"$T/together$k.out" 2>"$T/together$k.err" &
		pids+=($!)
	done
	statuses=""
	for pid in "${pids[@]}"; do
		wait "$pid"
		statuses="$statuses $?"
	done
	wait "$holder"
	check "round $round: one resume exits 0, three are refused with 2 (got$statuses)" \
		[ "$(echo $statuses | tr ' ' '\n' | sort | paste -sd' ')" = "0 2 2 2" ]
	check "round $round: one resume recorded" [ "$(sql "$db" "select length(resumes) - length(replace(resumes, char(10), '')) from runs")" = 0 ]
	check "round $round: the run complete with its 12 cases" \
		[ "$(sql "$db" "select status || ' ' || (select count(*) from cases) from runs")" = "complete 12" ]
done
cat "$T"/together[1-4].err >"$T/err"
contains "$T/err" "run 1 is still running \(its runner \(pid [0-9]+ on .*\) is alive\); pass --force" "a refused resume says who runs it"

# ---- the sweep must match ---------------------------------------------------------------------
db=$T/differ.db
start_held "$db" "$slow"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
sed 's/iters: 10/iters: 11/' "$slow" >"$T/changed.yaml"
expect_status 2 "resume refuses another sweep text" "$RUNNER" run "$T/changed.yaml" --db "$db" --resume 1
contains "$T/err" "cannot resume run 1: the sweep text differs" "sweep text difference named"
contains "$T/err" "pass --force" "the way around named"
check "refusal leaves the run as it was" [ "$(sql "$db" "select status from runs")" = running ]
expect_status 0 "--force resumes it" "$RUNNER" run "$T/changed.yaml" --db "$db" --resume 1 --force
check "forced resume complete, each case once" [ "$(sql "$db" "select status || ' ' || (select count(distinct ord) || '/' || count(*) from cases) from runs")" = "complete 16/16" ]

# ---- SIGHUP and SIGTERM end a run like SIGINT ----------------------------------------------------
# (midrun.yaml: cases of a few tenths of a second, under ASan too; the runner held (SIGSTOP) once
# it has stored a case, signalled, then let go: the signal lands mid-run however fast the machine)
midrun=$SRC/tests/cli/midrun.yaml
for sig in HUP TERM INT; do
	db=$T/sig$sig.db
	"$RUNNER" run "$midrun" --db "$db" >/dev/null 2>"$T/sig$sig.err" &
	pid=$!
	for _ in $(seq 1 600); do [ "$(sql "$db" "select count(*) from cases" 2>/dev/null)" -ge 1 ] 2>/dev/null && break; sleep 0.02; done
	kill -STOP "$pid"
	kill -$sig "$pid"
	kill -CONT "$pid"
	wait "$pid"
	st=$?
	check "SIG$sig: exit 130 (got $st; $(tail -c 300 "$T/sig$sig.err"))" [ "$st" = 130 ]
	check "SIG$sig: run interrupted" [ "$(sql "$db" "select status from runs")" = interrupted ]
done
# A closed pipe (issue 29): the progress output's reader goes away after its first line; the
# progress is dropped and the sweep goes on to the end (the summary says so); with
# --stop-on-closed-output the run ends interrupted as on SIGINT.
db=$T/sigpipe.db
( "$RUNNER" run "$midrun" --db "$db" 2>&1 >"$T/pipe_out"; echo "$?" >"$T/pipe_status" ) | head -n 1 >/dev/null
check "closed stderr: exit 0 (got $(cat "$T/pipe_status"))" [ "$(cat "$T/pipe_status")" = 0 ]
check "closed stderr: run complete, every case stored" [ "$(sql "$db" "select status || ' ' || (select count(*) from cases) from runs")" = "complete 16" ]
contains "$T/pipe_out" "progress: stderr could not be written from case [0-9]+ of 16 on" "the summary says the progress was dropped"
( "$RUNNER" run "$SRC/tests/cli/tiny.yaml" --db "$T/stdout_closed.db"; echo "$?" >"$T/pipe_status" ) 2>/dev/null | head -c 0
check "closed stdout: exit 0 (got $(cat "$T/pipe_status"))" [ "$(cat "$T/pipe_status")" = 0 ]
check "closed stdout: run complete" [ "$(sql "$T/stdout_closed.db" "select status from runs")" = complete ]
db=$T/sigpipe_stop.db
( "$RUNNER" run "$midrun" --db "$db" --stop-on-closed-output 2>&1 >/dev/null; echo "$?" >"$T/pipe_status" ) | head -n 1 >/dev/null
check "--stop-on-closed-output: exit 130 (got $(cat "$T/pipe_status"))" [ "$(cat "$T/pipe_status")" = 130 ]
check "--stop-on-closed-output: run interrupted, not left running" [ "$(sql "$db" "select status from runs")" = interrupted ]
check "--stop-on-closed-output: the cases stored are whole" [ "$(sql "$db" "pragma integrity_check")" = ok ]
# ---- a held write lock: the runner waits (issue 15, item 2: it gave up after 10 s and left
# the rest of the sweep unrun) ---------------------------------------------------------------
db=$T/busy.db
expect_status 0 "a first run makes the file" "$RUNNER" run "$SRC/tests/cli/tiny.yaml" --db "$db"
sqlite3 "$db" "BEGIN IMMEDIATE; UPDATE runs SET label = 'held';" ".shell sleep 14" "COMMIT;" >/dev/null &
holder=$!
sleep 0.5
expect_status 0 "a run waits out a 14 s write lock" "$RUNNER" run "$sweep" --db "$db"
wait "$holder"
check "the waiting run stored every case" [ "$(sql "$db" "select status || ' ' || (select count(*) from cases where run_id = 2) from runs where id = 2")" = "complete 12" ]
finish resume
