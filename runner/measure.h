/* runner/measure.h: one case, start to finish — check, setup, validate, warm up, measure. */
#ifndef BENCHDB_MEASURE_H
#define BENCHDB_MEASURE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "workload.h"

/* Set by the SIGINT/SIGTERM handler; the loop stops at the next iteration boundary. */
extern volatile sig_atomic_t measure_interrupted;

/* The signals that end a run (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ) are held (blocked) from
 * the start of `runner run`, so that every thread created later (OpenMP's, oneDNN's) holds them
 * too, and are taken only where the flag is read, in the main thread: measure_take_signals lets
 * the pending ones through to the handler and returns measure_interrupted. Under load, a SIGINT
 * handled on a worker thread in the middle of a oneDNN primitive was followed by heap corruption
 * (malloc aborting in oneDNN or at exit, about 1 run in 15 under load); with the signals taken
 * at iteration boundaries only, it was not seen again. measure_release_signals lets them through
 * for good (a peer case: the runner only waits on another process). */
void measure_hold_signals(void);
int measure_take_signals(void);
void measure_release_signals(void);

struct case_result {
	enum bd_status status;
	char reason[2048];         /* why, for every status but ok (a peer's stderr tail fits) */
	int interrupted;           /* the case did not finish: store nothing */
	double max_diff, tolerance;/* -1 when not validated */
	struct wl_figures figures;
	struct wl_memory memory;   /* by category, from the workload after setup; zeros if none */
	int64_t peak_fwd_bytes, peak_bwd_bytes, peak_bytes; /* -1 unknown */
	struct sample *samples;    /* (warmup + iters) x phases, iteration-major; malloc'd */
	size_t nsamples;
	int64_t iters;             /* cases.iters: the case's iters, or for iters: auto the measured
				    * iterations it ran (as many as the stopping rule took) */
	double rse;                /* the median's estimated relative standard error over the
				    * measured iterations (common/median_rse.h; cases.rse), the final
				    * estimate; INFINITY when unknown (too few, not ok). iters: auto
				    * stops on it: stop_reason "precision", "max_time" or
				    * "max_iters" (runner/precision.h); a fixed count's: "iters" */
	int64_t elapsed_ns;
	char impl_info[2048];      /* JSON object of what ran (workload->describe, a peer's info); "" none */
	const char *stop_reason;   /* what ended the measured loop (cases.stop_reason); NULL if not ok */
	double cpu_wait;           /* share of the measured iterations' time the runner's threads
				    * waited for a CPU (cpu_wait.c); -1 unknown */
};

/* Run one case of workload w (NULL: none is built for the case, stored as unsupported). Never
 * fails as a function: every outcome is a status in *res. The caller frees res->samples.
 * on_iteration (may be NULL) is called after each timed iteration. */
void measure_case(const struct workload *w, const struct case_params *p, struct case_result *res,
		  void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx);
/* The same in steps, so that the runner can measure several cases in alternating rounds
 * (interleaving, cmd_run.c): case_run_begin checks, sets up and validates the case (NULL when
 * it ends there: *res is then complete); case_run_step runs up to count more iterations, warm-up
 * first, and returns 1 once the case has finished (every iteration run, iters: auto's rule, a
 * failure or an interrupt: res says which); case_run_end drains, tears down and completes *res
 * (elapsed_ns: the case's own time, not the other cases' rounds between its steps; cpu_wait: over
 * its measured iterations only). A case's state stays allocated from begin to end. */
struct case_run;
struct case_run *case_run_begin(const struct workload *w, const struct case_params *p,
				struct case_result *res,
				void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx);
int case_run_step(struct case_run *cr, int64_t count);
void case_run_end(struct case_run *cr);

/* Measure the n cases w[k], p[k] (results in res[k]) in alternating rounds: each case's warm-up
 * and first iters / rounds iterations (iters: auto: min_iters a round, until its rule stops it),
 * then the next case's, ..., every other round in reverse order (A B, B A, A B, ...), so that a
 * drift of the machine during the rounds reaches each case alike (docs/performance.md,
 * "Interleaving"). The states live together; once those set up take more than half the memory
 * limit, they are measured to the end before the next is set up. An interrupt stops every case
 * at its next iteration boundary, and a case not set up when it comes is never set up (res[k]
 * only says interrupted). ctx: one on_iteration context per case (may be NULL). */
void measure_interleaved(const struct workload *const *w, const struct case_params *const *p,
			 struct case_result *res, size_t n, int rounds,
			 void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void **ctx);
/* Cases that the caller runs in steps, beside built-in ones (a persistent peer's: peer_run_*):
 * those k with mine[k] set. begin(k) starts case k (NULL: it ended there, res[k] complete), step
 * runs up to count more iterations and returns 1 once it has ended, end completes res[k]. Their
 * memory is not counted against the limit (it is not the runner's). */
struct interleave_ext {
	const unsigned char *mine;
	void *(*begin)(void *ctx, size_t k, struct case_result *res);
	int (*step)(void *run, int64_t count);
	void (*end)(void *run);
	void *ctx;
};
/* measure_interleaved with ext's cases (ext->mine) run by ext; NULL: none. */
void measure_interleaved_ext(const struct workload *const *w, const struct case_params *const *p,
			     struct case_result *res, size_t n, int rounds,
			     void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void **ctx,
			     const struct interleave_ext *ext);

/* The median's relative standard error over the measured iterations of res (those from warmup
 * on, each one's phases summed; common/median_rse.h); INFINITY when there are too few or no
 * memory for the series. */
double case_result_rse(const struct case_result *res, int64_t warmup);
/* Nanoseconds of CLOCK_MONOTONIC. */
int64_t now_ns(void);

#endif
