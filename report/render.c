/* report/render.c: building tables, and dispatch to the renderer of each format. */
#include "render.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "renderers.h"
#include "xalloc.h"

#define FORMAT_NAME_ROW(id, name, kinds) [FORMAT_##id] = #name,
const char *const format_names[FORMAT_COUNT] = {REPORT_FORMATS(FORMAT_NAME_ROW)};

#define FORMAT_KINDS_ROW(id, name, kinds) [FORMAT_##id] = (kinds),
static const unsigned format_kinds[FORMAT_COUNT] = {REPORT_FORMATS(FORMAT_KINDS_ROW)};

#define FORMAT_RENDERER_ROW(id, name, kinds) [FORMAT_##id] = &render_##name,
static const struct renderer *const renderers[FORMAT_COUNT] = {REPORT_FORMATS(FORMAT_RENDERER_ROW)};

int format_parse(const char *s)
{
	for (int i = 0; i < FORMAT_COUNT; i++)
		if (!strcmp(s, format_names[i]))
			return i;
	return -1;
}

void format_summary_head(const char *command, int status, const char *verdict, struct strbuf *out)
{
	/* the marker a CI job finds its comment by, then the verdict: 0 passed, 1 failed, 2 cannot
	 * tell (the exit statuses of regress, changes and nodes) */
	sb_addf(out, "<!-- benchdb: report %s -->\n### %s %s\n\n", command,
		status == 0 ? "\u2705" : status == 1 ? "\u274C" : "\u26A0\uFE0F", verdict);
}

int format_is(enum report_format fmt, unsigned kind) { return (format_kinds[fmt] & kind) == kind; }

const char *format_help(unsigned kind)
{
	static char help[16][256];   /* by kind: the enum's four bits */
	char *text = help[kind & 15];
	if (text[0])
		return text;
	struct strbuf sb = STRBUF_INIT;
	format_list(kind, &sb);
	/* "md, csv, json, tex" -> "md (default), csv, json or tex" */
	const char *list = sb_str(&sb), *first_end = strchr(list, ','), *last = strrchr(list, ',');
	if (!first_end)
		snprintf(text, sizeof(help[0]), "%s (default)", list);
	else if (first_end == last)
		snprintf(text, sizeof(help[0]), "%.*s (default) or%s", (int)(first_end - list), list,
			 last + 1);
	else
		snprintf(text, sizeof(help[0]), "%.*s (default)%.*s or%s", (int)(first_end - list),
			 list, (int)(last - first_end), first_end, last + 1);
	sb_free(&sb);
	return text;
}

void format_list(unsigned kind, struct strbuf *out)
{
	for (int i = 0, k = 0; i < FORMAT_COUNT; i++)
		if (format_is((enum report_format)i, kind))
			sb_addf(out, "%s%s", k++ ? ", " : "", format_names[i]);
}

void table_init(struct table *t, const char *title)
{
	memset(t, 0, sizeof(*t));
	t->title = title ? xstrdup(title) : NULL;
}

size_t table_column(struct table *t, const char *name, const char *unit, int decimals)
{
	t->cols = xrealloc(t->cols, (t->ncols + 1) * sizeof(*t->cols));
	t->cols[t->ncols] = (struct column){xstrdup(name), xstrdup(unit ? unit : ""), decimals};
	if (t->alloc_rows) {   /* rows exist: lay them out again, the new column blank */
		struct cell *cells = xcalloc(t->alloc_rows * (t->ncols + 1), sizeof(*cells));
		for (size_t r = 0; r < t->nrows; r++)
			memcpy(&cells[r * (t->ncols + 1)], &t->cells[r * t->ncols],
			       t->ncols * sizeof(*cells));
		free(t->cells);
		t->cells = cells;
	}
	return t->ncols++;
}

size_t table_row(struct table *t)
{
	if (t->nrows == t->alloc_rows) {
		t->alloc_rows = t->alloc_rows ? 2 * t->alloc_rows : 16;
		t->cells = xrealloc(t->cells, t->alloc_rows * t->ncols * sizeof(*t->cells));
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
	return t->nrows++;
}

void table_text(struct table *t, size_t row, size_t col, const char *text)
{
	struct cell *c = &t->cells[row * t->ncols + col];
	free(c->text);
	*c = (struct cell){.kind = CELL_TEXT, .text = xstrdup(text ? text : "")};
}

void table_number(struct table *t, size_t row, size_t col, double value)
{
	struct cell *c = &t->cells[row * t->ncols + col];
	free(c->text);
	*c = (struct cell){.kind = CELL_NUMBER, .value = value};
}

void table_note(struct table *t, const char *fmt, ...)
{
	/* sized to fit: a note quotes a stored reason (up to 2 KiB of a peer's stderr) whole, never
	 * cut (a cut could split a UTF-8 character, which no JSON parser reads) */
	va_list ap, again;
	va_start(ap, fmt);
	va_copy(again, ap);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *note = xmalloc(len > 0 ? (size_t)len + 1 : 1);
	if (len > 0)
		vsnprintf(note, (size_t)len + 1, fmt, again);
	else
		note[0] = '\0';
	va_end(again);
	t->notes = xrealloc(t->notes, (t->nnotes + 1) * sizeof(*t->notes));
	t->notes[t->nnotes++] = note;
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].text);
	for (size_t i = 0; i < t->ncols; i++) {
		free(t->cols[i].name);
		free(t->cols[i].unit);
	}
	for (size_t i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	free(t->cells);
	free(t->cols);
	free(t->notes);
	free(t->title);
	memset(t, 0, sizeof(*t));
}

void column_name_unique(struct strbuf *names, size_t c, const char *base)
{
	for (unsigned n = 1;; n++) {
		sb_reset(&names[c]);
		sb_add(&names[c], base);
		if (n > 1)
			sb_addf(&names[c], "_%u", n);
		size_t same = 0;
		while (same < c && strcmp(sb_str(&names[same]), sb_str(&names[c])))
			same++;
		if (same == c)
			return;
	}
}

void column_header(const struct column *c, struct strbuf *out)
{
	if (c->unit[0])
		sb_addf(out, "%s (%s)", c->name, c->unit);
	else
		sb_add(out, c->name);
}

void render_begin(enum report_format fmt, struct strbuf *out)
{
	if (renderers[fmt]->begin)
		renderers[fmt]->begin(out);
}

void render_end(enum report_format fmt, struct strbuf *out)
{
	if (renderers[fmt]->end)
		renderers[fmt]->end(out);
}

void render_table(const struct table *t, enum report_format fmt, struct strbuf *out)
{
	renderers[fmt]->table(t, out);
}

void render_rows(const struct table *t, enum report_format fmt, struct strbuf *out)
{
	(renderers[fmt]->rows ? renderers[fmt]->rows : renderers[fmt]->table)(t, out);
}
