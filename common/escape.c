/* common/escape.c: control characters made visible (escape.h). */
#include "escape.h"

#include "xalloc.h"

#include "strbuf.h"

static int is_control(unsigned char c)
{
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
}

size_t escape_hidden_len(const char *s, unsigned *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) {   /* U+0080-U+009F */
		*cp = u[1];
		return 2;
	}
	if (u[0] == 0xd8 && u[1] == 0x9c) {   /* U+061C, the Arabic letter mark */
		*cp = 0x61c;
		return 2;
	}
	if (u[0] != 0xe2 || (u[1] != 0x80 && u[1] != 0x81) || (u[2] & 0xc0) != 0x80)
		return 0;
	unsigned c = 0x2000 + ((unsigned)(u[1] & 0x3f) << 6) + (u[2] & 0x3f);
	if ((c >= 0x200e && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) {
		*cp = c;
		return 3;
	}
	return 0;
}

char *escape_controls(const char *s)
{
	size_t n = 0, len;
	unsigned cp;
	for (const char *p = s; *p; p++)
		if ((len = escape_hidden_len(p, &cp))) {
			n += 6;
			p += len - 1;
		} else {
			n += is_control((unsigned char)*p) ? 4 : 1;
		}
	char *out = xmalloc(n + 1), *o = out;
	static const char hex[] = "0123456789abcdef";
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((len = escape_hidden_len(p, &cp))) {
			*o++ = '\\';
			*o++ = 'u';
			for (int shift = 12; shift >= 0; shift -= 4)
				*o++ = hex[(cp >> shift) & 15];
			p += len - 1;
		} else if (is_control(c)) {
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
	size_t len;
	unsigned cp;
	for (; s && *s; s++) {
		if ((len = escape_hidden_len(s, &cp))) {   /* shown, not obeyed, by a markdown viewer */
			sb_addf(sb, "\\u%04x", cp);
			s += len - 1;
		} else if (*s == '\n')
			sb_add(sb, "\\n");
		else if (*s == '\r')   /* a line ending of its own to markdown, alone */
			sb_add(sb, "\\r");
		else if (*s == '|' && table_cell)
			sb_add(sb, "\\|");
		else
			sb_addc(sb, *s);
	}
}
