/* report/html.h: HTML for the static site (`report site`): tables through the html renderer,
 * escaped text, and a page's frame (one self-contained file: its style inline, no script, nothing
 * fetched from elsewhere at view time; links and images relative to the site's folder). */
#ifndef BENCHDB_HTML_H
#define BENCHDB_HTML_H

#include "render.h"
#include "strbuf.h"

/* Append s with &, <, >, " and ' as entities, control characters as spaces. */
void sb_add_html(struct strbuf *sb, const char *s);
/* t as an HTML <table> (numbers right-aligned with the column's decimals), its title an <h3>
 * before it and its notes a list after it. */
void html_table(const struct table *t, struct strbuf *out);
/* The page's head (title escaped, the style inline) up to the opening of <main>; nav: the
 * links back to the index (and the runs page). */
void html_page_begin(struct strbuf *out, const char *title, int nav);
void html_page_end(struct strbuf *out);

#endif
