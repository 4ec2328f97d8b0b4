/* report/history.h: a benchmark's history as series — one per case key and host, oldest run first,
 * after the run filters (label, branch, host, the last N runs) — with each run's median and its
 * interval, and the change points of each series (changepoint.h) with their verdicts. Shared by
 * `report changes`, `report history`, `report plot history` and `report site`. */
#ifndef BENCHDB_HISTORY_H
#define BENCHDB_HISTORY_H

#include "changepoint.h"
#include "report.h"

/* The options `changes`, `history`, `plot history` and `site` share: which runs, the detector,
 * declared once (HISTORY_OPT_*), checked once (history_options_check). */
struct history_options {
	const char *label, *branch, *host;
	long last, recent, min_segment;
	double alpha, min_change;
};
#define HISTORY_OPTIONS_INIT                                                                       \
	{NULL, NULL, NULL, 0, CP_RECENT, CP_MIN_SEGMENT, CP_ALPHA, CP_MIN_CHANGE_PCT / 100.0}
#define HISTORY_OPT_RUNS(h)                                                                        \
	{"label", 'l', OPT_STRING, "LABEL", "only runs with this label (e.g. nightly)", &(h)->label}, \
	{"branch", 0, OPT_STRING, "BRANCH", "only runs built from this git branch", &(h)->branch},   \
	{"host", 0, OPT_STRING, "HOST", "only runs on this host (default: a series per host)",      \
	 &(h)->host},                                                                              \
	{"last", 0, OPT_INT, "N", "only the last N runs of each series (default all)", &(h)->last}
#define HISTORY_OPT_DETECTOR(h)                                                                    \
	{"alpha", 0, OPT_DOUBLE, "P",                                                              \
	 "level of the permutation test of each split (default " REPORT_STR(CP_ALPHA) ")",         \
	 &(h)->alpha},                                                                             \
	{"min-segment", 0, OPT_INT, "N",                                                          \
	 "runs on each side of a change point, at least 2; a --repeat group's runs count as one "  \
	 "(default " REPORT_STR(CP_MIN_SEGMENT) ")", &(h)->min_segment},                           \
	{"min-change", 0, OPT_PERCENT, "PCT",                                                      \
	 "smaller changes are merged away (default " REPORT_STR(CP_MIN_CHANGE_PCT) ")",            \
	 &(h)->min_change}
#define HISTORY_OPT_RECENT(h)                                                                      \
	{"recent", 0, OPT_INT, "N",                                                                \
	 "a change within the newest N runs (a --repeat group's runs count as one) is new "        \
	 "(report changes: slower exits 1; default " REPORT_STR(CP_RECENT) ")", &(h)->recent}
/* When a change is contended (verdict_contended), on a struct report_options o's rule. */
#define HISTORY_OPT_CONTENTION(o)                                                                  \
	{"cpu-wait-gap", 0, OPT_PERCENT, "PCT",                                                    \
	 "a slower segment that waited for a CPU PCT points more of its time: contended "          \
	 "(default " REPORT_STR(REPORT_CPU_WAIT_GAP_PCT) "; 100: off)", &(o)->rule.cpu_wait_gap},   \
	{"cpu-wait-level", 0, OPT_PERCENT, "PCT",                                                  \
	 "... or PCT of its time or more (default " REPORT_STR(REPORT_CPU_WAIT_LEVEL_PCT)          \
	 "; 100: off)", &(o)->rule.cpu_wait_level}
/* Print what is wrong for `report command` and return EXIT_USAGE; -1 when the options are sound
 * (rule: HISTORY_OPT_CONTENTION's, NULL without them). Fills the filter's run part and the
 * detector's options. */
struct history_filter;
int history_options_check(const struct history_options *h, const struct verdict_rule *rule,
			  const char *command, struct history_filter *f, struct cp_options *o);

/* Which runs and cases make the series. */
struct history_filter {
	const char *case_key;          /* NULL: every key */
	struct case_filter cases;      /* --suite, --where */
	const char *label, *branch, *host;   /* NULL: any */
	long last;                     /* the last N runs of each series (0: all) */
	enum series_pick pick;
};

/* One run of a series: an ok case with measured samples. */
struct history_point {
	const struct case_row *c;
	const struct run_row *run;
	double median, lo, hi;         /* ns: the median with its 95% distribution-free interval */
	double wait;                   /* cases.cpu_wait, -1 unknown */
};

enum history_verdict { HISTORY_SLOWER, HISTORY_FASTER, HISTORY_CONTENDED };
extern const char *const history_verdict_names[3];

/* A change point with its verdict: slower / faster, or contended when the slower side's runs
 * waited for a CPU (cases.cpu_wait, mean over the segment) rule->cpu_wait_gap more of their time
 * than the other side's: a busy machine, not a slower kernel. */
struct history_change {
	struct cp_point cp;
	enum history_verdict verdict;
	double wait_before, wait_after;   /* mean over the runs that recorded it; -1: none did */
};

/* What the newest runs of a series say. */
enum history_newest {
	NEWEST_TOO_FEW,     /* fewer runs than two minimum segments: no change point can be found */
	NEWEST_STEADY,      /* no change point among the newest `recent` runs */
	NEWEST_SLOWER,      /* a slower segment began among them */
	NEWEST_FASTER,
	NEWEST_CONTENDED,   /* a change began among them, and contention explains it */
	NEWEST_GONE,        /* no longer run: newer complete runs of its sweep lack it (gone_run) */
	NEWEST_COUNT
};
extern const char *const history_newest_names[NEWEST_COUNT];

struct history_series {
	const char *case_key, *name, *host;   /* point into the set's rows */
	struct history_point *points;         /* (n), oldest first */
	size_t n;
	/* (n) the session of each point, from 0: the runs of one group (`runner run --repeat`, a
	 * group of shards) with one code (commit, uncommitted changes, sweep), next to each other in
	 * the series, are one session, counted once by the detector (cp_series.session), --recent and
	 * --min-segment; any other run is a session of its own. nsessions: how many. */
	size_t *session;
	size_t nsessions;
	size_t not_ok;                        /* cases of the key and host that were not ok, or had
						 no samples of the pick: left out */
	double run_noise;                     /* the noise model's spread of one run against runs
						 at other times (sd of the log median; noise.h), 0 when
						 the model measured none (history_noise) */
	double run_noise_within;              /* its part that runs of one session do not share */
	struct cp_result cp;                  /* after history_detect */
	struct history_change *changes;       /* (cp.n) */
	enum history_newest newest;
	size_t newest_change;                 /* index into changes of the newest segment's start: the
						 newest change, or, when the window's changes add up to
						 a slower one, the first of them */
	double newest_net;                    /* the change the newest runs show: newest_change's, or
						 the newest segment against the one before the window's
						 first change (exp(mean y - mean y) - 1) */
	/* When the newest change is contention that ended (the runs before it waited for a CPU, the
	 * newest did not): the first and last run of the segment the newest runs were judged
	 * against instead, the newest one not explained by contention (newest_net is against it).
	 * NULL otherwise. */
	const struct run_row *quiet_first, *quiet_last;
	/* Where the case is not ok in its host's newest run though ok before (its points): the
	 * newest run that has the key, where it is error, oom, unsupported or skipped (broken_row,
	 * its status and reason); or the host's newest run of the sweep (by name) of the newest run
	 * that has the key, when that run is not complete (interrupted, failed, still running) and
	 * lacks the key (broken_row NULL): another sweep's or shard's runs do not measure it.
	 * NULL otherwise. */
	const struct run_row *broken_run;
	const struct case_row *broken_row;
	/* The newest run that has the key on this host, where the case is ok but has no measured
	 * samples of the pick (or no positive median) though earlier runs had: it is not among the
	 * points, so the series cannot say what that run measured. NULL otherwise. */
	const struct run_row *unmeasured_run;
	/* The oldest complete run on this host of the sweep (by name) and shard of the newest run that
	 * has the key, newer than that run: the case was dropped from the sweep, and its series says
	 * nothing of today's code (newest NEWEST_GONE; broken_run, broken_row and unmeasured_run
	 * NULL, no verdict, no failure). NULL otherwise, and when that run's sweep has no name. */
	const struct run_row *gone_run;
	double newest_off;                    /* the newest session (run) against the rest of its
						 segment, exp(y - mean) - 1, when beyond 3 sd of the
						 noise (a lone slow run, or the first of a change to
						 come); 0 otherwise */
};

struct history_set {
	struct history_series *series;
	size_t n;
	struct run_row *runs;
	size_t nruns;
	struct case_row *rows;                /* every row of db_cases_by_key (owned) */
	size_t nrows;
	size_t runs_left_out;                 /* rows whose run the label/branch/host filter refused */
};

/* " --case K --label L --branch B --host H", the parts of f that are set. */
void history_filter_describe(const struct history_filter *f, struct strbuf *sb);

/* Load the series of f: BD_EINVAL for a malformed --where or one no case has, BD_EDB/BD_ENOMEM. A
 * filter that matches nothing gives n = 0. */
int history_load(struct db *db, const struct history_filter *f, struct history_set *out,
		 struct bd_error *err);
void history_free(struct history_set *s);
/* The run filters of f (label, branch, host) on rows[0..n-1] (runs: db_runs_list's, by id): the
 * rows of refused runs move behind the kept ones, which keep their order. Returns how many are
 * kept; adds the refused to *left_out. */
size_t history_rows_select(const struct run_row *runs, size_t nruns, struct case_row *rows, size_t n,
			   const struct history_filter *f, size_t *left_out);
/* Order rows[0..n-1] (grouped by case key, as db_cases_by_key gives them) by time within each key:
 * by their runs' started_at, then run id and ord. Run ids follow the order runs were stored in, and
 * `runner merge` stores a database's runs after those already there: a history merged out of
 * order would otherwise be read out of order (its newest runs taken for old ones). The keys keep
 * their order. */
void history_rows_order(const struct run_row *runs, size_t nruns, struct case_row *rows, size_t n);
/* The indices of s's series, those not ok in their newest run first, then those whose newest
 * runs moved (slower, contended, faster, steady, too few runs, no longer run), in load order within each; the
 * caller frees it. After history_detect. */
size_t *history_order(const struct history_set *s);

/* Each series' run_noise from the noise model of its system (noise.h: the system's stored runs,
 * pooled over its cases), where the model measured both its parts, the between-session part with
 * 5 degrees of freedom or more. BD_EDB/BD_ENOMEM. */
int history_noise(struct db *db, struct history_set *s, enum series_pick pick,
		  const struct verdict_rule *rule, struct bd_error *err);

/* Find the change points of every series (on all cores; the answer does not depend on how many)
 * and their verdicts (contended: the side that looks slower waited, whatever
 * rule->either_contended says); the newest segment's status with `recent` runs counted as newest. The
 * intervals and the band use the larger of the series' own run-to-run noise and its run_noise. */
int history_detect(struct history_set *s, const struct cp_options *o,
		   const struct verdict_rule *rule, size_t recent);

/* The mean log median of the points [a, b) of s, each session counted once (the mean of its
 * sessions' means; a and b at session starts, as the change points are), as the detector means
 * its segments. 0 when b <= a. */
double history_segment_mean(const struct history_series *s, size_t a, size_t b);
/* How many sessions the points [a, b) of s are in. */
size_t history_sessions_in(const struct history_series *s, size_t a, size_t b);

/* The change of series s that starts at point index i, or NULL. */
const struct history_change *history_change_at(const struct history_series *s, size_t i);

/* "2026-02-01 13:45" from a stored ISO time (out: at least 17 bytes); the text as it is when it
 * is not one. */
void history_date(const char *iso, char *out, size_t n);

/* ---- charts (chart_history.c) ----------------------------------------------------------- */

#define HISTORY_PANELS_MAX 24
/* path_base.png and .svg of series[0..n-1] after history_detect: one chart for one series (title
 * its title), small multiples for several (title over the grid), at most HISTORY_PANELS_MAX
 * panels. pick: the phase the medians are of (history_filter.pick), named on the y axis unless
 * it is the total, which the case's name says. notes gets lines about reading it and what was
 * left out. BD_EINVAL when no series has a run to draw; plot_write_script's errors (BD_ENOTFOUND
 * without gnuplot). */
struct strbuf;
int chart_history_write(const struct history_series *const *series, size_t n, const char *title,
			const char *path_base, enum series_pick pick, struct strbuf *notes,
			struct bd_error *err);

#endif
