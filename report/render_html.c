/* report/render_html.c: tables as HTML, and the frame of a page of the static site (html.h). */
#include <stdio.h>

#include "escape.h"
#include "html.h"
#include "renderers.h"

void sb_add_html(struct strbuf *sb, const char *s)
{
	size_t len;
	unsigned cp;
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
		if ((len = escape_hidden_len((const char *)c, &cp))) {   /* shown, not obeyed, by the browser */
			sb_addf(sb, "\\u%04x", cp);
			c += len - 1;
			continue;
		}
		switch (*c) {
		case '&': sb_add(sb, "&amp;"); break;
		case '<': sb_add(sb, "&lt;"); break;
		case '>': sb_add(sb, "&gt;"); break;
		case '"': sb_add(sb, "&quot;"); break;
		case '\'': sb_add(sb, "&#39;"); break;
		default: sb_addc(sb, *c < 0x20 || *c == 0x7f ? ' ' : (char)*c);
		}
	}
}

void html_table(const struct table *t, struct strbuf *out)
{
	if (t->title) {
		sb_add(out, "<h3>");
		sb_add_html(out, t->title);
		sb_add(out, "</h3>\n");
	}
	sb_add(out, "<table>\n<thead><tr>");
	for (size_t c = 0; c < t->ncols; c++) {
		struct strbuf head = STRBUF_INIT;
		column_header(&t->cols[c], &head);
		sb_add(out, "<th>");
		sb_add_html(out, sb_str(&head));
		sb_add(out, "</th>");
		sb_free(&head);
	}
	sb_add(out, "</tr></thead>\n<tbody>\n");
	for (size_t r = 0; r < t->nrows; r++) {
		sb_add(out, "<tr>");
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *cl = &t->cells[r * t->ncols + c];
			if (cl->kind == CELL_NUMBER) {
				sb_addf(out, "<td class=\"num\">%.*f</td>", t->cols[c].decimals, cl->value);
			} else {
				sb_add(out, "<td>");
				if (cl->kind == CELL_TEXT)
					sb_add_html(out, cl->text);
				sb_add(out, "</td>");
			}
		}
		sb_add(out, "</tr>\n");
	}
	sb_add(out, "</tbody>\n</table>\n");
	if (t->nnotes) {
		sb_add(out, "<ul class=\"notes\">\n");
		for (size_t i = 0; i < t->nnotes; i++) {
			sb_add(out, "<li>");
			sb_add_html(out, t->notes[i]);
			sb_add(out, "</li>\n");
		}
		sb_add(out, "</ul>\n");
	}
}

const struct renderer render_html = {.table = html_table};

static const char style[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1b1b1b;"
	"background:#fafafa}\n"
	"header{background:#1f4e9c;color:#fff;padding:.6em 1.2em}header a{color:#fff;margin-right:1.2em}\n"
	"main{padding:1em 1.2em;max-width:1400px}\n"
	"h1{font-size:1.5em;margin:.2em 0 .6em}h2{font-size:1.2em;margin-top:1.6em}"
	"h3{font-size:1.05em;margin:1.2em 0 .4em}\n"
	"table{border-collapse:collapse;margin:.3em 0;background:#fff;font-size:.9em}\n"
	"th,td{border:1px solid #d0d0d0;padding:.25em .55em;text-align:left;vertical-align:top}\n"
	"th{background:#eef2f8}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	"ul.notes{font-size:.85em;color:#444;margin:.3em 0 1em}\n"
	".verdict{font-size:1.1em;padding:.5em .8em;border-left:.35em solid #1f4e9c;background:#fff}\n"
	".slower{color:#c0392b;font-weight:600}.faster{color:#1e8449}.contended{color:#b9770e}\n"
	"img.chart{max-width:100%;height:auto;background:#fff;border:1px solid #d0d0d0}\n"
	"code{font-size:.9em}\n";

void html_page_begin(struct strbuf *out, const char *title, int nav)
{
	sb_add(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	sb_add_html(out, title);
	sb_addf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>", style);
	if (nav)
		sb_add(out, "<a href=\"index.html\">overview</a><a href=\"runs.html\">runs</a>");
	else
		sb_add(out, "benchdb");
	sb_add(out, "</header>\n<main>\n<h1>");
	sb_add_html(out, title);
	sb_add(out, "</h1>\n");
}

void html_page_end(struct strbuf *out)
{
	sb_add(out, "</main>\n</body>\n</html>\n");
}
