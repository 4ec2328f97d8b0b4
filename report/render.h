/* report/render.h: tables built from values plus units, written through one renderer per format.
 *
 * A command fills a struct table with typed cells; render_table() turns it into markdown (human
 * units, aligned), CSV (raw numbers, unit in the header), JSON (raw numbers, for scripts) or a
 * LaTeX booktabs table. A new format is one renderer (render_<format>.c) and one row in render.c.
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

enum report_format { FORMAT_MD, FORMAT_CSV, FORMAT_JSON, FORMAT_TEX, FORMAT_COUNT };
/* The format named s ("md", "csv", "json", "tex"); -1 when unknown. */
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
	char *title;             /* heading (md), "title" (json), caption (tex); NULL for none */
	struct column *cols;
	size_t ncols;
	struct cell *cells;      /* row-major, nrows x ncols */
	size_t nrows, alloc_rows;
	char **notes;            /* lines under the table (md, tex), "notes" (json); dropped in csv */
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

/* Open and close one output in fmt. JSON: render_begin appends "[" and render_end "]", and the
 * tables between them become the array's elements, commas included, so the output is one JSON
 * document; a command that skips them gets one bare object per table, which is valid JSON only
 * when there is exactly one table. md, csv, tex: both append nothing. */
void render_begin(enum report_format fmt, struct strbuf *out);
void render_end(enum report_format fmt, struct strbuf *out);
/* Append t rendered as fmt to out. */
void render_table(const struct table *t, enum report_format fmt, struct strbuf *out);

#endif
