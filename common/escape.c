/* common/escape.c: control characters made visible (escape.h). */
#include "escape.h"

#include "xalloc.h"

#include "strbuf.h"

static int is_control(unsigned char c)
{
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
}

char *escape_controls(const char *s)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		n += is_control((unsigned char)*p) ? 4 : 1;
	char *out = xmalloc(n + 1), *o = out;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (is_control(c)) {
			static const char hex[] = "0123456789abcdef";
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	*o = '\0';
	return out;
}

void sb_add_inline(struct strbuf *sb, const char *s, int table_cell)
{
	for (; s && *s; s++) {
		if (*s == '\n')
			sb_add(sb, "\\n");
		else if (*s == '\r')   /* a line ending of its own to markdown, alone */
			sb_add(sb, "\\r");
		else if (*s == '|' && table_cell)
			sb_add(sb, "\\|");
		else
			sb_addc(sb, *s);
	}
}
