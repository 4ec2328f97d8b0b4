/* report/report.h: what the report commands share — opening the database
 * and selecting a run, reading a case's samples as per-phase series. */
#ifndef BENCHDB_REPORT_H
#define BENCHDB_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "opt.h"
#include "render.h"
#include "noise.h"
#include "stats.h"

#define REPORT_PROG "report"

/* ---- how comparisons decide: each default written once -------------------------------------
 * Code holds thresholds and bands as fractions (0.05 = 5%) and alpha as a probability. People type
 * and read percent (--threshold 5, "5%" in notes): OPT_PERCENT divides by 100 on the way in, notes
 * multiply by 100 on the way out. The defaults are written in the unit --help shows them in. */
#define REPORT_ALPHA 0.01              /* significance level of the rank test */
#define REPORT_THRESHOLD_PCT 5         /* a change of medians beyond this is faster / slower */
#define REPORT_TIE_BAND_PCT 2          /* summaries: speedups within 1 ± this are ties */
#define REPORT_CPU_WAIT_GAP_PCT 2      /* a side that waited this much more of its time for a
					* CPU (cases.cpu_wait) cannot be called the slower one */
#define REPORT_STEADY_BAND_PCT 0       /* warm-up: an excess up to this much over the steady
					 * level does not count (0: any that stands out of the
					 * noise; report/stats.h steady_state_index) */
#define REPORT_STEADY_BAND (REPORT_STEADY_BAND_PCT / 100.0)
#define REPORT_UNSTABLE_RSE_PCT 2.5     /* a case whose median's estimated relative standard error
					 * (cases.rse) is above this is unstable: the 95% interval
					 * of its figure is wider than +-5% */

#define REPORT_CPU_WAIT_LEVEL_PCT 5     /* a case that waited this much of its measured time for a
					 * CPU (cases.cpu_wait) is contended (compare: either side;
					 * regress: the side that looks slower) */
#define REPORT_DETECT_PCT 10           /* the change a report says whether it could detect */

struct verdict_rule {
	double alpha;        /* p below this is significant */
	double threshold;    /* fraction: a change must be beyond it to count (runs: the point
				estimate beyond, and significant; iterations: the interval beyond) */
	double tie_band;     /* fraction: summaries count |speedup - 1| <= tie_band as a tie */
	double cpu_wait_gap; /* fraction: slower (faster) is `contended` instead when the side that
				looks slower waited for a CPU this much more of its measured time than
				the other side; 1: never */
	double cpu_wait_level; /* fraction: ... or waited this much of its time or more; 1: never */
	int either_contended;  /* 1: a side at cpu_wait_level makes faster and slower contended
				  whichever side it is (compare) */
	double detect;       /* fraction: the change the notes say these runs would (not) detect */
	struct noise_assumed assumed;   /* what the noise model assumes where nothing measures it */
};
#define VERDICT_RULE_DEFAULT                                                                       \
	{REPORT_ALPHA, REPORT_THRESHOLD_PCT / 100.0, REPORT_TIE_BAND_PCT / 100.0,                    \
	 REPORT_CPU_WAIT_GAP_PCT / 100.0, REPORT_CPU_WAIT_LEVEL_PCT / 100.0, 1,                      \
	 REPORT_DETECT_PCT / 100.0, NOISE_ASSUMED_DEFAULT}
/* A threshold below 0 or an alpha outside (0, 1) is a usage error: prints it for `report command`
 * and returns EXIT_USAGE; -1 when the rule is sound. */
int verdict_rule_check(const struct verdict_rule *rule, const char *command);

/* Open db_path (not created) and resolve the run selector; prints the error and returns the exit
 * status on failure, -1 on success. */
int report_open(const char *db_path, const char *run_selector, struct db **db, int64_t *run_id);

/* The --format value as an enum report_format (NULL, not given: the first format of kind, 0 for
 * any; render.h); prints the valid choices and returns -1 when unknown. */
int report_format_arg(const char *format, unsigned kind);

/* Print err (as "report: ...") and return status: `status = report_error(&err, EXIT_FAIL);`. */
int report_error(const struct bd_error *err, int status);

/* One output of a command in one format, built in text and written to stdout at its end. */
struct report_output {
	enum report_format fmt;
	struct strbuf text;   /* may hold a preamble before report_output_begin */
};
#define REPORT_OUTPUT_INIT {.text = STRBUF_INIT}
void report_output_begin(struct report_output *out, enum report_format fmt);
/* Append t when rc is 0, else print err; t is freed either way. Returns rc. */
int report_output_table(struct report_output *out, struct table *t, int rc,
			const struct bd_error *err);
/* rc 0: close the output, write it to stdout and return EXIT_OK; else write nothing and return
 * EXIT_FAIL (the failure was printed by report_output_table). */
int report_output_end(struct report_output *out, int rc);
void report_output_free(struct report_output *out);
/* Write tables[0..n-1] to stdout as one output in fmt. */
void report_print(enum report_format fmt, const struct table *tables, size_t n);

/* The measured (non-warm-up) iterations of one case, in nanoseconds, per phase; total[i] is the
 * sum of all phases of iteration i (fwd+bwd(+opt)) over iterations that have every phase. */
struct case_series {
	double *ns[PHASE_COUNT];
	size_t *at[PHASE_COUNT];   /* the measured iteration (0-based) of each ns[p][k] */
	size_t n[PHASE_COUNT];
	double *total;
	size_t ntotal;
	unsigned phases;   /* bit per phase that has samples */
};

int case_series_load(struct db *db, const struct case_row *c, struct case_series *s,
		     struct bd_error *err);
/* The same with the first `warmup` stored iterations taken as the warm-up instead of the case's
 * own (TABLE_OWN_WARMUP, -1: its own): the measured series are the case's iters iterations after
 * them, fewer where the run stored fewer. */
int case_series_load_from(struct db *db, const struct case_row *c, int64_t warmup,
			  struct case_series *s, struct bd_error *err);
void case_series_free(struct case_series *s);

/* ---- a case's measurement marks (report_common.c) ----------------------------------------------
 * What `report` (table), `plot`, `writeup`, `warmup` and `export` show beside a case whose figure
 * cannot be taken at face value; the verdict commands apply their own rules (verdict.c). */
enum case_mark_bit {
	CASE_MARK_CONTENDED = 1,   /* waited for a CPU more than REPORT_CPU_WAIT_LEVEL_PCT of its time */
	CASE_MARK_UNSTABLE = 2,    /* its median's relative standard error above REPORT_UNSTABLE_RSE_PCT */
};
struct case_mark {
	unsigned bits;
	double cpu_wait;      /* cases.cpu_wait; -1 unknown */
	double rse;           /* cases.rse, else estimated from s (common/median_rse.h); -1 unknown */
};
/* The marks of case c whose measured iterations' times (phases summed, in order) are
 * times[0..n) (NULL: the stored rse only). */
void case_mark_of(const struct case_row *c, const double *times, size_t n, struct case_mark *m);
/* "contended (waited 62%)", "unstable (median +-4.1%)", both joined by ", ", "" for none. */
void case_mark_text(const struct case_mark *m, char *out, size_t n);
/* The note under a table whose cases carry the marks in bits (nothing for 0). */
void case_mark_note(struct table *t, unsigned bits);

/* Which series of a case a comparison uses: one phase, or the per-iteration total. */
enum series_pick { PICK_FWD = 0, PICK_BWD = 1, PICK_OPT = 2, PICK_TOTAL = 3 };
/* Parse "fwd", "bwd", "opt", "total"; prints the valid choices and returns -1 when unknown. */
int series_pick_arg(const char *s);
extern const char *const series_pick_names[4];
/* The samples of pick (n = 0 when the case has none). */
const double *case_series_pick(const struct case_series *s, enum series_pick pick, size_t *n);

/* ---- the options the commands share, declared once --------------------------------------------
 * A command keeps them in one struct report_options (REPORT_OPTIONS_INIT gives the defaults) and
 * lists REPORT_OPT_*(&o) in its option table, beside its own options. */
struct report_options {
	const char *db_path, *run_sel, *format, *suite, *phase;
	struct opt_list where;
	struct verdict_rule rule;
};
#define REPORT_OPTIONS_INIT                                                                        \
	{.db_path = BENCHDB_DEFAULT_DB, .run_sel = "latest", .format = NULL, .phase = "total",     \
	 .rule = VERDICT_RULE_DEFAULT}
#define REPORT_STR(x) REPORT_STR_(x)
#define REPORT_STR_(x) #x

#define REPORT_OPT_DB(o)                                                                           \
	{"db", 0, OPT_STRING, "PATH", "database to read (default " BENCHDB_DEFAULT_DB ")",         \
	 &(o)->db_path}
#define REPORT_OPT_RUN(o, help) {"run", 'r', OPT_STRING, "SEL", help, &(o)->run_sel}
/* --format: any format of kind (render.h; 0: all of them); not given, the first of them */
#define REPORT_OPT_FORMAT(o, kind)                                                                 \
	{"format", 'f', OPT_STRING, "FMT", format_help(kind), &(o)->format}
#define REPORT_OPT_SUITE(o)                                                                        \
	{"suite", 0, OPT_STRING, "NAME", "only cases of this suite", &(o)->suite}
#define REPORT_OPT_WHERE(o)                                                                        \
	{"where", 'w', OPT_LIST, "KEY=V[,V]",                                                      \
	 "only cases with one of these values (repeatable: every key must match)", &(o)->where}
#define REPORT_OPT_PHASE(o)                                                                        \
	{"phase", 0, OPT_STRING, "PHASE", "fwd, bwd, opt or total (default total)", &(o)->phase}
#define REPORT_OPT_ALPHA(o)                                                                        \
	{"alpha", 0, OPT_DOUBLE, "P",                                                              \
	 "significance level of the tests (default " REPORT_STR(REPORT_ALPHA) ")",                 \
	 &(o)->rule.alpha}
#define REPORT_OPT_THRESHOLD(o, help)                                                              \
	{"threshold", 0, OPT_PERCENT, "PCT",                                                       \
	 help " (default " REPORT_STR(REPORT_THRESHOLD_PCT) ")",                                   \
	 &(o)->rule.threshold}
#define REPORT_OPT_TIE_BAND(o)                                                                     \
	{"tie-band", 0, OPT_PERCENT, "PCT",                                                        \
	 "speedups within this of 1 are ties (default " REPORT_STR(REPORT_TIE_BAND_PCT) ")",       \
	 &(o)->rule.tie_band}

/* Which cases of a run a command looks at. */
struct case_filter {
	const char *suite;                /* NULL: all */
	const char *const *where;         /* "key=value" strings matched against the params JSON */
	int nwhere;
	int rows_only;                    /* 1: do not load the series (the command reads samples itself) */
};

/* Keep the rows that pass the --where of f (a key's values, in one --where as KEY=A,B or in
 * several, are alternatives; every key must hold), in order, at rows[0..*n-1] (the others are moved
 * behind them, so freeing the original count frees all). BD_EINVAL for a malformed --where or a
 * key no row has; scope names the rows in that message ("run 3", "any run"). */
int case_rows_filter(struct case_row *rows, size_t *n, const struct case_filter *f,
		     const char *scope, struct bd_error *err);

/* The filter of --suite and --where. */
struct case_filter report_filter(const struct report_options *o);

/* The cases of a run that pass the filter, in order, with their measured series. */
struct case_set {
	struct case_row *rows;
	struct case_series *series;
	size_t n;
};

/* BD_EINVAL for a malformed --where or a key no case of the run has (the message lists them). */
int case_set_load(struct db *db, int64_t run_id, const struct case_filter *f, struct case_set *out,
		  struct bd_error *err);
void case_set_free(struct case_set *s);
/* report_open, then case_set_load of the run: prints the error and returns the exit status on
 * failure (usage for a bad --where), -1 on success. */
int report_open_set(const char *db_path, const char *run_selector, const struct case_filter *f,
		    struct db **db, int64_t *run_id, struct case_set *set);

/* Lookup of a case set's cases by case key (optionally with the impl token removed, so that
 * cases differing only in impl share a key), in O(log n). */
struct case_index {
	struct case_index_entry *entries;   /* sorted by (key, impl) */
	size_t n;
};
void case_index_build(const struct case_set *set, int without_impl, struct case_index *idx);
/* Index into set of the case with key (and impl, when not NULL), or -1. A key a run measured
 * more than once (a sweep that lists a case twice) gives its first case (lowest index): the run is
 * the unit of evidence, so a run's copies of a case count once, as its first. */
long case_index_find(const struct case_index *idx, const char *key, const char *impl);
/* first[i] = 1 when rows[i] is the first of rows[0..n-1] (one run's) with its case key, else 0
 * (case_index_find's rule, for rows without an index); malloc'd, n + 1 bytes. */
unsigned char *case_rows_first_of_key(const struct case_row *rows, size_t n);
void case_index_free(struct case_index *idx);
/* The case key without its impl=... (or param=...) token, e.g. "seq_len" or "dtype" (malloc'd). */
char *case_key_without_impl(const char *key);
char *case_key_without(const char *key, const char *param);
/* A peer's own parameters are the tokens of a key that the parameter table does not have
 * (schemas/peer-protocol.md, "Peer parameters"): the key without them (malloc'd), and them as
 * "name=value name=value" into out ("" for none). */
char *case_key_without_peer_params(const char *key);
void case_key_peer_params(const char *key, char *out, size_t n);

struct pair_result;

/* ---- one side of a comparison: a group of runs (run_group.c) --------------------------------- */

#define RUN_GROUP_MAX 64
/* Which runs: each selector of sels (a run each: id, uuid prefix, label, commit, latest), every run
 * labelled label (NULL: none), then only the last `last` by id (0: all); with no selector and no
 * label, `last` alone takes the last runs before the first run of the other side. */
struct run_group_spec {
	const char *side;                 /* "baseline" or "candidate", for messages and options */
	const char *const *sels;
	int nsels;
	const char *label;
	long last;
};
struct run_group {
	int64_t *ids;                     /* ascending */
	size_t n;
	struct run_row *rows;             /* (n) */
	char (*sessions)[DB_SESSION_MAX]; /* (n) each run's session (noise_session_key) */
	struct case_set *sets;            /* (n) after run_group_load */
	struct case_index *index;         /* (n) by case key */
};
/* Select the runs of spec, leaving out those of exclude (may be NULL). BD_ENOTFOUND when nothing
 * matches (or a selector's own error), BD_EINVAL beyond RUN_GROUP_MAX runs or when one of spec's
 * selectors names a run of exclude (a run is never compared with itself). */
int run_group_select(struct db *db, const struct run_group_spec *spec,
		     const struct run_group *exclude, struct run_group *g, struct bd_error *err);
/* Load and index every run's cases that pass f. */
int run_group_load(struct db *db, struct run_group *g, const struct case_filter *f,
		   struct bd_error *err);
void run_group_free(struct run_group *g);
/* "run 3" or "runs 1, 2, 4" (long lists elided). */
void run_group_describe(const struct run_group *g, struct strbuf *sb);

/* The noise model for comparing the runs of groups (sides) sides[0..nsides-1] on pick: the
 * sides' runs as sources 1..nsides (their sessions differenced only within a side), and, with
 * history, the other complete runs of the sides' systems as source 0 (noise_history_load, every
 * case key of those systems: the pool is the system's). The sides' runs only on the case keys
 * keys[0..nkeys-1] (sorted, strcmp). d and m are the caller's to free. */
int run_groups_noise(struct db *db, const struct run_group *const *sides, size_t nsides,
		     int pick, const char *const *keys, size_t nkeys, int history,
		     const struct noise_assumed *a, struct noise_data *d, struct noise_model *m,
		     struct bd_error *err);
/* The runs method for one case key between groups b and c (at_b, at_c: the case's index in each
 * run's set, -1 where absent; runs whose case is not ok are left out): each side's runs' log
 * medians, the variance of their difference from the model, and the verdict of a family of one
 * (wait_base/wait_cand filled from cases.cpu_wait). BD_EINVAL when a side has no run with
 * samples of pick. */
int run_groups_compare_case(const struct noise_model *m, const struct noise_data *d,
			    const char *key, const struct run_group *b, const long *at_b,
			    const struct run_group *c, const long *at_c, int pick,
			    const struct verdict_rule *rule, struct pair_result *out);

/* Verdict on a change from a baseline (verdict.c): speedup = baseline / candidate time with its
 * 95% CI, and one-sided tests of "slower" and "faster", their p-values adjusted for all the cases
 * of the report together (Benjamini-Hochberg) and held against alpha. Two methods:
 *
 * runs (regress, compare across runs, history, nodes): each run's log median is one sample, and
 * the noise between runs comes from the noise model (noise.h): d = mean log time of the
 * candidate's runs - the baseline's, var(d) from the model, a t test with its degrees of freedom.
 *   slower / faster: significant (adjusted p of "no change" against that direction <= alpha) and
 *                    the change itself beyond the threshold;
 *   same:            the whole 95% CI within the threshold;
 *   unsure:          neither: these runs cannot tell (the notes say what change they could);
 * iterations (report --compare IMPL, within one run): the iterations are the samples
 *   (Mann-Whitney U against the threshold, exact up to 50 samples, bootstrap CI of the ratio of
 *   medians); faster / slower when the interval lies beyond the threshold.
 * Both: insufficient with fewer than REPORT_MIN_ITERS iterations in a run (or too few for the
 * exact rank test to reach alpha, iterations method): no claim either way. contended: the test
 * said slower (or faster), but the side that looks slower waited for a CPU enough to explain it
 * (rule->cpu_wait_gap, rule->cpu_wait_level; compare: either side at the level). */
enum verdict { VERDICT_FASTER, VERDICT_SLOWER, VERDICT_SAME, VERDICT_UNSURE, VERDICT_INSUFFICIENT,
	       VERDICT_CONTENDED, VERDICT_COUNT };
extern const char *const verdict_names[VERDICT_COUNT];
/* Whether the machine, not the code, may be what changed: the side that looks slower waited for a
 * CPU (share of its measured time, -1 unknown) rule->cpu_wait_gap more than the other (both
 * known), or rule->cpu_wait_level or more (either side, with rule->either_contended). */
int verdict_contended(double wait_slow, double wait_fast, const struct verdict_rule *rule);
/* Fewer measured iterations than this in a run on either side (or so few that the exact rank test
 * cannot reach alpha at all) is the verdict "insufficient": no claim either way, regress exits 2. */
#define REPORT_MIN_ITERS 5
/* 1 when nb vs nc samples are too few for a verdict at alpha (the help texts say so). */
int verdict_insufficient(size_t nb, size_t nc, const struct verdict_rule *rule);

enum verdict_method {
	METHOD_ITERATIONS,   /* one run a side, within a run: the iterations are the samples */
	METHOD_RUNS,         /* each run's median is one sample; noise between runs modelled */
};

/* One baseline/candidate comparison. */
struct pair_result {
	struct summary base, cand;   /* iterations method: over the side's iterations; runs: n is
					the iterations of all its runs, median the geometric mean of
					the runs' medians */
	size_t runs_base, runs_cand;
	enum verdict_method method;
	struct ratio_ci speedup;     /* base / cand time, 95% CI */
	struct mann_whitney mw;      /* iterations method: the rank test of no change */
	double p;                    /* two-sided p of no change */
	double p_slower, p_faster;   /* one-sided p: iterations: beyond the threshold; runs: of no
					change, against that direction */
	double q_slower, q_faster;   /* the same, Benjamini-Hochberg adjusted over the family */
	int insufficient;
	/* runs method: d = mean log run median of cand - base, its standard error and df */
	double log_change, se, df;
	double detectable;           /* the change in time (fraction) detected as slower 90% of
					the time at alpha (iterations: from the bootstrap interval) */
	/* the share of its measured time each side waited for a CPU (mean over its runs of
	 * cases.cpu_wait); -1 unknown. compare_* set -1; the caller fills them before deciding. */
	double wait_base, wait_cand;
	/* within one run (compare_pairs): each side's median's relative standard error within its
	 * run (case_mark_of); <= 0 unknown, and between runs, where the run noise stands for it */
	double rse_base, rse_cand;
	enum verdict verdict;
};
/* Iterations method, one run a side. BD_EINVAL when a series is empty or a median is not
 * positive. The verdict is that of a family of one; verdicts_decide re-decides it within a
 * report's family. */
int compare_pair(const double *xb, size_t nb, const double *xc, size_t nc,
		 const struct verdict_rule *rule, struct pair_result *out);
/* Runs method: d (mean log time of the candidate's runs - the baseline's) with variance var and
 * df degrees of freedom (noise_diff_var; INFINITY: normal); insufficient: a run had too few
 * iterations. Fills the p-values, the interval, the detectable change and a family-of-one
 * verdict. */
void compare_modeled(double d, double var, double df, int insufficient,
		     const struct verdict_rule *rule, struct pair_result *out);
/* The one-sided quantile of the runs method's tests: t at 1 - alpha with df (normal for df
 * INFINITY). */
double verdict_quantile(double p, double df);
/* The median, least and largest of the detectable changes x[0..n-1] of a report's cases (x is
 * not modified). 0, or BD_EINVAL when n is 0. */
int detectable_range(const double *x, size_t n, double *median, double *lo, double *hi);
/* Decide the verdicts of results[0..n-1], the cases of one report, together: the slower and
 * faster tests Benjamini-Hochberg adjusted. */
void verdicts_decide(struct pair_result *const *results, size_t n, const struct verdict_rule *rule);

/* A matched baseline/candidate pair of cases (indices into their case sets) and its comparison. */
struct case_pair {
	size_t base, cand;
	int ok;                      /* 0 when the series could not be compared */
	struct pair_result result;
};
/* Compare every pair on pick; pairs are independent, so they run on all cores (OpenMP), and the
 * result does not depend on the thread count (each bootstrap has its own fixed seed). */
void compare_pairs(const struct case_set *base, const struct case_set *cand,
		   struct case_pair *pairs, size_t n, enum series_pick pick,
		   const struct verdict_rule *rule);
/* verdicts_decide over the pairs that are ok. */
void compare_pairs_decide(struct case_pair *pairs, size_t n, const struct verdict_rule *rule);
/* Across runs, the run is the unit (`report compare --baseline RUN`, the site's compare pages):
 * pair every ok case of cand's first run with the ok case of the same key in base's first run
 * (a later copy of a key in a run left out), and judge each with the noise between runs (the
 * model of the two runs and their systems' history, compare_pairs_decide over them). *pairs
 * (malloc'd, *n) index base->sets[0] and cand->sets[0]; note gets the model's line. */
int compare_runs(struct db *db, struct run_group *base, struct run_group *cand, int pick,
		 const struct verdict_rule *rule, struct case_pair **pairs, size_t *n,
		 struct strbuf *note, struct bd_error *err);

/* Bootstrap settings every comparison uses, so that reports are reproducible. */
#define REPORT_BOOTSTRAP_RESAMPLES 2000
#define REPORT_BOOTSTRAP_SEED 20261121u
#define REPORT_CI_LEVEL 0.95

/* Value of a top-level key of a JSON object as text, at most n - 1 bytes ("" if absent or the
 * object is malformed before it): a string decoded (escapes, \uXXXX as UTF-8), any other value
 * as written. */
void json_field(const char *json, const char *key, char *out, size_t n);

/* ---- the tables of table (tables.c), warmup (warmup.c) and compare (compare.c), shared with
 * writeup. Each fills t (initialised even on failure: the caller table_free()s it) exactly as its
 * command prints it. */

/* `report table`'s table of cases (all of one suite, which picks the parameter columns): mean and
 * std of every phase and of the per-iteration total, GFLOP/s, peak memory; notes for non-ok cases.
 * TABLE_DERIVED adds tokens/s and samples/s (of the per-iteration total), GB/s per phase (the
 * workload's stated bytes) and CV% of the total. */
enum table_flags { TABLE_DERIVED = 1, TABLE_EVERY_COLUMN = 2 };
int table_of_cases(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		   unsigned flags, struct table *t, struct bd_error *err);
/* The same with options. TABLE_EVERY_COLUMN adds every column a shape may choose (shape.h):
 * every key of the cases' params JSON, compile, each phase whether any case has it, and fwd+bwd
 * beside fwd+bwd+opt. warmup: the iterations taken as warm-up (the measured ones are the case's
 * iters after them, from the stored samples), TABLE_OWN_WARMUP: each case's own. */
#define TABLE_OWN_WARMUP (-1)
struct table_options {
	unsigned flags;      /* enum table_flags */
	int64_t warmup;
};
int table_of_cases_opts(struct db *db, const char *suite, const struct case_row *cases, size_t n,
			const struct table_options *opt, struct table *t, struct bd_error *err);
/* Whether a case ran compiled (torch.compile): its `compile` parameter (a peer's) when it has
 * one, else a word "compile" in its impl's name (pytorch_compile). */
int case_compiled(const struct case_row *c);
/* `report table --pivot KEY`: one row per case that differs only in KEY, one column per value of
 * KEY holding the mean time of pick; warmup as in struct table_options (TABLE_OWN_WARMUP: each
 * case's own). */
int pivot_table(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		const char *key, enum series_pick pick, int64_t warmup, struct table *t,
		struct bd_error *err);

/* Per-iteration times of one case, warm-up included (index = iteration), in nanoseconds, for pick;
 * *x is malloc'd. Iterations missing a phase of the pick are dropped from the end. */
int case_iterations(struct db *db, const struct case_row *c, enum series_pick pick, double **x,
		    size_t *n, struct bd_error *err);
#define WARMUP_MAX_K 16
/* `report warmup`'s table: for each ok case of set, mean/std after k = ks[0..nk-1] (nk <= 16)
 * warm-up iterations, the first-iteration penalty and the steady-state iteration (band a
 * fraction, steady_state_index). */
int warmup_table(struct db *db, int64_t run_id, const struct case_set *set, const int *ks, int nk,
		 enum series_pick pick, double band, struct table *t, struct bd_error *err);

/* Pair every ok case of cand with its ok baseline in base — by impl (base == cand: cases that
 * differ only in impl, the baseline's impl being impl) or, impl NULL, by case key — and compare
 * them on pick (compare_pairs). *pairs is malloc'd, *n entries, in cand's order. */
void compare_match(const struct case_set *base, const struct case_set *cand, const char *impl,
		   enum series_pick pick, const struct verdict_rule *rule, struct case_pair **pairs,
		   size_t *n);
/* The same within one set by a parameter (built-in or a peer's; `--baseline KEY=VALUE`): every
 * ok case whose key is not value is paired with the ok case that differs from it only in key and
 * has key = value. */
void compare_match_param(const struct case_set *set, const char *key, const char *value,
			 enum series_pick pick, const struct verdict_rule *rule,
			 struct case_pair **pairs, size_t *n);
/* `report compare`'s per-case table (titled title) and per-impl summary (by_run: one row, "all")
 * from the pairs that are ok. Returns how many pairs are ok; with none, both tables are left
 * empty. */
size_t compare_tables(const struct case_set *cand, const struct case_pair *pairs, size_t n,
		      const char *title, int by_run, const struct verdict_rule *rule,
		      struct table *t, struct table *sum);

/* ---- charts (chart.c), shared by plot and writeup ------------------------------------------- */

enum chart_kind { CHART_LATENCY, CHART_SPEEDUP, CHART_WARMUP, CHART_MEMORY, CHART_HISTORY,
		  CHART_KINDS };
extern const char *const chart_kind_names[CHART_KINDS];

struct chart_request {
	enum chart_kind kind;
	const char *dir;             /* output directory (exists); files are DIR/<kind>.png, .svg */
	int64_t run_id;
	const struct case_set *set;  /* the run's cases after --suite/--where */
	const char *baseline;        /* speedup: the baseline impl */
	enum series_pick pick;       /* which series is timed */
	int gaps_counted;            /* latency, memory: count the cases that did not run in the
					notes instead of naming them */
};

/* Build the chart rq asks for from the stored data and write it through plot_write. notes gets
 * lines (each ending in '\n') about what was left out or how to read it. BD_ENOTFOUND without
 * gnuplot (plot_write's message), BD_EIO with gnuplot's message, BD_EINVAL when the cases give
 * nothing to draw (the message says why), BD_EDB from the database. */
int chart_write(struct db *db, const struct chart_request *rq, struct strbuf *notes,
		struct bd_error *err);
/* mkdir -p dir; BD_EIO (with the path and errno's text) when it cannot be made. */
int output_dir_make(const char *dir, struct bd_error *err);

#endif
