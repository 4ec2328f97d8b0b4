/* runner/measure.c: the measurement loop (DESIGN "Measurement").
 *
 * Each case: allocate once, validate once against the float64 CPU reference (a wrong kernel is
 * never timed), then warmup + iters iterations, each phase timed with CLOCK_MONOTONIC (or, for
 * a device workload with sync: true, with the device's events) and every iteration stored,
 * warm-up ones included.
 */
#include "measure.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checked.h"
#include "cpu_wait.h"

volatile sig_atomic_t measure_interrupted;

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGPIPE);
	sigaddset(set, SIGXFSZ);
}

void measure_hold_signals(void)
{
	sigset_t set;
	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void measure_release_signals(void)
{
	sigset_t set;
	stop_signals(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int measure_take_signals(void)
{
	measure_release_signals();   /* a pending one is handled here, in this thread */
	measure_hold_signals();
	return measure_interrupted;
}

int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A workload's code as the case's status: anything but ok, oom and unsupported is an error. */
static enum bd_status status_from(int code)
{
	switch (code) {
	case STATUS_OK: return STATUS_OK;
	case STATUS_OOM: return STATUS_OOM;
	case STATUS_UNSUPPORTED: return STATUS_UNSUPPORTED;
	default: return STATUS_ERROR;
	}
}

/* Copy a workload's outcome into the result; the reason gets a fallback when the workload left
 * none. Returns 1 when the outcome is not STATUS_OK. */
static int take(struct case_result *res, int code, const struct wl_status *st, const char *what)
{
	if (code == STATUS_OK)
		return 0;
	res->status = status_from(code);
	if (st->reason[0])
		snprintf(res->reason, sizeof(res->reason), "%s", st->reason);
	else
		snprintf(res->reason, sizeof(res->reason), "%s failed (code %d)", what, code);
	return 1;
}

/* The workload's description as a JSON object in res->impl_info; "" when it says nothing. */
static void describe(const struct workload *w, void *state, struct case_result *res)
{
	char members[sizeof(res->impl_info) - 2] = "";
	w->describe(state, members, sizeof(members));
	members[sizeof(members) - 1] = '\0';
	if (members[0])
		snprintf(res->impl_info, sizeof(res->impl_info), "{%s}", members);
}

void measure_case(const struct workload *w, const struct case_params *p, struct case_result *res,
		  void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	int64_t t_start = now_ns();
	memset(res, 0, sizeof(*res));
	res->max_diff = res->tolerance = -1;
	res->peak_fwd_bytes = res->peak_bwd_bytes = res->peak_bytes = -1;
	res->cpu_wait = -1;

	struct wl_status st = {.max_diff = -1, .tolerance = -1};
	struct mem_arena mem;
	mem_init(&mem, p->mem_limit);
	void *state = NULL;
	unsigned phases = pass_phases(p->pass);
	int64_t total = 0, nsamples_max = 0;

	if (p->warmup < 0 || p->iters < 0 || ck_add(p->warmup, p->iters, &total) ||
	    ck_mul(total, PHASE_COUNT, &nsamples_max) || total > INT32_MAX) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason),
			 "warmup %lld + iters %lld is out of range (each at most %d)",
			 (long long)p->warmup, (long long)p->iters, BD_MAX_ITERS);
		goto done;
	}
	if (!w) {
		res->status = STATUS_UNSUPPORTED;
		snprintf(res->reason, sizeof(res->reason),
			 "no %s implementation '%s' for device %s in this build", p->suite, p->impl,
			 device_name(p->device));
		goto done;
	}
	w->figures(p, &res->figures);
	if (take(res, w->check(p, &st), &st, "check"))
		goto done;
	int rc = w->setup(p, &mem, &state, &st);
	if (rc == STATUS_OOM && !st.reason[0])
		snprintf(st.reason, sizeof(st.reason),
			 "allocating %lld bytes would exceed the memory limit (%lld bytes in use, limit %lld)",
			 (long long)mem.failed, (long long)(mem.failed_need - mem.failed),
			 (long long)mem.limit);
	if (rc == STATUS_OK && w->memory)
		w->memory(state, &res->memory);
	if (take(res, rc, &st, "setup"))
		goto done;
	rc = w->validate(state, &st);
	res->max_diff = st.max_diff;
	res->tolerance = st.tolerance;
	if (take(res, rc, &st, "validation"))
		goto done;
	if (w->describe)
		describe(w, state, res);
	/* Backward alone is timed from the state one untimed forward leaves. */
	if (p->pass == PASS_BACKWARD && take(res, w->run(state, PHASE_FWD, &st), &st, "forward"))
		goto done;

	res->samples = calloc(ck_alloc_count(nsamples_max, sizeof(*res->samples)),
			      sizeof(*res->samples));
	if (!res->samples) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "out of host memory for samples");
		goto done;
	}
	mem_reset_peak(&mem);
	/* device timing: events around each phase, read after the iteration's phases (the start
	 * mark puts a device-side delay before its event, outside the time: workload.h mark) */
	int device_timed = p->sync && w->mark && w->elapsed;
	struct cpu_wait wait_from = {0}, wait_to;
	for (int64_t it = 0; it < total; it++) {
		if (measure_take_signals()) {
			res->interrupted = 1;
			goto done;
		}
		if (it == p->warmup)   /* the measured iterations start */
			cpu_wait_read(&wait_from);
		size_t first = res->nsamples;
		for (int ph = 0; ph < PHASE_COUNT; ph++) {
			if (!(phases & (1u << ph)))
				continue;
			const char *what = phase_name((enum bd_phase)ph);
			if (device_timed && take(res, w->mark(state, 2 * ph, &st), &st, what))
				goto done;
			int64_t t0 = now_ns();
			rc = w->run(state, (enum bd_phase)ph, &st);
			int64_t t1 = now_ns();
			if (take(res, rc, &st, what))
				goto done;
			if (device_timed && take(res, w->mark(state, 2 * ph + 1, &st), &st, what))
				goto done;
			res->samples[res->nsamples++] = (struct sample){
				.iter = (int32_t)it, .phase = ph, .ns = t1 - t0};
			if (ph == PHASE_FWD && res->peak_fwd_bytes < mem.peak)
				res->peak_fwd_bytes = mem.peak;
			if (ph == PHASE_BWD && res->peak_bwd_bytes < mem.peak)
				res->peak_bwd_bytes = mem.peak;
		}
		for (size_t i = first; device_timed && i < res->nsamples; i++) {
			struct sample *s = &res->samples[i];
			if (take(res, w->elapsed(state, (enum bd_phase)s->phase, &s->ns, &st), &st,
				 phase_name((enum bd_phase)s->phase)))
				goto done;
		}
		if (on_iteration)
			on_iteration(ctx, it + 1, total);
	}
	if (w->drain && take(res, w->drain(state, &st), &st, "the device's queue"))
		goto done;
	cpu_wait_read(&wait_to);
	res->cpu_wait = cpu_wait_share(&wait_from, &wait_to);
	res->status = STATUS_OK;
	res->stop_reason = "iters";
done:
	/* The peak includes setup and validation buffers; for oom it is what the case needed. */
	if (mem.failed)
		res->peak_bytes = mem.failed_need;
	else if (mem.peak > 0 || state)
		res->peak_bytes = mem.peak;
	if (w)
		w->teardown(state);
	res->elapsed_ns = now_ns() - t_start;
}
