/* report/cmd_site.c: `report site -o DIR` — the database as a static web site: plain HTML files and
 * charts in one folder, no server, no script, nothing fetched from elsewhere when it is viewed, so
 * it opens from the file system and from any static host (a CI artifact, GitHub Pages):
 *
 *   index.html           the change-point verdict of every case, the cases with links to their
 *                        history, the newest runs, the newest run's tables, the compare pages,
 *                        and every case's history as small multiples
 *   runs.html            every run the filter keeps
 *   run-ID.html          a run: what ran where, its tables and its latency chart (the newest
 *                        SITE_RUN_PAGES runs)
 *   case-K.html          one case on one host across the runs: the chart with its run-to-run band
 *                        and change points, the change points, and every run
 *   compare-A-B.html     per label, its newest run against the one before (by case key)
 *   charts/              the charts, SVG and PNG (gnuplot; without it the pages say so)
 *
 * Into the folder of an earlier site, the pages and charts of these names that this one did not
 * write are removed at the end (site_prune). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "html.h"
#include "opt.h"
#include "plot.h"
#include "report.h"
#include "xalloc.h"

#define SITE_RUN_PAGES 50       /* runs with a page of their own, newest first */
#define SITE_RUNS_ON_INDEX 15

struct site {
	const char *dir;
	struct db *db;
	const struct history_set *hs;
	const struct run_row **runs;    /* the runs the filter keeps, oldest first */
	size_t nruns;
	int64_t *paged;                 /* ids of the runs with a page */
	size_t npaged;
	int charts;                     /* gnuplot is there */
	enum series_pick pick;
	const struct verdict_rule *rule;
	size_t files;                   /* pages and charts written */
	struct strbuf written;          /* their paths under dir, "\n" before and after each */
	size_t charts_failed;           /* charts gnuplot could not draw (chart_failed) */
};

/* A chart that gnuplot failed to draw (it crashed, reported an error, a full disk): the page
 * says why; this says so on stderr too and counts it for the summary. A chart with nothing to
 * draw (BD_EINVAL) is no failure. */
static void chart_failed(struct site *site, int rc, const struct bd_error *cerr)
{
	if (rc == BD_EINVAL)
		return;
	fprintf(stderr, "report site: chart not drawn: %s\n", cerr->msg);
	site->charts_failed++;
}

/* Write text to DIR/name, whole or not at all (a failed rewrite keeps the old page); BD_EIO with
 * the path and errno's text when it cannot be written. */
static int page_write(struct site *site, const char *name, const struct strbuf *text,
		      struct bd_error *err)
{
	struct strbuf path = STRBUF_INIT;
	sb_addf(&path, "%s/%s", site->dir, name);
	int rc = 0;
	if (file_replace(sb_str(&path), sb_str(text), text->len))
		rc = bd_fail(err, BD_EIO, "cannot write '%s': %s", sb_str(&path), strerror(errno));
	sb_free(&path);
	site->files += !rc;
	if (!rc)
		sb_addf(&site->written, "%s\n", name);
	return rc;
}

/* A chart drawn as DIR/charts/BASE.svg and .png. */
static void chart_wrote(struct site *site, const char *base)
{
	site->files++;
	sb_addf(&site->written, "charts/%s.svg\ncharts/%s.png\n", base, base);
}

static int site_wrote(const struct site *site, const char *rel)
{
	const char *w = sb_str(&site->written);
	size_t n = strlen(rel);
	for (const char *at = strstr(w, rel); at; at = strstr(at + 1, rel))
		if (at[-1] == '\n' && at[n] == '\n')
			return 1;
	return 0;
}

/* Whether name is PREFIX, digits, SUFFIX (for compare pages: digits-digits). */
static int site_name_is(const char *name, const char *prefix, int pair, const char *suffix)
{
	size_t np = strlen(prefix), ns = strlen(suffix), len = strlen(name);
	if (len <= np + ns || strncmp(name, prefix, np) || strcmp(name + len - ns, suffix))
		return 0;
	size_t dashes = 0, digits = 0;
	for (const char *c = name + np; c < name + len - ns; c++) {
		if (*c == '-' && digits && !dashes && pair) {
			dashes++;
			digits = 0;
		} else if (*c >= '0' && *c <= '9') {
			digits++;
		} else {
			return 0;
		}
	}
	return digits && dashes == (size_t)pair;
}

/* Remove what an earlier site left in dir that this one did not write: the pages of runs no
 * longer paged, cases and compares no longer there, charts not drawn this time (a run's chart
 * folder with them), so that no page is left that the site's own would contradict. Only the
 * names a site writes are touched; anything else in dir stays. Returns the first error. */
static int site_prune(struct site *site, struct bd_error *err)
{
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	int rc = 0;
	for (int level = 0; level < 2 && !rc; level++) {
		sb_reset(&path);
		sb_addf(&path, level ? "%s/charts" : "%s", site->dir);
		DIR *d = opendir(sb_str(&path));
		if (!d)
			continue;   /* the site made it; gone since is nothing to prune */
		for (struct dirent *e; !rc && (e = readdir(d));) {
			const char *n = e->d_name;
			int stale_dir = 0;
			sb_reset(&rel);
			if (!level && (site_name_is(n, "case-", 0, ".html") ||
				       site_name_is(n, "run-", 0, ".html") ||
				       site_name_is(n, "compare-", 1, ".html")))
				sb_add(&rel, n);
			else if (level && (site_name_is(n, "case-", 0, ".svg") ||
					   site_name_is(n, "case-", 0, ".png") ||
					   !strcmp(n, "history.svg") || !strcmp(n, "history.png")))
				sb_addf(&rel, "charts/%s", n);
			else if (level && site_name_is(n, "run-", 0, ""))
				stale_dir = 1;
			else
				continue;
			if (stale_dir) {   /* charts/run-N: its latency chart (a file so named: not ours) */
				static const char *const in_run[] = {"latency.svg", "latency.png"};
				int left = 0;
				for (size_t i = 0; i < 2 && !rc; i++) {
					sb_reset(&rel);
					sb_addf(&rel, "charts/%s/%s", n, in_run[i]);
					if (site_wrote(site, sb_str(&rel))) {
						left = 1;
						continue;
					}
					sb_reset(&path);
					sb_addf(&path, "%s/%s", site->dir, sb_str(&rel));
					if (unlink(sb_str(&path)) && errno != ENOENT && errno != ENOTDIR)
						rc = bd_fail(err, BD_EIO, "cannot remove the stale '%s': %s",
							     sb_str(&path), strerror(errno));
				}
				if (!rc && !left) {   /* a folder holding something else stays */
					sb_reset(&path);
					sb_addf(&path, "%s/charts/%s", site->dir, n);
					rmdir(sb_str(&path));
				}
				continue;
			}
			if (site_wrote(site, sb_str(&rel)))
				continue;
			sb_reset(&path);
			sb_addf(&path, "%s/%s", site->dir, sb_str(&rel));
			if (unlink(sb_str(&path)) && errno != ENOENT)
				rc = bd_fail(err, BD_EIO, "cannot remove the stale '%s': %s", sb_str(&path),
					     strerror(errno));
		}
		closedir(d);
	}
	sb_free(&path);
	sb_free(&rel);
	return rc;
}

static int run_paged(const struct site *site, int64_t id)
{
	for (size_t i = 0; i < site->npaged; i++)
		if (site->paged[i] == id)
			return 1;
	return 0;
}

/* "run 41" as a link to its page when it has one. */
static void run_link(struct strbuf *sb, const struct site *site, int64_t id)
{
	if (run_paged(site, id))
		sb_addf(sb, "<a href=\"run-%lld.html\">%lld</a>", (long long)id, (long long)id);
	else
		sb_addf(sb, "%lld", (long long)id);
}

static void commit_text(const struct run_row *run, char *out, size_t n)
{
	if (run->git_commit)
		snprintf(out, n, "%.12s%s", run->git_commit, run->git_dirty == 1 ? "+dirty" : "");
	else
		snprintf(out, n, "unknown");
}

static void cell(struct strbuf *sb, const char *text)
{
	sb_add(sb, "<td>");
	sb_add_html(sb, text ? text : "");
	sb_add(sb, "</td>");
}

/* The table of runs[0..n-1], newest first. */
static void runs_table(struct strbuf *sb, const struct site *site, const struct run_row *const *runs,
		       size_t n)
{
	sb_add(sb, "<table>\n<thead><tr><th>run</th><th>started</th><th>label</th><th>branch</th>"
		   "<th>commit</th><th>host</th><th>status</th><th>cases ok</th></tr></thead>\n<tbody>\n");
	for (size_t k = n; k-- > 0;) {
		const struct run_row *r = runs[k];
		char commit[64], when[32];
		commit_text(r, commit, sizeof(commit));
		history_date(r->started_at, when, sizeof(when));
		sb_add(sb, "<tr><td class=\"num\">");
		run_link(sb, site, r->id);
		sb_add(sb, "</td>");
		cell(sb, when);
		cell(sb, r->label);
		cell(sb, r->git_branch);
		cell(sb, commit);
		cell(sb, r->hostname);
		cell(sb, r->status);
		sb_addf(sb, "<td class=\"num\">%lld / %lld</td></tr>\n", (long long)r->nok,
			(long long)r->ncases);
	}
	sb_add(sb, "</tbody>\n</table>\n");
}

/* <img> of charts/BASE.svg, or why there is none. */
static void chart_img(struct strbuf *sb, const char *base, const char *alt, int ok,
		      const char *why)
{
	if (ok) {
		sb_addf(sb, "<p><img class=\"chart\" src=\"charts/%s.svg\" alt=\"", base);
		sb_add_html(sb, alt);
		sb_addf(sb, "\"><br><a href=\"charts/%s.png\">PNG</a></p>\n", base);
	} else {
		sb_add(sb, "<p class=\"notes\">no chart: ");
		sb_add_html(sb, why);
		sb_add(sb, "</p>\n");
	}
}

/* A chart's notes (one a line, as chart_write and chart_history_write give them) as a list, each
 * its own item. */
static void chart_notes(struct strbuf *sb, const struct strbuf *notes)
{
	const char *line = sb_str(notes);
	if (!*line)
		return;
	sb_add(sb, "<ul class=\"notes\">\n");
	while (*line) {
		size_t len = strcspn(line, "\n");
		char *item = xstrndup(line, len);
		sb_add(sb, "<li>");
		sb_add_html(sb, item);
		sb_add(sb, "</li>\n");
		free(item);
		line += len + (line[len] == '\n');
	}
	sb_add(sb, "</ul>\n");
}

/* ---- pages ------------------------------------------------------------------------------- */

/* The class of a series' "newest runs" cell: a case not ok in its newest run (which fails
 * `report changes` as a slower one does) is marked as slower. */
static const char *newest_class(const struct history_series *s)
{
	enum history_newest n = s->newest;
	return s->broken_run || n == NEWEST_SLOWER ? "slower"
	       : n == NEWEST_FASTER		    ? "faster"
	       : n == NEWEST_CONTENDED		    ? "contended"
						    : "";
}

static void newest_text(const struct history_series *s, char *out, size_t n)
{
	int len;
	if (s->newest == NEWEST_SLOWER || s->newest == NEWEST_FASTER || s->newest == NEWEST_CONTENDED)
		len = snprintf(out, n, "%s %+.1f%% since run %lld", history_newest_names[s->newest],
			       100 * s->newest_net,
			       (long long)s->points[s->changes[s->newest_change].cp.index].run->id);
	else if (s->newest == NEWEST_TOO_FEW && s->nsessions < s->n)   /* sessions count once */
		len = snprintf(out, n, "too few sessions (%zu, in %zu runs)", s->nsessions, s->n);
	else
		len = snprintf(out, n, "%s", history_newest_names[s->newest]);
	if (s->broken_run && len >= 0 && (size_t)len < n)
		snprintf(out + len, n - (size_t)len, "; not ok in run %lld: %s",
			 (long long)s->broken_run->id,
			 s->broken_row ? status_name(s->broken_row->status) : "missing, the run not complete");
}

/* case-K.html: the history of series k. */
static int case_page(struct site *site, size_t k, struct bd_error *err)
{
	const struct history_series *s = &site->hs->series[k];
	struct strbuf sb = STRBUF_INIT, notes = STRBUF_INIT, name = STRBUF_INIT, title = STRBUF_INIT;
	sb_addf(&title, "%s on %s", s->name, s->host);
	html_page_begin(&sb, sb_str(&title), 1);
	sb_add(&sb, "<p><code>");
	sb_add_html(&sb, s->case_key);
	char newest[160];
	newest_text(s, newest, sizeof(newest));
	sb_addf(&sb, "</code></p>\n<p class=\"verdict\">%zu runs, %zu change point%s; newest runs: "
		     "<span class=\"%s\">",
		s->n, s->cp.n, s->cp.n == 1 ? "" : "s", newest_class(s));
	sb_add_html(&sb, newest);
	sb_addf(&sb, "</span>; %s noise %.1f%%%s</p>\n",
		s->nsessions < s->n ? "session-to-session (a session's mean's: runs of one session "
				      "count once)" : "run-to-run",
		100 * s->cp.noise, s->cp.noise_estimated ? " (the series' own)" : "");
	int rc = 0;
	struct bd_error cerr;
	sb_addf(&name, "case-%zu", k);
	if (site->charts && s->n) {
		struct strbuf path = STRBUF_INIT;
		sb_addf(&path, "%s/charts/case-%zu", site->dir, k);
		const struct history_series *one[] = {s};
		rc = chart_history_write(one, 1, sb_str(&title), sb_str(&path), site->pick, &notes,
					 &cerr);
		sb_free(&path);
		if (rc == 0)
			chart_wrote(site, sb_str(&name));
		else
			chart_failed(site, rc, &cerr);
	}
	chart_img(&sb, sb_str(&name), sb_str(&title), site->charts && s->n && rc == 0,
		  !site->charts ? "gnuplot is not installed (gnuplot-nox)" : s->n ? cerr.msg : "no ok run");
	if (rc == 0)
		chart_notes(&sb, &notes);
	/* every run, newest first, its change marked */
	sb_add(&sb, "<h2>Runs</h2>\n<table>\n<thead><tr><th>run</th><th>started</th><th>label</th>"
		    "<th>commit</th><th>median (ms)</th><th>ci lo (ms)</th><th>ci hi (ms)</th>"
		    "<th>cpu wait (%)</th><th>change point</th></tr></thead>\n<tbody>\n");
	for (size_t i = s->n; i-- > 0;) {
		const struct history_point *p = &s->points[i];
		char commit[64], when[32];
		commit_text(p->run, commit, sizeof(commit));
		history_date(p->run->started_at, when, sizeof(when));
		sb_add(&sb, "<tr><td class=\"num\">");
		run_link(&sb, site, p->run->id);
		sb_add(&sb, "</td>");
		cell(&sb, when);
		cell(&sb, p->run->label);
		cell(&sb, commit);
		sb_addf(&sb, "<td class=\"num\">%.4f</td><td class=\"num\">%.4f</td>"
			     "<td class=\"num\">%.4f</td>",
			p->median / 1e6, p->lo / 1e6, p->hi / 1e6);
		if (p->wait >= 0)
			sb_addf(&sb, "<td class=\"num\">%.1f</td>", 100 * p->wait);
		else
			sb_add(&sb, "<td></td>");
		const struct history_change *c = history_change_at(s, i);
		if (c)
			sb_addf(&sb, "<td class=\"%s\">%s %+.1f%% [%+.1f, %+.1f], p %.4f</td>",
				history_verdict_names[c->verdict], history_verdict_names[c->verdict],
				100 * c->cp.change, 100 * c->cp.lo, 100 * c->cp.hi, c->cp.p);
		else
			sb_add(&sb, "<td></td>");
		sb_add(&sb, "</tr>\n");
	}
	sb_add(&sb, "</tbody>\n</table>\n");
	if (s->not_ok)
		sb_addf(&sb, "<ul class=\"notes\"><li>%zu run%s of this case left out: not ok, or no "
			     "samples of the phase</li></ul>\n", s->not_ok, s->not_ok == 1 ? "" : "s");
	html_page_end(&sb);
	sb_add(&name, ".html");
	rc = page_write(site, sb_str(&name), &sb, err);
	sb_free(&sb);
	sb_free(&notes);
	sb_free(&name);
	sb_free(&title);
	return rc;
}

/* The tables of one run (per suite) into sb; its latency chart when there is one. */
static int run_tables(struct site *site, int64_t run_id, struct strbuf *sb, int with_chart,
		      struct bd_error *err)
{
	struct case_set set = {0};
	struct case_filter all = {0};
	int rc = case_set_load(site->db, run_id, &all, &set, err);
	for (size_t i = 0; i < set.n && !rc;) {
		size_t end = i + 1;
		while (end < set.n && !strcmp(set.rows[end].suite, set.rows[i].suite))
			end++;
		struct table t;
		rc = table_of_cases(site->db, set.rows[i].suite, &set.rows[i], end - i, 0, &t, err);
		if (!rc)
			html_table(&t, sb);
		table_free(&t);
		i = end;
	}
	if (!rc && with_chart && site->charts && set.n) {
		struct strbuf dir = STRBUF_INIT, notes = STRBUF_INIT, base = STRBUF_INIT;
		sb_addf(&dir, "%s/charts/run-%lld", site->dir, (long long)run_id);
		struct bd_error cerr;
		struct chart_request rq = {.kind = CHART_LATENCY, .dir = sb_str(&dir), .run_id = run_id,
					   .set = &set, .pick = site->pick, .gaps_counted = 1};
		int crc = output_dir_make(sb_str(&dir), &cerr);
		if (!crc)
			crc = chart_write(site->db, &rq, &notes, &cerr);
		if (!crc) {
			sb_addf(&base, "run-%lld/latency", (long long)run_id);
			chart_wrote(site, sb_str(&base));
			sb_add(sb, "<h3>Latency</h3>\n");
			chart_img(sb, sb_str(&base), "latency against sequence length", 1, NULL);
			chart_notes(sb, &notes);
		} else if (crc != BD_EINVAL) {   /* drawn but failed: the page says why */
			sb_add(sb, "<h3>Latency</h3>\n");
			chart_img(sb, NULL, NULL, 0, cerr.msg);
			chart_failed(site, crc, &cerr);
		}   /* a run with nothing to draw (no attention or e2e case) has no chart */
		sb_free(&dir);
		sb_free(&notes);
		sb_free(&base);
	}
	case_set_free(&set);
	return rc;
}

static int run_page(struct site *site, const struct run_row *r, struct bd_error *err)
{
	struct strbuf sb = STRBUF_INIT, name = STRBUF_INIT, title = STRBUF_INIT;
	char commit[64], when[32];
	commit_text(r, commit, sizeof(commit));
	history_date(r->started_at, when, sizeof(when));
	sb_addf(&title, "Run %lld", (long long)r->id);
	html_page_begin(&sb, sb_str(&title), 1);
	sb_add(&sb, "<table>\n<tbody>\n");
	const char *names[] = {"started", "status", "label", "branch", "commit", "host", "sweep",
			       "command"};
	const char *values[] = {when, r->status, r->label, r->git_branch, commit, r->hostname,
				r->sweep_name, r->command_line};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sb_addf(&sb, "<tr><th>%s</th>", names[i]);
		cell(&sb, values[i]);
		sb_add(&sb, "</tr>\n");
	}
	sb_add(&sb, "</tbody>\n</table>\n");
	int rc = run_tables(site, r->id, &sb, 1, err);
	html_page_end(&sb);
	sb_addf(&name, "run-%lld.html", (long long)r->id);
	if (!rc)
		rc = page_write(site, sb_str(&name), &sb, err);
	sb_free(&sb);
	sb_free(&name);
	sb_free(&title);
	return rc;
}

/* compare-A-B.html: run cand against run base by case key, the run the unit (as `report compare
 * --baseline A --run B`: the noise between runs from the system's runs, assumed where nothing
 * measures it). */
static int compare_page(struct site *site, const struct run_row *base, const struct run_row *cand,
			struct bd_error *err)
{
	struct run_group bg = {0}, cg = {0};
	struct case_filter all = {0};
	struct case_pair *pairs = NULL;
	size_t npairs = 0;
	struct strbuf sb = STRBUF_INIT, name = STRBUF_INIT, title = STRBUF_INIT, noise = STRBUF_INIT;
	char base_sel[32], cand_sel[32];
	snprintf(base_sel, sizeof(base_sel), "%lld", (long long)base->id);
	snprintf(cand_sel, sizeof(cand_sel), "%lld", (long long)cand->id);
	const char *bs[] = {base_sel}, *cs[] = {cand_sel};
	const struct run_group_spec bspec = {"baseline", bs, 1, NULL, 0},
				    cspec = {"candidate", cs, 1, NULL, 0};
	int rc = run_group_select(site->db, &bspec, NULL, &bg, err);
	if (!rc)
		rc = run_group_select(site->db, &cspec, NULL, &cg, err);
	if (!rc)
		rc = run_group_load(site->db, &bg, &all, err);
	if (!rc)
		rc = run_group_load(site->db, &cg, &all, err);
	if (!rc)
		rc = compare_runs(site->db, &bg, &cg, site->pick, site->rule, &pairs, &npairs, &noise,
				  err);
	if (rc)
		goto done;
	sb_addf(&title, "Run %lld against run %lld (%s)", (long long)cand->id, (long long)base->id,
		cand->label ? cand->label : "no label");
	html_page_begin(&sb, sb_str(&title), 1);
	sb_add(&sb, "<p>candidate: run ");
	run_link(&sb, site, cand->id);
	sb_add(&sb, ", baseline: run ");
	run_link(&sb, site, base->id);
	sb_add(&sb, ". The run is the unit, as in <code>report compare --baseline RUN</code>: each "
		    "run's median is one sample, judged against the noise between runs of the system "
		    "(assumed, and said so below, where nothing measures it; <code>report regress</code> "
		    "with several runs a side measures it).</p>\n");
	struct table t = {0}, sum = {0};
	char what[128];
	snprintf(what, sizeof(what), "run %lld vs baseline run %lld (%s)", (long long)cand->id,
		 (long long)base->id, series_pick_names[site->pick]);
	if (compare_tables(&cg.sets[0], pairs, npairs, what, 1, site->rule, &t, &sum)) {
		table_note(&t, "%s", sb_str(&noise));
		html_table(&sum, &sb);
		html_table(&t, &sb);
	} else {
		sb_add(&sb, "<p>nothing to compare: the runs share no ok case key.</p>\n");
	}
	table_free(&t);
	table_free(&sum);
	html_page_end(&sb);
	sb_addf(&name, "compare-%lld-%lld.html", (long long)base->id, (long long)cand->id);
	rc = page_write(site, sb_str(&name), &sb, err);
done:
	free(pairs);
	run_group_free(&bg);
	run_group_free(&cg);
	sb_free(&sb);
	sb_free(&name);
	sb_free(&title);
	sb_free(&noise);
	return rc;
}

static int index_page(struct site *site, const char *title, const char *db_path,
		      const struct strbuf *compares, struct bd_error *err)
{
	const struct history_set *hs = site->hs;
	struct strbuf sb = STRBUF_INIT, notes = STRBUF_INIT;
	size_t *order = history_order(hs), count[NEWEST_COUNT] = {0}, broken = 0;   /* slower first */
	int in_sessions = 0;   /* runs of one session count once: --min-segment counts sessions */
	for (size_t i = 0; i < hs->n; i++) {
		count[hs->series[i].newest]++;
		in_sessions |= hs->series[i].nsessions < hs->series[i].n;
		broken += hs->series[i].broken_run != NULL;
	}
	html_page_begin(&sb, title, 1);
	char now[32], when[32];
	db_now(now);
	history_date(now, when, sizeof(when));
	sb_add(&sb, "<p>From <code>");
	sb_add_html(&sb, db_path);
	sb_addf(&sb, "</code>, %s UTC: %zu runs, %zu case series (case key and host).</p>\n", when,
		site->nruns, hs->n);
	sb_addf(&sb, "<p class=\"verdict\">Newest runs: <span class=\"slower\">%zu slower</span>, "
		     "<span class=\"contended\">%zu contended</span>, <span class=\"faster\">%zu "
		     "faster</span>, %zu steady, %zu with too few %s to tell",
		count[NEWEST_SLOWER], count[NEWEST_CONTENDED], count[NEWEST_FASTER],
		count[NEWEST_STEADY], count[NEWEST_TOO_FEW], in_sessions ? "sessions" : "runs");
	if (count[NEWEST_GONE])   /* dropped from the sweep: no verdict */
		sb_addf(&sb, ", %zu no longer run", count[NEWEST_GONE]);
	if (broken)   /* what fails `report changes` as a slower segment does */
		sb_addf(&sb, "; <span class=\"slower\">%zu not ok in their newest run</span> (error, "
			     "oom, unsupported or skipped there, or missing from a run not complete)",
			broken);
	sb_add(&sb, ".</p>\n");
	sb_add(&sb, "<h2>Cases</h2>\n<table>\n<thead><tr><th>case</th><th>host</th><th>runs</th>"
		    "<th>change points</th><th>newest runs</th><th>newest median (ms)</th>"
		    "<th>");
	sb_addf(&sb, "%s noise (%%)</th></tr></thead>\n<tbody>\n", in_sessions ? "session" : "run");
	for (size_t j = 0; j < hs->n; j++) {
		size_t i = order[j];
		const struct history_series *s = &hs->series[i];
		char newest[160];
		newest_text(s, newest, sizeof(newest));
		sb_addf(&sb, "<tr><td><a href=\"case-%zu.html\">", i);
		sb_add_html(&sb, s->name);
		sb_add(&sb, "</a></td>");
		cell(&sb, s->host);
		sb_addf(&sb, "<td class=\"num\">%zu</td><td class=\"num\">%zu</td><td class=\"%s\">", s->n,
			s->cp.n, newest_class(s));
		sb_add_html(&sb, newest);
		sb_add(&sb, "</td>");
		if (s->n)
			sb_addf(&sb, "<td class=\"num\">%.4f</td>", s->points[s->n - 1].median / 1e6);
		else
			sb_add(&sb, "<td></td>");
		if (s->cp.noise > 0)   /* none from fewer than 3 runs */
			sb_addf(&sb, "<td class=\"num\">%.1f</td></tr>\n", 100 * s->cp.noise);
		else
			sb_add(&sb, "<td></td></tr>\n");
	}
	sb_add(&sb, "</tbody>\n</table>\n");
	/* every history of two runs or more at a glance, the cases that moved first */
	size_t drawn = 0;
	for (size_t j = 0; j < hs->n; j++)
		drawn += hs->series[j].n >= 2;
	if (site->charts && drawn) {
		const struct history_series **all = xmalloc(drawn * sizeof(*all));
		drawn = 0;
		for (size_t j = 0; j < hs->n; j++)
			if (hs->series[order[j]].n >= 2)
				all[drawn++] = &hs->series[order[j]];
		struct strbuf path = STRBUF_INIT;
		sb_addf(&path, "%s/charts/history", site->dir);
		struct bd_error cerr;
		int crc = chart_history_write(all, drawn, "every case across its runs (ms)", sb_str(&path),
					      site->pick, &notes, &cerr);
		if (crc == 0)
			chart_wrote(site, "history");
		else
			chart_failed(site, crc, &cerr);
		sb_add(&sb, "<h2>History</h2>\n");
		chart_img(&sb, "history", "every case's history as small multiples", crc == 0, cerr.msg);
		if (crc == 0)
			chart_notes(&sb, &notes);
		sb_free(&path);
		free(all);
	} else if (!site->charts) {
		sb_add(&sb, "<h2>History</h2>\n");
		chart_img(&sb, NULL, NULL, 0, "gnuplot is not installed (gnuplot-nox)");
	}
	sb_add(&sb, "<h2>Runs</h2>\n");
	size_t shown = site->nruns < SITE_RUNS_ON_INDEX ? site->nruns : SITE_RUNS_ON_INDEX;
	runs_table(&sb, site, site->runs + site->nruns - shown, shown);
	sb_addf(&sb, "<p><a href=\"runs.html\">all %zu runs</a></p>\n", site->nruns);
	if (compares->len) {
		sb_add(&sb, "<h2>Compare</h2>\n<ul>\n");
		sb_add(&sb, sb_str(compares));
		sb_add(&sb, "</ul>\n");
	}
	int rc = 0;
	if (site->nruns) {
		const struct run_row *newest = site->runs[site->nruns - 1];
		sb_add(&sb, "<h2>Newest run: ");
		run_link(&sb, site, newest->id);
		sb_add(&sb, "</h2>\n");
		rc = run_tables(site, newest->id, &sb, 0, err);
	}
	sb_add(&sb, "<ul class=\"notes\"><li>Change points: E-divisive means with a permutation test "
		    "(<code>report changes</code>; docs/performance.md, \"Change points in history\"). "
		    "A case's newest runs are slower when a slower segment began among them.</li></ul>\n");
	html_page_end(&sb);
	if (!rc)
		rc = page_write(site, "index.html", &sb, err);
	sb_free(&sb);
	sb_free(&notes);
	free(order);
	return rc;
}

static int runs_page(struct site *site, struct bd_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	html_page_begin(&sb, "Runs", 1);
	runs_table(&sb, site, site->runs, site->nruns);
	html_page_end(&sb);
	int rc = page_write(site, "runs.html", &sb, err);
	sb_free(&sb);
	return rc;
}

static int text_is(const char *have, const char *want)
{
	return !want || (have && !strcmp(have, want));
}

/* Runs of one label (or both unlabelled) on one host. */
static int same_kind(const struct run_row *a, const struct run_row *b)
{
	return !!a->label == !!b->label && text_is(a->label, b->label) &&
	       !strcmp(a->hostname, b->hostname);
}

int cmd_site(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	struct history_options h = HISTORY_OPTIONS_INIT;
	struct history_filter f = {0};
	struct cp_options cpo;
	const char *dir = NULL, *title = "Benchmark history";
	const struct opt_spec specs[] = {
		{"output", 'o', OPT_STRING, "DIR", "folder to write the site into (made if missing)", &dir},
		{"title", 0, OPT_STRING, "TEXT", "the site's title (default: Benchmark history)", &title},
		REPORT_OPT_WHERE(&o),
		REPORT_OPT_SUITE(&o),
		HISTORY_OPT_RUNS(&h),
		REPORT_OPT_PHASE(&o),
		HISTORY_OPT_DETECTOR(&h),
		HISTORY_OPT_CONTENTION(&o),
		HISTORY_OPT_RECENT(&h),
		REPORT_OPT_DB(&o),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "site", "-o DIR [--label LABEL] [options]",
		"Write the database as a static web site into DIR: index.html (the change-point verdict\n"
		"of every case, the cases, the newest runs and tables, every history as small\n"
		"multiples), a page per run (the newest " REPORT_STR(SITE_RUN_PAGES) "), per case history\n"
		"(the chart with its run-to-run band and change points, every run) and per label (its\n"
		"newest run against the one before), charts in DIR/charts. Plain HTML and SVG, no\n"
		"script, nothing fetched when it is viewed: open DIR/index.html from the file system,\n"
		"or publish DIR on any static host. The change points are `report changes`'s.\n"
		"Exit status: 0 when the site was written, 1 when it could not be, 2 on usage errors\n"
		"and when no case matches the filters (nothing is written then)."};
	struct db *db = NULL;
	struct history_set hs = {0};
	struct site site = {0};
	struct strbuf compares = STRBUF_INIT, chart_dir = STRBUF_INIT;
	struct bd_error err;
	int npos, pick, status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if (!dir || !*dir) {
		fprintf(stderr, "report site: give the folder to write: -o DIR\n");
		return EXIT_USAGE;
	}
	if ((pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if ((status = history_options_check(&h, &o.rule, "site", &f, &cpo)) >= 0)
		return status;
	f.cases = report_filter(&o);
	f.pick = (enum series_pick)pick;
	if ((status = report_open(o.db_path, NULL, &db, NULL)) >= 0)
		goto done;
	status = EXIT_FAIL;
	if (history_load(db, &f, &hs, &err)) {
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL);
		goto done;
	}
	if (hs.n == 0) {   /* a filter that keeps nothing (a mistyped label) is no empty site */
		struct strbuf what = STRBUF_INIT;
		history_filter_describe(&f, &what);
		fprintf(stderr, "report site: no case matches%s (%zu cases of other runs left out); "
				"nothing written\n", sb_str(&what), hs.runs_left_out);
		sb_free(&what);
		status = EXIT_USAGE;
		goto done;
	}
	if (history_noise(db, &hs, f.pick, &o.rule, &err)) {
		status = report_error(&err, EXIT_FAIL);
		goto done;
	}
	if (history_detect(&hs, &cpo, &o.rule, (size_t)h.recent)) {
		fprintf(stderr, "report site: a run's median is not a finite time\n");
		goto done;
	}
	sb_addf(&chart_dir, "%s/charts", dir);
	if (output_dir_make(dir, &err) || output_dir_make(sb_str(&chart_dir), &err)) {
		report_error(&err, EXIT_FAIL);
		goto done;
	}
	site = (struct site){.dir = dir, .db = db, .hs = &hs, .charts = plot_available(),
			     .pick = (enum series_pick)pick, .rule = &o.rule, .written = STRBUF_INIT};
	sb_addc(&site.written, '\n');
	site.runs = xmalloc((hs.nruns ? hs.nruns : 1) * sizeof(*site.runs));
	for (size_t i = 0; i < hs.nruns; i++) {
		const struct run_row *r = &hs.runs[i];
		if (text_is(r->label, h.label) && text_is(r->git_branch, h.branch) &&
		    text_is(r->hostname, h.host))
			site.runs[site.nruns++] = r;
	}
	site.paged = xmalloc((SITE_RUN_PAGES + 1) * sizeof(*site.paged));
	for (size_t k = site.nruns; k-- > 0 && site.npaged < SITE_RUN_PAGES;)
		site.paged[site.npaged++] = site.runs[k]->id;
	int rc = 0;
	for (size_t k = 0; k < site.npaged && !rc; k++)
		for (size_t i = 0; i < site.nruns; i++)
			if (site.runs[i]->id == site.paged[k])
				rc = run_page(&site, site.runs[i], &err);
	for (size_t i = 0; i < hs.n && !rc; i++)
		rc = case_page(&site, i, &err);
	/* per label and host, its newest run against the one before */
	for (size_t i = site.nruns; i-- > 0 && !rc;) {
		const struct run_row *cand = site.runs[i], *base = NULL;
		int seen = 0;   /* a newer run of the same label and host already has its page */
		for (size_t j = i + 1; j < site.nruns && !seen; j++)
			seen = same_kind(site.runs[j], cand);
		for (size_t j = i; !seen && j-- > 0 && !base;)
			if (same_kind(site.runs[j], cand))
				base = site.runs[j];
		if (seen || !base)
			continue;
		rc = compare_page(&site, base, cand, &err);
		sb_addf(&compares, "<li><a href=\"compare-%lld-%lld.html\">run %lld against run %lld</a> "
				   "(label ",
			(long long)base->id, (long long)cand->id, (long long)cand->id, (long long)base->id);
		sb_add_html(&compares, cand->label ? cand->label : "none");
		sb_add(&compares, ", host ");
		sb_add_html(&compares, cand->hostname);
		sb_add(&compares, ")</li>\n");
	}
	if (!rc)
		rc = runs_page(&site, &err);
	if (!rc)
		rc = index_page(&site, title, o.db_path, &compares, &err);
	if (!rc)
		rc = site_prune(&site, &err);
	if (rc) {
		report_error(&err, EXIT_FAIL);
		goto done;
	}
	char failed[96] = "";
	if (site.charts_failed)
		snprintf(failed, sizeof(failed), "; %zu chart%s not drawn (above)", site.charts_failed,
			 site.charts_failed == 1 ? "" : "s");
	printf("report site: %zu files in %s (%zu runs, %zu case series%s%s); open %s/index.html\n",
	       site.files, dir, site.nruns, hs.n,
	       site.charts ? "" : "; no charts: gnuplot is not installed", failed, dir);
	status = EXIT_OK;
done:
	free(site.runs);
	free(site.paged);
	sb_free(&site.written);
	sb_free(&compares);
	sb_free(&chart_dir);
	history_free(&hs);
	db_close(db);
	return status;
}
