/* runner/shard.c: the slices of `runner run --shard I/N` and the work estimate they (and the
 * progress ETA) weigh cases by. The slices depend on the expanded sweep and the workloads'
 * FLOP/byte formulas only — never on what this machine can run — so that every node of a job
 * array, GPU or not, cuts the same sweep the same way. */
#include "shard.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "peer.h"
#include "sweep.h"
#include "workload.h"
#include "xalloc.h"

/* Every case also weighs this share of the mean case, for what the estimate leaves out (setup,
 * validation, a case that is refused at once), so that slices of tiny cases still balance by
 * count. */
#define SHARD_SETUP_SHARE 0.02

int64_t case_memory_need(const struct sweep_case *c)
{
	const struct case_params *p = &c->params;
	const struct workload *w = c->peer ? NULL : workload_find(suite_name(p->suite), p->impl,
								     p->device);
	struct wl_memory m = {0};
	struct wl_status st = {0};
	if (!w || !w->estimate || w->estimate(p, &m, &st) != STATUS_OK)
		return -1;
	return m.params + m.grads + m.optim + m.activations + m.workspace;
}

int case_expect_oom(const struct sweep_case *c)
{
	int64_t need = c->params.mem_limit > 0 ? case_memory_need(c) : -1;
	return need > c->params.mem_limit;
}

/* The kind of a case for the ETA: suite, device, dtype — what sets the rate per unit of work
 * by a constant factor (a bfloat16 case on AMX, a GPU). Not the impl: naive and flash differ by
 * shape, which the fit's power follows, and a kind per impl made the ETA worse on the shipped
 * attention sweep (docs/performance.md, "ETA"). */
static uint64_t case_kind(const struct case_params *p)
{
	return (uint64_t)p->suite << 32 | (uint64_t)p->device << 16 | (uint64_t)p->dtype;
}

void case_work(const struct sweep_case *c, int only_runnable, struct progress_work *work)
{
	const struct case_params *p = &c->params;
	struct wl_figures f = {0};
	struct wl_status st = {0};
	work->flops = work->bytes = 0;
	work->kind = case_kind(p);
	if (c->peer) {
		peer_figures(p, &f);
	} else {
		const struct workload *w = workload_find(suite_name(p->suite), p->impl, p->device);
		/* a case refused at once (this machine cannot run it, or its estimate is over its
		 * memory limit: stored oom in its setup) costs nearly nothing */
		if (only_runnable && (!w || w->check(p, &st) != STATUS_OK || case_expect_oom(c)))
			return;
		/* a device this build lacks: its formulas are the CPU workload's */
		if (!w && !(w = workload_find(suite_name(p->suite), p->impl, DEVICE_CPU))) {
			work->flops = work->bytes = -1;
			return;
		}
		w->figures(p, &f);
	}
	unsigned phases = pass_phases(p->pass);
	/* iters: auto: its least, min_iters (how many it takes is known only by running it) */
	double iterations = (double)(p->warmup + (p->iters == ITERS_AUTO ? p->min_iters : p->iters));
	for (int ph = 0; ph < PHASE_COUNT; ph++) {
		if (!((phases >> ph) & 1))
			continue;
		double flops = f.flops[ph] * iterations, bytes = f.bytes[ph] * iterations;
		work->flops = work->flops < 0 || flops <= 0 ? -1 : work->flops + flops;
		work->bytes = work->bytes < 0 || bytes <= 0 ? -1 : work->bytes + bytes;
	}
}

/* A non-negative decimal int, whole text; -1 otherwise. */
static long whole_number(const char *s)
{
	if (!s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return *end || errno || v > INT32_MAX ? -1 : v;
}

/* The index (and, where the launcher says, the count) from the environment. */
static int shard_from_env(struct shard *out, struct bd_error *err)
{
	const char *id = getenv("SLURM_ARRAY_TASK_ID");
	if (id) {
		long task = whole_number(id), min = 0;
		long count = whole_number(getenv("SLURM_ARRAY_TASK_COUNT"));
		if (getenv("SLURM_ARRAY_TASK_MIN"))
			min = whole_number(getenv("SLURM_ARRAY_TASK_MIN"));
		if (task < 0 || min < 0 || task < min)
			return bd_fail(err, BD_EINVAL,
				       "--shard auto: SLURM_ARRAY_TASK_ID '%s' is not a task index", id);
		out->index = (int)(task - min);
		out->count = (int)count;   /* -1 when Slurm did not say */
		return 0;
	}
	const char *k8s = getenv("JOB_COMPLETION_INDEX");
	if (k8s) {
		long index = whole_number(k8s);
		if (index < 0)
			return bd_fail(err, BD_EINVAL,
				       "--shard auto: JOB_COMPLETION_INDEX '%s' is not an index", k8s);
		out->index = (int)index;
		out->count = (int)whole_number(getenv("BENCHDB_SHARD_COUNT"));
		return 0;
	}
	return bd_fail(err, BD_EINVAL,
		       "--shard auto: no launcher index in the environment (SLURM_ARRAY_TASK_ID or "
		       "JOB_COMPLETION_INDEX); give --shard I/N");
}

int shard_parse(const char *text, struct shard *out, struct bd_error *err)
{
	const char *slash = strchr(text, '/');
	long count = slash ? whole_number(slash + 1) : -1;
	if (slash && count < 1)
		return bd_fail(err, BD_EINVAL,
			       "--shard '%s': the count after '/' must be a whole number from 1 to %d, "
			       "got '%s'", text, INT32_MAX, slash + 1);
	if (!strncmp(text, "auto", 4) && (text[4] == '\0' || text[4] == '/')) {
		int rc = shard_from_env(out, err);
		if (rc)
			return rc;
		if (slash)
			out->count = (int)count;
		if (out->count < 1)
			return bd_fail(err, BD_EINVAL,
				       "--shard %s: the launcher gives no shard count "
				       "(SLURM_ARRAY_TASK_COUNT or BENCHDB_SHARD_COUNT); give --shard auto/N",
				       text);
	} else {
		char index_text[32];
		size_t len = slash ? (size_t)(slash - text) : strlen(text);
		if (!slash || len >= sizeof(index_text))
			return bd_fail(err, BD_EINVAL,
				       "--shard '%s': expected I/N (0 <= I < N), auto or auto/N", text);
		memcpy(index_text, text, len);
		index_text[len] = '\0';
		long index = whole_number(index_text);
		if (index < 0)
			return bd_fail(err, BD_EINVAL,
				       "--shard '%s': expected I/N (0 <= I < N), auto or auto/N", text);
		out->index = (int)index;
		out->count = (int)count;
	}
	if (out->index >= out->count)
		return bd_fail(err, BD_EINVAL,
			       "--shard: index %d is not below the count %d (shards are numbered 0 to %d)",
			       out->index, out->count, out->count - 1);
	return 0;
}

int shard_group_id(const char *explicit, const char *shard_text, char *out, size_t n,
		   struct bd_error *err)
{
	const char *job = getenv("SLURM_ARRAY_JOB_ID");
	int len;
	if (explicit && !*explicit)   /* stored as no group: a shard's run lost its shard too */
		return bd_fail(err, BD_EINVAL, "--group expects an id, got an empty one (an unset "
			       "variable?)");
	if (explicit)
		len = snprintf(out, n, "%s", explicit);
	else if (job && *job)
		len = snprintf(out, n, "slurm-%s", job);
	else   /* a default made of the sweep alone was every launch's: their shards mixed */
		return bd_fail(err, BD_EINVAL,
			       "--shard %s: nothing in the environment names this launch "
			       "(SLURM_ARRAY_JOB_ID, in a Slurm job array), so its shards would share "
			       "a group with every other launch of this sweep: give --group ID, the same "
			       "on each shard of this launch and new for the next (e.g. --group "
			       "nightly-2026-11-29)", shard_text);
	if (len < 0 || (size_t)len >= n)
		return bd_fail(err, BD_EINVAL, "--group expects at most %zu bytes", n - 1);
	return 0;
}

struct weighed {
	double cost;
	size_t index;
};

/* Largest first; equal costs in case order. */
static int by_cost_desc(const void *a, const void *b)
{
	const struct weighed *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int shard_assign(const double *cost, size_t n, int count, int *owner)
{
	if (count < 1)
		return BD_EINVAL;
	if (!n)
		return 0;
	struct weighed *order = xmalloc(n * sizeof(*order));
	double *load = xcalloc((size_t)count, sizeof(*load));
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += cost[i] > 0 ? cost[i] : 0;
	double setup = total > 0 ? SHARD_SETUP_SHARE * total / (double)n : 1;
	for (size_t i = 0; i < n; i++)
		order[i] = (struct weighed){(cost[i] > 0 ? cost[i] : 0) + setup, i};
	qsort(order, n, sizeof(*order), by_cost_desc);
	for (size_t k = 0; k < n; k++) {
		int least = 0;
		for (int s = 1; s < count; s++)
			if (load[s] < load[least])
				least = s;
		owner[order[k].index] = least;
		load[least] += order[k].cost;
	}
	free(order);
	free(load);
	return 0;
}

/* Costs of every case in the first basis some case states (FLOPs, else bytes); a case whose
 * workload does not say weighs the mean of those that do. All zero when none says. */
static void sweep_costs(const struct sweep_cases *cases, double *cost)
{
	struct progress_work *work = xcalloc(cases->n, sizeof(*work));
	for (size_t i = 0; i < cases->n; i++) {
		case_work(&cases->items[i], 0, &work[i]);
		cost[i] = 0;
	}
	for (int basis = PROGRESS_BY_FLOPS; basis < PROGRESS_BY_COUNT; basis++) {
		double sum = 0;
		size_t known = 0;
		for (size_t i = 0; i < cases->n; i++) {
			double w = basis == PROGRESS_BY_FLOPS ? work[i].flops : work[i].bytes;
			if (w > 0) {
				sum += w;
				known++;
			}
		}
		if (!known)
			continue;
		for (size_t i = 0; i < cases->n; i++) {
			double w = basis == PROGRESS_BY_FLOPS ? work[i].flops : work[i].bytes;
			cost[i] = w > 0 ? w : sum / (double)known;
		}
		break;
	}
	free(work);
}

/* A case's key without its impl, and its index: the impls of one shape share the key. */
struct shape {
	char *key;
	size_t index;
};

static int by_shape(const void *a, const void *b)
{
	const struct shape *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

/* unit[i]: the lowest index of the cases that differ from case i only in their impl (case i's
 * own when none does). */
static void shape_units(const struct sweep_cases *cases, size_t *unit)
{
	struct shape *shapes = xcalloc(cases->n, sizeof(*shapes));
	for (size_t i = 0; i < cases->n; i++)
		shapes[i] = (struct shape){case_key_drop(cases->items[i].key, "impl"), i};
	qsort(shapes, cases->n, sizeof(*shapes), by_shape);
	for (size_t k = 0, first = 0; k < cases->n; k++) {
		if (k && strcmp(shapes[k].key, shapes[k - 1].key))
			first = k;
		unit[shapes[k].index] = shapes[first].index;   /* sorted by index within a key */
	}
	for (size_t k = 0; k < cases->n; k++)
		free(shapes[k].key);
	free(shapes);
}

size_t shard_unit_count(const struct sweep_cases *all)
{
	size_t *unit = xcalloc(all->n ? all->n : 1, sizeof(*unit)), n = 0;
	shape_units(all, unit);
	for (size_t i = 0; i < all->n; i++)
		n += unit[i] == i;
	free(unit);
	return n;
}

int shard_select(const struct sweep_cases *all, const struct shard *s, struct sweep_cases *slice)
{
	double *cost = xcalloc(all->n, sizeof(*cost));
	size_t *unit = xcalloc(all->n, sizeof(*unit)), *unit_at = xcalloc(all->n, sizeof(*unit_at));
	double *unit_cost = xcalloc(all->n, sizeof(*unit_cost));
	int *owner = xcalloc(all->n, sizeof(*owner));
	size_t nunits = 0;
	double total = 0;
	int rc = 0;
	slice->items = xcalloc(all->n, sizeof(*all->items));
	slice->n = 0;
	sweep_costs(all, cost);
	/* The impls of one shape go to one slice, as one unit weighing all of them: compared on one
	 * machine (a merged group's `report --compare` pairs them) and measured in alternating
	 * rounds there. Cut case by case, two impls of equal work went one to each of two slices,
	 * every shape alike: all of one impl on one node, all of the other on the next. */
	shape_units(all, unit);
	for (size_t i = 0; i < all->n; i++)
		total += cost[i];
	for (size_t i = 0; i < all->n; i++) {
		if (unit[i] == i)   /* units numbered by their first case, in sweep order */
			unit_at[i] = nunits++;
		/* each case of a unit weighs its own share of the setup (shard_assign's, per unit) */
		unit_cost[unit_at[unit[i]]] += cost[i] + (total > 0 ? SHARD_SETUP_SHARE * total /
								 (double)all->n : 1);
	}
	if ((rc = shard_assign(unit_cost, nunits, s->count, owner)))
		goto done;
	for (size_t i = 0; i < all->n; i++)
		if (owner[unit_at[unit[i]]] == s->index)
			slice->items[slice->n++] = all->items[i];
done:
	if (rc) {
		free(slice->items);
		slice->items = NULL;
	}
	free(cost);
	free(unit);
	free(unit_at);
	free(unit_cost);
	free(owner);
	return rc;
}
