/* report/cmd_history.c: `report history --case KEY | --where KEY=VALUE` — one benchmark across
 * every run that has it, oldest first: provenance (commit, host), the median with a 95% interval,
 * and a step flag where the median moved significantly against the previous ok run. One table per
 * case key; the cases come from db_cases_by_key (every run at once, grouped by key). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "opt.h"
#include "report.h"
#include "xalloc.h"

/* How many case keys of the latest run the "give a selector" message shows. */
#define EXAMPLE_KEYS 3

/* A few case keys of the latest run, to copy into --case (prints nothing when there is none). */
static void list_example_keys(const char *db_path, const char *suite)
{
	struct db *db = NULL;
	struct case_row *rows = NULL;
	struct bd_error err;
	size_t n = 0;
	int64_t latest = 0;
	if (db_open(db_path, DB_READONLY, &db, &err) || db_run_resolve(db, "latest", &latest, &err) ||
	    db_cases_list(db, latest, suite, &rows, &n, &err))
		goto done;
	if (n)
		fprintf(stderr, "case keys of run %lld, for example:\n", (long long)latest);
	for (size_t i = 0; i < n && i < EXAMPLE_KEYS; i++)
		fprintf(stderr, "  --case '%s'\n", rows[i].case_key);
	if (n > EXAMPLE_KEYS)
		fprintf(stderr, "  ... %zu in all\n", n);
done:
	db_case_rows_free(rows, n);
	db_close(db);
}

/* --last: keep the last `last` rows of each key (rows grouped by key, oldest run first); the
 * others move behind, the kept keep their order. Returns how many are kept. */
static size_t last_per_key(struct case_row *rows, size_t n, size_t last)
{
	size_t kept = 0;
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && !strcmp(rows[end].case_key, rows[i].case_key);)
			end++;
		for (size_t j = i; j < end; j++) {
			if (end - j > last)
				continue;
			struct case_row keep = rows[j];
			rows[j] = rows[kept];
			rows[kept++] = keep;
		}
	}
	return kept;
}


/* What the steps are judged with: every run's session and system, and one noise model per
 * system (its stored runs, pooled over the report's case keys). */
struct history_noise {
	struct run_session *runs;   /* by id (sorted) */
	size_t nruns;
	int64_t *systems;
	struct noise_data *data;
	struct noise_model *models;
	size_t nsystems;
};

static int by_session_id(const void *a, const void *b)
{
	int64_t x = ((const struct run_session *)a)->id, y = ((const struct run_session *)b)->id;
	return (x > y) - (x < y);
}

static const struct run_session *session_of(const struct history_noise *h, int64_t run_id)
{
	struct run_session key = {.id = run_id};
	return bsearch(&key, h->runs, h->nruns, sizeof(*h->runs), by_session_id);
}

/* The model of system_id (index into h), or -1. */
static long model_of(const struct history_noise *h, int64_t system_id)
{
	for (size_t i = 0; i < h->nsystems; i++)
		if (h->systems[i] == system_id)
			return (long)i;
	return -1;
}

/* The table of one case key: rows[0..n-1] are its cases, oldest run first. with_key: a first
 * column repeats the key (CSV drops titles, and its tables must still say whose rows they are).
 * Each ok run against the previous ok run is a step, judged as `report compare` judges two runs
 * (the run the unit, the noise between runs from the system's model), the steps of the table
 * adjusted together (Benjamini-Hochberg). */
static int key_table(struct db *db, const struct case_row *rows, size_t n,
		     const struct run_row *runs, size_t nruns, enum series_pick pick,
		     const struct verdict_rule *rule, const struct history_noise *h, int with_key,
		     struct table *t, struct bd_error *err)
{
	struct case_series cur = {0};
	struct pair_result *steps = xcalloc(n + 1, sizeof(*steps));
	struct pair_result **family = xcalloc(n + 1, sizeof(*family));
	size_t *step_row = xcalloc(n + 1, sizeof(*step_row)), nsteps = 0, claimed = 0;
	int rc = 0, host_changed = 0;
	struct strbuf unmeasured = STRBUF_INIT;   /* ok runs without a median: their ids */
	size_t nunmeasured = 0;
	size_t fewest = 0;   /* the fewest iterations (2..5) of a run whose interval is below 95% */
	double prev_y = 0, prev_within = 0, prev_wait = -1;
	const struct run_session *prev = NULL;
	char title[2048];
	snprintf(title, sizeof(title), "%s (%s)", rows[0].name, rows[0].case_key);
	table_init(t, title);
	size_t c_key = with_key ? table_column(t, "case key", "", 0) : 0;
	size_t c_run = table_column(t, "run", "", 0), c_start = table_column(t, "started", "", 0),
	       c_commit = table_column(t, "commit", "", 0), c_host = table_column(t, "host", "", 0),
	       c_status = table_column(t, "status", "", 0),
	       c_med = table_column(t, "median", "ms", 3), c_lo = table_column(t, "ci lo", "ms", 3),
	       c_hi = table_column(t, "ci hi", "ms", 3), c_n = table_column(t, "n", "", 0),
	       c_wait = table_column(t, "cpu wait", "%", 0),
	       c_step = table_column(t, "step", "", 0);
	for (size_t i = 0; i < n; i++) {
		const struct case_row *c = &rows[i];
		const struct run_row *run = db_run_find(runs, nruns, c->run_id);
		size_t r = table_row(t);
		if (with_key)
			table_text(t, r, c_key, c->case_key);
		table_number(t, r, c_run, (double)c->run_id);
		if (run) {
			char commit[64];
			if (run->git_commit)
				snprintf(commit, sizeof(commit), "%.12s%s", run->git_commit,
					 run->git_dirty == 1 ? "+dirty" : "");
			else
				snprintf(commit, sizeof(commit), "unknown");
			table_text(t, r, c_start, run->started_at);
			table_text(t, r, c_commit, commit);
			table_text(t, r, c_host, run->hostname);
		}
		table_text(t, r, c_status, status_name(c->status));
		if (c->status != STATUS_OK) {
			table_note(t, "run %lld: %s — %s", (long long)c->run_id, status_name(c->status),
				   c->reason ? c->reason : "no reason stored");
			continue;
		}
		if ((rc = case_series_load(db, c, &cur, err)))
			goto done;
		size_t m;
		const double *x = case_series_pick(&cur, pick, &m);
		double median, lo, hi, y, within;
		if (m == 0 || noise_run_y(&cur, pick, &y, &within) ||
		    median_ci(x, m, &median, &lo, &hi)) {
			case_series_free(&cur);
			sb_addf(&unmeasured, "%s%lld", unmeasured.len ? ", " : "", (long long)c->run_id);
			nunmeasured++;
			continue;
		}
		case_series_free(&cur);
		table_number(t, r, c_med, median / 1e6);
		if (m > 1) {   /* no interval from one sample */
			table_number(t, r, c_lo, lo / 1e6);
			table_number(t, r, c_hi, hi / 1e6);
			if (m < 6 && (!fewest || m < fewest))
				fewest = m;
		}
		table_number(t, r, c_n, (double)m);
		if (c->cpu_wait >= 0)
			table_number(t, r, c_wait, 100 * c->cpu_wait);
		const struct run_session *here = session_of(h, c->run_id);
		if (prev && here && prev->id == here->id) {
			/* the run measured the case again: one run, no step (the run is the unit) */
			table_note(t, "run %lld measured the case more than once: one run, its first "
				      "case is its step", (long long)c->run_id);
			continue;
		}
		if (prev && here) {
			long mi = model_of(h, here->system_id);
			char sb[DB_SESSION_MAX], sc[DB_SESSION_MAX];
			noise_session_key(prev->group_id, prev->uuid, sb);
			noise_session_key(here->group_id, here->uuid, sc);
			const char *bs[] = {sb}, *cs[] = {sc};
			struct noise_side b = {bs, 1}, cside = {cs, 1};
			double var, df;
			host_changed |= prev->system_id != here->system_id;
			if (mi >= 0) {
				noise_diff_var(&h->models[mi], noise_data_find(&h->data[mi], c->case_key),
					       &b, &cside, prev_within, within, &var, &df);
				struct pair_result *pr = &steps[nsteps];
				compare_modeled(y - prev_y, var, df, m < REPORT_MIN_ITERS, rule, pr);
				pr->wait_base = prev_wait;
				pr->wait_cand = c->cpu_wait;
				step_row[nsteps] = r;
				family[nsteps] = pr;
				nsteps++;
			}
		}
		prev = here;
		prev_y = y;
		prev_within = within;
		prev_wait = c->cpu_wait;
	}
	verdicts_decide(family, nsteps, rule);
	for (size_t k = 0; k < nsteps; k++) {
		const struct pair_result *pr = family[k];
		double change = 100 * expm1(pr->log_change);
		char step[48] = "";
		if (pr->verdict == VERDICT_SLOWER || pr->verdict == VERDICT_FASTER)
			snprintf(step, sizeof(step), "%s %+.1f%%", verdict_names[pr->verdict], change);
		else if (pr->verdict == VERDICT_CONTENDED)
			snprintf(step, sizeof(step), "contended %+.1f%%", change);
		else if (pr->verdict == VERDICT_UNSURE && fabs(pr->log_change) > log1p(rule->threshold))
			snprintf(step, sizeof(step), "? %+.1f%%", change);
		if (step[0])
			table_text(t, step_row[k], c_step, step);
		claimed += pr->verdict == VERDICT_SLOWER || pr->verdict == VERDICT_FASTER;
	}
	table_note(t, "%zu run%s, %zu step change%s; median and 95%% interval over the measured "
		      "iterations (%s), the interval from order statistics (distribution-free)",
		   n, n == 1 ? "" : "s", claimed, claimed == 1 ? "" : "s", series_pick_names[pick]);
	table_note(t, "step: against the previous ok run, the run the unit: slower/faster when the "
		      "change is significant with the noise between runs of the system (t test, "
		      "Benjamini-Hochberg over this table's steps, alpha %.3g) and beyond %.3g%%; "
		      "? when it is beyond but not significant; contended when either run waited for "
		      "a CPU %.3g%% of its measured time or more (cpu wait), or the slower one %.3g "
		      "points more; n: measured iterations",
		   rule->alpha, 100 * rule->threshold, 100 * rule->cpu_wait_level,
		   100 * rule->cpu_wait_gap);
	if (fewest)
		table_note(t, "below 6 iterations no interval from order statistics is 95%%: a run's "
			      "interval is then its whole range, which holds the median with probability "
			      "1 - 2^(1-n) (%.4g%% at the fewest here, n = %zu)",
			   100 * (1 - ldexp(1.0, 1 - (int)fewest)), fewest);
	if (host_changed)
		table_note(t, "the host changes between some runs: a step there compares machines, "
			      "with the noise of the later run's system");
	if (nunmeasured)
		table_note(t, "ok with no measured samples (%s): no median, no step — run%s %s",
			   series_pick_names[pick], nunmeasured == 1 ? "" : "s", sb_str(&unmeasured));
done:
	sb_free(&unmeasured);
	case_series_free(&cur);
	free(steps);
	free(family);
	free(step_row);
	return rc;
}

/* The noise models of every system the rows ran on (pooled over each system's case keys). */
static int history_noise_load(struct db *db, const struct case_row *rows, size_t n, int pick,
			      const struct verdict_rule *rule, struct history_noise *h,
			      struct bd_error *err)
{
	int rc = db_run_sessions(db, 0, 0, &h->runs, &h->nruns, err);
	if (rc)
		return rc;
	qsort(h->runs, h->nruns, sizeof(*h->runs), by_session_id);
	h->systems = xcalloc(n + 1, sizeof(*h->systems));
	h->data = xcalloc(n + 1, sizeof(*h->data));
	h->models = xcalloc(n + 1, sizeof(*h->models));
	for (size_t i = 0; i < n && !rc; i++) {
		const struct run_session *s = session_of(h, rows[i].run_id);
		if (!s || model_of(h, s->system_id) >= 0)
			continue;
		size_t k = h->nsystems++;
		h->systems[k] = s->system_id;
		rc = noise_history_load(db, &s->system_id, 1, pick, NULL, 0, NULL, NULL, &h->data[k],
					err);
		if (!rc)
			rc = noise_model_fit(&h->data[k], &rule->assumed, &h->models[k]);
	}
	return rc;
}

static void history_noise_free(struct history_noise *h)
{
	for (size_t i = 0; i < h->nsystems; i++) {
		noise_data_free(&h->data[i]);
		noise_model_free(&h->models[i]);
	}
	free(h->systems);
	free(h->data);
	free(h->models);
	free(h->runs);
}

int cmd_history(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	struct history_options h = HISTORY_OPTIONS_INIT;
	const char *case_key = NULL;
	const struct opt_spec specs[] = {
		{"case", 'c', OPT_STRING, "KEY", "the case key to follow (exact, as stored in cases.case_key)",
		 &case_key},
		{"where", 'w', OPT_LIST, "KEY=VALUE", "every case with this parameter value (repeatable)",
		 &o.where},
		REPORT_OPT_SUITE(&o),
		HISTORY_OPT_RUNS(&h),
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_THRESHOLD(&o, "change that counts as a step"),
		REPORT_OPT_ALPHA(&o),
		REPORT_OPT_FORMAT(&o, 0),
		REPORT_OPT_DB(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "history", "--case KEY | --where KEY=VALUE ... [options]",
		"Follow one case key (or every case the filter matches, one table per key) across every\n"
		"run that has it, oldest first: run, start time, git commit, host, status, the median\n"
		"with a 95% distribution-free interval, the share of its time the case waited for a CPU,\n"
		"and a step flag against the previous ok run: slower +x% / faster -x% where the median\n"
		"moved beyond the threshold and significantly against the noise between runs of the\n"
		"system (its stored runs; the steps of a table adjusted together, Benjamini-Hochberg),\n"
		"? where it moved beyond the threshold but the noise could explain it, contended where a\n"
		"run waited for a CPU. stderr says what noise each system showed. --label (or --branch)\n"
		"keeps other runs (a pull request's) out of a nightly history; --last N keeps the last N\n"
		"runs that have the case. Change points over many runs: `report changes`. Exit status:\n"
		"1 when no case matches, 2 on usage errors."};
	struct db *db = NULL;
	struct case_row *rows = NULL;
	struct run_row *runs = NULL;
	struct report_output out = REPORT_OUTPUT_INIT;
	struct history_noise noise = {0};
	struct bd_error err;
	size_t n = 0, nall = 0, nruns = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((status = verdict_rule_check(&o.rule, "history")) >= 0)
		return status;
	struct history_filter runs_filter = {0};
	struct cp_options unused;
	if ((status = history_options_check(&h, NULL, "history", &runs_filter, &unused)) >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if (case_key && !case_key[0]) {
		fprintf(stderr, "report history: --case needs a case key, got ''\n");
		return EXIT_USAGE;
	}
	if (!case_key && o.where.n == 0) {
		fprintf(stderr, "report history: give a case: --case KEY (exact) or --where KEY=VALUE\n");
		list_example_keys(o.db_path, o.suite);
		return EXIT_USAGE;
	}
	if ((status = report_open(o.db_path, NULL, &db, NULL)) >= 0)
		goto done;
	status = EXIT_OK;
	if (db_runs_list(db, &runs, &nruns, &err) ||
	    db_cases_by_key(db, case_key, o.suite, &rows, &nall, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	n = nall;
	struct case_filter filter = report_filter(&o);
	if (case_rows_filter(rows, &n, &filter, "any run", &err)) {
		status = report_error(&err, EXIT_USAGE);
		goto done;
	}
	size_t left_out = 0;   /* rows of runs the run filters refused */
	n = history_rows_select(runs, nruns, rows, n, &runs_filter, &left_out);
	history_rows_order(runs, nruns, rows, n);   /* oldest run first, by time */
	if (h.last > 0)
		n = last_per_key(rows, n, (size_t)h.last);
	struct strbuf what = STRBUF_INIT;
	history_filter_describe(&runs_filter, &what);
	if (left_out)
		fprintf(stderr, "report history: %zu cases of runs outside%s left out\n", left_out,
			sb_str(&what));
	if (n == 0) {
		if (case_key)
			fprintf(stderr, "report history: no run%s has a case with key '%s'%s%s%s\n",
				sb_str(&what), case_key, o.suite ? " in suite " : "", o.suite ? o.suite : "",
				o.where.n ? " that matches the --where filter" : "");
		else
			fprintf(stderr, "report history: no case of any run%s matches the --where "
					"filter%s%s\n", sb_str(&what), o.suite ? " in suite " : "",
				o.suite ? o.suite : "");
		sb_free(&what);
		list_example_keys(o.db_path, o.suite);
		status = EXIT_FAIL;
		goto done;
	}
	sb_free(&what);
	if (history_noise_load(db, rows, n, pick, &o.rule, &noise, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	report_output_begin(&out, (enum report_format)fmt);
	int rc = 0;
	for (size_t i = 0, end; i < n && !rc; i = end) {
		for (end = i + 1; end < n && !strcmp(rows[end].case_key, rows[i].case_key);)
			end++;
		struct table t;
		rc = key_table(db, &rows[i], end - i, runs, nruns, (enum series_pick)pick, &o.rule,
			       &noise, format_is((enum report_format)fmt, FORMAT_UNTITLED), &t, &err);
		rc = report_output_table(&out, &t, rc, &err);
	}
	status = report_output_end(&out, rc);
	if (!rc && noise.nsystems) {
		/* what the steps were judged with, once per system */
		for (size_t k = 0; k < noise.nsystems; k++) {
			struct strbuf sb = STRBUF_INIT;
			noise_model_describe(&noise.models[k], &sb);
			fprintf(stderr, "report history: system %lld: %s\n",
				(long long)noise.systems[k], sb_str(&sb));
			sb_free(&sb);
		}
	}
done:
	history_noise_free(&noise);
	report_output_free(&out);
	db_case_rows_free(rows, nall);
	db_run_rows_free(runs, nruns);
	db_close(db);
	return status;
}
