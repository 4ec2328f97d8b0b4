/* kernels/workload.h: the one interface between the runner and every benchmark workload.
 *
 * A workload runs the impls of one suite on one device (registry.c: each suite's workload is
 * written once, over the device ops, and registered for every device whose implementation table
 * has the suite); which impls those are is the device's table (impls.h), and the case's impl says
 * which one. For each case the runner calls:
 *   check -> setup -> validate -> [untimed fwd if pass is backward] -> warmup+iters x run(phase)
 *   -> [drain] -> teardown.
 * kernels/ never includes runner/ or db/; a workload reports through struct wl_status.
 */
#ifndef BENCHDB_WORKLOAD_H
#define BENCHDB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "mem.h"
#include "params.h"

/* Workload calls return an enum bd_status (vocab.h), stored as the case's status: STATUS_OK;
 * STATUS_OOM for an allocation beyond the memory limit or the machine; STATUS_ERROR for wrong
 * numbers (validation) or a failed call; STATUS_UNSUPPORTED when this impl cannot run this
 * combination (the reason says why). */
struct wl_status {
	int code;           /* enum bd_status */
	char reason[512];   /* empty for STATUS_OK */
	double max_diff;    /* validation: max |impl - reference| seen (abs error), -1 if not validated */
	double tolerance;   /* validation: the bound it was held to */
};

/* Per-iteration work of a case, so that reports can show FLOP/s and bytes/s. */
struct wl_figures {
	double flops[PHASE_COUNT];  /* floating-point operations per phase per iteration */
	double bytes[PHASE_COUNT];  /* minimum bytes moved per phase per iteration */
	int64_t param_bytes;        /* bytes of model parameters (0 for kernels) */
	int64_t param_count;        /* parameters of the case's model (0 for kernels) */
};

/* Bytes a case holds, by what they hold (workloads with a model; zeros otherwise). */
struct wl_memory {
	int64_t params, grads, optim, activations, workspace;
};

struct workload {
	const char *suite;
	enum bd_device device;    /* set by the registry */
	/* STATUS_OK if this impl can run p, else STATUS_UNSUPPORTED with st->reason. Cheap; no
	 * allocation. */
	int (*check)(const struct case_params *p, struct wl_status *st);
	void (*figures)(const struct case_params *p, struct wl_figures *f);
	/* Allocate everything the case needs through mem (so the limit applies) and fill inputs with
	 * random values from p->seed. STATUS_OOM when mem refuses. On failure *state may be left set; the
	 * runner calls teardown on it. */
	int (*setup)(const struct case_params *p, struct mem_arena *mem, void **state,
		     struct wl_status *st);
	/* Run the impl once on the case inputs and compare every output it times (forward outputs
	 * and, for passes with a backward, the gradients) with the float64 CPU reference. STATUS_ERROR
	 * with st->max_diff when outside tolerance. May allocate temporaries through mem. */
	int (*validate)(void *state, struct wl_status *st);
	/* One timed phase of one iteration. Must be deterministic in cost and must not allocate. */
	int (*run)(void *state, enum bd_phase phase, struct wl_status *st);
	/* Accepts NULL. Frees through the mem given to setup. */
	void (*teardown)(void *state);
	/* Optional (NULL): the bytes by category, after a successful setup. */
	void (*memory)(void *state, struct wl_memory *m);

	/* Optional, for devices that run asynchronously (CUDA); NULL on the CPU, whose phases are
	 * done when run returns. There run only enqueues the phase's work. With sync: true the
	 * runner calls mark(state, 2·phase) right before and mark(state, 2·phase + 1) right after
	 * each timed run, and once the iteration's phases are enqueued, elapsed(state, phase, &ns)
	 * for each: the device time between the two marks (events on the work stream), which
	 * waits for the phase to finish. A start mark may hold the stream with a device-side delay
	 * before its event, so that the event fires with the phase already queued (CUDA:
	 * backend_cuda.c); the delay is not in the time. With sync: false the runner keeps its host clock and
	 * never waits (the missing-synchronize mistake, on purpose). drain waits for all queued
	 * work; the runner calls it once the timed loop is complete, so that a failure inside the
	 * device's queue is reported in both modes (a failed mark or elapsed is reported itself). */
	int (*mark)(void *state, int slot, struct wl_status *st);
	int (*elapsed)(void *state, enum bd_phase phase, int64_t *ns, struct wl_status *st);
	int (*drain)(void *state, struct wl_status *st);

	/* Optional (NULL): what setup would allocate, by category, computed without allocating
	 * (`runner list`); STATUS_OK, or STATUS_UNSUPPORTED with st->reason when check would refuse. The
	 * workspaces a backend allocates itself (e.g. attention's) are left out. */
	int (*estimate)(const struct case_params *p, struct wl_memory *m, struct wl_status *st);

	/* Optional (NULL): what ran, beyond the impl's name, as the members of a JSON object
	 * without its braces (e.g. "\"graph\": \"sdpa_fwd\", \"engine\": 3"; "" for nothing),
	 * written into buf (n bytes). Called after validation, once the case has run once, and
	 * stored as cases.impl_info (schemas/008_case_detail.sql). */
	void (*describe)(void *state, char *buf, size_t n);
};

/* Set st's code and reason (printf-style; "" for STATUS_OK) and return the code, so that a workload
 * can `return wl_set(st, STATUS_UNSUPPORTED, "...", ...)`. */
int wl_set(struct wl_status *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The one mapping from a library return code to a case status: BD_ENOMEM -> STATUS_OOM,
 * BD_EUNSUPPORTED -> STATUS_UNSUPPORTED (a capability this machine, library or build lacks), anything
 * else -> STATUS_ERROR; the reason is "what: " (when what is not NULL) and err's message. */
int wl_from_error(struct wl_status *st, int rc, const char *what, const struct bd_error *err);

/* NULL-terminated list of all workloads built into this binary, one per suite and device (filled
 * before main). */
extern const struct workload *const *const workloads;
/* The workload that runs suite's impl on device, or NULL when device's table has no such impl. */
const struct workload *workload_find(const char *suite, const char *impl, enum bd_device device);
/* 1 when device's buffers are host memory (the cpu), so that a share of the host's memory is the
 * natural limit of its cases; else 0. */
int workload_host_memory(enum bd_device device);
/* Valid impl names for a suite (NULL-terminated, including impls of devices not built here),
 * used by the sweep parser for "valid choices". NULL for an unknown suite. */
const char *const *workload_impl_names(const char *suite);
/* Valid suite names (NULL-terminated). */
extern const char *const workload_suites[];

#endif
