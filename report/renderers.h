/* report/renderers.h: one renderer per output format (render_<format>.c). */
#ifndef BENCHDB_RENDERERS_H
#define BENCHDB_RENDERERS_H

#include "render.h"

struct renderer {
	const char *name;
	void (*table)(const struct table *t, struct strbuf *out);
};

extern const struct renderer render_md;
extern const struct renderer render_csv;

/* The header text "name (unit)" or "name". */
void column_header(const struct column *c, struct strbuf *out);

#endif
