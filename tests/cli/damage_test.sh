#!/usr/bin/env bash
# tests/cli/damage_test.sh: no silent damage (issue 26). One scenario per item:
#   resume_identity  a resumed run keeps its shard, group, label and memory limit (item 1)
#   merge_content    merge matches runs by content, not by uuid and numbering alone (item 2)
#   write_errors     a failed write to stdout or a file is exit 1 with the reason (item 3)
#   readonly_foreign read-only and foreign files are only read (items 5 and 7; FIFO, corrupt file)
#   busy_open        one busy-wait policy, at open time too, for every command (item 6)
#   concurrent       runners started together on one database, new or not: each run whole
#   small_items      item 8: interrupted merge, full TMPDIR, #SBATCH injection, "not an error",
#                    SIGXFSZ, a newline in a label
#   rewrites         a failed rewrite of an output file keeps the old file whole, leaves no
#                    partial one (export -o, writeup, site, runner kube -o, runner slurm)
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
# small_fs DIR COMMAND...: run COMMAND with a 64 KiB filesystem mounted on DIR (a user
# namespace, or root), so that writes there fail with ENOSPC; 77 when neither can mount
small_fs() {
	local dir=$1; shift
	mkdir -p "$dir"
	if [ -z "${BENCHDB_TEST_NO_USERNS:-}" ] && unshare -r -m true 2>/dev/null; then
		unshare -r -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$0" && exec "$@"' "$dir" "$@"
	elif [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
		unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$0" && exec "$@"' "$dir" "$@"
	else
		return 77
	fi
}

case $scenario in
resume_identity)
	# shard 0/2, labelled, with a memory limit; a whole copy of it to compare with
	expect_status 0 "shard 0/2" "$RUNNER" run "$SWEEP" --shard 0/2 --group night-1 --db "$T/s0.db" --label L --mem-limit 1GiB
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
	expect_status 0 "shard 1/2" "$RUNNER" run "$SWEEP" --shard 1/2 --group night-1 --db "$T/s1.db"
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
	contains "$T/err" "--group 'other', the run's is 'night-1'" "the refusal names both groups"
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

	# the settings it ran under (runs.env: thread count, ISA cap, GEMM choices): a resume under
	# others is refused, naming both, and with --force recorded; under the same ones it goes on
	expect_status 0 "a run on 2 threads" env OMP_NUM_THREADS=2 "$RUNNER" run "$SWEEP" --db "$T/env.db"
	interrupt "$T/env.db" 3
	cp "$T/env.db" "$T/env2.db"
	before=$(sql "$T/env.db" "select count(*) || runs.status from cases, runs")
	expect_status 2 "resume on 1 thread" env OMP_NUM_THREADS=1 "$RUNNER" run "$SWEEP" --db "$T/env.db" --resume latest
	contains "$T/err" "cannot resume run 1: the environment differs \(the run's: \{\"OMP_NUM_THREADS\":\"2\",[^}]*\}, now: \{\"OMP_NUM_THREADS\":\"1\",[^}]*\}\); pass --force" "the refusal names both environments"
	check "nothing stored by the refused resume" [ "$(sql "$T/env.db" "select count(*) || runs.status from cases, runs")" = "$before" ]
	expect_status 0 "resume on 1 thread with --force" env OMP_NUM_THREADS=1 "$RUNNER" run "$SWEEP" --db "$T/env.db" --resume latest --force
	check "--force: the other environment is recorded" [ "$(sql "$T/env.db" "select count(*) from runs where resumes like '%with --force: the environment differs%OMP_NUM_THREADS\":\"1\"%'")" = 1 ]
	expect_status 0 "resume on the run's 2 threads" env OMP_NUM_THREADS=2 "$RUNNER" run "$SWEEP" --db "$T/env2.db" --resume latest
	check "the same environment: resumed to 12 cases" [ "$(sql "$T/env2.db" "select status || ' ' || (select count(*) from cases) from runs")" = "complete 12" ]

	# a shard resumed by its group's id folds only its own cases into the noise between runs:
	# the group selector made the run stand for the whole group, and the other shard's cases,
	# folded by their own run already, were folded again (a second, identical run of each)
	expect_status 0 "group shard 0/2" "$RUNNER" run "$SWEEP" --shard 0/2 --group grp --db "$T/g.db"
	expect_status 0 "group shard 1/2" "$RUNNER" run "$SWEEP" --shard 1/2 --group grp --db "$T/g.db"
	sql "$T/g.db" "PRAGMA foreign_keys = ON; DELETE FROM noise_sessions; DELETE FROM noise_runs;
		DELETE FROM cases WHERE run_id = 2 AND ord = (SELECT max(ord) FROM cases WHERE run_id = 2);
		UPDATE runs SET status = 'interrupted' WHERE id = 2"
	expect_status 0 "runner noise folds shard 0/2 again" "$RUNNER" noise --db "$T/g.db"
	# (a group id names several runs, so --resume refuses it: the shard is resumed by its run id)
	expect_status 2 "resume by the group's id" "$RUNNER" run "$SWEEP" --db "$T/g.db" --resume grp
	contains "$T/err" "'grp' is a group of 2 runs" "a group id is no run to resume"
	expect_status 0 "resume shard 1/2 by its run id" "$RUNNER" run "$SWEEP" --db "$T/g.db" --resume 2
	contains "$T/out" "run 2 complete" "the shard's run was resumed"
	check "every case key folded once, by its own run" [ "$(sql "$T/g.db" "select count(*) || ' ' || sum(runs) || ' ' || max(runs) from noise_sessions where phase = 'total'")" = "12 12 1" ]
	check "both runs folded" [ "$(sql "$T/g.db" "select group_concat(run_id) from (select run_id from noise_runs order by 1)")" = "1,2" ]

	# two groups whose ids (the runner takes up to 127 bytes) differ only past their 79th byte
	# are two sessions of the noise between runs, not one session of two runs
	long=$(printf 'nightly-%.0s' {1..10})
	expect_status 0 "a run of group ...A" "$RUNNER" run "$SWEEP" --group "${long}A" --db "$T/long.db"
	expect_status 0 "a run of group ...B" "$RUNNER" run "$SWEEP" --group "${long}B" --db "$T/long.db"
	check "two sessions of one run each, keyed by the whole group id" [ "$(sql "$T/long.db" "select count(distinct session) || ' ' || max(runs) || ' ' || max(length(session)) from noise_sessions")" = "2 1 81" ]

	# a missing database is not created by a resume
	expect_status 1 "--resume into a missing database" "$RUNNER" run "$SWEEP" --db "$T/missing.db" --resume 1
	contains "$T/err" "missing.db: no such database" "the refusal names the file"
	check "no file created by a refused resume" [ ! -e "$T/missing.db" ]
	;;
merge_content)
	samples() { sql "$1" "select group_concat(n) from (select count(s.iter) n from cases c left join samples s on s.case_id = c.id group by c.id order by c.ord)"; }
	times() { sql "$1" "select group_concat(ns) from (select s.ns from samples s join cases c on c.id = s.case_id where c.ord = $2 order by s.phase, s.iter)"; }
	expect_status 0 "a run" "$RUNNER" run "$SWEEP" --db "$T/a.db"
	interrupt "$T/a.db" 4
	cp "$T/a.db" "$T/early.db"   # the interrupted run, as an earlier merge took it
	cp "$T/a.db" "$T/b.db"       # a copy of the interrupted database, resumed apart
	expect_status 0 "resume copy a" "$RUNNER" run "$SWEEP" --db "$T/a.db" --resume latest
	expect_status 0 "resume copy b" "$RUNNER" run "$SWEEP" --db "$T/b.db" --resume latest
	check "the copies are one uuid" [ "$(sql "$T/a.db" "select uuid from runs")" = "$(sql "$T/b.db" "select uuid from runs")" ]
	uuid=$(sql "$T/a.db" "select uuid from runs")
	# an interrupted run merged early, then its resumed whole: the new cases and the end come in
	expect_status 0 "merge the interrupted run" "$RUNNER" merge --db "$T/m.db" "$T/early.db"
	contains "$T/out" "added 1 runs, 8 cases, 96 samples, 1 systems; skipped 0 runs and 0 cases already present; 0 runs ended since; refused 0 runs" "merge says what it added"
	expect_status 0 "merge the resumed run over it" "$RUNNER" merge --db "$T/m.db" "$T/a.db"
	contains "$T/out" "added 0 runs, 4 cases, 48 samples, 0 systems; skipped 1 runs and 8 cases already present; 1 runs ended since; refused 0 runs" "merge says what it added and skipped"
	check "the run grew: 12 cases, complete" [ "$(sql "$T/m.db" "select (select count(*) from cases) || ' ' || status from runs")" = "12 complete" ]
	# the other copy: another run under the same uuid, refused with what differs
	expect_status 1 "merge the copy resumed apart" "$RUNNER" merge --db "$T/m.db" "$T/b.db"
	contains "$T/err" "b.db: refused run $uuid, a different run under a uuid the output holds: the resumes differ; case 8 \(flash float32 fwd\+bwd B2 H2 S102 D16\): other times" "the refusal names the file, the run and the case"
	contains "$T/out" "refused 1 runs" "the summary counts the refusal"
	check "no sample of the other copy added" [ "$(samples "$T/m.db")" = "$(samples "$T/a.db")" ]
	check "every ok case has warmup + iters samples per phase" [ "$(sql "$T/m.db" "select count(*) from cases c where (select count(*) from samples s where s.case_id = c.id) != 2 * (c.warmup + c.iters)")" = 0 ]
	check "case 8's times are the first copy's" [ "$(times "$T/m.db" 8)" = "$(times "$T/a.db" 8)" ]
	expect_status 0 "export the merged samples" "$REPORT" export --db "$T/m.db" --run all --what samples --format csv
	check "export holds each sample once" [ "$(($(wc -l <"$T/out") - 1))" = "$(sql "$T/a.db" "select count(*) from samples")" ]
	# both orders: the copy first, the other one refused
	expect_status 1 "merge the copies the other way round" "$RUNNER" merge --db "$T/m2.db" "$T/b.db" "$T/a.db"
	contains "$T/err" "a.db: refused run $uuid" "the second copy is refused, whichever it is"
	check "the first copy's samples" [ "$(times "$T/m2.db" 8)" = "$(times "$T/b.db" 8)" ]
	# two copies resumed apart whose new cases do not overlap: resumed in another order
	# (--interleave 1: sweep order; the default: each shape's impls together), each killed after
	# its first new case. No case differs, but they are two continuations: the second is refused
	# (it used to be merged, the run holding cases of both resumes and the record of one)
	expect_status 0 "a run to cut" "$RUNNER" run "$SWEEP" --db "$T/c.db"
	sql "$T/c.db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord >= 1; UPDATE runs SET status = 'interrupted'"
	cp "$T/c.db" "$T/d.db"
	expect_status 0 "resume copy c in sweep order" "$RUNNER" run "$SWEEP" --db "$T/c.db" --resume latest --interleave 1
	sql "$T/c.db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord NOT IN (0, 1); UPDATE runs SET status = 'interrupted'"
	expect_status 0 "resume copy d by shape" "$RUNNER" run "$SWEEP" --db "$T/d.db" --resume latest
	sql "$T/d.db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord NOT IN (0, 6); UPDATE runs SET status = 'interrupted'"
	cuuid=$(sql "$T/c.db" "select uuid from runs")
	expect_status 1 "merge copies resumed apart, no case in common but the first" "$RUNNER" merge --db "$T/m4.db" "$T/c.db" "$T/d.db"
	contains "$T/err" "d.db: refused run $cuuid, a different run under a uuid the output holds: the resumes differ" "the refusal says the copies were resumed apart"
	check "the merged run holds the first copy's cases only" [ "$(ords "$T/m4.db")" = "0,1" ]
	check "and the first copy's record of resumes" [ "$(sql "$T/m4.db" "select resumes from runs")" = "$(sql "$T/c.db" "select resumes from runs")" ]
	# the database copied while its runner still went on (a node that only looked lost), the copy
	# resumed elsewhere: the original's later cases are not the resumed run's
	expect_status 0 "the original run" "$RUNNER" run "$SWEEP" --db "$T/orig.db"
	sql "$T/orig.db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord >= 4; UPDATE runs SET status = 'interrupted'"
	cp "$T/orig.db" "$T/copy.db"
	expect_status 0 "the copy resumed elsewhere" "$RUNNER" run "$SWEEP" --db "$T/copy.db" --resume latest
	sql "$T/copy.db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord IN (4, 5) OR ord > 6; UPDATE runs SET status = 'interrupted'"
	expect_status 0 "the original goes on" "$RUNNER" run "$SWEEP" --db "$T/orig.db" --resume latest
	sql "$T/orig.db" "PRAGMA foreign_keys = ON; DELETE FROM cases WHERE ord >= 6; UPDATE runs SET status = 'interrupted', resumes = NULL"
	ouuid=$(sql "$T/orig.db" "select uuid from runs")
	expect_status 1 "merge the resumed copy, then the original that went on" "$RUNNER" merge --db "$T/m6.db" "$T/copy.db" "$T/orig.db"
	contains "$T/err" "orig.db: refused run $ouuid, a different run under a uuid the output holds: the resumes differ" "the original's later cases refused"
	check "the merged run holds the resumed copy's cases only" [ "$(ords "$T/m6.db")" = "0,1,2,3,6" ]
	# a resume still going when it is merged over the early copy: its record comes with its cases
	cp "$T/a.db" "$T/going.db"
	sql "$T/going.db" "UPDATE runs SET status = 'running', ended_at = NULL"
	expect_status 0 "merge the early copy, then the resume still going" "$RUNNER" merge --db "$T/m5.db" "$T/early.db" "$T/going.db"
	check "the going resume's cases and its record of resumes" \
		[ "$(ords "$T/m5.db") $(sql "$T/m5.db" "select resumes from runs")" = "$(ords "$T/a.db") $(sql "$T/a.db" "select resumes from runs")" ]
	# an identical copy: nothing new, exit 0 (idempotent)
	cp "$T/a.db" "$T/a2.db"
	before=$(sql "$T/m.db" "select (select count(*) from runs) || (select count(*) from cases) || (select count(*) from samples) || (select count(*) from systems)")
	expect_status 0 "merge an identical copy" "$RUNNER" merge --db "$T/m.db" "$T/a2.db"
	contains "$T/out" "added 0 runs, 0 cases, 0 samples, 0 systems; skipped 1 runs and 12 cases already present; 0 runs ended since; refused 0 runs" "an identical copy is skipped"
	check "nothing changed by an identical copy" [ "$(sql "$T/m.db" "select (select count(*) from runs) || (select count(*) from cases) || (select count(*) from samples) || (select count(*) from systems)")" = "$before" ]
	# a run's identity or a case's samples differing: refused, saying what
	plant() { cp "$T/a.db" "$T/$1.db"; sql "$T/$1.db" "PRAGMA foreign_keys = ON; $2"; }
	plant sweep "UPDATE runs SET sweep_text = sweep_text || '#', sweep_hash = 'f00d'"
	plant label "UPDATE runs SET label = 'other'"
	plant fewer "DELETE FROM samples WHERE case_id = (SELECT id FROM cases WHERE ord = 3) AND iter = 5"
	plant key "UPDATE cases SET case_key = case_key || ' x' WHERE ord = 2"
	plant extra "DELETE FROM samples WHERE case_id = (SELECT id FROM cases WHERE ord = 4) AND iter = 5"
	for want in "sweep|the sweep text differ" "label|the label differ" "fewer|case 3 \([^)]*\): 10 samples in the input, 12 in the output" "key|case 2 \([^)]*\): another benchmark"; do
		name=${want%%|*}
		expect_status 1 "merge a run whose $name differs" "$RUNNER" merge --db "$T/m.db" "$T/$name.db"
		contains "$T/err" "$name.db: refused run $uuid, a different run under a uuid the output holds: ${want#*|}" "the $name refusal says what differs"
		check "nothing changed by a refused $name" [ "$(sql "$T/m.db" "select (select count(*) from runs) || (select count(*) from cases) || (select count(*) from samples) || (select count(*) from systems)")" = "$before" ]
	done
	# a refused run does not keep the input's other runs out
	expect_status 0 "another run" "$RUNNER" run "$SWEEP" --db "$T/extra.db"
	expect_status 1 "merge a refused run and a new one" "$RUNNER" merge --db "$T/m.db" "$T/extra.db"
	contains "$T/out" "added 1 runs, 12 cases, 144 samples, 0 systems; skipped 0 runs and 0 cases already present; 0 runs ended since; refused 1 runs" "the new run added beside the refusal"
	# a damaged input — here rows its constraints forbid, as a hand edit with CHECK constraints
	# off or another tool leaves them; a torn page reads alike — is refused by name, nothing of it
	# merged (the import used to drop such a case with its samples, or such a run with all of its
	# cases, and exit 0 with the rest)
	plant badcase "PRAGMA ignore_check_constraints = ON; UPDATE cases SET status = 'fine' WHERE ord = 5"
	plant badrun "PRAGMA ignore_check_constraints = ON; UPDATE runs SET status = 'done'"
	for name in badcase badrun; do
		expect_status 1 "merge of a damaged input ($name)" "$RUNNER" merge --db "$T/m3.db" "$T/$name.db"
		contains "$T/err" "$name.db: damaged \(PRAGMA integrity_check: CHECK constraint failed in (cases|runs)\); nothing of it merged" "the damaged $name input is named, with the reason"
		check "nothing of the damaged $name merged" [ "$(sql "$T/m3.db" "select count(*) from runs")" = 0 ]
	done
	# a run whose system row is gone, a case whose run is (foreign keys off while the file was
	# edited): the import dropped that run with its cases, or that case, and exit 0 said
	# "skipped 1 runs ... already present"
	plant nosystem "PRAGMA foreign_keys = OFF; DELETE FROM systems"
	plant norun "PRAGMA foreign_keys = OFF; DELETE FROM runs"
	for want in "nosystem|runs row 1 refers to a systems row" "norun|cases row [0-9]+ refers to a runs row"; do
		name=${want%%|*}
		expect_status 1 "merge of a damaged input ($name)" "$RUNNER" merge --db "$T/m3.db" "$T/$name.db"
		contains "$T/err" "$name.db: damaged: ${want#*|} it does not hold; nothing of it merged" "the damaged $name input is named, with the reason"
		check "nothing of the damaged $name merged" [ "$(sql "$T/m3.db" "select count(*) from runs")" = 0 ]
	done
	;;
write_errors)
	db=$T/fixture.db
	check "fixture" "$FIXTURE" "$db" --cases 60 --iters 100
	# /dev/full: every command that writes to stdout fails with the reason, with exit 1 even where
	# the command's own status is a verdict (regress cannot tell on this fixture: 2)
	expect_status 2 "report regress cannot tell on the fixture" "$REPORT" regress --baseline base --candidate cand --db "$db"
	for cmd in "table" "table --format json" "table --format csv" "runs" "compare --baseline naive" \
		"warmup" "export" "export --what stats --format json" "regress --baseline base --candidate cand"; do
		expect_status 1 "report $cmd > /dev/full" sh -c '"$0" "$@" >/dev/full' "$REPORT" $cmd --db "$db"
		contains "$T/err" "report: cannot write standard output: No space left on device" "report $cmd > /dev/full says why"
	done
	for cmd in "list $SWEEP" "sysinfo" "--help" "run --help"; do
		expect_status 1 "runner $cmd > /dev/full" sh -c '"$0" "$@" >/dev/full' "$RUNNER" $cmd
		contains "$T/err" "runner: cannot write standard output: No space left on device" "runner $cmd > /dev/full says why"
	done
	expect_status 1 "runner run > /dev/full" sh -c '"$0" "$@" >/dev/full' "$RUNNER" run "$SWEEP" --db "$T/run.db"
	contains "$T/err" "runner: cannot write standard output" "runner run > /dev/full says why"
	check "runner run > /dev/full still stores the run" [ "$(sql "$T/run.db" "select runs.status || count(*) from runs, cases")" = complete12 ]
	# a file-size limit (EFBIG; SIGXFSZ ignored as a shell's `trap '' XFSZ` leaves it)
	full=$("$REPORT" table --format json --db "$db" | wc -c)
	check "the JSON is larger than the limit below" [ "$full" -gt 65536 ]
	expect_status 1 "report --format json over a 64 KiB file-size limit" \
		bash -c 'trap "" XFSZ; ulimit -f 64; out=$1; shift; "$0" "$@" >"$out"' "$REPORT" "$T/limited.json" table --format json --db "$db"
	contains "$T/err" "cannot write standard output: File too large" "the file-size limit is the reason"
	# a full filesystem: stdout redirected there, -o files, charts
	if small_fs "$T/small" true; then
		expect_status 1 "report --format json > a full disk" small_fs "$T/small" sh -c 'out=$1; shift; "$0" "$@" >"$out"' "$REPORT" "$T/small/out.json" table --format json --db "$db"
		contains "$T/err" "cannot write standard output: No space left on device" "a full disk is the reason"
		expect_status 1 "report export -o a full disk" small_fs "$T/small" "$REPORT" export --db "$db" -o "$T/small/s.csv"
		contains "$T/err" "No space left on device" "export -o says why"
		if command -v gnuplot >/dev/null; then
			# 120 KiB of charts into 64 KiB: the SVG is cut short, gnuplot still exits 0
			expect_status 1 "report plot onto a full disk" small_fs "$T/small" "$REPORT" plot latency --db "$db" -o "$T/small/charts"
			contains "$T/err" "missing, empty or cut short" "report plot says a chart is cut short"
			expect_status 1 "report writeup onto a full disk" small_fs "$T/small" "$REPORT" writeup --db "$db" -o "$T/small/w"
		else
			note "no gnuplot: the chart checks on a full disk are test_plot's (chart_cut_short_is_eio)"
		fi
	else
		note "cannot mount a small filesystem here (no user namespaces, not root): the full-disk checks skipped; /dev/full and the file-size limit above cover the same paths"
	fi
	;;
readonly_foreign)
	state() { (cd "$1" && for f in $(ls -A); do printf '%s %s\n' "$f" "$(md5sum <"$f")"; done); }
	# on_readonly DIR COMMAND...: COMMAND with DIR read-only — a read-only bind mount in a user
	# namespace (EROFS, as read-only media), else as an unprivileged user with DIR's modes a-w;
	# 77 when neither is possible
	on_readonly() {
		local dir=$1; shift
		if [ -z "${BENCHDB_TEST_NO_USERNS:-}" ] && unshare -r -m true 2>/dev/null; then
			unshare -r -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"' "$dir" "$@"
		elif [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
			chmod 755 "$T"; chmod -R a+rX "$dir"; chmod -R a+rwX "$TMPDIR" "$T/out_dir"; chmod a-w "$dir" "$dir"/*
			setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$@"
			local st=$?
			chmod u+w "$dir" "$dir"/*
			return $st
		else
			return 77
		fi
	}
	mkdir -p "$T/ro" "$T/out_dir"
	# ---- another application's SQLite file, user_version 1 to 10: never changed -------------------
	for v in 1 5 10; do
		f=$T/foreign$v.db
		sql "$f" "PRAGMA user_version = $v; CREATE TABLE t (x); INSERT INTO t VALUES (1);"
		sum=$(md5sum <"$f")
		for cmd in "run $SWEEP" "migrate" "close 1" "merge $T/nothing.db"; do
			# shellcheck disable=SC2086
			expect_status 1 "runner $cmd on a foreign file (user_version $v)" "$RUNNER" $cmd --db "$f"
			contains "$T/err" "foreign$v.db: not a benchdb database: schema version $v, but no benchdb table 'systems'" "runner ${cmd%% *} names the file and why (v$v)"
		done
		expect_status 1 "runner merge of a foreign file (user_version $v)" "$RUNNER" merge --db "$T/out_dir/m$v.db" "$f"
		contains "$T/err" "foreign$v.db: not a benchdb database" "merge names the foreign input"
		expect_status 1 "report on a foreign file (user_version $v)" "$REPORT" runs --db "$f"
		contains "$T/err" "foreign$v.db: not a benchdb database" "report names the foreign file"
		check "foreign file v$v unchanged" [ "$(md5sum <"$f")" = "$sum" ]
		check "foreign file v$v still in rollback-journal mode" [ "$(sql "$f" "PRAGMA journal_mode")" = delete ]
		check "no side file beside foreign file v$v" [ -z "$(ls "$T" | grep -E "foreign$v\.db-(wal|shm|journal)")" ]
	done

	# ---- read-only media ------------------------------------------------------------------------
	expect_status 0 "a run" "$RUNNER" run "$SWEEP" --db "$T/ro/plain.db" --label plain
	# a database copied with its -wal (a writer still had it open: its last change is only there)
	expect_status 0 "another run" "$RUNNER" run "$SWEEP" --db "$T/live.db"
	sqlite3 -batch "$T/live.db" "PRAGMA wal_autocheckpoint = 0; UPDATE runs SET label = 'only-in-the-wal';" \
		".shell cp '$T/live.db' '$T/ro/withwal.db'; cp '$T/live.db-wal' '$T/ro/withwal.db-wal'" >/dev/null
	check "the copy has its -wal, no -shm" [ -s "$T/ro/withwal.db-wal" ] && [ ! -e "$T/ro/withwal.db-shm" ]
	ncases=$(sql "$T/live.db" "select count(*) from cases")
	before=$(state "$T/ro")
	if on_readonly "$T/ro" true; then
		for db in plain withwal; do
			expect_status 0 "report runs on read-only media ($db)" on_readonly "$T/ro" "$REPORT" runs --db "$T/ro/$db.db" --format csv
		done
		contains "$T/out" ",only-in-the-wal," "report reads what only the -wal holds"
		for cmd in "table" "export" "compare --baseline naive" "warmup" "history --where impl=naive"; do
			# shellcheck disable=SC2086
			expect_status 0 "report $cmd on read-only media with a -wal" on_readonly "$T/ro" "$REPORT" $cmd --db "$T/ro/withwal.db"
		done
		expect_status 0 "merge read-only inputs" on_readonly "$T/ro" "$RUNNER" merge --db "$T/out_dir/m.db" "$T/ro/plain.db" "$T/ro/withwal.db"
		check "merged: both runs, every case" [ "$(sql "$T/out_dir/m.db" "select count(*) from runs")" = 2 ] && \
			[ "$(sql "$T/out_dir/m.db" "select count(*) from cases")" = $((12 + ncases)) ]
		check "merged: the -wal's change" [ "$(sql "$T/out_dir/m.db" "select count(*) from runs where label = 'only-in-the-wal'")" = 1 ]
		# the runner's writers refuse it as read-only, not as another application's file
		for cmd in "run $SWEEP" "migrate" "close 1"; do
			# shellcheck disable=SC2086
			expect_status 1 "runner ${cmd%% *} on read-only media" on_readonly "$T/ro" "$RUNNER" $cmd --db "$T/ro/plain.db"
			contains "$T/err" "plain.db: (cannot open it for writing: .*read-only|.*readonly database)" "runner ${cmd%% *} says the database is read-only"
			lacks "$T/err" "not a benchdb database" "runner ${cmd%% *} does not call it a foreign file"
		done
		check "read-only media unchanged" [ "$(state "$T/ro")" = "$before" ]
		check "no copy left in TMPDIR" [ -z "$(ls -A "$TMPDIR")" ]
	else
		note "neither a user namespace nor setpriv: the read-only media checks skipped"
	fi
	# a writable rollback-journal database in a directory its user may not write (no journal):
	# the directory is named as the reason
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
		mkdir -p "$T/jdir"
		cp "$T/ro/plain.db" "$T/jdir/j.db"
		sql "$T/jdir/j.db" "PRAGMA journal_mode = DELETE" >/dev/null
		chmod 755 "$T" && chmod 666 "$T/jdir/j.db" && chmod 555 "$T/jdir"
		sum=$(md5sum <"$T/jdir/j.db")
		for cmd in "run $SWEEP" "migrate" "close 1"; do
			# shellcheck disable=SC2086
			expect_status 1 "runner ${cmd%% *} in a read-only directory" setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$RUNNER" $cmd --db "$T/jdir/j.db"
			contains "$T/err" "j.db: .*\(its directory is read-only: Permission denied; SQLite writes its journal" "runner ${cmd%% *} names the read-only directory"
		done
		check "the database in the read-only directory unchanged" [ "$(md5sum <"$T/jdir/j.db")" = "$sum" ]
		chmod 755 "$T/jdir"
	else
		note "not root or no setpriv: the read-only directory's database not tried"
	fi

	# ---- a FIFO: refused at once, not read forever ---------------------------------------------
	mkfifo "$T/fifo.db"
	expect_status 1 "merge of a FIFO" timeout 20 "$RUNNER" merge --db "$T/out_dir/f.db" "$T/fifo.db"
	contains "$T/err" "fifo.db: not a benchdb database: not a regular file" "the FIFO is named"
	# ---- a corrupt file: every message names it --------------------------------------------------
	expect_status 0 "fixture" "$FIXTURE" "$T/corrupt.db" --cases 4
	sql "$T/corrupt.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
	printf '\377%.0s' {1..64} | dd of="$T/corrupt.db" bs=1 seek=100 conv=notrunc 2>/dev/null
	for cmd in "report runs" "report table" "report export" "runner run $SWEEP" "runner migrate" "runner close 1"; do
		# shellcheck disable=SC2086
		expect_status 1 "$cmd on a corrupt file" "$(dirname "$RUNNER")/../${cmd%% *}/${cmd%% *}" ${cmd#* } --db "$T/corrupt.db"
		contains "$T/err" "corrupt.db: " "$cmd names the corrupt file"
	done
	expect_status 1 "merge of a corrupt file" "$RUNNER" merge --db "$T/out_dir/c.db" "$T/corrupt.db"
	contains "$T/err" "corrupt.db: " "merge names the corrupt file"
	;;
busy_open)
	# hold DB SECONDS: an exclusive lock on DB (rollback-journal mode, where it keeps readers out
	# too) for SECONDS, in the background; returns once the lock is held
	hold() {
		sql "$1" "PRAGMA journal_mode = DELETE" >/dev/null
		rm -f "$1.held"
		sqlite3 -batch "$1" "BEGIN EXCLUSIVE; UPDATE runs SET label = label;" ".shell touch '$1.held'; sleep $2" "COMMIT;" >/dev/null &
		for _ in $(seq 1 200); do [ -e "$1.held" ] && return; sleep 0.05; done
		fail "the lock on $1 was not taken"
	}
	expect_status 0 "a run" "$RUNNER" run "$SWEEP" --db "$T/locked.db"
	expect_status 0 "an output database" "$RUNNER" run "$SWEEP" --db "$T/out.db"
	cp "$T/locked.db" "$T/short.db"
	# held for 14 s, longer than the 10 s every open used to give up after; all at once
	hold "$T/locked.db" 14
	hold "$T/out.db" 14
	"$REPORT" runs --db "$T/locked.db" >"$T/report.out" 2>&1 & p_report=$!
	"$RUNNER" merge --db "$T/merged.db" "$T/locked.db" >"$T/merge_in.out" 2>&1 & p_merge_in=$!
	"$RUNNER" merge --db "$T/out.db" "$T/short.db" >"$T/merge_out.out" 2>&1 & p_merge_out=$!
	"$RUNNER" migrate --db "$T/locked.db" >"$T/migrate.out" 2>&1 & p_migrate=$!
	"$RUNNER" run "$SWEEP" --db "$T/locked.db" >"$T/run.out" 2>&1 & p_run=$!
	# a shorter --busy-timeout is what it says
	expect_status 1 "runner run --busy-timeout 2 on a held lock" "$RUNNER" run "$SWEEP" --db "$T/out.db" --busy-timeout 2
	contains "$T/err" "out.db: cannot read it: another process has held its lock for the whole busy timeout \(2 s; --busy-timeout\)" "the refusal names the lock and the timeout"
	expect_status 1 "runner merge --busy-timeout 1 on a held output" "$RUNNER" merge --db "$T/out.db" "$T/short.db" --busy-timeout 1
	contains "$T/err" "out.db: cannot read it: another process has held its lock" "merge's refusal names the lock"
	expect_status 1 "runner close --busy-timeout 1 on a held lock" "$RUNNER" close 1 --db "$T/out.db" --busy-timeout 1
	expect_status 2 "a negative --busy-timeout" "$RUNNER" merge --db "$T/x.db" "$T/short.db" --busy-timeout -1
	# a stop signal while `runner run` waits for the lock ends the wait at once: exit 130, no run
	# stored (it was ignored for the whole busy timeout, an hour by default, and then left an
	# empty interrupted run). Its own database, held for up to 10 minutes and let go once checked.
	# The signal is sent once the runner holds its stop signals (SigBlk: SIGTERM is bit 15),
	# after which it can only reach the runner through the lock wait.
	cp "$T/short.db" "$T/stop.db"
	sql "$T/stop.db" "PRAGMA journal_mode = DELETE" >/dev/null
	python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[1] + ".held", "w").close()
time.sleep(600)' "$T/stop.db" </dev/null >/dev/null 2>&1 &
	p_holder=$!
	for _ in $(seq 1 200); do [ -e "$T/stop.db.held" ] && break; sleep 0.05; done
	"$RUNNER" run "$SWEEP" --db "$T/stop.db" >"$T/stopped.out" 2>&1 & p_stopped=$!
	for _ in $(seq 1 2400); do
		blk=$(awk '/^SigBlk:/ {print $2}' "/proc/$p_stopped/status" 2>/dev/null)
		[ -n "$blk" ] && [ $((0x$blk & 0x4000)) != 0 ] && break
		sleep 0.025
	done
	kill -TERM "$p_stopped"
	wait "$p_stopped"
	st=$?
	check "runner run stopped while waiting for the lock: exit 130 (got $st: $(tail -n 1 "$T/stopped.out"))" [ "$st" = 130 ]
	contains "$T/stopped.out" "stopped while waiting for another process's lock on the database; no run was stored" "the stop is said"
	locked() { ! sqlite3 -batch "$1" "select count(*) from runs" >/dev/null 2>&1; }
	check "... while the lock was still held (it did not wait it out)" locked "$T/stop.db"
	kill -TERM "$p_holder" 2>/dev/null; wait "$p_holder" 2>/dev/null
	check "no run stored by the stopped runner" [ "$(sql "$T/stop.db" "select count(*) from runs")" = 1 ]
	for p in report merge_in merge_out migrate run; do
		eval "wait \$p_$p"
		st=$?
		check "$p waited for the lock and succeeded (exit $st: $(tail -n 1 "$T/$p.out"))" [ "$st" = 0 ]
	done
	check "the run after the lock: 2 runs" [ "$(sql "$T/locked.db" "select count(*) from runs")" = 2 ]
	check "the merge into the held output: its run added" [ "$(sql "$T/out.db" "select count(*) from runs")" = 2 ]
	check "the merge of the held input: its run" [ "$(sql "$T/merged.db" "select count(*) from runs")" -ge 1 ]
	wait
	;;
small_items)
	# ---- an interrupted merge: rolled back, its temporary copy removed ---------------------------
	check "a large input" "$FIXTURE" "$T/large.db" --cases 400 --iters 100
	sql "$T/large.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
	interrupted=0
	for delay in 0 0.1 0.3 0.6 1 1.5; do
		rm -f "$T/mi.db"*
		"$RUNNER" merge --db "$T/mi.db" "$T/large.db" >/dev/null 2>"$T/merge.err" &
		pid=$!
		# DELAY after its temporary copy appears (before that the program may still be loading)
		for _ in $(seq 1 600); do [ -n "$(ls -A "$TMPDIR")" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.02; done
		sleep "$delay"
		kill -TERM "$pid" 2>/dev/null   # (SIGINT: ignored by a background job of a script)
		wait "$pid"
		st=$?
		[ "$st" = 130 ] && interrupted=$((interrupted + 1))
		check "merge interrupted ${delay} s into its copy: exit 130 (or done: 0), got $st" [ "$st" = 130 -o "$st" = 0 ]
		check "merge interrupted ${delay} s into its copy: no copy left in TMPDIR ($(ls -A "$TMPDIR" | tr '\n' ' '))" [ -z "$(ls -A "$TMPDIR")" ]
		check "merge interrupted ${delay} s into its copy: all of the input or nothing" \
			[ "$(sql "$T/mi.db" "select count(*) from cases")" = "$([ "$st" = 0 ] && sql "$T/large.db" "select count(*) from cases" || echo 0)" ]
		check "merge interrupted ${delay} s into its copy: integrity" [ "$(sql "$T/mi.db" "pragma integrity_check")" = ok ]
	done
	check "at least one merge was interrupted mid-way ($interrupted of 6)" [ "$interrupted" -ge 1 ]
	# ---- a full TMPDIR: said which directory, nothing left there ---------------------------------
	if small_fs "$TMPDIR" true; then
		expect_status 1 "merge with a full TMPDIR" small_fs "$TMPDIR" "$RUNNER" merge --db "$T/mt.db" "$T/large.db"
		contains "$T/err" "large.db: cannot copy it into the temporary directory '$TMPDIR': database or disk is full \(free space there, or point TMPDIR elsewhere\)" "the full directory is named"
	else
		note "cannot mount a small filesystem here: the full-TMPDIR check skipped"
	fi
	expect_status 1 "merge with a missing TMPDIR" env TMPDIR="$T/nowhere" "$RUNNER" merge --db "$T/mt.db" "$T/large.db"
	contains "$T/err" "cannot make its temporary copy in '$T/nowhere': No such file or directory" "the missing directory is named"
	check "no copy left after a full TMPDIR" [ -z "$(ls -A "$TMPDIR")" ]

	# ---- runner slurm: nothing that starts an #SBATCH line of its own ------------------------------
	for opt in "--partition|gpu" "--account|proj" "--time|1:00:00"; do
		o=${opt%%|*} v=${opt#*|}
		expect_status 2 "runner slurm $o with a newline" "$RUNNER" slurm "$SWEEP" --shards 2 --results "$T/sl" "$o" "$v
#SBATCH --exclusive"
		check "$o's refusal shows the newline" grep -qF -- "got '$v\n#SBATCH --exclusive'" "$T/err"
	done
	expect_status 2 "runner slurm --time that is not a time" "$RUNNER" slurm "$SWEEP" --shards 2 --results "$T/sl" --time "1 hour"
	expect_status 2 "runner slurm --results with a newline" "$RUNNER" slurm "$SWEEP" --shards 2 --results "$T/sl
#SBATCH --exclusive"
	check "nothing written for a refused #SBATCH value" [ ! -e "$T/sl" ]
	# a sweep name cannot hold a newline (the loader refuses control characters), ...
	printf 'name: "evil\\n#SBATCH --exclusive"\nbenchmarks: [{suite: attention, impl: naive, seq_len: 8, head_dim: 8}]\n' >"$T/evil_nl.yaml"
	expect_status 2 "runner slurm with a newline in the sweep's name" "$RUNNER" slurm "$T/evil_nl.yaml" --shards 2 --results "$T/sl%x"
	contains "$T/err" "key 'name' contains the control character 0x0a" "the newline in the name is refused"
	# ... and what else it may hold is made one word
	printf 'name: "evil #SBATCH --exclusive"\nbenchmarks: [{suite: attention, impl: naive, seq_len: 8, head_dim: 8}]\n' >"$T/evil.yaml"
	expect_status 0 "runner slurm with valid values" "$RUNNER" slurm "$T/evil.yaml" --shards 2 --results "$T/sl%x" \
		--partition gpu,debug --account proj_1 --time 2-12:30:00
	script=$(ls "$T"/sl%x/*.sbatch)
	check "one directive per line, none injected" [ "$(grep -c '^#SBATCH' "$script")" = 7 ]
	lacks "$script" "^#SBATCH --exclusive" "no injected directive"
	contains "$script" "^#SBATCH --job-name=benchdb-evil__SBATCH_--exclusive$" "the sweep's name made one word"
	contains "$script" "^#SBATCH --output=$T/sl%%x/slurm-%A_%a.out$" "a '%' in the results path is literal"
	for t in 60 1:30 1:00:00 2-3 2-3:04 2-3:04:05 UNLIMITED; do
		check "--time $t is a Slurm time" "$RUNNER" slurm "$SWEEP" --shards 1 --results "$T/slt" --time "$t" >/dev/null
	done

	# ---- a failure's reason is never "not an error" -------------------------------------------------
	expect_status 0 "a run" "$RUNNER" run "$SWEEP" --db "$T/trig.db"
	cp "$T/trig.db" "$T/trig2.db"
	sql "$T/trig.db" "CREATE TRIGGER no_systems BEFORE INSERT ON systems BEGIN SELECT RAISE(IGNORE); END; UPDATE systems SET fingerprint = 'other'"
	expect_status 1 "a system row silently refused" "$RUNNER" run "$SWEEP" --db "$T/trig.db"
	lacks "$T/err" "not an error" "no 'not an error'"
	contains "$T/err" "trig.db: cannot store system info: constraint failed" "the reason says what"
	sql "$T/trig2.db" "CREATE TRIGGER no_cases BEFORE INSERT ON cases BEGIN SELECT RAISE(IGNORE); END"
	expect_status 1 "a case row silently refused" "$RUNNER" run "$SWEEP" --db "$T/trig2.db"
	lacks "$T/err" "not an error" "no 'not an error' (cases)"
	contains "$T/err" "cannot store the case: constraint failed" "the case's reason says what"
	check "no sample stored under another case" [ "$(sql "$T/trig2.db" "select count(*) from cases c where (select count(*) from samples s where s.case_id = c.id) != 2 * (c.warmup + c.iters)")" = 0 ]

	# ---- SIGXFSZ (a file-size limit) ends a run interrupted, as SIGINT does ----------------------
	expect_status 0 "a first run" "$RUNNER" run "$SWEEP" --db "$T/xfsz.db"
	limit=$((($(stat -c %s "$T/xfsz.db") + 1023) / 1024 + 24))   # KiB: room for a few cases
	expect_status 130 "a run that reaches the file-size limit" bash -c 'ulimit -f "$0"; exec "$@"' "$limit" "$RUNNER" run "$SWEEP" --db "$T/xfsz.db"
	check "the run is interrupted, not failed" [ "$(sql "$T/xfsz.db" "select status from runs where id = 2")" = interrupted ]
	check "some of its cases stored, each whole" [ "$(sql "$T/xfsz.db" "select count(*) > 0 and count(*) < 12 and sum((select count(*) from samples s where s.case_id = c.id) = 2 * (c.warmup + c.iters)) = count(*) from cases c where run_id = 2")" = 1 ]
	expect_status 0 "resumed without the limit" "$RUNNER" run "$SWEEP" --db "$T/xfsz.db" --resume 2
	check "resumed: complete, 12 cases" [ "$(sql "$T/xfsz.db" "select status || (select count(*) from cases where run_id = 2) from runs where id = 2")" = complete12 ]

	# ---- a newline and a '|' in a label: tables stay tables ------------------------------------------
	label='two
lines|pipe'
	expect_status 0 "a run labelled with a newline and a pipe" "$RUNNER" run "$SWEEP" --db "$T/label.db" --label "$label"
	expect_status 0 "report runs (markdown)" "$REPORT" runs --db "$T/label.db"
	check "the runs table: header, rule and one row, each a line" [ "$(grep -c '^|' "$T/out")" = 3 ]
	check "each row has the header's cells" [ "$(sed 's/\\|//g' "$T/out" | awk -F'|' '/^\|/ { print NF }' | sort -u | wc -l)" = 1 ]
	check "the label shown on one line, its pipe escaped" grep -qF 'two\nlines\|pipe' "$T/out"
	expect_status 0 "report table (markdown)" "$REPORT" --db "$T/label.db"
	check "the run's heading keeps the label on one line" grep -qF ', label two\nlines|pipe' "$T/out"
	expect_status 0 "report runs (json)" "$REPORT" runs --db "$T/label.db" --format json
	if command -v python3 >/dev/null; then
		check "JSON keeps the label exactly" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=json.dumps(d); assert "two\\nlines|pipe" in s, s' "$T/out"
	fi
	cmdline=$(sql "$T/label.db" "select command_line from runs")
	eval "set -- $cmdline"
	check "the stored command line gives the label back to a shell" [ "${*: -1}" = "$label" ]
	;;
rewrites)
	db=$T/fixture.db
	check "fixture" "$FIXTURE" "$db" --cases 60 --iters 100
	export GNUPLOT=$T/no-gnuplot   # pages and documents alone, no charts
	# limited KIB COMMAND...: COMMAND under a file-size limit (EFBIG; SIGXFSZ ignored)
	limited() { bash -c 'trap "" XFSZ; ulimit -f "$0"; exec "$@"' "$@"; }
	state() { (cd "$1" && find . -type f | sort | xargs md5sum); }
	mkdir -p "$T/o"
	# report export -o: 430 KB of statistics, rewritten under a 64 KiB limit
	expect_status 0 "export -o" "$REPORT" export --what stats --db "$db" -o "$T/o/stats.csv"
	sum=$(md5sum <"$T/o/stats.csv")
	expect_status 1 "export -o over a file-size limit" limited 64 "$REPORT" export --what stats --db "$db" -o "$T/o/stats.csv"
	contains "$T/err" "cannot write '$T/o/stats.csv': File too large" "export -o says why"
	check "a failed export -o keeps the old file whole" [ "$(md5sum <"$T/o/stats.csv")" = "$sum" ]
	check "a failed export -o leaves no other file" [ "$(ls -A "$T/o")" = stats.csv ]
	# the default SIGXFSZ of a file-size limit kills it, but only once its temporary file is gone
	expect_status 153 "export -o killed by SIGXFSZ" bash -c 'ulimit -f 64; "$@"; exit $?' sh "$REPORT" export --what stats --db "$db" -o "$T/o/stats.csv"
	check "killed by SIGXFSZ: the old export kept whole" [ "$(md5sum <"$T/o/stats.csv")" = "$sum" ]
	check "killed by SIGXFSZ: no temporary file left" [ "$(ls -A "$T/o")" = stats.csv ]
	# a file this user may write in a directory it may not (as an unprivileged user): in place
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
		mkdir -p "$T/shared" && chmod 755 "$T" "$T/shared" && chmod a+r "$db"
		echo old >"$T/shared/theirs.csv" && chmod 666 "$T/shared/theirs.csv"
		expect_status 0 "export -o a writable file in a read-only directory" setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$REPORT" export --what stats --run 1 --db "$db" -o "$T/shared/theirs.csv"
		check "the writable file in a read-only directory is written" grep -q '^run_id,' "$T/shared/theirs.csv"
	else
		note "not root or no setpriv: the read-only directory's writable file not tried"
	fi
	# what -o writes through: a link (the file replaced, the link kept), /dev/stdout
	ln -s stats.csv "$T/o/link.csv"
	expect_status 0 "export -o a link" "$REPORT" export --what stats --run 1 --db "$db" -o "$T/o/link.csv"
	check "export -o a link keeps the link" [ -L "$T/o/link.csv" ]
	check "export -o a link writes the file it names" [ "$(md5sum <"$T/o/stats.csv")" != "$sum" ]
	expect_status 0 "export -o /dev/stdout" "$REPORT" export --what stats --run 1 --db "$db" -o /dev/stdout
	check "export -o /dev/stdout writes standard output" cmp -s "$T/out" "$T/o/stats.csv"
	rm "$T/o/link.csv"
	# a name of 250 bytes (NAME_MAX 255 leaves no room for a temporary name's 11 more): in place
	long=$(printf 'n%.0s' $(seq 250)).csv
	expect_status 0 "export -o a 254-byte name" "$REPORT" export --what stats --run 1 --db "$db" -o "$T/o/$long"
	check "the 254-byte name written" grep -q '^run_id,' "$T/o/$long"
	rm -f "$T/o/$long"
	# -o naming the database exported (by another spelling), or another database: refused
	cp "$db" "$T/o/copy.db"
	dbsum=$(md5sum <"$T/o/copy.db")
	expect_status 2 "export -o the database it reads" "$REPORT" export --db "$T/o/copy.db" -o "$T/o/./copy.db"
	contains "$T/err" "copy.db' is an SQLite database \(the one exported\): not overwritten" "export -o the database says why"
	check "export -o the database: the database kept" [ "$(md5sum <"$T/o/copy.db")" = "$dbsum" ]
	expect_status 2 "export -o another database" "$REPORT" export --db "$db" -o "$T/o/copy.db"
	check "export -o another database: that database kept" [ "$(md5sum <"$T/o/copy.db")" = "$dbsum" ]
	rm "$T/o/copy.db"
	# runner slurm -o / runner kube -o naming the sweep file (by another spelling): refused, the
	# sweep kept
	cp "$SWEEP" "$T/o/sweep.yaml"
	ln -s sweep.yaml "$T/o/sweep-link.yaml"
	sweepsum=$(md5sum <"$T/o/sweep.yaml")
	expect_status 2 "slurm -o the sweep file" "$RUNNER" slurm "$T/o/sweep.yaml" --shards 2 -o "$T/o/./sweep.yaml"
	contains "$T/err" "is the sweep file .*: the script would replace it" "slurm says why"
	expect_status 2 "kube -o a link to the sweep file" "$RUNNER" kube "$T/o/sweep.yaml" --shards 2 --image x -o "$T/o/sweep-link.yaml"
	contains "$T/err" "is the sweep file .*: the manifest would replace it" "kube says why"
	check "slurm, kube -o the sweep: the sweep kept" [ "$(md5sum <"$T/o/sweep.yaml")" = "$sweepsum" ]
	expect_status 0 "slurm -o another file" "$RUNNER" slurm "$T/o/sweep.yaml" --shards 2 -o "$T/o/job.sbatch"
	rm "$T/o/sweep.yaml" "$T/o/sweep-link.yaml" "$T/o/job.sbatch"
	# report writeup: a 120 KB README.md
	expect_status 0 "writeup" "$REPORT" writeup --db "$db" -o "$T/w"
	before=$(state "$T/w")
	expect_status 1 "writeup over a file-size limit" limited 64 "$REPORT" writeup --db "$db" -o "$T/w"
	contains "$T/err" "cannot write '$T/w/README.md': File too large" "writeup says why"
	check "a failed writeup keeps the old README.md whole, no partial file" [ "$(state "$T/w")" = "$before" ]
	# report site: run pages of 90 KB
	expect_status 0 "site" "$REPORT" site --db "$db" -o "$T/site"
	before=$(state "$T/site")
	expect_status 1 "site over a file-size limit" limited 64 "$REPORT" site --db "$db" -o "$T/site"
	contains "$T/err" "cannot write '$T/site/run-2.html': File too large" "site says why"
	check "a failed site keeps the old pages whole, no partial file" [ "$(state "$T/site")" = "$before" ]
	# runner kube -o and runner slurm: scripts of 1 to 3 KB under a 1 KiB limit
	expect_status 0 "kube -o" "$RUNNER" kube "$SWEEP" --shards 2 --image img -o "$T/o/job.yaml"
	sum=$(md5sum <"$T/o/job.yaml")
	expect_status 1 "kube -o over a file-size limit" limited 1 "$RUNNER" kube "$SWEEP" --shards 3 --image img -o "$T/o/job.yaml"
	contains "$T/err" "cannot write '$T/o/job.yaml': File too large" "kube -o says why"
	check "a failed kube -o keeps the old manifest whole" [ "$(md5sum <"$T/o/job.yaml")" = "$sum" ]
	expect_status 0 "slurm" "$RUNNER" slurm "$SWEEP" --shards 2 --results "$T/res"
	before=$(state "$T/res")
	expect_status 1 "slurm over a file-size limit" limited 1 "$RUNNER" slurm "$SWEEP" --shards 3 --results "$T/res"
	contains "$T/err" "File too large" "slurm says why"
	check "a failed slurm keeps the old script whole, no partial file" [ "$(state "$T/res")" = "$before" ]
	check "the script stays executable" [ -x "$T/res/cli-resume.sbatch" ]
	check "nothing else left beside them" [ "$(ls -A "$T/o")" = "job.yaml
stats.csv" ]
	;;
concurrent)
	# Four runners started together on a file that does not exist yet: one creates it, the others
	# wait for it and use it (one used to read the version, 0, before another's first migration
	# committed and the tables after it, and refused the file as another application's; the
	# moment itself is test_db's open_of_a_new_file_another_runner_creates_meanwhile_succeeds).
	for k in 1 2 3 4; do
		"$RUNNER" run "$SRC/tests/cli/tiny.yaml" --db "$T/new.db" >/dev/null 2>"$T/new$k.err" &
	done
	st=0
	for k in 1 2 3 4; do wait -n || st=$?; done
	check "four runners on a new database all exit 0 ($st: $(grep -hv '^\[' "$T"/new?.err | grep runner | head -c 300))" [ "$st" = 0 ]
	check "four complete runs of 7 cases" \
		[ "$(sql "$T/new.db" "select count(*) || ' ' || sum(status = 'complete') from runs")" = "4 4" ] && \
		[ "$(sql "$T/new.db" "select count(*) from cases")" = 28 ]
	# four runners into one existing file, twelve cases each: every case stored, in its own run
	for k in 1 2 3 4; do "$RUNNER" run "$SWEEP" --db "$T/new.db" --label "c$k" >/dev/null 2>&1 & done
	st=0
	for k in 1 2 3 4; do wait -n || st=$?; done
	check "four runners at once on one file all exit 0" [ "$st" = 0 ]
	check "each of them stored its twelve cases" [ "$(sql "$T/new.db" "select group_concat(n) from (select count(c.id) n from runs r left join cases c on c.run_id = r.id where r.label like 'c_' and r.status = 'complete' group by r.id)")" = "12,12,12,12" ]
	check "integrity" [ "$(sql "$T/new.db" "PRAGMA integrity_check")" = ok ]
	# a run of another host whose clock is a few seconds ahead of this one's: its heartbeat is in
	# the future, and its runner alive (it was "no runner on record (before schema 7)", "alive -5 s
	# ago", and a resume took it over)
	ahead=$(date -u -d '+5 sec' +%Y-%m-%dT%H:%M:%S.000Z)
	sql "$T/new.db" "UPDATE runs SET status = 'running', host = 'another-node', heartbeat_at = '$ahead' WHERE label = 'c1'"
	c1=$(sql "$T/new.db" "select id from runs where label = 'c1'")
	expect_status 1 "close of a run whose host's clock is ahead" "$RUNNER" close "$c1" --db "$T/new.db"
	contains "$T/err" "run $c1 is alive; pass --force" "it is alive"
	contains "$T/err" "said it was alive at $ahead, [0-9]+ s ahead of this host's clock" "the clocks are named"
	expect_status 2 "resume of a run whose host's clock is ahead" "$RUNNER" run "$SWEEP" --db "$T/new.db" --resume c1
	contains "$T/err" "is still running" "the resume is refused"
	sql "$T/new.db" "UPDATE runs SET heartbeat_at = 'garbage' WHERE label = 'c1'"
	expect_status 1 "close of a run with an unreadable heartbeat" "$RUNNER" close "$c1" --db "$T/new.db"
	contains "$T/err" "run $c1 cannot be told alive or gone; pass --force" "it cannot be told"
	contains "$T/err" "left no heartbeat this host can use \(garbage\)" "the unreadable heartbeat named"
	lacks "$T/err" "before schema 7" "not called a run from before schema 7"
	;;
*)
	echo "unknown scenario '$scenario'" >&2
	exit 2
	;;
esac
finish "damage_$scenario"
