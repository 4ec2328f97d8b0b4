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
#include "measure.h"
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

static int reset(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	memset(&dev, 0, sizeof(dev));
	measure_interrupted = 0;
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
	assert_true(isinf(median_rse(x, PRECISION_MIN_SAMPLES - 1, scratch)));
	assert_true(median_rse(x, PRECISION_MIN_SAMPLES, scratch) == 0);
	for (size_t i = 0; i < N; i++)
		x[i] = 0;
	assert_true(isinf(median_rse(x, 50, scratch)));   /* no median > 0 */

	/* independent normal iterations, mean 1e6, sd 1e4: the median's standard error is
	 * sqrt(pi / 2) sd / sqrt(n), 280 ns at n = 2000 */
	rng_state = 1;
	for (size_t i = 0; i < N; i++)
		x[i] = (int64_t)(1e6 + 1e4 * normal01());
	double want = sqrt(3.141592653589793 / 2) * 1e4 / sqrt(2000) / 1e6;
	double have = median_rse(x, 2000, scratch);
	if (have < 0.8 * want || have > 1.25 * want)
		fail_msg("independent: rse %g, theory %g", have, want);

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
	if (dependent < 1.4 * independent || dependent > 2.4 * independent)
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

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The log of the median of x[0..n), by sorting a copy into sorted. */
static double log_median(const int64_t *x, int64_t n, int64_t *sorted)
{
	memcpy(sorted, x, (size_t)n * sizeof(*x));
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_i64);
	return log(((double)sorted[(n - 1) / 2] + (double)sorted[n / 2]) / 2);
}

/* The whole rule on planted AR(1) series (log-normal iterations, median 1 ms): run as measure.c
 * runs it (an estimate at each iteration below 200, then each 2%), and over 200 trials the
 * standard deviation of the log of the median where it stopped, against the target. Printed
 * beside it: where the first estimate at or below the target would have stopped (the rule
 * without its hold), which overshoots (docs/performance.md, "iters: auto"). */
static void test_precision__auto_reaches_its_target_on_planted_autocorrelated_series(void **state)
{
	(void)state;
	enum { TRIALS = 200, N = 4000 };
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
		if (sd[0] > 1.3 * p.target_rse || sd[0] < 0.6 * p.target_rse)
			fail_msg("cv %g phi %g: sd %g against target %g", series[s].cv, series[s].phi, sd[0],
				 p.target_rse);
	}
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
		T(test_measure__auto_stops_at_max_time_when_noisy),
		T(test_measure__auto_caps_at_max_iters_and_keeps_every_sample),
		T(test_measure__auto_with_bad_settings_is_an_error_case),
		T(test_precision__median_rse_on_planted_series),
		T(test_precision__stop_rule_in_order),
		T(test_precision__auto_reaches_its_target_on_planted_autocorrelated_series),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
