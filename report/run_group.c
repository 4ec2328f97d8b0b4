/* report/run_group.c: one side of a comparison as a group of runs — the baseline of `report
 * regress` may be every run with a label (e.g. the nightly runs of main, or the repetitions of one
 * `runner run --repeat N` stored under one label), the last K of them, or runs named one by one —
 * with each run's cases loaded and indexed by case key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "xalloc.h"

static int has_id(const struct run_group *g, int64_t id)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (g->ids[i] == id)
			return 1;
	return 0;
}

/* Runs in time order (db_run_time_cmp: a database merged out of order has its ids out of time
 * order); runs: db_runs_list's. A run not among them (none is) stands with its id alone. */
static struct run_row run_when(const struct run_row *runs, size_t nruns, int64_t id)
{
	const struct run_row *r = db_run_find(runs, nruns, id);
	return (struct run_row){.id = id, .started_at = r ? r->started_at : NULL};
}

static int cmp_when(const void *a, const void *b)
{
	return db_run_time_cmp(a, b);
}

int run_group_select(struct db *db, const struct run_group_spec *spec,
		     const struct run_group *exclude, struct run_group *g, struct bd_error *err)
{
	struct run_row *runs = NULL;
	size_t nruns = 0;
	int rc = 0;
	memset(g, 0, sizeof(*g));
	if ((rc = db_runs_list(db, &runs, &nruns, err)))
		return rc;
	g->ids = xcalloc(nruns + (size_t)spec->nsels + 1, sizeof(*g->ids));
	for (int i = 0; i < spec->nsels; i++) {
		int64_t id;
		if ((rc = db_run_resolve(db, spec->sels[i], &id, err)))
			goto done;
		if (has_id(exclude, id)) {   /* compared with itself, a run tells nothing */
			rc = bd_fail(err, BD_EINVAL, "--%s %s selects run %lld, which is a candidate run "
				     "too: a run is no baseline for itself", spec->side, spec->sels[i],
				     (long long)id);
			goto done;
		}
		if (!has_id(g, id))
			g->ids[g->n++] = id;
	}
	/* --last alone: the runs started before the first excluded one */
	struct run_row before = {0}, *when = NULL;
	size_t labelled_excluded = 0;   /* runs with the label that exclude holds */
	for (size_t i = 0; exclude && i < exclude->n; i++) {
		struct run_row w = run_when(runs, nruns, exclude->ids[i]);
		if (!before.id || db_run_time_cmp(&w, &before) < 0)
			before = w;
	}
	for (size_t i = 0; i < nruns; i++) {
		const struct run_row *r = &runs[i];
		int by_label = spec->label && r->label && !strcmp(r->label, spec->label);
		int by_last = !spec->label && spec->nsels == 0 && spec->last > 0 &&
			      (!before.id || db_run_time_cmp(r, &before) < 0);
		if ((by_label || by_last) && !has_id(g, r->id) && !has_id(exclude, r->id))
			g->ids[g->n++] = r->id;
		labelled_excluded += by_label && has_id(exclude, r->id);
	}
	when = xcalloc(g->n ? g->n : 1, sizeof(*when));   /* oldest first */
	for (size_t i = 0; i < g->n; i++)
		when[i] = run_when(runs, nruns, g->ids[i]);
	qsort(when, g->n, sizeof(*when), cmp_when);
	for (size_t i = 0; i < g->n; i++)
		g->ids[i] = when[i].id;
	free(when);
	if (spec->last > 0 && g->n > (size_t)spec->last) {
		memmove(g->ids, g->ids + g->n - (size_t)spec->last, (size_t)spec->last * sizeof(*g->ids));
		g->n = (size_t)spec->last;
	}
	if (g->n == 0 && labelled_excluded) {
		rc = bd_fail(err, BD_ENOTFOUND, "no run matches the %s selection: every run labelled %s "
			     "(%zu) is a %s run too, and a run is no baseline for itself", spec->side,
			     spec->label, labelled_excluded,
			     !strcmp(spec->side, "baseline") ? "candidate" : "baseline");
		goto done;
	}
	if (g->n == 0) {
		rc = bd_fail(err, BD_ENOTFOUND, "no run matches the %s selection%s%s", spec->side,
			     spec->label ? ": no run is labelled " : "", spec->label ? spec->label : "");
		goto done;
	}
	if (g->n > RUN_GROUP_MAX) {
		rc = bd_fail(err, BD_EINVAL, "%zu %s runs selected; at most %d (use --%s-last K)", g->n,
			     spec->side, RUN_GROUP_MAX, spec->side);
		goto done;
	}
	g->rows = xcalloc(g->n, sizeof(*g->rows));
	g->sessions = xcalloc(g->n, sizeof(*g->sessions));
	for (size_t i = 0; i < g->n && !rc; i++) {
		struct run_session *s = NULL;
		size_t ns = 0;
		rc = db_run_get(db, g->ids[i], &g->rows[i], err);
		if (!rc && !(rc = db_run_sessions(db, 0, g->ids[i], &s, &ns, err)) && ns == 1)
			noise_session_key(s->group_id, s->uuid, g->sessions[i]);
		free(s);
	}
done:
	db_run_rows_free(runs, nruns);
	if (rc)
		run_group_free(g);
	return rc;
}

int run_group_load(struct db *db, struct run_group *g, const struct case_filter *f,
		   struct bd_error *err)
{
	g->sets = xcalloc(g->n, sizeof(*g->sets));
	g->index = xcalloc(g->n, sizeof(*g->index));
	for (size_t i = 0; i < g->n; i++) {
		int rc = case_set_load(db, g->ids[i], f, &g->sets[i], err);
		if (rc)
			return rc;
		case_index_build(&g->sets[i], 0, &g->index[i]);
	}
	return 0;
}

void run_group_free(struct run_group *g)
{
	for (size_t i = 0; g->rows && i < g->n; i++)
		db_run_row_clear(&g->rows[i]);
	for (size_t i = 0; g->sets && i < g->n; i++)
		case_set_free(&g->sets[i]);
	for (size_t i = 0; g->index && i < g->n; i++)
		case_index_free(&g->index[i]);
	free(g->rows);
	free(g->sessions);
	free(g->sets);
	free(g->index);
	free(g->ids);
	memset(g, 0, sizeof(*g));
}

void run_group_describe(const struct run_group *g, struct strbuf *sb)
{
	sb_addf(sb, "run%s ", g->n == 1 ? "" : "s");
	for (size_t i = 0; i < g->n; i++) {
		if (i > 0 && g->n > 6 && i < g->n - 2) {
			sb_addf(sb, ", ..., ");
			i = g->n - 2;
		} else if (i > 0) {
			sb_add(sb, ", ");
		}
		sb_addf(sb, "%lld", (long long)g->ids[i]);
	}
}

/* ---- the runs method between groups ---------------------------------------------------------- */

static int key_in(const char *key, void *ctx)
{
	const struct { const char *const *keys; size_t n; } *set = ctx;
	size_t lo = 0, hi = set->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(set->keys[mid], key);
		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int run_groups_noise(struct db *db, const struct run_group *const *sides, size_t nsides,
		     int pick, const char *const *keys, size_t nkeys, int history,
		     const struct noise_assumed *a, struct noise_data *d, struct noise_model *m,
		     struct bd_error *err)
{
	struct { const char *const *keys; size_t n; } set = {keys, nkeys};
	size_t nruns = 0;
	for (size_t s = 0; s < nsides; s++)
		nruns += sides[s]->n;
	int64_t *ids = xcalloc(nruns + 1, sizeof(*ids)), *systems = xcalloc(nruns + 1, sizeof(*ids));
	size_t at = 0;
	for (size_t s = 0; s < nsides; s++)
		for (size_t r = 0; r < sides[s]->n; r++, at++) {
			const struct run_group *g = sides[s];
			ids[at] = g->ids[r];
			systems[at] = g->rows[r].system_id;
			for (size_t k = 0; k < g->sets[r].n; k++) {
				const struct case_row *row = &g->sets[r].rows[k];
				double y, wv;
				if (row->status != STATUS_OK || !key_in(row->case_key, &set) ||
				    case_index_find(&g->index[r], row->case_key, NULL) != (long)k ||
				    noise_run_y(&g->sets[r].series[k], pick, &y, &wv))
					continue;
				noise_data_add_run(d, row->case_key, (int)s + 1, g->sessions[r], "",
						   g->rows[r].started_at, y);
			}
		}
	/* history: every case key of the systems, so that the pool is the system's */
	int rc = history ? noise_history_load(db, systems, nruns, pick, ids, nruns, NULL, NULL, d,
					      err)
			 : 0;
	free(ids);
	free(systems);
	if (!rc)
		rc = noise_model_fit(d, a, m);
	return rc;
}

int run_groups_compare_case(const struct noise_model *m, const struct noise_data *d,
			    const char *key, const struct run_group *b, const long *at_b,
			    const struct run_group *c, const long *at_c, int pick,
			    const struct verdict_rule *rule, struct pair_result *out)
{
	const struct run_group *side[2] = {b, c};
	const long *at[2] = {at_b, at_c};
	const char **sessions[2] = {xcalloc(b->n + 1, sizeof(char *)),
				    xcalloc(c->n + 1, sizeof(char *))};
	double mean[2] = {0, 0}, within[2] = {0, 0}, wait_sum[2] = {0, 0};
	size_t runs[2] = {0, 0}, waits[2] = {0, 0}, iters[2] = {0, 0}, min_n = SIZE_MAX;
	struct summary sum[2];
	memset(out, 0, sizeof(*out));
	for (int s = 0; s < 2; s++) {
		for (size_t r = 0; r < side[s]->n; r++) {
			if (at[s][r] < 0)
				continue;
			const struct case_row *row = &side[s]->sets[r].rows[at[s][r]];
			const struct case_series *series = &side[s]->sets[r].series[at[s][r]];
			double y, wv;
			size_t n;
			case_series_pick(series, (enum series_pick)pick, &n);
			if (row->status != STATUS_OK || noise_run_y(series, pick, &y, &wv))
				continue;
			sessions[s][runs[s]++] = side[s]->sessions[r];
			mean[s] += y;
			within[s] += wv;
			iters[s] += n;
			min_n = n < min_n ? n : min_n;
			if (row->cpu_wait >= 0) {
				wait_sum[s] += row->cpu_wait;
				waits[s]++;
			}
		}
		memset(&sum[s], 0, sizeof(sum[s]));
	}
	if (!runs[0] || !runs[1]) {
		free(sessions[0]);
		free(sessions[1]);
		return BD_EINVAL;
	}
	for (int s = 0; s < 2; s++) {
		mean[s] /= (double)runs[s];
		within[s] /= (double)runs[s];
		sum[s].n = iters[s];
		sum[s].median = exp(mean[s]);
	}
	struct noise_side nb = {sessions[0], runs[0]}, nc = {sessions[1], runs[1]};
	double var, df;
	noise_diff_var(m, noise_data_find(d, key), &nb, &nc, within[0], within[1], &var, &df);
	compare_modeled(mean[1] - mean[0], var, df, min_n < REPORT_MIN_ITERS, rule, out);
	out->base = sum[0];
	out->cand = sum[1];
	out->runs_base = runs[0];
	out->runs_cand = runs[1];
	out->wait_base = waits[0] ? wait_sum[0] / (double)waits[0] : -1;
	out->wait_cand = waits[1] ? wait_sum[1] / (double)waits[1] : -1;
	struct pair_result *one = out;
	verdicts_decide(&one, 1, rule);
	free(sessions[0]);
	free(sessions[1]);
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int compare_runs(struct db *db, struct run_group *base, struct run_group *cand, int pick,
		 const struct verdict_rule *rule, struct case_pair **pairs, size_t *n,
		 struct strbuf *note, struct bd_error *err)
{
	const struct case_set *cs = &cand->sets[0];
	const char **keys = xcalloc(cs->n + 1, sizeof(*keys));
	struct noise_data d = {0};
	struct noise_model m = {0};
	*pairs = xcalloc(cs->n + 1, sizeof(**pairs));
	*n = 0;
	for (size_t i = 0; i < cs->n; i++)
		keys[i] = cs->rows[i].case_key;
	qsort(keys, cs->n, sizeof(*keys), cmp_key);
	const struct run_group *sides[2] = {base, cand};
	int rc = run_groups_noise(db, sides, 2, pick, keys, cs->n, 1, &rule->assumed, &d, &m, err);
	for (size_t i = 0; i < cs->n && !rc; i++) {
		long at_c = (long)i, at_b = case_index_find(&base->index[0], cs->rows[i].case_key, NULL);
		struct case_pair *p = &(*pairs)[*n];
		if (at_b < 0 || cs->rows[i].status != STATUS_OK ||
		    base->sets[0].rows[at_b].status != STATUS_OK ||
		    case_index_find(&cand->index[0], cs->rows[i].case_key, NULL) != at_c)
			continue;   /* not ok, or a later copy of the key in the run */
		if (run_groups_compare_case(&m, &d, cs->rows[i].case_key, base, &at_b, cand, &at_c,
					    pick, rule, &p->result))
			continue;
		p->base = (size_t)at_b;
		p->cand = i;
		p->ok = 1;
		(*n)++;
	}
	if (!rc) {
		compare_pairs_decide(*pairs, *n, rule);
		noise_model_describe(&m, note);
	}
	free(keys);
	noise_data_free(&d);
	noise_model_free(&m);
	return rc;
}
