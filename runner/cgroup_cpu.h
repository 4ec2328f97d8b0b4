/* runner/cgroup_cpu.h: the CPU time this process's control group allows (a container's or a
 * Kubernetes pod's CPU limit, a systemd CPUQuota=), which can be less than the CPUs it sees. A
 * case whose threads outrun the quota is stopped until the next period: its threads wait for a
 * CPU, which schedstat's run delay counts (cpu_wait.h), so such cases are marked contended; the
 * run records the quota (sysinfo_env_json) and runner run warns before the first case. */
#ifndef BENCHDB_CGROUP_CPU_H
#define BENCHDB_CGROUP_CPU_H

#include <stdio.h>

/* The smallest CPU quota, in CPUs (quota / period), along the path from the process's control
 * group to its hierarchy's root: cgroup v2's cpu.max and cgroup v1's cpu.cfs_quota_us over
 * cpu.cfs_period_us, both where both are mounted. proc_cgroup and mountinfo are the files to
 * read (/proc/self/cgroup, /proc/self/mountinfo; tests give others). Returns 0 with *cpus set
 * when a quota applies; 1 when none does or none could be read (no cgroup file system, a path
 * outside the mounts). */
int cgroup_cpu_quota(const char *proc_cgroup, const char *mountinfo, double *cpus);

/* The same for this process (/proc/self/...). */
int cgroup_cpu_quota_self(double *cpus);

/* Before a run's first case: when the quota is less than the OpenMP threads a case runs, say so
 * on f (what it does to the cases and what to do) and return 1; else 0, printing nothing. */
int cgroup_cpu_quota_warn(FILE *f);

#endif
