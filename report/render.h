/* report/render.h: tables built from values plus units, written through one renderer per format.
 *
 * A command fills a struct table with typed cells; render_table() turns it into markdown (human
 * units, aligned), CSV (raw numbers, unit in the header), JSON (raw numbers, for scripts) or a
 * LaTeX booktabs table. A new format is one renderer (render_<name>.c, which defines
 * `const struct renderer render_<name>`: renderers.h) and one row in REPORT_FORMATS below; the
 * enum, the names --format accepts, its help text and every command's choices follow from the row.
 *
 * One output of a command, whatever it holds, is:
 *     render_begin(fmt, &out);
 *     render_table(&t1, fmt, &out); render_table(&t2, fmt, &out); ...   (zero tables is fine)
 *     render_end(fmt, &out);
 * with nothing but tables appended to out in between when fmt is FORMAT_JSON. */
#ifndef BENCHDB_RENDER_H
#define BENCHDB_RENDER_H

#include <stddef.h>

#include "strbuf.h"

/* What a format is for, which is all a command may ask of it (never which format it is). */
enum format_kind {
	FORMAT_TERMINAL = 1,   /* read by people at a terminal: short run uuids, a run header */
	FORMAT_DATA = 2,       /* for scripts: raw numbers at full precision; what export writes */
	FORMAT_UNTITLED = 4,   /* tables lose their titles: a command that needs one for telling
				  tables apart names their subject in a column instead */
	FORMAT_SHORT = 8,      /* a pull-request comment or a CI job summary (GitHub, GitLab):
				  tables fold their notes; regress and changes open with a marker
				  line naming the command (so that a CI job finds and updates its one
				  comment), then the verdict, and fold the details */
};

/* The output formats, one row each: X(ID, name, kinds). The first row is the default of
 * --format; export's default is the first row of kind FORMAT_DATA. tests/cli/lib.sh reads the
 * rows (the help goldens' @FORMATS@), so keep one row a line. */
#define REPORT_FORMATS(X)                                                                          \
	X(MD, md, FORMAT_TERMINAL)                                                                 \
	X(CSV, csv, FORMAT_DATA | FORMAT_UNTITLED)                                                 \
	X(JSON, json, FORMAT_DATA)                                                                 \
	X(TEX, tex, 0)                                                                             \
	X(HTML, html, 0)                                                                           \
	X(SUMMARY, summary, FORMAT_SHORT)

#define FORMAT_ENUM_ROW(id, name, kinds) FORMAT_##id,
enum report_format { REPORT_FORMATS(FORMAT_ENUM_ROW) FORMAT_COUNT };
#undef FORMAT_ENUM_ROW

/* FORMAT_SHORT: what a command's output opens with: the marker line "<!-- benchdb: report
 * regress -->", then "### <mark> VERDICT" (mark by the exit status: 0 a check, 1 a cross, 2 a
 * warning sign). */
void format_summary_head(const char *command, int status, const char *verdict, struct strbuf *out);

/* The format named s; -1 when unknown. */
int format_parse(const char *s);
extern const char *const format_names[FORMAT_COUNT];
/* Whether fmt is of kind (an enum format_kind). */
int format_is(enum report_format fmt, unsigned kind);
/* The formats of kind (0: all) as --help says them, the default first: "md (default), csv, json
 * or tex". A static string, built on the first call. */
const char *format_help(unsigned kind);
/* The formats of kind (0: all) as an error message lists them: "md, csv, json, tex". */
void format_list(unsigned kind, struct strbuf *out);

enum cell_kind { CELL_EMPTY, CELL_TEXT, CELL_NUMBER };

struct cell {
	enum cell_kind kind;
	char *text;      /* CELL_TEXT: owned */
	double value;    /* CELL_NUMBER, in the column's unit */
};

struct column {
	char *name;      /* e.g. "fwd mean" */
	char *unit;      /* e.g. "ms"; "" for none */
	int decimals;    /* digits after the point in markdown */
};

struct table {
	char *title;             /* heading (md), "title" (json), caption (tex); NULL for none */
	struct column *cols;
	size_t ncols;
	struct cell *cells;      /* row-major, nrows x ncols */
	size_t nrows, alloc_rows;
	char **notes;            /* lines under the table (md, tex), "notes" (json); dropped in csv */
	size_t nnotes;
};

void table_init(struct table *t, const char *title);
/* Append a column (blank in the rows there are); returns its index. */
size_t table_column(struct table *t, const char *name, const char *unit, int decimals);
/* Append an empty row; returns its index. */
size_t table_row(struct table *t);
void table_text(struct table *t, size_t row, size_t col, const char *text);
void table_number(struct table *t, size_t row, size_t col, double value);
void table_note(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void table_free(struct table *t);

/* Open and close one output in fmt. JSON: render_begin appends "[" and render_end "]", and the
 * tables between them become the array's elements, commas included, so the output is one JSON
 * document; a command that skips them gets one bare object per table, which is valid JSON only
 * when there is exactly one table. md, csv, tex: both append nothing. */
void render_begin(enum report_format fmt, struct strbuf *out);
void render_end(enum report_format fmt, struct strbuf *out);
/* Append t rendered as fmt to out. */
void render_table(const struct table *t, enum report_format fmt, struct strbuf *out);
/* Append t's rows to out as more rows of the table of the same columns that out ends with, where
 * fmt can continue a table (CSV: no second header); otherwise render_table. */
void render_rows(const struct table *t, enum report_format fmt, struct strbuf *out);

#endif
