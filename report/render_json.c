/* report/render_json.c: tables as JSON for scripts: raw numbers at full precision, units kept apart.
 *
 * One output is one JSON document, an array with one object per table: render_begin appends "[",
 * render_end "]", and a table that follows another in out puts the comma after that one's '}'.
 * Commands must call both (render.h); without them each table is a bare object, and two tables
 * are not one JSON document. Layout: one column, row or note per line.
 *
 *   [
 *     {
 *       "title": "attention",                                    null when the table has none
 *       "columns": [
 *         {"name": "impl", "unit": null, "key": "impl"},          unit null when there is none
 *         {"name": "fwd mean", "unit": "ms", "key": "fwd_mean_ms"}
 *       ],
 *       "rows": [
 *         {"impl": "naive", "fwd_mean_ms": 1.25},
 *         {"impl": "sdpa", "fwd_mean_ms": null}
 *       ],
 *       "notes": [                                               [] when there are none
 *         "case 5 (sdpa ...): unsupported"
 *       ]
 *     }
 *   ]
 *
 * Row keys: the column's name, plus "_" and its unit when it has one, with every ASCII character
 * other than a letter, digit or '_' turned into '_' ("fwd+bwd mean", "ms" -> "fwd_bwd_mean_ms";
 * the CSV header for every column whose CSV header is already a plain identifier). A key equal to
 * an earlier column's gets "_2", "_3", ... so keys are unique. Every row has every key, in column
 * order. Values: numbers as JSON numbers in the column's unit, written with the fewest digits
 * that read back as the same double (nothing is rounded away), non-finite numbers as null; text
 * as strings (UTF-8, as JSON must be: a byte of stored text that is not valid UTF-8, a label typed
 * in Latin-1, is U+FFFD); empty cells as null. A column's decimals (a display hint) are not used. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "renderers.h"
#include "xalloc.h"

/* The shortest text that strtod() turns back into v; integers up to 2^53 without exponent. */
static void json_number(double v, struct strbuf *out)
{
	if (!isfinite(v)) {
		sb_add(out, "null");
		return;
	}
	if (v == nearbyint(v) && fabs(v) < 0x1p53) {
		sb_addf(out, "%.0f", v);
		return;
	}
	char text[32];
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, v);
		if (strtod(text, NULL) == v)
			break;
	}
	sb_add(out, text);   /* 17 significant digits always read back exactly */
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when s does not start one: a stray
 * continuation byte, a lead byte without its continuations, an overlong form, a surrogate or a
 * code point above U+10FFFF. */
static size_t utf8_sequence(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = s[0] >= 0xC2 && s[0] <= 0xDF	  ? 2
		   : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
		   : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
						  : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0) ||
	    (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* s as a JSON string. JSON is UTF-8, so a byte of s that is not part of valid UTF-8 (a label
 * typed in Latin-1) is written as U+FFFD, the replacement character, rather than raw, which
 * would make the whole document unreadable to a JSON parser. */
static void json_text(struct strbuf *out, const char *s)
{
	const unsigned char *end = (const unsigned char *)s;
	for (size_t len; *end && (len = utf8_sequence(end)); end += len)
		;
	if (!*end) {   /* all valid: as it is, no copy (samples exports write millions) */
		sb_add_json_str(out, s);
		return;
	}
	struct strbuf valid = STRBUF_INIT;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = utf8_sequence(p);
		if (len) {
			sb_addn(&valid, (const char *)p, len);
			p += len;
		} else {
			sb_add(&valid, "\xef\xbf\xbd");
			p++;
		}
	}
	sb_add_json_str(out, sb_str(&valid));
	sb_free(&valid);
}

/* keys[c] for every column of t (see the file comment); the caller frees each. */
static void row_keys(const struct table *t, struct strbuf *keys)
{
	for (size_t c = 0; c < t->ncols; c++) {
		struct strbuf base = STRBUF_INIT;
		sb_add(&base, t->cols[c].name);
		if (t->cols[c].unit[0])
			sb_addf(&base, "_%s", t->cols[c].unit);
		for (size_t i = 0; i < base.len; i++) {
			unsigned char ch = (unsigned char)base.buf[i];
			if (ch < 0x80 && ch != '_' && !(ch >= '0' && ch <= '9') &&
			    !(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z'))
				base.buf[i] = '_';
		}
		column_name_unique(keys, c, sb_str(&base));
		sb_free(&base);
	}
}

/* Where a table that follows another one in out starts: the length of out up to and including
 * the earlier table's closing '}' (trailing whitespace dropped); 0 when no table precedes. */
static size_t after_table(const struct strbuf *out)
{
	size_t n = out->len;
	while (n && (out->buf[n - 1] == ' ' || out->buf[n - 1] == '\n' || out->buf[n - 1] == '\t' ||
		     out->buf[n - 1] == '\r'))
		n--;
	return n && out->buf[n - 1] == '}' ? n : 0;
}

static void json_table(const struct table *t, struct strbuf *out)
{
	struct strbuf *keys = xcalloc(t->ncols, sizeof(*keys));
	row_keys(t, keys);

	size_t end = after_table(out);
	if (end) {
		out->len = end;   /* the comma goes right after the earlier table's '}' */
		out->buf[end] = '\0';
		sb_add(out, ",\n");
	}
	sb_add(out, "  {\n    \"title\": ");
	if (t->title)
		json_text(out, t->title);
	else
		sb_add(out, "null");

	sb_add(out, ",\n    \"columns\": [");
	for (size_t c = 0; c < t->ncols; c++) {
		sb_add(out, c ? ",\n      {\"name\": " : "\n      {\"name\": ");
		json_text(out, t->cols[c].name);
		sb_add(out, ", \"unit\": ");
		if (t->cols[c].unit[0])
			json_text(out, t->cols[c].unit);
		else
			sb_add(out, "null");
		sb_add(out, ", \"key\": ");
		json_text(out, sb_str(&keys[c]));
		sb_addc(out, '}');
	}
	sb_add(out, t->ncols ? "\n    ],\n    \"rows\": [" : "],\n    \"rows\": [");

	for (size_t r = 0; r < t->nrows; r++) {
		sb_add(out, r ? ",\n      {" : "\n      {");
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *cl = &t->cells[r * t->ncols + c];
			if (c)
				sb_add(out, ", ");
			json_text(out, sb_str(&keys[c]));
			sb_add(out, ": ");
			if (cl->kind == CELL_TEXT)
				json_text(out, cl->text);
			else if (cl->kind == CELL_NUMBER)
				json_number(cl->value, out);
			else
				sb_add(out, "null");
		}
		sb_addc(out, '}');
	}
	sb_add(out, t->nrows ? "\n    ],\n    \"notes\": [" : "],\n    \"notes\": [");

	for (size_t i = 0; i < t->nnotes; i++) {
		sb_add(out, i ? ",\n      " : "\n      ");
		json_text(out, t->notes[i]);
	}
	sb_add(out, t->nnotes ? "\n    ]\n  }\n" : "]\n  }\n");

	for (size_t c = 0; c < t->ncols; c++)
		sb_free(&keys[c]);
	free(keys);
}

static void json_begin(struct strbuf *out)
{
	sb_add(out, "[\n");
}

static void json_end(struct strbuf *out)
{
	sb_add(out, "]\n");
}

const struct renderer render_json = {.table = json_table, .begin = json_begin, .end = json_end};
