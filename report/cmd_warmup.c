/* report/cmd_warmup.c: `report warmup` — the effect of warm-up iterations, from stored samples.
 *
 * Every iteration a run made is stored, warm-up ones included, so for k warm-up iterations we can
 * say what the measurement would have been: the mean and std of the `iters` iterations that
 * follow the first k (fewer when the run did not make that many). Also the first-iteration
 * penalty (first iteration / steady median) and the steady-state iteration. Nothing is re-run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

#define MAX_K 16

int case_iterations(struct db *db, const struct case_row *c, enum series_pick pick, double **out,
		     size_t *n, struct bd_error *err)
{
	struct sample *s = NULL;
	size_t ns = 0, total = (size_t)(c->warmup + c->iters);
	int rc = db_samples_get(db, c->id, &s, &ns, err);
	if (rc)
		return rc;
	double *x = calloc(total ? total : 1, sizeof(*x));
	unsigned *have = calloc(total ? total : 1, sizeof(*have));
	unsigned phases = 0;
	if (!x || !have) {
		free(x);
		free(have);
		free(s);
		return bd_fail(err, BD_ENOMEM, "out of memory");
	}
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

static int parse_ks(const char *text, int *ks, int *nk)
{
	*nk = 0;
	const char *p = text;
	while (*p) {
		char *end;
		long k = strtol(p, &end, 10);
		if (end == p || k < 0 || k > 1000000 || *nk >= MAX_K || (*end && *end != ','))
			return -1;
		ks[(*nk)++] = (int)k;
		p = *end ? end + 1 : end;
	}
	return *nk ? 0 : -1;
}

int warmup_table(struct db *db, int64_t run_id, const struct case_set *set, const int *ks, int nk,
		 enum series_pick pick, double band, struct table *t, struct bd_error *err)
{
	int rc;
	char title[128];
	snprintf(title, sizeof(title), "run %lld: warm-up effect (%s)", (long long)run_id,
		 series_pick_names[pick]);
	table_init(t, title);
	if (nk < 0 || nk > MAX_K)
		return bd_fail(err, BD_EINVAL, "at most %d warm-up counts, got %d", MAX_K, nk);
	size_t c_case = table_column(t, "case", "", 0), c_w = table_column(t, "warmup run", "", 0);
	size_t c_mean[MAX_K], c_std[MAX_K];
	for (int i = 0; i < nk; i++) {
		char name[32];
		snprintf(name, sizeof(name), "k=%d mean", ks[i]);
		c_mean[i] = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "k=%d std", ks[i]);
		c_std[i] = table_column(t, name, "ms", 3);
	}
	size_t c_first = table_column(t, "first iter", "x", 2),
	       c_steady = table_column(t, "steady from", "iter", 0);
	for (size_t i = 0; i < set->n; i++) {
		const struct case_row *c = &set->rows[i];
		if (c->status != STATUS_OK)
			continue;
		double *x = NULL;
		size_t n = 0;
		if ((rc = case_iterations(db, c, pick, &x, &n, err)))
			return rc;
		size_t r = table_row(t);
		table_text(t, r, c_case, c->name);
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
			table_number(t, r, c_std[j], s.std / 1e6);
		}
		if (n >= 2) {
			size_t half = n / 2;
			struct summary tail;
			summarize(x + half, n - half, &tail);
			if (tail.median > 0)
				table_number(t, r, c_first, x[0] / tail.median);
			size_t steady = steady_state_index(x, n, band / 100);
			if (steady < n)
				table_number(t, r, c_steady, (double)steady);
			else
				table_text(t, r, c_steady, "never");
		}
		free(x);
	}
	if (t->nrows == 0)
		table_note(t, "no ok case in run %lld", (long long)run_id);
	table_note(t, "k=K: mean/std of the iterations after the first K (as many as the run "
		       "measured, fewer where it did not make that many); first iter: iteration 0 / "
		       "median of the last half; steady from: first iteration after which every one "
		       "stays within %.3g%% of that median",
		   band);
	return 0;
}

int cmd_warmup(int argc, char **argv)
{
	const char *db_path = BENCHDB_DEFAULT_DB, *run_sel = "latest", *format = "md", *suite = NULL;
	const char *ks_text = "0,1,2,5", *phase = "total";
	double band = 10.0;
	struct opt_list where = {0};
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to read (default bench.db)", &db_path},
		{"run", 'r', OPT_STRING, "SEL", "run (default latest)", &run_sel},
		{"suite", 0, OPT_STRING, "NAME", "only cases of this suite", &suite},
		{"where", 'w', OPT_LIST, "KEY=VALUE", "only cases with this parameter value (repeatable)",
		 &where},
		{"k", 'k', OPT_STRING, "LIST", "warm-up counts to evaluate (default 0,1,2,5)", &ks_text},
		{"phase", 0, OPT_STRING, "PHASE", "fwd, bwd, opt or total (default total)", &phase},
		{"band", 0, OPT_DOUBLE, "PCT",
		 "steady state: within this of the final median from then on (default 10)", &band},
		{"format", 'f', OPT_STRING, "FMT", "md (default), csv, json or tex", &format},
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "warmup", "[options]",
		"What the measurement would have given with k warm-up iterations (mean and std of the\n"
		"`iters` iterations after the first k), the first-iteration penalty (first iteration /\n"
		"median of the last half) and the steady-state iteration, for every case of a run —\n"
		"from the stored samples, without running anything."};
	struct db *db = NULL;
	struct case_set set = {0};
	struct table t = {0};
	struct strbuf out = STRBUF_INIT;
	struct bd_error err;
	int64_t run_id;
	int ks[MAX_K], nk, npos, fmt, pick;
	int status = opt_parse_command(specs, &usage, argc, argv, 0, 0, &npos);
	if (status >= 0)
		return status;
	if (parse_ks(ks_text, ks, &nk)) {
		fprintf(stderr, "report warmup: --k expects a list such as 0,1,2,5, got '%s'\n", ks_text);
		return EXIT_USAGE;
	}
	if ((fmt = report_format_arg(format)) < 0 || (pick = series_pick_arg(phase)) < 0)
		return EXIT_USAGE;
	if ((status = report_open(db_path, run_sel, &db, &run_id)) >= 0)
		goto done;
	status = EXIT_OK;
	struct case_filter filter = {suite, where.items, where.n, .rows_only = 1};
	if (case_set_load(db, run_id, &filter, &set, &err)) {
		bd_error_print(REPORT_PROG, &err);
		status = err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto done;
	}
	if (warmup_table(db, run_id, &set, ks, nk, (enum series_pick)pick, band, &t, &err)) {
		bd_error_print(REPORT_PROG, &err);
		status = EXIT_FAIL;
		goto done;
	}
	render_begin((enum report_format)fmt, &out);
	render_table(&t, (enum report_format)fmt, &out);
	render_end((enum report_format)fmt, &out);
	fputs(sb_str(&out), stdout);
done:
	table_free(&t);
	sb_free(&out);
	case_set_free(&set);
	db_close(db);
	return status;
}
