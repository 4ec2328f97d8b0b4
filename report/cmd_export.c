/* report/cmd_export.c: `report export` — the stored data for other tools: every sample as stored
 * (warm-up included), or statistics per case and phase, as CSV or JSON, numbers unrounded.
 *
 * Samples can run to millions of rows, so they are not one table: each case becomes its own table,
 * rendered and freed before the next is read. In CSV the tables continue one another under a
 * single header; in JSON they are the elements of the output's array (one per case). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "opt.h"
#include "report.h"
#include "shape.h"
#include "xalloc.h"

enum export_what { EXPORT_SAMPLES, EXPORT_STATS };

/* Columns of a samples table, in the order samples_table fills them. */
enum { S_RUN, S_CASE, S_KEY, S_NAME, S_IMPL, S_PHASE, S_ITER, S_WARMUP, S_NS };

static void samples_columns(struct table *t)
{
	static const char *const names[] = {"run_id", "case_id", "case_key", "case_name", "impl",
					    "phase", "iter", "is_warmup", "ns"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		table_column(t, names[i], "", 0);
}

/* One case's stored samples (every phase and iteration, warm-up included) as a table. */
static int samples_table(struct db *db, const struct case_row *c, struct table *t,
			 struct bd_error *err)
{
	struct sample *s = NULL;
	size_t n = 0;
	char title[512];
	int rc = db_samples_get(db, c->id, &s, &n, err);
	if (rc)
		return rc;
	snprintf(title, sizeof(title), "run %lld case %lld: %s", (long long)c->run_id,
		 (long long)c->id, c->name);
	table_init(t, title);
	samples_columns(t);
	for (size_t i = 0; i < n; i++) {
		size_t r = table_row(t);
		table_number(t, r, S_RUN, (double)c->run_id);
		table_number(t, r, S_CASE, (double)c->id);
		table_text(t, r, S_KEY, c->case_key);
		table_text(t, r, S_NAME, c->name);
		table_text(t, r, S_IMPL, c->impl);
		table_text(t, r, S_PHASE, phase_name(s[i].phase));
		table_number(t, r, S_ITER, (double)s[i].iter);
		table_number(t, r, S_WARMUP, s[i].iter < c->warmup ? 1 : 0);
		table_number(t, r, S_NS, (double)s[i].ns);
	}
	free(s);
	return 0;
}

/* Columns of the stats table, in the order stats_rows fills them. */
enum {
	T_RUN, T_CASE, T_KEY, T_NAME, T_IMPL, T_STATUS, T_PHASE, T_N, T_MEAN, T_STD, T_MEDIAN,
	T_MIN, T_MAX, T_CV, T_P5, T_P95, T_STOP, T_INFO, T_CPU_WAIT, T_RSE, T_MARK
};

static void stats_columns(struct table *t)
{
	static const char *const text[] = {"run_id", "case_id", "case_key", "case_name", "impl",
					   "status", "phase", "n"};
	static const char *const in_ns[] = {"mean", "std", "median", "min", "max"};
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		table_column(t, text[i], "", 0);
	for (size_t i = 0; i < sizeof(in_ns) / sizeof(in_ns[0]); i++)
		table_column(t, in_ns[i], "ns", 0);
	table_column(t, "cv", "", 4);
	table_column(t, "p5", "ns", 0);
	table_column(t, "p95", "ns", 0);
	table_column(t, "stop_reason", "", 0);
	table_column(t, "impl_info", "", 0);
	table_column(t, "cpu_wait", "", 4);   /* cases.cpu_wait: the share waited for a CPU */
	table_column(t, "rse", "", 5);        /* the median's relative standard error (cases.rse) */
	table_column(t, "mark", "", 0);       /* contended / unstable (report.h case_mark) */
}

/* After the statistics: the parameters that name the cases (case_param_columns over every case
 * exported) and their memory in bytes. */
struct stats_params {
	char keys[64][PARAM_KEY_MAX];
	size_t nkeys, first;   /* the columns first .. first + nkeys - 1, then the memory's */
};
static const char *const memory_columns[] = {"peak_mem", "params_mem", "grads_mem", "optim_mem",
					     "activations_mem"};
#define MEMORY_COLUMNS (sizeof(memory_columns) / sizeof(memory_columns[0]))

static void stats_param_columns(struct table *t, struct stats_params *sp)
{
	sp->first = t->ncols;
	for (size_t k = 0; k < sp->nkeys; k++)
		table_column(t, sp->keys[k], "", 0);
	for (size_t k = 0; k < MEMORY_COLUMNS; k++)
		table_column(t, memory_columns[k], "bytes", 0);
}

/* Rows of one case: one per phase with samples, then "total" (the per-iteration sum of the
 * phases); a case without samples (not ok) gets one row with its status and n = 0. */
static void stats_rows(const struct case_row *c, const struct case_series *s,
		       const struct stats_params *sp, struct table *t)
{
	const int64_t memory[MEMORY_COLUMNS] = {c->peak_bytes, c->param_bytes, c->grad_bytes,
						c->optim_bytes, c->activation_bytes};
	struct case_mark mark;
	char mark_text[96];
	case_mark_of(c, s->total, s->ntotal, &mark);
	case_mark_text(&mark, mark_text, sizeof(mark_text));
	for (int p = 0; p <= PHASE_COUNT; p++) {
		size_t n;
		const double *x = case_series_pick(s, (enum series_pick)p, &n);
		int only_row = p == PHASE_COUNT && !s->phases;   /* the row of a case without samples */
		if (n == 0 && !only_row)
			continue;
		size_t r = table_row(t);
		table_number(t, r, T_RUN, (double)c->run_id);
		table_number(t, r, T_CASE, (double)c->id);
		table_text(t, r, T_KEY, c->case_key);
		table_text(t, r, T_NAME, c->name);
		table_text(t, r, T_IMPL, c->impl);
		table_text(t, r, T_STATUS, status_name(c->status));
		table_number(t, r, T_N, (double)n);
		if (c->stop_reason)
			table_text(t, r, T_STOP, c->stop_reason);
		if (c->impl_info)
			table_text(t, r, T_INFO, c->impl_info);
		char v[256];
		for (size_t k = 0; k < sp->nkeys; k++) {
			json_field(c->params_json, sp->keys[k], v, sizeof(v));
			if (v[0])
				table_text(t, r, sp->first + k, v);
		}
		for (size_t k = 0; k < MEMORY_COLUMNS; k++)
			if (memory[k] >= 0)
				table_number(t, r, sp->first + sp->nkeys + k, (double)memory[k]);
		if (mark.cpu_wait >= 0)
			table_number(t, r, T_CPU_WAIT, mark.cpu_wait);
		if (mark.rse >= 0)
			table_number(t, r, T_RSE, mark.rse);
		table_text(t, r, T_MARK, mark_text);
		if (n == 0)
			continue;
		table_text(t, r, T_PHASE, series_pick_names[p]);
		struct summary sum;
		summarize(x, n, &sum);
		table_number(t, r, T_MEAN, sum.mean);
		if (n > 1) {   /* no spread from one sample */
			table_number(t, r, T_STD, sum.std);
			table_number(t, r, T_CV, sum.cv);
		}
		table_number(t, r, T_MEDIAN, sum.median);
		table_number(t, r, T_MIN, sum.min);
		table_number(t, r, T_MAX, sum.max);
		double p5, p95;
		quantiles(x, n, 0.05, 0.95, &p5, &p95);   /* n > 0: no error */
		table_number(t, r, T_P5, p5);
		table_number(t, r, T_P95, p95);
	}
}

/* Write out to path (whole or not at all: the old file kept on failure), or to stdout when path
 * is NULL; prints what failed. Stored text goes out exact, but to a terminal with its control
 * characters escaped (escape_controls): a case name's escape sequence is not run by it. */
static int write_output(const char *path, const struct strbuf *out)
{
	int bad;
	if (path) {
		bad = file_replace(path, sb_str(out), out->len) != 0;
	} else if (isatty(STDOUT_FILENO)) {
		char *shown = escape_controls(sb_str(out));
		bad = fputs(shown, stdout) == EOF || fflush(stdout) != 0;
		free(shown);
	} else {
		bad = fwrite(sb_str(out), 1, out->len, stdout) != out->len || fflush(stdout) != 0;
	}
	if (bad) {
		fprintf(stderr, "report export: cannot write '%s': %s\n", path ? path : "standard output",
			strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Whether path is an SQLite database (its header): the database exported, or another. An export
 * written over it would lose every run it holds. Only a regular file is read: opening a FIFO or
 * a terminal (-o /dev/stdout) to read would wait for a writer or for input, for ever. */
static int is_sqlite_file(const char *path)
{
	static const char header[16] = "SQLite format 3";   /* and its NUL */
	char head[sizeof(header)];
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	FILE *f = fopen(path, "rb");
	int yes = f && fread(head, 1, sizeof(head), f) == sizeof(head) &&
		  !memcmp(head, header, sizeof(header));
	if (f)
		fclose(f);
	return yes;
}

int cmd_export(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *what_text = "samples", *out_path = NULL;
	o.run_sel = "all";
	const struct opt_spec specs[] = {
		{"what", 0, OPT_STRING, "WHAT", "samples (default: every stored sample) or stats",
		 &what_text},
		REPORT_OPT_RUN(&o, "one run: id, uuid prefix, label, git commit, latest (default: all "
				   "runs)"),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_FORMAT(&o, FORMAT_DATA),
		{"output", 'o', OPT_STRING, "FILE", "write to FILE instead of standard output", &out_path},
		REPORT_OPT_DB(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "export", "[--what samples|stats] [options]",
		"Export stored data for other tools, numbers unrounded. samples: one row per stored\n"
		"sample, warm-up iterations included (run_id, case_id, case_key, case_name, impl, phase,\n"
		"iter, is_warmup, ns). stats: one row per case and phase plus the per-iteration total,\n"
		"over the measured iterations: n, mean, std, median, min, max, cv, p5, p95 in ns, then\n"
		"stop_reason (what ended the measurement: iters, precision, max_time, max_iters),\n"
		"impl_info (a JSON object of what ran: engine, library versions; blank when none),\n"
		"cpu_wait (the share of the measured time the case waited for a CPU), rse (the median's\n"
		"estimated relative standard error), mark (contended above 5% cpu_wait, unstable above\n"
		"2.5% rse; blank when neither), the case's parameters (batch_size, seq_len, head_dim,\n"
		"...; a peer's own too) and its memory in bytes (peak, parameters, gradients, optimizer\n"
		"state, activations). CSV has one header; JSON is one array of tables (samples: one\n"
		"table per case)."};
	struct db *db = NULL;
	struct case_set set = {0};
	struct run_row *runs = NULL;
	struct table t = {0};
	struct stats_params *sp = NULL;
	struct strbuf out = STRBUF_INIT;
	struct bd_error err, filter_err = {0};
	size_t nruns = 0, nrendered = 0;
	int64_t run_id = 0;
	int npos, fmt, filter_ok = 0;
	enum export_what what;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if (!strcmp(what_text, "samples"))
		what = EXPORT_SAMPLES;
	else if (!strcmp(what_text, "stats"))
		what = EXPORT_STATS;
	else {
		fprintf(stderr, "report export: unknown --what '%s' (valid: samples, stats)\n", what_text);
		return EXIT_USAGE;
	}
	if ((fmt = report_format_arg(o.format, FORMAT_DATA)) < 0)
		return EXIT_USAGE;
	if (!format_is((enum report_format)fmt, FORMAT_DATA)) {
		struct strbuf valid = STRBUF_INIT;
		format_list(FORMAT_DATA, &valid);
		fprintf(stderr, "report export: format '%s' is for reading, not for export (valid: %s; "
				"`report table --format %s` gives a run's tables)\n",
			o.format, sb_str(&valid), o.format);
		sb_free(&valid);
		return EXIT_USAGE;
	}
	if (out_path && is_sqlite_file(out_path)) {
		fprintf(stderr, "report export: '%s' is an SQLite database%s: not overwritten with the "
				"export (give -o another file)\n", out_path,
			file_same(out_path, o.db_path) ? " (the one exported)" : "");
		return EXIT_USAGE;
	}
	int all = !strcmp(o.run_sel, "all");
	if ((status = report_open(o.db_path, all ? NULL : o.run_sel, &db, &run_id)) >= 0)
		goto done;
	status = EXIT_OK;
	if (all) {
		if (db_runs_list(db, &runs, &nruns, &err)) {
			status = report_error(&err, EXIT_FAIL);
			goto done;
		}
	} else {
		runs = xcalloc(1, sizeof(*runs));
		runs[0].id = run_id;
		nruns = 1;
	}

	struct case_filter filter = report_filter(&o);
	render_begin((enum report_format)fmt, &out);
	if (what == EXPORT_STATS) {
		table_init(&t, all ? "statistics per case and phase"
				   : "statistics per case and phase of one run");
		stats_columns(&t);
		/* the parameter columns: of every case exported, read first without the samples */
		sp = xcalloc(1, sizeof(*sp));
		struct case_filter rows_only = filter;
		rows_only.rows_only = 1;
		for (size_t i = 0; i < nruns; i++) {
			if (case_set_load(db, runs[i].id, &rows_only, &set, &err))
				continue;   /* the loop below says why */
			const struct case_row **rows = xcalloc(set.n + 1, sizeof(*rows));
			for (size_t c = 0; c < set.n; c++)
				rows[c] = &set.rows[c];
			char keys[64][PARAM_KEY_MAX];
			size_t m = case_param_columns(rows, set.n, keys, 64);
			for (size_t k = 0; k < m; k++) {
				size_t j = 0;
				while (j < sp->nkeys && strcmp(sp->keys[j], keys[k]))
					j++;
				if (j == sp->nkeys && sp->nkeys < 64)
					memcpy(sp->keys[sp->nkeys++], keys[k], PARAM_KEY_MAX);
			}
			free(rows);
			case_set_free(&set);
		}
		stats_param_columns(&t, sp);
	}
	for (size_t i = 0; i < nruns; i++) {
		/* Across all runs, a --where key that one run's cases lack only means none of them
		 * matches; it is an error when no run has it (or the filter is malformed). */
		if (case_set_load(db, runs[i].id, &filter, &set, &err)) {
			if (err.code != BD_EINVAL || !all) {
				status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL);
				goto done;
			}
			if (!filter_err.code)
				filter_err = err;
			continue;
		}
		filter_ok = 1;
		for (size_t c = 0; c < set.n; c++) {
			if (what == EXPORT_STATS) {
				stats_rows(&set.rows[c], &set.series[c], sp, &t);
				continue;
			}
			struct table cs;
			if (samples_table(db, &set.rows[c], &cs, &err)) {
				status = report_error(&err, EXIT_FAIL);
				goto done;
			}
			if (cs.nrows == 0) {
				table_free(&cs);
				continue;
			}
			/* every case's samples continue the first table where the format can */
			if (nrendered)
				render_rows(&cs, (enum report_format)fmt, &out);
			else
				render_table(&cs, (enum report_format)fmt, &out);
			nrendered++;
			table_free(&cs);
		}
		case_set_free(&set);
	}
	if (!filter_ok && filter_err.code) {
		status = report_error(&filter_err, EXIT_USAGE);
		goto done;
	}
	if (what == EXPORT_STATS) {
		table_note(&t, "over the measured iterations (warm-up excluded); total: the per-iteration "
			       "sum of the phases; std: sample (n - 1), none (and no cv) from one sample; "
			       "p5, p95: linear interpolation between order statistics; a case without "
			       "samples (not ok) has n = 0");
		render_table(&t, (enum report_format)fmt, &out);
	} else if (nrendered == 0) {
		/* nothing matched: still one table, so that CSV has its header and JSON one element */
		table_init(&t, "no samples");
		samples_columns(&t);
		render_table(&t, (enum report_format)fmt, &out);
	}
	render_end((enum report_format)fmt, &out);
	status = write_output(out_path, &out);
done:
	free(sp);
	table_free(&t);
	sb_free(&out);
	case_set_free(&set);
	db_run_rows_free(runs, nruns);
	db_close(db);
	return status;
}
