/* tests/planted_wait.h: a planted reading of the process's wait for a CPU (common/proc_wait.h,
 * cpu_wait_plant), for tests whose outcome the machine's load must not decide (a GEMM's tuning
 * keeps the wrapper's choice when the process waited: dnnl_wrap.c): each reading adds 1 ms of
 * running and, while planted_contention is set, 1 ms of waiting (a share of 0.5). */
#ifndef BENCHDB_TESTS_PLANTED_WAIT_H
#define BENCHDB_TESTS_PLANTED_WAIT_H

#include <stdint.h>

#include "proc_wait.h"

static int planted_contention;

static void planted_wait_reader(struct cpu_wait *w)
{
	static int64_t ran, waited;
	ran++;
	waited += planted_contention != 0;
	w->run_ns = ran * 1000000;
	w->wait_ns = waited * 1000000;
	w->ok = 1;
}

#endif
