/* common/escape.h: text from a sweep or a database on its way to a terminal. */
#ifndef BENCHDB_ESCAPE_H
#define BENCHDB_ESCAPE_H

/* A malloc'd copy of s with every control character (bytes 0x01-0x1f but newline and tab, and
 * 0x7f) written as \xHH, so that no escape sequence from user data reaches a terminal raw.
 * Printable text (UTF-8 included), newlines and tabs are unchanged. */
char *escape_controls(const char *s);

struct strbuf;
/* Append s kept on one line, for a markdown table cell or list item: a newline as the two
 * characters \n, a carriage return (a line ending to markdown too) as \r, and (with table_cell)
 * '|' as \| — a label with any of them no longer breaks a table. */
void sb_add_inline(struct strbuf *sb, const char *s, int table_cell);

#endif
