/* report/render_csv.c: RFC 4180 CSV; numbers unrounded, units in the header as name_unit, each
 * header unique (a repeated one gets "_2", as JSON's keys). */
#include <stdlib.h>
#include <string.h>

#include "renderers.h"
#include "xalloc.h"

static void csv_field(const char *s, struct strbuf *out)
{
	if (!strpbrk(s, ",\"\n\r")) {
		sb_add(out, s);
		return;
	}
	sb_addc(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			sb_addc(out, '"');
		sb_addc(out, *s);
	}
	sb_addc(out, '"');
}

static void csv_rows(const struct table *t, struct strbuf *out)
{
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *cl = &t->cells[r * t->ncols + c];
			if (c)
				sb_addc(out, ',');
			if (cl->kind == CELL_TEXT)
				csv_field(cl->text, out);
			else if (cl->kind == CELL_NUMBER)
				sb_addf(out, "%.17g", cl->value);
		}
		sb_addc(out, '\n');
	}
}

static void csv_table(const struct table *t, struct strbuf *out)
{
	/* Several tables in one output are separated by a blank line. */
	if (out->len)
		sb_addc(out, '\n');
	/* a name equal to an earlier column's gets "_2", "_3", ... as JSON's keys do: a reader by
	 * header name (Python's csv.DictReader) would otherwise take the later column for both
	 * (export --what stats: a matmul case's parameter n for the iteration count n) */
	struct strbuf *h = xcalloc(t->ncols ? t->ncols : 1, sizeof(*h));
	for (size_t c = 0; c < t->ncols; c++) {
		struct strbuf base = STRBUF_INIT;
		sb_add(&base, t->cols[c].name);
		if (t->cols[c].unit[0])
			sb_addf(&base, "_%s", t->cols[c].unit);
		for (char *p = base.buf; p && *p; p++)
			if (*p == ' ' || *p == '+' || *p == '/')
				*p = '_';
		column_name_unique(h, c, sb_str(&base));
		sb_free(&base);
		if (c)
			sb_addc(out, ',');
		csv_field(sb_str(&h[c]), out);
	}
	for (size_t c = 0; c < t->ncols; c++)
		sb_free(&h[c]);
	free(h);
	sb_addc(out, '\n');
	csv_rows(t, out);
}

const struct renderer render_csv = {.table = csv_table, .rows = csv_rows};
