#!/usr/bin/env bash
# tests/cli/damage_test.sh: no silent damage (issue 26). One scenario per item:
#   resume_identity  a resumed run keeps its shard, group, label and memory limit (item 1)
#   damage_test.sh SCENARIO RUNNER REPORT MAKE_FIXTURE
set -u
scenario=$1
RUNNER=$2
REPORT=$3
FIXTURE=$4
source "$(dirname "$0")/lib.sh"
SWEEP=$T/resume.yaml   # twelve short cases
cp "$SRC/tests/cli/resume.yaml" "$SWEEP"
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

# interrupt DB N: what a killed and closed run leaves — its last N cases (by ord) missing, the run
# `interrupted` (a kill at a random point is tests/cli/resume_test.sh's business).
interrupt() {
	sql "$1" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord IN (SELECT ord FROM cases ORDER BY ord DESC LIMIT $2); UPDATE runs SET status = 'interrupted'"
}
ords() { sql "$1" "select group_concat(ord) from (select ord from cases order by ord)"; }

case $scenario in
resume_identity)
	# shard 0/2, labelled, with a memory limit; a whole copy of it to compare with
	expect_status 0 "shard 0/2" "$RUNNER" run "$SWEEP" --shard 0/2 --db "$T/s0.db" --label L --mem-limit 1GiB
	cp "$T/s0.db" "$T/whole0.db"
	shard0=$(ords "$T/whole0.db")
	n0=$(sql "$T/whole0.db" "select count(*) from cases")
	check "shard 0/2 holds part of the sweep" [ "$n0" -gt 0 ] && [ "$n0" -lt 12 ]
	interrupt "$T/s0.db" 2
	# resumed the README's way: no --shard, no --label, no --mem-limit
	expect_status 0 "resume without --shard" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest
	check "the resumed shard stores only its own cases" [ "$(ords "$T/s0.db")" = "$shard0" ]
	contains "$T/out" "run 1 complete: $n0 of $n0 cases stored \($n0 ok," "the summary counts the whole run, before and after"
	check "the run is still shard 0/2, label L" [ "$(sql "$T/s0.db" "select shard_index || '/' || shard_count || ' ' || label || ' ' || status from runs")" = "0/2 L complete" ]
	check "the resumed cases keep the run's --mem-limit" [ "$(sql "$T/s0.db" "select count(distinct mem_limit) || ' ' || max(mem_limit) from cases")" = "1 1073741824" ]
	check "the resume is recorded" [ "$(sql "$T/s0.db" "select count(*) from runs where resumes like '%--resume latest%'")" = 1 ]
	# merged with the real shard 1: the sweep exactly once
	expect_status 0 "shard 1/2" "$RUNNER" run "$SWEEP" --shard 1/2 --db "$T/s1.db"
	expect_status 0 "merge the shards" "$RUNNER" merge --db "$T/m.db" "$T/s0.db" "$T/s1.db"
	check "merged shards: 12 cases, 12 keys" [ "$(sql "$T/m.db" "select count(*) || ' ' || count(distinct case_key) from cases")" = "12 12" ]

	# another shard than the run's: refused, even with --force; nothing stored, the run untouched
	interrupt "$T/s0.db" 1
	before=$(sql "$T/s0.db" "select count(*) || runs.status from cases, runs")
	for force in "" --force; do
		expect_status 2 "resume as shard 1/2 $force" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --shard 1/2 $force
		contains "$T/err" "cannot resume run 1 as shard 1/2: it runs shard 0/2" "the refusal names both shards $force"
		check "nothing stored by a refused resume $force" [ "$(sql "$T/s0.db" "select count(*) || runs.status from cases, runs")" = "$before" ]
	done
	expect_status 2 "a shard resumed as the whole sweep" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --shard 0/1
	# label, group, memory limit: a differing value refused, naming both
	expect_status 2 "resume with another --label" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --label X
	contains "$T/err" "--label 'X', the run's is 'L'" "the refusal names both labels"
	expect_status 2 "resume with another --mem-limit" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --mem-limit 2GiB
	contains "$T/err" "--mem-limit 2147483648 bytes, the run's cases had 1073741824" "the refusal names both limits"
	expect_status 2 "resume with another --group" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --group other
	contains "$T/err" "--group 'other', the run's is '[0-9a-f]{12}-of2'" "the refusal names both groups"
	check "refused resumes leave the run as it was" [ "$(sql "$T/s0.db" "select count(*) || runs.status from cases, runs")" = "$before" ]
	# the same values again are no difference
	expect_status 0 "resume with the run's own values" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --shard 0/2 --label L --mem-limit 1GiB
	check "resumed with its own values: the shard's cases" [ "$(ords "$T/s0.db")" = "$shard0" ]
	# --force takes a new label and says so in the run's record
	interrupt "$T/s0.db" 1
	expect_status 0 "resume with --label X --force" "$RUNNER" run "$SWEEP" --db "$T/s0.db" --resume latest --label X --force
	check "--force: the run is relabelled" [ "$(sql "$T/s0.db" "select label from runs")" = X ]
	check "--force: the change is recorded" [ "$(sql "$T/s0.db" "select count(*) from runs where resumes like '%with --force: --label ''X'', the run''s is ''L''%'")" = 1 ]
	check "--force: still the shard's cases" [ "$(ords "$T/s0.db")" = "$shard0" ]

	# the default memory share: the run's, not the one at resume time
	expect_status 0 "an unsharded run" "$RUNNER" run "$SWEEP" --db "$T/w.db"
	check "the default share is recorded" [ "$(sql "$T/w.db" "select mem_limit_source || (mem_limit = (select max(mem_limit) from cases)) from runs")" = "default1" ]
	interrupt "$T/w.db" 3
	sql "$T/w.db" "UPDATE runs SET mem_limit = 123456789"   # as if memory was scarcer then
	expect_status 0 "resume the unsharded run" "$RUNNER" run "$SWEEP" --db "$T/w.db" --resume latest
	check "the resumed cases get the run's default share" [ "$(sql "$T/w.db" "select count(*) from cases where ord >= 9 and mem_limit = 123456789")" = 3 ]
	check "unsharded resume: the whole sweep once" [ "$(sql "$T/w.db" "select count(*) || ' ' || count(distinct ord) from cases")" = "12 12" ]

	# a missing database is not created by a resume
	expect_status 1 "--resume into a missing database" "$RUNNER" run "$SWEEP" --db "$T/missing.db" --resume 1
	contains "$T/err" "missing.db: no such database" "the refusal names the file"
	check "no file created by a refused resume" [ ! -e "$T/missing.db" ]
	;;
*)
	echo "unknown scenario '$scenario'" >&2
	exit 2
	;;
esac
finish "damage_$scenario"
