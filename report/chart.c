/* report/chart.c: the report's charts, built from the stored data and written through gnuplot
 * (plot.h): chart_write(), which `report plot` and `report writeup` call.
 *
 *   latency  median time vs sequence length, log-log, one line per group of cases that differ only
 *            in seq_len (attention; context_length for e2e), and per warm-up where the run varies
 *            it; error bars: the distribution-free 95% confidence interval of the median (order
 *            statistics); cases that did not run (oom, ...) are gaps in their line; of a key
 *            measured twice at one warm-up, the first case (as `report compare`).
 *   speedup  clustered bars: one category per shape, one bar per candidate impl, speedup vs the
 *            baseline impl (compare_match, the pairs of `report compare`) with its 95% bootstrap
 *            CI, and the 1.0 reference line; the notes name the cases without a bar, and why.
 *   warmup   per-iteration time, warm-up iterations included, of up to 8 ok cases (evenly spread
 *            over the run when it has more); log y when the times span more than 10x.
 *   memory   peak memory (MiB) vs sequence length per group, log-log, ok cases only.
 *   history  drawn by chart_history_write (history.h), with its series and change points:
 *            `report plot history` calls it.
 *
 * Legends name only the parameters that vary between the lines (e.g. "flash D64"); the ones all
 * lines share go into the title. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot.h"
#include "params.h"
#include "report.h"
#include "xalloc.h"

#define NS_PER_MS 1e6
#define BYTES_PER_MIB 1048576.0
#define WARMUP_MAX_LINES 8
#define MANY_LINES 10          /* more lines than this get a note to narrow with --where */
#define WIDE_RANGE 10.0        /* max/min beyond this: log y (warm-up, history) */
#define MAX_TOKENS 64
#define LEGEND_PX_PER_CHAR 7.0   /* 10 pt sans */
#define MISSING_LISTED 5       /* cases that did not run named one by one, up to this many */

const char *const chart_kind_names[CHART_KINDS] = {"latency", "speedup", "warmup", "memory",
						   "history"};

/* ---- case keys as tokens ------------------------------------------------------------------ */

/* A case key's tokens (common/params.h case_key_split); a key that does not split has none. */
static size_t key_tokens(const char *key, struct key_token *t, size_t max)
{
	size_t n = 0;
	if (case_key_split(key, t, max, &n, NULL))
		n = 0;
	return n;
}

/* Names of the tokens whose value differs between keys (or that some keys lack). */
struct varying {
	char names[MAX_TOKENS][48];
	size_t n;
};

static int varying_has(const struct varying *v, const struct key_token *t)
{
	for (size_t i = 0; i < v->n; i++)
		if (key_token_is(t, v->names[i]))
			return 1;
	return 0;
}

static void varying_add(struct varying *v, const struct key_token *t)
{
	if (varying_has(v, t) || v->n == MAX_TOKENS || t->name_len >= sizeof(v->names[0]))
		return;
	snprintf(v->names[v->n++], sizeof(v->names[0]), "%.*s", (int)t->name_len, t->name);
}

/* Value of the token called like t in key, or NULL. */
static const struct key_token *find_token(const struct key_token *tokens, size_t n,
					  const struct key_token *t)
{
	for (size_t i = 0; i < n; i++)
		if (tokens[i].name_len == t->name_len && !strncmp(tokens[i].name, t->name, t->name_len))
			return &tokens[i];
	return NULL;
}

static void find_varying(const char *const *keys, size_t nkeys, struct varying *v)
{
	v->n = 0;
	if (nkeys == 0)
		return;
	struct key_token first[MAX_TOKENS], other[MAX_TOKENS];
	size_t nf = key_tokens(keys[0], first, MAX_TOKENS);
	for (size_t k = 1; k < nkeys; k++) {
		size_t no = key_tokens(keys[k], other, MAX_TOKENS);
		for (size_t i = 0; i < no; i++) {
			const struct key_token *f = find_token(first, nf, &other[i]);
			if (!f || f->value_len != other[i].value_len ||
			    strncmp(f->value, other[i].value, f->value_len))
				varying_add(v, &other[i]);
		}
		for (size_t i = 0; i < nf; i++)
			if (!find_token(other, no, &first[i]))
				varying_add(v, &first[i]);
	}
}

/* The tokens of key that are (want_varying) or are not in v, as a label; "" when none. The
 * suite is left out of the shared part (titles name it where it matters). */
static char *key_label(const char *key, const struct varying *v, int want_varying)
{
	struct key_token t[MAX_TOKENS];
	size_t n = key_tokens(key, t, MAX_TOKENS);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		if (varying_has(v, &t[i]) == want_varying && (want_varying || !key_token_is(&t[i], "suite")))
			key_token_label(&sb, &t[i]);   /* "D64", "B8", "causal", "flash" */
	return sb_detach(&sb);
}

/* "fwd+bwd" for the per-iteration total of cases with these phases, else the phase's name. */
static void pick_label(enum series_pick pick, unsigned phases, char *out, size_t n)
{
	if (pick != PICK_TOTAL) {
		snprintf(out, n, "%s", series_pick_names[pick]);
		return;
	}
	out[0] = '\0';
	for (int p = 0; p < PHASE_COUNT; p++)
		if (phases & (1u << p))
			snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? "+" : "",
				 phase_name(p));
	if (!out[0])
		snprintf(out, n, "total");
}

/* pick_label for cases whose phases together are phases and in common are shared: where they
 * differ (forward cases beside forward_backward ones), a total is not one quantity, so it is
 * called a total of all phases rather than "fwd+bwd", which the forward cases are not. */
static void pick_label_of(enum series_pick pick, unsigned phases, unsigned shared, char *out,
			  size_t n)
{
	if (pick == PICK_TOTAL && phases && phases != shared)
		snprintf(out, n, "total (all phases)");
	else
		pick_label(pick, phases, out, n);
}

/* ---- lines: a growable set of x-y series ------------------------------------------------------ */

struct line {
	char *group;                 /* what the points share (a case key without the x token) */
	char *title;
	double *x, *y, *lo, *hi;
	unsigned char *marked;       /* per point: measured under contention, or unstable */
	size_t n, alloc;
	size_t unmeasured;           /* ok cases with nothing to draw: memory, no peak stored;
					latency, no iteration of the picked phase */
};

struct lines {
	struct line *v;
	size_t n, alloc;
	unsigned marks;              /* the case_mark bits of the points marked */
};

static struct line *lines_get(struct lines *ls, const char *group)
{
	for (size_t i = 0; i < ls->n; i++)
		if (!strcmp(ls->v[i].group, group))
			return &ls->v[i];
	if (ls->n == ls->alloc) {
		size_t alloc = ls->alloc ? 2 * ls->alloc : 8;
		ls->v = xrealloc(ls->v, alloc * sizeof(*ls->v));
		ls->alloc = alloc;
	}
	struct line *l = &ls->v[ls->n];
	memset(l, 0, sizeof(*l));
	l->group = xstrdup(group);
	ls->n++;
	return l;
}

static void line_add(struct line *l, double x, double y, double lo, double hi)
{
	if (l->n == l->alloc) {
		size_t alloc = l->alloc ? 2 * l->alloc : 16;
		double **arrays[4] = {&l->x, &l->y, &l->lo, &l->hi};
		for (int k = 0; k < 4; k++)
			*arrays[k] = xrealloc(*arrays[k], alloc * sizeof(double));
		l->marked = xrealloc(l->marked, alloc);
		l->alloc = alloc;
	}
	l->x[l->n] = x;
	l->y[l->n] = y;
	l->lo[l->n] = lo;
	l->hi[l->n] = hi;
	l->marked[l->n] = 0;
	l->n++;
}

/* Mark point i of l (one of ls) when case c, with measured iterations s (NULL: the stored
 * figures only), is contended or unstable (report.h case_mark); a note names it. */
static void line_mark(struct lines *ls, struct line *l, size_t i, const struct case_row *c,
		      const struct case_series *s, struct strbuf *notes)
{
	struct case_mark m;
	case_mark_of(c, s ? s->total : NULL, s ? s->ntotal : 0, &m);
	if (!m.bits)
		return;
	char text[96];
	case_mark_text(&m, text, sizeof(text));
	struct strbuf line = STRBUF_INIT;   /* a baseline case rings every bar against it: once */
	sb_addf(&line, "ringed: %s: %s\n", c->name, text);
	if (!strstr(sb_str(notes), sb_str(&line)))
		sb_add(notes, sb_str(&line));
	sb_free(&line);
	l->marked[i] = 1;
	ls->marks |= m.bits;
}

/* Order a line's points by x (insertion sort: lines are short). */
static void line_sort(struct line *l)
{
	for (size_t i = 1; i < l->n; i++)
		for (size_t j = i; j > 0 && l->x[j - 1] > l->x[j]; j--) {
			double *a[4] = {l->x, l->y, l->lo, l->hi};
			for (int k = 0; k < 4; k++) {
				double t = a[k][j];
				a[k][j] = a[k][j - 1];
				a[k][j - 1] = t;
			}
			unsigned char m = l->marked[j];
			l->marked[j] = l->marked[j - 1];
			l->marked[j - 1] = m;
		}
}

static void lines_free(struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++) {
		struct line *l = &ls->v[i];
		free(l->group);
		free(l->title);
		free(l->x);
		free(l->y);
		free(l->lo);
		free(l->hi);
		free(l->marked);
	}
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

/* Title every line by what varies between their groups; *common gets what they share (malloc'd). */
static void lines_title(struct lines *ls, char **common)
{
	const char **keys = xcalloc(ls->n, sizeof(*keys));
	for (size_t i = 0; i < ls->n; i++)
		keys[i] = ls->v[i].group;
	struct varying v;
	find_varying(keys, ls->n, &v);
	free(keys);
	for (size_t i = 0; i < ls->n; i++) {
		ls->v[i].title = key_label(ls->v[i].group, &v, 1);
		if (!ls->v[i].title[0]) {   /* one line: name it by its impl */
			free(ls->v[i].title);
			struct varying impl = {.n = 1};
			snprintf(impl.names[0], sizeof(impl.names[0]), "impl");
			ls->v[i].title = key_label(ls->v[i].group, &impl, 1);
		}
	}
	*common = ls->n ? key_label(ls->v[0].group, &v, 0) : xstrdup("");
}

static struct plot_series *lines_series(const struct lines *ls, int error_bars)
{
	struct plot_series *s = xcalloc(ls->n, sizeof(*s));
	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->v[i];
		s[i] = (struct plot_series){.title = l->title, .x = l->x, .y = l->y, .n = l->n,
					    .ylo = error_bars ? l->lo : NULL,
					    .yhi = error_bars ? l->hi : NULL, .marked = l->marked};
	}
	return s;
}

/* ---- the charts ---------------------------------------------------------------------------- */

static int is_ok(const struct case_row *c) { return c->status == STATUS_OK; }

/* The suite a chart over sequence length draws: attention when the set has any, else the first
 * suite with a sequence axis (e2e: context_length). NULL when none. */
static const char *seq_suite(const struct case_set *set, const char **x_token)
{
	const char *suite = NULL;
	for (size_t i = 0; i < set->n && !suite_is(suite, SUITE_ATTENTION); i++) {
		const char *s = set->rows[i].suite;
		if (suite_is(s, SUITE_ATTENTION) || (!suite && suite_is(s, SUITE_E2E)))
			suite = s;
	}
	*x_token = suite_is(suite, SUITE_E2E) ? "context_length" : "seq_len";
	return suite;
}

static int line_drawn(const struct line *l)
{
	for (size_t k = 0; k < l->n; k++)
		if (isfinite(l->y[k]))
			return 1;
	return 0;
}

static int lines_same(const struct line *a, const struct line *b)
{
	int same = a->n == b->n && a->n > 0 && line_drawn(a);
	for (size_t k = 0; same && k < a->n; k++)
		same = a->x[k] == b->x[k] && (a->y[k] == b->y[k] || (isnan(a->y[k]) && isnan(b->y[k])));
	return same;
}

/* Lines with the same points hide each other: say so, once per set of such lines. */
static void note_coinciding(struct strbuf *notes, const struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++) {
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = !lines_same(&ls->v[j], &ls->v[i]);
		if (!first)
			continue;
		size_t same = 0;
		struct strbuf names = STRBUF_INIT;
		for (size_t j = i + 1; j < ls->n; j++)
			if (lines_same(&ls->v[i], &ls->v[j]) && ++same <= 3)
				sb_addf(&names, "%s%s", same > 1 ? ", " : "", ls->v[j].title);
		if (same == 1)
			sb_addf(notes, "%s and %s have the same values: one line hides the other\n",
				ls->v[i].title, sb_str(&names));
		else if (same)
			sb_addf(notes, "%s, %s%s (%zu lines) have the same values: one line hides the "
				       "others\n", ls->v[i].title, sb_str(&names), same > 3 ? ", ..." : "",
				same + 1);
		sb_free(&names);
	}
}

static void note_many_lines(struct strbuf *notes, const struct lines *ls)
{
	size_t drawn = 0;
	for (size_t i = 0; i < ls->n; i++)
		drawn += line_drawn(&ls->v[i]);
	if (drawn <= MANY_LINES)
		return;
	sb_addf(notes, "%zu lines: fix some parameters with `--where KEY=VALUE` for a readable chart\n",
		drawn);
}

/* Latency (memory == 0) or peak memory (memory == 1) against sequence length. */
static int chart_vs_seq(const struct chart_request *rq, int memory, struct plot *p,
			struct lines *ls, char *title, size_t ntitle, char *ylabel, size_t nylabel,
			struct strbuf *notes, struct bd_error *err)
{
	const struct case_set *set = rq->set;
	const char *x_token;
	const char *suite = seq_suite(set, &x_token);
	if (!suite)
		return bd_fail(err, BD_EINVAL, "run %lld has no attention or e2e case to chart against "
					       "sequence length", (long long)rq->run_id);
	unsigned phases = 0, phases_shared = ~0u;
	size_t other_suites = 0, nmissing = 0;
	struct strbuf missing = STRBUF_INIT;
	/* The key leaves warm-up out: where a sweep varies it (warmup: [0, 5]), the cases of one key
	 * are different measurements, each a line of its own ("naive warmup=0"), not one line
	 * that zigzags between them at every x. */
	int warmup_varies = 0;
	for (size_t i = 0, seen = 0; i < set->n; i++)
		if (!strcmp(set->rows[i].suite, suite)) {
			warmup_varies |= seen && set->rows[i].warmup != set->rows[seen - 1].warmup;
			seen = i + 1;
		}
	/* A key measured twice at one warm-up (a benchmark listed twice, overlapping seq_len lists)
	 * is one case: its first copy counts, as in the tables' pivots and `report compare`, rather
	 * than two points at one x that the line zigzags between. */
	unsigned char *first = case_rows_first_of_key(set->rows, set->n);
	size_t repeats = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct case_row *c = &set->rows[i];
		if (strcmp(c->suite, suite)) {
			other_suites++;
			continue;
		}
		int repeat = 0;
		for (size_t j = 0; j < i && !first[i] && !repeat; j++)
			repeat = set->rows[j].warmup == c->warmup && !strcmp(set->rows[j].case_key, c->case_key);
		if (repeat) {
			repeats++;
			continue;
		}
		char *group = case_key_without(c->case_key, x_token);
		struct strbuf with_warmup = STRBUF_INIT;
		sb_add(&with_warmup, group);
		if (warmup_varies)
			sb_addf(&with_warmup, " warmup=%lld", (long long)c->warmup);
		struct line *l = lines_get(ls, sb_str(&with_warmup));
		sb_free(&with_warmup);
		free(group);
		double y = NAN, lo = NAN, hi = NAN;
		if (!is_ok(c)) {
			sb_addf(&missing, "%s: %s, not plotted%s%s\n", c->name, status_name(c->status),
				c->reason ? " — " : "", c->reason ? c->reason : "");
			nmissing++;
		} else if (memory) {
			if (c->peak_bytes >= 0)
				y = lo = hi = (double)c->peak_bytes / BYTES_PER_MIB;
			else
				l->unmeasured++;
		} else {
			size_t n;
			const double *x = case_series_pick(&set->series[i], rq->pick, &n);
			phases |= set->series[i].phases;
			phases_shared &= set->series[i].phases;
			if (median_ci(x, n, &y, &lo, &hi) == 0) {
				y /= NS_PER_MS;
				lo /= NS_PER_MS;
				hi /= NS_PER_MS;
			} else {
				l->unmeasured++;   /* --phase bwd of a forward case */
			}
		}
		line_add(l, (double)c->seq_len, y, lo, hi);
		if (is_ok(c))
			line_mark(ls, l, l->n - 1, c, &set->series[i], notes);
	}
	/* Cases that did not run are gaps: name them, or count them when there are many. */
	if (nmissing <= MISSING_LISTED && !rq->gaps_counted) {
		sb_add(notes, sb_str(&missing));
	} else if (nmissing) {
		sb_addf(notes, "%zu case%s did not run and %s in the lines (", nmissing,
			nmissing == 1 ? "" : "s", nmissing == 1 ? "is a gap" : "are gaps");
		for (int k = STATUS_OK + 1, first = 1; k < STATUS_COUNT; k++) {
			size_t count = 0;
			for (size_t i = 0; i < set->n; i++)
				count += !strcmp(set->rows[i].suite, suite) &&
					 set->rows[i].status == (enum bd_status)k;
			if (count)
				sb_addf(notes, "%s%s: %zu", first ? "" : ", ", status_name(k), count);
			first &= !count;
		}
		sb_add(notes, ")\n");
	}
	sb_free(&missing);
	free(first);
	if (repeats)
		sb_addf(notes, "%zu case%s repeat%s the key of an earlier case of the run and %s not "
			       "drawn: the first case of a key counts, as in `report compare`\n",
			repeats, repeats == 1 ? "" : "s", repeats == 1 ? "s" : "", repeats == 1 ? "is" : "are");
	if (other_suites)
		sb_addf(notes, "%zu case%s of other suites left out (choose one with --suite)\n",
			other_suites, other_suites == 1 ? "" : "s");
	char *common = NULL;
	lines_title(ls, &common);
	for (size_t i = 0; i < ls->n; i++)
		line_sort(&ls->v[i]);
	note_many_lines(notes, ls);
	note_coinciding(notes, ls);
	/* a peer's memory is what it reports (`memory` lines), a forward case has no bwd
	 * iterations: say whose points are not on the chart */
	size_t unmeasured = 0, cases_unmeasured = 0;
	struct strbuf which = STRBUF_INIT;
	for (size_t i = 0; i < ls->n; i++) {
		if (!ls->v[i].unmeasured)
			continue;
		cases_unmeasured += ls->v[i].unmeasured;
		if (++unmeasured <= 3)
			sb_addf(&which, "%s%s", unmeasured > 1 ? ", " : "", ls->v[i].title);
	}
	size_t nok = 0;
	for (size_t i = 0; i < set->n; i++)
		nok += !strcmp(set->rows[i].suite, suite) && is_ok(&set->rows[i]);
	int rc = 0;
	if (nok && cases_unmeasured == nok && memory)   /* not a chart with nothing on it */
		rc = bd_fail(err, BD_EINVAL, "no ok %s case of run %lld stored its peak memory", suite,
			     (long long)rq->run_id);
	else if (nok && cases_unmeasured == nok)
		rc = bd_fail(err, BD_EINVAL, "no ok %s case of run %lld measured %s iterations%s", suite,
			     (long long)rq->run_id,
			     rq->pick == PICK_TOTAL ? "complete" : series_pick_names[rq->pick],
			     rq->pick == PICK_TOTAL ? "" : " (choose another with --phase)");
	else if (unmeasured && memory)
		sb_addf(notes, "%zu ok case%s stored no peak memory, not drawn (%s%s; a peer's memory is "
			       "what it prints on `memory` lines: schemas/peer-protocol.md)\n",
			cases_unmeasured, cases_unmeasured == 1 ? "" : "s", sb_str(&which),
			unmeasured > 3 ? ", ..." : "");
	else if (unmeasured)
		sb_addf(notes, "%zu ok case%s measured no %s iterations, not drawn (%s%s)\n",
			cases_unmeasured, cases_unmeasured == 1 ? "" : "s",
			rq->pick == PICK_TOTAL ? "complete" : series_pick_names[rq->pick],
			sb_str(&which), unmeasured > 3 ? ", ..." : "");
	sb_free(&which);
	if (rc) {
		free(common);
		return rc;
	}
	const char *what = memory ? "peak memory" : "time";
	snprintf(title, ntitle, "run %lld: %s %s vs %s%s%s", (long long)rq->run_id, suite, what,
		 strcmp(x_token, "seq_len") ? "context length" : "sequence length",
		 common[0] ? " — " : "", common);
	free(common);
	if (memory) {
		snprintf(ylabel, nylabel, "peak memory (MiB)");
	} else {
		char phase[32];
		pick_label_of(rq->pick, phases, phases_shared, phase, sizeof(phase));
		snprintf(ylabel, nylabel, "median %s time (ms), error bars: 95%% CI of the median", phase);
		sb_add(notes, "error bars: distribution-free 95% confidence interval of the median "
			      "(order statistics of the measured iterations)\n");
	}
	p->kind = PLOT_LINES;
	p->xlabel = strcmp(x_token, "seq_len") ? "context length (tokens)" : "sequence length";
	p->logx = p->logy = 1;
	return 0;
}

/* The cases of other impls than the baseline, in a suite that has the baseline, that have no
 * bar, and why: not ok, no ok baseline case of their shape, nothing to compare (no iteration of the picked phase), or a later copy of
 * a key measured twice (a warm-up axis), of which, as in `report compare`, the first counts. */
static void note_no_bar(const struct chart_request *rq, const struct case_pair *pairs,
			size_t npairs, struct strbuf *notes)
{
	const struct case_set *set = rq->set;
	const char *baseline = rq->baseline ? rq->baseline : "naive";
	unsigned char *first = case_rows_first_of_key(set->rows, set->n);
	size_t *pair_of = xcalloc(set->n + 1, sizeof(*pair_of));   /* pair index + 1 */
	for (size_t k = 0; k < npairs; k++)
		pair_of[pairs[k].cand] = k + 1;
	size_t nobar = 0, later = 0;
	struct strbuf which = STRBUF_INIT;
	for (size_t i = 0; i < set->n; i++) {
		const struct case_row *c = &set->rows[i];
		if (!strcmp(c->impl, baseline))
			continue;
		if (pair_of[i] && pairs[pair_of[i] - 1].ok)
			continue;
		int suite_has_baseline = 0;   /* no naive matmul: no bar was ever to be had */
		for (size_t j = 0; j < set->n && !suite_has_baseline; j++)
			suite_has_baseline = !strcmp(set->rows[j].impl, baseline) &&
					     !strcmp(set->rows[j].suite, c->suite);
		if (!suite_has_baseline)
			continue;
		if (!first[i]) {
			later++;
			continue;
		}
		if (++nobar > MISSING_LISTED || rq->gaps_counted)
			continue;
		sb_addf(&which, "%s%s (", which.len ? "; " : "", c->name);
		if (!is_ok(c))
			sb_add(&which, status_name(c->status));
		else if (pair_of[i])
			sb_addf(&which, "no %s iterations on a side",
				rq->pick == PICK_TOTAL ? "complete" : series_pick_names[rq->pick]);
		else
			sb_addf(&which, "no ok %s case of its shape", baseline);
		sb_addc(&which, ')');
	}
	if (nobar)
		sb_addf(notes, "%zu case%s of other impls than %s %s no bar%s%s%s\n", nobar,
			nobar == 1 ? "" : "s", baseline, nobar == 1 ? "has" : "have",
			which.len ? ": " : "", sb_str(&which), nobar > MISSING_LISTED && which.len ? "; ..." : "");
	if (later)
		sb_addf(notes, "%zu case%s repeat%s the key of an earlier case of the run (a warm-up axis?) "
			       "and %s no bar: the first case of a key counts, as in `report compare`\n",
			later, later == 1 ? "" : "s", later == 1 ? "s" : "", later == 1 ? "has" : "have");
	sb_free(&which);
	free(pair_of);
	free(first);
}

static int chart_speedup(const struct chart_request *rq, struct plot *p, struct lines *ls,
			 char ***categories, size_t *ncat, char *title, size_t ntitle, char *ylabel,
			 size_t nylabel, struct strbuf *notes, struct bd_error *err)
{
	const struct case_set *set = rq->set;
	const char *baseline = rq->baseline ? rq->baseline : "naive";
	struct case_pair *pairs = NULL;
	size_t npairs = 0, nbase = 0;
	for (size_t i = 0; i < set->n; i++)
		nbase += !strcmp(set->rows[i].impl, baseline);
	if (nbase == 0) {
		struct strbuf impls = STRBUF_INIT;
		for (size_t i = 0; i < set->n; i++) {
			int seen = 0;
			for (size_t j = 0; j < i && !seen; j++)
				seen = !strcmp(set->rows[j].impl, set->rows[i].impl);
			if (!seen)
				sb_addf(&impls, "%s%s", impls.len ? ", " : "", set->rows[i].impl);
		}
		int rc = bd_fail(err, BD_EINVAL, "no case of impl '%s' in run %lld to compare against "
						 "(impls: %s); choose one with --baseline",
				 baseline, (long long)rq->run_id, impls.len ? sb_str(&impls) : "none");
		sb_free(&impls);
		return rc;
	}
	static const struct verdict_rule rule = VERDICT_RULE_DEFAULT;   /* the bars need no verdict */
	compare_match(set, set, baseline, rq->pick, &rule, &pairs, &npairs);
	/* Categories: the shapes (case key without impl), in order of first appearance. */
	char **shapes = xcalloc(npairs, sizeof(*shapes));
	size_t nshapes = 0;
	int rc = 0;
	unsigned phases = 0, phases_shared = ~0u;
	for (size_t k = 0; k < npairs; k++) {
		if (!pairs[k].ok)
			continue;
		char *shape = case_key_without_impl(set->rows[pairs[k].cand].case_key);
		size_t s = 0;
		while (s < nshapes && strcmp(shapes[s], shape))
			s++;
		if (s == nshapes)
			shapes[nshapes++] = shape;
		else
			free(shape);
		lines_get(ls, set->rows[pairs[k].cand].impl);
	}
	if (nshapes == 0) {
		rc = bd_fail(err, BD_EINVAL, "no ok case of run %lld has an ok '%s' partner that differs "
					     "from it only in impl", (long long)rq->run_id, baseline);
		goto done;
	}
	/* One bar series per candidate impl, a value (NaN: none) for every category. */
	for (size_t j = 0; j < ls->n; j++)
		for (size_t s = 0; s < nshapes; s++)
			line_add(&ls->v[j], (double)s, NAN, NAN, NAN);
	for (size_t k = 0; k < npairs; k++) {
		if (!pairs[k].ok)
			continue;
		const struct case_row *c = &set->rows[pairs[k].cand];
		char *shape = case_key_without_impl(c->case_key);
		size_t s = 0;
		while (s < nshapes && strcmp(shapes[s], shape))
			s++;
		free(shape);
		struct line *l = lines_get(ls, c->impl);
		line_mark(ls, l, s, c, &set->series[pairs[k].cand], notes);
		line_mark(ls, l, s, &set->rows[pairs[k].base], &set->series[pairs[k].base], notes);
		l->y[s] = pairs[k].result.speedup.ratio;
		l->lo[s] = pairs[k].result.speedup.lo;
		l->hi[s] = pairs[k].result.speedup.hi;
		phases |= set->series[pairs[k].cand].phases;
		phases_shared &= set->series[pairs[k].cand].phases;
	}
	note_no_bar(rq, pairs, npairs, notes);
	for (size_t j = 0; j < ls->n; j++)
		ls->v[j].title = xstrdup(ls->v[j].group);
	struct varying v;
	find_varying((const char *const *)shapes, nshapes, &v);
	*categories = xcalloc(nshapes, sizeof(**categories));
	*ncat = nshapes;
	for (size_t s = 0; s < nshapes; s++) {
		(*categories)[s] = key_label(shapes[s], &v, 1);
		if (!(*categories)[s][0]) {
			free((*categories)[s]);
			(*categories)[s] = xstrdup("all");
		}
	}
	char *common = key_label(shapes[0], &v, 0);
	char phase[32];
	pick_label_of(rq->pick, phases, phases_shared, phase, sizeof(phase));
	snprintf(title, ntitle, "run %lld: speedup vs %s (%s)%s%s", (long long)rq->run_id, baseline,
		 phase, common[0] ? " — " : "", common);
	free(common);
	snprintf(ylabel, nylabel, "speedup vs %s (x, > 1: faster), error bars: 95%% CI", baseline);
	sb_addf(notes, "speedup = median time of %s / median time of the impl; error bars: 95%% "
		       "bootstrap confidence interval (as `report compare`)\n", baseline);
	double lo = INFINITY, hi = 0;
	for (size_t j = 0; j < ls->n; j++)
		for (size_t s = 0; s < nshapes; s++)
			if (isfinite(ls->v[j].y[s])) {
				lo = fmin(lo, ls->v[j].lo[s]);
				hi = fmax(hi, ls->v[j].hi[s]);
			}
	p->kind = PLOT_BARS;
	p->xlabel = "";
	p->has_hline = 1;
	p->hline = 1.0;
	p->logy = lo > 0 && hi / lo > 2 * WIDE_RANGE;
done:
	for (size_t s = 0; shapes && s < nshapes; s++)
		free(shapes[s]);
	free(shapes);
	free(pairs);
	return rc;
}

static int chart_warmup(struct db *db, const struct chart_request *rq, struct plot *p,
			struct lines *ls, char *title, size_t ntitle, char *ylabel, size_t nylabel,
			struct strbuf *notes, struct bd_error *err)
{
	const struct case_set *set = rq->set;
	size_t nok = 0;
	for (size_t i = 0; i < set->n; i++)
		nok += is_ok(&set->rows[i]);
	if (nok == 0)
		return bd_fail(err, BD_EINVAL, "run %lld has no ok case (after the filters) to chart",
			       (long long)rq->run_id);
	size_t shown = nok < WARMUP_MAX_LINES ? nok : WARMUP_MAX_LINES;
	int rc = 0;
	unsigned phases = 0, phases_shared = ~0u;
	int64_t warmup_min = INT64_MAX, warmup_max = 0;
	const struct case_row *shown_cases[WARMUP_MAX_LINES];
	int suites_differ = 0;
	double ymin = INFINITY, ymax = 0;
	/* The k-th shown case is ok case round(k (nok - 1) / (shown - 1)): first and last included. */
	for (size_t k = 0, ok_index = 0, i = 0; k < shown && i < set->n; i++) {
		const struct case_row *c = &set->rows[i];
		if (!is_ok(c))
			continue;
		size_t want = shown == 1 ? 0 : (size_t)llround((double)k * (double)(nok - 1) /
							       (double)(shown - 1));
		if (ok_index++ != want)
			continue;
		double *x = NULL;
		size_t n = 0;
		if ((rc = case_iterations(db, c, rq->pick, &x, &n, err)))
			goto done;
		/* The case's position keeps two cases with one key (a sweep may list a benchmark
		 * twice) apart; it has no '=', so labels never show it. */
		char group[1100];
		snprintf(group, sizeof(group), "%s #%zu", c->case_key, i);
		struct line *l = lines_get(ls, group);
		for (size_t it = 0; it < n; it++) {
			double y = x[it] / NS_PER_MS;
			line_add(l, (double)it, y, y, y);
			if (y > 0) {
				ymin = fmin(ymin, y);
				ymax = fmax(ymax, y);
			}
		}
		free(x);
		shown_cases[k++] = c;
		suites_differ |= strcmp(c->suite, shown_cases[0]->suite) != 0;
		phases |= set->series[i].phases;
		phases_shared &= set->series[i].phases;
		warmup_min = c->warmup < warmup_min ? c->warmup : warmup_min;
		warmup_max = c->warmup > warmup_max ? c->warmup : warmup_max;
	}
	if (nok > shown)
		sb_addf(notes, "showing %zu of %zu ok cases, evenly spread over the run (`report plot "
			       "warmup --where KEY=VALUE` shows others)\n", shown, nok);
	/* Legend: what varies between the shown cases' keys (a line's group has the case's place
	 * after its key, which is no token); the same key twice, or cases of different suites
	 * (they share few parameters), by the case's name. */
	const char *keys[WARMUP_MAX_LINES];
	for (size_t j = 0; j < ls->n; j++)
		keys[j] = shown_cases[j]->case_key;
	struct varying v;
	find_varying(keys, ls->n, &v);
	for (size_t j = 0; j < ls->n; j++) {
		ls->v[j].title = key_label(keys[j], &v, 1);
		int clash = !ls->v[j].title[0];
		for (size_t k = 0; k < j && !clash; k++)
			clash = !strcmp(ls->v[k].title, ls->v[j].title);
		if (suites_differ || clash || ls->n == 1) {
			free(ls->v[j].title);
			ls->v[j].title = xstrdup(shown_cases[j]->name);
		}
	}
	/* a contended or unstable case: its legend says so (ringing every iteration would hide it) */
	for (size_t j = 0; j < ls->n; j++) {
		struct case_mark m;
		case_mark_of(shown_cases[j], NULL, 0, &m);
		if (!m.bits)
			continue;
		char text[96];
		case_mark_text(&m, text, sizeof(text));
		struct strbuf t = STRBUF_INIT;
		sb_addf(&t, "%s [%s]", ls->v[j].title, text);
		free(ls->v[j].title);
		ls->v[j].title = sb_detach(&t);
		sb_addf(notes, "%s: %s\n", shown_cases[j]->name, text);
		ls->marks |= m.bits;
	}
	char *common = ls->n ? key_label(keys[0], &v, 0) : xstrdup("");
	char warm[64];
	if (warmup_min == warmup_max)
		snprintf(warm, sizeof(warm), "iterations 0-%lld are warm-up", (long long)warmup_max - 1);
	else
		snprintf(warm, sizeof(warm), "the first %lld-%lld iterations are warm-up",
			 (long long)warmup_min, (long long)warmup_max);
	if (warmup_max == 0)
		snprintf(warm, sizeof(warm), "no warm-up iterations");
	else if (warmup_max == 1 && warmup_min == 1)
		snprintf(warm, sizeof(warm), "iteration 0 is warm-up");
	snprintf(title, ntitle, "run %lld: per-iteration time (%s)%s%s", (long long)rq->run_id, warm,
		 common[0] ? " — " : "", common);
	free(common);
	char phase[32];
	if (phases == phases_shared)
		pick_label(rq->pick, phases, phase, sizeof(phase));
	else
		snprintf(phase, sizeof(phase), "total (all phases)");
	snprintf(ylabel, nylabel, "%s time per iteration (ms)", phase);
	p->kind = PLOT_LINES;
	p->xlabel = "iteration (0 = first, warm-up included)";
	p->logy = ymax > 0 && ymax / ymin > WIDE_RANGE;
done:
	return rc;
}

int chart_write(struct db *db, const struct chart_request *rq, struct strbuf *notes,
		struct bd_error *err)
{
	struct plot p = {0};
	struct lines ls = {0};
	struct plot_series *series = NULL;
	char **categories = NULL;
	size_t ncat = 0;
	char title[512] = "", ylabel[160] = "";
	struct strbuf path = STRBUF_INIT;
	int rc;
	switch (rq->kind) {
	case CHART_LATENCY:
	case CHART_MEMORY:
		rc = chart_vs_seq(rq, rq->kind == CHART_MEMORY, &p, &ls, title, sizeof(title), ylabel,
				  sizeof(ylabel), notes, err);
		break;
	case CHART_SPEEDUP:
		rc = chart_speedup(rq, &p, &ls, &categories, &ncat, title, sizeof(title), ylabel,
				   sizeof(ylabel), notes, err);
		break;
	case CHART_WARMUP:
		rc = chart_warmup(db, rq, &p, &ls, title, sizeof(title), ylabel, sizeof(ylabel), notes,
				  err);
		break;
	case CHART_HISTORY:   /* series across runs, with change points: chart_history_write */
	default:
		rc = bd_fail(err, BD_EINVAL, "unknown chart kind %d", (int)rq->kind);
		break;
	}
	if (rc)
		goto done;
	series = lines_series(&ls, rq->kind != CHART_WARMUP && rq->kind != CHART_MEMORY);
	/* A long legend takes its width from the plot: widen the chart to keep ~600 px of plot. */
	size_t longest = 0;
	for (size_t i = 0; i < ls.n; i++)
		if (ls.v[i].title && strlen(ls.v[i].title) > longest)
			longest = strlen(ls.v[i].title);
	int wanted = (int)(LEGEND_PX_PER_CHAR * (double)longest) + 760;
	if (wanted > 900)
		p.width = wanted < 1600 ? wanted : 1600;
	p.title = title;
	p.ylabel = ylabel;
	p.series = series;
	p.nseries = ls.n;
	p.categories = (const char *const *)categories;
	p.mark_title = ls.marks == CASE_MARK_CONTENDED ? "contended (waited for a CPU)" :
		       ls.marks == CASE_MARK_UNSTABLE ? "unstable (median uncertain)" :
						   "contended or unstable (notes)";
	if (ls.marks & CASE_MARK_CONTENDED)
		sb_addf(notes, "contended: the case waited for a CPU more than %d%% of its measured time "
			       "(cases.cpu_wait): its time includes that wait\n",
			REPORT_CPU_WAIT_LEVEL_PCT);
	if (ls.marks & CASE_MARK_UNSTABLE)
		sb_addf(notes, "unstable: the median's relative standard error within its run is above "
			       "%.3g%% (cases.rse)\n", (double)REPORT_UNSTABLE_RSE_PCT);
	sb_addf(&path, "%s/%s", rq->dir, chart_kind_names[rq->kind]);
	rc = plot_write(&p, sb_str(&path), err);
done:
	for (size_t i = 0; i < ncat; i++)
		free(categories[i]);
	free(categories);
	free(series);
	lines_free(&ls);
	sb_free(&path);
	return rc;
}

int output_dir_make(const char *dir, struct bd_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	sb_add(&sb, dir);
	int rc = 0;
	/* mkdir -p: every prefix that ends before a '/', then the whole path. */
	for (size_t i = 1; i <= sb.len && !rc; i++) {
		if (i < sb.len && sb.buf[i] != '/')
			continue;
		char saved = sb.buf[i];
		sb.buf[i] = '\0';
		if (mkdir(sb.buf, 0777) && errno != EEXIST)
			rc = bd_fail(err, BD_EIO, "cannot create directory '%s': %s", sb.buf, strerror(errno));
		sb.buf[i] = saved;
	}
	struct stat st;
	if (!rc && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
		rc = bd_fail(err, BD_EIO, "'%s' is not a directory", dir);
	sb_free(&sb);
	return rc;
}
