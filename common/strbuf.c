/* common/strbuf.c: growable strings and whole-file reads. */
#include "strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void sb_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->alloc)
		return;
	size_t want = sb->alloc ? sb->alloc : 64;
	while (want < sb->len + extra + 1)
		want *= 2;
	sb->buf = xrealloc(sb->buf, want);
	sb->alloc = want;
}

void sb_addn(struct strbuf *sb, const char *s, size_t n)
{
	sb_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_add(struct strbuf *sb, const char *s) { sb_addn(sb, s, strlen(s)); }

void sb_addc(struct strbuf *sb, char c) { sb_addn(sb, &c, 1); }

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void sb_add_shell_word(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_add(sb, "'\\''");
		else
			sb_addc(sb, *s);
	}
	sb_addc(sb, '\'');
}

void sb_add_json_str(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sb_add(sb, "\\\""); break;
		case '\\': sb_add(sb, "\\\\"); break;
		case '\n': sb_add(sb, "\\n"); break;
		case '\r': sb_add(sb, "\\r"); break;
		case '\t': sb_add(sb, "\\t"); break;
		default:
			if (*p < 0x20)
				sb_addf(sb, "\\u%04x", *p);
			else
				sb_addc(sb, (char)*p);
		}
	}
	sb_addc(sb, '"');
}

const char *sb_str(const struct strbuf *sb) { return sb->buf ? sb->buf : ""; }

char *sb_detach(struct strbuf *sb)
{
	char *p = sb->buf;
	if (!p)
		p = xcalloc(1, 1);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return p;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sb_addn(&sb, chunk, n);
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		sb_free(&sb);
		errno = EIO;
		return NULL;
	}
	if (len)
		*len = sb.len;
	return sb_detach(&sb);
}
