#!/usr/bin/env bash
# tests/cli/cluster_test.sh: one sweep over many machines, without a scheduler: `runner run
# --shard I/N` (the slices cover the sweep exactly once, in sweep order), the group they share
# (`report --run GROUP` reads them as one run), and `runner merge` of the shards' databases.
#   cluster_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"
SWEEP=$SRC/tests/cli/tiny.yaml
export TMPDIR=$T/tmp   # runner merge's temporary copies, checked below
mkdir -p "$TMPDIR"
keys() { sql "$1" "select case_key from cases $2 order by case_key"; }

# ---- the whole sweep, then its three shards into one database ----------------------------------
expect_status 0 "unsharded run" "$RUNNER" run "$SWEEP" --db "$T/whole.db"
# by hand nothing names the launch: the group must be given. Its default was the sweep's hash
# and N, every launch's alike, so that two nights' shards made one group: last night's shard 1
# stood in for tonight's, which never arrived, and the group read complete
for sel in 0/3 auto/3; do
	expect_status 2 "--shard $sel without --group, outside a job array" env -u SLURM_ARRAY_JOB_ID \
		JOB_COMPLETION_INDEX=0 "$RUNNER" run "$SWEEP" --db "$T/nogroup.db" --shard $sel
	contains "$T/err" "--shard $sel: nothing in the environment names this launch .*give --group ID" "--shard $sel asks for --group"
done
# an empty --group (a script's unset variable) was stored as no group, and with it no shard: a
# slice of the sweep stood as a run of the whole sweep, "(complete)"
expect_status 2 "--shard 0/3 --group ''" "$RUNNER" run "$SWEEP" --db "$T/nogroup.db" --shard 0/3 --group ""
contains "$T/err" "--group expects an id, got an empty one" "an empty --group refused"
check "nothing written without a group" [ ! -e "$T/nogroup.db" ]
for i in 0 1 2; do
	expect_status 0 "shard $i/3" "$RUNNER" run "$SWEEP" --db "$T/shards.db" --shard $i/3 --group night-1
	contains "$T/err" "shard $i/3 of group night-1" "shard $i/3 names its group"
done
check "the shards hold the sweep's cases exactly once" \
	[ "$(keys "$T/shards.db" "")" = "$(keys "$T/whole.db" "")" ]
check "ord is the case's place in the whole sweep" \
	[ "$(sql "$T/shards.db" "select group_concat(ord) from (select ord from cases order by ord)")" = \
	  "$(sql "$T/whole.db" "select group_concat(ord) from (select ord from cases order by ord)")" ]
check "runs record sweep hash, shard and group" \
	[ "$(sql "$T/shards.db" "select count(distinct sweep_hash) || count(distinct group_id) || group_concat(shard_index || '/' || shard_count) from runs")" = "110/3,1/3,2/3" ]
group=$(sql "$T/shards.db" "select group_id from runs limit 1")
expect_status 0 "report --run GROUP" "$REPORT" --db "$T/shards.db" --run "$group" --format csv
check "report --run GROUP has every case of the sweep" \
	[ "$(grep -c ',cpu,' "$T/out")" = "$(sql "$T/whole.db" "select count(*) from cases")" ]
lacks "$T/err" "is shard" "the group read as one run: no note of a shard"
expect_status 0 "report --run SHARD" "$REPORT" --db "$T/shards.db" --run 1 --format csv
check "one shard alone is a part" [ "$(wc -l <"$T/out")" -lt "$(sql "$T/whole.db" "select count(*) from cases")" ]
contains "$T/err" "run 1 \('1'\) is shard 0 of 3 of group 'night-1': what follows is that slice of the sweep alone \(--run 'night-1' reads" "a shard selected as a run: said"
# `latest` (report's default) after shards went into one database is the last shard alone: it
# was shown as "(complete)", one slice of the sweep, and nothing said so
expect_status 0 "report (latest) on the shards' database" "$REPORT" --db "$T/shards.db"
contains "$T/out" "^## run 3: cli-tiny \(complete\)" "latest is the last shard's run"
contains "$T/err" "run 3 \('latest'\) is shard 2 of 3 of group 'night-1'" "latest, a shard: said"
# a shard run again replaces its earlier run in the group
expect_status 0 "shard 1/3 again" "$RUNNER" run "$SWEEP" --db "$T/shards.db" --shard 1/3 --group night-1
expect_status 0 "report runs" "$REPORT" runs --db "$T/shards.db" --format csv
# the notes on a partial group or a shard say "report runs lists them": it showed no group or shard
check "report runs shows each run's group and shard" \
	[ "$(csv_cols "$T/out" id group shard | paste -sd' ')" = "1,night-1,0/3 2,night-1,1/3 3,night-1,2/3 4,night-1,1/3" ]
expect_status 0 "report --run GROUP after a re-run" "$REPORT" --db "$T/shards.db" --run "$group" --format csv
check "each case once after a re-run" \
	[ "$(grep -c ',cpu,' "$T/out")" = "$(sql "$T/whole.db" "select count(*) from cases")" ]

# a group that is not its sweep once, complete, is never shown as a complete run: a shard missing
# (its task never copied back), one interrupted, shards of another commit -- said in the heading
# (the run's status) and on stderr (a CSV has no heading), and a regress gate fails on it
for i in 0 2; do "$RUNNER" run "$SWEEP" --db "$T/part.db" --shard $i/3 --group part 2>/dev/null; done
"$RUNNER" run "$SWEEP" --db "$T/part.db" --label whole 2>/dev/null
expect_status 0 "report --run GROUP, shard 1 missing" "$REPORT" --db "$T/part.db" --run part
lacks "$T/out" "\(complete\)" "a group with a shard missing is not shown complete"
contains "$T/out" "^## run 2: cli-tiny \(not a whole group: shard 1 of 3 missing\)" "the heading names the missing shard"
contains "$T/err" "group 'part' is not one whole run of its sweep: shard 1 of 3 missing" "stderr names the missing shard"
expect_status 0 "report --run GROUP --format csv, shard 1 missing" "$REPORT" --db "$T/part.db" --run part --format csv
contains "$T/err" "shard 1 of 3 missing" "a csv of a partial group says so on stderr"
expect_status 1 "report regress, a candidate group with a shard missing" "$REPORT" regress --db "$T/part.db" \
	--candidate part --baseline whole
contains "$T/out" "not a whole group: shard 1 of 3 missing, not complete" "regress fails a partial candidate group"
"$RUNNER" run "$SWEEP" --db "$T/part.db" --shard 1/3 --group part 2>/dev/null
expect_status 0 "report --run GROUP, every shard" "$REPORT" --db "$T/part.db" --run part
contains "$T/out" "^## run 4: cli-tiny \(complete\)" "a whole group is complete"
lacks "$T/err" "whole run" "a whole group: no warning"
sql "$T/part.db" "update runs set status = 'interrupted' where shard_index = 2; update runs set git_commit = 'f00f' where shard_index = 0"
expect_status 0 "report --run GROUP, shard 2 interrupted, shard 0 of another commit" "$REPORT" --db "$T/part.db" --run part
contains "$T/out" "not a whole group: shard 2 interrupted; its shards are of different git commits" "interrupted and mixed commits said"

# a group of runs of the whole sweep each (--nodes: one a node) has no one run of them all: report
# --run GROUP shows its latest and says so (it showed one node's run as the group's, unsaid)
for node in na nb; do BENCHDB_NODE=$node "$RUNNER" run "$SWEEP" --db "$T/nodes.db" --group every 2>/dev/null; done
expect_status 0 "report --run GROUP of two nodes' runs" "$REPORT" --db "$T/nodes.db" --run every --format csv
contains "$T/err" "group 'every' holds 2 runs of the whole sweep \(a node's or a repetition each\); what follows is its latest, run 2, alone" "a group of whole runs: its latest, said"
expect_status 0 "report --run RUN of that group" "$REPORT" --db "$T/nodes.db" --run 2 --format csv
lacks "$T/err" "holds 2 runs" "a run by id: no note"

# a group's id names several runs: runner close and --resume act on one run, so they refuse it
# (they took the group's latest shard: close ended that one, or said it was not running, and left
# the abandoned shard as it was; --resume continued whichever shard started last)
for i in 0 1; do "$RUNNER" run "$SWEEP" --db "$T/gone.db" --shard $i/2 --group gone 2>/dev/null; done
sql "$T/gone.db" "update runs set status = 'running', ended_at = NULL, host = 'lost-node', heartbeat_at = '2020-01-01T00:00:00.000Z' where shard_index = 0"
expect_status 2 "runner close GROUP" "$RUNNER" close --db "$T/gone.db" gone
contains "$T/err" "'gone' is a group of 2 runs \(its shards\), not one run: give the run id" "close names the group's runs"
expect_status 2 "runner run --resume GROUP" "$RUNNER" run "$SWEEP" --db "$T/gone.db" --resume gone
contains "$T/err" "'gone' is a group of 2 runs" "--resume names the group's runs"
check "nothing closed or resumed" [ "$(sql "$T/gone.db" "select group_concat(status) from (select status from runs order by id)")" = "running,complete" ]
expect_status 0 "runner close the abandoned shard by its id" "$RUNNER" close --db "$T/gone.db" 1
contains "$T/out" "run 1 closed: interrupted" "the shard's run closed by id"
# a group of one shard's run is that run: complete, so nothing to resume (its group lacks shard 1)
"$RUNNER" run "$SWEEP" --db "$T/one.db" --shard 0/2 --group one 2>/dev/null
expect_status 2 "runner run --resume GROUP of one complete shard" "$RUNNER" run "$SWEEP" --db "$T/one.db" --resume one
contains "$T/err" "run 1 is complete: nothing to resume" "a group's only run, complete, is not resumed"

# ---- bad --shard ---------------------------------------------------------------------------------
expect_status 2 "--shard 3/3" "$RUNNER" run "$SWEEP" --db "$T/x.db" --shard 3/3
contains "$T/err" "numbered 0 to 2" "--shard 3/3 says the range"
expect_status 2 "--shard auto outside a launcher" env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX \
	"$RUNNER" run "$SWEEP" --db "$T/x.db" --shard auto
contains "$T/err" "SLURM_ARRAY_TASK_ID" "--shard auto names the variables"
check "nothing written for a bad --shard" [ ! -e "$T/x.db" ]
expect_status 0 "--shard auto in a Slurm array task" env SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 \
	SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_JOB_ID=77 "$RUNNER" run "$SWEEP" --db "$T/auto.db" --shard auto
check "Slurm's shard and group" [ "$(sql "$T/auto.db" "select group_id || ' ' || shard_index || '/' || shard_count from runs")" = "slurm-77 1/2" ]

# ---- merge: the shards' own databases into one -------------------------------------------------
for i in 0 1 2; do
	expect_status 0 "shard $i/3 into its own db" "$RUNNER" run "$SWEEP" --db "$T/node$i.db" --shard $i/3 --group g1
done
expect_status 0 "merge three shards" "$RUNNER" merge --db "$T/merged.db" "$T/node0.db" "$T/node1.db" "$T/node2.db"
contains "$T/out" "merged 3 of 3 databases" "merge says what it did"
check "merged: the sweep's cases exactly once" [ "$(keys "$T/merged.db" "")" = "$(keys "$T/whole.db" "")" ]
check "merged: every sample" [ "$(sql "$T/merged.db" "select count(*) from samples")" = \
	"$(($(sql "$T/node0.db" "select count(*) from samples") + $(sql "$T/node1.db" "select count(*) from samples") + $(sql "$T/node2.db" "select count(*) from samples")))" ]
check "merged: runs keep their uuid" [ "$(sql "$T/merged.db" "select group_concat(uuid) from (select uuid from runs order by uuid)")" = \
	"$(for i in 0 1 2; do sql "$T/node$i.db" "select uuid from runs"; done | sort | paste -sd,)" ]
check "merged: one system (same machine)" [ "$(sql "$T/merged.db" "select count(*) from systems")" = 1 ]
expect_status 0 "report --run g1 on the merged db" "$REPORT" --db "$T/merged.db" --run g1 --format csv
check "the merged group is the whole sweep" [ "$(grep -c ',cpu,' "$T/out")" = "$(sql "$T/whole.db" "select count(*) from cases")" ]
# a slice run again stands for the group, however the files were merged: shard 1 run last year
# (its cases planted as errors) and again now, the files merged newest first, so that last
# year's run has the higher id: the group is this year's runs (it was last year's shard 1)
for i in 0 2; do "$RUNNER" run "$SWEEP" --db "$T/g2.db" --shard $i/3 --group g2 2>/dev/null; done
"$RUNNER" run "$SWEEP" --db "$T/g2old.db" --shard 1/3 --group g2 2>/dev/null
"$RUNNER" run "$SWEEP" --db "$T/g2new.db" --shard 1/3 --group g2 2>/dev/null
sql "$T/g2old.db" "update runs set started_at = '2025-01-01T00:00:00.000Z'; update cases set status = 'error', reason = 'last year'"
"$RUNNER" merge --db "$T/g2m.db" "$T/g2new.db" "$T/g2old.db" "$T/g2.db" >/dev/null 2>&1
expect_status 0 "report --run g2: a re-run slice merged before its older run" "$REPORT" --db "$T/g2m.db" --run g2 --format csv
check "the group is the sweep once, of this year's runs ($(csv_cols "$T/out" status | sort | uniq -c | tr '\n' ' '))" \
	[ "$(csv_cols "$T/out" status | sort | paste -sd,)" = "$(sql "$T/whole.db" "select group_concat(status) from (select status from cases order by status)")" ]
before=$(sql "$T/merged.db" "select count(*) from runs) || (select count(*) from cases) || (select count(*) from samples")
expect_status 0 "merge again" "$RUNNER" merge --db "$T/merged.db" "$T/node1.db"
contains "$T/out" "added 0 runs, 0 cases, 0 samples, 0 systems; skipped 1 runs" "a second import is a no-op"
check "nothing changed" [ "$(sql "$T/merged.db" "select count(*) from runs) || (select count(*) from cases) || (select count(*) from samples")" = "$before" ]
check "inputs untouched" [ "$(sql "$T/node1.db" "select count(*) from runs")" = 1 ]

# not benchdb's, missing, the output itself: refused by name; the good inputs still go in
printf 'not a database at all\n' >"$T/junk.db"
sql "$T/other.db" "create table t(x); insert into t values (1)"
expect_status 1 "merge a junk file" "$RUNNER" merge --db "$T/m2.db" "$T/junk.db" "$T/other.db" "$T/nope.db" "$T/node0.db"
contains "$T/err" "junk.db: not a benchdb database" "junk named"
contains "$T/err" "other.db: not a benchdb database" "foreign sqlite named"
contains "$T/err" "nope.db: no such file" "missing named"
contains "$T/out" "merged 1 of 4 databases" "the good input still merged"
expect_status 1 "merge into itself" "$RUNNER" merge --db "$T/merged.db" "$T/merged.db"
contains "$T/err" "is the output database itself" "self-merge refused"

# a database of an older schema (004: before shards) is migrated on a copy, never in place
old=$T/old.db
cat "$SRC"/schemas/00[1-4]_*.sql | sqlite3 "$old"
sql "$old" "PRAGMA user_version = 4;
insert into systems (id, fingerprint, hostname, first_seen) values (1, 'old-fp', 'oldhost', 'x');
insert into runs (id, uuid, system_id, started_at, status, tool_version, command_line)
  values (1, '0ld0ld00-0000-4000-8000-000000000000', 1, '2026-01-01T00:00:00.000Z', 'complete', '0.1', 'runner run');
insert into cases (id, run_id, ord, suite, impl, device, dtype, pass, params, case_key, name, warmup, iters, status)
  values (1, 1, 0, 'attention', 'naive', 'cpu', 'float32', 'forward', '{}', 'k-old', 'old case', 0, 2, 'ok');
insert into samples values (1, 'fwd', 0, 100), (1, 'fwd', 1, 110);"
expect_status 0 "merge a schema-4 database" "$RUNNER" merge --db "$T/merged.db" "$old"
contains "$T/out" "added 1 runs, 1 cases, 2 samples, 1 systems" "old run imported"
check "the old file is still schema 4" [ "$(sql "$old" "PRAGMA user_version")" = 4 ]
check "old run in the merged db" [ "$(sql "$T/merged.db" "select count(*) from samples s join cases c on c.id = s.case_id join runs r on r.id = c.run_id where r.uuid like '0ld0ld00%'")" = 2 ]
check "no temporary copies left" [ -z "$(ls "${TMPDIR:-/tmp}" | grep '^benchdb-merge-' || true)" ]

# ---- runner slurm: the script (its tasks run here by hand, with Slurm's variables) ---------------
expect_status 0 "runner slurm" "$RUNNER" slurm "$SWEEP" --shards 3 --partition gpu --gpus-per-task 2 \
	--time 1:00:00 --results "$T/res" --label "night ly"
script=$T/res/cli-tiny.sbatch
contains "$T/out" "3 shards of the 7 cases" "runner slurm says what it wrote"
for line in '--array=0-2' '--partition=gpu' '--gpus-per-task=2' '--time=1:00:00' "--output=$T/res/slurm-%A_%a.out"; do
	check "script has #SBATCH $line" grep -qxF -- "#SBATCH $line" "$script"
done
check "the script is valid bash" bash -n "$script"
contains "$script" "--label 'night ly'" "the label is one shell word"
for i in 0 1 2; do
	check "array task $i by hand" env SLURM_ARRAY_JOB_ID=9 SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=0 \
		SLURM_ARRAY_TASK_COUNT=3 TMPDIR="$T/tmp" bash "$script"
done
check "each task's database in the results" [ "$(ls "$T/res" | grep -c '^shard-9-[012]\.db$')" = 3 ]
check "node-local copies removed" [ -z "$(ls "$T/tmp")" ]
expect_status 0 "merge the tasks' databases" "$RUNNER" merge --db "$T/res/all.db" "$T/res"/shard-9-*.db
check "group slurm-9 is the whole sweep" [ "$(keys "$T/res/all.db" "where run_id in (select id from runs where group_id = 'slurm-9')")" = "$(keys "$T/whole.db" "")" ]
check "the label reached every shard" [ "$(sql "$T/res/all.db" "select count(*) from runs where label = 'night ly'")" = 3 ]
# task 1 requeued (scontrol requeue: the same job and task ids) after an attempt whose runner was
# killed: that attempt's database lies in the results with a -wal beside it. The new attempt's
# database, closed cleanly, has no -wal: the old one must not stay beside it (SQLite would read
# the earlier attempt's pages into the new file, and its run would be lost)
expect_status 0 "an earlier attempt of task 1" "$RUNNER" run "$SWEEP" --db "$T/attempt.db" --shard 1/3 --group slurm-9
sqlite3 -batch "$T/attempt.db" "PRAGMA wal_autocheckpoint = 0; UPDATE runs SET label = 'earlier attempt';" \
	".shell cp '$T/attempt.db' '$T/res/shard-9-1.db'; cp '$T/attempt.db-wal' '$T/res/shard-9-1.db-wal'" >/dev/null
check "the earlier attempt's file has its -wal" [ -s "$T/res/shard-9-1.db-wal" ]
check "array task 1 requeued" env SLURM_ARRAY_JOB_ID=9 SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 \
	SLURM_ARRAY_TASK_COUNT=3 TMPDIR="$T/tmp" bash "$script"
check "no -wal of the earlier attempt beside the requeued task's file" [ ! -e "$T/res/shard-9-1.db-wal" ]
expect_status 0 "merge the requeued task's database" "$RUNNER" merge --db "$T/requeued.db" "$T/res/shard-9-1.db"
check "the requeued task's run, not the earlier attempt's" \
	[ "$(sql "$T/requeued.db" "select count(*) || ' ' || label || ' ' || (command_line like '%--shard 1/3%') from runs")" = "1 night ly 1" ]
check "the requeued task's cases and samples" \
	[ "$(sql "$T/requeued.db" "select (select count(*) from cases) || ' ' || (select count(*) from samples)")" = \
	  "$(sql "$T/attempt.db" "select (select count(*) from cases) || ' ' || (select count(*) from samples)")" ]
# an array resubmitted in part (sbatch --array=2 SCRIPT: one task of one, its id 2) runs slice 2 of
# 3, as its file's name says; it ran the whole sweep as shard 0/1
check "array task 2 resubmitted alone" env SLURM_ARRAY_JOB_ID=10 SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=2 \
	SLURM_ARRAY_TASK_COUNT=1 SLURM_ARRAY_TASK_MAX=2 TMPDIR="$T/tmp" bash "$script"
check "the resubmitted task ran slice 2 of 3" \
	[ "$(sql "$T/res/shard-10-2.db" "select shard_index || '/' || shard_count || ' ' || group_id from runs")" = "2/3 slurm-10" ]
check "the resubmitted task's cases are slice 2's" \
	[ "$(keys "$T/res/shard-10-2.db" "")" = "$(keys "$T/res/all.db" "where run_id in (select id from runs where group_id = 'slurm-9' and shard_index = 2)")" ]
# an array task stopped by Slurm (the time limit, scancel: SIGTERM to every process of the job,
# the script's shell too): the run ends interrupted and the script still copies its database
expect_status 0 "runner slurm of a slower sweep" "$RUNNER" slurm "$SRC/tests/cli/slow.yaml" --shards 1 --results "$T/ress"
env SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=1 \
	TMPDIR="$T/tmp" setsid bash "$T/ress/cli-slow.sbatch" >"$T/out" 2>"$T/err" &
task=$!
for _ in $(seq 600); do   # until its second case is stored (at most a minute)
	[ "$(sql "$T/tmp/benchdb-7-0/shard.db" "select count(*) from cases" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
	sleep 0.1
done
kill -TERM -- -"$task"
wait "$task"
check "the stopped task exits as its run did (130; got $?)" [ $? = 130 ]
check "the stopped task's database copied, its run interrupted with its cases" \
	[ "$(sql "$T/ress/shard-7-0.db" "select status || ' ' || ((select count(*) from cases) >= 2) from runs")" = "interrupted 1" ]
check "the stopped task's node-local copy removed" [ ! -e "$T/tmp/benchdb-7-0" ]
# ---- runner slurm --nodes: its job by hand, srun a stand-in that runs the step's command once per
# task (as task i of node ni), then the job's own merge -------------------------------------------
mkdir -p "$T/bin"
cat >"$T/bin/srun" <<'EOF'
#!/bin/bash
n=1
while [ $# -gt 0 ]; do
	case $1 in --ntasks=*) n=${1#--ntasks=}; shift ;; --*) shift ;; *) break ;; esac
done
status=0
for ((i = 0; i < n; i++)); do SLURM_PROCID=$i SLURMD_NODENAME=n$i "$@" || status=$?; done
exit $status
EOF
chmod +x "$T/bin/srun"
expect_status 0 "runner slurm --nodes 2" "$RUNNER" slurm "$SWEEP" --nodes 2 --results "$T/resn" --label "it's"
check "the --nodes script is valid bash" bash -n "$T/resn/cli-tiny.sbatch"
check "the --nodes job by hand" env PATH="$T/bin:$PATH" SLURM_JOB_ID=12 TMPDIR="$T/tmp" \
	bash "$T/resn/cli-tiny.sbatch"
check "each node's database in the results" [ "$(ls "$T/resn" | grep -c '^node-12-[01]\.db$')" = 2 ]
check "the job merged both nodes' runs, labelled" \
	[ "$(sql "$T/resn/nodes-12.db" "select count(*) || ' ' || group_concat(distinct label) || ' ' || count(distinct system_id) from runs")" = "2 it's 2" ]
# more shards than shapes (a shape's impls stay in one shard): some are empty, and it says so
shapes=$("$RUNNER" list "$SRC/tests/cli/resume.yaml" | grep -c '^ *[0-9].* naive ')
expect_status 0 "runner slurm, a shard a shape" "$RUNNER" slurm "$SRC/tests/cli/resume.yaml" --shards "$shapes" -o "$T/s1.sbatch"
lacks "$T/out" "some are empty" "as many shards as shapes: none empty"
expect_status 0 "runner slurm, more shards than shapes" "$RUNNER" slurm "$SRC/tests/cli/resume.yaml" --shards $((shapes + 1)) -o "$T/s2.sbatch"
contains "$T/out" "more shards than shapes, whose impls stay in one shard: some are empty" "more shards than shapes: said"
expect_status 2 "runner slurm without --shards" "$RUNNER" slurm "$SWEEP"
contains "$T/err" "give --shards N \(cut the sweep into N slices\) or --nodes N" "--shards or --nodes is required"
expect_status 2 "runner slurm with --shards and --nodes" "$RUNNER" slurm "$SWEEP" --shards 2 --nodes 2
contains "$T/err" "or --nodes N \(the whole sweep on each of N nodes\), not both" "not both"
# a negative count was dropped from the script (no #SBATCH line, exit 0): the tasks ran without GPUs
expect_status 2 "runner slurm --gpus-per-task -1" "$RUNNER" slurm "$SWEEP" --shards 2 --gpus-per-task -1 -o "$T/neg.sbatch"
contains "$T/err" "--gpus-per-task expects a count >= 0, got -1" "a negative GPU count refused"
expect_status 2 "runner slurm --cpus-per-task -4" "$RUNNER" slurm "$SWEEP" --nodes 2 --cpus-per-task -4 -o "$T/neg.sbatch"
contains "$T/err" "--cpus-per-task expects a count >= 0, got -4" "a negative CPU count refused"
check "no script for a negative count" [ ! -e "$T/neg.sbatch" ]
expect_status 2 "runner slurm --shards 100000" "$RUNNER" slurm "$SWEEP" --shards 100000
contains "$T/err" "--shards expects a count from 1 to" "a count past the limit refused"
expect_status 1 "--submit without sbatch" "$RUNNER" slurm "$SWEEP" --shards 2 --results "$T/res2" \
	--submit --sbatch "$T/no-sbatch"
contains "$T/err" "cannot run '$T/no-sbatch'" "a missing sbatch is named"

finish cluster
