#!/usr/bin/env bash
# tests/cli/cgroup_test.sh: a run under a CPU quota (a container's or pod's CPU limit) says so
# and is marked contended, never read as a slower kernel. A real control group (cgroup v1's cpu
# controller or cgroup v2's cpu.max) limited to half a CPU; `runner run` of a small matmul inside
# it (1024³, 20 iterations: 43 GFLOP, many of the quota's 100 ms periods even at 500 GFLOP/s), two
# OpenMP threads: runner run warns before the first case, the run's env records
# "cpu_quota":0.5, and the case waited for a CPU (the quota's throttling counts in schedstat's run
# delay), so `report` marks it contended. Skipped (77) where no control group can be made (not
# root, no cpu controller, a read-only cgroup file system).
#   cgroup_test.sh RUNNER REPORT
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"

group="" procs=""
# mountinfo: ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
mounts() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") { print $(i + 1), $(i + 3), $5; break } }' \
		/proc/self/mountinfo 2>/dev/null
}
v1=$(mounts | awk '$1 == "cgroup" && $2 ~ /(^|,)cpu(,|$)/ { print $3; exit }')
v2=$(mounts | awk '$1 == "cgroup2" { print $3; exit }')
if [ -n "$v1" ] && [ "$(id -u)" = 0 ]; then
	group=$v1/benchdb-test-$$
	if mkdir "$group" 2>/dev/null && echo 100000 >"$group/cpu.cfs_period_us" 2>/dev/null &&
		echo 50000 >"$group/cpu.cfs_quota_us" 2>/dev/null; then
		procs=$group/tasks
	else
		rmdir "$group" 2>/dev/null
		group=""
	fi
fi
if [ -z "$procs" ] && [ -n "$v2" ] && [ "$(id -u)" = 0 ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
	group=$v2/benchdb-test-$$
	if mkdir "$group" 2>/dev/null && echo "50000 100000" >"$group/cpu.max" 2>/dev/null; then
		procs=$group/cgroup.procs
	else
		rmdir "$group" 2>/dev/null
		group=""
	fi
fi
if [ -z "$procs" ]; then
	echo "skipped: no control group with a CPU quota can be made here (root: $([ "$(id -u)" = 0 ] && echo yes || echo no); cgroup v1 cpu: ${v1:-none}; cgroup v2: ${v2:-none})"
	exit 77
fi
trap 'rmdir "$group" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

cat >"$T/sweep.yaml" <<'EOF'
name: quota
defaults: {warmup: 1, iters: 20, device: cpu, dtype: float32}
benchmarks:
  - suite: matmul
    impl: onednn
    size: 1024
EOF
db=$T/q.db
# the runner joins the group, then runs the sweep with two threads on half a CPU
OMP_NUM_THREADS=2 bash -c 'echo $$ >"$1" && exec "$2" run "$3" --db "$4"' _ "$procs" "$RUNNER" \
	"$T/sweep.yaml" "$db" >"$T/out" 2>"$T/err"
st=$?
check "runner run under a quota exits 0 (exit $st: $(tail -c 300 "$T/err"))" [ "$st" = 0 ]
contains "$T/err" "control group allows 0\.5 CPUs' time .* the cases run 2 threads" \
	"runner run warns of the quota before the first case"
contains "$T/err" "raise the limit to a whole CPU or more" "the advice fits a quota under one CPU"
check "the run's env records the quota" \
	[ "$(sql "$db" "select json_extract(env, '\$.cpu_quota') from runs")" = 0.5 ]
wait_share=$(sql "$db" "select cpu_wait from cases")
check "the case waited for a CPU (cpu_wait $wait_share)" \
	awk -v w="$wait_share" 'BEGIN { exit !(w > 0.05) }'
expect_status 0 "report of the run" "$REPORT" --db "$db" --format csv
contains "$T/out" ',"?contended \(waited [0-9]+%\)' "report marks the case contended"

# outside the group: no warning, no quota recorded (where the test's own group has none)
"$RUNNER" run "$T/sweep.yaml" --db "$T/free.db" >/dev/null 2>"$T/err"
if [ "$(sql "$T/free.db" "select json_extract(env, '\$.cpu_quota') from runs")" = "" ]; then
	lacks "$T/err" "control group allows" "no quota warning without a quota"
fi
finish cgroup
