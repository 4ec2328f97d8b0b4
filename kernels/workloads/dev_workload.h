/* kernels/workloads/dev_workload.h: what the workloads share. Each suite has one workload,
 * written once over the device ops (ops.h); the registry (registry.c) makes of it one per device
 * whose implementation table has the suite, so that a backend is its device ops and its table.
 *
 * A case's state is a struct that starts with struct wl_case (the case's parameters, its arena
 * and its open device); the timing hooks below take it as that.
 */
#ifndef BENCHDB_DEV_WORKLOAD_H
#define BENCHDB_DEV_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "workload.h"

struct wl_case {
	struct case_params p;
	struct mem_arena *mem;
	struct dev dev;
	int dev_open;            /* dev was opened: wl_case_close closes it */
};

/* The start of a workload's setup: *state = a zeroed case of size bytes (a struct that starts
 * with struct wl_case) with p and mem, and p->device opened with p->tf32. STATUS_OK, or
 * STATUS_ERROR (out of host memory), or dev_open's failure as a status (UNSUPPORTED: no such
 * device here). *state is set whenever the case was allocated: the runner's teardown frees it. */
int wl_case_open(size_t size, const struct case_params *p, struct mem_arena *mem, void **state,
		 struct wl_status *st);
/* Accepts NULL. Closes the device and frees c; the workload frees its buffers first. */
void wl_case_close(struct wl_case *c);

/* The timing hooks of workload.h (mark, elapsed, drain) on a wl_case's device: events in slots
 * 2·phase and 2·phase + 1, and sync. The registry leaves them out on a synchronous device. */
int wl_case_mark(void *state, int slot, struct wl_status *st);
int wl_case_elapsed(void *state, enum bd_phase phase, int64_t *ns, struct wl_status *st);
int wl_case_drain(void *state, struct wl_status *st);
/* workload.h's describe on a wl_case's device: what its backend says of how it ran the case's
 * products (the CPU's: whether a layer's dW and dX ran at once, which float32 products kept
 * which implementation: ops.h, describe); "" when the device says nothing. */
void wl_case_describe(void *state, char *buf, size_t n);

/* A failed dev call (rc) as the case's status (wl_from_error: oom, unsupported or error) with
 * dev's message, after "what: " unless what is NULL or the message already starts with it. */
int wl_from_dev(struct wl_status *st, const struct dev *dev, int rc, const char *what);

/* dev->ops->alloc of bytes for the buffer named by what (printf-style); when refused, NULL with
 * dev->err saying so by name, size and limit (mem_fail) and code BD_ENOMEM. */
void *wl_dev_alloc(struct dev *dev, size_t bytes, const char *what, ...)
	__attribute__((format(printf, 3, 4)));

/* The checks a workload makes of a case's device, each STATUS_OK (st untouched) or the refusal
 * in st: wl_check_dtype: the impl's row takes the case's dtype ("the cpu naive attention runs
 * float32 only, not float16"); wl_check_device: the device can be opened here (e.g. "no usable
 * CUDA GPU: ..."); wl_check_gemm: its GEMMs take the dtype and the tf32 setting. */
int wl_check_dtype(const struct case_params *p, struct wl_status *st);
int wl_check_device(const struct case_params *p, struct wl_status *st);
int wl_check_gemm(const struct case_params *p, struct wl_status *st);

#endif
