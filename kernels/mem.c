/* kernels/mem.c: counted, limited, aligned allocations. */
#include "mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each block carries its size in a 64-byte header so that mem_free can account for it. */
#define HEADER 64

void mem_init(struct mem_arena *m, int64_t limit)
{
	memset(m, 0, sizeof(*m));
	m->limit = limit;
}

/* Sizes beyond INT64_MAX (a workload's own arithmetic can ask for them) are recorded as
 * INT64_MAX, and so is a need that would pass it: "at least this", never a wrapped small number
 * (an oom case needing 2^64 - 400 bytes was stored as needing 400). */
void mem_refused(struct mem_arena *m, size_t bytes)
{
	if (!m->failed) {
		m->failed = bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
		m->failed_need = m->failed > INT64_MAX - m->live ? INT64_MAX : m->live + m->failed;
	}
}

int mem_charge(struct mem_arena *m, size_t bytes)
{
	if (bytes > (size_t)INT64_MAX / 2 || (m->limit > 0 && m->live + (int64_t)bytes > m->limit)) {
		mem_refused(m, bytes);
		return -1;
	}
	m->live += (int64_t)bytes;
	if (m->live > m->peak)
		m->peak = m->live;
	return 0;
}

void mem_uncharge(struct mem_arena *m, size_t bytes) { m->live -= (int64_t)bytes; }

void *mem_alloc(struct mem_arena *m, size_t bytes)
{
	if (bytes > SIZE_MAX - HEADER - 63) {
		mem_refused(m, bytes);
		return NULL;
	}
	int64_t peak = m->peak;
	if (mem_charge(m, bytes))
		return NULL;
	size_t total = (bytes + HEADER + 63) & ~(size_t)63;
	char *base = aligned_alloc(64, total);
	if (!base) {
		mem_uncharge(m, bytes);
		m->peak = peak;
		mem_refused(m, bytes);
		return NULL;
	}
	memset(base + HEADER, 0, bytes);
	*(size_t *)base = bytes;
	return base + HEADER;
}

void mem_free(struct mem_arena *m, void *p)
{
	if (!p)
		return;
	char *base = (char *)p - HEADER;
	m->live -= (int64_t)*(size_t *)base;
	free(base);
}

void mem_reset_peak(struct mem_arena *m) { m->peak = m->live; }

int mem_vfail(struct bd_error *err, const struct mem_arena *m, double bytes, const char *why,
	      const char *what, va_list ap)
{
	char name[160];
	vsnprintf(name, sizeof(name), what, ap);
	double in_all = (double)m->live + bytes;
	if (m->limit > 0 && in_all > (double)m->limit)
		return bd_fail(err, BD_ENOMEM,
			       "%s needs %.0f bytes (%.0f in all with the %lld already allocated), over "
			       "the memory limit of %lld bytes",
			       name, bytes, in_all, (long long)m->live, (long long)m->limit);
	return bd_fail(err, BD_ENOMEM, "%s needs %.0f bytes: %s", name, bytes, why);
}

int mem_fail(struct bd_error *err, const struct mem_arena *m, double bytes, const char *why,
	     const char *what, ...)
{
	va_list ap;
	va_start(ap, what);
	int rc = mem_vfail(err, m, bytes, why, what, ap);
	va_end(ap);
	return rc;
}

void *mem_alloc_for(struct mem_arena *m, double bytes, struct bd_error *err, const char *what,
		    ...)
{
	void *p = bytes < 0x1p62 ? mem_alloc(m, (size_t)bytes) : NULL;
	if (!p) {
		va_list ap;
		va_start(ap, what);
		mem_vfail(err, m, bytes, "out of host memory", what, ap);
		va_end(ap);
	}
	return p;
}
