/* report/render_csv.c: RFC 4180 CSV; numbers unrounded, units in the header as name_unit. */
#include <string.h>

#include "renderers.h"

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
	for (size_t c = 0; c < t->ncols; c++) {
		struct strbuf h = STRBUF_INIT;
		sb_add(&h, t->cols[c].name);
		if (t->cols[c].unit[0])
			sb_addf(&h, "_%s", t->cols[c].unit);
		for (char *p = h.buf; p && *p; p++)
			if (*p == ' ' || *p == '+' || *p == '/')
				*p = '_';
		if (c)
			sb_addc(out, ',');
		csv_field(sb_str(&h), out);
		sb_free(&h);
	}
	sb_addc(out, '\n');
	csv_rows(t, out);
}

const struct renderer render_csv = {.table = csv_table, .rows = csv_rows};
