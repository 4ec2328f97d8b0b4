/* report/shape.h: a table made ready to paste — columns chosen, ordered and renamed, every time
 * in one unit, the columns that hold one value on every row folded into the caption — and the
 * named layouts (`report table --layout NAME`) that do all of it at once for a known table, the
 * transformer-systems coursework's first.
 *
 * Shaping works on a built struct table (render.h), whatever built it: a column is named by its
 * name as the table has it ("fwd mean", "peak mem"), spaces and underscores alike, without its
 * unit. */
#ifndef BENCHDB_SHAPE_H
#define BENCHDB_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "render.h"
#include "strbuf.h"

struct shape_column {
	char *name;      /* as the table names it */
	char *heading;   /* the new name; NULL: keep it */
	int if_varies;   /* "?name": only where its value differs between rows (or is missing) */
};

struct table_shape {
	struct shape_column *cols;   /* the columns kept, in order; none: every column, as built */
	size_t ncols;
	const char *time_unit;       /* ns, us, ms, s or sec (s labelled "sec"); NULL: as built */
	int fold;                    /* columns with one value on every row go into the title */
};

/* The time units --time-unit takes, as its help and errors say them. */
#define SHAPE_TIME_UNITS "ns, us, ms, s or sec"

/* Parse a --columns list: "[?]name[=heading],..." (a heading may not hold a comma; "?name": the
 * column only where its values differ between the rows, and no error where the table lacks it). BD_EINVAL with
 * the item when an item is empty or has an empty name or heading, or a name is listed twice;
 * BD_EINVAL when time_unit is not one of SHAPE_TIME_UNITS. columns may be NULL (keep them all). */
int table_shape_parse(const char *columns, const char *time_unit, int fold,
		      struct table_shape *s, struct bd_error *err);
void table_shape_free(struct table_shape *s);

/* Reshape t in place. titled: the output format shows titles (FORMAT_UNTITLED formats do not,
 * so there nothing is folded: a folded column would be lost). exact: the format promises numbers
 * at full precision (FORMAT_DATA), so a column of numbers is not folded either: the title would
 * show it rounded to its decimals. BD_EINVAL, t unchanged, when a column of s is not in t; the
 * message lists t's columns. */
int table_shape_apply(const struct table_shape *s, int titled, int exact, struct table *t,
		      struct bd_error *err);

/* --prefer KEY=V1,V2,...: among rows that differ only in KEY (their case keys without it), keep
 * the one whose KEY comes first in the list; rows whose KEY is not listed go. Kept rows first, in
 * order, at rows[0..*n-1] (the others behind them, so freeing the original count frees all), as
 * case_rows_filter. BD_EINVAL for text that is not KEY=V[,V...]. */
struct case_row;
struct db;
int case_rows_prefer(struct case_row *rows, size_t *n, const char *prefer, struct bd_error *err);

/* The parameters a data export names a case by, for the cases rows[0..n-1]: the tokens of their
 * case keys but impl (a column of its own), in case-key order (common/params.c key_rank; a
 * peer's own parameters after them, by name); at most max, into keys. Returns how many. */
#define PARAM_KEY_MAX 48
size_t case_param_columns(const struct case_row *const *rows, size_t n, char (*keys)[PARAM_KEY_MAX],
			  size_t max);

/* `report compare`'s per-case table t, for csv and json: each pair's parameters (the candidate's)
 * and both sides' peak memory as more columns. pairs[0..n-1] as compare_tables took them (its
 * rows are the pairs that are ok, in order). */
struct case_set;
struct case_pair;
void compare_table_add_cases(struct table *t, const struct case_set *base,
			     const struct case_set *cand, const struct case_pair *pairs, size_t n);

/* A named layout of `report table`: the cases it takes, how it collapses and groups them, and
 * the shape of its tables. */
struct table_layout {
	const char *name;
	const char *summary;     /* one line for --help and the error that lists the layouts */
	const char *suite;       /* only cases of this suite */
	const char *prefer;      /* --prefer KEY=V1,V2,...: one row among cases differing in KEY */
	const char *group_by;    /* one table per value of this parameter */
	const char *columns;     /* --columns */
	const char *time_unit;   /* --time-unit */
	const char *title;       /* each table's title, before its group and warm-up */
};

/* What `report table` makes of a run's cases (and `report writeup` of its e2e cases with the
 * coursework layout): one table per suite and group_by value, in order of first appearance. */
struct table_request {
	const char *group_by;            /* NULL: one table per suite */
	const char *pivot;               /* one column per value of this parameter (pivot_table) */
	const char *prefer;              /* case_rows_prefer first; NULL: every case */
	int pick;                        /* enum series_pick, for pivot */
	unsigned flags;                  /* enum table_flags */
	int64_t warmup;                  /* TABLE_OWN_WARMUP or the iterations taken as warm-up */
	const struct table_shape *shape; /* NULL: the tables as built */
	const char *title;               /* NULL: the suite (", KEY=VALUE" with group_by) */
	int titled;                      /* the output shows titles (folding needs them) */
	int exact;                       /* numbers at full precision: no number column folds */
};
/* Build the tables of rows[0..n-1] (reordered by prefer; the caller frees them by the count it
 * had) into *tables (malloc'd, *ntables of them, each to table_free). BD_EINVAL from prefer or a
 * shape that names a column a table lacks, else what the tables' loading returns. */
int report_tables(struct db *db, struct case_row *rows, size_t n, const struct table_request *rq,
		  struct table **tables, size_t *ntables, struct bd_error *err);

/* The layout called name, or NULL. */
const struct table_layout *table_layout_find(const char *name);
/* "coursework" (and any others), comma-separated, into out. */
void table_layout_names(struct strbuf *out);

#endif
