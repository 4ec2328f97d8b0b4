/* tests/test_measure.c: the measurement loop (runner/measure.c) on fake workloads — what is
 * timed, what is stored, and that a wrong kernel is never timed; iters: auto's stopping rule
 * (runner/precision.c) on planted times, never the wall clock. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "checked.h"
#include "cpu_wait.h"
#include "log_median.h"
#include "measure.h"
#include "planted_wait.h"
#include "mem.h"
#include "precision.h"

/* What the fake workloads saw. */
static struct {
	int runs[PHASE_COUNT];   /* run() calls per phase */
	int setups, teardowns, validations;
} seen;

struct fake {
	struct mem_arena *mem;
	void *buf;
};

static int ok_check(const struct case_params *p, struct wl_status *st)
{
	(void)p;
	(void)st;
	return STATUS_OK;
}

static void fake_figures(const struct case_params *p, struct wl_figures *f)
{
	(void)p;
	memset(f, 0, sizeof(*f));
	f->flops[PHASE_FWD] = 1000;
	f->flops[PHASE_BWD] = 2500;
}

static int fake_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		      struct wl_status *st)
{
	(void)st;
	static struct fake f;
	seen.setups++;
	f.mem = mem;
	f.buf = mem_alloc(mem, (size_t)p->batch_size);
	*state = &f;
	return f.buf ? STATUS_OK : STATUS_OOM;
}

static int good_validate(void *state, struct wl_status *st)
{
	(void)state;
	seen.validations++;
	st->max_diff = 1e-7;
	st->tolerance = 1e-5;
	return STATUS_OK;
}

static int wrong_validate(void *state, struct wl_status *st)
{
	(void)state;
	seen.validations++;
	st->max_diff = 0.5;
	st->tolerance = 1e-5;
	snprintf(st->reason, sizeof(st->reason), "forward output differs by 0.5 (tolerance 1e-05)");
	return STATUS_ERROR;
}

static int fake_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	(void)state;
	(void)st;
	seen.runs[phase]++;
	return STATUS_OK;
}

static void fake_teardown(void *state)
{
	struct fake *f = state;
	seen.teardowns++;
	if (f)
		mem_free(f->mem, f->buf);
}

static int picky_check(const struct case_params *p, struct wl_status *st)
{
	(void)p;
	snprintf(st->reason, sizeof(st->reason), "fake runs float64 only");
	return STATUS_UNSUPPORTED;
}

#define FAKE_WORKLOAD(check_, validate_)                                                    \
	{.suite = "attention", .device = DEVICE_CPU, .check = check_, .figures = fake_figures,     \
	 .setup = fake_setup, .validate = validate_, .run = fake_run, .teardown = fake_teardown}
static const struct workload good = FAKE_WORKLOAD(ok_check, good_validate);
static const struct workload wrong = FAKE_WORKLOAD(ok_check, wrong_validate);
static const struct workload picky = FAKE_WORKLOAD(picky_check, good_validate);

/* A fake asynchronous ("device") workload: every call goes into seen.log, in order, as a code;
 * elapsed reports a distinctive device time per phase, well away from any host time of the
 * empty run. */
enum { LOG_RUN = 100, LOG_ELAPSED = 200, LOG_DRAIN = 300, LOG_MAX = 512 };
static const int64_t device_ns[PHASE_COUNT] = {1000003, 2000003, 3000005};
static struct {
	int log[LOG_MAX];
	int nlog;
	int marks, elapsed, drains;
	int elapsed_fail_at;   /* fail the n-th elapsed call (1-based); 0: never */
	int64_t (*planted)(int call);   /* the time of the n-th elapsed call (0-based); NULL: device_ns */
	int mark_fail_at;      /* fail the n-th mark call (1-based); 0: never */
	int drain_fails;
} dev;

static void dev_log(int code)
{
	if (dev.nlog < LOG_MAX)
		dev.log[dev.nlog++] = code;
}

static int dev_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	dev_log(LOG_RUN + (int)phase);
	return fake_run(state, phase, st);
}

static int dev_mark(void *state, int slot, struct wl_status *st)
{
	(void)state;
	dev_log(slot);
	if (++dev.marks == dev.mark_fail_at)
		return wl_set(st, STATUS_ERROR, "fake event record failed at slot %d", slot);
	return STATUS_OK;
}

static int dev_elapsed(void *state, enum bd_phase phase, int64_t *ns, struct wl_status *st)
{
	(void)state;
	dev_log(LOG_ELAPSED + (int)phase);
	if (++dev.elapsed == dev.elapsed_fail_at)
		return wl_set(st, STATUS_ERROR, "fake kernel fault in %s", phase_name(phase));
	*ns = dev.planted ? dev.planted(dev.elapsed - 1) : device_ns[phase];
	return STATUS_OK;
}

static int dev_drain(void *state, struct wl_status *st)
{
	(void)state;
	dev_log(LOG_DRAIN);
	dev.drains++;
	if (dev.drain_fails)
		return wl_set(st, STATUS_ERROR, "fake queue failed: illegal address");
	return STATUS_OK;
}

static const struct workload device = {
	.suite = "attention", .device = DEVICE_CUDA, .check = ok_check, .figures = fake_figures,
	.setup = fake_setup, .validate = good_validate, .run = dev_run, .teardown = fake_teardown,
	.mark = dev_mark, .elapsed = dev_elapsed, .drain = dev_drain};

static struct case_params params(enum bd_pass pass, int64_t warmup, int64_t iters)
{
	struct case_params p;
	memset(&p, 0, sizeof(p));
	p.suite = SUITE_ATTENTION;
	snprintf(p.impl, sizeof(p.impl), "fake");
	p.pass = pass;
	p.warmup = warmup;
	p.iters = iters;
	p.batch_size = 4096;   /* bytes the fake setup allocates */
	return p;
}

/* The runner's threads' schedstat, planted (planted_wait.h): every test reads it, never the
 * machine's, so that a loaded machine (ctest -j) cannot move iters: auto's contention rule under
 * a planted workload. */

static int reset(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	memset(&dev, 0, sizeof(dev));
	measure_interrupted = 0;
	memset(&planted_sched, 0, sizeof(planted_sched));
	planted_wait_ns = 0;   /* a quiet machine */
	cpu_wait_plant(planted_reader);
	return 0;
}

static void test_measure__stores_every_iteration_warmup_included(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD_BACKWARD, 3, 5);
	struct case_result res;
	measure_case(&good, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_int_equal(res.nsamples, (3 + 5) * 2);
	/* Iteration-major, fwd before bwd, indices 0..7 with warm-up first. */
	for (size_t i = 0; i < res.nsamples; i++) {
		assert_int_equal(res.samples[i].iter, (int)(i / 2));
		assert_int_equal(res.samples[i].phase, (int)(i % 2) == 0 ? PHASE_FWD : PHASE_BWD);
		assert_true(res.samples[i].ns >= 0);
	}
	assert_int_equal(seen.runs[PHASE_FWD], 8);
	assert_int_equal(seen.runs[PHASE_BWD], 8);
	assert_int_equal(seen.runs[PHASE_OPT], 0);
	assert_int_equal(seen.validations, 1);
	assert_int_equal(seen.teardowns, 1);
	assert_true(res.max_diff == 1e-7 && res.tolerance == 1e-5);
	assert_int_equal(res.peak_bytes, 4096);
	assert_int_equal(res.peak_fwd_bytes, 4096);
	assert_true(res.figures.flops[PHASE_BWD] == 2500);
	assert_true(res.elapsed_ns > 0);
	/* a fixed count: that many measured, and the count is what stopped it */
	assert_int_equal(res.iters, 5);
	assert_string_equal(res.stop_reason, "iters");
	free(res.samples);
}

/* warmup + iters beyond int64 or beyond an int32 iteration index (values the sweep parser
 * refuses, but measure_case is a library function) are an error case, never a wrapped
 * allocation (issue 15: total*3 wrapped and overran a 32-byte calloc). */
static void test_measure__iteration_counts_that_overflow_are_an_error_not_a_wrap(void **state)
{
	(void)state;
	const int64_t bad[][2] = {{2, INT64_C(6148914691236517204)},   /* x3 wraps to 2 */
				  {INT64_MAX, INT64_MAX},
				  {-1, 10},
				  {INT64_C(3074457345618258602), INT64_C(3074457345618258603)}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct case_params p = params(PASS_TRAIN_STEP, bad[i][0], bad[i][1]);
		struct case_result res;
		measure_case(&good, &p, &res, NULL, NULL);
		assert_int_equal(res.status, STATUS_ERROR);
		assert_non_null(strstr(res.reason, "out of range"));
		assert_int_equal(res.nsamples, 0);
		assert_int_equal(seen.runs[PHASE_FWD], 0);
		free(res.samples);
	}
}

static void test_measure__wrong_kernel_is_stored_as_error_and_never_timed(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD_BACKWARD, 2, 10);
	struct case_result res;
	measure_case(&wrong, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_ERROR);
	assert_non_null(strstr(res.reason, "differs by 0.5"));
	assert_true(res.max_diff == 0.5);
	assert_int_equal(res.nsamples, 0);
	assert_int_equal(seen.runs[PHASE_FWD] + seen.runs[PHASE_BWD], 0);
	assert_int_equal(seen.teardowns, 1);
	free(res.samples);
}

static void test_measure__memory_limit_gives_oom_with_the_bytes_needed(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD, 1, 1);
	p.batch_size = 1 << 20;   /* the fake asks for 1 MiB */
	p.mem_limit = 1000;
	struct case_result res;
	measure_case(&good, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OOM);
	assert_non_null(strstr(res.reason, "1048576 bytes"));
	assert_non_null(strstr(res.reason, "limit 1000"));
	assert_int_equal(res.peak_bytes, 1 << 20);
	assert_int_equal(res.nsamples, 0);
	assert_int_equal(seen.validations, 0);
	assert_int_equal(seen.teardowns, 1);
	free(res.samples);
}

/* Issue 15 item 7: a refused size at or beyond 2^63 (or a need that would pass INT64_MAX) is
 * recorded as INT64_MAX, not as a wrapped, small or negative number. */
static void test_measure__huge_refusals_saturate_instead_of_wrapping(void **state)
{
	(void)state;
	struct mem_arena m;
	mem_init(&m, 1000);
	void *a = mem_alloc(&m, 400);
	assert_non_null(a);
	assert_null(mem_alloc(&m, SIZE_MAX - 399));   /* 2^64 - 400: wrapped to "400" before */
	assert_true(m.failed == INT64_MAX && m.failed_need == INT64_MAX);
	mem_free(&m, a);

	mem_init(&m, 0);
	a = mem_alloc(&m, 400);
	assert_non_null(a);
	mem_refused(&m, (size_t)INT64_MAX - 100);   /* fits, but 400 live + it does not */
	assert_true(m.failed == INT64_MAX - 100 && m.failed_need == INT64_MAX);
	mem_free(&m, a);
}

static void test_measure__unsupported_and_missing_workloads_keep_their_reason(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD, 1, 1);
	struct case_result res;
	measure_case(&picky, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_UNSUPPORTED);
	assert_string_equal(res.reason, "fake runs float64 only");
	assert_int_equal(seen.setups, 0);
	free(res.samples);

	p.device = DEVICE_CUDA;
	measure_case(NULL, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_UNSUPPORTED);
	assert_string_equal(res.reason,
			    "no attention implementation 'fake' for device cuda in this build");
	free(res.samples);
}

static void test_measure__backward_pass_times_only_backward_after_one_forward(void **state)
{
	(void)state;
	struct case_params p = params(PASS_BACKWARD, 2, 4);
	struct case_result res;
	measure_case(&good, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_int_equal(seen.runs[PHASE_FWD], 1);   /* untimed, leaves the saved state */
	assert_int_equal(seen.runs[PHASE_BWD], 6);
	assert_int_equal(res.nsamples, 6);
	for (size_t i = 0; i < res.nsamples; i++)
		assert_int_equal(res.samples[i].phase, PHASE_BWD);
	free(res.samples);
}

static void test_measure__train_step_times_three_phases(void **state)
{
	(void)state;
	struct case_params p = params(PASS_TRAIN_STEP, 0, 3);
	struct case_result res;
	measure_case(&good, &p, &res, NULL, NULL);
	assert_int_equal(res.nsamples, 9);
	assert_int_equal(res.samples[2].phase, PHASE_OPT);
	assert_int_equal(res.samples[8].iter, 2);
	free(res.samples);
}

static void interrupt_after_two(void *ctx, int64_t iter, int64_t total)
{
	(void)ctx;
	(void)total;
	if (iter == 2)
		measure_interrupted = 1;
}

static void test_measure__interrupt_stops_at_the_next_iteration(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD, 1, 100);
	struct case_result res;
	measure_case(&good, &p, &res, interrupt_after_two, NULL);
	assert_true(res.interrupted);
	assert_int_equal(seen.runs[PHASE_FWD], 2);
	assert_int_equal(seen.teardowns, 1);
	free(res.samples);
}

static void test_measure__sync_stores_device_times_from_marks_around_each_phase(void **state)
{
	(void)state;
	struct case_params p = params(PASS_TRAIN_STEP, 2, 3);
	p.sync = 1;
	struct case_result res;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_int_equal(res.nsamples, (2 + 3) * 3);
	/* Every sample is the device's time for its phase, never the host clock's. */
	for (size_t i = 0; i < res.nsamples; i++) {
		assert_int_equal(res.samples[i].iter, (int)(i / 3));
		assert_int_equal(res.samples[i].phase, (int)(i % 3));
		assert_int_equal(res.samples[i].ns, device_ns[res.samples[i].phase]);
	}
	/* Per iteration: mark 2ph, run ph, mark 2ph+1 for each phase, then elapsed for each phase;
	 * drain once after the timed loop. */
	int want[LOG_MAX], n = 0;
	for (int it = 0; it < 2 + 3; it++) {
		for (int ph = 0; ph < PHASE_COUNT; ph++) {
			want[n++] = 2 * ph;
			want[n++] = LOG_RUN + ph;
			want[n++] = 2 * ph + 1;
		}
		for (int ph = 0; ph < PHASE_COUNT; ph++)
			want[n++] = LOG_ELAPSED + ph;
	}
	want[n++] = LOG_DRAIN;
	assert_int_equal(dev.nlog, n);
	assert_memory_equal(dev.log, want, (size_t)n * sizeof(int));
	assert_int_equal(dev.marks, 2 * 3 * (2 + 3));
	assert_int_equal(dev.elapsed, 3 * (2 + 3));
	assert_int_equal(dev.drains, 1);
	assert_int_equal(seen.runs[PHASE_OPT], 2 + 3);
	assert_int_equal(seen.teardowns, 1);
	free(res.samples);
}

static void test_measure__no_sync_keeps_the_host_clock_and_still_drains(void **state)
{
	(void)state;
	struct case_params p = params(PASS_TRAIN_STEP, 2, 3);
	p.sync = 0;
	struct case_result res;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_int_equal(res.nsamples, (2 + 3) * 3);
	/* Host times of an empty run: never the device's distinctive values. */
	for (size_t i = 0; i < res.nsamples; i++) {
		assert_true(res.samples[i].ns >= 0);
		for (int ph = 0; ph < PHASE_COUNT; ph++)
			assert_true(res.samples[i].ns != device_ns[ph]);
	}
	assert_int_equal(dev.marks, 0);
	assert_int_equal(dev.elapsed, 0);
	assert_int_equal(dev.drains, 1);
	assert_int_equal(dev.log[dev.nlog - 1], LOG_DRAIN);
	assert_int_equal(seen.runs[PHASE_FWD], 2 + 3);
	free(res.samples);

	/* sync on a workload without mark/elapsed (the CPU): the host clock, no crash. */
	p.sync = 1;
	measure_case(&good, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_int_equal(res.nsamples, (2 + 3) * 3);
	free(res.samples);
}

static void test_measure__device_failures_become_the_case_error(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD_BACKWARD, 1, 3);
	p.sync = 1;
	struct case_result res;

	/* elapsed fails on iteration 2's bwd: calls 1-2 are iteration 0, 3-4 iteration 1, ... */
	dev.elapsed_fail_at = 6;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_ERROR);
	assert_string_equal(res.reason, "fake kernel fault in bwd");
	assert_int_equal(dev.elapsed, 6);
	assert_int_equal(seen.runs[PHASE_FWD], 3);   /* stopped in iteration 2 */
	assert_int_equal(seen.teardowns, 1);
	/* what is stored is the device's times: iterations 0 and 1, and iteration 2's fwd (its bwd
	 * has no device time to store) */
	assert_int_equal(res.nsamples, 5);
	for (size_t i = 0; i < res.nsamples; i++)
		assert_int_equal(res.samples[i].ns, device_ns[res.samples[i].phase]);
	free(res.samples);

	/* drain fails after a clean timed loop */
	memset(&seen, 0, sizeof(seen));
	memset(&dev, 0, sizeof(dev));
	dev.drain_fails = 1;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_ERROR);
	assert_string_equal(res.reason, "fake queue failed: illegal address");
	assert_int_equal(dev.drains, 1);
	assert_int_equal(dev.elapsed, 2 * (1 + 3));
	assert_int_equal(seen.teardowns, 1);
	free(res.samples);

	/* drain fails with sync: false too: the queue's failure is reported either way */
	memset(&seen, 0, sizeof(seen));
	memset(&dev, 0, sizeof(dev));
	dev.drain_fails = 1;
	p.sync = 0;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_ERROR);
	assert_string_equal(res.reason, "fake queue failed: illegal address");
	assert_int_equal(dev.elapsed, 0);
	free(res.samples);

	/* a mark that fails (the event after iteration 1's fwd) */
	memset(&seen, 0, sizeof(seen));
	memset(&dev, 0, sizeof(dev));
	dev.mark_fail_at = 6;
	p.sync = 1;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_ERROR);
	assert_string_equal(res.reason, "fake event record failed at slot 1");
	assert_int_equal(seen.teardowns, 1);
	free(res.samples);
}

/* ---- iters: auto ------------------------------------------------------------------------------
 * The device workload's elapsed() gives planted times, so that what the rule sees is known
 * exactly: no wall clock anywhere. */

/* A deterministic generator (xorshift64) and a standard normal from it. */
static uint64_t rng_state;
static double uniform01(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double normal01(void)
{
	return sqrt(-2 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

/* Warm-up (the first 2 calls) 100 ms, then 1 ms with a part in a million of noise. */
static int64_t quiet(int call)
{
	return call < 2 ? 100000000 : 1000000 + call % 3;
}
/* Warm-up 100 ms, then 1 ms +- 50% (uniform): far too noisy for a 0.1% target. */
static int64_t noisy(int call)
{
	return call < 2 ? 100000000 : 500000 + (int64_t)(1000000 * uniform01());
}

static struct case_params auto_params(int64_t min_iters, int64_t max_iters, double max_time,
				      double target_rse)
{
	struct case_params p = params(PASS_FORWARD, 2, ITERS_AUTO);
	p.sync = 1;
	p.min_iters = min_iters;
	p.max_iters = max_iters;
	p.max_time = max_time;
	p.target_rse = target_rse;
	return p;
}

/* Measured iterations of a result: every sample from iteration 2 (after 2 warm-up) on. */
static int64_t measured_ns(const struct case_result *res)
{
	int64_t sum = 0;
	for (size_t i = 0; i < res->nsamples; i++)
		if (res->samples[i].iter >= 2)
			sum += res->samples[i].ns;
	return sum;
}

/* Quiet iterations: precise from the first estimate, at min_iters (none is made before), then
 * held while n grows by a fifth, at least PRECISION_HOLD: 10 + 5, and 37 + 37/5 (9 at 46). */
static void test_measure__auto_stops_for_precision_after_few_iterations_when_quiet(void **state)
{
	(void)state;
	const int64_t min_iters[] = {10, 37}, want[] = {10 + PRECISION_HOLD, 37 + 9};
	for (size_t k = 0; k < 2; k++) {
		struct case_params p = auto_params(min_iters[k], 10000, 10, 0.005);
		struct case_result res;
		dev.planted = quiet;
		dev.elapsed = 0;
		measure_case(&device, &p, &res, NULL, NULL);
		assert_int_equal(res.status, STATUS_OK);
		assert_string_equal(res.stop_reason, "precision");
		assert_int_equal(res.iters, want[k]);
		assert_int_equal(res.nsamples, 2 + want[k]);   /* warm-up stored too */
		for (size_t i = 0; i < res.nsamples; i++)
			assert_int_equal(res.samples[i].iter, (int)i);
		assert_int_equal(res.samples[0].ns, 100000000);
		free(res.samples);
	}
}

/* The same quiet iterations while the runner's threads wait for a CPU a third of the time (the
 * machine busy): precise by their spread, yet never stopped for precision — the case runs to its
 * budget and says how much it waited. */
static void test_measure__auto_does_not_stop_for_precision_while_the_case_waits_for_a_cpu(void **state)
{
	(void)state;
	struct case_params p = auto_params(10, 200, 10, 0.005);
	struct case_result res;
	dev.planted = quiet;
	planted_wait_ns = 500000;   /* 0.5 ms waited per 1 ms run: a share of 1/3 */
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_string_equal(res.stop_reason, "max_iters");
	assert_int_equal(res.iters, 200);
	assert_true(fabs(res.cpu_wait - 1.0 / 3) < 1e-9);
	free(res.samples);

	/* just under the contention level it still counts as quiet */
	reset(NULL);
	dev.planted = quiet;
	planted_wait_ns = (int64_t)(1000000 * CPU_WAIT_CONTENDED / (1 - CPU_WAIT_CONTENDED)) - 1;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_string_equal(res.stop_reason, "precision");
	assert_int_equal(res.iters, 10 + PRECISION_HOLD);
	assert_true(res.cpu_wait > 0.04 && res.cpu_wait <= CPU_WAIT_CONTENDED);
	free(res.samples);
}

/* From the iteration after n measured ones on, each reading of the wait adds a second of
 * waiting (the machine became busy). */
static int64_t busy_from;
static void busy_after(void *ctx, int64_t iter, int64_t total)
{
	(void)ctx;
	(void)total;
	if (iter - 2 == busy_from)   /* 2 warm-up iterations */
		planted_wait_ns = 1000000000;
}

/* Past 200 iterations the estimate is made each time n has grown by 2%, and the hold can end
 * between two estimates: the stop for precision must still see the wait and the estimate of the
 * iterations it stops at. min_iters 300: estimates at 300, 306, ..., 356, 362, 368, 375; precise
 * from 300, held to 374 (300 + 374 / 5). The machine turns busy after 370: the case waited most
 * of its time by 374, so it never stops for precision, and goes on to max_iters. */
static void test_measure__auto_does_not_stop_for_precision_after_a_wait_between_estimates(void **state)
{
	(void)state;
	struct case_params p = auto_params(300, 450, 1000, 0.005);
	struct case_result res;
	dev.planted = quiet;
	busy_from = 10000;   /* quiet throughout: the stop for precision, at 374 */
	measure_case(&device, &p, &res, busy_after, NULL);
	assert_string_equal(res.stop_reason, "precision");
	assert_int_equal(res.iters, 374);
	free(res.samples);

	reset(NULL);
	dev.planted = quiet;
	busy_from = 370;
	measure_case(&device, &p, &res, busy_after, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_true(res.cpu_wait > 0.5);
	assert_string_equal(res.stop_reason, "max_iters");
	assert_int_equal(res.iters, 450);
	free(res.samples);
}

static void test_measure__auto_stops_at_max_time_when_noisy(void **state)
{
	(void)state;
	struct case_params p = auto_params(10, 10000, 0.05, 0.001);
	struct case_result res;
	rng_state = 42;
	dev.planted = noisy;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_string_equal(res.stop_reason, "max_time");
	/* the first iteration that reached 50 ms of measured time (the 200 ms of warm-up is not
	 * measured time) */
	int64_t sum = measured_ns(&res), last = res.samples[res.nsamples - 1].ns;
	assert_true(sum >= 50000000 && sum - last < 50000000);
	assert_int_equal(res.iters, (int64_t)res.nsamples - 2);
	assert_true(res.iters > 25 && res.iters < 100);   /* ~50 at 1 ms on average */
	free(res.samples);
}

static void test_measure__auto_caps_at_max_iters_and_keeps_every_sample(void **state)
{
	(void)state;
	/* two phases, 300 iterations: the samples grow well past their first allocation */
	struct case_params p = auto_params(10, 300, 1000, 0.0001);
	p.pass = PASS_FORWARD_BACKWARD;
	struct case_result res;
	rng_state = 7;
	dev.planted = noisy;
	measure_case(&device, &p, &res, NULL, NULL);
	assert_int_equal(res.status, STATUS_OK);
	assert_string_equal(res.stop_reason, "max_iters");
	assert_int_equal(res.iters, 300);
	assert_int_equal(res.nsamples, (2 + 300) * 2);
	for (size_t i = 0; i < res.nsamples; i++) {
		assert_int_equal(res.samples[i].iter, (int)(i / 2));
		assert_int_equal(res.samples[i].phase, i % 2 ? PHASE_BWD : PHASE_FWD);
	}
	assert_int_equal(seen.runs[PHASE_FWD], 302);
	assert_int_equal(dev.drains, 1);
	free(res.samples);

	/* max_iters = min_iters: exactly that many, whatever the noise */
	p = auto_params(12, 12, 1000, 0.0001);
	measure_case(&device, &p, &res, NULL, NULL);
	assert_string_equal(res.stop_reason, "max_iters");
	assert_int_equal(res.iters, 12);
	free(res.samples);
}

static void test_measure__auto_with_bad_settings_is_an_error_case(void **state)
{
	(void)state;
	const struct case_params bad[] = {
		auto_params(0, 10, 1, 0.01), auto_params(20, 10, 1, 0.01),
		auto_params(1, BD_MAX_ITERS + 1, 1, 0.01), auto_params(1, 10, 0, 0.01),
		auto_params(1, 10, 1, 0), auto_params(1, 10, 1, 1), auto_params(1, 10, NAN, 0.01)};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct case_result res;
		measure_case(&device, &bad[i], &res, NULL, NULL);
		assert_int_equal(res.status, STATUS_ERROR);
		assert_non_null(strstr(res.reason, "iters: auto: "));
		assert_int_equal(res.nsamples, 0);
		assert_null(res.stop_reason);
	}
	assert_int_equal(seen.setups, 0);
}

static void test_precision__median_rse_on_planted_series(void **state)
{
	(void)state;
	enum { N = 4000 };
	static int64_t x[N], scratch[N];
	/* too few to say; a constant series is exact */
	for (size_t i = 0; i < N; i++)
		x[i] = 1000;
	assert_true(isinf(median_rse(x, MEDIAN_RSE_MIN_SAMPLES - 1, scratch)));
	assert_true(median_rse(x, MEDIAN_RSE_MIN_SAMPLES, scratch) == 0);
	for (size_t i = 0; i < N; i++)
		x[i] = 0;
	assert_true(isinf(median_rse(x, 50, scratch)));   /* no median > 0 */

	/* independent normal iterations, mean 1e6, sd 1e4: the median's standard error is
	 * sqrt(pi / 2) sd / sqrt(n), 280 ns at n = 2000; the estimate is at least that, and at most
	 * the block estimate's upper end (1.57x for 4 blocks) above it: 2x, on average over 50 series */
	rng_state = 1;
	double want = sqrt(3.141592653589793 / 2) * 1e4 / sqrt(2000) / 1e6, have = 0;
	for (int t = 0; t < 50; t++) {
		for (size_t i = 0; i < 2000; i++)
			x[i] = (int64_t)(1e6 + 1e4 * normal01());
		have += median_rse(x, 2000, scratch) / 50;
	}
	print_message("independent: rse %.3g on average, %.2f x theory\n", have, have / want);
	if (have < 0.95 * want || have > 2.0 * want)
		fail_msg("independent: rse %g, theory %g", have, want);

	/* drift: 400 independent iterations with 1% noise whose second half is 3% slower; as if
	 * independent, the median's error would be 0.06%; the blocks' medians see the step */
	for (size_t i = 0; i < 400; i++)
		x[i] = (int64_t)(1e6 * (i < 200 ? 1 : 1.03) * exp(0.01 * normal01()));
	double drift = median_rse(x, 400, scratch);
	if (drift < 0.005)
		fail_msg("a 3%% step halfway: rse %g", drift);

	/* AR(1) with coefficient 0.6: the variance of the median grows by the signs' integrated
	 * autocorrelation time, about 3 (less than the mean's (1 + 0.6) / (1 - 0.6) = 4: the signs
	 * are less correlated than the values); this series' estimate is 1.55x the independent one */
	double y = 0;
	for (size_t i = 0; i < N; i++) {
		y = 0.6 * y + sqrt(1 - 0.36) * normal01();
		x[i] = (int64_t)(1e6 + 1e4 * y);
	}
	double dependent = median_rse(x, N, scratch);
	double independent = want * sqrt(2000.0 / N);
	if (dependent < 1.4 * independent || dependent > 3.0 * independent)
		fail_msg("AR(1) 0.6: rse %g, independent %g", dependent, independent);
}

static void test_precision__stop_rule_in_order(void **state)
{
	(void)state;
	struct case_params p = auto_params(20, 100, 1, 0.01);
	/* nothing before min_iters, whatever the rest says */
	assert_null(precision_stop(&p, 19, INT64_C(5000000000), 2));
	/* precise since 20: held while n grows by a fifth, at least PRECISION_HOLD */
	assert_null(precision_stop(&p, 24, 0, 20));
	assert_string_equal(precision_stop(&p, 25, 0, 20), "precision");
	assert_null(precision_stop(&p, 60, 0, 50));
	assert_string_equal(precision_stop(&p, 63, 0, 50), "precision");
	/* then the budget: measured time, then the cap */
	assert_string_equal(precision_stop(&p, 30, 1000000000, 0), "max_time");
	assert_null(precision_stop(&p, 30, 999999999, 0));
	assert_string_equal(precision_stop(&p, 100, 0, 0), "max_iters");
	assert_string_equal(precision_stop(&p, 100, 0, 98), "max_iters");
	assert_string_equal(precision_stop(&p, 100, 2000000000, 60), "precision");
}

/* The whole rule on planted AR(1) series (log-normal iterations, median 1 ms): run as measure.c
 * runs it (an estimate at each iteration below 200, then each 2%), and over 100 trials the
 * standard deviation of the log of the median where it stopped, against the target. Printed
 * beside it: where the first estimate at or below the target would have stopped (the rule
 * without its hold), which overshoots (docs/performance.md, "iters: auto"). */
static void test_precision__auto_reaches_its_target_on_planted_autocorrelated_series(void **state)
{
	(void)state;
	enum { TRIALS = 100, N = 10000 };
	static const struct {
		double cv, phi;
	} series[] = {{0.05, 0}, {0.05, 0.36}, {0.02, 0.36}, {0.05, 0.7}};
	static int64_t x[N], scratch[N];
	struct case_params p = auto_params(10, N, 1e9, 0.005);
	rng_state = 2026;
	for (size_t s = 0; s < sizeof(series) / sizeof(series[0]); s++) {
		double sum[2] = {0}, sum2[2] = {0}, iters[2] = {0};   /* the rule; the first estimate */
		for (int t = 0; t < TRIALS; t++) {
			double y = normal01(), phi = series[s].phi;
			for (size_t i = 0; i < N; i++) {
				if (i)
					y = phi * y + sqrt(1 - phi * phi) * normal01();
				x[i] = (int64_t)(1e6 * exp(series[s].cv * y));
			}
			int64_t n = 0, since = 0, checked = 0, first = 0;
			const char *stop = NULL;
			while (!stop) {
				n++;
				if (n >= p.min_iters && (n < 200 || n - checked >= checked / 50)) {
					double rse = median_rse(x, (size_t)n, scratch);
					since = rse > p.target_rse ? 0 : since ? since : n;
					checked = n;
					first = first ? first : since;
				}
				stop = precision_stop(&p, n, 0, since);
			}
			assert_string_equal(stop, "precision");
			const int64_t at[2] = {n, first};
			for (int k = 0; k < 2; k++) {
				double m = log_median(x, at[k], scratch) - log(1e6);
				sum[k] += m;
				sum2[k] += m * m;
				iters[k] += (double)at[k];
			}
		}
		double sd[2];
		for (int k = 0; k < 2; k++)
			sd[k] = sqrt(sum2[k] / TRIALS - (sum[k] / TRIALS) * (sum[k] / TRIALS));
		print_message("cv %.2f, lag-1 %.2f: %.0f iterations on average, sd of log median %.4f = "
			      "%.2f x the target; at the first estimate <= target: %.0f, %.2f x\n",
			      series[s].cv, series[s].phi, iters[0] / TRIALS, sd[0], sd[0] / p.target_rse,
			      iters[1] / TRIALS, sd[1] / p.target_rse);
		if (sd[0] > 1.3 * p.target_rse || sd[0] < 0.4 * p.target_rse)
			fail_msg("cv %g phi %g: sd %g against target %g", series[s].cv, series[s].phi, sd[0],
				 p.target_rse);
	}
}

/* ---- interleaving: two cases in alternating rounds --------------------------------------------
 * Two fake device cases whose planted times follow one machine-wide drift over the calls (the
 * clock of the machine), case A's base 1 ms and case B's 2 ms: the true ratio is 0.5. */
static int64_t case_base_ns;     /* the case being stepped: set by the planted elapsed itself */
static double (*drift_at)(int call, int total);
static int drift_total;
static double step_drift(int call, int total) { return call < total / 3 ? 1.0 : 1.2; }
static double ramp_drift(int call, int total) { return 1.0 + 0.2 * call / total; }

static int64_t drifting(int call)
{
	return (int64_t)((double)case_base_ns * drift_at(call, drift_total));
}

/* A fake device workload whose state is the case's base time (its params' batch_size, in ns),
 * one state per case, so that two cases can be set up at once; running a phase makes that base
 * the one the planted elapsed times use. */
static int dual_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		      struct wl_status *st)
{
	(void)mem;
	(void)st;
	int64_t *base = malloc(sizeof(*base));
	if (!base)
		return STATUS_OOM;
	*base = p->batch_size;
	*state = base;
	return STATUS_OK;
}

static int dual_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	(void)phase;
	(void)st;
	case_base_ns = *(int64_t *)state;
	return STATUS_OK;
}

static void dual_teardown(void *state) { free(state); }

static const struct workload dual = {
	.suite = "attention", .device = DEVICE_CUDA, .check = ok_check, .figures = fake_figures,
	.setup = dual_setup, .validate = good_validate, .run = dual_run, .teardown = dual_teardown,
	.mark = dev_mark, .elapsed = dev_elapsed, .drain = dev_drain};

static double log_median_of(const struct case_result *res, int64_t warmup, int64_t *scratch)
{
	int64_t x[64];
	size_t n = 0;
	for (size_t i = 0; i < res->nsamples && n < 64; i++)
		if (res->samples[i].iter >= warmup)
			x[n++] = res->samples[i].ns;
	return log_median(x, (int64_t)n, scratch);
}

/* A step of +20% a third of the way through the calls, and a ramp of +20% over them: measured one after the
 * other, A sees the earlier level and B the later one (the ratio off by 9-18%); in 10 alternating
 * rounds both see both, and their medians' ratio stays within 2% of 0.5. */
static void test_measure__interleaved_rounds_cancel_a_drift_that_one_after_the_other_sees(void **state)
{
	(void)state;
	double (*drifts[])(int, int) = {step_drift, ramp_drift};
	static int64_t scratch[64];
	for (size_t d = 0; d < 2; d++) {
		double err[2];
		for (int rounds = 1; rounds <= 10; rounds += 9) {
			struct case_params pa = params(PASS_FORWARD, 2, 40), pb = pa;
			pa.sync = pb.sync = 1;
			pa.batch_size = 1000000;   /* the planted base in ns (dual_setup) */
			pb.batch_size = 2000000;
			struct case_result res[2];
			reset(NULL);
			dev.planted = drifting;
			drift_at = drifts[d];
			drift_total = 2 * (2 + 40);
			const struct workload *ws[2] = {&dual, &dual};
			const struct case_params *ps[2] = {&pa, &pb};
			if (rounds == 1) {
				measure_case(&dual, &pa, &res[0], NULL, NULL);
				measure_case(&dual, &pb, &res[1], NULL, NULL);
			} else
				measure_interleaved(ws, ps, res, 2, rounds, NULL, NULL);
			for (int k = 0; k < 2; k++) {
				assert_int_equal(res[k].status, STATUS_OK);
				assert_int_equal(res[k].nsamples, 42);   /* warm-up included, in order */
				for (size_t i = 0; i < res[k].nsamples; i++)
					assert_int_equal(res[k].samples[i].iter, (int)i);
			}
			err[rounds > 1] = fabs(log_median_of(&res[0], 2, scratch) -
					       log_median_of(&res[1], 2, scratch) - log(0.5));
			free(res[0].samples);
			free(res[1].samples);
		}
		print_message("%s drift of 20%%: the ratio off by %.1f%% one after the other, %.1f%% "
			      "in 10 rounds\n", d ? "ramp" : "step", 100 * err[0], 100 * err[1]);
		assert_true(err[0] > 0.08);
		assert_true(err[1] < 0.02);
	}
}

/* ---- interleaving: what each case keeps ---------------------------------------------------------
 * A fake CPU workload with one state per case: it holds its params' batch_size bytes of the case's
 * arena, counts its own runs, and fails its run number seed (1-based; 0: never). */
struct held {
	struct mem_arena *mem;
	void *buf;
	int64_t runs, fail_at;
};
static int held_setups, held_interrupt_in_setup;   /* setups; a Ctrl-C in each setup */

static int held_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		      struct wl_status *st)
{
	(void)st;
	struct held *h = calloc(1, sizeof(*h));
	if (!h)
		return STATUS_OOM;
	held_setups++;
	if (held_interrupt_in_setup)
		measure_interrupted = 1;
	h->mem = mem;
	h->fail_at = (int64_t)p->seed;
	h->buf = mem_alloc(mem, (size_t)p->batch_size);
	*state = h;
	return h->buf ? STATUS_OK : STATUS_OOM;
}

static int held_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct held *h = state;
	(void)phase;
	if (++h->runs == h->fail_at)
		return wl_set(st, STATUS_ERROR, "fake kernel failed at run %lld", (long long)h->runs);
	return STATUS_OK;
}

static void held_teardown(void *state)
{
	struct held *h = state;
	if (h)
		mem_free(h->mem, h->buf);
	free(h);
}

static const struct workload held = {
	.suite = "attention", .device = DEVICE_CPU, .check = ok_check, .figures = fake_figures,
	.setup = held_setup, .validate = good_validate, .run = held_run, .teardown = held_teardown};

static int64_t iterations_seen, interrupt_at;
static void interrupt_at_count(void *ctx, int64_t iter, int64_t total)
{
	(void)ctx;
	(void)iter;
	(void)total;
	if (++iterations_seen == interrupt_at)
		measure_interrupted = 1;
}

/* Three cases in 5 rounds of 2 (warm-up 1 in the first), the second failing in its third round:
 * it is an error with its reason and the 5 iterations it ran; the others are whole, each with its
 * own iterations and its own memory. */
static void test_measure__a_case_failing_in_a_round_leaves_the_others_whole(void **state)
{
	(void)state;
	struct case_params p[3];
	const struct workload *ws[3] = {&held, &held, &held};
	const struct case_params *ps[3] = {&p[0], &p[1], &p[2]};
	struct case_result res[3];
	held_setups = 0;
	for (int k = 0; k < 3; k++) {
		p[k] = params(PASS_FORWARD, 1, 10);
		p[k].batch_size = 1000 * (k + 1);
	}
	p[1].seed = 6;   /* held_run fails its 6th run: round 3 */
	measure_interleaved(ws, ps, res, 3, 5, NULL, NULL);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(res[k].status, k == 1 ? STATUS_ERROR : STATUS_OK);
		assert_int_equal(res[k].nsamples, k == 1 ? 5 : 11);
		for (size_t i = 0; i < res[k].nsamples; i++)
			assert_int_equal(res[k].samples[i].iter, (int)i);
		assert_int_equal(res[k].peak_bytes, 1000 * (k + 1));
		free(res[k].samples);
	}
	assert_string_equal(res[1].reason, "fake kernel failed at run 6");
	assert_null(res[1].stop_reason);
	assert_string_equal(res[0].stop_reason, "iters");
	assert_int_equal(held_setups, 3);
}

/* Ctrl-C stops at the next iteration boundary: the cases of a group not set up yet when it
 * comes are never set up (an e2e case's setup and validation take seconds), whether it comes in
 * a case's iterations measured to the end under the memory rule (each holds 3000 of a 5000
 * limit) or in a case's setup (rounds); every case of the group is then interrupted, none is
 * stored. */
static void test_measure__interleaved_cases_are_not_set_up_after_an_interrupt(void **state)
{
	(void)state;
	struct case_params p[3];
	const struct workload *ws[3] = {&held, &held, &held};
	const struct case_params *ps[3] = {&p[0], &p[1], &p[2]};
	struct case_result res[3];
	void *ctx[3] = {0};
	for (int memory_rule = 1; memory_rule >= 0; memory_rule--) {
		reset(NULL);
		held_setups = 0;
		held_interrupt_in_setup = !memory_rule;
		iterations_seen = 0;
		interrupt_at = 1;   /* in case 0's warm-up iteration */
		for (int k = 0; k < 3; k++) {
			p[k] = params(PASS_FORWARD, 1, 10);
			p[k].batch_size = 3000;
			p[k].mem_limit = memory_rule ? 5000 : 0;
		}
		measure_interleaved(ws, ps, res, 3, 5, interrupt_at_count, ctx);
		assert_int_equal(held_setups, 1);
		assert_int_equal(iterations_seen, memory_rule ? 1 : 0);
		for (int k = 0; k < 3; k++) {
			assert_true(res[k].interrupted);
			assert_int_equal(res[k].nsamples, k ? 0 : memory_rule);
			free(res[k].samples);
		}
	}
	held_interrupt_in_setup = 0;
}

/* ---- iters: auto against drift: windows of one long run ------------------------------------
 * A long planted series is cut into the windows iters: auto would have measured one after the
 * other (the rule applied from each window's start, estimates on measure.c's schedule); the
 * standard deviation of the windows' log medians against the target is what the stop for
 * precision promised (docs/performance.md, "iters: auto"). */

typedef double (*rse_estimator)(const int64_t *, size_t, int64_t *);

/* Where iters: auto stops on x[0..n) (0: it does not within n), as measure.c runs it, with the
 * estimator est. */
static int64_t auto_stop_at(const int64_t *x, int64_t n, const struct case_params *p,
			    int64_t *scratch, rse_estimator est)
{
	int64_t since = 0, checked = 0;
	for (int64_t k = 1; k <= n; k++) {
		int due = k >= p->min_iters && (k < 200 || k - checked >= checked / 50);
		for (int again = 0; again < 2; again++) {
			if (due) {
				double rse = est(x, (size_t)k, scratch);
				since = rse > p->target_rse ? 0 : since ? since : k;
				checked = k;
			}
			const char *stop = precision_stop(p, k, 0, since);
			if (stop && !strcmp(stop, "precision") && checked != k) {
				due = 1;   /* a stop for precision is made on the estimate at k */
				continue;
			}
			if (stop)
				return k;
			break;
		}
	}
	return 0;
}

/* The standard deviation of the log medians of the successive windows of x[0..n), and how many
 * there were (*nwin, at least 2 for an answer; NAN otherwise) and their mean length. */
static double window_spread(const int64_t *x, int64_t n, const struct case_params *p,
			    int64_t *scratch, rse_estimator est, int *nwin, double *mean_len)
{
	double sum = 0, sum2 = 0;
	int64_t from = 0, len;
	*nwin = 0;
	while (from < n && (len = auto_stop_at(x + from, n - from, p, scratch, est)) > 0) {
		double m = log_median(x + from, len, scratch);
		sum += m;
		sum2 += m * m;
		from += len;
		(*nwin)++;
	}
	*mean_len = *nwin ? (double)from / *nwin : 0;
	if (*nwin < 2)
		return NAN;
	double mean = sum / *nwin;
	return sqrt(fmax(0, (sum2 - *nwin * mean * mean) / (*nwin - 1)));
}

/* Planted long runs (log-normal iterations around 1 ms: AR(1) noise of 3% with lag-1 0.36, plus
 * a drift): a standard normal AR(1) step of correlation time t iterations. */
static double ou_step(double y, double t)
{
	double phi = exp(-1 / t);
	return phi * y + sqrt(1 - phi * phi) * normal01();
}

enum drift_kind { DRIFT_NONE, DRIFT_OUTLIERS, DRIFT_OU, DRIFT_SINE, DRIFT_SHIFTS, DRIFT_TREND };
static const char *const drift_names[] = {"none", "outliers 2% at 1.2-2x", "wander (OU)", "sine",
					  "level shifts", "linear trend"};

static void plant_drift(int64_t *x, int64_t n, enum drift_kind kind, double size, double scale)
{
	double noise = normal01(), wander = normal01(), phase = 6.283185307179586 * uniform01();
	int level = uniform01() < 0.5;
	for (int64_t i = 0; i < n; i++) {
		noise = i ? ou_step(noise, 1 / -log(0.36)) : noise;
		double y = 0.03 * noise;
		if (kind == DRIFT_OUTLIERS && uniform01() < 0.02)
			y += log(1.2 + 0.8 * uniform01());
		if (kind == DRIFT_OU) {
			wander = i ? ou_step(wander, scale) : wander;
			y += size * wander;
		}
		if (kind == DRIFT_SINE)
			y += size * sin(6.283185307179586 * (double)i / scale + phase);
		if (kind == DRIFT_SHIFTS) {
			if (uniform01() < 1 / scale)
				level = !level;
			y += size * level;
		}
		if (kind == DRIFT_TREND)
			y += size * (double)i / (double)n;
		x[i] = (int64_t)(1e6 * exp(y));
	}
}

/* Per kind of drift, 10 long runs of 20,000 iterations each, target 0.5%: how many keep their
 * windows' spread within 1.5x the target. Asserted (>= 90% of the runs of the asserted kinds
 * together) for drift that the windows can see: no drift, outliers, and wander, cycles and
 * level shifts on scales up to about a window (50-300 iterations; windows here are 200-2,000).
 * Printed, not asserted, for drift slower than any window (scales of 1,000-3,000 iterations):
 * inside one window it looks like a constant, so nothing measured within it can see it; the
 * next run sees it as run-to-run variation, which repeated runs measure (`--repeat`). */
static void test_precision__windows_of_a_long_run_agree_within_the_target_under_drift(void **state)
{
	(void)state;
	enum { RUNS = 10, N = 20000 };
	static const struct {
		enum drift_kind kind;
		double size, scale;
		int asserted;
	} kinds[] = {
		{DRIFT_NONE, 0, 0, 1},         {DRIFT_OUTLIERS, 0, 0, 1},     {DRIFT_OU, 0.01, 20, 1},
		{DRIFT_OU, 0.02, 50, 1},       {DRIFT_SINE, 0.02, 100, 1},    {DRIFT_SINE, 0.02, 300, 1},
		{DRIFT_SHIFTS, 0.03, 50, 1},   {DRIFT_SHIFTS, 0.03, 100, 1},  {DRIFT_TREND, 0.02, 0, 1},
		{DRIFT_OU, 0.01, 200, 0},      {DRIFT_SHIFTS, 0.03, 3000, 0},
	};
	static int64_t x[N], scratch[N];
	struct case_params p = auto_params(10, N, 1e9, 0.005);
	int within = 0, total = 0;
	rng_state = 99;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int ok = 0, windows = 0, ok_sign = 0;
		double worst = 0, len = 0;
		for (int r = 0; r < RUNS; r++) {
			int nwin;
			double mean_len;
			plant_drift(x, N, kinds[k].kind, kinds[k].size, kinds[k].scale);
			/* the within-series estimate alone, as before drift was accounted for */
			double sd_sign = window_spread(x, N, &p, scratch, median_rse_sign, &nwin, &mean_len);
			ok_sign += sd_sign <= 1.5 * p.target_rse;
			double sd = window_spread(x, N, &p, scratch, median_rse, &nwin, &mean_len);
			ok += sd <= 1.5 * p.target_rse;
			worst = fmax(worst, sd / p.target_rse);
			windows += nwin;
			len += mean_len / RUNS;
		}
		print_message("%-22s size %4.1f%% scale %5.0f: %2d of %d runs within 1.5x (worst %.2fx), "
			      "%d windows of %.0f iterations on average; the sign estimate alone: %d of "
			      "%d%s\n",
			      drift_names[kinds[k].kind], 100 * kinds[k].size, kinds[k].scale, ok, RUNS,
			      worst, windows / RUNS, len, ok_sign, RUNS,
			      kinds[k].asserted ? "" : " (slower than a window)");
		if (kinds[k].asserted) {
			within += ok;
			total += RUNS;
		}
	}
	print_message("asserted kinds: %d of %d runs within 1.5x the target\n", within, total);
	if (within < total * 9 / 10)
		fail_msg("%d of %d runs kept their windows within 1.5x the target", within, total);
}

/* The reading itself (common/proc_wait.c), not a planted one: a stretch far shorter than the
 * scheduler's tick is counted (schedstat alone left a running thread's figure at its last tick,
 * so a case of a few hundred microseconds read "0 ns ran" and its wait was unknown, or all of its
 * time when it had waited). Each stretch spins 200 us of wall time: what the thread ran and waited
 * adds up to at least that, however loaded the machine. */
static void test_cpu_wait__a_stretch_shorter_than_a_tick_is_counted(void **state)
{
	(void)state;
	cpu_wait_plant(NULL);
	struct cpu_wait a, b;
	cpu_wait_read(&a);
	for (int64_t t0 = now_ns(); now_ns() - t0 < 50000000;)   /* 50 ms: several ticks */
		;
	cpu_wait_read(&b);
	if (!a.ok || cpu_wait_share(&a, &b) < 0)
		skip();   /* no sched_info on this kernel: nothing is counted, the share unknown */
	for (int k = 0; k < 5; k++) {
		cpu_wait_read(&a);
		int64_t t0 = now_ns(), wall;
		while ((wall = now_ns() - t0) < 200000)
			;
		cpu_wait_read(&b);
		double share = cpu_wait_share(&a, &b);
		int64_t counted = (b.run_ns - a.run_ns) + (b.wait_ns - a.wait_ns);
		print_message("stretch %d: %lld ns of wall time, %lld ran, %lld waited, share %.3f\n", k,
			      (long long)wall, (long long)(b.run_ns - a.run_ns),
			      (long long)(b.wait_ns - a.wait_ns), share);
		assert_true(share >= 0 && share <= 1);
		assert_true(counted >= wall * 9 / 10);
	}
}

/* The warning runner run prints after a run (runner/cpu_wait.c): the cases that waited, and the
 * ok cases whose wait nothing could count (too short for the kernel's counters), which no report
 * can mark: on a machine busy before the first case they are said, never passed over. */
static char *run_end_warning(const double *waits, size_t n, int busy_before)
{
	struct contention_count c = {.level = CPU_WAIT_CONTENDED, .busy_before = busy_before};
	for (size_t i = 0; i < n; i++)
		contention_add(&c, waits[i]);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	contention_warn_after(f, &c);
	fclose(f);
	return text;
}

static void test_contention__the_run_end_warning_counts_the_cases_whose_wait_is_unknown(void **state)
{
	(void)state;
	const double quiet[] = {0.01, 0.0}, unknown[] = {-1, -1, 0.01},
		     mixed[] = {0.40, 0.01, -1};
	char *w = run_end_warning(quiet, 2, 1);
	assert_string_equal(w, "");   /* busy before, yet every case measured and none waited */
	free(w);
	w = run_end_warning(unknown, 3, 0);
	assert_string_equal(w, "");   /* a quiet machine: short cases are nothing to warn of */
	free(w);
	w = run_end_warning(unknown, 3, 1);
	assert_non_null(strstr(w, "warning: the machine was busy before the first case, and 2 ok "
				  "cases had no wait to count"));
	assert_non_null(strstr(w, "no report marks"));
	free(w);
	w = run_end_warning(mixed, 3, 0);
	assert_non_null(strstr(w, "warning: 1 of 2 cases waited for a CPU more than 5%"));
	assert_non_null(strstr(w, "; 1 ok case had no wait to count"));
	free(w);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, reset)
	const struct CMUnitTest tests[] = {
		T(test_measure__stores_every_iteration_warmup_included),
		T(test_measure__iteration_counts_that_overflow_are_an_error_not_a_wrap),
		T(test_measure__wrong_kernel_is_stored_as_error_and_never_timed),
		T(test_measure__memory_limit_gives_oom_with_the_bytes_needed),
		T(test_measure__huge_refusals_saturate_instead_of_wrapping),
		T(test_measure__unsupported_and_missing_workloads_keep_their_reason),
		T(test_measure__backward_pass_times_only_backward_after_one_forward),
		T(test_measure__train_step_times_three_phases),
		T(test_measure__interrupt_stops_at_the_next_iteration),
		T(test_measure__sync_stores_device_times_from_marks_around_each_phase),
		T(test_measure__no_sync_keeps_the_host_clock_and_still_drains),
		T(test_measure__device_failures_become_the_case_error),
		T(test_measure__auto_stops_for_precision_after_few_iterations_when_quiet),
		T(test_measure__auto_does_not_stop_for_precision_while_the_case_waits_for_a_cpu),
		T(test_measure__auto_does_not_stop_for_precision_after_a_wait_between_estimates),
		T(test_measure__auto_stops_at_max_time_when_noisy),
		T(test_measure__auto_caps_at_max_iters_and_keeps_every_sample),
		T(test_measure__auto_with_bad_settings_is_an_error_case),
		T(test_precision__median_rse_on_planted_series),
		T(test_precision__stop_rule_in_order),
		T(test_precision__auto_reaches_its_target_on_planted_autocorrelated_series),
		T(test_precision__windows_of_a_long_run_agree_within_the_target_under_drift),
		T(test_measure__interleaved_rounds_cancel_a_drift_that_one_after_the_other_sees),
		T(test_contention__the_run_end_warning_counts_the_cases_whose_wait_is_unknown),
		T(test_cpu_wait__a_stretch_shorter_than_a_tick_is_counted),
		T(test_measure__a_case_failing_in_a_round_leaves_the_others_whole),
		T(test_measure__interleaved_cases_are_not_set_up_after_an_interrupt),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
