/* common/xalloc.h: host allocations that do not fail.
 *
 * benchdb's one policy for host out-of-memory: the host memory benchdb itself needs (sweeps,
 * strings, tables) is small next to what a machine that runs benchmarks has, and nothing useful
 * can be done without it; when such an allocation fails, the process stops at once with
 * "out of memory" on stderr, as git's xmalloc does, instead of every caller passing BD_ENOMEM up.
 * Every library file (common, db, report, runner) allocates only through these. Workload memory
 * is not this: it goes through the memory limit (kernels/mem.h) and a refusal is the case's status
 * oom; so is a case's sample buffer (runner/measure.c), whose size the sweep's iters choose. */
#ifndef BENCHDB_XALLOC_H
#define BENCHDB_XALLOC_H

#include <stddef.h>

/* Print "benchdb: out of memory" and abort. */
_Noreturn void out_of_memory(void);

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);        /* n = 0 or size = 0 still gives a pointer */
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
