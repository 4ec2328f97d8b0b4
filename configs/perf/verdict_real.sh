#!/usr/bin/env bash
# configs/perf/verdict_real.sh: the verdicts on real runs of this machine (docs/performance.md,
# "Measurement validity"). Two steps:
#   verdict_real.sh collect BUILD_DIR DB SESSIONS   sessions s0..s{SESSIONS-1}, each one
#       `runner run --repeat 4` of verdict_aa_cpu.yaml (24 cases, one thread), 3 to 8 minutes
#       apart: runs made at different times, as a later candidate is;
#   verdict_real.sh evaluate BUILD_DIR DB [REGRESS_OPTIONS...]   A/A and planted slowdowns on
#       copies of those runs, one line per cell with how many trials exited 0, 1 and 2:
#       aa41   baseline session k (4 runs) vs the first run of session k+1;
#       aa11   the first run of session k vs the first run of session k+1;
#       aa11n  the same with --no-history (nothing measures the noise: it is assumed);
#       p44    session k vs a copy of session k+1 with every sample 10% slower;
#       p44t   the first runs of sessions k..k+3 vs copies (10% slower) of the first runs of
#              sessions k+4..k+7: 4 runs a side, each at a different time;
#       two41  session k vs a copy of the first run of session k+1 2x slower;
#       nodes  sessions k and k+1 (3 runs each) as two nodes (node B a copy on its own system),
#              node B as it is (exit 0 = pass) and 10% slower (exit 1 = flagged).
#   Copies carry their own commit, so that history never pairs them with the runs they came
#   from. The runs' cpu_wait is kept: on a busy machine most verdicts are `contended` (exit 2);
#   pass `--cpu-wait-level 100 --cpu-wait-gap 100` (and NODES_OPTS="--cpu-wait-level 100") to see
#   the statistics alone.
set -u
mode=${1:?usage: verdict_real.sh collect|evaluate BUILD_DIR DB ...}
build=${2:?BUILD_DIR}
db=${3:?DB}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
runner=$build/runner/runner
report=$build/report/report

if [ "$mode" = collect ]; then
	sessions=${1:?SESSIONS}
	export OMP_NUM_THREADS=1
	for ((k = 0; k < sessions; k++)); do
		"$runner" run "$here/verdict_aa_cpu.yaml" --db "$db" --label "s$k" --repeat 4 >/dev/null 2>&1 || exit 1
		echo "session $k done $(date +%T), load $(cut -d' ' -f1 /proc/loadavg)"
		[ $((k + 1)) -lt "$sessions" ] && sleep $((180 + RANDOM % 300))
	done
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
q() { sqlite3 -batch "$1" "$2"; }
nsess=$(q "$db" "select count(distinct label) from runs where label glob 's[0-9]*' and status = 'complete'")
first() { q "$db" "select min(id) from runs where label = 's$1' and status = 'complete'"; }

# copy_runs DB IDS LABEL FACTOR [SYSTEM]: copy runs (one new group) with samples x FACTOR
copy_runs() {
	local to=$1 ids=$2 label=$3 factor=$4 system=${5:-}
	q "$to" "
	INSERT INTO runs (uuid, system_id, started_at, ended_at, status, git_commit, git_dirty, git_branch,
	                  tool_version, command_line, sweep_path, sweep_name, sweep_text, sweep_hash, label,
	                  env, group_id)
	  SELECT '$label-' || uuid, coalesce(${system:-NULL}, system_id), started_at, ended_at, status,
	         'copy$factor', git_dirty, git_branch, tool_version, command_line, sweep_path, sweep_name,
	         sweep_text, sweep_hash, '$label', env, 'group-$label'
	  FROM runs WHERE id IN ($ids);
	INSERT INTO cases (run_id, ord, suite, impl, device, dtype, pass, batch_size, heads, seq_len,
	                   head_dim, causal, model, params, case_key, name, warmup, iters, status, reason,
	                   cpu_wait)
	  SELECT r2.id, c.ord, c.suite, c.impl, c.device, c.dtype, c.pass, c.batch_size, c.heads,
	         c.seq_len, c.head_dim, c.causal, c.model, c.params, c.case_key, c.name, c.warmup,
	         c.iters, c.status, c.reason, c.cpu_wait
	  FROM cases c JOIN runs r1 ON r1.id = c.run_id JOIN runs r2 ON r2.uuid = '$label-' || r1.uuid
	  WHERE r1.id IN ($ids);
	INSERT INTO samples (case_id, phase, iter, ns)
	  SELECT c2.id, s.phase, s.iter, CAST(s.ns * $factor AS INTEGER)
	  FROM samples s JOIN cases c1 ON c1.id = s.case_id JOIN runs r1 ON r1.id = c1.run_id
	  JOIN runs r2 ON r2.uuid = '$label-' || r1.uuid JOIN cases c2 ON c2.run_id = r2.id AND c2.ord = c1.ord
	  WHERE r1.id IN ($ids);"
}

tally() {   # NAME: reads exit codes on stdin
	local c0=0 c1=0 c2=0 e
	while read -r e; do
		case $e in 0) c0=$((c0 + 1)) ;; 1) c1=$((c1 + 1)) ;; *) c2=$((c2 + 1)) ;; esac
	done
	echo "$1: exit 0 $c0, exit 1 $c1, exit 2 $c2 of $((c0 + c1 + c2))"
}

echo "$db: $nsess sessions; cpu_wait median $(q "$db" "select printf('%.2f', avg(cpu_wait)) from (select cpu_wait from cases where cpu_wait is not null order by cpu_wait limit 2 - (select count(*) from cases where cpu_wait is not null) % 2 offset ((select count(*) from cases where cpu_wait is not null) - 1) / 2)")"
for ((k = 0; k + 1 < nsess; k++)); do
	"$report" regress --db "$db" --baseline-label "s$k" --candidate "$(first $((k + 1)))" "$@" >/dev/null 2>&1
	echo $?
done | tally aa41
for ((k = 0; k + 1 < nsess; k++)); do
	"$report" regress --db "$db" --baseline "$(first $k)" --candidate "$(first $((k + 1)))" "$@" >/dev/null 2>&1
	echo $?
done | tally aa11
for ((k = 0; k + 1 < nsess; k++)); do
	"$report" regress --db "$db" --baseline "$(first $k)" --candidate "$(first $((k + 1)))" --no-history "$@" >/dev/null 2>&1
	echo $?
done | tally aa11n
for factor in 1.10 2; do
	cp "$db" "$tmp/x.db"
	for ((k = 1; k < nsess; k++)); do
		copy_runs "$tmp/x.db" "$(q "$db" "select group_concat(id) from runs where label = 's$k' and status = 'complete'")" "x$k" "$factor"
	done
	for ((k = 0; k + 1 < nsess; k++)); do
		"$report" regress --db "$tmp/x.db" --baseline-label "s$k" --candidate-label "x$((k + 1))" "$@" >/dev/null 2>&1
		echo $?
	done | tally "p44 (x$factor)"
	if [ "$factor" = 1.10 ]; then
		for ((k = 0; k + 7 < nsess; k++)); do
			args=()
			for ((j = k; j < k + 4; j++)); do args+=(--baseline "$(first $j)"); done
			for ((j = k + 4; j < k + 8; j++)); do
				args+=(--candidate "$(q "$tmp/x.db" "select min(id) from runs where label = 'x$j'")")
			done
			"$report" regress --db "$tmp/x.db" "${args[@]}" "$@" >/dev/null 2>&1
			echo $?
		done | tally "p44t (x$factor)"
	fi
done
for factor in 1 1.10; do
	for ((k = 0; k + 1 < nsess; k++)); do
		cp "$db" "$tmp/n.db"
		keep=$(q "$db" "select group_concat(id) from (select id from runs where label = 's$k' and status = 'complete' order by id limit 3)")
		other=$(q "$db" "select group_concat(id) from (select id from runs where label = 's$((k + 1))' and status = 'complete' order by id limit 3)")
		q "$tmp/n.db" "INSERT INTO systems (fingerprint, hostname, first_seen) VALUES ('nodeB', 'nodeB', '2026-01-01')"
		copy_runs "$tmp/n.db" "$other" nodeB "$factor" "(SELECT id FROM systems WHERE hostname = 'nodeB')"
		q "$tmp/n.db" "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id NOT IN ($keep) AND label <> 'nodeB'"
		# shellcheck disable=SC2086
		"$report" nodes --db "$tmp/n.db" ${NODES_OPTS:-} >/dev/null 2>&1
		echo $?
	done | tally "nodes (node B x$factor)"
done
