#!/usr/bin/env bash
# tests/cli/slurm_test.sh: `runner slurm … --shards 4 --submit` and `runner slurm … --nodes 3
# --submit` on a real Slurm. Starts munged, slurmctld and three slurmd — nodes n1, n2, n3 of one
# CPU each, all on this machine (loopback, its own slurm.conf, munge key and ports in a temporary
# directory, as root) — submits the job array for configs/smoke.yaml (a CPU sweep of seconds),
# waits for it (bounded), merges the four shard databases and checks that the merged group holds
# exactly the cases of the unsharded sweep; then the every-node job: the sweep once on each node
# (a job step, a task per node), merged by the job itself, and `report nodes` over the three.
# Stops its daemons (by their pids) when done. Skips (77) only where Slurm and munge are not
# installed (.ci/run installs Debian's slurm-wlm and munge) or we are not root.
#   slurm_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"
started=$(date +%s)

for tool in munged slurmctld slurmd sbatch squeue scontrol; do
	if ! command -v "$tool" >/dev/null; then
		echo "skipped: $tool not found; install Debian's slurm-wlm and munge (apt-get install slurm-wlm munge; .ci/run does)"
		exit 77
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "skipped: a test Slurm runs slurmd as root; run as root"
	exit 77
fi

D=$T/slurm
mkdir -p "$D/state" "$D/spool" "$D/munge" "$D/results" "$D/tmp"
# the jobs inherit it (sbatch exports the environment): their node-local copies go under this
# test's directory, not /tmp/benchdb-JOB-TASK, where two copies of the test at once would clash
export TMPDIR=$D/tmp
chmod 700 "$D/munge"
pids=()
stop_daemons() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
	pids=()
}
trap 'stop_daemons; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

# ---- munge: a fresh key, our own socket -----------------------------------------------------------
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$D/munge/munge.key"
munged -F --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" \
	--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
	--seed-file="$D/munge/munged.seed" >"$D/munge/stdout" 2>&1 &
pids+=($!)

# ---- slurm: three nodes, n1-n3, each a slurmd of its own on this host (loopback), ports at random
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
cat >"$D/slurm.conf" <<CONF
ClusterName=benchdbtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.sock
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd-%n.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 2)) CPUs=1 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 3)) CPUs=1 State=UNKNOWN
NodeName=n3 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 4)) CPUs=1 State=UNKNOWN
PartitionName=bench Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$D/slurm.conf
for _ in $(seq 50); do [ -S "$D/munge/munge.sock" ] && break; sleep 0.1; done
check "munged is up" [ -S "$D/munge/munge.sock" ]
slurmctld -D -i -f "$SLURM_CONF" >"$D/slurmctld.stdout" 2>&1 &
pids+=($!)
for node in n1 n2 n3; do
	slurmd -D -N "$node" -f "$SLURM_CONF" >"$D/slurmd-$node.stdout" 2>&1 &
	pids+=($!)
done
idle=""
for _ in $(seq 60); do
	idle=$(sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
	[ "$idle" = "idle " ] && break
	sleep 0.5
done
if [ "$idle" != "idle " ]; then
	fail "the test Slurm did not come up (node states '$idle'); logs:"
	tail -20 "$D/slurmctld.log" "$D"/slurmd-*.log "$D/slurmctld.stdout" "$D"/slurmd-*.stdout >&2
	finish slurm
	exit 1
fi
ok
up=$(($(date +%s) - started))

# ---- the sweep, whole and on Slurm in 4 shards -----------------------------------------------------
SWEEP=$SRC/configs/smoke.yaml   # the README's example
expect_status 0 "unsharded run" "$RUNNER" run "$SWEEP" --db "$T/whole.db"
cd "$T" || exit 1
expect_status 0 "runner slurm --submit" "$RUNNER" slurm "$SWEEP" --shards 4 --time 5:00 \
	--results "$D/results" --submit
contains "$T/out" "^submitted job [0-9]+: 4 array tasks" "the job id is printed"
job=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$T/out")
check "the script is an sbatch job array" grep -q '^#SBATCH --array=0-3$' "$D/results/smoke.sbatch"
# wait_job JOB WHAT: until Slurm no longer lists the job, at most 240 s
wait_job() {
	local waited=0
	while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ] && [ $waited -lt 240 ]; do
		sleep 1
		waited=$((waited + 1))
	done
	check "$2 finished within 240 s" [ $waited -lt 240 ]
}
wait_job "$job" "the array"
for i in 0 1 2 3; do
	state=$(scontrol show job "${job}_$i" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p' | head -1)
	check "task $i completed (state '$state')" [ "$state" = COMPLETED ]
	check "task $i's database copied to the results" [ -s "$D/results/shard-$job-$i.db" ]
done
expect_status 0 "merge the shards" "$RUNNER" merge --db "$T/all.db" "$D/results"/shard-"$job"-*.db
contains "$T/out" "merged 4 of 4 databases" "four databases merged"
keys() { sql "$1" "select case_key from cases $2 order by case_key"; }
check "the merged group holds exactly the sweep's cases" \
	[ "$(keys "$T/all.db" "where run_id in (select id from runs where group_id = 'slurm-$job')")" = "$(keys "$T/whole.db" "")" ]
check "four shards of 4 in the group" \
	[ "$(sql "$T/all.db" "select group_concat(shard_index || '/' || shard_count) from (select * from runs where group_id = 'slurm-$job' order by shard_index)")" = "0/4,1/4,2/4,3/4" ]
expect_status 0 "report --run slurm-JOB" "$REPORT" --db "$T/all.db" --run "slurm-$job" --format csv
check "the report has every case" [ "$(grep -c ',cpu,' "$T/out")" = "$(sql "$T/whole.db" "select count(*) from cases")" ]

# ---- every node: the whole sweep once on each of the three, merged by the job ---------------------
expect_status 0 "runner slurm --nodes 3 --submit" "$RUNNER" slurm "$SWEEP" --nodes 3 --time 5:00 \
	--results "$D/nodes" --submit
contains "$T/out" "^submitted job [0-9]+: 3 nodes" "the job id is printed"
job=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$T/out")
check "one job of three nodes, a task each" grep -q '^#SBATCH --nodes=3$' "$D/nodes/smoke.sbatch"
wait_job "$job" "the every-node job"
state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p' | head -1)
check "the every-node job completed (state '$state')" [ "$state" = COMPLETED ]
merged=$D/nodes/nodes-$job.db
for k in 0 1 2; do
	check "node task $k's database copied to the results" [ -s "$D/nodes/node-$job-$k.db" ]
done
check "the job merged them into nodes-JOB.db" [ -s "$merged" ]
contains "$D/nodes/slurm-$job.out" "merged 3 of 3 databases" "the merge step merged three"
check "three runs in the group slurm-JOB" \
	[ "$(sql "$merged" "select count(*) from runs where group_id = 'slurm-$job' and status = 'complete'")" = 3 ]
check "recorded under the nodes' Slurm names" \
	[ "$(sql "$merged" "select group_concat(hostname) from (select distinct y.hostname from runs r join systems y on y.id = r.system_id order by 1)")" = "n1,n2,n3" ]
for node in n1 n2 n3; do
	check "$node ran the whole sweep" [ "$(keys "$merged" "where run_id in (select r.id from runs r join systems y on y.id = r.system_id where y.hostname = '$node')")" = "$(keys "$T/whole.db" "")" ]
done
"$REPORT" nodes --db "$merged" >"$T/out" 2>"$T/err"
nodes_status=$?
check "report nodes compares them (exit $nodes_status: 0 alike, 1 a node off, 2 cannot tell)" \
	[ "$nodes_status" -le 2 ]
ncases=$(sql "$T/whole.db" "select count(*) from cases where status = 'ok'")
check "report nodes opens with the nodes" [ "$(grep -m1 '^### ' "$T/out")" = "### nodes" ]
for node in n1 n2 n3; do
	contains "$T/out" "^\| $node +\| +$ncases \| +[0-9]+ \| .* on [0-9]+ of $ncases cases" "report nodes: a line for $node, its $ncases cases"
done
if [ "$failed" != 0 ]; then
	tail -n 5 "$D/results"/slurm-*.out "$D"/nodes/slurm-*.out "$D/slurmctld.log" >&2
fi
stop_daemons
check "the daemons are stopped" [ -z "$(jobs -rp)" ]
echo "slurm: up in ${up} s, $(($(date +%s) - started)) s in all"
finish slurm
