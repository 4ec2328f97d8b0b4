#!/usr/bin/env bash
# tests/cli/kube_test.sh: `runner kube` (issue 30): the Kubernetes manifests of both modes —
# shards and every node — and their merge Jobs, checked against Kubernetes' own schemas with
# PyPI's kubernetes-validate (--strict: no field Kubernetes does not know), a broken manifest
# refused by the same check; then each pod's script and the merge Job's script run here as the
# pods would (their /sweep, /scratch and /results volumes as directories of the test, the index
# and the node name in the environment Kubernetes gives them), and the merged database checked:
# the shards hold exactly the unsharded sweep's cases, every node ran the whole sweep and `report
# nodes` compares them. A real cluster cannot run here. Skips (77) where kubernetes-validate is
# not installed (.ci/run installs it into build-venv).
#   kube_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"
VALIDATE=${BENCHDB_KUBE_VALIDATE:-}
[ -z "$VALIDATE" ] && VALIDATE=$(command -v kubernetes-validate)
[ -z "$VALIDATE" ] && [ -x "$SRC/build-venv/bin/kubernetes-validate" ] && \
	VALIDATE=$SRC/build-venv/bin/kubernetes-validate
if [ -z "$VALIDATE" ]; then
	echo "skipped: kubernetes-validate not found (python3 -m venv build-venv &&" \
		"build-venv/bin/pip install kubernetes-validate; .ci/run does)"
	exit 77
fi
PY=$(dirname "$VALIDATE")/python
[ -x "$PY" ] || PY=python3
SWEEP=$SRC/configs/smoke.yaml
expect_status 0 "the unsharded sweep" "$RUNNER" run "$SWEEP" --db "$T/whole.db"
keys() { sql "$1" "select case_key from cases $2 order by case_key"; }

# --cpus: a Kubernetes CPU quantity; its whole CPUs (at least 1) are the pods' OpenMP threads
for q in 500m:1 2.5:2 16:16; do
	expect_status 0 "runner kube --cpus ${q%%:*}" "$RUNNER" kube "$SWEEP" --shards 2 --image x --cpus "${q%%:*}"
	check "--cpus ${q%%:*}: OMP_NUM_THREADS ${q#*:}" [ "$(grep -A1 -- '- name: OMP_NUM_THREADS' "$T/out" | sed -n 's/.*value: "\(.*\)"/\1/p')" = "${q#*:}" ]
done
for q in 0 -2 2x 1.5m "" 0x10 1e3 2. .5; do
	expect_status 2 "runner kube --cpus '$q' refused" "$RUNNER" kube "$SWEEP" --shards 2 --image x --cpus "$q"
	contains "$T/err" "--cpus expects a Kubernetes CPU quantity above 0 \(e.g. 8, 2.5, 500m\), got '$q'" "--cpus '$q': why"
done
expect_status 0 "runner kube without --cpus" "$RUNNER" kube "$SWEEP" --shards 2 --image x
lacks "$T/out" "OMP_NUM_THREADS" "no --cpus: the image's own OpenMP settings"

for mode in shards nodes; do
	expect_status 0 "runner kube --$mode 3" "$RUNNER" kube "$SWEEP" --$mode 3 --image example.org/benchdb:1 \
		--label "it's $mode" --cpus 2 --memory 4Gi -o "$T/$mode.yaml"
	expect_status 0 "runner kube --$mode 3 --merge" "$RUNNER" kube "$SWEEP" --$mode 3 \
		--image example.org/benchdb:1 --merge -o "$T/$mode-merge.yaml"
	for f in "$mode" "$mode-merge"; do
		expect_status 0 "$f.yaml against Kubernetes' schemas" "$VALIDATE" --strict "$T/$f.yaml"
		lacks "$T/out" "FAIL|ERROR" "$f.yaml: every resource passed"
	done
	contains "$T/$mode.yaml" "^  completionMode: Indexed$" "$mode: an Indexed Job"
	# the CPU limit is a quota the container does not see: the runner's threads follow it
	contains "$T/$mode.yaml" '^            - name: OMP_NUM_THREADS$' "$mode: OMP_NUM_THREADS set with --cpus"
	check "$mode: OMP_NUM_THREADS is --cpus 2" grep -A1 -q -- '- name: OMP_NUM_THREADS' "$T/$mode.yaml"
	check "$mode: its value 2" [ "$(grep -A1 -- '- name: OMP_NUM_THREADS' "$T/$mode.yaml" | sed -n 's/.*value: "\(.*\)"/\1/p')" = 2 ]
done
contains "$T/nodes.yaml" "podAntiAffinity" "nodes: one pod per node"
contains "$T/nodes.yaml" "fieldPath: spec.nodeName" "nodes: recorded under the node's name"
# shards too: under the pod's host name (new each Job) every night's runs were a new machine's
contains "$T/shards.yaml" "fieldPath: spec.nodeName" "shards: recorded under the node's name"
contains "$T/shards.yaml" "--shard auto/3" "shards: pod i runs slice i of 3"
# each Job's runs are a group of their own, named by the Job's uid (the group was the Job's name,
# every Job of that name's)
for mode in shards nodes; do
	contains "$T/$mode.yaml" "fieldPath: \"metadata.labels\['batch.kubernetes.io/controller-uid'\]\"" "$mode: the Job's uid in the pod's environment"
done
# the check can fail: a type Kubernetes does not take, a field it does not know
sed 's/^  completions: 3$/  completions: three/' "$T/nodes.yaml" >"$T/bad1.yaml"
expect_status 1 "a manifest with completions: three" "$VALIDATE" --strict "$T/bad1.yaml"
sed 's/^  parallelism: 3$/  paralelism: 3/' "$T/nodes.yaml" >"$T/bad2.yaml"
expect_status 1 "a manifest with a misspelt field" "$VALIDATE" --strict "$T/bad2.yaml"

# pod_script FILE: the container's script of the Job in FILE
pod_script() {
	"$PY" - "$1" <<'PYEOF'
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc["kind"] == "Job":
        print(doc["spec"]["template"]["spec"]["containers"][0]["command"][2], end="")
PYEOF
}
sweep_text() {
	"$PY" - "$1" <<'PYEOF'
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc["kind"] == "ConfigMap":
        print(doc["data"]["sweep.yaml"], end="")
PYEOF
}
UID1=0b6c2e1a-7f3d-4c59-9a1e-5d2f8b4c6e01   # the Job's metadata.uid, as Kubernetes gives it
for mode in shards nodes; do
	V=$T/$mode-volumes
	mkdir -p "$V/sweep" "$V/results"
	sweep_text "$T/$mode.yaml" >"$V/sweep/sweep.yaml"
	check "$mode: the ConfigMap holds the sweep as it is" cmp -s "$V/sweep/sweep.yaml" "$SWEEP"
	# the volumes' mount points, here as the test's directories
	pod_script "$T/$mode.yaml" | sed -e "s#/sweep/#$V/sweep/#g" -e "s#/results/#$V/results/#g" \
		-e "s#/scratch/#$V/scratch-\${JOB_COMPLETION_INDEX}/#g" >"$V/pod.sh"
	pod_script "$T/$mode-merge.yaml" | sed -e "s#/results/#$V/results/#g" >"$V/merge.sh"
	# an earlier Job of this name left pod 1's database with a -wal beside it on the volume (its
	# runner was killed); this Job's pod 1 closes its database cleanly, without a -wal: the old
	# one must not stay beside the new file (SQLite would read its pages into it)
	expect_status 0 "$mode: an earlier Job's pod 1" "$RUNNER" run "$SWEEP" --db "$T/$mode-earlier.db"
	sqlite3 -batch "$T/$mode-earlier.db" "PRAGMA wal_autocheckpoint = 0; UPDATE runs SET label = 'earlier Job';" \
		".shell cp '$T/$mode-earlier.db' '$V/results/benchdb-smoke-${mode%s}-1.db'; cp '$T/$mode-earlier.db-wal' '$V/results/benchdb-smoke-${mode%s}-1.db-wal'" >/dev/null
	check "$mode: the earlier Job's file has its -wal" [ -s "$V/results/benchdb-smoke-${mode%s}-1.db-wal" ]
	for i in 0 1 2; do
		mkdir -p "$V/scratch-$i"
		(cd "$V" && JOB_COMPLETION_INDEX=$i BENCHDB_RUNNER=$RUNNER BENCHDB_NODE=node-$i \
			BENCHDB_JOB_UID=$UID1 sh "$V/pod.sh") >"$T/out" 2>"$T/err"
		check "$mode: pod $i exits 0" [ $? = 0 ]
		contains "$T/out" "runner run exited 0; database: .*benchdb-smoke-${mode%s}-$i.db, group benchdb-smoke-$UID1" "$mode: pod $i copied its database"
	done
	(BENCHDB_RUNNER=$RUNNER BENCHDB_HOLD_SECONDS=0 sh "$V/merge.sh") >"$T/out" 2>"$T/err"
	check "$mode: the merge Job exits 0" [ $? = 0 ]
	contains "$T/out" "merged 3 of 3 databases" "$mode: three databases merged"
	merged=$V/results/benchdb-smoke.db
	check "$mode: three runs of the Job's group" \
		[ "$(sql "$merged" "select count(distinct id) || ' ' || group_concat(distinct group_id) from runs")" = "3 benchdb-smoke-$UID1" ]
	check "$mode: the label reached every run" \
		[ "$(sql "$merged" "select count(*) from runs where label = 'it''s $mode'")" = 3 ]
	check "$mode: no -wal of the earlier Job beside pod 1's file" \
		[ ! -e "$V/results/benchdb-smoke-${mode%s}-1.db-wal" ]
	check "$mode: nothing of the earlier Job merged" \
		[ "$(sql "$merged" "select count(*) from runs where label = 'earlier Job'")" = 0 ]
done
merged=$T/shards-volumes/results/benchdb-smoke.db
check "shards: the three slices hold exactly the sweep's cases" [ "$(keys "$merged" "")" = "$(keys "$T/whole.db" "")" ]
expect_status 0 "report --run the Job's group" "$REPORT" --db "$merged" --run "benchdb-smoke-$UID1"
contains "$T/out" "^## run [0-9]+: smoke \(complete\)" "the Job's group is complete"
# a second Job of that name (deleted and applied again, the next night: another uid) whose pod 1
# wrote nothing (not scheduled, its image without the runner): the first Job's pod 1 database is
# still on the volume, and its runs in the merged database. Under one group for both Jobs that
# shard stood in for the second Job's, and the group read complete
V=$T/shards-volumes
UID2=5e9d0c3b-1a2f-4e6d-8b7c-3f4a5b6c7d82
rm -rf "$V"/scratch-*
for i in 0 2; do
	mkdir -p "$V/scratch-$i"
	(cd "$V" && JOB_COMPLETION_INDEX=$i BENCHDB_RUNNER=$RUNNER BENCHDB_JOB_UID=$UID2 sh "$V/pod.sh") >"$T/out" 2>"$T/err"
	check "second Job: pod $i exits 0" [ $? = 0 ]
done
(BENCHDB_RUNNER=$RUNNER BENCHDB_HOLD_SECONDS=0 sh "$V/merge.sh") >"$T/out" 2>"$T/err"
check "second Job: the merge Job exits 0" [ $? = 0 ]
expect_status 0 "report --run the second Job's group" "$REPORT" --db "$merged" --run "benchdb-smoke-$UID2"
contains "$T/out" "^## run [0-9]+: smoke \(not a whole group: shard 1 of 3 missing\)" "the second Job's group lacks its pod 1, said"
lacks "$T/out" "\(complete\)" "the second Job's group is not complete"
# a pod without the Job's uid (a manifest edited, a Kubernetes before 1.27) runs nothing
mkdir -p "$V/scratch-1"
(cd "$V" && JOB_COMPLETION_INDEX=1 BENCHDB_RUNNER=$RUNNER sh "$V/pod.sh") >"$T/out" 2>"$T/err"
check "a pod without BENCHDB_JOB_UID exits 2" [ $? = 2 ]
contains "$T/err" "no BENCHDB_JOB_UID \(the Job's uid" "a pod without the Job's uid says why"
check "a pod without BENCHDB_JOB_UID runs nothing" [ ! -e "$V/scratch-1/run.db" ]
merged=$T/nodes-volumes/results/benchdb-smoke.db
for i in 0 1 2; do
	check "nodes: node-$i ran the whole sweep" [ "$(keys "$merged" "where run_id in (select r.id from runs r join systems y on y.id = r.system_id where y.hostname = 'node-$i')")" = "$(keys "$T/whole.db" "")" ]
done
"$REPORT" nodes --db "$merged" >"$T/out" 2>"$T/err"
check "report nodes compares the three (exit 0, 1 or 2)" [ $? -le 2 ]
ncases=$(sql "$T/whole.db" "select count(*) from cases where status = 'ok'")
for i in 0 1 2; do
	contains "$T/out" "^\| node-$i +\| +$ncases \| +[0-9]+ \| .* on [0-9]+ of $ncases cases" "report nodes: a line for node-$i"
done

# a pod stopped (deleted, evicted, preempted): Kubernetes sends SIGTERM to the container's first
# process alone, the pod's shell; the runner must hear it, end its run interrupted, and the shell
# still copy its database (the shell used to ignore it as PID 1, or die of it, and the runner was
# killed with the pod at the end of the grace period, its cases lost with the scratch volume)
V=$T/stop-volumes
mkdir -p "$V/sweep" "$V/results" "$V/scratch-0"
expect_status 0 "runner kube of a slower sweep" "$RUNNER" kube "$SRC/tests/cli/slow.yaml" --shards 1 \
	--image example.org/benchdb:1 -o "$T/stop.yaml"
sweep_text "$T/stop.yaml" >"$V/sweep/sweep.yaml"
pod_script "$T/stop.yaml" | sed -e "s#/sweep/#$V/sweep/#g" -e "s#/results/#$V/results/#g" \
	-e "s#/scratch/#$V/scratch-0/#g" >"$V/pod.sh"
(cd "$V" && JOB_COMPLETION_INDEX=0 BENCHDB_RUNNER=$RUNNER BENCHDB_JOB_UID=$UID1 exec sh "$V/pod.sh") >"$T/out" 2>"$T/err" &
pod=$!
for _ in $(seq 600); do   # until its second case is stored (at most a minute)
	[ "$(sql "$V/scratch-0/run.db" "select count(*) from cases" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
	sleep 0.1
done
kill -TERM "$pod"
wait "$pod"
check "the stopped pod exits as its run did (130; got $?)" [ $? = 130 ]
check "the stopped pod's database copied, its run interrupted with its cases" \
	[ "$(sql "$V/results/benchdb-cli-slow-shard-0.db" "select status || ' ' || ((select count(*) from cases) >= 2) from runs")" = "interrupted 1" ]

expect_status 2 "runner kube without --image" "$RUNNER" kube "$SWEEP" --nodes 2
contains "$T/err" "--image IMAGE is required" "the image is asked for"
expect_status 2 "runner kube with --shards and --nodes" "$RUNNER" kube "$SWEEP" --nodes 2 --shards 2 --image x
finish kube
