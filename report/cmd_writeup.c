/* report/cmd_writeup.c: `report writeup -o DIR` — DIR/README.md, a markdown document about one
 * run that a student can read as it is or paste into a course report: provenance (system, build,
 * git, the exact sweep text and command line), the tables of `report table`, `report warmup` and
 * `report compare`, the e2e tables per device and dtype with a float32 vs bfloat16 comparison,
 * the cases that did not run and why, the commands that reproduce it, and the charts of
 * `report plot` beside it (DIR/KIND.png and .svg). Everything comes from the stored database.
 *
 * Without gnuplot the document is still written and says that, and why, its charts were skipped;
 * a chart gnuplot fails on is likewise named in the document and on stderr, never fatal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "escape.h"
#include "opt.h"
#include "params.h"
#include "plot.h"
#include "report.h"
#include "shape.h"
#include "xalloc.h"

#define BYTES_PER_GIB (1024.0 * 1024.0 * 1024.0)
#define BYTES_PER_MIB (1024.0 * 1024.0)

/* What every section reads, and the document being built. */
struct writeup {
	struct db *db;
	const char *db_path, *dir, *baseline;
	int baseline_given;
	struct run_row run;
	struct sysinfo si;
	char *sweep_text;
	struct run_identity id;        /* its env: the variables and thread count it ran under */
	struct case_set set;           /* every case of the run */
	struct verdict_rule rule;      /* the defaults: writeup has no options for them */
	struct strbuf doc;
	int charts;                    /* gnuplot is there (until it turns out not to be) */
	char charts_skipped[1024];     /* why not, when !charts */
	struct strbuf written;         /* chart files written, one path a line */
	unsigned drawn;                /* 1 << kind for each chart written */
	const struct prices *prices;   /* --price / --prices; NULL: no cost section */
};

static int is_ok(const struct case_row *c) { return c->status == STATUS_OK; }

/* "2026-01-02T00:00:00.000Z" as "2026-01-02 00:00 UTC"; other text as it is. */
static void human_time(const char *iso, char *out, size_t n)
{
	if (iso && strlen(iso) >= 16 && iso[10] == 'T')
		snprintf(out, n, "%.10s %.5s UTC", iso, iso + 11);
	else
		snprintf(out, n, "%s", iso && *iso ? iso : "unknown");
}

/* A fenced code block around text, the fence longer than any backtick run inside it. */
static void add_fenced(struct strbuf *doc, const char *lang, const char *text)
{
	size_t longest = 0, run = 0;
	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t fence = longest >= 3 ? longest + 1 : 3;
	for (size_t i = 0; i < fence; i++)
		sb_addc(doc, '`');
	sb_addf(doc, "%s\n%s", lang, text);
	if (!*text || text[strlen(text) - 1] != '\n')
		sb_addc(doc, '\n');
	for (size_t i = 0; i < fence; i++)
		sb_addc(doc, '`');
	sb_add(doc, "\n\n");
}

/* s for a POSIX shell: as it is when it is plain, else in single quotes. */
static void add_shell_word(struct strbuf *sb, const char *s)
{
	int plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:+,@%",
			       *p) != NULL;
	if (plain) {
		sb_add(sb, s);
		return;
	}
	sb_addc(sb, '\'');
	for (const char *p = s; *p; p++)
		if (*p == '\'')
			sb_add(sb, "'\\''");
		else
			sb_addc(sb, *p);
	sb_addc(sb, '\'');
}

/* Inline code of s, whatever it holds: between backtick runs longer than any inside it (and a
 * space, which CommonMark strips, where s has a backtick); a line break as \n, which would
 * otherwise end a list item or, twice, the paragraph. */
static void add_code(struct strbuf *doc, const char *s)
{
	size_t longest = 0, run = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		sb_addc(doc, '`');
	if (longest)
		sb_addc(doc, ' ');
	sb_add_inline(doc, s, 0);
	if (longest)
		sb_addc(doc, ' ');
	for (size_t i = 0; i <= longest; i++)
		sb_addc(doc, '`');
}

/* ---- charts --------------------------------------------------------------------------------- */

/* Draw chart kind into w->dir and embed it, or say why it is not there. Notes from the chart go
 * under it in italics. */
static void add_chart_of(struct writeup *w, enum chart_kind kind, const struct case_set *set,
			 const char *alt)
{
	const char *name = chart_kind_names[kind];
	if (!w->charts) {
		sb_addf(&w->doc, "_Chart `%s.png` skipped: %s._\n\n", name, w->charts_skipped);
		return;
	}
	struct strbuf notes = STRBUF_INIT;
	struct bd_error err;
	struct chart_request rq = {
		.kind = kind, .dir = w->dir, .run_id = w->run.id, .set = set,
		.baseline = w->baseline, .pick = PICK_TOTAL,
		.gaps_counted = 1,   /* the cases that did not run have their own section */
	};
	int rc = chart_write(w->db, &rq, &notes, &err);
	if (rc == BD_ENOTFOUND) {
		/* gnuplot went missing: every chart from here on is skipped for the same reason. */
		w->charts = 0;
		snprintf(w->charts_skipped, sizeof(w->charts_skipped), "%s", err.msg);
		sb_addf(&w->doc, "_Chart `%s.png` skipped: %s._\n\n", name, w->charts_skipped);
	} else if (rc) {
		fprintf(stderr, "report writeup: %s chart not drawn: %s\n", name, err.msg);
		sb_addf(&w->doc, "_Chart `%s.png` not drawn: %s._\n\n", name, err.msg);
	} else {
		sb_addf(&w->doc, "![%s](%s.png)\n\n", alt, name);
		sb_addf(&w->written, "%s/%s.png\n%s/%s.svg\n", w->dir, name, w->dir, name);
		w->drawn |= 1u << kind;
		const char *line = sb_str(&notes);
		while (*line) {
			size_t len = strcspn(line, "\n");
			sb_addf(&w->doc, "- _%.*s_\n", (int)len, line);
			line += len + (line[len] == '\n');
		}
		sb_addf(&w->doc, "%s([SVG](%s.svg))\n\n", notes.len ? "\n" : "", name);
	}
	sb_free(&notes);
}

static void add_chart(struct writeup *w, enum chart_kind kind, const char *alt)
{
	add_chart_of(w, kind, &w->set, alt);
}

/* ---- sections ------------------------------------------------------------------------------- */

static void section_title(struct writeup *w, const char *command)
{
	const struct run_row *r = &w->run;
	char started[64], now_iso[32], now[64];
	db_now(now_iso);
	human_time(now_iso, now, sizeof(now));
	human_time(r->started_at, started, sizeof(started));
	/* the sweep's name and the host's are stored text: a line break in either would end the
	 * heading or the paragraph and start markdown of its own */
	sb_add(&w->doc, "# Benchmark report: ");
	sb_add_inline(&w->doc, r->sweep_name ? r->sweep_name : "unnamed sweep", 0);
	sb_addf(&w->doc, "\n\nRun %lld of ", (long long)r->id);
	add_code(&w->doc, r->sweep_path ? r->sweep_path : "(sweep file not recorded)");
	sb_add(&w->doc, " on ");
	sb_add_inline(&w->doc, r->hostname ? r->hostname : "an unknown host", 0);
	sb_addf(&w->doc, ", started %s", started);
	if (r->ended_at) {
		char ended[64];
		human_time(r->ended_at, ended, sizeof(ended));
		sb_addf(&w->doc, ", ended %s", ended);
	}
	sb_addf(&w->doc, " (%s): %lld cases, %lld ok.\n\n", r->status, (long long)r->ncases,
		(long long)r->nok);
	sb_addf(&w->doc, "Written %s by ", now);
	add_code(&w->doc, command);
	sb_add(&w->doc, " from the database ");
	add_code(&w->doc, w->db_path);
	sb_add(&w->doc, "; every number and chart below comes from the samples stored there.");
	if (!w->charts)
		sb_addf(&w->doc, " Charts were skipped: %s.", w->charts_skipped);
	sb_add(&w->doc, "\n\n");
}

static void kv_row(struct table *t, const char *key, const char *value)
{
	size_t r = table_row(t);
	table_text(t, r, 0, key);
	table_text(t, r, 1, value && *value ? value : "not recorded");
}

static void section_provenance(struct writeup *w)
{
	const struct run_row *r = &w->run;
	const struct sysinfo *si = &w->si;
	struct strbuf v = STRBUF_INIT;
	struct table t;
	sb_add(&w->doc, "## Provenance\n\n");
	table_init(&t, "System");
	table_column(&t, "component", "", 0);
	table_column(&t, "details", "", 0);
	kv_row(&t, "host", si->hostname);
	sb_addf(&v, "%s%s%s%s%s", si->os, si->kernel[0] ? ", " : "", si->kernel, si->arch[0] ? ", " : "",
		si->arch);
	kv_row(&t, "OS", sb_str(&v));
	sb_reset(&v);
	if (si->cpu_model[0] || si->cpu_cores)
		sb_addf(&v, "%s, %d cores, %d threads", si->cpu_model[0] ? si->cpu_model : "unknown model",
			si->cpu_cores, si->cpu_threads);
	kv_row(&t, "CPU", sb_str(&v));
	if (si->cpu_flags[0])
		kv_row(&t, "CPU flags", si->cpu_flags);
	sb_reset(&v);
	if (si->mem_bytes > 0)
		sb_addf(&v, "%.1f GiB", (double)si->mem_bytes / BYTES_PER_GIB);
	kv_row(&t, "memory", sb_str(&v));
	sb_reset(&v);
	if (si->gpu_count > 0 || si->gpu_name[0]) {
		sb_addf(&v, "%d x %s", si->gpu_count > 0 ? si->gpu_count : 1,
			si->gpu_name[0] ? si->gpu_name : "unknown GPU");
		if (si->gpu_mem_bytes > 0)
			sb_addf(&v, ", %.1f GiB", (double)si->gpu_mem_bytes / BYTES_PER_GIB);
		if (si->gpu_sm_count > 0)
			sb_addf(&v, ", %d SMs", si->gpu_sm_count);
		if (si->gpu_cc[0])
			sb_addf(&v, ", compute capability %s", si->gpu_cc);
		if (si->gpu_clock_mhz > 0)
			sb_addf(&v, ", %d MHz (memory %d MHz)", si->gpu_clock_mhz, si->gpu_mem_clock_mhz);
		kv_row(&t, "GPU", sb_str(&v));
		sb_reset(&v);
		sb_addf(&v, "driver %s, CUDA runtime %s, cuDNN %s, cuBLAS %s",
			si->driver_version[0] ? si->driver_version : "?",
			si->cuda_runtime[0] ? si->cuda_runtime : "?",
			si->cudnn_version[0] ? si->cudnn_version : "?",
			si->cublas_version[0] ? si->cublas_version : "?");
		kv_row(&t, "GPU software", sb_str(&v));
	} else {
		kv_row(&t, "GPU", "none visible to the runner");
	}
	kv_row(&t, "BLAS", si->blas);
	kv_row(&t, "compiler", si->compiler);
	kv_row(&t, "build flags", si->build_flags);
	render_table(&t, FORMAT_MD, &w->doc);
	table_free(&t);

	sb_add(&w->doc, "### Source and run\n\n");
	if (r->git_commit) {   /* a branch name may hold a backtick */
		sb_add(&w->doc, "- git commit ");
		add_code(&w->doc, r->git_commit);
		sb_addf(&w->doc, "%s, branch ", r->git_dirty == 1   ? " with uncommitted changes (dirty)"
						 : r->git_dirty == 0 ? " (clean)"
								     : " (dirty state unknown)");
		add_code(&w->doc, r->git_branch ? r->git_branch : "unknown");
		sb_addc(&w->doc, '\n');
	} else {
		sb_add(&w->doc, "- git commit unknown (the runner was built outside a git checkout)\n");
	}
	/* what the system table cannot say: the threads and ISA caps this run had */
	sb_add(&w->doc, "- environment (the variables that change what is measured, and the OpenMP "
		   "threads): ");
	if (w->id.env)
		add_code(&w->doc, w->id.env);
	else
		sb_add(&w->doc, "not recorded");
	sb_addc(&w->doc, '\n');
	sb_add(&w->doc, "- runner version ");
	add_code(&w->doc, r->tool_version ? r->tool_version : "unknown");
	sb_add(&w->doc, "\n- run uuid ");
	add_code(&w->doc, r->uuid);
	if (r->label) {
		sb_add(&w->doc, ", label ");
		add_code(&w->doc, r->label);
	}
	sb_add(&w->doc, ", status ");
	sb_add_inline(&w->doc, r->status, 0);
	sb_addc(&w->doc, '\n');
	sb_add(&w->doc, "- command line:\n\n");
	add_fenced(&w->doc, "sh", r->command_line ? r->command_line : "(not recorded)");

	sb_add(&w->doc, "### Sweep\n\n");
	add_code(&w->doc, r->sweep_path ? r->sweep_path : "(path not recorded)");
	sb_add(&w->doc, ", sha256 ");
	add_code(&w->doc, r->sweep_hash ? r->sweep_hash : "unknown");
	sb_add(&w->doc, ", exactly as run:\n\n");
	add_fenced(&w->doc, "yaml", w->sweep_text ? w->sweep_text : "# (sweep text not recorded)");
	sb_free(&v);
}

/* table_of_cases for the cases of w->set at idx[0..n-1], retitled when title is not NULL. */
static int add_cases_table(struct writeup *w, const char *suite, const size_t *idx, size_t n,
			   const char *title, struct bd_error *err)
{
	struct case_row *rows = xcalloc(n, sizeof(*rows));
	struct table t = {0};
	for (size_t i = 0; i < n; i++)
		rows[i] = w->set.rows[idx[i]];   /* shallow: the strings stay owned by the set */
	int rc = table_of_cases(w->db, suite, rows, n, 0, &t, err);
	if (!rc && title) {
		free(t.title);
		t.title = xstrdup(title);
	}
	if (!rc)
		render_table(&t, FORMAT_MD, &w->doc);
	table_free(&t);
	free(rows);
	return rc;
}

/* Indices of the cases of suite (NULL: all) whose params have field == value (field NULL: any),
 * in order; *n of them. */
static size_t *cases_where(const struct writeup *w, const char *suite, const char *field,
			   const char *value, size_t *n)
{
	size_t *idx = xcalloc(w->set.n, sizeof(*idx));
	*n = 0;
	for (size_t i = 0; i < w->set.n; i++) {
		const struct case_row *c = &w->set.rows[i];
		char v[256];
		if (suite && strcmp(c->suite, suite))
			continue;
		if (field) {
			json_field(c->params_json, field, v, sizeof(v));
			if (strcmp(v, value))
				continue;
		}
		idx[(*n)++] = i;
	}
	return idx;
}

static int has_suite(const struct writeup *w, enum suite_id suite)
{
	for (size_t i = 0; i < w->set.n; i++)
		if (suite_is(w->set.rows[i].suite, suite))
			return 1;
	return 0;
}

/* Whether the figures below can be taken at face value: the cases measured under contention and
 * the unstable ones (report.h case_mark), named; the tables mark them, the charts ring them. */
static void section_conditions(struct writeup *w)
{
	size_t nok = 0, nknown = 0, ncontended = 0, nunstable = 0;
	double worst = 0;
	struct strbuf list = STRBUF_INIT;
	for (size_t i = 0; i < w->set.n; i++) {
		const struct case_row *c = &w->set.rows[i];
		if (!is_ok(c))
			continue;
		struct case_mark m;
		case_mark_of(c, w->set.series[i].total, w->set.series[i].ntotal, &m);
		nok++;
		nknown += m.cpu_wait >= 0;
		worst = m.cpu_wait > worst ? m.cpu_wait : worst;
		ncontended += (m.bits & CASE_MARK_CONTENDED) != 0;
		nunstable += (m.bits & CASE_MARK_UNSTABLE) != 0;
		if (m.bits) {
			char text[96];
			case_mark_text(&m, text, sizeof(text));
			sb_add(&list, "- ");   /* stored text: a line break or markdown of its own */
			add_code(&list, c->name ? c->name : "");
			sb_addf(&list, ": %s\n", text);
		}
	}
	if (!nok) {
		sb_free(&list);
		return;
	}
	sb_add(&w->doc, "## Measurement conditions\n\n");
	if (ncontended)
		sb_addf(&w->doc, "**%zu of %zu ok cases were measured under contention**: they waited for "
				 "a CPU more than %d%% of their measured time (up to %.0f%%), so their times "
				 "include that wait and depend on what else the machine ran, not only on the "
				 "code. Compare them with care, or rerun on a quiet machine, with fewer "
				 "threads, or with `runner run --repeat N`. ",
			ncontended, nok, REPORT_CPU_WAIT_LEVEL_PCT, 100 * worst);
	if (nunstable)
		sb_addf(&w->doc, "**%zu case%s unstable**: the median's relative standard error within "
				 "the run is above %.3g%%, so the figure is uncertain by more than +-%.3g%%. ",
			nunstable, nunstable == 1 ? " is" : "s are", (double)REPORT_UNSTABLE_RSE_PCT,
			2 * REPORT_UNSTABLE_RSE_PCT);
	if (ncontended || nunstable)
		sb_addf(&w->doc, "The tables mark these cases in their `mark` column and the charts ring "
				 "them:\n\n%s\n", sb_str(&list));
	else if (nknown == nok)
		sb_addf(&w->doc, "No case waited for a CPU more than %d%% of its measured time (the "
				 "most: %.1f%%), and no median's relative standard error within the run is "
				 "above %.3g%%.\n\n",
			REPORT_CPU_WAIT_LEVEL_PCT, 100 * worst, (double)REPORT_UNSTABLE_RSE_PCT);
	else
		sb_addf(&w->doc, "No median's relative standard error within the run is above %.3g%%. "
				 "%zu of %zu cases have no record of their wait for a CPU (peers, or a "
				 "database older than schema 9): contention cannot be ruled out for them.\n\n",
			(double)REPORT_UNSTABLE_RSE_PCT, nok - nknown, nok);
	sb_free(&list);
}

static int section_results(struct writeup *w, struct bd_error *err)
{
	sb_add(&w->doc, "## Results\n\n");
	size_t ne2e = 0;
	for (size_t i = 0; i < w->set.n; i++)
		ne2e += suite_is(w->set.rows[i].suite, SUITE_E2E);
	if (w->set.n == 0) {
		sb_add(&w->doc, "The run stored no cases.\n\n");
		return 0;
	}
	if (ne2e == w->set.n) {
		sb_add(&w->doc, "Every case of this run is an end-to-end model case: see the end-to-end "
				"section below, one table per device and dtype.\n\n");
		return 0;
	}
	sb_add(&w->doc, "One table per suite, as `report table` prints it: the mean and sample "
			"standard deviation of each timed phase over the measured iterations (warm-up "
			"iterations excluded), the achieved GFLOP/s where the workload states its FLOPs, "
			"and the peak memory.");
	if (ne2e)
		sb_add(&w->doc, " The end-to-end cases have their own section below, one table per "
				"device and dtype.");
	sb_add(&w->doc, "\n\n");
	int rc = 0;
	for (size_t i = 0; i < w->set.n && !rc; i++) {
		const char *suite = w->set.rows[i].suite;
		int seen = suite_is(suite, SUITE_E2E);
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(w->set.rows[j].suite, suite);
		if (seen)
			continue;
		size_t n;
		size_t *idx = cases_where(w, suite, NULL, NULL, &n);
		rc = add_cases_table(w, suite, idx, n, NULL, err);
		free(idx);
	}
	return rc;
}

static int section_warmup(struct writeup *w, struct bd_error *err)
{
	static const int ks[] = {0, 1, 2, 5};
	struct table t = {0};
	sb_add(&w->doc, "## Warm-up effect\n\n"
			"Every iteration is stored, warm-up ones included, so this is what the "
			"measurement would have given with k = 0, 1, 2 or 5 warm-up iterations (as "
			"`report warmup`): the mean and std of the measured number of iterations after the "
			"first k. A mean at k = 0 well above the one at k = 5 is the cost of timing "
			"without warm-up.\n\n");
	int rc = warmup_table(w->db, w->run.id, &w->set, ks, 4, PICK_TOTAL, REPORT_STEADY_BAND, &t,
			      err);
	if (!rc)
		render_table(&t, FORMAT_MD, &w->doc);
	table_free(&t);
	if (!rc && w->run.nok > 0)
		add_chart(w, CHART_WARMUP, "per-iteration time, warm-up included");
	return rc;
}

static void section_attention(struct writeup *w)
{
	size_t nok = 0;
	for (size_t i = 0; i < w->set.n; i++)
		nok += suite_is(w->set.rows[i].suite, SUITE_ATTENTION) && is_ok(&w->set.rows[i]);
	if (!has_suite(w, SUITE_ATTENTION))
		return;
	sb_add(&w->doc, "## Attention: time and memory vs sequence length\n\n");
	if (nok == 0) {
		sb_add(&w->doc, "No attention case ran (see the cases that did not run below).\n\n");
		return;
	}
	sb_add(&w->doc, "Median time per iteration (all phases) and peak memory against the sequence "
			"length, one line per implementation and any other parameter the sweep varies; "
			"both axes logarithmic. A case that did not run (out of memory, unsupported) is a "
			"gap in its line.\n\n");
	/* The attention cases alone (a view: rows and series stay owned by w->set). */
	struct case_set att = {0};
	att.rows = xcalloc(w->set.n, sizeof(*att.rows));
	att.series = xcalloc(w->set.n, sizeof(*att.series));
	for (size_t i = 0; i < w->set.n; i++)
		if (suite_is(w->set.rows[i].suite, SUITE_ATTENTION)) {
			att.rows[att.n] = w->set.rows[i];
			att.series[att.n++] = w->set.series[i];
		}
	add_chart_of(w, CHART_LATENCY, &att, "attention time vs sequence length");
	add_chart_of(w, CHART_MEMORY, &att, "attention peak memory vs sequence length");
	free(att.rows);
	free(att.series);
}

static void section_speedup(struct writeup *w)
{
	size_t nbase = 0;
	for (size_t i = 0; i < w->set.n; i++)
		nbase += !strcmp(w->set.rows[i].impl, w->baseline);
	if (nbase == 0)
		return;
	struct case_pair *pairs = NULL;
	size_t npairs = 0;
	struct table t = {0}, sum = {0};
	compare_match(&w->set, &w->set, w->baseline, PICK_TOTAL, &w->rule, &pairs, &npairs);
	sb_addf(&w->doc, "## Speedup vs %s\n\n", w->baseline);
	sb_addf(&w->doc, "Each case against the `%s` case that differs from it only in the "
			 "implementation (as `report compare --baseline %s`): speedup = median time of "
			 "%s / median time of the case, so above 1 is faster, with a 95%% bootstrap "
			 "confidence interval and the Mann-Whitney U p-value; then the summary per "
			 "implementation.\n\n",
		w->baseline, w->baseline, w->baseline);
	char title[256];
	snprintf(title, sizeof(title), "run %lld: speedup vs %s (%s)", (long long)w->run.id,
		 w->baseline, series_pick_names[PICK_TOTAL]);
	if (compare_tables(&w->set, pairs, npairs, title, 0, &w->rule, &t, &sum)) {
		render_table(&t, FORMAT_MD, &w->doc);
		render_table(&sum, FORMAT_MD, &w->doc);
		add_chart(w, CHART_SPEEDUP, "speedup vs baseline");
	} else {
		sb_addf(&w->doc, "Nothing to compare: no ok case has an ok `%s` partner.\n\n", w->baseline);
	}
	table_free(&t);
	table_free(&sum);
	free(pairs);
}

/* What the run cost, with a price per device-hour. */
static int section_cost(struct writeup *w, struct bd_error *err)
{
	if (!w->prices)
		return 0;
	struct table t = {0};
	sb_add(&w->doc, "## Cost\n\n"
			"What the cases cost at the given price per device-hour (as `report compare "
			"--price`/`--prices`): per 1,000 samples at the measured throughput, per case, "
			"and for the whole run.\n\n");
	int rc = cost_table(w->db, &w->set, w->prices, PICK_TOTAL, "cost", &t, err);
	if (!rc)
		render_table(&t, FORMAT_MD, &w->doc);
	table_free(&t);
	return rc;
}

/* float32 vs bfloat16 for every pair of ok e2e cases that differ only in dtype. */
static void add_mixed_precision(struct writeup *w)
{
	struct table t;
	table_init(&t, "mixed precision: float32 vs bfloat16");
	static const char *const params[] = {"model", "pass", "context_length", "batch_size", "device"};
	size_t col[5];
	for (size_t k = 0; k < 5; k++)
		col[k] = table_column(&t, params[k], "", 0);
	/* the model's parameter count, where the runner stored it (schema 4) */
	int counted = 0;
	for (size_t i = 0; i < w->set.n; i++)
		counted |= suite_is(w->set.rows[i].suite, SUITE_E2E) && w->set.rows[i].param_count > 0;
	size_t c_count = counted ? table_column(&t, "param count", "M", 1) : 0;
	size_t c_n = table_column(&t, "n", "", 0),
	       c_f = table_column(&t, "float32", "ms", 3), c_b = table_column(&t, "bfloat16", "ms", 3),
	       c_sp = table_column(&t, "speedup", "x", 2), c_lo = table_column(&t, "ci lo", "x", 2),
	       c_hi = table_column(&t, "ci hi", "x", 2),
	       c_mf = table_column(&t, "float32 peak", "MiB", 1),
	       c_mb = table_column(&t, "bfloat16 peak", "MiB", 1);
	size_t unpaired = 0;
	/* a case key measured twice in the run is one case: its first copy counts (the bfloat16
	 * side found below is the first too) */
	unsigned char *first = case_rows_first_of_key(w->set.rows, w->set.n);
	for (size_t i = 0; i < w->set.n; i++) {
		const struct case_row *f = &w->set.rows[i];
		if (!first[i] || !suite_is(f->suite, SUITE_E2E) || strcmp(f->dtype, "float32"))
			continue;
		char *want = case_key_without(f->case_key, "dtype");
		const struct case_row *b = NULL;
		size_t bi = 0;
		for (size_t j = 0; want && j < w->set.n && !b; j++) {
			const struct case_row *c = &w->set.rows[j];
			if (!suite_is(c->suite, SUITE_E2E) || strcmp(c->dtype, "bfloat16"))
				continue;
			char *have = case_key_without(c->case_key, "dtype");
			if (have && !strcmp(have, want)) {
				b = c;
				bi = j;
			}
			free(have);
		}
		free(want);
		if (!b)
			continue;
		if (!is_ok(f) || !is_ok(b)) {
			table_note(&t, "%s: float32 %s, bfloat16 %s", f->name, status_name(f->status), status_name(b->status));
			unpaired++;
			continue;
		}
		size_t nf, nb;
		const double *xf = case_series_pick(&w->set.series[i], PICK_TOTAL, &nf);
		const double *xb = case_series_pick(&w->set.series[bi], PICK_TOTAL, &nb);
		struct pair_result pr;
		if (compare_pair(xf, nf, xb, nb, &w->rule, &pr)) {
			unpaired++;
			continue;
		}
		size_t r = table_row(&t);
		char v[256];
		for (size_t k = 0; k < 5; k++) {
			json_field(f->params_json, params[k], v, sizeof(v));
			table_text(&t, r, col[k], v);
		}
		if (counted && f->param_count > 0)
			table_number(&t, r, c_count, (double)f->param_count / 1e6);
		snprintf(v, sizeof(v), "%zu/%zu", nf, nb);
		table_text(&t, r, c_n, v);
		table_number(&t, r, c_f, pr.base.median / 1e6);
		table_number(&t, r, c_b, pr.cand.median / 1e6);
		table_number(&t, r, c_sp, pr.speedup.ratio);
		if (nf > 1 && nb > 1) {   /* no interval from one sample */
			table_number(&t, r, c_lo, pr.speedup.lo);
			table_number(&t, r, c_hi, pr.speedup.hi);
		}
		if (f->peak_bytes >= 0)
			table_number(&t, r, c_mf, (double)f->peak_bytes / BYTES_PER_MIB);
		if (b->peak_bytes >= 0)
			table_number(&t, r, c_mb, (double)b->peak_bytes / BYTES_PER_MIB);
	}
	free(first);
	if (t.nrows == 0 && unpaired == 0) {
		table_free(&t);
		return;   /* the sweep did not ask for both precisions */
	}
	table_note(&t, "n: measured iterations, float32/bfloat16; medians of the per-iteration total; "
		       "speedup = float32 / bfloat16 (> 1: bfloat16 faster) with its 95%% bootstrap CI");
	render_table(&t, FORMAT_MD, &w->doc);
	table_free(&t);
}

/* `report table --layout coursework` of the run's e2e cases: as measured, and, where the cases
 * ran warm-up iterations, as if they had run none and one (from the stored iterations). */
static int add_coursework_tables(struct writeup *w, struct bd_error *err)
{
	const struct table_layout *l = table_layout_find("coursework");
	size_t n = 0, *idx = cases_where(w, l->suite, NULL, NULL, &n);
	int64_t warmup_min = INT64_MAX;
	struct case_row *rows = xcalloc(n + 1, sizeof(*rows));
	for (size_t i = 0; i < n; i++) {
		rows[i] = w->set.rows[idx[i]];   /* shallow: the strings stay owned by the set */
		warmup_min = rows[i].warmup < warmup_min ? rows[i].warmup : warmup_min;
	}
	free(idx);
	struct table_shape shape;
	int rc = table_shape_parse(l->columns, l->time_unit, 0, &shape, err);
	sb_add(&w->doc, "### The coursework's tables\n\n"
			"One row per model and context length (its forward+backward case), in seconds, "
			"a table per dtype, as `report table --layout coursework` prints them");
	sb_add(&w->doc, warmup_min > 0 && warmup_min != INT64_MAX
				? "; then the same with no warm-up and with one warm-up step, from the "
				  "stored iterations (`--warmup 0`, `--warmup 1`).\n\n"
				: ".\n\n");
	const int64_t variants[] = {TABLE_OWN_WARMUP, 0, 1};
	for (size_t v = 0; v < 3 && !rc; v++) {
		if (v && (warmup_min == INT64_MAX || variants[v] >= warmup_min))
			break;
		struct table *tables = NULL;
		size_t ntables = 0;
		const struct table_request rq = {
			.group_by = l->group_by, .prefer = l->prefer, .warmup = variants[v],
			.shape = &shape, .title = l->title, .titled = 1};
		rc = report_tables(w->db, rows, n, &rq, &tables, &ntables, err);
		for (size_t i = 0; i < ntables; i++) {
			if (!rc)
				render_table(&tables[i], FORMAT_MD, &w->doc);
			table_free(&tables[i]);
		}
		free(tables);
	}
	table_shape_free(&shape);
	free(rows);
	return rc;
}

static int section_e2e(struct writeup *w, struct bd_error *err)
{
	if (!has_suite(w, SUITE_E2E))
		return 0;
	sb_add(&w->doc, "## End-to-end model\n\n"
			"The whole language model per preset, context length and pass (forward, "
			"forward+backward, training step), one table per device and dtype; phases are "
			"timed separately.\n\n");
	int rc = 0;
	/* One table per (device, dtype), in order of first appearance. */
	for (size_t i = 0; i < w->set.n && !rc; i++) {
		const struct case_row *c = &w->set.rows[i];
		if (!suite_is(c->suite, SUITE_E2E))
			continue;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = suite_is(w->set.rows[j].suite, SUITE_E2E) &&
			       !strcmp(w->set.rows[j].device, c->device) &&
			       !strcmp(w->set.rows[j].dtype, c->dtype);
		if (seen)
			continue;
		size_t n = 0, *idx = xcalloc(w->set.n, sizeof(*idx));
		for (size_t j = i; j < w->set.n; j++)
			if (suite_is(w->set.rows[j].suite, SUITE_E2E) && !strcmp(w->set.rows[j].device, c->device) &&
			    !strcmp(w->set.rows[j].dtype, c->dtype))
				idx[n++] = j;
		char title[160];
		snprintf(title, sizeof(title), "e2e on %s, %s", c->device, c->dtype);
		rc = add_cases_table(w, suite_name(SUITE_E2E), idx, n, title, err);
		free(idx);
	}
	if (!rc)
		rc = add_coursework_tables(w, err);
	if (!rc)
		add_mixed_precision(w);
	return rc;
}

static void section_not_ok(struct writeup *w)
{
	size_t n = w->run.ncases - w->run.nok;
	/* a run cut short stored only the cases it reached: the others ran nowhere */
	int complete = w->run.status && !strcmp(w->run.status, "complete");
	sb_add(&w->doc, "## Cases that did not run\n\n");
	if (!complete) {
		sb_addf(&w->doc, "**The run is %s**: the cases of its sweep that it did not reach are "
				 "not stored, so they are not listed below (`runner run --resume %lld` runs "
				 "them into this run).", w->run.status ? w->run.status : "not complete",
			(long long)w->run.id);
		sb_add(&w->doc, n == 0 || w->set.n == 0 ? " " : "\n\n");
	}
	if (n == 0 || w->set.n == 0) {
		sb_addf(&w->doc, complete ? "None: all %lld cases ran and passed validation.\n\n"
					  : "All %lld cases it stored ran and passed validation.\n\n",
			(long long)w->run.ncases);
		return;
	}
	struct table t;
	table_init(&t, NULL);
	size_t c_case = table_column(&t, "case", "", 0), c_status = table_column(&t, "status", "", 0),
	       c_reason = table_column(&t, "reason", "", 0);
	for (size_t i = 0; i < w->set.n; i++) {
		const struct case_row *c = &w->set.rows[i];
		if (is_ok(c))
			continue;
		size_t r = table_row(&t);
		table_text(&t, r, c_case, c->name);
		table_text(&t, r, c_status, status_name(c->status));
		table_text(&t, r, c_reason, c->reason ? c->reason : "no reason stored");
	}
	sb_addf(&w->doc, "%zu of %lld cases %s no timings: out of memory (`oom`), not supported by "
			 "this build or device (`unsupported`), failed validation or crashed (`error`), "
			 "or skipped.\n\n", n, (long long)w->run.ncases, n == 1 ? "has" : "have");
	render_table(&t, FORMAT_MD, &w->doc);
	table_free(&t);
}

static void section_reproduce(struct writeup *w)
{
	struct strbuf cmds = STRBUF_INIT;
	const char *sweep = w->run.sweep_path ? w->run.sweep_path : "SWEEP.yaml";
	sb_add(&w->doc, "## Reproduce\n\n"
			"Run the sweep again (a new run in the database; save the sweep text above as the "
			"file if you do not have it), then write this report for the new run:\n\n");
	sb_add(&cmds, "runner run ");
	add_shell_word(&cmds, sweep);
	sb_add(&cmds, " --db ");
	add_shell_word(&cmds, w->db_path);
	sb_add(&cmds, "\nreport writeup --db ");
	add_shell_word(&cmds, w->db_path);
	sb_add(&cmds, " -o ");
	add_shell_word(&cmds, w->dir);
	sb_addc(&cmds, '\n');
	add_fenced(&w->doc, "sh", sb_str(&cmds));
	sb_reset(&cmds);
	sb_add(&w->doc, "This document, again, from the stored run:\n\n");
	sb_add(&cmds, "report writeup --db ");
	add_shell_word(&cmds, w->db_path);
	sb_addf(&cmds, " --run %s", w->run.uuid);
	if (strcmp(w->baseline, "naive")) {
		sb_add(&cmds, " --baseline ");
		add_shell_word(&cmds, w->baseline);
	}
	sb_add(&cmds, " -o ");
	add_shell_word(&cmds, w->dir);
	sb_addc(&cmds, '\n');
	add_fenced(&w->doc, "sh", sb_str(&cmds));
	sb_free(&cmds);
}

static void section_method(struct writeup *w)
{
	sb_addf(&w->doc,
		"## How the numbers were made\n\n"
		"- Each case ran its warm-up iterations, then its measured iterations; every "
		"iteration's time per phase (fwd, bwd, opt) is stored in nanoseconds. Only the "
		"warm-up section uses the warm-up iterations.\n"
		"- Tables: mean and sample standard deviation (n - 1) over the measured iterations; "
		"GFLOP/s = the workload's FLOPs per iteration / mean time.\n"
		"- Speedups: ratio of medians with a 95%% percentile bootstrap interval (%d "
		"resamples, fixed seed, so the same database gives the same numbers) and a two-sided "
		"Mann-Whitney U test; verdicts at a %.3g%% threshold and alpha %.3g; wins/losses "
		"beyond 1 ± %.3g%%.\n"
		"- Charts: medians with the distribution-free 95%% confidence interval of the median "
		"(order statistics) as error bars, except the speedup chart, whose bars are the "
		"bootstrap intervals above.\n\n",
		REPORT_BOOTSTRAP_RESAMPLES, 100 * w->rule.threshold, w->rule.alpha,
		100 * w->rule.tie_band);
}

/* ---- the command ---------------------------------------------------------------------------- */

/* Whole or not at all: a failed rewrite keeps the old file. */
static int write_file(const char *path, const struct strbuf *text, struct bd_error *err)
{
	if (file_replace(path, sb_str(text), text->len))
		return bd_fail(err, BD_EIO, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

int cmd_writeup(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	const char *dir = NULL, *baseline = NULL, *prices_path = NULL;
	const char *price = NULL;   /* --price: parsed by prices_load_options */
	struct prices *prices = NULL;
	const struct opt_spec specs[] = {
		{"output", 'o', OPT_STRING, "DIR", "directory for README.md and the charts (required)",
		 &dir},
		REPORT_OPT_DB(&o),
		REPORT_OPT_RUN(&o, "run (default latest)"),
		{"baseline", 'b', OPT_STRING, "IMPL",
		 "impl the speedups are against (default naive, when the run has it)", &baseline},
		REPORT_OPT_PRICE(&price),
		REPORT_OPT_PRICES(&prices_path),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "writeup", "-o DIR [options]",
		"Write DIR/README.md: a markdown document about one run — provenance (system, build,\n"
		"git, the sweep text and command line), the tables of `report table`, `report warmup`\n"
		"and `report compare`, e2e tables per device and dtype with float32 vs bfloat16, the\n"
		"cases that did not run and why, and the commands that reproduce it — with the\n"
		"latency, memory, speedup and warm-up charts beside it (when gnuplot is installed;\n"
		"otherwise the document says that the charts were skipped)."};
	struct writeup w = {.doc = STRBUF_INIT, .written = STRBUF_INIT, .rule = VERDICT_RULE_DEFAULT};
	struct strbuf command = STRBUF_INIT, path = STRBUF_INIT;
	struct bd_error err;
	int npos;
	/* The command as typed, for the document. */
	int nwords;
	char *const *words = cmd_line_words(cl, &nwords);
	sb_add(&command, "report");
	for (int i = 0; i < nwords; i++) {
		sb_addc(&command, ' ');
		add_shell_word(&command, words[i]);
	}
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		goto done;
	if (!dir) {
		fprintf(stderr, "report writeup: -o DIR is required (where README.md and the charts go)\n");
		status = EXIT_USAGE;
		goto done;
	}
	if ((status = prices_load_options(price, prices_path, "writeup", &prices)) >= 0)
		goto done;
	w.prices = prices;
	w.db_path = o.db_path;
	w.dir = dir;
	w.baseline = baseline ? baseline : "naive";
	w.baseline_given = baseline != NULL;
	if ((status = report_open(o.db_path, o.run_sel, &w.db, &w.run.id)) >= 0)
		goto done;
	status = EXIT_OK;
	int64_t run_id = w.run.id;
	struct case_filter all = {.suite = NULL};
	if (db_run_get(w.db, run_id, &w.run, &err) ||
	    db_system_get(w.db, w.run.system_id, &w.si, &err) ||
	    db_run_sweep_text(w.db, run_id, &w.sweep_text, &err) ||
	    db_run_identity_get(w.db, run_id, &w.id, &err) ||
	    case_set_load(w.db, run_id, &all, &w.set, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	if (w.baseline_given) {
		int known = 0;
		for (size_t i = 0; i < w.set.n && !known; i++)
			known = !strcmp(w.set.rows[i].impl, w.baseline);
		if (!known) {
			fprintf(stderr, "report writeup: no case of run %lld has impl '%s' to compare "
					"against\n", (long long)run_id, w.baseline);
			status = EXIT_USAGE;
			goto done;
		}
	}
	if (output_dir_make(dir, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	w.charts = plot_available();
	if (!w.charts)
		snprintf(w.charts_skipped, sizeof(w.charts_skipped), "gnuplot is not installed: install "
			 "gnuplot-nox (Debian/Ubuntu) to get charts");

	section_title(&w, sb_str(&command));
	section_provenance(&w);
	section_conditions(&w);
	if (section_results(&w, &err) || section_warmup(&w, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	section_attention(&w);
	section_speedup(&w);
	if (section_e2e(&w, &err) || section_cost(&w, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	section_not_ok(&w);
	section_reproduce(&w);
	section_method(&w);

	sb_addf(&path, "%s/README.md", dir);
	if (write_file(sb_str(&path), &w.doc, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	/* the charts an earlier writeup drew into dir and this one did not (no gnuplot, another
	 * run): the document does not show them, so they go rather than sit beside it */
	static const enum chart_kind kinds[] = {CHART_WARMUP, CHART_LATENCY, CHART_MEMORY,
						CHART_SPEEDUP};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (int svg = 0; svg < 2 && !(w.drawn & (1u << kinds[k])); svg++) {
			sb_reset(&path);
			sb_addf(&path, "%s/%s.%s", dir, chart_kind_names[kinds[k]], svg ? "svg" : "png");
			if (unlink(sb_str(&path)) == 0) {
				printf("removed %s (an earlier writeup's chart)\n", sb_str(&path));
			} else if (errno != ENOENT) {
				fprintf(stderr, "report writeup: cannot remove the earlier chart '%s': %s\n",
					sb_str(&path), strerror(errno));
				status = EXIT_FAIL;
				goto done;
			}
		}
	}
	sb_reset(&path);
	sb_addf(&path, "%s/README.md", dir);
	printf("wrote %s\n", sb_str(&path));
	const char *line = sb_str(&w.written);
	while (*line) {
		size_t len = strcspn(line, "\n");
		printf("wrote %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
	if (!w.charts)
		printf("charts skipped: %s\n", w.charts_skipped);
done:
	sb_free(&command);
	sb_free(&path);
	sb_free(&w.doc);
	sb_free(&w.written);
	free(w.sweep_text);
	db_run_identity_clear(&w.id);
	case_set_free(&w.set);
	db_run_row_clear(&w.run);
	db_close(w.db);
	prices_free(prices);
	return status;
}
