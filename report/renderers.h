/* report/renderers.h: one renderer per output format (render_<format>.c). */
#ifndef BENCHDB_RENDERERS_H
#define BENCHDB_RENDERERS_H

#include "render.h"

struct renderer {
	const char *name;
	void (*table)(const struct table *t, struct strbuf *out);
};

/* Optional framing of one output holding any number of tables (render_begin/render_end); a
 * format without one adds nothing around its tables. Kept apart from struct renderer so the
 * renderers that need none are written as {name, table}. */
struct renderer_frame {
	void (*begin)(struct strbuf *out);
	void (*end)(struct strbuf *out);
};

extern const struct renderer render_md;
extern const struct renderer render_csv;
extern const struct renderer render_json;
extern const struct renderer render_tex;
extern const struct renderer render_html;
extern const struct renderer_frame render_json_frame;

/* The header text "name (unit)" or "name". */
void column_header(const struct column *c, struct strbuf *out);

#endif
