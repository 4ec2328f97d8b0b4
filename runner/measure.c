/* runner/measure.c: the measurement loop (docs/design.md, "Measurement").
 *
 * Each case: allocate once, validate once against the float64 CPU reference (a wrong kernel is
 * never timed), then warmup + iters iterations, each phase timed with CLOCK_MONOTONIC (or, for
 * a device workload with sync: true, with the device's events) and every iteration stored,
 * warm-up ones included. With iters: auto the measured iterations go on until precision.h's
 * rule stops them, the samples growing as they come.
 */
#include "measure.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checked.h"
#include "cpu_wait.h"
#include "precision.h"
#include "xalloc.h"

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

/* iters: auto's bookkeeping: each measured iteration's time (all its phases), the scratch the
 * estimator sorts, and when it last ran. */
struct auto_state {
	int64_t *times, *scratch;   /* (cap), nanoseconds */
	size_t cap;
	int64_t n, measured_ns, checked_at;
	int64_t precise_since;      /* precision_stop's: n when the estimate went <= target, or 0 */
	double rse;                 /* the last estimate */
};

/* Grow *array of *cap elements of size bytes to hold need, doubling, never beyond most;
 * 0, or -1 (the array as it was) when out of memory. */
static int grow(void **array, size_t *cap, size_t need, size_t most, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t want = *cap ? *cap : 64;
	while (want < need)
		want *= 2;
	want = want < most ? want : most;
	size_t count = ck_alloc_count((int64_t)want, size);
	void *p = count >= need ? realloc(*array, count * size) : NULL;
	if (!p)
		return -1;
	*array = p;
	*cap = want;
	return 0;
}

/* Whether to estimate the median's precision after n measured iterations: at each one while they
 * are few, then each time n has grown by 2% (sorting n times at every iteration would make a
 * long loop quadratic; stopping up to 2% later costs little). */
static int precision_due(const struct auto_state *a)
{
	return a->n < 200 || a->n - a->checked_at >= a->checked_at / 50;
}

/* After a measured iteration of ns nanoseconds: what stops the loop, or NULL. *oom = 1 when the
 * bookkeeping is out of memory. A case that has waited for a CPU more than
 * PRECISION_MAX_CPU_WAIT of its measured time so far (cr) is not precise, whatever its
 * estimate. */
struct case_run;
static double run_wait_share(const struct case_run *cr);

/* Estimate the median's precision over the a->n measured iterations so far: a->rse, and whether
 * it is precise (at most the target, the case's wait for a CPU at most
 * PRECISION_MAX_CPU_WAIT) since a->precise_since. */
static void auto_estimate(struct auto_state *a, const struct case_params *p,
			  const struct case_run *cr)
{
	double rse = a->rse = median_rse(a->times, (size_t)a->n, a->scratch);
	int precise = rse <= p->target_rse;
	if (precise)   /* only then: reading every thread's schedstat costs ~10 us each */
		precise = !(run_wait_share(cr) > PRECISION_MAX_CPU_WAIT);
	a->precise_since = !precise ? 0 : a->precise_since ? a->precise_since : a->n;
	a->checked_at = a->n;
}

static const char *auto_after(struct auto_state *a, const struct case_params *p, int64_t ns,
			      const struct case_run *cr, int *oom)
{
	size_t times_cap = a->cap, most = (size_t)p->max_iters;   /* both arrays have a->cap */
	if (grow((void **)&a->times, &times_cap, (size_t)a->n + 1, most, sizeof(int64_t)) ||
	    grow((void **)&a->scratch, &a->cap, (size_t)a->n + 1, most, sizeof(int64_t))) {
		*oom = 1;
		return NULL;
	}
	a->times[a->n++] = ns;
	ck_add(a->measured_ns, ns, &a->measured_ns);
	if (a->n >= p->min_iters && precision_due(a))
		auto_estimate(a, p, cr);
	const char *stop = precision_stop(p, a->n, a->measured_ns, a->precise_since);
	/* The hold can end between two estimates (past 200 iterations): a stop for precision is
	 * made on the estimate and the wait of the iterations it stops at, never on older ones. */
	if (stop && !strcmp(stop, "precision") && a->checked_at != a->n) {
		auto_estimate(a, p, cr);
		stop = precision_stop(p, a->n, a->measured_ns, a->precise_since);
	}
	return stop;
}

/* Iterations the case is expected to take, for the progress line: the fixed count, or for auto
 * what the budget allows at the pace so far (it stops earlier when precise). */
static int64_t expected_total(const struct case_params *p, const struct auto_state *a)
{
	if (p->iters != ITERS_AUTO)
		return p->warmup + p->iters;
	double n = (double)p->min_iters;
	if (a->n && a->measured_ns > 0)   /* the budget at the pace so far */
		n = fmax(n, fmin((double)p->max_iters,
				 p->max_time * 1e9 / (double)a->measured_ns * (double)a->n));
	return p->warmup + ((int64_t)n > a->n ? (int64_t)n : a->n);
}

double case_result_rse(const struct case_result *res, int64_t warmup)
{
	size_t n = res->iters > 0 ? (size_t)res->iters : 0;
	int64_t *times = n ? calloc(2 * n, sizeof(*times)) : NULL;
	if (!times)
		return INFINITY;
	for (size_t i = 0; i < res->nsamples; i++) {
		int64_t k = res->samples[i].iter - warmup;
		if (k >= 0 && (size_t)k < n)
			ck_add(times[k], res->samples[i].ns, &times[k]);
	}
	double rse = median_rse(times, n, times + n);
	free(times);
	return rse;
}

static void no_memory_for_samples(struct case_result *res)
{
	res->status = STATUS_ERROR;
	snprintf(res->reason, sizeof(res->reason), "out of host memory for samples");
}

/* Why iters: auto's settings in p cannot run (a library caller's values; sweeps refuse them), or
 * NULL. */
static const char *auto_invalid(const struct case_params *p)
{
	if (p->min_iters < 1 || p->max_iters < p->min_iters || p->max_iters > BD_MAX_ITERS)
		return "min_iters and max_iters must satisfy 1 <= min_iters <= max_iters <= 1000000";
	if (!(p->target_rse > 0 && p->target_rse < 1))
		return "target_rse must be > 0 and < 1";
	if (!(p->max_time > 0 && p->max_time <= BD_MAX_TIME_S))
		return "max_time must be > 0 and at most 86400 seconds";
	return NULL;
}

/* One case under measurement, across case_run_step calls (measure.h). */
struct case_run {
	const struct workload *w;
	const struct case_params *p;
	struct case_result *res;
	void (*on_iteration)(void *ctx, int64_t iter, int64_t total);
	void *ctx;
	int64_t own_ns;            /* the case's own wall time so far (not other cases' rounds) */
	struct wl_status st;
	struct mem_arena mem;
	void *state;
	unsigned phases;
	int auto_iters, device_timed, finished;
	/* iterations at most (auto: up to max_iters measured), the samples they can make, and the
	 * next iteration's index */
	int64_t total, nsamples_max, it;
	struct auto_state a;
	size_t samples_cap;
	const char *stop;          /* iters: auto: what stopped it */
	/* the wait for a CPU over the measured iterations: the stretches before the current one
	 * summed in waited, the current one from wait_from (measuring: 1) */
	struct cpu_wait waited, wait_from;
	int measuring;
};

/* The share of the measured time so far that the case waited for a CPU; -1 unknown. */
static double run_wait_share(const struct case_run *cr)
{
	struct cpu_wait zero = {.ok = 1}, total = cr->waited;
	if (cr->measuring) {
		struct cpu_wait now;
		cpu_wait_read(&now);
		if (!now.ok || !cr->wait_from.ok)
			return -1;
		total.run_ns += now.run_ns - cr->wait_from.run_ns;
		total.wait_ns += now.wait_ns - cr->wait_from.wait_ns;
		total.ok = total.ok || now.ok;
	}
	return cpu_wait_share(&zero, &total);
}

/* Close the current measured stretch: its wait is added to waited. */
static void stretch_end(struct case_run *cr)
{
	struct cpu_wait now;
	if (!cr->measuring)
		return;
	cpu_wait_read(&now);
	if (now.ok && cr->wait_from.ok) {
		int64_t run = now.run_ns - cr->wait_from.run_ns, wait = now.wait_ns - cr->wait_from.wait_ns;
		cr->waited.run_ns += run > 0 ? run : 0;   /* a thread that ended takes its figures */
		cr->waited.wait_ns += wait > 0 ? wait : 0;
		cr->waited.ok = 1;
	}
	cr->measuring = 0;
}

/* What ends a case that never reaches its iterations, and the end of every case: the bookkeeping
 * of res, the teardown. cr is freed. */
static void run_finish(struct case_run *cr)
{
	struct case_result *res = cr->res;
	const struct case_params *p = cr->p;
	int64_t t0 = now_ns();
	if (res->status == STATUS_OK && cr->auto_iters)
		res->stop_reason = cr->stop;
	res->iters = p->iters == ITERS_AUTO ? cr->a.n : p->iters;
	res->rse = p->iters == ITERS_AUTO ? cr->a.rse : INFINITY;
	if (res->status == STATUS_OK)   /* the final estimate, of what is stored */
		res->rse = case_result_rse(res, p->warmup);
	free(cr->a.times);
	free(cr->a.scratch);
	/* The peak includes setup and validation buffers; for oom it is what the case needed. */
	if (cr->mem.failed)
		res->peak_bytes = cr->mem.failed_need;
	else if (cr->mem.peak > 0 || cr->state)
		res->peak_bytes = cr->mem.peak;
	if (cr->w)
		cr->w->teardown(cr->state);
	res->elapsed_ns = cr->own_ns + (now_ns() - t0);
	free(cr);
}

struct case_run *case_run_begin(const struct workload *w, const struct case_params *p,
				struct case_result *res,
				void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	int64_t t_start = now_ns();
	struct case_run *cr = xcalloc(1, sizeof(*cr));
	cr->w = w;
	cr->p = p;
	cr->res = res;
	cr->on_iteration = on_iteration;
	cr->ctx = ctx;
	memset(res, 0, sizeof(*res));
	res->max_diff = res->tolerance = -1;
	res->peak_fwd_bytes = res->peak_bwd_bytes = res->peak_bytes = -1;
	res->cpu_wait = -1;
	cr->st = (struct wl_status){.max_diff = -1, .tolerance = -1};
	struct wl_status *st = &cr->st;
	mem_init(&cr->mem, p->mem_limit);
	cr->phases = pass_phases(p->pass);
	cr->auto_iters = p->iters == ITERS_AUTO;
	cr->a.rse = INFINITY;
	const char *invalid = cr->auto_iters ? auto_invalid(p) : NULL;

	if (invalid) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "iters: auto: %s", invalid);
		goto failed;
	}
	if (p->warmup < 0 || (p->iters < 0 && !cr->auto_iters) ||
	    ck_add(p->warmup, cr->auto_iters ? p->max_iters : p->iters, &cr->total) ||
	    ck_mul(cr->total, PHASE_COUNT, &cr->nsamples_max) || cr->total > INT32_MAX) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason),
			 "warmup %lld + iters %lld is out of range (each at most %d)",
			 (long long)p->warmup, (long long)p->iters, BD_MAX_ITERS);
		goto failed;
	}
	if (!w) {
		res->status = STATUS_UNSUPPORTED;
		snprintf(res->reason, sizeof(res->reason),
			 "no %s implementation '%s' for device %s in this build", suite_name(p->suite), p->impl,
			 device_name(p->device));
		goto failed;
	}
	w->figures(p, &res->figures);
	if (take(res, w->check(p, st), st, "check"))
		goto failed;
	int rc = w->setup(p, &cr->mem, &cr->state, st);
	if (rc == STATUS_OOM && !st->reason[0])
		snprintf(st->reason, sizeof(st->reason),
			 "allocating %lld bytes would exceed the memory limit (%lld bytes in use, limit %lld)",
			 (long long)cr->mem.failed, (long long)(cr->mem.failed_need - cr->mem.failed),
			 (long long)cr->mem.limit);
	if (rc == STATUS_OK && w->memory)
		w->memory(cr->state, &res->memory);
	if (take(res, rc, st, "setup"))
		goto failed;
	rc = w->validate(cr->state, st);
	res->max_diff = st->max_diff;
	res->tolerance = st->tolerance;
	if (take(res, rc, st, "validation"))
		goto failed;
	if (w->describe)
		describe(w, cr->state, res);
	/* Backward alone is timed from the state one untimed forward leaves. */
	if (p->pass == PASS_BACKWARD && take(res, w->run(cr->state, PHASE_FWD, st), st, "forward"))
		goto failed;

	/* fixed: every sample at once; auto: room for warm-up and min_iters, grown as they come */
	size_t first_need =
		(size_t)(cr->auto_iters ? p->warmup + p->min_iters : cr->total) * PHASE_COUNT;
	if (grow((void **)&res->samples, &cr->samples_cap, first_need, (size_t)cr->nsamples_max,
		 sizeof(*res->samples))) {
		no_memory_for_samples(res);
		goto failed;
	}
	mem_reset_peak(&cr->mem);
	/* device timing: events around each phase, read after the iteration's phases (the start
	 * mark puts a device-side delay before its event, outside the time: workload.h mark) */
	cr->device_timed = p->sync && w->mark && w->elapsed;
	cr->own_ns = now_ns() - t_start;
	return cr;
failed:
	cr->own_ns = now_ns() - t_start;
	run_finish(cr);
	return NULL;
}

/* Mark the case finished; returns 1. */
static int finished(struct case_run *cr)
{
	cr->finished = 1;
	return 1;
}

int case_run_step(struct case_run *cr, int64_t count)
{
	const struct workload *w = cr->w;
	const struct case_params *p = cr->p;
	struct case_result *res = cr->res;
	struct wl_status *st = &cr->st;
	int64_t t_start = now_ns(), until = cr->it + (count < cr->total - cr->it ? count :
						      cr->total - cr->it);
	int done = 0;
	if (cr->finished)
		return 1;
	if (cr->it >= p->warmup) {   /* a later round of measured iterations */
		cpu_wait_read(&cr->wait_from);
		cr->measuring = 1;
	}
	for (; cr->it < until && !done; cr->it++) {
		int64_t it = cr->it;
		if (measure_take_signals()) {
			res->interrupted = 1;
			done = finished(cr);
			break;
		}
		if (it == p->warmup && !cr->measuring) {   /* the measured iterations start */
			cpu_wait_read(&cr->wait_from);
			cr->measuring = 1;
		}
		size_t first = res->nsamples;
		if (grow((void **)&res->samples, &cr->samples_cap, first + PHASE_COUNT,
			 (size_t)cr->nsamples_max, sizeof(*res->samples))) {
			no_memory_for_samples(res);
			done = finished(cr);
			break;
		}
		int failed = 0;
		for (int ph = 0; ph < PHASE_COUNT && !failed; ph++) {
			if (!(cr->phases & (1u << ph)))
				continue;
			const char *what = phase_name((enum bd_phase)ph);
			if (cr->device_timed && take(res, w->mark(cr->state, 2 * ph, st), st, what)) {
				failed = 1;
				break;
			}
			int64_t t0 = now_ns();
			int rc = w->run(cr->state, (enum bd_phase)ph, st);
			int64_t t1 = now_ns();
			if (take(res, rc, st, what) ||
			    (cr->device_timed && take(res, w->mark(cr->state, 2 * ph + 1, st), st, what))) {
				failed = 1;
				break;
			}
			res->samples[res->nsamples++] = (struct sample){
				.iter = (int32_t)it, .phase = ph, .ns = t1 - t0};
			if (ph == PHASE_FWD && res->peak_fwd_bytes < cr->mem.peak)
				res->peak_fwd_bytes = cr->mem.peak;
			if (ph == PHASE_BWD && res->peak_bwd_bytes < cr->mem.peak)
				res->peak_bwd_bytes = cr->mem.peak;
		}
		for (size_t i = first; !failed && cr->device_timed && i < res->nsamples; i++) {
			struct sample *s = &res->samples[i];
			if (take(res, w->elapsed(cr->state, (enum bd_phase)s->phase, &s->ns, st), st,
				 phase_name((enum bd_phase)s->phase))) {
				failed = 1;
				res->nsamples = i;   /* the rest hold the host's clock, not device times */
			}
		}
		if (failed) {
			done = finished(cr);
			break;
		}
		if (cr->auto_iters && it >= p->warmup) {
			int64_t ns = 0;
			int oom = 0;
			for (size_t i = first; i < res->nsamples; i++)
				ck_add(ns, res->samples[i].ns, &ns);
			cr->stop = auto_after(&cr->a, p, ns, cr, &oom);
			if (oom) {
				no_memory_for_samples(res);
				done = finished(cr);
				break;
			}
		}
		if (cr->on_iteration)
			cr->on_iteration(cr->ctx, it + 1, cr->stop ? it + 1 : expected_total(p, &cr->a));
		if (cr->stop) {
			cr->it++;
			done = 1;
			break;
		}
	}
	if (!done && cr->it >= cr->total)
		done = 1;
	stretch_end(cr);
	if (done && !cr->finished) {   /* every iteration ran: the case is ok */
		if (w->drain && take(res, w->drain(cr->state, st), st, "the device's queue")) {
			/* a failed drain is the case's status */
		} else {
			struct cpu_wait zero = {.ok = 1};
			res->cpu_wait = cr->waited.ok ? cpu_wait_share(&zero, &cr->waited) : -1;
			res->status = STATUS_OK;
			res->stop_reason = "iters";
		}
		cr->finished = 1;
	}
	cr->own_ns += now_ns() - t_start;
	return cr->finished;
}

void case_run_end(struct case_run *cr)
{
	if (cr)
		run_finish(cr);
}

void measure_case(const struct workload *w, const struct case_params *p, struct case_result *res,
		  void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	struct case_run *cr = case_run_begin(w, p, res, on_iteration, ctx);
	if (!cr)
		return;
	while (!case_run_step(cr, INT64_MAX))
		;
	case_run_end(cr);
}

/* The iterations a case runs in one round of measure_interleaved: iters / rounds rounded up
 * (iters: auto: min_iters), and its warm-up in the first. */
static int64_t round_count(const struct case_params *p, int rounds, int first)
{
	int64_t chunk = p->iters == ITERS_AUTO ? p->min_iters : (p->iters + rounds - 1) / rounds;
	return (chunk > 0 ? chunk : 1) + (first ? p->warmup : 0);
}

void measure_interleaved(const struct workload *const *w, const struct case_params *const *p,
			 struct case_result *res, size_t n, int rounds,
			 void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void **ctx)
{
	measure_interleaved_ext(w, p, res, n, rounds, on_iteration, ctx, NULL);
}

/* One case of an interleaved group: a built-in one's run, or the caller's (ext). */
struct turn {
	struct case_run *cr;
	void *ext;
	int started, finished;
};

static int turn_step(struct turn *t, const struct interleave_ext *ext, int64_t count)
{
	t->finished = t->cr ? case_run_step(t->cr, count) : ext->step(t->ext, count);
	return t->finished;
}

static void turn_end(struct turn *t, const struct interleave_ext *ext)
{
	if (t->cr)
		case_run_end(t->cr);
	else if (t->ext)
		ext->end(t->ext);
	t->cr = NULL;
	t->ext = NULL;
}

void measure_interleaved_ext(const struct workload *const *w, const struct case_params *const *p,
			     struct case_result *res, size_t n, int rounds,
			     void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void **ctx,
			     const struct interleave_ext *ext)
{
	struct turn *t = xcalloc(n ? n : 1, sizeof(*t));
	int64_t alive_bytes = 0;
	for (size_t k = 0; k < n; k++) {
		int mine = ext && ext->mine[k];   /* the caller's: its memory is its own */
		/* the states live together: beyond half the memory limit, the ones set up so far are
		 * measured to the end first (one after the other, as without interleaving) */
		if (!mine && k && p[k]->mem_limit > 0 && alive_bytes > p[k]->mem_limit / 2) {
			for (size_t j = 0; j < k; j++) {
				while (t[j].cr && !t[j].finished && !turn_step(&t[j], ext, INT64_MAX))
					;
				if (t[j].cr)
					turn_end(&t[j], ext);
			}
			alive_bytes = 0;
		}
		/* an interrupt stops at the next iteration boundary: a case not set up yet never is */
		if (measure_take_signals()) {
			memset(&res[k], 0, sizeof(res[k]));
			res[k].interrupted = 1;
			t[k].finished = 1;
			continue;
		}
		if (mine) {
			t[k].ext = ext->begin(ext->ctx, k, &res[k]);
			t[k].finished = !t[k].ext;
			continue;
		}
		t[k].cr = case_run_begin(w[k], p[k], &res[k], on_iteration, ctx ? ctx[k] : NULL);
		t[k].finished = !t[k].cr;
		if (t[k].cr)
			alive_bytes += t[k].cr->mem.peak;
	}
	for (int r = 0, left = 1; left; r++) {
		left = 0;
		for (size_t j = 0; j < n; j++) {
			size_t k = r % 2 ? n - 1 - j : j;   /* every other round backwards: A B, B A, ... */
			if ((!t[k].cr && !t[k].ext) || t[k].finished)
				continue;
			if (!turn_step(&t[k], ext, round_count(p[k], rounds, !t[k].started)))
				left = 1;
			t[k].started = 1;
		}
	}
	for (size_t k = 0; k < n; k++)
		turn_end(&t[k], ext);
	free(t);
}
