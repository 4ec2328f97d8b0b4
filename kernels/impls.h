/* kernels/impls.h: the implementations each backend has, one table per backend (impls.c). It is
 * the one list of names: the registry makes a workload of each row (registry.c), the sweep takes
 * its valid impls from it (workload_impl_names), and a backend asked for an impl it lacks names
 * the ones it has from it. No dependencies: the sweep parser links it without the kernels.
 *
 * A new implementation is a row here and its code behind the backend's device ops (for attention
 * on the cpu: a row of the kernel table in cpu/attention_cpu.c); the suite's workload
 * (workloads/) runs it on every device whose table has it.
 */
#ifndef BENCHDB_IMPLS_H
#define BENCHDB_IMPLS_H

#include <stddef.h>

#include "params.h"

struct impl {
	const char *suite;     /* "attention", "e2e", "matmul"; NULL ends a table */
	const char *name;      /* the sweep's impl: "naive", "flash", "sdpa", ... */
	const char *summary;   /* what it is, in one line */
	unsigned dtypes;       /* the dtypes it takes (IMPL_DTYPE bits), refused before it runs with
				* the list; 0: whatever its workload's or backend's own checks take */
};

#define IMPL_DTYPE(t) (1u << (t))

/* device's row of impl name of suite, NULL when its table has none. */
const struct impl *impl_find(const char *suite, const char *name, enum bd_device device);

/* The rows of device's table, in the order that lists show them, ending with a NULL suite; an
 * empty table for a device out of range. */
const struct impl *impl_table(enum bd_device device);
/* 1 when device's table has impl name of suite, else 0. */
int impl_runs_on(const char *suite, const char *name, enum bd_device device);
/* suite's impls on device, comma-separated ("naive, flash"), into buf of size n; returns buf. */
const char *impl_list(const char *suite, enum bd_device device, char *buf, size_t n);

#endif
