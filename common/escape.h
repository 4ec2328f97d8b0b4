/* common/escape.h: text from a sweep or a database on its way to a terminal. */
#ifndef BENCHDB_ESCAPE_H
#define BENCHDB_ESCAPE_H

/* A malloc'd copy of s with every control character (bytes 0x01-0x1f but newline and tab, and
 * 0x7f) written as \xHH, so that no escape sequence from user data reaches a terminal raw.
 * Printable text (UTF-8 included), newlines and tabs are unchanged. */
char *escape_controls(const char *s);

#endif
