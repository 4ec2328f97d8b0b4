/* common/escape.h: text from a sweep or a database on its way to a terminal. */
#ifndef BENCHDB_ESCAPE_H
#define BENCHDB_ESCAPE_H

#include <stddef.h>

/* A malloc'd copy of s with every control character (bytes 0x01-0x1f but newline and tab, and
 * 0x7f) written as \xHH, and every hidden character (escape_hidden_len) as \uHHHH, so that no
 * escape sequence from user data reaches a terminal raw and no name is shown reordered.
 * Printable text (UTF-8 included), newlines and tabs are unchanged. */
char *escape_controls(const char *s);

/* The length in bytes of the UTF-8 character at s when it is one that is not seen itself yet
 * changes how the text around it is shown, 0 for any other (*cp: its code point):
 * - a C1 control, U+0080-U+009F (U+009B is a CSI to terminals that take 8-bit controls);
 * - a bidirectional formatting character: U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069.
 *   A browser, an editor or a markdown viewer shows the text after one of them reordered: a case
 *   name "flash<U+202E>2x" reads "flashx2", one label can look like another.
 * Text from a sweep, a database or a peer shows them as \uHHHH (escape_controls, sb_add_inline,
 * the HTML of the site) or '?' (a peer's text). */
size_t escape_hidden_len(const char *s, unsigned *cp);

struct strbuf;
/* Append s kept on one line, for a markdown table cell or list item: a newline as the two
 * characters \n, a carriage return (a line ending to markdown too) as \r, and (with table_cell)
 * '|' as \| — a label with any of them no longer breaks a table. */
void sb_add_inline(struct strbuf *sb, const char *s, int table_cell);

#endif
