/* report/warmup.c: the effect of warm-up iterations, from stored samples — `report warmup`'s table,
 * shared with `report writeup`.
 *
 * Every iteration a run made is stored, warm-up ones included, so for k warm-up iterations we can
 * say what the measurement would have been: the mean and std of the `iters` iterations that
 * follow the first k (fewer when the run did not make that many). Also the first-iteration
 * penalty (first iteration / steady median) and the steady-state iteration. Nothing is re-run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "xalloc.h"

int case_iterations(struct db *db, const struct case_row *c, enum series_pick pick, double **out,
		     size_t *n, struct bd_error *err)
{
	struct sample *s = NULL;
	size_t ns = 0, total = (size_t)(c->warmup + c->iters);
	int rc = db_samples_get(db, c->id, &s, &ns, err);
	if (rc)
		return rc;
	double *x = xcalloc(total, sizeof(*x));
	unsigned *have = xcalloc(total, sizeof(*have));
	unsigned phases = 0;
	for (size_t i = 0; i < ns; i++) {
		if (s[i].iter < 0 || (size_t)s[i].iter >= total)
			continue;
		if (pick != PICK_TOTAL && s[i].phase != (int)pick)
			continue;
		x[s[i].iter] += (double)s[i].ns;
		have[s[i].iter] |= 1u << s[i].phase;
		phases |= 1u << s[i].phase;
	}
	size_t m = 0;
	while (m < total && phases && have[m] == phases)
		m++;
	free(have);
	free(s);
	*out = x;
	*n = m;
	return 0;
}

int warmup_table(struct db *db, int64_t run_id, const struct case_set *set, const int *ks, int nk,
		 enum series_pick pick, double band, struct table *t, struct bd_error *err)
{
	int rc;
	char title[128];
	snprintf(title, sizeof(title), "run %lld: warm-up effect (%s)", (long long)run_id,
		 series_pick_names[pick]);
	table_init(t, title);
	if (nk < 0 || nk > WARMUP_MAX_K)
		return bd_fail(err, BD_EINVAL, "at most %d warm-up counts, got %d", WARMUP_MAX_K, nk);
	size_t c_case = table_column(t, "case", "", 0), c_w = table_column(t, "warmup run", "", 0);
	size_t c_mean[WARMUP_MAX_K], c_std[WARMUP_MAX_K];
	for (int i = 0; i < nk; i++) {
		char name[32];
		snprintf(name, sizeof(name), "k=%d mean", ks[i]);
		c_mean[i] = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "k=%d std", ks[i]);
		c_std[i] = table_column(t, name, "ms", 3);
	}
	size_t c_first = table_column(t, "first iter", "x", 2),
	       c_steady = table_column(t, "steady from", "iter", 0);
	/* every case's iterations first: a case measured under contention, or too unstable, is
	 * marked (a column only where one is), and its warm-up read with that in mind */
	double **xs = xcalloc(set->n ? set->n : 1, sizeof(*xs));
	size_t *ns = xcalloc(set->n ? set->n : 1, sizeof(*ns));
	struct case_mark *marks = xcalloc(set->n ? set->n : 1, sizeof(*marks));
	unsigned marked = 0;
	rc = 0;
	for (size_t i = 0; i < set->n && !rc; i++) {
		const struct case_row *c = &set->rows[i];
		if (c->status != STATUS_OK)
			continue;
		rc = case_iterations(db, c, pick, &xs[i], &ns[i], err);
		size_t w = c->warmup > 0 ? (size_t)c->warmup : 0;
		if (!rc)
			case_mark_of(c, ns[i] > w ? xs[i] + w : NULL, ns[i] > w ? ns[i] - w : 0, &marks[i]);
		marked |= marks[i].bits;
	}
	size_t c_mark = !rc && marked ? table_column(t, "mark", "", 0) : 0;
	for (size_t i = 0; i < set->n && !rc; i++) {
		const struct case_row *c = &set->rows[i];
		if (c->status != STATUS_OK)
			continue;
		double *x = xs[i];
		size_t n = ns[i];
		size_t r = table_row(t);
		table_text(t, r, c_case, c->name);
		if (marks[i].bits) {
			char text[96];
			case_mark_text(&marks[i], text, sizeof(text));
			table_text(t, r, c_mark, text);
		}
		table_number(t, r, c_w, (double)c->warmup);
		for (int j = 0; j < nk; j++) {
			size_t from = (size_t)ks[j], to = from + (size_t)c->iters;
			if (to > n)
				to = n;
			if (from >= to)
				continue;
			struct summary s;
			summarize(x + from, to - from, &s);
			table_number(t, r, c_mean[j], s.mean / 1e6);
			if (s.n > 1)   /* no spread from one sample */
				table_number(t, r, c_std[j], s.std / 1e6);
		}
		if (n >= 2) {
			size_t half = n / 2;
			struct summary tail;
			summarize(x + half, n - half, &tail);
			if (tail.median > 0)
				table_number(t, r, c_first, x[0] / tail.median);
			size_t steady = steady_state_index(x, n, band);
			if (steady < n)
				table_number(t, r, c_steady, (double)steady);
			else
				table_text(t, r, c_steady, "never");
		}
	}
	for (size_t i = 0; i < set->n; i++)
		free(xs[i]);
	free(xs);
	free(ns);
	free(marks);
	if (rc)
		return rc;
	if (t->nrows == 0)
		table_note(t, "no ok case in run %lld", (long long)run_id);
	table_note(t, "k=K: mean/std of the iterations after the first K (as many as the run "
		       "measured, fewer where it did not make that many); first iter: iteration 0 / "
		       "median of the last half; steady from: where the slow start ends (0: none; a "
		       "faster start or a later spike is not warm-up; never: the last half still "
		       "trends down)");
	case_mark_note(t, marked);
	if (band > 0)
		table_note(t, "an excess up to %.3g%% over the steady level is not counted as "
			       "warm-up", 100 * band);
	return 0;
}
