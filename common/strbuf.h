/* common/strbuf.h: a growable, always NUL-terminated string (output is built, then written once). */
#ifndef BENCHDB_STRBUF_H
#define BENCHDB_STRBUF_H

#include <stddef.h>
#include <stdio.h>

struct strbuf {
	char *buf;    /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT {NULL, 0, 0}

/* Appends allocate through xalloc.h (out of memory stops the process). */
void sb_add(struct strbuf *sb, const char *s);
void sb_addn(struct strbuf *sb, const char *s, size_t n);
void sb_addc(struct strbuf *sb, char c);
void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. */
void sb_add_json_str(struct strbuf *sb, const char *s);
/* s as one POSIX shell word: single-quoted, a quote written '\'' (job scripts, manifests). */
void sb_add_shell_word(struct strbuf *sb, const char *s);
/* The contents ("" when empty); owned by sb. */
const char *sb_str(const struct strbuf *sb);
/* Hand the buffer to the caller (malloc'd, never NULL) and reset sb. */
char *sb_detach(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

/* Read a whole file into a malloc'd NUL-terminated string; NULL on failure (errno set). */
char *read_file(const char *path, size_t *len);

/* Write len bytes of buf to path whole or not at all: into a temporary file beside it (mode
 * 0666 less the umask, or the old file's mode and, where allowed, owner), renamed over path once
 * written and closed, so that a failure (a full disk, a file-size limit) leaves the old file as
 * it was and no partial one at path. A link to a file replaces the file; what is no regular file
 * (a device, /dev/stdout, a FIFO), a writable file in a directory this user may not write, and
 * a name too long to take the temporary name's 11 more bytes, are written in place. 0, or -1
 * with errno set. */
int file_replace(const char *path, const char *buf, size_t len);

/* Whether a and b name one existing file (however spelled: links, relative paths). */
int file_same(const char *a, const char *b);

#endif
