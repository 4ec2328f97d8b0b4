#!/bin/bash
# configs/perf/cgroup_quota.sh QUOTA_US: a 1024^3 matmul unthrottled, then in a cgroup v1 cpu group of QUOTA_US per 100 ms (50000: half a CPU); as root. README, "Contention is visible everywhere".
# run the probe sweep unthrottled, then in a cgroup (v1 cpu) limited to $1 of a CPU
R=${RUNNER:-build/runner/runner}
db=${DB:-/tmp/quota.db}
rm -f $db
$R run configs/perf/cgroup_quota.yaml --db $db --label free >/dev/null 2>&1
cg=/sys/fs/cgroup/cpu/bdq
mkdir -p $cg
echo 100000 > $cg/cpu.cfs_period_us
echo $1 > $cg/cpu.cfs_quota_us
cat $cg/cpu.stat
bash -c "echo \$\$ > $cg/tasks; exec $R run configs/perf/cgroup_quota.yaml --db $db --label quota" >/dev/null 2>&1
cat $cg/cpu.stat
sqlite3 $db "select r.label, c.name, c.cpu_wait, (select avg(ns)/1e6 from samples s where s.case_id=c.id and s.iter>=0) from cases c join runs r on r.id=c.run_id"
rmdir $cg
