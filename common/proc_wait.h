/* common/proc_wait.h: how long this process's threads ran (their CPU clocks) and waited for a
 * CPU (Linux's schedstat), read by the runner around a case's measured iterations
 * (runner/cpu_wait.h) and by the CPU backend around the timing that chooses a GEMM kernel
 * (kernels/cpu/dnnl_wrap.c). */
#ifndef BENCHDB_PROC_WAIT_H
#define BENCHDB_PROC_WAIT_H

#include <stdint.h>

/* The share of its measured time a case may wait for a CPU and still count as measured on a
 * quiet machine: above it, iters: auto does not stop for precision (precision.h), runner run
 * warns, the reports mark the case (the same 5%), and a GEMM's tuning keeps the wrapper's
 * choice (dnnl_wrap.c). */
#define CPU_WAIT_CONTENDED 0.05

struct cpu_wait {
	int64_t run_ns, wait_ns;   /* summed over the process's threads */
	int ok;                    /* 0: /proc/self/task/.../schedstat could not be read */
};

/* The process's totals now. */
void cpu_wait_read(struct cpu_wait *w);
/* For tests of what reads the totals (iters: auto's contention rule, the run's cpu_wait): the
 * readings come from reader instead of /proc, so that a planted workload on a loaded machine
 * (ctest -j) reads the waiting the test plants, not the machine's. NULL goes back to /proc. */
void cpu_wait_plant(void (*reader)(struct cpu_wait *w));
/* wait / (run + wait) between two readings, in [0, 1]; -1 when unknown (no schedstat, or no
 * time counted in between). */
double cpu_wait_share(const struct cpu_wait *before, const struct cpu_wait *after);

#endif
