/* report/render_md.c: GitHub-flavoured markdown tables, numbers right-aligned, notes below. */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "renderers.h"
#include "xalloc.h"

static void cell_text(const struct column *col, const struct cell *c, struct strbuf *out)
{
	if (c->kind == CELL_TEXT)
		sb_add_inline(out, c->text, 1);   /* a newline or '|' would end the row or the cell */
	else if (c->kind == CELL_NUMBER)
		sb_addf(out, "%.*f", col->decimals, c->value);
}

/* Characters (not bytes) of UTF-8 text s: what a column's width counts, so that ✓, ° and — pad
 * like one letter. */
static size_t display_width(const struct strbuf *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->len; i++)
		n += ((unsigned char)s->buf[i] & 0xC0) != 0x80;
	return n;
}

static void md_table(const struct table *t, struct strbuf *out)
{
	size_t nc = t->ncols;
	struct strbuf *text = xcalloc(nc * (t->nrows + 1), sizeof(*text));
	size_t *width = xcalloc(nc, sizeof(*width));
	int *right = xcalloc(nc, sizeof(*right));
	for (size_t c = 0; c < nc; c++) {
		struct strbuf head = STRBUF_INIT;   /* a renamed column or a pivot's value: any text */
		column_header(&t->cols[c], &head);
		sb_add_inline(&text[c], sb_str(&head), 1);
		sb_free(&head);
		width[c] = display_width(&text[c]) < 3 ? 3 : display_width(&text[c]);
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < nc; c++) {
			const struct cell *cl = &t->cells[r * nc + c];
			struct strbuf *sb = &text[(r + 1) * nc + c];
			cell_text(&t->cols[c], cl, sb);
			if (display_width(sb) > width[c])
				width[c] = display_width(sb);
			right[c] |= cl->kind == CELL_NUMBER;
		}
	if (t->title) {
		sb_add(out, "### ");
		sb_add_inline(out, t->title, 0);
		sb_add(out, "\n\n");
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		sb_add(out, "|");
		for (size_t c = 0; c < nc; c++)
			sb_addf(out, right[c] ? " %*s |" : " %-*s |",
				(int)(width[c] + text[r * nc + c].len - display_width(&text[r * nc + c])),
				sb_str(&text[r * nc + c]));
		sb_addc(out, '\n');
		if (r == 0) {
			sb_add(out, "|");
			for (size_t c = 0; c < nc; c++) {
				sb_addc(out, ' ');
				for (size_t i = 0; i + 1 < width[c]; i++)
					sb_addc(out, '-');
				sb_add(out, right[c] ? ": |" : "- |");
			}
			sb_addc(out, '\n');
		}
	}
	if (t->nnotes)
		sb_addc(out, '\n');
	for (size_t i = 0; i < t->nnotes; i++) {
		sb_add(out, "- ");
		sb_add_inline(out, t->notes[i], 0);   /* a stored reason may hold a line break */
		sb_addc(out, '\n');
	}
	sb_addc(out, '\n');
	for (size_t i = 0; i < nc * (t->nrows + 1); i++)
		sb_free(&text[i]);
	free(text);
	free(width);
	free(right);
}

const struct renderer render_md = {.table = md_table};
