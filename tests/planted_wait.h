/* tests/planted_wait.h: a planted reading of the process's wait for a CPU (common/proc_wait.h,
 * cpu_wait_plant), for tests whose outcome the machine's load must not decide (iters: auto's
 * contention rule; a GEMM's tuning, which keeps the wrapper's choice when the process waited:
 * dnnl_wrap.c): each reading adds 1 ms of running and planted_wait_ns of waiting (0: a quiet
 * machine; 1000000: a share of 0.5). */
#ifndef BENCHDB_TESTS_PLANTED_WAIT_H
#define BENCHDB_TESTS_PLANTED_WAIT_H

#include <stdint.h>

#include "proc_wait.h"

static struct cpu_wait planted_sched;   /* the totals read so far */
static int64_t planted_wait_ns;

static void planted_reader(struct cpu_wait *w)
{
	planted_sched.run_ns += 1000000;
	planted_sched.wait_ns += planted_wait_ns;
	planted_sched.ok = 1;
	*w = planted_sched;
}

#endif
