/* runner/sysinfo.h: what a run records about the machine, the build and the environment. */
#ifndef BENCHDB_SYSINFO_H
#define BENCHDB_SYSINFO_H

#include "records.h"
#include "strbuf.h"

/* Build provenance, generated at build time (runner/git_info.cmake). "" / -1 when unknown. */
extern const char *const build_git_commit;
extern const char *const build_git_branch;
extern const int build_git_dirty;

/* Fill si from the running machine. Never fails: what cannot be read stays "" / 0. */
void sysinfo_collect(struct sysinfo *si);
/* Append a JSON object of the environment variables that matter to measurements (set ones only)
 * plus "cpus_allowed", the CPUs this process may run on, where its affinity mask allows fewer
 * than the machine has online, "cpu_quota", the CPUs' time its control group allows, where
 * less than that (cgroup_cpu.h), and "omp_max_threads", the OpenMP thread count the kernels will
 * use (OMP_THREAD_LIMIT counted). */
void sysinfo_env_json(struct strbuf *sb);
/* Total and available memory of the machine in bytes (0 when unknown). */
void sysinfo_memory(int64_t *total, int64_t *available);

#endif
