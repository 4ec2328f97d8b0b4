/* report/renderers.h: one renderer per output format (render_<name>.c), named by its row in
 * REPORT_FORMATS (render.h). */
#ifndef BENCHDB_RENDERERS_H
#define BENCHDB_RENDERERS_H

#include "render.h"

struct renderer {
	void (*table)(const struct table *t, struct strbuf *out);
	/* Optional: t's rows alone, continuing a table of the same columns (render_rows). */
	void (*rows)(const struct table *t, struct strbuf *out);
	/* Optional framing of one output holding any number of tables (render_begin/render_end);
	 * a format without one adds nothing around its tables. */
	void (*begin)(struct strbuf *out);
	void (*end)(struct strbuf *out);
};

#define RENDERER_DECLARE(id, name, kinds) extern const struct renderer render_##name;
REPORT_FORMATS(RENDERER_DECLARE)
#undef RENDERER_DECLARE

/* names[c] = base, or base_2, base_3, ... the first that none of names[0 .. c-1] is (a data
 * format's column names must be unique: two columns "n" read as one). */
void column_name_unique(struct strbuf *names, size_t c, const char *base);
/* The header text "name (unit)" or "name". */
void column_header(const struct column *c, struct strbuf *out);

#endif
