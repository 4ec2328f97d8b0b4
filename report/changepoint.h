/* report/changepoint.h: change points in a case's history of runs — E-divisive means (Matteson and
 * James, "A nonparametric approach for multiple change point analysis of multivariate data", JASA
 * 2014; the method of Apache Otava/Hunter and of MongoDB's signal-processing-algorithms) on the
 * series of each run's log median, each split held to a permutation test, a minimum segment length
 * and a minimum magnitude. The method, its error rates on planted histories and the comparison with
 * the two reference implementations: docs/performance.md, "Change points in history". */
#ifndef BENCHDB_CHANGEPOINT_H
#define BENCHDB_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

/* Defaults, in the unit --help shows them in. */
#define CP_ALPHA 0.01           /* permutation test level of each split */
#define CP_PERMUTATIONS 999     /* p resolution 1/1000 */
#define CP_MIN_SEGMENT 3        /* runs on each side of a change point: a spike is not one */
#define CP_MIN_CHANGE_PCT 2     /* a change between two segments smaller than this is merged */
#define CP_RECENT 10            /* changes: exit 1 when a slower segment began within this many runs */

/* Which splits are searched. KAPPA: Y = z[tau..kappa) for every kappa (Matteson and James, as
 * Otava): finds a change that is undone later (a regression fixed after a while). WHOLE: Y runs
 * to the segment's end (as MongoDB's signal-processing-algorithms): more power for a lone step,
 * above all one at the newest runs. BOTH: the two tested on the same permutations, each at
 * alpha / 2 (Bonferroni; the split of the smaller p is made): the power of each where it is
 * strong, the false-alarm rate still at most alpha. */
enum cp_form { CP_FORM_BOTH, CP_FORM_KAPPA, CP_FORM_WHOLE };
struct cp_options {
	double alpha;           /* a split is kept when its permutation p <= alpha */
	unsigned permutations;  /* permutations per test (>= 1/alpha - 1 for alpha to be reachable) */
	size_t min_segment;     /* >= 2 */
	double min_change;      /* fraction (0.02 = 2%) of exp(mean after - mean before) - 1 */
	uint64_t seed;          /* the permutations' generator: the same series give the same answer */
	enum cp_form form;
};
#define CP_OPTIONS_DEFAULT                                                                         \
	{CP_ALPHA, CP_PERMUTATIONS, CP_MIN_SEGMENT, CP_MIN_CHANGE_PCT / 100.0, 20261121u, CP_FORM_BOTH}

/* One case's history, oldest run first. */
struct cp_series {
	const double *y;        /* (n) log of each run's statistic (its median time) */
	const double *se;       /* (n) each run's own standard error of y (within the run), or NULL */
	size_t n;
	double run_noise;       /* standard deviation of y from run to run (log scale) from the noise
				   model, where the database has one; 0: estimated from the series */
	double run_noise_within;  /* the part of run_noise (sd) the runs of one session do not share;
				     0: unknown (a session's mean then taken to be as noisy as one
				     run) */
	/* (n) the session of each run, or NULL: each run a session of its own. Runs next to each
	 * other with the same value are one session (one `runner run --repeat`, one group): they ran
	 * in one state of the machine and share its shift, so they are not independent evidence.
	 * Each session then counts once: the detector runs on the sessions' mean y, its permutation
	 * test shuffles whole sessions, min_segment counts sessions, and a change point is the first
	 * run of a session. Runs with the same value apart from each other are different sessions. */
	const size_t *session;
};

struct cp_point {
	size_t index;           /* the first run of the new segment (0-based into the series) */
	double before, after;   /* mean y of the segment before and of the segment after */
	double change;          /* exp(after - before) - 1: +0.05 is 5% slower */
	double lo, hi;          /* its 95% interval (t on the two segments, noise as below) */
	double p;               /* the permutation p of the split when it was made */
};

struct cp_result {
	struct cp_point *points;   /* (n) by index */
	size_t n;
	size_t sessions;           /* how many sessions the runs are (n of the series without them) */
	double noise;              /* sd of y from session to session (from run to run where each run
				      is its own session) used for intervals and the band: the larger
				      of the series' own (pooled within segments) and run_noise (of a
				      session's mean) */
	int noise_estimated;       /* 1: run_noise was 0, noise is the series' own */
	double noise_df;           /* degrees of freedom of noise (sessions within segments) */
	double p_stop;             /* the p of the first split not made (1 when none was tested) */
};

/* Find the change points of s: repeatedly, the split (tau, kappa) of a segment that maximises the
 * E-divisive statistic Q with both sides at least min_segment long; kept while the permutation p
 * (the runs shuffled within every current segment, the maximum of Q recomputed; (b+1)/(R+1)) is
 * <= alpha; then the changes below min_change merged away, smallest first. Fewer than
 * 2 min_segment runs (sessions, with s->session) give no change point. before, after, change and
 * its interval are of the sessions' means, each session counted once. Returns 0, BD_EINVAL for
 * bad options or a non-finite y. */
int changepoints_find(const struct cp_series *s, const struct cp_options *o, struct cp_result *out);
void cp_result_free(struct cp_result *r);

/* The robust run-to-run standard deviation of y[0..n-1] that a few steps do not inflate: 1.4826 MAD
 * of successive differences / sqrt 2. 0 for n < 3. */
double cp_noise_of_series(const double *y, size_t n);

#endif
