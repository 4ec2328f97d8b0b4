/* report/render.h: tables built from values plus units, written through one renderer per format.
 *
 * A command fills a struct table with typed cells; render_table() turns it into markdown (human
 * units, aligned), CSV (raw numbers, unit in the header) and, later, JSON and LaTeX. A new format
 * is one renderer. */
#ifndef BENCHDB_RENDER_H
#define BENCHDB_RENDER_H

#include <stddef.h>

#include "strbuf.h"

enum report_format { FORMAT_MD, FORMAT_CSV, FORMAT_COUNT };
/* -1 when unknown. */
int format_parse(const char *s);
extern const char *const format_names[FORMAT_COUNT];

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
	char *title;             /* markdown heading; NULL for none */
	struct column *cols;
	size_t ncols;
	struct cell *cells;      /* row-major, nrows x ncols */
	size_t nrows, alloc_rows;
	char **notes;            /* lines printed under the table (markdown) or dropped (csv) */
	size_t nnotes;
};

void table_init(struct table *t, const char *title);
/* Append a column; returns its index. */
size_t table_column(struct table *t, const char *name, const char *unit, int decimals);
/* Append an empty row; returns its index. */
size_t table_row(struct table *t);
void table_text(struct table *t, size_t row, size_t col, const char *text);
void table_number(struct table *t, size_t row, size_t col, double value);
void table_note(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void table_free(struct table *t);

/* Append t rendered as fmt to out. */
void render_table(const struct table *t, enum report_format fmt, struct strbuf *out);

#endif
