/* report/noise.h: the noise model whose unit is the run — how far a case's median moves between
 * runs, estimated from the runs stored, for every verdict (regress, compare across runs, history
 * steps, nodes) and for any later command that needs it (docs/performance.md, "Measurement
 * validity", says why it is built this way and what it was measured to do).
 *
 * One run's statistic for a case is y = log(median of its measured iterations): the iterations
 * estimate it, and their own error (0.3% here) is small beside how much the run as a whole moves.
 * Runs come in sessions: the runs of one group (`runner run --repeat N`, the shards of a sweep)
 * share one; a run without a group is a session of its own. Runs of one session agree more
 * closely than runs made at different times, so the model has two components, both on the log
 * scale and pooled over the cases of a system:
 *   within  (s_w^2): the variance between runs of one session;
 *   between (s_b^2): the extra variance a new session adds (the machine's state changes between
 *                    sessions: clocks, placement, other tenants).
 * A run made at another time than the runs it is compared with moves by s_w^2 + s_b^2; a group of
 * N runs made together averages only the within part: s_b^2 + s_w^2 / N.
 *
 * Estimates: within from the sessions with two runs or more (sum of squares about the session's
 * mean); between from the differences of consecutive sessions of one source (time order; in
 * history only sessions of the same code: commit, uncommitted changes, sweep) —
 * E[D^2] = 2 s_b^2 + s_w^2 (1/n_a + 1/n_b) — by their mean square, after leaving out the
 * differences that a robust (median) scale calls changes, so that a real change between two
 * sessions (history crosses commits) does not count as noise. Differences are never taken across
 * the sides of a comparison: that difference is what is being tested. A case whose own spread is
 * beyond the 95% point of what the pooled spread allows (an F test) is "noisier": its variance is
 * scaled by its own estimate, with its own degrees of freedom. What the data cannot measure is
 * assumed and said: between unmeasured (one session a side, no history): s_b^2 = the assumed
 * ratio times s_w^2; nothing measured (one run a side, no history): an assumed run-to-run spread.
 */
#ifndef BENCHDB_NOISE_H
#define BENCHDB_NOISE_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct case_series;
struct case_row;

/* ---- what the data holds: sessions of runs, per case key ---------------------------------- */

/* One session's runs of one case: the sufficient statistics of their log medians. */
struct noise_session {
	int source;          /* which set of runs: 0 history, 1.. the sides (or the nodes) of a
				comparison; sessions are differenced only within one source */
	char key[DB_SESSION_MAX];        /* the session: the runs' group id, or "run:" and the run's uuid */
	char code[128];      /* history: what ran (db_run_code); consecutive sessions are
				differenced only when equal. "" for the sides of a comparison, which
				are each one population by the user's choice */
	char at[32];         /* when its first run started (ISO 8601): the time order */
	size_t runs;
	double mean, ss;     /* mean of the runs' y and sum of squares about it */
};

struct noise_case {
	char *case_key;
	struct noise_session *sessions;
	size_t n, cap;
};

/* The data of a model: cases in order of first appearance. */
struct noise_data {
	struct noise_case *cases;
	size_t n, cap;
};

/* Add run observation y to (case_key, source, session) (Welford's update; the session is made on
 * its first run). Returns 0 or BD_ENOMEM. */
int noise_data_add_run(struct noise_data *d, const char *case_key, int source, const char *session,
		       const char *code, const char *at, double y);
/* Add a session's stored summary, merged into one already present with the same key. */
int noise_data_add_session(struct noise_data *d, const char *case_key,
			   const struct noise_session *s);
/* Index of case_key in d, or -1. */
long noise_data_find(const struct noise_data *d, const char *case_key);
void noise_data_free(struct noise_data *d);

/* ---- the model ------------------------------------------------------------------------------ */

/* What is assumed where the data cannot measure it (printed whenever used). */
struct noise_assumed {
	double run_noise;       /* fraction: run-to-run spread (sd of y) assumed when nothing is
				   measured */
	double session_ratio;   /* s_b^2 / s_w^2 assumed when the between part is not measured */
};
#define NOISE_RUN_NOISE_PCT 6        /* the default assumed spread: the issue measured 3.4% on a
					quiet machine and 5.8% loaded (docs/performance.md) */
#define NOISE_SESSION_RATIO 0.5      /* measured here: see docs/performance.md */
#define NOISE_ASSUMED_DEFAULT {NOISE_RUN_NOISE_PCT / 100.0, NOISE_SESSION_RATIO}

enum noise_basis {
	NOISE_MEASURED,          /* both parts from the data */
	NOISE_BETWEEN_ASSUMED,   /* within measured; between = session_ratio x within */
	NOISE_ASSUMED,           /* nothing measured: run_noise */
};
extern const char *const noise_basis_names[3];

struct noise_model {
	enum noise_basis basis;
	double within_var, within_df;     /* s_w^2 with its effective degrees of freedom */
	double between_var, between_df;   /* s_b^2 (df: of its estimate; infinite when assumed) */
	size_t sessions, runs;            /* what it was estimated from: the most of any case */
	size_t diffs;                     /* differences of consecutive sessions, over all cases */
	size_t changes;                   /* differences left out as real changes */
	size_t ncases;                    /* of the data, in its order: */
	double *scale;                    /* 1, or a noisier case's own variance / the pooled */
	double *scale_df;                 /* the df of that scale (0 when 1) */
	size_t noisier;                   /* how many cases have a scale above 1 */
	struct noise_assumed assumed;
};

/* Fit the model to d. Returns 0 or BD_ENOMEM; free with noise_model_free. */
int noise_model_fit(const struct noise_data *d, const struct noise_assumed *a,
		    struct noise_model *m);
void noise_model_free(struct noise_model *m);
/* The spread of one run of a case against runs made at other times, as the sd of y (about the
 * relative spread of its median): sqrt(scale (s_w^2 + s_b^2)). */
double noise_run_sd(const struct noise_model *m, long case_index);
/* Its part that runs of one session do not share: sqrt(scale s_w^2). */
double noise_within_sd(const struct noise_model *m, long case_index);

/* One side of a comparison: the session of each of its runs (keys as in noise_session). */
struct noise_side {
	const char *const *sessions;
	size_t n;
};
/* The variance of mean(y of side c) - mean(y of side b) for case case_index of the model (-1: a
 * case the data did not have: scale 1), with its degrees of freedom (Welch-Satterthwaite over the
 * parts; INFINITY when only assumed parts enter). Sessions the two sides share cancel their
 * between part. within_b, within_c: each side's mean variance of one run's y from its own
 * iterations, added only when nothing is measured (with run_noise 0 the verdict is then the
 * iterations' alone). */
void noise_diff_var(const struct noise_model *m, long case_index, const struct noise_side *b,
		    const struct noise_side *c, double within_b, double within_c, double *var,
		    double *df);
/* How many runs a side, each made at a different time, give a variance of the difference of
 * at most var_goal for case case_index (0 when no number of runs does). */
size_t noise_runs_for(const struct noise_model *m, long case_index, double var_goal);

struct strbuf;
/* One line for a table's notes: what the model says (the spread of a run at another time, its
 * parts) and what it stands on, or what it assumed and why. */
void noise_model_describe(const struct noise_model *m, struct strbuf *sb);

/* ---- the data from a database --------------------------------------------------------------- */

/* y of one run's case: log of the median of the measured series pick (enum series_pick), and the
 * variance of that y from the iterations alone (distribution-free interval of the median). 0, or
 * BD_EINVAL when the series is empty or its median is not positive. */
int noise_run_y(const struct case_series *s, int pick, double *y, double *within_var);

/* The session key of a run: its group id, or "run:" and its uuid. */
void noise_session_key(const char *group_id, const char *uuid, char out[DB_SESSION_MAX]);

/* Add the history of the systems systems[0..nsystems-1] for pick as source 0: every complete run
 * of those systems except the runs in exclude[0..nexclude-1] and the sessions they belong to,
 * the most recent NOISE_HISTORY_SESSIONS sessions of each system; only the case keys that
 * keys(key, ctx) accepts (NULL: all). Stored summaries (noise_sessions, folded by the runner)
 * are used where they exist; runs not folded are read from their samples. */
#define NOISE_HISTORY_SESSIONS 64
int noise_history_load(struct db *db, const int64_t *systems, size_t nsystems, int pick,
		       const int64_t *exclude, size_t nexclude,
		       int (*keys)(const char *case_key, void *ctx), void *ctx,
		       struct noise_data *d, struct bd_error *err);

/* Fold run_id into the stored summaries (schemas/010_run_noise.sql): for every ok case and every
 * series it has (fwd, bwd, opt, total), add its y to its session's row. A run is folded once;
 * only complete runs are. The runner calls it as a run completes; `runner noise` for runs stored
 * before, or merged. *folded = 1 when the run was folded now. */
int noise_fold_run(struct db *db, int64_t run_id, int *folded, struct bd_error *err);

#endif
