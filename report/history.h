/* report/history.h: a benchmark's history as series — one per case key and host, oldest run first,
 * after the run filters (label, branch, host, the last N runs) — with each run's median and its
 * interval, and the change points of each series (changepoint.h) with their verdicts. Shared by
 * `report changes`, `report history`, `report plot history` and `report site`. */
#ifndef BENCHDB_HISTORY_H
#define BENCHDB_HISTORY_H

#include "changepoint.h"
#include "report.h"

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
	double wait_before, wait_after;   /* -1 unknown */
};

/* What the newest runs of a series say. */
enum history_newest {
	NEWEST_TOO_FEW,     /* fewer runs than two minimum segments: no change point can be found */
	NEWEST_STEADY,      /* no change point among the newest `recent` runs */
	NEWEST_SLOWER,      /* a slower segment began among them */
	NEWEST_FASTER,
	NEWEST_CONTENDED,   /* a change began among them, and contention explains it */
	NEWEST_COUNT
};
extern const char *const history_newest_names[NEWEST_COUNT];

struct history_series {
	const char *case_key, *name, *host;   /* point into the set's rows */
	struct history_point *points;         /* (n), oldest first */
	size_t n;
	size_t not_ok;                        /* cases of the key and host that were not ok, or had
						 no samples of the pick: left out */
	struct cp_result cp;                  /* after history_detect */
	struct history_change *changes;       /* (cp.n) */
	enum history_newest newest;
	size_t newest_change;                 /* index into changes of the newest segment's start */
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

/* Load the series of f: BD_EINVAL for a malformed --where or one no case has, BD_EDB/BD_ENOMEM. A
 * filter that matches nothing gives n = 0. */
int history_load(struct db *db, const struct history_filter *f, struct history_set *out,
		 struct bd_error *err);
void history_free(struct history_set *s);

/* Find the change points of every series (on all cores; the answer does not depend on how many)
 * and their verdicts; the newest segment's status with `recent` runs counted as newest. run_noise
 * per series: the noise model's figure where the database has one (0: the series' own). */
int history_detect(struct history_set *s, const struct cp_options *o,
		   const struct verdict_rule *rule, size_t recent);

/* The change of series s that starts at point index i, or NULL. */
const struct history_change *history_change_at(const struct history_series *s, size_t i);

/* "2026-02-01 13:45" from a stored ISO time (out: at least 17 bytes); the text as it is when it
 * is not one. */
void history_date(const char *iso, char *out, size_t n);

#endif
