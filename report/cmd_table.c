/* report/cmd_table.c: `report [table]` — a run's cases as tables laid out like a course writeup:
 * parameters (and the model's parameter count), then mean and std of each timed phase and of
 * fwd+bwd, status, memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "params.h"
#include "report.h"

/* The parameters shown for a suite, in column order (keys of the canonical params JSON; the
 * table's column_rank, common/params.c), NULL-terminated in params[9]. */
static const char *const *params_of(const char *suite, const char *params[9])
{
	param_columns(suite, params, 9);   /* at most 8 columns */
	return params;
}

#define NS_PER_MS 1e6
#define BYTES_PER_MIB 1048576.0

int table_of_cases(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		   unsigned flags, struct table *t, struct bd_error *err)
{
	const char *columns[9];
	const char *const *params = params_of(suite, columns);
	struct case_series *series = calloc(n ? n : 1, sizeof(*series));
	unsigned phases = 0;
	int rc = 0, causal_col = !strcmp(suite, "attention");
	table_init(t, suite);
	if (!series)
		return bd_fail(err, BD_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !rc; i++) {
		rc = case_series_load(db, &cases[i], &series[i], err);
		phases |= series[i].phases;
	}
	if (rc)
		goto done;

	size_t col_param[8], ncol_param = 0, col_causal = 0, col_count = 0;
	for (; ncol_param < 8 && params[ncol_param]; ncol_param++)
		col_param[ncol_param] = table_column(t, params[ncol_param], "", 0);
	/* The model's parameter count, as the runner stored it (schema 4; e2e) */
	int counted = 0;
	for (size_t i = 0; i < n; i++)
		counted |= cases[i].param_count > 0;
	if (counted)
		col_count = table_column(t, "param count", "M", 1);
	if (causal_col)
		col_causal = table_column(t, "causal", "", 0);
	size_t col_status = table_column(t, "status", "", 0);
	size_t col_mean[PHASE_COUNT], col_std[PHASE_COUNT], col_tmean = 0, col_tstd = 0;
	int total_col = __builtin_popcount(phases) > 1;
	for (int p = 0; p < PHASE_COUNT; p++) {
		if (!(phases & (1u << p)))
			continue;
		char name[32];
		snprintf(name, sizeof(name), "%s mean", phase_name(p));
		col_mean[p] = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "%s std", phase_name(p));
		col_std[p] = table_column(t, name, "ms", 3);
	}
	if (total_col) {
		const char *total = phases & (1u << 2) ? "fwd+bwd+opt" : "fwd+bwd";
		char name[32];
		snprintf(name, sizeof(name), "%s mean", total);
		col_tmean = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "%s std", total);
		col_tstd = table_column(t, name, "ms", 3);
	}
	/* Achieved rate per phase where the workload stated its FLOPs: flops / mean ns = GFLOP/s. */
	size_t col_rate[PHASE_COUNT];
	unsigned rated = 0;
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < PHASE_COUNT; p++)
			if (cases[i].flops[p] > 0 && (phases & (1u << p)))
				rated |= 1u << p;
	for (int p = 0; p < PHASE_COUNT; p++) {
		if (!(rated & (1u << p)))
			continue;
		char name[32];
		snprintf(name, sizeof(name), "%s GFLOP/s", phase_name(p));
		col_rate[p] = table_column(t, name, "", 1);
	}
	/* Derived rates. Tokens per iteration: batch_size x seq_len (attention: query positions; e2e:
	 * the context). Bytes: what the workload states it must move at least. */
	int derived = flags & TABLE_DERIVED;
	size_t col_tok = 0, col_smp = 0, col_cv = 0, col_gbs[PHASE_COUNT];
	unsigned moved = 0;
	if (derived) {
		col_tok = table_column(t, "tokens/s", "", 0);
		col_smp = table_column(t, "samples/s", "", 1);
		for (size_t i = 0; i < n; i++)
			for (int p = 0; p < PHASE_COUNT; p++)
				if (cases[i].bytes[p] > 0 && (phases & (1u << p)))
					moved |= 1u << p;
		for (int p = 0; p < PHASE_COUNT; p++) {
			if (!(moved & (1u << p)))
				continue;
			char name[32];
			snprintf(name, sizeof(name), "%s GB/s", phase_name(p));
			col_gbs[p] = table_column(t, name, "", 1);
		}
		col_cv = table_column(t, "CV", "%", 1);
	}
	size_t col_peak = table_column(t, "peak mem", "MiB", 1);
	/* What the memory holds, where the workload said (e2e): parameters, gradients, AdamW
	 * state, activations. */
	int breakdown = 0;
	for (size_t i = 0; i < n; i++)
		breakdown |= cases[i].activation_bytes > 0;
	size_t col_mem[4] = {0};
	if (breakdown) {
		col_mem[0] = table_column(t, "params", "MiB", 1);
		col_mem[1] = table_column(t, "grads", "MiB", 1);
		col_mem[2] = table_column(t, "optim", "MiB", 1);
		col_mem[3] = table_column(t, "activations", "MiB", 1);
	}

	for (size_t i = 0; i < n; i++) {
		const struct case_row *c = &cases[i];
		size_t r = table_row(t);
		char v[256];
		for (size_t k = 0; k < ncol_param; k++) {
			json_field(c->params_json, params[k], v, sizeof(v));
			table_text(t, r, col_param[k], v);
		}
		if (counted && c->param_count > 0)
			table_number(t, r, col_count, (double)c->param_count / 1e6);
		if (causal_col)
			table_text(t, r, col_causal, c->causal > 0 ? "yes" : "no");
		table_text(t, r, col_status, status_name(c->status));
		if (c->status != STATUS_OK)
			table_note(t, "case %lld (%s): %s — %s", (long long)c->ord + 1, c->name, status_name(c->status),
				   c->reason ? c->reason : "no reason stored");
		for (int p = 0; p < PHASE_COUNT; p++) {
			if (!(series[i].phases & (1u << p)))
				continue;
			struct summary s;
			summarize(series[i].ns[p], series[i].n[p], &s);
			table_number(t, r, col_mean[p], s.mean / NS_PER_MS);
			table_number(t, r, col_std[p], s.std / NS_PER_MS);
			if ((rated & (1u << p)) && c->flops[p] > 0 && s.mean > 0)
				table_number(t, r, col_rate[p], c->flops[p] / s.mean);
			if (derived && (moved & (1u << p)) && c->bytes[p] > 0 && s.mean > 0)
				table_number(t, r, col_gbs[p], c->bytes[p] / s.mean);
		}
		if (derived) {
			size_t nt;
			const double *tot = case_series_pick(&series[i], PICK_TOTAL, &nt);
			struct summary s;
			summarize(tot, nt, &s);
			if (nt && s.mean > 0) {
				double per_s = 1e9 / s.mean;
				table_number(t, r, col_tok, per_s * (double)c->batch_size * (double)c->seq_len);
				table_number(t, r, col_smp, per_s * (double)c->batch_size);
				table_number(t, r, col_cv, 100 * s.cv);
			}
		}
		if (total_col && series[i].ntotal) {
			struct summary s;
			summarize(series[i].total, series[i].ntotal, &s);
			table_number(t, r, col_tmean, s.mean / NS_PER_MS);
			table_number(t, r, col_tstd, s.std / NS_PER_MS);
		}
		if (c->peak_bytes >= 0)
			table_number(t, r, col_peak, (double)c->peak_bytes / BYTES_PER_MIB);
		const int64_t held[4] = {c->param_bytes, c->grad_bytes, c->optim_bytes,
					 c->activation_bytes};
		for (int k = 0; breakdown && c->activation_bytes > 0 && k < 4; k++)
			table_number(t, r, col_mem[k], held[k] > 0 ? (double)held[k] / BYTES_PER_MIB : 0);
	}
done:
	for (size_t i = 0; i < n; i++)
		case_series_free(&series[i]);
	free(series);
	return rc;
}

/* Markdown heading with the run's provenance. */
static void run_header(struct db *db, const struct run_row *r, struct strbuf *out)
{
	struct sysinfo si;
	struct bd_error err;
	if (db_system_get(db, r->system_id, &si, &err))
		memset(&si, 0, sizeof(si));
	sb_addf(out, "## run %lld: %s (%s)\n\n", (long long)r->id,
		r->sweep_name ? r->sweep_name : "?", r->status);
	sb_addf(out, "- started %s, uuid %s%s%s\n", r->started_at, r->uuid, r->label ? ", label " : "",
		r->label ? r->label : "");
	sb_addf(out, "- host %s: %s, %d cores, %s\n", si.hostname, si.cpu_model[0] ? si.cpu_model : "?",
		si.cpu_cores, si.blas[0] ? si.blas : "no BLAS recorded");
	if (r->git_commit)
		sb_addf(out, "- git %.12s%s on %s\n", r->git_commit, r->git_dirty == 1 ? " (dirty)" : "",
			r->git_branch ? r->git_branch : "?");
	else
		sb_add(out, "- git commit unknown (built outside a git checkout)\n");
	sb_addf(out, "- %lld cases, %lld ok; times are means over measured iterations (warm-up "
		     "excluded)\n\n",
		(long long)r->ncases, (long long)r->nok);
}

/* `--pivot KEY`: one row per case that differs only in KEY, one column per value of KEY holding
 * the mean time of pick. */
static int pivot_table(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		       const char *key, enum series_pick pick, struct table *t, struct bd_error *err)
{
	const char *columns[9];
	const char *const *params = params_of(suite, columns);
	char **row_key = calloc(n ? n : 1, sizeof(*row_key));
	char (*value)[128] = calloc(n ? n : 1, sizeof(*value));
	size_t *row_of = calloc(n ? n : 1, sizeof(*row_of)), *col_of = calloc(n ? n : 1, sizeof(*col_of));
	size_t col_param[8], ncol_param = 0;
	int rc = 0;
	char title[128];
	snprintf(title, sizeof(title), "%s: mean %s time by %s", suite, series_pick_names[pick], key);
	table_init(t, title);
	if (!row_key || !value || !row_of || !col_of) {
		rc = bd_fail(err, BD_ENOMEM, "out of memory");
		goto done;
	}
	for (; ncol_param < 8 && params[ncol_param]; ncol_param++)
		if (strcmp(params[ncol_param], key))
			col_param[ncol_param] = table_column(t, params[ncol_param], "", 0);
		else
			col_param[ncol_param] = (size_t)-1;
	/* Columns: the values of KEY in order of first appearance. */
	for (size_t i = 0; i < n; i++) {
		json_field(cases[i].params_json, key, value[i], sizeof(value[i]));
		size_t j = 0;
		while (j < i && strcmp(value[j], value[i]))
			j++;
		if (j == i) {
			char name[160];
			snprintf(name, sizeof(name), "%s=%s", key, value[i]);
			col_of[i] = table_column(t, name, "ms", 3);
		} else {
			col_of[i] = col_of[j];
		}
	}
	/* Rows: cases equal but for KEY share one. */
	for (size_t i = 0; i < n; i++) {
		row_key[i] = case_key_without(cases[i].case_key, key);
		size_t j = 0;
		while (j < i && strcmp(row_key[j], row_key[i]))
			j++;
		if (j < i) {
			row_of[i] = row_of[j];
			continue;
		}
		row_of[i] = table_row(t);
		char v[256];
		for (size_t k = 0; k < ncol_param; k++) {
			if (col_param[k] == (size_t)-1)
				continue;
			json_field(cases[i].params_json, params[k], v, sizeof(v));
			table_text(t, row_of[i], col_param[k], v);
		}
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct case_series series;
		if (cases[i].status != STATUS_OK) {
			table_text(t, row_of[i], col_of[i], status_name(cases[i].status));
			continue;
		}
		if ((rc = case_series_load(db, &cases[i], &series, err)))
			break;
		size_t m;
		const double *x = case_series_pick(&series, pick, &m);
		struct summary s;
		summarize(x, m, &s);
		if (m)
			table_number(t, row_of[i], col_of[i], s.mean / NS_PER_MS);
		case_series_free(&series);
	}
done:
	for (size_t i = 0; row_key && i < n; i++)
		free(row_key[i]);
	free(row_key);
	free(value);
	free(row_of);
	free(col_of);
	return rc;
}

/* The group a case belongs to: its suite, and with --group-by the value of that parameter. */
static void group_of(const struct case_row *c, const char *group_by, char *out, size_t n)
{
	char v[128] = "";
	if (group_by)
		json_field(c->params_json, group_by, v, sizeof(v));
	snprintf(out, n, "%s%s%s%s%s", c->suite, group_by ? ", " : "", group_by ? group_by : "",
		 group_by ? "=" : "", v);
}

int cmd_table(int argc, char **argv)
{
	const char *db_path = BENCHDB_DEFAULT_DB, *run_sel = "latest", *format = "md", *suite = NULL;
	const char *group_by = NULL, *pivot = NULL, *phase = "total";
	int derived = 0;
	struct opt_list where = {0};
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to read (default bench.db)", &db_path},
		{"run", 'r', OPT_STRING, "SEL",
		 "run id, uuid prefix, label, git commit or 'latest' (default)", &run_sel},
		{"format", 'f', OPT_STRING, "FMT", "md (default), csv, json or tex", &format},
		{"suite", 0, OPT_STRING, "NAME", "only cases of this suite (attention, e2e, matmul)",
		 &suite},
		{"where", 'w', OPT_LIST, "KEY=VALUE", "only cases with this parameter value (repeatable)",
		 &where},
		{"group-by", 'g', OPT_STRING, "KEY", "one table per value of this parameter (e.g. dtype)",
		 &group_by},
		{"pivot", 'p', OPT_STRING, "KEY",
		 "one column per value of this parameter (e.g. impl), holding the mean time", &pivot},
		{"phase", 0, OPT_STRING, "PHASE", "with --pivot: fwd, bwd, opt or total (default)", &phase},
		{"derived", 'd', OPT_FLAG, NULL, "add tokens/s, samples/s, GB/s and CV% columns", &derived},
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "table", "[options]",
		"Print a run's cases as tables: parameters (e2e: the model's parameter count, too), mean\n"
		"and standard deviation of each timed phase over the measured iterations, status and\n"
		"peak memory. `report` alone does this for the latest run."};
	struct db *db = NULL;
	struct case_row *cases = NULL;
	struct run_row run = {0};
	struct strbuf out = STRBUF_INIT;
	struct bd_error err;
	size_t n = 0, nall = 0;
	int64_t run_id = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(specs, &usage, argc, argv, 0, 0, &npos);
	if (status >= 0)
		return status;
	if ((fmt = report_format_arg(format)) < 0 || (pick = series_pick_arg(phase)) < 0)
		return EXIT_USAGE;
	if ((status = report_open(db_path, run_sel, &db, &run_id)) >= 0)
		goto done;
	status = EXIT_OK;
	if (db_run_get(db, run_id, &run, &err) || db_cases_list(db, run_id, suite, &cases, &n, &err)) {
		bd_error_print(REPORT_PROG, &err);
		status = EXIT_FAIL;
		goto done;
	}
	nall = n;
	char scope[64];
	snprintf(scope, sizeof(scope), "run %lld", (long long)run_id);
	struct case_filter filter = {.suite = suite, .where = where.items, .nwhere = where.n};
	if (case_rows_filter(cases, &n, &filter, scope, &err)) {
		bd_error_print(REPORT_PROG, &err);
		status = EXIT_USAGE;
		goto done;
	}
	if (fmt == FORMAT_MD)
		run_header(db, &run, &out);
	render_begin((enum report_format)fmt, &out);
	if (n == 0) {
		struct table t;
		table_init(&t, "no cases");
		table_note(&t, "no cases stored in run %lld%s%s", (long long)run_id,
			   suite ? " for suite " : "", suite ? suite : "");
		render_table(&t, (enum report_format)fmt, &out);
		table_free(&t);
	}
	/* One table per suite (and --group-by value), in order of first appearance. */
	for (size_t i = 0; i < n; i++) {
		char gi[256], gj[256];
		group_of(&cases[i], group_by, gi, sizeof(gi));
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++) {
			group_of(&cases[j], group_by, gj, sizeof(gj));
			seen = !strcmp(gi, gj);
		}
		if (seen)
			continue;
		size_t m = 0;
		struct case_row *group = calloc(n, sizeof(*group));
		if (!group)
			abort();
		for (size_t j = i; j < n; j++) {
			group_of(&cases[j], group_by, gj, sizeof(gj));
			if (!strcmp(gi, gj))
				group[m++] = cases[j];   /* shallow: strings stay owned by cases */
		}
		struct table t;
		int rc = pivot ? pivot_table(db, cases[i].suite, group, m, pivot,
					     (enum series_pick)pick, &t, &err)
			       : table_of_cases(db, cases[i].suite, group, m,
						derived ? TABLE_DERIVED : 0, &t, &err);
		if (!rc && group_by) {
			free(t.title);
			t.title = strdup(gi);
		}
		free(group);
		if (rc) {
			table_free(&t);
			bd_error_print(REPORT_PROG, &err);
			status = EXIT_FAIL;
			goto done;
		}
		render_table(&t, (enum report_format)fmt, &out);
		table_free(&t);
	}
	render_end((enum report_format)fmt, &out);
	fputs(sb_str(&out), stdout);
done:
	sb_free(&out);
	db_case_rows_free(cases, nall);
	db_run_row_clear(&run);
	db_close(db);
	return status;
}
