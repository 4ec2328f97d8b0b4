/* report/noise.c: the noise model whose unit is the run (noise.h says what it is; docs/
 * performance.md, "Measurement validity", why and how well it works): the sessions' statistics,
 * the fit of the two components pooled over cases, the variance of a comparison, and reading the
 * history of a system — stored summaries where the runner folded them, samples where not. */
#include "noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "xalloc.h"

const char *const noise_basis_names[3] = {"measured", "between sessions assumed", "assumed"};

/* Median of chi-square with one degree of freedom: the median of D^2 / E[D^2] for a normal D. */
#define CHI2_1_MEDIAN 0.4549364231195724
/* Degrees of freedom of the between part per consecutive difference of history sessions kept:
 * 2/3, for consecutive differences share a session (their correlation is -1/2). The contrasts of
 * a side's sessions are independent: 1 each. */
#define DF_PER_DIFF (2.0 / 3.0)
/* A difference beyond outlier_cutoff(n) at the robust scale is a change, not noise: it is left out
 * of the mean of squares that estimates the between part. */
/* The median's efficiency against the mean of squares for a chi-square(1) scale: the degrees of
 * freedom of the robust scale of n differences are about this times n. */
#define MEDIAN_SCALE_EFFICIENCY 0.37

/* The cutoff for n differences: the 0.999 quantile of F(1, nu), nu the robust scale's degrees of
 * freedom (at least 1). Chi-square(1)'s 0.999 quantile (10.83) holds only for a scale known
 * exactly; from few differences the median's own error made that cutoff leave out ordinary
 * differences, and the between part came out small: one-sided t tests on 3 one-run sessions a
 * side rejected 1.6% of A/A comparisons at a nominal 1% (0.95% with this cutoff; 20,000 planted
 * trials, docs/performance.md). As n grows it tends to 10.83. */
static double outlier_cutoff(size_t n)
{
	double nu = MEDIAN_SCALE_EFFICIENCY * (double)n;
	return f_quantile(0.999, 1, nu > 1 ? nu : 1);
}
/* The cases of one run move together in part (a run's shift is partly shared by its cases: half
 * of its variance on planted data, and measured on this machine's runs, docs/performance.md),
 * so K cases pooled are worth fewer than K independent ones: their variance estimate has the
 * degrees of freedom of K / (1 + (K - 1) rho^2) cases, rho this correlation. */
#define CASE_CORRELATION 0.5
/* A case is noisier than the pool when its own spread exceeds this quantile of what the pooled
 * one allows (an F test of its variance against the pool's). */
#define NOISIER_LEVEL 0.95

/* ---- the data ------------------------------------------------------------------------------- */

long noise_data_find(const struct noise_data *d, const char *case_key)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->cases[i].case_key, case_key))
			return (long)i;
	return -1;
}

static struct noise_case *case_get(struct noise_data *d, const char *case_key)
{
	long at = noise_data_find(d, case_key);
	if (at >= 0)
		return &d->cases[at];
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 32;
		d->cases = xrealloc(d->cases, d->cap * sizeof(*d->cases));
	}
	struct noise_case *c = &d->cases[d->n++];
	memset(c, 0, sizeof(*c));
	c->case_key = xstrdup(case_key);
	return c;
}

static struct noise_session *session_get(struct noise_case *c, int source, const char *key,
					 const char *code)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->sessions[i].source == source && !strcmp(c->sessions[i].key, key))
			return &c->sessions[i];
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->sessions = xrealloc(c->sessions, c->cap * sizeof(*c->sessions));
	}
	struct noise_session *s = &c->sessions[c->n++];
	memset(s, 0, sizeof(*s));
	s->source = source;
	snprintf(s->key, sizeof(s->key), "%s", key);
	snprintf(s->code, sizeof(s->code), "%s", code ? code : "");
	return s;
}

static void at_keep_first(struct noise_session *s, const char *at)
{
	if (!s->at[0] || (at && at[0] && strcmp(at, s->at) < 0))
		snprintf(s->at, sizeof(s->at), "%s", at ? at : "");
}

int noise_data_add_run(struct noise_data *d, const char *case_key, int source, const char *session,
		       const char *code, const char *at, double y)
{
	struct noise_session *s = session_get(case_get(d, case_key), source, session, code);
	at_keep_first(s, at);
	s->runs++;
	double delta = y - s->mean;
	s->mean += delta / (double)s->runs;
	s->ss += delta * (y - s->mean);
	return 0;
}

int noise_data_add_session(struct noise_data *d, const char *case_key,
			   const struct noise_session *add)
{
	if (add->runs == 0)
		return 0;
	struct noise_session *s = session_get(case_get(d, case_key), add->source, add->key,
					      add->code);
	at_keep_first(s, add->at);
	/* Chan et al.'s combination of two sets' counts, means and sums of squares */
	double n1 = (double)s->runs, n2 = (double)add->runs, n = n1 + n2;
	double delta = add->mean - s->mean;
	s->ss += add->ss + delta * delta * n1 * n2 / n;
	s->mean += delta * n2 / n;
	s->runs += add->runs;
	return 0;
}

void noise_data_free(struct noise_data *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->cases[i].case_key);
		free(d->cases[i].sessions);
	}
	free(d->cases);
	memset(d, 0, sizeof(*d));
}

/* ---- the fit -------------------------------------------------------------------------------- */

/* A difference of two consecutive sessions of one source: D^2, and the within part's factor
 * 1/n_a + 1/n_b in its expectation 2 s_b^2 + s_w^2 (1/n_a + 1/n_b). */
struct session_diff {
	double d2, c;
	size_t case_index;
	double df;    /* degrees of freedom it carries: DF_PER_DIFF, or 1 */
	int change;   /* beyond what the pool calls noise: a real change */
};

static int cmp_session_time(const void *a, const void *b)
{
	const struct noise_session *x = *(const struct noise_session *const *)a,
				   *y = *(const struct noise_session *const *)b;
	if (x->source != y->source)
		return x->source - y->source;
	int code = strcmp(x->code, y->code);
	if (code)
		return code;
	int t = strcmp(x->at, y->at);
	return t ? t : strcmp(x->key, y->key);
}

static void diff_add(struct session_diff **out, size_t *count, size_t *cap,
		     struct session_diff d)
{
	if (*count == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*out = xrealloc(*out, *cap * sizeof(**out));
	}
	(*out)[(*count)++] = d;
}

/* Every case's differences of sessions, as D^2 with E[D^2] = 2 s_b^2 + s_w^2 c. History (source
 * 0): consecutive sessions of one code in time order, which a step between codes never enters
 * and a step within one code enters twice. A side of a comparison (source 1 and up), one
 * population by the user's choice: its Helmert contrasts in time order — each session against
 * the mean of the sessions before it, scaled to that form — which are independent and use every
 * session's information. */
static struct session_diff *collect_diffs(const struct noise_data *d, size_t *n)
{
	size_t cap = 0, count = 0;
	struct session_diff *out = NULL;
	for (size_t k = 0; k < d->n; k++) {
		const struct noise_case *c = &d->cases[k];
		const struct noise_session **order = xcalloc(c->n, sizeof(*order));
		for (size_t i = 0; i < c->n; i++)
			order[i] = &c->sessions[i];
		qsort(order, c->n, sizeof(*order), cmp_session_time);
		/* walk the runs of equal (source, code): [start, i) */
		double sum = 0, inv_runs = 0;   /* of the sessions so far in the group */
		size_t start = 0;
		for (size_t i = 0; i < c->n; i++) {
			const struct noise_session *b = order[i];
			if (i > start && (b->source != order[start]->source ||
					  strcmp(b->code, order[start]->code))) {
				start = i;
				sum = inv_runs = 0;
			}
			size_t j = i - start;   /* sessions before b in its group */
			if (j > 0 && b->runs) {
				if (b->source == 0) {
					const struct noise_session *a = order[i - 1];
					double delta = b->mean - a->mean;
					diff_add(&out, &count, &cap,
						 (struct session_diff){delta * delta,
								       1 / (double)a->runs +
									       1 / (double)b->runs,
								       k, DF_PER_DIFF, 0});
				} else {
					/* D = b - mean(before); var = s_b^2 (1 + 1/j) + s_w^2 (1/n_b +
					 * sum 1/n / j^2); scaled by 2 / (1 + 1/j) */
					double delta = b->mean - sum / (double)j, f = 2 / (1 + 1 / (double)j);
					double cw = 1 / (double)b->runs + inv_runs / ((double)j * (double)j);
					diff_add(&out, &count, &cap,
						 (struct session_diff){f * delta * delta, f * cw, k, 1, 0});
				}
			}
			if (b->runs) {
				sum += b->mean;
				inv_runs += 1 / (double)b->runs;
			}
		}
		free(order);
	}
	*n = count;
	return out;
}

static double median_of(double *x, size_t n)
{
	return n ? median_inplace(x, n) : 0;
}

/* The between part s_b^2 >= 0 for which the median of D^2 / (2 s_b^2 + s_w^2 c) over the
 * differences is the median of chi-square(1): a scale estimate that half the differences can be
 * real changes without moving. */
static double between_median(const struct session_diff *diffs, size_t n, double within)
{
	double *ratio = xcalloc(n, sizeof(*ratio));
	double max_d2 = 0;
	for (size_t i = 0; i < n; i++)
		max_d2 = fmax(max_d2, diffs[i].d2);
	double lo = 0, hi = max_d2 > 0 ? max_d2 : 1, g = 0;
	/* at g = 0: ratios of a within part alone (infinite where it is 0 and D is not) */
	for (size_t i = 0; i < n; i++) {
		double v = within * diffs[i].c;
		ratio[i] = v > 0 ? diffs[i].d2 / v : diffs[i].d2 > 0 ? INFINITY : 0;
	}
	if (median_of(ratio, n) <= CHI2_1_MEDIAN) {
		free(ratio);
		return 0;
	}
	for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
		g = 0.5 * (lo + hi);
		for (size_t i = 0; i < n; i++) {
			double v = 2 * g + within * diffs[i].c;
			ratio[i] = v > 0 ? diffs[i].d2 / v : 0;
		}
		if (median_of(ratio, n) > CHI2_1_MEDIAN)
			lo = g;
		else
			hi = g;
	}
	free(ratio);
	return 0.5 * (lo + hi);
}

/* The between part from the differences: the robust (median) scale picks out the differences
 * that are changes (beyond outlier_cutoff(n) at that scale); the mean of squares of the others,
 * which is efficient where the median is not (0.37 of it), is the estimate. Sets *kept to how
 * many differences it stands on, *df to their degrees of freedom. */
static double between_robust(const struct session_diff *diffs, size_t n, double within,
			     size_t *kept, double *df)
{
	double g = between_median(diffs, n, within), sum = 0, csum = 0, cutoff = outlier_cutoff(n);
	*kept = 0;
	*df = 0;
	for (size_t i = 0; i < n; i++) {
		double v = 2 * g + within * diffs[i].c;
		if (v > 0 && diffs[i].d2 / v > cutoff)
			continue;
		sum += diffs[i].d2;
		csum += diffs[i].c;
		*df += diffs[i].df;
		(*kept)++;
	}
	if (!*kept)
		return g;
	/* E[D^2] = 2 s_b^2 + s_w^2 c, over the kept ones */
	double est = (sum - within * csum) / (2 * (double)*kept);
	return est > 0 ? est : 0;
}

/* The effective degrees of freedom of df spread over k cases that move together in part. */
static double case_correlated_df(double df, size_t k)
{
	if (k < 2)
		return df;
	return df / (1 + ((double)k - 1) * CASE_CORRELATION * CASE_CORRELATION);
}

/* The pooled parts from the cases not left out (skip[k]), into m; marks the differences taken
 * as real changes (diffs[i].change). */
static void fit_pool(const struct noise_data *d, struct session_diff *diffs, size_t ndiffs,
		     const unsigned char *skip, const struct noise_assumed *a, struct noise_model *m)
{
	double ss = 0, df_raw = 0;
	size_t within_cases = 0;
	m->sessions = m->runs = 0;
	for (size_t k = 0; k < d->n; k++) {
		const struct noise_case *c = &d->cases[k];
		double df_case = 0;
		size_t runs = 0;
		m->sessions = c->n > m->sessions ? c->n : m->sessions;
		for (size_t i = 0; i < c->n; i++) {
			runs += c->sessions[i].runs;
			if (c->sessions[i].runs >= 2 && !skip[k]) {
				ss += c->sessions[i].ss;
				df_case += (double)c->sessions[i].runs - 1;
			}
		}
		m->runs = runs > m->runs ? runs : m->runs;
		df_raw += df_case;
		within_cases += df_case > 0;
	}
	/* the differences of the cases taken, gathered at the front of a copy */
	struct session_diff *taken = xcalloc(ndiffs + 1, sizeof(*taken));
	size_t ntaken = 0, diff_cases = 0;
	for (size_t i = 0; i < ndiffs; i++)
		if (!skip[diffs[i].case_index]) {
			diff_cases += !ntaken || diffs[i].case_index != taken[ntaken - 1].case_index;
			taken[ntaken++] = diffs[i];
		}
	m->within_var = m->within_df = 0;
	if (df_raw > 0) {
		m->within_var = ss / df_raw;
		m->within_df = case_correlated_df(df_raw, within_cases);
	}
	m->diffs = ndiffs;
	if (ntaken > 0) {
		size_t kept;
		double df;
		m->basis = NOISE_MEASURED;
		m->between_var = between_robust(taken, ntaken, m->within_var, &kept, &df);
		m->between_df = case_correlated_df(df, diff_cases);
		m->changes = ntaken - kept;
		/* mark every difference (of every case) that this pool calls a change; a case with
		 * more than a quarter of its differences beyond (and more than one) is not changing
		 * that often: it is noisier, and none of its differences is a change */
		double cutoff = outlier_cutoff(ntaken);
		for (size_t i = 0, start = 0; i < ndiffs; i++) {
			double v = 2 * m->between_var + m->within_var * diffs[i].c;
			diffs[i].change = v > 0 && diffs[i].d2 / v > cutoff;
			if (i + 1 < ndiffs && diffs[i + 1].case_index == diffs[i].case_index)
				continue;
			size_t flagged = 0, count = i + 1 - start;
			for (size_t j = start; j <= i; j++)
				flagged += diffs[j].change;
			if (flagged > 1 && 4 * flagged > count)
				for (size_t j = start; j <= i; j++)
					diffs[j].change = 0;
			start = i + 1;
		}
	} else if (df_raw > 0) {
		m->basis = NOISE_BETWEEN_ASSUMED;
		m->between_var = a->session_ratio * m->within_var;
		m->between_df = m->within_df;
	} else {
		m->basis = NOISE_ASSUMED;
		double total = a->run_noise * a->run_noise;
		m->between_var = total * a->session_ratio / (1 + a->session_ratio);
		m->within_var = total / (1 + a->session_ratio);
		m->between_df = m->within_df = INFINITY;
	}
	free(taken);
}

/* Each case's own spread in units of what the pool expects (its sum of (y - mean)^2 / s_w^2 over
 * sessions and D^2 / E[D^2] over the differences that are not changes, per degree of freedom),
 * against the F distribution of such a ratio at the pool's degrees of freedom: beyond its
 * NOISIER_LEVEL quantile the case is noisier. Sets m's scales; returns how many. */
static size_t mark_noisier(const struct noise_data *d, const struct session_diff *diffs,
			   size_t ndiffs, struct noise_model *m)
{
	size_t count = 0, at = 0;
	double pool_df = m->within_df + (m->basis == NOISE_MEASURED ? m->between_df : 0);
	for (size_t k = 0; k < d->n; k++) {
		const struct noise_case *c = &d->cases[k];
		double num = 0, den = 0;
		m->scale[k] = 1;
		m->scale_df[k] = 0;
		if (m->within_var > 0)
			for (size_t i = 0; i < c->n; i++)
				if (c->sessions[i].runs >= 2) {
					num += c->sessions[i].ss / m->within_var;
					den += (double)c->sessions[i].runs - 1;
				}
		for (; at < ndiffs && diffs[at].case_index == k; at++) {
			double v = 2 * m->between_var + m->within_var * diffs[at].c;
			if (m->basis == NOISE_MEASURED && v > 0 && !diffs[at].change) {
				num += diffs[at].d2 / v;
				den += 1;
			}
		}
		if (den < 1 || !(pool_df > 0))
			continue;
		double ratio = num / den;
		if (ratio > 1 && f_quantile(NOISIER_LEVEL, den, pool_df) < ratio) {
			m->scale[k] = ratio;
			m->scale_df[k] = den;
			count++;
		}
	}
	return count;
}

int noise_model_fit(const struct noise_data *d, const struct noise_assumed *a,
		    struct noise_model *m)
{
	memset(m, 0, sizeof(*m));
	m->assumed = *a;
	m->ncases = d->n;
	m->scale = xcalloc(d->n + 1, sizeof(*m->scale));
	m->scale_df = xcalloc(d->n + 1, sizeof(*m->scale_df));
	unsigned char *skip = xcalloc(d->n + 1, 1);
	size_t ndiffs;
	struct session_diff *diffs = collect_diffs(d, &ndiffs);
	fit_pool(d, diffs, ndiffs, skip, a, m);
	for (size_t k = 0; k < d->n; k++)
		m->scale[k] = 1;
	/* noisier cases found against the pool of all, then the pool made again without them (so
	 * that they do not inflate the others' spread) and every case judged against that. When
	 * every case is noisier (one case, whose differences the pool's own scale calls changes
	 * too often to be changes), no pool is left to make again: the first one stays, and each
	 * case its own spread against it (made again from nothing, the pool was the assumed run
	 * noise, called "assumed" with the data there, and the scales stayed those of the first) */
	size_t noisier;
	if (m->basis != NOISE_ASSUMED && (noisier = mark_noisier(d, diffs, ndiffs, m))) {
		size_t left = 0;
		for (size_t k = 0; k < d->n; k++) {
			skip[k] = m->scale[k] > 1;
			left += !skip[k];
		}
		if (left) {
			fit_pool(d, diffs, ndiffs, skip, a, m);
			if (m->basis != NOISE_ASSUMED)
				m->noisier = mark_noisier(d, diffs, ndiffs, m);
		} else {
			m->noisier = noisier;
		}
	}
	free(skip);
	free(diffs);
	return 0;
}

void noise_model_free(struct noise_model *m)
{
	free(m->scale);
	free(m->scale_df);
	memset(m, 0, sizeof(*m));
}

static double scale_of(const struct noise_model *m, long k)
{
	return k >= 0 && (size_t)k < m->ncases ? m->scale[k] : 1;
}

double noise_run_sd(const struct noise_model *m, long case_index)
{
	return sqrt(scale_of(m, case_index) * (m->within_var + m->between_var));
}

double noise_within_sd(const struct noise_model *m, long case_index)
{
	return sqrt(scale_of(m, case_index) * m->within_var);
}

/* Sum over the sessions of both sides of (share of c's runs - share of b's runs)^2. */
static double session_shares(const struct noise_side *b, const struct noise_side *c)
{
	double sum = 0;
	const struct noise_side *sides[2] = {b, c};
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < sides[s]->n; i++) {
			const char *key = sides[s]->sessions[i];
			int first = 1;   /* count each session once, where it first appears */
			for (int t = 0; t <= s && first; t++)
				for (size_t j = 0; j < (t == s ? i : sides[t]->n) && first; j++)
					first = strcmp(sides[t]->sessions[j], key) != 0;
			if (!first)
				continue;
			double wb = 0, wc = 0;
			for (size_t j = 0; j < b->n; j++)
				wb += !strcmp(b->sessions[j], key);
			for (size_t j = 0; j < c->n; j++)
				wc += !strcmp(c->sessions[j], key);
			double diff = wc / (double)c->n - wb / (double)b->n;
			sum += diff * diff;
		}
	return sum;
}

void noise_diff_var(const struct noise_model *m, long case_index, const struct noise_side *b,
		    const struct noise_side *c, double within_b, double within_c, double *var,
		    double *df)
{
	double lambda = scale_of(m, case_index);
	double shares = session_shares(b, c), runs = 1 / (double)b->n + 1 / (double)c->n;
	double vb = lambda * m->between_var * shares, vw = lambda * m->within_var * runs;
	*var = vb + vw;
	if (m->basis == NOISE_ASSUMED) {
		*var += within_b / (double)b->n + within_c / (double)c->n;
		*df = INFINITY;
		return;
	}
	if (m->basis == NOISE_BETWEEN_ASSUMED) {
		*df = m->within_df;   /* both parts are multiples of the within estimate */
	} else {
		double den = 0;
		if (vb > 0 && isfinite(m->between_df))
			den += vb * vb / m->between_df;
		if (vw > 0 && isfinite(m->within_df))
			den += vw * vw / m->within_df;
		*df = den > 0 ? (*var) * (*var) / den : INFINITY;
	}
	if (lambda > 1 && case_index >= 0)
		*df = fmin(*df, m->scale_df[case_index]);
}

size_t noise_runs_for(const struct noise_model *m, long case_index, double var_goal)
{
	double per_run = scale_of(m, case_index) * (m->within_var + m->between_var);
	if (!(var_goal > 0))
		return 0;
	double n = ceil(2 * per_run / var_goal);
	return n < 1 ? 1 : n > 1e6 ? 0 : (size_t)n;
}

/* ---- from the database ------------------------------------------------------------------- */

int noise_run_y(const struct case_series *s, int pick, double *y, double *within_var)
{
	size_t n;
	const double *x = case_series_pick(s, (enum series_pick)pick, &n);
	double med, lo, hi;
	if (n == 0 || median_ci(x, n, &med, &lo, &hi) || !(med > 0) || !isfinite(med))
		return BD_EINVAL;
	*y = log(med);
	double half = lo > 0 ? (log(hi) - log(lo)) / (2 * 1.959964) : 0;
	*within_var = half * half;
	return 0;
}

void noise_session_key(const char *group_id, const char *uuid, char out[DB_SESSION_MAX])
{
	if (group_id && group_id[0])
		snprintf(out, DB_SESSION_MAX, "%s", group_id);
	else
		snprintf(out, DB_SESSION_MAX, "run:%s", uuid ? uuid : "");
}

static int has_id(const int64_t *ids, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* The sessions history takes from one system: keys of the most recent NOISE_HISTORY_SESSIONS
 * sessions of complete runs, none that holds an excluded run. */
struct history_pick {
	char (*keys)[DB_SESSION_MAX];
	size_t n;
	int (*accept)(const char *case_key, void *ctx);
	void *ctx;
	struct noise_data *d;
};

static int chosen(const struct history_pick *h, const char *session)
{
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->keys[i], session))
			return 1;
	return 0;
}

static int stored_row(const struct noise_session_row *r, void *ctx)
{
	struct history_pick *h = ctx;
	if (!chosen(h, r->session) || (h->accept && !h->accept(r->case_key, h->ctx)))
		return 0;
	struct noise_session s = {.source = 0, .runs = (size_t)r->runs, .mean = r->mean_log,
				  .ss = r->ss_log};
	snprintf(s.key, sizeof(s.key), "%s", r->session);
	snprintf(s.code, sizeof(s.code), "%s", r->code);
	snprintf(s.at, sizeof(s.at), "%s", r->first_at);
	noise_data_add_session(h->d, r->case_key, &s);
	return 0;
}

/* Add the y of every ok case of run (that accept takes) to d as (source, session). */
static int add_run_cases(struct db *db, const struct run_session *run, int pick, int source,
			 int (*accept)(const char *case_key, void *ctx), void *ctx,
			 struct noise_data *d, struct bd_error *err)
{
	struct case_row *rows = NULL;
	size_t n = 0;
	int rc = db_run_own_cases(db, run->id, &rows, &n, err);
	char session[DB_SESSION_MAX];
	noise_session_key(run->group_id, run->uuid, session);
	unsigned char *first = case_rows_first_of_key(rows, n);   /* a run's copies count once */
	for (size_t i = 0; i < n && !rc; i++) {
		if (rows[i].status != STATUS_OK || !first[i] ||
		    (accept && !accept(rows[i].case_key, ctx)))
			continue;
		struct case_series s;
		if ((rc = case_series_load(db, &rows[i], &s, err)))
			break;
		double y, wv;
		if (!noise_run_y(&s, pick, &y, &wv))
			noise_data_add_run(d, rows[i].case_key, source, session, run->code,
					   run->started_at, y);
		case_series_free(&s);
	}
	free(first);
	db_case_rows_free(rows, n);
	return rc;
}

int noise_history_load(struct db *db, const int64_t *systems, size_t nsystems, int pick,
		       const int64_t *exclude, size_t nexclude,
		       int (*keys)(const char *case_key, void *ctx), void *ctx,
		       struct noise_data *d, struct bd_error *err)
{
	int rc = 0;
	for (size_t sys = 0; sys < nsystems && !rc; sys++) {
		if (has_id(systems, sys, systems[sys]))
			continue;   /* named twice */
		struct run_session *runs = NULL;
		size_t nruns = 0;
		if ((rc = db_run_sessions(db, systems[sys], 0, &runs, &nruns, err)))
			break;
		char (*session)[DB_SESSION_MAX] = xcalloc(nruns ? nruns : 1, sizeof(*session));
		char (*excluded)[DB_SESSION_MAX] = xcalloc(nruns ? nruns : 1, sizeof(*excluded));
		size_t nexcl = 0;
		for (size_t i = 0; i < nruns; i++) {
			noise_session_key(runs[i].group_id, runs[i].uuid, session[i]);
			if (has_id(exclude, nexclude, runs[i].id))
				snprintf(excluded[nexcl++], DB_SESSION_MAX, "%s", session[i]);
		}
		/* the most recent sessions first: walk the runs from the newest */
		struct history_pick h = {xcalloc(NOISE_HISTORY_SESSIONS, sizeof(*h.keys)), 0, keys, ctx,
					 d};
		for (size_t i = nruns; i-- > 0 && h.n < NOISE_HISTORY_SESSIONS;) {
			int skip = strcmp(runs[i].status, "complete") != 0;
			for (size_t e = 0; e < nexcl && !skip; e++)
				skip = !strcmp(excluded[e], session[i]);
			if (!skip && !chosen(&h, session[i]))
				snprintf(h.keys[h.n++], DB_SESSION_MAX, "%s", session[i]);
		}
		rc = db_noise_sessions_list(db, systems[sys], series_pick_names[pick], stored_row, &h,
					    err);
		for (size_t i = 0; i < nruns && !rc; i++)
			if (!runs[i].folded && !strcmp(runs[i].status, "complete") &&
			    chosen(&h, session[i]))
				rc = add_run_cases(db, &runs[i], pick, 0, keys, ctx, d, err);
		free(h.keys);
		free(session);
		free(excluded);
		free(runs);
	}
	return rc;
}

int noise_fold_run(struct db *db, int64_t run_id, int *folded, struct bd_error *err)
{
	struct run_session *run = NULL;
	struct case_row *rows = NULL;
	struct noise_fold_entry *entries = NULL;
	unsigned char *first = NULL;
	size_t nrun = 0, n = 0, count = 0;
	*folded = 0;
	int rc = db_run_sessions(db, 0, run_id, &run, &nrun, err);
	if (rc || nrun != 1 || run->folded || strcmp(run->status, "complete"))
		goto done;
	if ((rc = db_run_own_cases(db, run_id, &rows, &n, err)))
		goto done;
	char session[DB_SESSION_MAX];
	noise_session_key(run->group_id, run->uuid, session);
	entries = xcalloc(4 * n + 1, sizeof(*entries));
	first = case_rows_first_of_key(rows, n);   /* a run's copies of a case count once */
	for (size_t i = 0; i < n && !rc; i++) {
		if (rows[i].status != STATUS_OK || !first[i])
			continue;
		struct case_series s;
		if ((rc = case_series_load(db, &rows[i], &s, err)))
			break;
		for (int pick = 0; pick < 4; pick++) {
			double y, wv;
			if (noise_run_y(&s, pick, &y, &wv))
				continue;
			entries[count++] = (struct noise_fold_entry){
				run->system_id, rows[i].case_key, series_pick_names[pick], session,
				run->code, run->started_at, y};
		}
		case_series_free(&s);
	}
	if (!rc)
		rc = db_noise_fold(db, run_id, entries, count, folded, err);
done:
	free(entries);
	free(first);
	db_case_rows_free(rows, n);
	free(run);
	return rc;
}

/* sd of y as a percentage of the median (exp(sd) - 1) */
static double pct(double var)
{
	return 100 * expm1(sqrt(var > 0 ? var : 0));
}

void noise_model_describe(const struct noise_model *m, struct strbuf *sb)
{
	double total = m->within_var + m->between_var;
	switch (m->basis) {
	case NOISE_MEASURED: {
		char parts[96] = "each session one run: the two parts are not told apart";
		if (m->within_df > 0)
			snprintf(parts, sizeof(parts), "within a session %.2g%%, between sessions %.2g%%",
				 pct(m->within_var), pct(m->between_var));
		sb_addf(sb, "noise between runs, measured: a run made at another time moves a case's "
			    "median by %.2g%% (sd; %s), pooled over %zu case%s; up to %zu sessions "
			    "and %zu runs a case, %zu differences of consecutive sessions in all",
			pct(total), parts, m->ncases, m->ncases == 1 ? "" : "s", m->sessions, m->runs,
			m->diffs);
		if (m->changes)
			sb_addf(sb, " (%zu left out as real changes)", m->changes);
		break;
	}
	case NOISE_BETWEEN_ASSUMED:
		sb_addf(sb, "noise between runs: within a session measured (%.2g%%, from %zu runs); "
			    "between sessions NOT measured (no two sessions of one side and no history "
			    "of this system) and assumed %.2g x the within variance: a run at another "
			    "time moves %.2g%%; runs made at different times (or history: `runner noise`) "
			    "would measure it",
			pct(m->within_var), m->runs, m->assumed.session_ratio, pct(total));
		break;
	case NOISE_ASSUMED:
		sb_addf(sb, "noise between runs NOT measured (one run a side, no history of this "
			    "system): assumed %.3g%% per run (--run-noise); repeated runs (`runner run "
			    "--repeat N`) or history would measure it",
			100 * m->assumed.run_noise);
		break;
	}
	if (m->noisier)
		sb_addf(sb, "; %zu case%s noisier than the pool (F test at %.0f%%) use%s %s own spread",
			m->noisier, m->noisier == 1 ? "" : "s", 100 * NOISIER_LEVEL,
			m->noisier == 1 ? "s" : "", m->noisier == 1 ? "its" : "their");
}
