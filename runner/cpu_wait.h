/* runner/cpu_wait.h: the share of its time the runner waited for a CPU (cpu_wait.c). */
#ifndef BENCHDB_CPU_WAIT_H
#define BENCHDB_CPU_WAIT_H

#include <stdint.h>

struct cpu_wait {
	int64_t run_ns, wait_ns;   /* summed over the process's threads */
	int ok;                    /* 0: /proc/self/task/.../schedstat could not be read */
};

/* The process's totals now. */
void cpu_wait_read(struct cpu_wait *w);
/* wait / (run + wait) between two readings, in [0, 1]; -1 when unknown (no schedstat, or no
 * time counted in between). */
double cpu_wait_share(const struct cpu_wait *before, const struct cpu_wait *after);

#endif
