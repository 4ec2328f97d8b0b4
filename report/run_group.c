/* report/run_group.c: one side of a comparison as a group of runs — the baseline of `report
 * regress` may be every run with a label (e.g. the nightly runs of main, or the repetitions of one
 * `runner run --repeat N` stored under one label), the last K of them, or runs named one by one —
 * with each run's cases loaded and indexed by case key. */
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

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
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
		if (!has_id(g, id))
			g->ids[g->n++] = id;
	}
	int64_t before = INT64_MAX;   /* --last alone: the runs before the first excluded one */
	for (size_t i = 0; exclude && i < exclude->n; i++)
		before = exclude->ids[i] < before ? exclude->ids[i] : before;
	for (size_t i = 0; i < nruns; i++) {
		const struct run_row *r = &runs[i];
		int by_label = spec->label && r->label && !strcmp(r->label, spec->label);
		int by_last = !spec->label && spec->nsels == 0 && spec->last > 0 && r->id < before;
		if ((by_label || by_last) && !has_id(g, r->id) && !has_id(exclude, r->id))
			g->ids[g->n++] = r->id;
	}
	qsort(g->ids, g->n, sizeof(*g->ids), cmp_id);
	if (spec->last > 0 && g->n > (size_t)spec->last) {
		memmove(g->ids, g->ids + g->n - (size_t)spec->last, (size_t)spec->last * sizeof(*g->ids));
		g->n = (size_t)spec->last;
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
	for (size_t i = 0; i < g->n && !rc; i++)
		rc = db_run_get(db, g->ids[i], &g->rows[i], err);
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
