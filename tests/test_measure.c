/* tests/test_measure.c: the measurement loop (runner/measure.c) on fake workloads — what is
 * timed, what is stored, and that a wrong kernel is never timed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure.h"
#include "mem.h"

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
	*ns = device_ns[phase];
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
	snprintf(p.suite, sizeof(p.suite), "attention");
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
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
