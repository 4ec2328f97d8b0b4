#!/usr/bin/env bash
# tests/cli/changes_test.sh: `report changes` on planted histories of known truth
# (tests/make_planted.c: 4 cases per run, run-to-run noise 3%, runs in the order of the groups,
# each run a session of its own (RUNSt): a night each).
#   changes_test.sh REPORT MAKE_PLANTED
set -u
REPORT=$1
PLANTED=$2
source "$(dirname "$0")/lib.sh"

planted() { local db=$1; shift; "$PLANTED" "$db" --cases 4 --between 0.03 "$@" >/dev/null; }

# A 10% step 8 runs before the newest run of the nightly history, a pull request's slower run
# after it (label pr-7), then one more nightly run: every case slower since the first slow run.
check "step history" planted "$T/step.db" --seed 5 nightly:40t:1 nightly:8t:1.10 pr-7:1t:1.3 nightly:1t:1.1
expect_status 1 "a slower segment among the newest runs: exit 1" "$REPORT" changes --db "$T/step.db" --label nightly --format csv
check "csv header" [ "$(head -1 "$T/out")" = "case_key,case,host,run,started,commit,before_ms,after_ms,change_%,ci_lo_%,ci_hi_%,p,verdict" ]
check "one change point per case, at run 41, slower by about 10%" awk -F, '
	NR > 1 && NF == 13 { n++; if ($4 == 41 && $13 == "slower" && $9 > 6 && $9 < 14 && $10 < 10 && $11 > 10) good++ }
	END { exit !(n == 4 && good == 4) }' "$T/out"
contains "$T/err" "slower: 'flash float32 fwd B8 H1 S256 D64' on planted-host, \+[0-9.]+% since run 41" "stderr names the case"
check "the newest table says slower" [ "$(grep -c ',slower +' "$T/out")" = 4 ]
expect_status 1 "markdown: the verdict first" "$REPORT" changes --db "$T/step.db" --label nightly
check "first line is the verdict" [ "$(head -c 12 "$T/out")" = "**SLOWER**: " ]
contains "$T/out" "cases of runs outside --label nightly left out" "the pull request's run is named as left out"
expect_status 1 "summary (a nightly job's)" "$REPORT" changes --db "$T/step.db" --label nightly --format summary
check "summary: the marker, then the verdict" [ "$(sed -n 1,2p "$T/out")" = "$(printf '<!-- benchdb: report changes -->\n### ❌ SLOWER')" ]
check "summary: the four slower cases open, the change points folded" [ "$(sed '/^<details>/q' "$T/out" | grep -c '| slower +')" = 4 ] && [ "$(sed -n '/^<details>/,$p' "$T/out" | grep -c ' | slower *|$')" = 4 ]
expect_status 1 "json" "$REPORT" changes --db "$T/step.db" --label nightly --format json
check "json parses" python3 -m json.tool "$T/out" >/dev/null
expect_status 1 "--last 20 keeps the step" "$REPORT" changes --db "$T/step.db" --label nightly --last 20 --format csv
check "the change point with 20 runs, within 3 runs of 41" awk -F, '
	NR > 1 && NF == 13 && $4 >= 38 && $4 <= 44 && $13 == "slower" { good++ } END { exit good != 4 }' "$T/out"
expect_status 0 "--recent 5: the step is older than the newest 5 runs" "$REPORT" changes --db "$T/step.db" --label nightly --recent 5
expect_status 2 "no run has the label" "$REPORT" changes --db "$T/step.db" --label nope
contains "$T/err" "no case matches --label nope" "says what matched nothing"
# A database that is missing, not SQLite or not benchdb's is a usage error (2, as regress and
# nodes say it), never the gate's "newest runs slower" (1)
printf 'not a database\n' >"$T/garbage.db"
sqlite3 "$T/foreign.db" 'CREATE TABLE t (x)'
for bad in missing garbage foreign; do
	expect_status 2 "a $bad database: exit 2" "$REPORT" changes --db "$T/$bad.db" --label nightly
	contains "$T/err" "$bad.db: (no such database|not a benchdb database)" "$bad database: named, with the reason"
done

# A table damaged after the database opened (the stored noise sessions unreadable) is "cannot
# tell" (2, as regress says it), never the gate's "newest runs slower" (1): a steady history here.
check "steady history" planted "$T/steady.db" --seed 6 nightly:20t:1
cp "$T/steady.db" "$T/damaged.db"
sql "$T/damaged.db" "ALTER TABLE noise_sessions RENAME COLUMN mean_log TO damaged"
expect_status 2 "unreadable noise sessions: exit 2" "$REPORT" changes --db "$T/damaged.db"
contains "$T/err" "cannot read the stored noise sessions" "the reason on stderr"
expect_status 0 "the same history undamaged: exit 0" "$REPORT" changes --db "$T/steady.db"

# A case ok in the newest run with no measured samples (they were lost) is not in its series, whose
# older runs read steady: cannot tell (2, as regress says it), never a pass (0).
cp "$T/steady.db" "$T/unmeasured.db"
sql "$T/unmeasured.db" "DELETE FROM samples WHERE case_id IN (SELECT id FROM cases WHERE run_id = 20 AND seq_len = 320)"
expect_status 2 "a newest run with no samples of a case: exit 2" "$REPORT" changes --db "$T/unmeasured.db"
contains "$T/err" "cannot tell: 'flash float32 fwd B8 H1 S320 D64' on planted-host is ok in run 20 with no measured samples" "names the case and the run"
contains "$T/out" "run 20: no measured samples" "the newest table says so"
expect_status 2 "... summary: the case shown" "$REPORT" changes --db "$T/unmeasured.db" --format summary
check "summary: cannot tell, the case open" [ "$(sed -n 2p "$T/out")" = "### ⚠️ CANNOT TELL" ] && [ "$(sed '/^<details>/q' "$T/out" | grep -c 'S320.*no measured samples')" = 1 ]
# report history shows that run's row ok with no median: its notes say why
expect_status 0 "history of the case" "$REPORT" history --db "$T/unmeasured.db" --where seq_len=320 --last 3
contains "$T/out" "ok with no measured samples \(total\): no median, no step — run 20$" "history names the run without samples"

# The label filter keeps a pull request's runs out of the nightly history: four slow pr runs at the
# end are a slower segment of the unfiltered history, and no change of the nightly one.
check "pull request history" planted "$T/pr.db" --seed 6 nightly:45t:1 pr-9:4t:1.3
expect_status 1 "unfiltered: the pr runs look like a slower segment" "$REPORT" changes --db "$T/pr.db"
expect_status 0 "--label nightly: steady" "$REPORT" changes --db "$T/pr.db" --label nightly --format csv
check "no change point" [ "$(awk -F, 'NF == 13 && NR > 1' "$T/out" | wc -l)" = 0 ]
check "all steady" [ "$(grep -c ',steady (no change in 10 runs)$' "$T/out")" = 4 ]
# report history takes the same run filters: the nightly runs alone, or the last N of them
expect_status 0 "history --label nightly" "$REPORT" history --db "$T/pr.db" --label nightly --where seq_len=256 --format csv
check "history --label: the 45 nightly runs, no pr run" [ "$(awk -F, 'NR > 1' "$T/out" | wc -l)" = 45 ] && [ "$(awk -F, 'NR > 1 && $2 > 45' "$T/out" | wc -l)" = 0 ]
contains "$T/err" "4 cases of runs outside --label nightly left out" "history says what the label left out"
expect_status 0 "history without --label" "$REPORT" history --db "$T/pr.db" --where seq_len=256 --format csv
check "history unfiltered: 49 runs" [ "$(awk -F, 'NR > 1' "$T/out" | wc -l)" = 49 ]
expect_status 0 "history --label nightly --last 10" "$REPORT" history --db "$T/pr.db" --label nightly --last 10 --where seq_len=256 --format csv
check "history --last 10: the newest 10 nightly runs (36-45)" [ "$(awk -F, 'NR > 1 { print $2 }' "$T/out" | paste -sd' ')" = "36 37 38 39 40 41 42 43 44 45" ]
expect_status 1 "history of a label no run has" "$REPORT" history --db "$T/pr.db" --label nope --where seq_len=256
contains "$T/err" "no case of any run --label nope matches" "the label named"
# An interrupted newest run that lacks a case fails that case (exit 1) however the case is picked:
# --case and --where pick the series, never which run is the newest (they read it as steady, 0).
cp "$T/pr.db" "$T/cut.db"
sql "$T/cut.db" "UPDATE runs SET status = 'interrupted' WHERE id = 45;
	DELETE FROM cases WHERE run_id = 45 AND seq_len = 448"
cut_key=$(sql "$T/cut.db" "SELECT case_key FROM cases WHERE run_id = 44 AND seq_len = 448")
expect_status 1 "a case missing from the interrupted newest run: exit 1" "$REPORT" changes --db "$T/cut.db" --label nightly
contains "$T/err" "missing: 'flash float32 fwd B8 H1 S448 D64' on planted-host from run 45, which is interrupted" "names the missing case"
expect_status 1 "... asked about alone with --case: exit 1" "$REPORT" changes --db "$T/cut.db" --label nightly --case "$cut_key"
contains "$T/err" "missing: 'flash float32 fwd B8 H1 S448 D64' on planted-host from run 45" "--case: names the missing case"
expect_status 1 "... with --where: exit 1" "$REPORT" changes --db "$T/cut.db" --label nightly --where seq_len=448
expect_status 0 "a case the interrupted run has: steady, exit 0" "$REPORT" changes --db "$T/cut.db" --label nightly --where seq_len=256
# ... and a newest run interrupted before it stored any case (the runner killed in its first
# case) measured none of them: every case fails, as regress fails that run (it read steady, 0)
cp "$T/pr.db" "$T/empty.db"
sql "$T/empty.db" "INSERT INTO runs (uuid, system_id, started_at, status, git_commit, git_dirty,
	git_branch, tool_version, command_line, sweep_path, sweep_name, sweep_text, sweep_hash, label,
	env) SELECT 'killed-run', system_id, '2027-01-01T00:00:00.000Z', 'interrupted', git_commit,
	git_dirty, git_branch, tool_version, command_line, sweep_path, sweep_name, sweep_text,
	sweep_hash, label, env FROM runs WHERE id = 45"
expect_status 1 "a newest run interrupted before its first case: exit 1" "$REPORT" changes --db "$T/empty.db" --label nightly
check "every case missing from it" [ "$(grep -c "missing: .* from run 50, which is interrupted (ok in run 45)" "$T/err")" = 4 ]
sql "$T/empty.db" "UPDATE runs SET label = 'pr-10' WHERE uuid = 'killed-run'"
expect_status 0 "... a pull request's run so is not the nightly's newest: exit 0" "$REPORT" changes --db "$T/empty.db" --label nightly
# A nightly of two sweeps, a run each: a case is read against its own sweep's runs. Another
# sweep's newest run, interrupted, measured none of these cases (they read missing from it, exit
# 1); this sweep's run interrupted before the other sweep's complete one still fails the case it
# lacks (the complete run, newest, hid it: exit 0).
other_run() {   # other_run DB STATUS: a newest run of sweep 'e2e', no case stored
	sql "$1" "INSERT INTO runs (uuid, system_id, started_at, status, git_commit, git_dirty,
		git_branch, tool_version, command_line, sweep_path, sweep_name, sweep_text, sweep_hash,
		label, env) SELECT 'e2e-run', system_id, '2027-01-01T00:00:00.000Z', '$2', git_commit,
		git_dirty, git_branch, tool_version, command_line, 'e2e.yaml', 'e2e', sweep_text,
		sweep_hash, label, env FROM runs WHERE id = 45"
}
cp "$T/pr.db" "$T/sweeps.db"
other_run "$T/sweeps.db" interrupted
expect_status 0 "another sweep's interrupted newest run: not this sweep's cases' failure, exit 0" "$REPORT" changes --db "$T/sweeps.db" --label nightly
lacks "$T/err" "missing" "no case called missing"
cp "$T/cut.db" "$T/sweeps2.db"
other_run "$T/sweeps2.db" complete
expect_status 1 "this sweep's interrupted run before another sweep's complete one: exit 1" "$REPORT" changes --db "$T/sweeps2.db" --label nightly
contains "$T/err" "missing: 'flash float32 fwd B8 H1 S448 D64' on planted-host from run 45, which is interrupted" "names the missing case"
# the same for the shards of a sweep on one host: slice 1's interrupted run does not measure slice
# 0's cases (they read missing from it, exit 1)
cp "$T/pr.db" "$T/shardcut.db"
sql "$T/shardcut.db" "UPDATE runs SET shard_index = 0, shard_count = 2 WHERE id <= 44;
	UPDATE runs SET shard_index = 1, shard_count = 2, status = 'interrupted' WHERE id = 45;
	DELETE FROM cases WHERE run_id = 45 AND seq_len IN (256, 320)"
expect_status 0 "another shard's interrupted newest run: exit 0" "$REPORT" changes --db "$T/shardcut.db" --label nightly
lacks "$T/err" "missing" "no case called missing"
expect_status 0 "summary of a steady history" "$REPORT" changes --db "$T/pr.db" --label nightly --format summary
check "summary: passed, no table before the details" [ "$(sed -n 2p "$T/out")" = "### ✅ no new slower segment" ] && [ "$(sed '/^<details>/q' "$T/out" | grep -c '^|')" = 0 ]

# A/A: 60 runs of unchanged code, no change point; a lone slow newest run is not one either.
check "A/A history with a spike at the end" planted "$T/aa.db" --seed 7 nightly:59t:1 nightly:1t:1.6
expect_status 0 "A/A and a one-run spike: exit 0" "$REPORT" changes --db "$T/aa.db" --format csv
check "no change point" [ "$(awk -F, 'NF == 13 && NR > 1' "$T/out" | wc -l)" = 0 ]
check "the spike named, not called a change" [ "$(grep -cE 'newest run \+[0-9.]+%: one run is not a change point$' "$T/out")" = 4 ]

# Contention: the newest runs 30% slower while they waited for a CPU 40% of their time: contended,
# exit 2, not slower.
check "contended history" planted "$T/wait.db" --seed 8 nightly:30t:1:0.01 nightly:6t:1.3:0.4
expect_status 2 "a contended newest change: exit 2" "$REPORT" changes --db "$T/wait.db" --format csv
check "every change contended" [ "$(grep -c ',contended$' "$T/out")" = 4 ]
check "no case slower" [ "$(grep -c 'slower' "$T/out")" = 0 ]
check "the same slowdown without the wait" planted "$T/nowait.db" --seed 8 nightly:30t:1:0.01 nightly:6t:1.3:0.01
expect_status 1 "without the wait: exit 1" "$REPORT" changes --db "$T/nowait.db"
# The older runs waited for a CPU 10% of their time, the newest 6 (30% slower) did not: the side
# that looks slower was quiet, so it is a slowdown (exit 1), not contended.
check "the older runs busy, the slower newest quiet" planted "$T/oldwait.db" --seed 8 nightly:30t:1:0.10 nightly:6t:1.3:0
expect_status 1 "a quiet slower segment after busy runs: slower, exit 1" "$REPORT" changes --db "$T/oldwait.db" --format csv
check "every change slower, none contended" [ "$(grep -c ',slower$' "$T/out")" = 4 ] && [ "$(grep -c 'contended' "$T/out")" = 0 ]

# Contention that has ended: runs 31-38 waited for a CPU 40% of their time (30% slower), runs
# 39-46 did not. The newest change (39, faster) is contended, by the runs before it; it held the
# verdict at "cannot tell" (2) for --recent nights though today's runs are quiet. They are judged
# against the quiet runs before the contention (1-30): unchanged code is steady (exit 0); code 10%
# slower, hidden by the contention, is slower (exit 1; it read 2, then 0 once the window moved).
check "contention ended, code unchanged" planted "$T/ended.db" --seed 8 nightly:30t:1:0.01 nightly:8t:1.3:0.4 nightly:8t:1:0.01
expect_status 0 "contention ended, the newest runs quiet and steady: exit 0" "$REPORT" changes --db "$T/ended.db"
check "every case steady against the quiet runs" [ "$(grep -c '| steady against runs 1-30 (the newest change is contention ending) *|' "$T/out")" = 4 ]
check "... the changes still contended" [ "$(grep -c '| contended *|$' "$T/out")" = 8 ]
check "contention ended, code 10% slower" planted "$T/hidden.db" --seed 8 nightly:30t:1:0.01 nightly:8t:1.4:0.4 nightly:8t:1.1:0.01
expect_status 1 "a slowdown the contention hid: exit 1" "$REPORT" changes --db "$T/hidden.db"
check "every case slower against the quiet runs" [ "$(grep -cE '\| slower \+([5-9]|1[0-5])\.[0-9]% against runs 1-30' "$T/out")" = 4 ]
contains "$T/err" "slower: 'flash float32 fwd B8 H1 S256 D64' on planted-host, \+[0-9.]+% since run 39, against the runs before contention" "stderr names it"
# the newest runs slower than the quiet ones and waiting more than they did: contended, 2
check "contention still on, less of it" planted "$T/lesswait.db" --seed 8 nightly:30t:1:0.01 nightly:8t:1.4:0.4 nightly:8t:1.1:0.2
expect_status 2 "the newest runs waited and are slower than the quiet ones: cannot tell" "$REPORT" changes --db "$T/lesswait.db"
# no quiet runs before the contention: nothing to judge against, 2
check "contended from the first run" planted "$T/firstwait.db" --seed 8 nightly:8t:1.3:0.4 nightly:8t:1:0.01
expect_status 2 "contention from the first run, then quiet: cannot tell" "$REPORT" changes --db "$T/firstwait.db"
# on 10 trials each (40 series): the hidden 10% slowdown is found in every one (no false pass),
# and no series of unchanged code is called slower
check "10 trials, hidden slowdown" planted "$T/hidden10.db" --trials 10 --seed 12 nightly:30t:1:0.01 nightly:8t:1.4:0.4 nightly:8t:1.1:0.01
expect_status 1 "10 trials: exit 1" "$REPORT" changes --db "$T/hidden10.db" --format csv
check "every series slower" [ "$(grep -cE ',slower \+[0-9.]+% against runs [0-9]+-[0-9]+ ' "$T/out")" = 40 ]
check "10 trials, code unchanged" planted "$T/ended10.db" --trials 10 --seed 12 nightly:30t:1:0.01 nightly:8t:1.3:0.4 nightly:8t:1:0.01
expect_status 0 "10 trials unchanged: exit 0" "$REPORT" changes --db "$T/ended10.db" --format csv
check "no series slower" [ "$(grep -c ',slower ' "$T/out")" = 0 ]

# Two change points among the newest runs: 60% slower, then back by a quarter — the newest runs
# are still about 20% slower than before the window (--recent 20 holds both). The newest change
# alone says faster; the window began a slower segment: exit 1, with the net change, since the
# first slow run. A full recovery (back to 1.0) is no slower segment; a net slowdown whose newest
# runs waited for a CPU is contended.
check "slower, then partly back" planted "$T/back.db" --between 0.01 --seed 1 nightly:30t:1 nightly:10t:1.6 nightly:10t:1.2
expect_status 1 "a slowdown partly undone within the window: exit 1" "$REPORT" changes --db "$T/back.db" --recent 20
contains "$T/err" "slower: 'flash float32 fwd B8 H1 S256 D64' on planted-host, \+(1[5-9]|2[0-5])\.[0-9]% since run 31" "the net change since the first slow run"
check "every case slower by the net change" [ "$(grep -cE '\| slower \+(1[5-9]|2[0-5])\.[0-9]% *\|' "$T/out")" = 4 ]
check "slower, then fully back" planted "$T/undone.db" --between 0.01 --seed 1 nightly:30t:1 nightly:10t:1.6 nightly:10t:1.0
expect_status 0 "a slowdown undone within the window: no new slower segment" "$REPORT" changes --db "$T/undone.db" --recent 20
check "slower, then partly back, waiting for a CPU" planted "$T/backwait.db" --between 0.01 --seed 1 nightly:30t:1:0.01 nightly:10t:1.6:0.01 nightly:10t:1.2:0.4
expect_status 2 "... whose newest runs waited for a CPU: contended" "$REPORT" changes --db "$T/backwait.db" --recent 20

# A case dropped from the sweep right after it got slower: the newest complete runs of its sweep
# no longer have it. Its last change (slower) stayed within its own newest 10 runs forever, and
# every night failed (exit 1) though nothing left to run could clear it. It is no longer run: no
# verdict, neither failure nor pass; the cases still run are judged (steady here: exit 0).
check "a case slower, then dropped" planted "$T/gone.db" --seed 5 nightly:40t:1 nightly:10t:1
sql "$T/gone.db" "UPDATE samples SET ns = CAST(ns * 1.15 AS INTEGER) WHERE case_id IN
	(SELECT id FROM cases WHERE run_id BETWEEN 41 AND 48 AND seq_len = 448)"
cp "$T/gone.db" "$T/still.db"
sql "$T/gone.db" "DELETE FROM cases WHERE run_id IN (49, 50) AND seq_len = 448"
expect_status 1 "control: the slower case still run: exit 1" "$REPORT" changes --db "$T/still.db" --label nightly
contains "$T/err" "slower: 'flash float32 fwd B8 H1 S448 D64' on planted-host, \+1[0-9]\.[0-9]% since run 41" "the planted slowdown found"
expect_status 0 "dropped from the sweep after it got slower: no failure, exit 0" "$REPORT" changes --db "$T/gone.db" --label nightly
contains "$T/out" "S448 D64 .* no longer run: not in run 49 \(complete\) nor after" "the newest table says no longer run"
contains "$T/out" "3 steady, 0 with too few runs, 1 no longer run" "counted as no longer run"
expect_status 2 "asked about the dropped case alone: cannot tell, exit 2" "$REPORT" changes --db "$T/gone.db" --label nightly --where seq_len=448
contains "$T/err" "cannot tell: of the 1 cases matched, 1 are no longer run" "says why"
# newer runs of another sweep (a nightly of two sweeps) do not drop a case: the slowdown fails
cp "$T/gone.db" "$T/two.db"
sql "$T/two.db" "UPDATE runs SET sweep_name = 'other' WHERE id IN (49, 50)"
expect_status 1 "runs of another sweep lack it: still slower, exit 1" "$REPORT" changes --db "$T/two.db" --label nightly --where seq_len=448
# ... nor do newer runs of another shard of the sweep (--shard, on the same host): slice 0 had the
# case up to run 48, runs 49-50 are slice 1's: the slowdown fails
cp "$T/gone.db" "$T/shards.db"
sql "$T/shards.db" "UPDATE runs SET shard_index = 0, shard_count = 2 WHERE id <= 48;
	UPDATE runs SET shard_index = 1, shard_count = 2 WHERE id > 48"
expect_status 1 "another shard's runs lack it: still slower, exit 1" "$REPORT" changes --db "$T/shards.db" --label nightly
contains "$T/err" "slower: 'flash float32 fwd B8 H1 S448 D64' on planted-host" "names the slower case"
# a newest run that is not complete does not drop it: missing from it, exit 1
cp "$T/gone.db" "$T/cutgone.db"
sql "$T/cutgone.db" "UPDATE runs SET status = 'interrupted' WHERE id IN (49, 50)"
expect_status 1 "missing from runs not complete: exit 1" "$REPORT" changes --db "$T/cutgone.db" --label nightly --where seq_len=448
contains "$T/err" "missing: 'flash float32 fwd B8 H1 S448 D64' on planted-host from run 50, which is interrupted" "named missing"
# a case that failed (error) in its last run and was dropped afterwards fails no more either
cp "$T/gone.db" "$T/errgone.db"
sql "$T/errgone.db" "UPDATE cases SET status = 'error', reason = 'planted' WHERE run_id = 48 AND seq_len = 448"
cp "$T/errgone.db" "$T/err48.db"
sql "$T/err48.db" "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id IN (49, 50)"
expect_status 1 "control: error in the newest run: exit 1" "$REPORT" changes --db "$T/err48.db" --label nightly
contains "$T/err" "error: 'flash float32 fwd B8 H1 S448 D64' on planted-host in run 48" "the error named"
expect_status 0 "error, then dropped from the sweep: exit 0" "$REPORT" changes --db "$T/errgone.db" --label nightly

# Too short to tell: 4 runs (a change point needs 3 on each side).
check "short history" planted "$T/short.db" --seed 9 nightly:4t:1
expect_status 2 "too few runs: exit 2" "$REPORT" changes --db "$T/short.db" --format csv
check "every case too few runs" [ "$(grep -c ',too few runs$' "$T/out")" = 4 ]

# Usage errors.
expect_status 2 "--min-segment 1" "$REPORT" changes --db "$T/step.db" --min-segment 1
expect_status 2 "--alpha 2" "$REPORT" changes --db "$T/step.db" --alpha 2
# 10 / alpha permutations do not fit their count: it wrapped round, the test could never reach
# alpha, and the 10% step passed (exit 0)
# Runs of one session (`runner run --repeat 3` each night: one group) share that night's state of
# the machine: taken as independent runs they made an A/A history's change points several times
# alpha. Each session now counts once: its runs' mean is a point of the test, --recent and
# --min-segment count sessions. Here three quarters of the run-to-run variance is the session's.
nights() { local n=$1 runs=$2 factor=$3; for ((i = 0; i < n; i++)); do printf 'nightly:%s:%s ' "$runs" "$factor"; done; }
check "A/A, 20 nights of 3 runs, 10 trials" planted "$T/sess.db" --trials 10 --session 0.75 --seed 21 $(nights 20 3 1)
expect_status 0 "... exit 0" "$REPORT" changes --db "$T/sess.db" --format csv
aa_points=$(awk -F, 'NF == 13 && NR > 1 { print $3 "|" $1 }' "$T/out" | sort -u | wc -l)
check "at most 1 of the 40 series with a (false) change point (got $aa_points)" [ "$aa_points" -le 1 ]
check "... each session counted once, said" [ "$(grep -c ',steady (no change in 10 sessions)$' "$T/out")" -ge 39 ]
# the same runs without their groups are taken as independent: far more change points (what the
# detector did with sessions before): the planted sessions are what this test is about
cp "$T/sess.db" "$T/nosess.db"
sql "$T/nosess.db" "UPDATE runs SET group_id = NULL"
"$REPORT" changes --db "$T/nosess.db" --format csv >"$T/out" 2>/dev/null
ungrouped=$(awk -F, 'NF == 13 && NR > 1 { print $3 "|" $1 }' "$T/out" | sort -u | wc -l)
check "the same runs ungrouped: more false change points ($ungrouped against $aa_points)" [ "$ungrouped" -ge $((aa_points + 4)) ]
note "A/A, 10 trials of 20 nights x 3 runs: $aa_points of 40 series with a change point; the same runs ungrouped: $ungrouped of 40"  # docs/performance.md
# a 10% step 6 nights (18 runs) before the end: found at the first run of night 15 (run 43),
# still new: --recent counts nights (sessions), not runs (10 runs was three nights)
check "10% slower for the last 6 of 20 nights of 3 runs" planted "$T/sessstep.db" --session 0.75 --seed 22 $(nights 14 3 1) $(nights 6 3 1.1)
expect_status 1 "... exit 1" "$REPORT" changes --db "$T/sessstep.db" --format csv
check "one change point per case, at run 43 (46, a session late, in one), slower" [ "$(awk -F, 'NF == 13 && NR > 1 && ($4 == 43 || $4 == 46) && $13 == "slower"' "$T/out" | wc -l)" = 4 ] && [ "$(awk -F, 'NF == 13 && NR > 1' "$T/out" | wc -l)" = 4 ] && [ "$(awk -F, 'NF == 13 && NR > 1 && $4 == 43' "$T/out" | wc -l)" -ge 3 ]
expect_status 0 "--recent 4: the changes are 5 and 6 sessions old" "$REPORT" changes --db "$T/sessstep.db" --recent 4
# a slow night is one session, named as off its segment; two are fewer than --min-segment: no
# change point yet (6 runs were two segments); a third is a slower segment
check "30% slower for the last of 12 nights of 3 runs" planted "$T/sess1.db" --session 0.75 --seed 23 $(nights 11 3 1) $(nights 1 3 1.3)
expect_status 0 "... one session is no change point: exit 0" "$REPORT" changes --db "$T/sess1.db" --format csv
check "the newest session named off its segment" [ "$(grep -cE 'newest session \(runs 34-36\) \+[0-9.]+%: one session is not a change point$' "$T/out")" = 4 ]
check "30% slower for the last 2 of 12 nights of 3 runs" planted "$T/sess2.db" --session 0.75 --seed 23 $(nights 10 3 1) $(nights 2 3 1.3)
expect_status 0 "... no change point yet: exit 0" "$REPORT" changes --db "$T/sess2.db" --format csv
check "no change point" [ "$(awk -F, 'NF == 13 && NR > 1' "$T/out" | wc -l)" = 0 ]
check "a third slow night" planted "$T/sess3.db" --session 0.75 --seed 23 $(nights 10 3 1) $(nights 3 3 1.3)
expect_status 1 "... a slower segment: exit 1" "$REPORT" changes --db "$T/sess3.db"
# a group id reused every night (an explicit --group; older runners' shard groups) is not one
# session: a run begun over an hour after the one before it ended starts a new one. Runs a day
# apart: 20 sessions, the 10% step found; the same runs a minute apart: one session, too few.
check "10% slower for the last 6 of 20 nightly runs" planted "$T/reused.db" --seed 24 nightly:14t:1 nightly:6t:1.1
sql "$T/reused.db" "UPDATE runs SET group_id = 'nightly', started_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || id || ' days'), ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || id || ' days', '+20 minutes')"
expect_status 1 "one group id, a night apart: 20 sessions, exit 1" "$REPORT" changes --db "$T/reused.db"
lacks "$T/out" "series have runs of one session" "no runs counted as one session"
sql "$T/reused.db" "UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || id || ' minutes'), ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || id || ' minutes', '+50 seconds')"
expect_status 2 "one group id, runs back to back: one session, too few: exit 2" "$REPORT" changes --db "$T/reused.db"
contains "$T/out" "4 with too few sessions" "says too few sessions"
# the noise of a series of sessions is a session mean's, not a run's: 3 runs a night, three
# quarters of the variance each run's own: a mean of 3 spreads 0.71 as much as a run (planted
# 3%). It is labelled so; the same runs ungrouped have run noise, as before
check "30 nights of 3 runs, a quarter of the variance the session's" planted "$T/noise.db" --session 0.25 --seed 31 $(nights 30 3 1)
expect_status 0 "... exit 0" "$REPORT" changes --db "$T/noise.db" --format csv
check "the column is the session noise" grep -q '^case_key,case,host,runs,changes,segment_from_run,runs_in_it,its_mean_ms,session_noise_%,newest$' "$T/out"
awk -F, 'NF == 10 && NR > 1 && $10 != "newest" { print $1 "|" $9 }' "$T/out" | sort >"$T/session_noise"
expect_status 0 "... markdown" "$REPORT" changes --db "$T/noise.db"
contains "$T/out" "interval with the session-to-session \(a session's mean's\) noise of the series" "the interval's noise named"
contains "$T/out" "segments of 3 sessions or more" "segments counted in sessions"
cp "$T/noise.db" "$T/noise_runs.db"
sql "$T/noise_runs.db" "UPDATE runs SET group_id = NULL"
expect_status 0 "... ungrouped: exit 0" "$REPORT" changes --db "$T/noise_runs.db" --format csv
check "ungrouped: run noise, as before" grep -q '^case_key,case,host,runs,changes,segment_from_run,runs_in_it,its_mean_ms,run_noise_%,newest$' "$T/out"
awk -F, 'NF == 10 && NR > 1 && $10 != "newest" { print $1 "|" $9 }' "$T/out" | sort >"$T/run_noise"
check "every case's session noise below its run noise (planted: 0.71 of it)" awk -F"|" 'NR == FNR { run[$1] = $2; next } { n++; if ($2 < 0.85 * run[$1]) below++ } END { exit !(n == 4 && below == 4) }' "$T/run_noise" "$T/session_noise"
check "... site" "$REPORT" site --db "$T/noise.db" -o "$T/site_noise"
contains "$T/site_noise/index.html" "<th>session noise \(%\)</th>" "the site's index names the session noise"
contains "$T/site_noise/case-0.html" "session-to-session \(a session's mean's: runs of one session count once\) noise [0-9.]+%" "a case page names it"
# 5 nights of 3 runs are 15 runs but 5 sessions, fewer than 2 x --min-segment (6): too few
# sessions, said so, not "too few runs" of a series of 15 runs nor "no series ... has 6 runs"
check "5 nights of 3 runs" planted "$T/sess5.db" --session 0.75 --seed 25 $(nights 5 3 1)
expect_status 2 "... too few sessions: exit 2" "$REPORT" changes --db "$T/sess5.db"
contains "$T/out" "\| too few sessions \(5, in 15 runs\) \|" "the status says sessions, how many, in how many runs"
contains "$T/out" "4 with too few sessions" "the summary counts sessions"
contains "$T/out" "no series still run has 6 sessions" "the verdict note counts sessions"
lacks "$T/out" "too few runs" "no 'too few runs' of 15 runs"
check "... site" "$REPORT" site --db "$T/sess5.db" -o "$T/site5"
contains "$T/site5/index.html" "4 with too few sessions to tell" "the site's index counts sessions"
contains "$T/site5/case-0.html" "too few sessions \(5, in 15 runs\)" "a case page says sessions"
# a run of the group the series lacks (its case not ok there) is no gap: 5 nights of 3 runs of
# 90 minutes each, back to back, the case an error in each night's second: its first and third
# runs are 3 hours apart but one session (each run begun as the one before it ended): 5
# sessions, too few; they were 10 (a night's two ok runs two sessions, as independent runs)
check "5 nights of 3 runs of 90 minutes" planted "$T/mid.db" --session 0.75 --seed 26 $(nights 5 3 1)
sql "$T/mid.db" "UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || ((id - 1) / 3) || ' days', '+' || ((id - 1) % 3 * 90) || ' minutes'), ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || ((id - 1) / 3) || ' days', '+' || ((id - 1) % 3 * 90 + 90) || ' minutes'); UPDATE cases SET status = 'error', reason = 'planted' WHERE (run_id - 1) % 3 = 1"
expect_status 2 "... 5 sessions, too few: exit 2" "$REPORT" changes --db "$T/mid.db"
check "every case: 5 sessions in 10 runs" [ "$(grep -c '| too few sessions (5, in 10 runs) |' "$T/out")" = 4 ]
# the third run of the first night begun 2 hours after the second ended: a session of its own
sql "$T/mid.db" "UPDATE runs SET started_at = '2026-01-01T05:00:00.000Z', ended_at = '2026-01-01T06:30:00.000Z' WHERE id = 3"
expect_status 2 "... a third run 2 hours after the second ended: 6 sessions (--min-segment 4: too few)" "$REPORT" changes --db "$T/mid.db" --min-segment 4
check "every case: 6 sessions in 10 runs" [ "$(grep -c '| too few sessions (6, in 10 runs) |' "$T/out")" = 4 ]
# ... but another shard's run is none of it: a reused group's two shards on one host back to
# back all day (12 hours each), the case in shard 0 only: each shard-0 run begins 12 hours after
# the one before it ended, a session each (20), the 10% step in the last 6 found
check "a reused group's two shards back to back, 20 runs of each" planted "$T/shards.db" --seed 27 nightly:28t:1 nightly:12t:1.1
sql "$T/shards.db" "UPDATE runs SET group_id = 'nightly', shard_index = (id - 1) % 2, shard_count = 2, started_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || ((id - 1) * 12) || ' hours'), ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (id * 12) || ' hours'); DELETE FROM cases WHERE run_id % 2 = 0"
expect_status 1 "... 20 sessions, the step found: exit 1" "$REPORT" changes --db "$T/shards.db"
lacks "$T/out" "series have runs of one session" "no runs counted as one session"

expect_status 2 "--alpha 1e-9: more permutations than can be counted" "$REPORT" changes --db "$T/step.db" --label nightly --alpha 1e-9
contains "$T/err" "--alpha 1e-09 is below" "says why"
expect_status 2 "--where on a key no case has" "$REPORT" changes --db "$T/step.db" --where nope=1

finish changes
