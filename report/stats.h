/* report/stats.h: descriptive statistics over stored samples. */
#ifndef BENCHDB_STATS_H
#define BENCHDB_STATS_H

#include <stddef.h>
#include <stdint.h>

struct summary {
	size_t n;
	double mean, std;   /* std: sample standard deviation (n - 1); 0 when n < 2 */
	double median, min, max;
	double cv;          /* std / mean; 0 when mean is 0 */
};

/* Summarise x[0..n-1] (x is not modified). n == 0 gives a zeroed summary. */
void summarize(const double *x, size_t n, struct summary *s);
/* Median of x[0..n-1]; sorts x in place. */
double median_inplace(double *x, size_t n);
/* Sort x[0..n-1] ascending (NaNs must not be present). */
void sort_doubles(double *x, size_t n);

/* The median of x[0..n-1] with its distribution-free 95% confidence interval (x is not
 * modified): the order statistics of 1-based ranks k and n + 1 - k, k the largest rank with
 * P(Binomial(n, 1/2) <= k - 1) <= 0.025 (the count of samples below the median is Binomial(n, 1/2),
 * exactly, as scipy.stats.binom), which enclose the median with probability
 * 1 - 2 P(B <= k - 1) >= 95% whatever the distribution, as close to 95% as whole ranks allow;
 * the whole range for n < 6, which no pair of order statistics makes 95% (it holds the median
 * with probability 1 - 2^(1-n): 75% at 3 samples, 87.5% at 4, 93.75% at 5). The interval every
 * table and chart of the report shows around a median. Returns 0, BD_EINVAL when n is 0. */
int median_ci(const double *x, size_t n, double *median, double *lo, double *hi);

/* The p_lo- and p_hi-quantiles (0 <= p_lo <= p_hi <= 1) of x[0..n-1] (x is not modified),
 * interpolated linearly between order statistics (Hyndman-Fan type 7, the default of R and
 * NumPy). Returns 0, BD_EINVAL when n is 0. */
int quantiles(const double *x, size_t n, double p_lo, double p_hi, double *lo, double *hi);

/* ---- comparisons (implemented in stats.c; see tests/test_stats.c) ------------------------- */

/* A ratio with its two-sided confidence interval. */
struct ratio_ci {
	double ratio;      /* median(base) / median(cand): > 1 means cand is faster */
	double lo, hi;     /* percentile bootstrap interval at level (e.g. 0.95) */
};

/* Percentile bootstrap of median(base)/median(cand): `resamples` resamplings of each series with
 * replacement, drawn from a generator seeded with `seed` (the same inputs and seed give the same
 * interval). Returns 0, or BD_EINVAL when a series is empty or a median is not positive. */
int bootstrap_ratio_of_medians(const double *base, size_t nb, const double *cand, size_t nc,
			       double level, int resamples, uint64_t seed, struct ratio_ci *out);

/* Two-sided Mann-Whitney U test of x vs y: U of x, z of the normal approximation, and p. p is
 * exact for nx + ny <= MW_EXACT_MAX_N: without ties the classical exact distribution of U (as
 * scipy.stats.mannwhitneyu(method='exact')), with ties the exact permutation distribution of the
 * midrank sum given the observed ties (every split of the pooled values equally likely); beyond
 * that, the normal approximation with tie and continuity correction (as scipy's
 * method='asymptotic'). Two-sided p = 2 min(P(U >= u), P(U <= u)), capped at 1; p = 1 when every
 * value is tied. */
#define MW_EXACT_MAX_N 50
struct mann_whitney {
	double u;
	double z;
	double p;
	int exact;    /* 1 when p is exact */
};
int mann_whitney_u(const double *x, size_t nx, const double *y, size_t ny, struct mann_whitney *out);
/* One-sided p of the same test for the alternative that x tends to be larger than y: P(U >= u),
 * exact or approximate as above. Returns 0, BD_EINVAL (*p = 1 on error). */
int mann_whitney_greater(const double *x, size_t nx, const double *y, size_t ny, double *p);
/* The smallest one-sided p the test can give for these sizes (every x above every y):
 * 1 / C(nx + ny, nx) where exact. 2 vs 2 give 1/6, 3 vs 3 1/20, 4 vs 4 1/70, 5 vs 5 1/252. */
double mann_whitney_min_p(size_t nx, size_t ny);

/* Student's t with df > 0 degrees of freedom (df need not be an integer): P(T > t), through the
 * regularized incomplete beta function, to about 1e-14; and the p-quantile, 0 < p < 1, by
 * bisection. NaN for bad arguments. */
double student_t_sf(double t, double df);
double student_t_quantile(double p, double df);
/* Fisher's F with d1, d2 > 0 degrees of freedom (d2 may be INFINITY: chi-square(d1) / d1):
 * P(F > x), and the p-quantile, 0 < p < 1, by bisection. NaN for bad arguments. */
double f_sf(double x, double d1, double d2);
double f_quantile(double p, double d1, double d2);

/* Benjamini-Hochberg adjusted p-values ("q-values"): q[i] = min over the p-values at or above
 * p[i]'s rank k of m p_(j) / j, capped at 1, m the number of non-NaN p. Rejecting every q <= alpha
 * is the BH step-up procedure at level alpha. A NaN p (no test) gets a NaN q and does not count
 * in m. */
void bh_adjust(const double *p, size_t n, double *q);

/* Summary of many speedups (baseline / candidate): geometric mean, median and mean, and wins /
 * losses / ties, where a tie is |speedup - 1| <= tie_band (e.g. 0.02). */
struct speedup_summary {
	size_t n, wins, losses, ties;
	double geomean, median, mean, min, max;
};
void speedup_summarize(const double *speedups, size_t n, double tie_band, struct speedup_summary *out);

/* Where the warm-up of a series of iteration times (warm-up included, in order) ends: the first
 * iteration of the steady state; 0 when the series starts steady (a fast start is not warm-up);
 * n when it is still warming up at its end (the last half trends down). Only a slow start
 * counts: on the log scale each iteration's excess over the steady level (the midpoint of the
 * quartiles of the last half, or of what follows a warm-up longer than that), in steady spreads
 * (IQR / 1.349), scores z^2/2 - 2 when positive (z capped at 2.8, so that a spike never
 * outweighs as many steady iterations) and -2 otherwise; the warm-up is the prefix with the
 * largest total score. No fixed envelope: a residue counts when it stands out of the noise
 * (about 2 spreads). band: an excess up to this fraction of the level does not count (0: any).
 * n < 4 gives 0. */
size_t steady_state_index(const double *x, size_t n, double band);

#endif
