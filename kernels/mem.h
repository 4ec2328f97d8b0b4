/* kernels/mem.h: the workloads' own memory accounting, with an optional limit.
 *
 * Every buffer a workload allocates for a case goes through mem_alloc, so the live and peak
 * bytes are exact and a limit turns an allocation beyond it into an out-of-memory result
 * (status `oom`) instead of driving the machine into swap.
 */
#ifndef BENCHDB_MEM_H
#define BENCHDB_MEM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct mem_arena {
	int64_t limit;      /* bytes; 0 = no limit */
	int64_t live;       /* bytes currently allocated */
	int64_t peak;       /* maximum of live since mem_init or mem_reset_peak */
	int64_t failed;     /* size of the first allocation refused, 0 if none */
	int64_t failed_need;/* live + that size: the bytes the case needed at that point */
};

void mem_init(struct mem_arena *m, int64_t limit);
/* 64-byte aligned, zero-filled. NULL when over the limit or out of host memory; the refused size
 * is recorded in failed/failed_need. */
void *mem_alloc(struct mem_arena *m, size_t bytes);
/* Accepts NULL. */
void mem_free(struct mem_arena *m, void *p);
void mem_reset_peak(struct mem_arena *m);

/* Accounting alone, for memory another allocator hands out (a GPU's): mem_charge counts bytes
 * against the limit and returns 0, or -1 (recording failed/failed_need as mem_alloc does) when
 * they would exceed it; mem_refused records a refusal by that allocator itself; mem_uncharge
 * gives counted bytes back. */
int mem_charge(struct mem_arena *m, size_t bytes);
void mem_refused(struct mem_arena *m, size_t bytes);
void mem_uncharge(struct mem_arena *m, size_t bytes);

/* The failure of an allocation of bytes for the buffer named by what (printf-style, from ap),
 * refused by m's limit or by the allocator behind it: err gets BD_ENOMEM and "WHAT needs N bytes
 * (M in all with the K already allocated), over the memory limit of L bytes" when m's limit
 * refused it, else "WHAT needs N bytes: WHY" (the allocator's reason, e.g. "out of host memory").
 * Returns BD_ENOMEM. */
int mem_vfail(struct bd_error *err, const struct mem_arena *m, double bytes, const char *why,
	      const char *what, va_list ap) __attribute__((format(printf, 5, 0)));
/* mem_vfail with its arguments, for a refusal already recorded (m->failed bytes, say). */
int mem_fail(struct bd_error *err, const struct mem_arena *m, double bytes, const char *why,
	     const char *what, ...) __attribute__((format(printf, 5, 6)));
/* mem_alloc of bytes (a double, so that a size computed beyond SIZE_MAX is refused, not wrapped)
 * for the buffer named by what; NULL with err filled by mem_vfail when refused. */
void *mem_alloc_for(struct mem_arena *m, double bytes, struct bd_error *err, const char *what,
		    ...) __attribute__((format(printf, 4, 5)));

#endif
