/* report/history.c: a benchmark's history as series per case key and host, and their change points
 * (history.h). */
#include "history.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The least degrees of freedom of the noise model's between-session part that history uses. */
#define HISTORY_NOISE_MIN_DF 5

const char *const history_verdict_names[3] = {"slower", "faster", "contended"};
const char *const history_newest_names[NEWEST_COUNT] = {"too few runs", "steady", "slower",
							 "faster", "contended", "no longer run"};

int history_options_check(const struct history_options *h, const struct verdict_rule *rule,
			  const char *command, struct history_filter *f, struct cp_options *o)
{
	if (!(h->alpha > 0 && h->alpha < 1) || h->min_segment < 2 || !(h->min_change >= 0) ||
	    h->recent < 1 || h->last < 0) {
		fprintf(stderr, "report %s: --alpha must lie in (0, 1), --min-segment be 2 or more, "
				"--recent 1 or more, --min-change and --last 0 or more\n", command);
		return EXIT_USAGE;
	}
	/* the permutation test needs 10 / alpha permutations, an unsigned count: a smaller alpha
	 * wrapped it round to a count that could never reach alpha (no change found, exit 0) */
	if (10 / h->alpha > UINT_MAX) {
		fprintf(stderr, "report %s: --alpha %g is below %.2g: its permutation test would need "
				"more than %u permutations\n", command, h->alpha, 10.0 / UINT_MAX,
			UINT_MAX);
		return EXIT_USAGE;
	}
	if (rule && !(rule->cpu_wait_gap >= 0 && rule->cpu_wait_level >= 0)) {
		fprintf(stderr, "report %s: --cpu-wait-gap and --cpu-wait-level must be 0 or more\n",
			command);
		return EXIT_USAGE;
	}
	f->label = h->label;
	f->branch = h->branch;
	f->host = h->host;
	f->last = h->last;
	*o = (struct cp_options)CP_OPTIONS_DEFAULT;
	o->alpha = h->alpha;
	o->min_segment = (size_t)h->min_segment;
	o->min_change = h->min_change;
	/* enough permutations for alpha to be reachable, with room: p resolves to 1 / (R + 1) */
	if (o->permutations + 1.0 < 10 / h->alpha)
		o->permutations = (unsigned)ceil(10 / h->alpha);
	return -1;
}

void history_filter_describe(const struct history_filter *f, struct strbuf *sb)
{
	const char *names[] = {"--case", "--label", "--branch", "--host"};
	const char *values[] = {f->case_key, f->label, f->branch, f->host};
	for (int i = 0; i < 4; i++)
		if (values[i])
			sb_addf(sb, " %s %s", names[i], values[i]);
}

static const struct run_row *run_of(const struct history_set *s, int64_t id)
{
	return db_run_find(s->runs, s->nruns, id);
}

static int text_is(const char *have, const char *want)
{
	return !want || (have && !strcmp(have, want));
}

/* What the newer runs of the key's sweep say, last being the newest run that has the key on hs's
 * host. The runs are those on the host that pass f's run filters (whatever cases they stored —
 * none, when the runner died in its first case: --case, --where and --suite pick the series,
 * never which run is the newest) and of last's sweep, by name, and its slice (--shard): a
 * nightly of two sweeps, one run each, reads each case against its own sweep's runs (another
 * sweep's run, or another shard's, does not measure it, whether complete or not). Where last's
 * sweep has no name, every run on the host of its slice counts.
 * - dropped from the sweep: the oldest complete run newer than last is hs->gone_run (never where
 *   the sweep has no name);
 * - else missing: the newest of them, newer than last, is not complete (interrupted, failed,
 *   still running) — it did not measure what it lacks, as regress fails a candidate run that is
 *   not complete: hs->broken_run, broken_row NULL (unless the key is already not ok in last). */
static void newer_runs_of_sweep(const struct history_set *s, const struct history_filter *f,
				struct history_series *hs, const struct run_row *last)
{
	const struct run_row *newest = NULL;
	if (!last)
		return;
	for (size_t k = 0; k < s->nruns; k++) {
		const struct run_row *run = &s->runs[k];
		if (!run->hostname || strcmp(run->hostname, hs->host) || !text_is(run->label, f->label) ||
		    !text_is(run->git_branch, f->branch) || !text_is(run->hostname, f->host) ||
		    db_run_time_cmp(run, last) <= 0)
			continue;
		/* the same sweep, and the same slice of it: another shard's run never has this case */
		if ((last->sweep_name && !text_is(run->sweep_name, last->sweep_name)) ||
		    run->shard_index != last->shard_index || run->shard_count != last->shard_count)
			continue;
		int complete = run->status && !strcmp(run->status, "complete");
		if (complete && last->sweep_name &&
		    (!hs->gone_run || db_run_time_cmp(run, hs->gone_run) < 0))
			hs->gone_run = run;
		if (!newest || db_run_time_cmp(run, newest) > 0)
			newest = run;
	}
	if (hs->gone_run) {
		hs->broken_run = NULL, hs->broken_row = NULL, hs->unmeasured_run = NULL;
		return;
	}
	if (newest && hs->n && !hs->broken_run &&
	    !(newest->status && !strcmp(newest->status, "complete")))
		hs->broken_run = newest;
}

/* The most a run of a session starts after the one before it ended: `runner run --repeat`
 * starts each run as the one before ends. */
#define SESSION_GAP_S 3600

/* 1 when run b began within SESSION_GAP_S of run a's end (a time that does not parse: yes). */
static int begun_soon_after(const struct run_row *a, const struct run_row *b)
{
	double end = db_iso_seconds(a->ended_at ? a->ended_at : a->started_at),
	       start = db_iso_seconds(b->started_at);
	return !(start - end > SESSION_GAP_S);
}

/* 1 when runs a and b are of one group that ran one code (commit, uncommitted changes, sweep). */
static int one_group_and_code(const struct run_row *a, const struct run_row *b)
{
	return a->group_id && b->group_id && !strcmp(a->group_id, b->group_id) &&
	       db_run_same_code(a, b);
}

/* 1 when runs a and b (of s->runs), next to each other in a series (a older), are one session:
 * one group (`runner run --repeat`'s runs) that ran one code, each of its runs from a to b begun
 * within SESSION_GAP_S of the one before it ending. A run without a group is a session of its
 * own; so is one of a group id reused with another commit or sweep, or hours later (an explicit
 * --group reused every night; older runners gave a sweep's shards the same group id every
 * night). The group's runs between a and b on b's host, of b's shard, are those the series lacks
 * (its case not ok there): the hour runs from the end of the one before b, not of a (a run of 90
 * minutes between them is no gap); other shards' runs are no part of it (shards of a reused
 * group back to back all day are not one session). A group's runs are stored one after another,
 * so by id. */
static int same_session(const struct history_set *s, const struct run_row *a,
			const struct run_row *b)
{
	if (!one_group_and_code(a, b))
		return 0;
	const struct run_row *before = a;
	if (a >= s->runs && b < s->runs + s->nruns && a < b)
		for (const struct run_row *r = a + 1; r < b; r++)
			if (one_group_and_code(r, b) && db_text_same(r->hostname, b->hostname) &&
			    r->shard_index == b->shard_index && r->shard_count == b->shard_count) {
				if (!begun_soon_after(before, r))
					return 0;
				before = r;
			}
	return begun_soon_after(before, b);
}

/* Append the points of rows[0..n-1] (one key, oldest first) on host to a new series of s. */
static int series_add(struct db *db, struct history_set *s, const struct history_filter *f,
		      struct case_row *rows, size_t n, const char *host, struct bd_error *err)
{
	struct history_series *hs = &s->series[s->n];
	memset(hs, 0, sizeof(*hs));
	hs->case_key = rows[0].case_key;
	hs->name = rows[0].name;
	hs->host = host;
	hs->points = xcalloc(n, sizeof(*hs->points));
	int rc = 0;
	const struct case_row *newest = NULL;   /* the key's row in its newest run on host */
	const struct case_row *unmeasured = NULL;   /* newest, when ok without a measured median */
	for (size_t i = 0; i < n && !rc; i++) {
		const struct run_row *run = run_of(s, rows[i].run_id);
		if (!run || strcmp(run->hostname, host))
			continue;
		/* rows come by run, then ord: a run that measured the key twice is one point, its
		 * first case (the run is the unit of evidence) */
		if (i > 0 && rows[i - 1].run_id == rows[i].run_id)
			continue;
		newest = &rows[i];
		unmeasured = NULL;
		if (rows[i].status != STATUS_OK) {
			hs->not_ok++;
			continue;
		}
		struct case_series cs = {0};
		size_t m;
		if ((rc = case_series_load(db, &rows[i], &cs, err)))
			break;
		const double *x = case_series_pick(&cs, f->pick, &m);
		struct history_point *p = &hs->points[hs->n];
		if (m == 0 || median_ci(x, m, &p->median, &p->lo, &p->hi) || !(p->median > 0)) {
			hs->not_ok++;
			unmeasured = &rows[i];
		} else {
			p->c = &rows[i];
			p->run = run;
			p->wait = rows[i].cpu_wait;
			hs->n++;
		}
		case_series_free(&cs);
	}
	if (hs->n && newest && newest->status != STATUS_OK) {   /* ok before, not ok now */
		hs->broken_row = newest;
		hs->broken_run = run_of(s, newest->run_id);
	}
	if (hs->n && unmeasured)   /* measured before, ok now but nothing to read */
		hs->unmeasured_run = run_of(s, unmeasured->run_id);
	if (newest)
		newer_runs_of_sweep(s, f, hs, run_of(s, newest->run_id));
	if (f->last > 0 && hs->n > (size_t)f->last) {
		size_t drop = hs->n - (size_t)f->last;
		memmove(hs->points, hs->points + drop, (size_t)f->last * sizeof(*hs->points));
		hs->n = (size_t)f->last;
	}
	hs->session = xcalloc(hs->n ? hs->n : 1, sizeof(*hs->session));
	for (size_t i = 0; i < hs->n; i++)
		hs->session[i] = hs->nsessions += !i || !same_session(s, hs->points[i - 1].run,
									hs->points[i].run);
	for (size_t i = 0; i < hs->n; i++)   /* from 0 */
		hs->session[i]--;
	s->n++;
	return rc;
}

size_t history_rows_select(const struct run_row *runs, size_t nruns, struct case_row *rows, size_t n,
			   const struct history_filter *f, size_t *left_out)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		const struct run_row *run = db_run_find(runs, nruns, rows[i].run_id);
		if (!run || !text_is(run->label, f->label) || !text_is(run->git_branch, f->branch) ||
		    !text_is(run->hostname, f->host)) {
			++*left_out;
			continue;
		}
		struct case_row keep = rows[i];
		rows[i] = rows[kept];
		rows[kept++] = keep;
	}
	return kept;
}

struct time_entry {
	size_t key;             /* the block of its case key, in the order the keys came */
	struct run_row when;    /* its run's id and started_at (NULL when the run is unknown) */
	struct case_row row;
};

static int cmp_time_entry(const void *a, const void *b)
{
	const struct time_entry *x = a, *y = b;
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	int c = db_run_time_cmp(&x->when, &y->when);
	return c ? c : (x->row.ord > y->row.ord) - (x->row.ord < y->row.ord);
}

void history_rows_order(const struct run_row *runs, size_t nruns, struct case_row *rows, size_t n)
{
	struct time_entry *e = xmalloc((n ? n : 1) * sizeof(*e));
	size_t key = 0;
	for (size_t i = 0; i < n; i++) {
		const struct run_row *run = db_run_find(runs, nruns, rows[i].run_id);
		key += i > 0 && strcmp(rows[i].case_key, rows[i - 1].case_key) != 0;
		e[i] = (struct time_entry){key, {.id = rows[i].run_id}, rows[i]};
		e[i].when.started_at = run ? run->started_at : NULL;
	}
	qsort(e, n, sizeof(*e), cmp_time_entry);
	for (size_t i = 0; i < n; i++)
		rows[i] = e[i].row;
	free(e);
}

/* Order of the series that moved first: slower, contended, faster, steady, too few runs, no longer
 * run. */
static int newest_rank(enum history_newest n)
{
	static const int rank[NEWEST_COUNT] = {[NEWEST_SLOWER] = 0, [NEWEST_CONTENDED] = 1,
					       [NEWEST_FASTER] = 2, [NEWEST_STEADY] = 3,
					       [NEWEST_TOO_FEW] = 4, [NEWEST_GONE] = 5};
	return rank[n];
}

struct order_entry {
	int rank;
	size_t series;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order_entry *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->series > y->series) - (x->series < y->series);
}

size_t *history_order(const struct history_set *s)
{
	struct order_entry *e = xmalloc((s->n ? s->n : 1) * sizeof(*e));
	size_t *order = xmalloc((s->n ? s->n : 1) * sizeof(*order));
	for (size_t i = 0; i < s->n; i++)
		e[i] = (struct order_entry){s->series[i].broken_run ? -1   /* not ok: first */
								   : newest_rank(s->series[i].newest),
					    i};
	qsort(e, s->n, sizeof(*e), cmp_order);
	for (size_t i = 0; i < s->n; i++)
		order[i] = e[i].series;
	free(e);
	return order;
}

int history_load(struct db *db, const struct history_filter *f, struct history_set *out,
		 struct bd_error *err)
{
	memset(out, 0, sizeof(*out));
	size_t n = 0;
	int rc = db_runs_list(db, &out->runs, &out->nruns, err);
	if (!rc)
		rc = db_cases_by_key(db, f->case_key, f->cases.suite, &out->rows, &out->nrows, err);
	if (!rc) {
		n = out->nrows;
		rc = case_rows_filter(out->rows, &n, &f->cases, "any run", err);
	}
	if (rc)
		return rc;
	n = history_rows_select(out->runs, out->nruns, out->rows, n, f, &out->runs_left_out);
	history_rows_order(out->runs, out->nruns, out->rows, n);
	/* at most one series per row: enough room whatever the hosts */
	out->series = xcalloc(n ? n : 1, sizeof(*out->series));
	for (size_t i = 0, end; i < n && !rc; i = end) {
		for (end = i + 1; end < n && !strcmp(out->rows[end].case_key, out->rows[i].case_key);)
			end++;
		/* one series per host, in order of first appearance */
		for (size_t j = i; j < end && !rc; j++) {
			const struct run_row *run = run_of(out, out->rows[j].run_id);
			int seen = 0;
			for (size_t k = i; k < j && !seen; k++)
				seen = !strcmp(run_of(out, out->rows[k].run_id)->hostname, run->hostname);
			if (!seen)
				rc = series_add(db, out, f, &out->rows[i], end - i, run->hostname, err);
		}
	}
	return rc;
}

void history_free(struct history_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->series[i].points);
		free(s->series[i].session);
		free(s->series[i].changes);
		cp_result_free(&s->series[i].cp);
	}
	free(s->series);
	db_case_rows_free(s->rows, s->nrows);
	db_run_rows_free(s->runs, s->nruns);
	memset(s, 0, sizeof(*s));
}

/* Mean cpu_wait of the points of [a, b) whose wait is known (as regress averages a side's runs);
 * -1 when none is: a run that did not record it hides nothing the others recorded. */
static double mean_wait(const struct history_series *s, size_t a, size_t b)
{
	double sum = 0;
	size_t known = 0;
	for (size_t i = a; i < b; i++)
		if (s->points[i].wait >= 0) {
			sum += s->points[i].wait;
			known++;
		}
	return known ? sum / (double)known : -1;
}

/* z of the two-sided 95% normal interval: a run's own standard error from its median's interval */
#define Z_95 1.959964

double history_segment_mean(const struct history_series *s, size_t a, size_t b)
{
	double sum = 0, session_sum = 0;
	size_t sessions = 0, runs = 0;
	for (size_t i = a; i < b; i++) {
		session_sum += log(s->points[i].median);
		runs++;
		if (i + 1 == b || s->session[i + 1] != s->session[i]) {
			sum += session_sum / (double)runs;
			sessions++;
			session_sum = 0;
			runs = 0;
		}
	}
	return sessions ? sum / (double)sessions : 0;
}

size_t history_sessions_in(const struct history_series *s, size_t a, size_t b)
{
	return b > a ? s->session[b - 1] - s->session[a] + 1 : 0;
}

/* When the newest `recent` runs hold several change points and the newest is not slower (a
 * slowdown, then a partial recovery): the newest segment against the segment before the first of
 * them — the level the window started from. Beyond min_change slower with its 95% interval above
 * 0 (the noise of the change points' intervals), the newest runs began a slower segment after
 * all: NEWEST_SLOWER (or contended, by the two segments' waits) since that first change, the net
 * change in newest_net. */
static void newest_net_slower(struct history_series *s, const struct cp_options *o,
			      const struct verdict_rule *rule, size_t recent)
{
	size_t last = s->cp.n - 1, first = last;
	while (first > 0 && s->session[s->cp.points[first - 1].index] + recent >= s->nsessions)
		first--;
	if (first == last || !(s->cp.noise >= 0) || !(s->cp.noise_df > 0))
		return;
	size_t a = first ? s->cp.points[first - 1].index : 0, b = s->cp.points[first].index,
	       c = s->cp.points[last].index;
	double net = history_segment_mean(s, c, s->n) - history_segment_mean(s, a, b);
	double half = student_t_quantile(0.975, s->cp.noise_df) * s->cp.noise *
		      sqrt(1.0 / (double)history_sessions_in(s, a, b) +
			   1.0 / (double)history_sessions_in(s, c, s->n));
	if (!(net > log1p(o->min_change)) || !(net - half > 0))
		return;
	s->newest_change = first;
	s->newest_net = expm1(net);
	s->newest = verdict_contended(mean_wait(s, c, s->n), mean_wait(s, a, b), rule)
			    ? NEWEST_CONTENDED
			    : NEWEST_SLOWER;
}

/* When the newest change is contended because the runs before it waited (contention that has
 * ended: the newest runs are the quiet, faster side), today's runs can still be judged against
 * the quiet past: back over the segments that were slower than the newest one and waited for a
 * CPU (as the rule says, each against the newest), to the newest segment whose comparison with
 * it is not contended (quiet_first, quiet_last). The newest segment against that one, on an
 * interval at the detector's alpha (two-sided):
 * NEWEST_SLOWER beyond min_change with the interval above 0 (a slowdown the contention hid),
 * NEWEST_FASTER beyond it below 0, NEWEST_STEADY otherwise; newest_change stays the newest
 * change. A segment met on the way back that is faster than the newest one with the newest
 * having waited more, or no such segment (contention from the first run), leaves it contended:
 * cannot tell. */
static void newest_past_contention(struct history_series *s, const struct cp_options *o,
				   const struct verdict_rule *rule)
{
	size_t last = s->cp.n - 1, c = s->cp.points[last].index;
	if (s->changes[last].verdict != HISTORY_CONTENDED || !(s->changes[last].cp.change < 0) ||
	    !(s->cp.noise >= 0) || !(s->cp.noise_df > 0))
		return;
	double y_new = history_segment_mean(s, c, s->n), wait_new = mean_wait(s, c, s->n);
	for (size_t k = last + 1; k-- > 0;) {   /* segment k: [cp[k - 1], cp[k]) */
		size_t a = k ? s->cp.points[k - 1].index : 0, b = s->cp.points[k].index;
		double net = y_new - history_segment_mean(s, a, b), wait = mean_wait(s, a, b);
		if (net < 0 && verdict_contended(wait, wait_new, rule))
			continue;   /* slower than today's runs, and it waited: contention explains it */
		if (net >= 0 && verdict_contended(wait_new, wait, rule))
			return;     /* the newest runs are the slower side here and waited more */
		double half = student_t_quantile(1 - o->alpha / 2, s->cp.noise_df) * s->cp.noise *
			      sqrt(1.0 / (double)history_sessions_in(s, a, b) +
				   1.0 / (double)history_sessions_in(s, c, s->n));
		s->newest_net = expm1(net);
		s->quiet_first = s->points[a].run;
		s->quiet_last = s->points[b - 1].run;
		s->newest = net > log1p(o->min_change) && net - half > 0	  ? NEWEST_SLOWER
			    : net < -log1p(o->min_change) && net + half < 0 ? NEWEST_FASTER
									    : NEWEST_STEADY;
		return;
	}
}

static int series_detect(struct history_series *s, const struct cp_options *o,
			 const struct verdict_rule *rule, size_t recent)
{
	double *y = xmalloc((s->n ? s->n : 1) * sizeof(*y)), *se = xmalloc((s->n ? s->n : 1) * sizeof(*se));
	for (size_t i = 0; i < s->n; i++) {
		const struct history_point *p = &s->points[i];
		y[i] = log(p->median);
		se[i] = p->lo > 0 && p->hi > p->lo ? (log(p->hi) - log(p->lo)) / (2 * Z_95) : 0;
	}
	struct cp_series series = {.y = y, .se = se, .n = s->n, .run_noise = s->run_noise,
				   .run_noise_within = s->run_noise_within, .session = s->session};
	int rc = changepoints_find(&series, o, &s->cp);
	free(y);
	free(se);
	if (rc)
		return rc;
	s->changes = xcalloc(s->cp.n ? s->cp.n : 1, sizeof(*s->changes));
	for (size_t i = 0; i < s->cp.n; i++) {
		struct history_change *c = &s->changes[i];
		size_t a = i ? s->cp.points[i - 1].index : 0,
		       b = i + 1 < s->cp.n ? s->cp.points[i + 1].index : s->n;
		c->cp = s->cp.points[i];
		c->wait_before = mean_wait(s, a, c->cp.index);
		c->wait_after = mean_wait(s, c->cp.index, b);
		c->verdict = c->cp.change > 0 ? HISTORY_SLOWER : HISTORY_FASTER;
		/* the side that looks slower waited for a CPU: contention may explain it (regress's
		 * rule, on the segments' mean waits) */
		double slow = c->cp.change > 0 ? c->wait_after : c->wait_before,
		       fast = c->cp.change > 0 ? c->wait_before : c->wait_after;
		if (verdict_contended(slow, fast, rule))
			c->verdict = HISTORY_CONTENDED;
	}
	/* the newest session against the rest of its segment: 2 sessions or more */
	size_t from = s->cp.n ? s->cp.points[s->cp.n - 1].index : 0, newest = s->n;
	while (newest > 0 && s->session[newest - 1] == s->session[s->n - 1])
		newest--;
	if (history_sessions_in(s, from, s->n) >= 3 && s->cp.noise > 0) {
		double off = history_segment_mean(s, newest, s->n) -
			     history_segment_mean(s, from, newest);
		if (fabs(off) > 3 * s->cp.noise)
			s->newest_off = expm1(off);
	}
	s->newest = NEWEST_STEADY;
	if (s->nsessions < 2 * o->min_segment)
		s->newest = NEWEST_TOO_FEW;
	else if (s->cp.n && s->session[s->cp.points[s->cp.n - 1].index] + recent >= s->nsessions) {
		s->newest_change = s->cp.n - 1;
		s->newest_net = s->changes[s->cp.n - 1].cp.change;
		static const enum history_newest of_verdict[] = {NEWEST_SLOWER, NEWEST_FASTER,
								 NEWEST_CONTENDED};
		s->newest = of_verdict[s->changes[s->cp.n - 1].verdict];
		if (s->newest != NEWEST_SLOWER)
			newest_net_slower(s, o, rule, recent);
		if (s->newest == NEWEST_CONTENDED && s->newest_change == s->cp.n - 1)
			newest_past_contention(s, o, rule);
	}
	if (s->gone_run)
		s->newest = NEWEST_GONE;
	return 0;
}

int history_noise(struct db *db, struct history_set *s, enum series_pick pick,
		  const struct verdict_rule *rule, struct bd_error *err)
{
	int64_t *systems = xcalloc(s->n + 1, sizeof(*systems));
	struct noise_data *data = xcalloc(s->n + 1, sizeof(*data));
	struct noise_model *models = xcalloc(s->n + 1, sizeof(*models));
	size_t nsystems = 0;
	int rc = 0;
	for (size_t i = 0; i < s->n && !rc; i++) {
		struct history_series *hs = &s->series[i];
		if (!hs->n)
			continue;
		int64_t system = hs->points[0].run->system_id;
		size_t k = 0;
		while (k < nsystems && systems[k] != system)
			k++;
		if (k == nsystems) {   /* the system's model, once */
			systems[nsystems++] = system;
			rc = noise_history_load(db, &system, 1, (int)pick, NULL, 0, NULL, NULL, &data[k],
						err);
			if (!rc)
				rc = noise_model_fit(&data[k], &rule->assumed, &models[k]);
			if (rc)
				break;
		}
		/* only a model that measured both parts, the part a later run adds from several
		 * sessions (two sessions of one history would make a step its noise) */
		long c = noise_data_find(&data[k], hs->case_key);
		if (models[k].basis == NOISE_MEASURED && models[k].between_df >= HISTORY_NOISE_MIN_DF &&
		    c >= 0) {
			hs->run_noise = noise_run_sd(&models[k], c);
			hs->run_noise_within = noise_within_sd(&models[k], c);
		}
	}
	for (size_t k = 0; k < nsystems; k++) {
		noise_data_free(&data[k]);
		noise_model_free(&models[k]);
	}
	free(systems);
	free(data);
	free(models);
	return rc;
}

int history_detect(struct history_set *s, const struct cp_options *o,
		   const struct verdict_rule *rule, size_t recent)
{
	int rc = 0;
	/* contended is about the side that looks slower (regress's rule): a slowdown after runs that
	 * waited for a CPU is still one, the quiet newer runs being slower all the same */
	struct verdict_rule slower_side = *rule;
	slower_side.either_contended = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : rc)
	for (size_t i = 0; i < s->n; i++)
		rc |= series_detect(&s->series[i], o, &slower_side, recent);
	return rc ? BD_EINVAL : 0;
}

const struct history_change *history_change_at(const struct history_series *s, size_t i)
{
	for (size_t k = 0; k < s->cp.n; k++)
		if (s->changes[k].cp.index == i)
			return &s->changes[k];
	return NULL;
}

void history_date(const char *iso, char *out, size_t n)
{
	if (iso && strlen(iso) >= 16 && iso[10] == 'T')
		snprintf(out, n, "%.10s %.5s", iso, iso + 11);
	else
		snprintf(out, n, "%s", iso ? iso : "");
}
