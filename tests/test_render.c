/* tests/test_render.c: every renderer against its golden file, JSON validity and framing, LaTeX
 * escaping, format names.
 *
 * Goldens live in $BENCHDB_SOURCE_DIR/tests/golden (CTest sets it; otherwise the golden/ folder
 * beside this file). UPDATE_GOLDEN=1 in the environment rewrites them instead of comparing: look at
 * each by eye before committing it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "escape.h"
#include "html.h"
#include "render.h"
#include "report.h"

/* Every feature a renderer must handle: a title with specials, text and number columns, units
 * (one with a LaTeX special), decimals, a negative number, empty cells, a text cell with every
 * LaTeX special plus a comma and a quote, notes. */
static void sample_table(struct table *t)
{
	table_init(t, "attention: fwd & bwd, 100% causal");
	size_t impl = table_column(t, "impl", "", 0), seq = table_column(t, "seq len", "", 0),
	       mean = table_column(t, "fwd mean", "ms", 3),
	       std = table_column(t, "fwd+bwd std", "ms", 3),
	       rate = table_column(t, "fwd GFLOP/s", "", 1),
	       delta = table_column(t, "vs naive", "%", 1),
	       comment = table_column(t, "comment", "", 0);
	size_t r = table_row(t);
	table_text(t, r, impl, "naive");
	table_number(t, r, seq, 64);
	table_number(t, r, mean, 1.0 / 3.0);
	table_number(t, r, std, 0.1);
	table_number(t, r, rate, 1234.5678);
	table_number(t, r, delta, 0);
	table_text(t, r, comment, "reference");
	r = table_row(t);
	table_text(t, r, impl, "flash_v2");
	table_number(t, r, seq, 2048);
	table_number(t, r, mean, 12.0631);
	table_number(t, r, std, 0.004);
	table_number(t, r, rate, 98765.4321);
	table_number(t, r, delta, -37.5);
	table_text(t, r, comment, "a&b 50% $5 #1 snake_case {x} ~y ^2 C:\\tmp, \"fast\"");
	r = table_row(t);
	table_text(t, r, impl, "sdpa");
	table_number(t, r, seq, 64);
	table_text(t, r, comment, "unsupported");
	table_note(t, "case 3 (sdpa S64): unsupported on cpu");
	table_note(t, "rates are 10^9 flop/s; \"vs naive\" is (t - t_naive) / t_naive in %%");
}

/* render_begin + render_table(t) + render_end, as a command writes one table; malloc'd. */
static char *render_one(const struct table *t, enum report_format fmt)
{
	struct strbuf out = STRBUF_INIT;
	render_begin(fmt, &out);
	render_table(t, fmt, &out);
	render_end(fmt, &out);
	return sb_detach(&out);
}

static void golden_path(const char *name, char *path, size_t size)
{
	const char *src = getenv("BENCHDB_SOURCE_DIR");
	if (src && *src) {
		snprintf(path, size, "%s/tests/golden/%s", src, name);
		return;
	}
	const char *slash = strrchr(__FILE__, '/');
	snprintf(path, size, "%.*s/golden/%s", slash ? (int)(slash - __FILE__) : 1,
		 slash ? __FILE__ : ".", name);
}

/* Compare text with the golden file name, or rewrite it under UPDATE_GOLDEN=1. */
static void assert_golden(const char *name, const char *text)
{
	char path[4096];
	golden_path(name, path, sizeof(path));
	const char *update = getenv("UPDATE_GOLDEN");
	if (update && !strcmp(update, "1")) {
		FILE *f = fopen(path, "w");
		if (!f)
			fail_msg("cannot write golden '%s'", path);
		fputs(text, f);
		assert_int_equal(fclose(f), 0);
		print_message("rewrote %s\n", path);
		return;
	}
	char *want = read_file(path, NULL);
	if (!want)
		fail_msg("cannot read golden '%s' (UPDATE_GOLDEN=1 writes it)", path);
	if (strcmp(want, text))
		print_error("%s differs from the golden; got:\n%s", path, text);
	assert_string_equal(text, want);
	free(want);
}

static void check_golden(enum report_format fmt, const char *name)
{
	struct table t;
	sample_table(&t);
	char *text = render_one(&t, fmt);
	assert_golden(name, text);
	free(text);
	table_free(&t);
}

/* ---- a strict JSON reader (RFC 8259 grammar), to prove validity without python ---------------- */

static void json_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static int json_value(const char **p, int depth);

static int json_string(const char **p)
{
	if (**p != '"')
		return -1;
	for ((*p)++; **p != '"'; (*p)++) {
		unsigned char c = (unsigned char)**p;
		if (c < 0x20)
			return -1;   /* raw control characters (and the end of the text) are not allowed */
		if (c != '\\')
			continue;
		(*p)++;
		if (**p == 'u') {
			for (int i = 0; i < 4; i++) {
				(*p)++;
				if (!**p || !strchr("0123456789abcdefABCDEF", **p))
					return -1;
			}
		} else if (!**p || !strchr("\"\\/bfnrt", **p)) {
			return -1;
		}
	}
	(*p)++;
	return 0;
}

static int json_digits(const char **p)
{
	if (**p < '0' || **p > '9')
		return -1;
	while (**p >= '0' && **p <= '9')
		(*p)++;
	return 0;
}

static int json_number(const char **p)
{
	if (**p == '-')
		(*p)++;
	if (**p == '0')
		(*p)++;
	else if (json_digits(p))
		return -1;
	if (**p == '.') {
		(*p)++;
		if (json_digits(p))
			return -1;
	}
	if (**p == 'e' || **p == 'E') {
		(*p)++;
		if (**p == '+' || **p == '-')
			(*p)++;
		if (json_digits(p))
			return -1;
	}
	return 0;
}

/* Array or object; *count gets the number of elements or members. */
static int json_container(const char **p, int depth, size_t *count)
{
	char close = **p == '[' ? ']' : '}';
	*count = 0;
	(*p)++;
	json_ws(p);
	if (**p == close) {
		(*p)++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			json_ws(p);
			if (json_string(p))
				return -1;
			json_ws(p);
			if (**p != ':')
				return -1;
			(*p)++;
		}
		if (json_value(p, depth + 1))
			return -1;
		(*count)++;
		json_ws(p);
		if (**p == close) {
			(*p)++;
			return 0;
		}
		if (**p != ',')
			return -1;
		(*p)++;
	}
}

static int json_value(const char **p, int depth)
{
	size_t count;
	if (depth > 64)
		return -1;
	json_ws(p);
	switch (**p) {
	case '{': case '[': return json_container(p, depth, &count);
	case '"': return json_string(p);
	case 't': return strncmp(*p, "true", 4) ? -1 : (*p += 4, 0);
	case 'f': return strncmp(*p, "false", 5) ? -1 : (*p += 5, 0);
	case 'n': return strncmp(*p, "null", 4) ? -1 : (*p += 4, 0);
	default: return json_number(p);
	}
}

/* 0 when text is exactly one JSON array (with surrounding whitespace); *count its elements. */
static int json_top_array(const char *text, size_t *count)
{
	const char *p = text;
	json_ws(&p);
	if (*p != '[' || json_container(&p, 0, count))
		return -1;
	json_ws(&p);
	return *p ? -1 : 0;
}

/* Where python3 exists, json.load(text) must succeed and the python expression check (over d, the
 * loaded document) must hold; without python3 nothing is checked. */
static void assert_python_json(const char *text, const char *check)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json, sys\nd = json.load(sys.stdin)\nsys.exit(0 if (%s) else 3)'",
		 check);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);   /* python3 may be missing and not read */
	FILE *py = popen(cmd, "w");
	if (!py) {
		signal(SIGPIPE, old);
		return;
	}
	fputs(text, py);
	int status = pclose(py);
	signal(SIGPIPE, old);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		print_message("python3 not found: json.load check skipped\n");
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("python3 rejected the JSON (status %d, check: %s):\n%s", status, check, text);
}

static void test_render__json_checker_rejects_invalid_documents(void **state)
{
	(void)state;
	const char *bad[] = {"", "{}", "[", "[1,]", "[{}{}]", "[{} {}]", "[{\"a\" 1}]", "[{a: 1}]",
			     "[01]", "[1.]", "[.5]", "[nan]", "[\"\\x\"]", "[\"a\nb\"]", "[] []"};
	size_t n;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!json_top_array(bad[i], &n))
			fail_msg("accepted invalid JSON: %s", bad[i]);
	assert_int_equal(json_top_array(" [ {\"a\": [1, -2.5e+3, true, null]}, \"\\u00e9\" ]\n", &n), 0);
	assert_int_equal(n, 2);
}

/* ---- goldens ------------------------------------------------------------------------------- */

static void test_render__md_matches_golden(void **state)
{
	(void)state;
	check_golden(FORMAT_MD, "render_table.md");
}

/* summary: the markdown table, its notes folded below it (a pull-request comment stays short) */
static void test_render__summary_matches_golden(void **state)
{
	(void)state;
	check_golden(FORMAT_SUMMARY, "render_table.summary");
}

static void test_render__csv_matches_golden(void **state)
{
	(void)state;
	check_golden(FORMAT_CSV, "render_table.csv");
}

static void test_render__json_matches_golden(void **state)
{
	(void)state;
	check_golden(FORMAT_JSON, "render_table.json");
}

static void test_render__tex_matches_golden(void **state)
{
	(void)state;
	check_golden(FORMAT_TEX, "render_table.tex");
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void test_render__json_of_one_table_is_valid_with_typed_values(void **state)
{
	(void)state;
	struct table t;
	sample_table(&t);
	char *text = render_one(&t, FORMAT_JSON);
	size_t n = 0;
	assert_int_equal(json_top_array(text, &n), 0);
	assert_int_equal(n, 1);
	assert_python_json(text,
			   "len(d) == 1 and d[0][\"title\"] == \"attention: fwd & bwd, 100% causal\""
			   " and [c[\"key\"] for c in d[0][\"columns\"]] == [\"impl\", \"seq_len\","
			   " \"fwd_mean_ms\", \"fwd_bwd_std_ms\", \"fwd_GFLOP_s\", \"vs_naive__\", \"comment\"]"
			   " and d[0][\"columns\"][0][\"unit\"] is None and d[0][\"columns\"][2][\"unit\"] == \"ms\""
			   " and len(d[0][\"rows\"]) == 3 and d[0][\"rows\"][0][\"fwd_mean_ms\"] == 1 / 3"
			   " and d[0][\"rows\"][0][\"seq_len\"] == 64 and d[0][\"rows\"][2][\"fwd_mean_ms\"] is None"
			   " and d[0][\"rows\"][1][\"comment\"].endswith(\"C:\\\\tmp, \\\"fast\\\"\")"
			   " and len(d[0][\"notes\"]) == 2");
	free(text);
	table_free(&t);
}

static void test_render__json_two_tables_between_begin_end_form_one_array(void **state)
{
	(void)state;
	struct table a, b;
	sample_table(&a);
	table_init(&b, NULL);
	table_column(&b, "n", "", 0);
	table_number(&b, table_row(&b), 0, 7);
	struct strbuf out = STRBUF_INIT;
	render_begin(FORMAT_JSON, &out);
	render_table(&a, FORMAT_JSON, &out);
	render_table(&b, FORMAT_JSON, &out);
	render_end(FORMAT_JSON, &out);
	size_t n = 0;
	assert_int_equal(json_top_array(sb_str(&out), &n), 0);
	assert_int_equal(n, 2);
	assert_non_null(strstr(sb_str(&out), "\n  },\n  {\n    \"title\": null,"));
	assert_python_json(sb_str(&out), "len(d) == 2 and d[1] == {\"title\": None, \"columns\":"
					 " [{\"name\": \"n\", \"unit\": None, \"key\": \"n\"}],"
					 " \"rows\": [{\"n\": 7}], \"notes\": []}");
	sb_free(&out);
	table_free(&a);
	table_free(&b);
}

static void test_render__json_begin_end_without_tables_is_an_empty_array(void **state)
{
	(void)state;
	struct strbuf out = STRBUF_INIT;
	render_begin(FORMAT_JSON, &out);
	render_end(FORMAT_JSON, &out);
	size_t n = 1;
	assert_int_equal(json_top_array(sb_str(&out), &n), 0);
	assert_int_equal(n, 0);
	assert_python_json(sb_str(&out), "d == []");
	sb_free(&out);
}

static void test_render__json_table_without_rows_columns_or_notes_is_valid(void **state)
{
	(void)state;
	struct table t;
	table_init(&t, "empty");
	char *text = render_one(&t, FORMAT_JSON);
	size_t n = 0;
	assert_int_equal(json_top_array(text, &n), 0);
	assert_int_equal(n, 1);
	assert_python_json(text, "d == [{\"title\": \"empty\", \"columns\": [], \"rows\": [],"
				 " \"notes\": []}]");
	free(text);
	table_free(&t);
}

static void test_render__json_numbers_read_back_exactly_and_non_finite_are_null(void **state)
{
	(void)state;
	const double values[] = {0.1, 1.0 / 3.0, -2.5, 100, 1e20, 1e300, 5e-324, 0x1p53 + 2,
				 1.7976931348623157e308, -0.0, 123456789.125};
	const size_t nvalues = sizeof(values) / sizeof(values[0]);
	struct table t;
	table_init(&t, NULL);
	table_column(&t, "v", "", 2);
	for (size_t i = 0; i < nvalues; i++)
		table_number(&t, table_row(&t), 0, values[i]);
	table_number(&t, table_row(&t), 0, NAN);
	table_number(&t, table_row(&t), 0, INFINITY);
	table_number(&t, table_row(&t), 0, -INFINITY);
	char *text = render_one(&t, FORMAT_JSON);
	size_t n = 0;
	assert_int_equal(json_top_array(text, &n), 0);

	const char *p = text;
	for (size_t i = 0; i < nvalues + 3; i++) {
		p = strstr(p, "{\"v\": ");
		assert_non_null(p);
		p += strlen("{\"v\": ");
		if (i >= nvalues) {
			assert_memory_equal(p, "null}", 5);
			continue;
		}
		char *end;
		double back = strtod(p, &end);
		assert_int_equal(*end, '}');
		assert_memory_equal(&back, &values[i], sizeof(back));   /* bit for bit, -0 included */
	}
	/* the fewest digits: 0.1, not 0.10000000000000001; integers below 2^53 without exponent */
	assert_non_null(strstr(text, "{\"v\": 0.1}"));
	assert_non_null(strstr(text, "{\"v\": 100}"));
	assert_non_null(strstr(text, "{\"v\": 9007199254740994}"));
	assert_non_null(strstr(text, "{\"v\": 1e+20}"));
	assert_python_json(text, "d[0][\"rows\"][1][\"v\"] == 1 / 3 and"
				 " [r[\"v\"] for r in d[0][\"rows\"][-3:]] == [None, None, None]");
	free(text);
	table_free(&t);
}

/* JSON is UTF-8: stored text that is not (a label typed in Latin-1, a cut multibyte character)
 * made the whole document unreadable; each such byte is now U+FFFD, valid text stays as it is. */
static void test_render__json_is_utf8_whatever_the_stored_text(void **state)
{
	(void)state;
	const char *texts[] = {
		"caf\xe9",                          /* Latin-1 */
		"cut \xc3",                         /* a lead byte at the end */
		"\xc0\xaf overlong",                /* an overlong '/' */
		"\xed\xa0\x80 surrogate",           /* U+D800 */
		"\xf4\x90\x80\x80 too high",        /* above U+10FFFF */
		"\x80 stray",                       /* a lone continuation byte */
		"ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",   /* é € 😀 */
	};
	struct table t;
	table_init(&t, "title \xff");
	table_column(&t, "text", "\xb5s", 0);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		table_text(&t, table_row(&t), 0, texts[i]);
	table_note(&t, "note \xfe");
	char *text = render_one(&t, FORMAT_JSON);
	assert_python_json(text, "[r[\"text_\\ufffds\"] for r in d[0][\"rows\"]] == [\"caf\\ufffd\","
				 " \"cut \\ufffd\", \"\\ufffd\\ufffd overlong\","
				 " \"\\ufffd\\ufffd\\ufffd surrogate\", \"\\ufffd\\ufffd\\ufffd\\ufffd too high\","
				 " \"\\ufffd stray\", \"ok \\u00e9\\u20ac\\U0001f600\"] and"
				 " d[0][\"title\"] == \"title \\ufffd\" and d[0][\"notes\"] == [\"note \\ufffd\"]");
	free(text);
	table_free(&t);
}

static void test_render__json_keys_are_identifiers_and_unique(void **state)
{
	(void)state;
	struct table t;
	table_init(&t, NULL);
	table_column(&t, "a b", "", 0);
	table_column(&t, "a+b", "", 0);
	table_column(&t, "a_b", "", 0);
	table_column(&t, "peak mem", "MiB", 1);
	table_column(&t, "fwd GFLOP/s", "", 1);
	table_column(&t, "t", "\xc2\xb5s", 1);   /* µs: non-ASCII is kept */
	table_column(&t, "", "", 0);
	char *text = render_one(&t, FORMAT_JSON);
	const char *keys[] = {"a_b", "a_b_2", "a_b_3", "peak_mem_MiB", "fwd_GFLOP_s", "t_\xc2\xb5s", ""};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "\"key\": \"%s\"}", keys[i]);
		if (!strstr(text, want))
			fail_msg("no %s in:\n%s", want, text);
	}
	free(text);
	table_free(&t);
}

/* A note quotes a stored reason whole: a failing peer's reason with its stderr tail runs to 2 KiB
 * of text, non-ASCII included; cut at 2047 bytes (as it was), the note lost its end and, cut
 * inside a UTF-8 character, made the JSON output unreadable. */
static void test_render__notes_are_kept_whole(void **state)
{
	(void)state;
	struct strbuf reason = STRBUF_INIT;
	for (int i = 0; i < 1500; i++)
		sb_add(&reason, "\xc3\xa9");   /* é: 3000 bytes */
	sb_add(&reason, " END");
	struct table t;
	table_init(&t, NULL);
	table_note(&t, "case 1 (x): error \xe2\x80\x94 %s", sb_str(&reason));
	assert_int_equal(t.nnotes, 1);
	assert_int_equal(strlen(t.notes[0]), strlen("case 1 (x): error \xe2\x80\x94 ") + reason.len);
	assert_non_null(strstr(t.notes[0], " END"));
	char *text = render_one(&t, FORMAT_JSON);
	assert_python_json(text, "d[0][\"notes\"][0].endswith(\"\\u00e9 END\")");
	free(text);
	table_free(&t);
	sb_free(&reason);
}

/* ---- markdown ------------------------------------------------------------------------------ */

/* The cells of a GitHub table row: '|' splits them unless a backslash escapes it. */
static size_t md_row_cells(const char *line, size_t len)
{
	size_t pipes = 0;
	for (size_t i = 0; i < len; i++)
		pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
	return pipes ? pipes - 1 : 0;
}

/* Any text a user gives (a --columns heading, a pivot's value, a label, a stored reason) keeps a
 * table a table: every line from the header to the last row has one cell per column, and no line
 * break in a title or a note starts a line of its own. */
static void test_render__md_keeps_its_table_whole_whatever_the_text(void **state)
{
	(void)state;
	const enum report_format fmts[] = {FORMAT_MD, FORMAT_SUMMARY};
	for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		struct table t;
		table_init(&t, "title\n| x | y |\n| - | - |");
		table_column(&t, "a|b", "", 0);
		table_column(&t, "fwd\nmean", "m|s", 3);
		table_column(&t, "c", "", 0);
		size_t r = table_row(&t);
		table_text(&t, r, 0, "x|y\nz\r| w |");   /* a lone CR ends a line to markdown */
		table_number(&t, r, 1, 1.5);
		table_text(&t, r, 2, "\\|");
		table_note(&t, "reason one\n| injected | row |");
		char *text = render_one(&t, fmts[f]);
		size_t rows = 0;
		for (const char *line = text; *line;) {
			size_t len = strcspn(line, "\n");
			if (*line == '|') {
				if (md_row_cells(line, len) != 3)
					fail_msg("a table line of %zu cells, not 3: %.*s\nin:\n%s",
						 md_row_cells(line, len), (int)len, line, text);
				rows++;
			}
			line += len + (line[len] == '\n');
		}
		assert_int_equal(rows, 3);   /* header, delimiter, the row: nothing else starts with | */
		assert_null(strchr(text, '\r'));
		assert_non_null(strstr(text, "a\\|b"));
		assert_non_null(strstr(text, "fwd\\nmean (m\\|s)"));
		free(text);
		table_free(&t);
	}
}

/* A character not seen itself that reorders what follows it (a bidirectional override or
 * isolate, a mark) or a C1 control, in a stored name: shown as \uHHHH on a terminal
 * (escape_controls), in markdown (a writeup, a summary) and in the site's HTML, never passed
 * through for a viewer to obey. "flash<RLO>2x" read "flashx2" in a browser; the \u escape also
 * reads back as the same character in a JSON string. */
static void test_render__hidden_characters_are_shown_not_obeyed(void **state)
{
	(void)state;
	/* RLO, LRI, PDI, RLM, ALM, the C1 CSI; then near misses that stay: U+2010 (a hyphen),
	 * U+2070 (superscript zero), U+00A0 (no-break space) */
	const char *in = "flash\xe2\x80\xae" "2x \xe2\x81\xa6" "a\xe2\x81\xa9 \xe2\x80\x8f" "b\xd8\x9c" "c"
			 "\xc2\x9b" "2J \xe2\x80\x90\xe2\x81\xb0\xc2\xa0" "d\x1b";
	const char *want = "flash\\u202e2x \\u2066a\\u2069 \\u200fb\\u061cc\\u009b2J "
			   "\xe2\x80\x90\xe2\x81\xb0\xc2\xa0" "d";
	char *shown = escape_controls(in);
	char expect[256];
	snprintf(expect, sizeof(expect), "%s\\x1b", want);
	assert_string_equal(shown, expect);
	free(shown);

	struct strbuf sb = {0};
	sb_add_inline(&sb, in, 1);
	snprintf(expect, sizeof(expect), "%s\x1b", want);   /* markdown keeps C0 controls to escape_controls */
	assert_string_equal(sb_str(&sb), expect);
	sb_free(&sb);

	sb = (struct strbuf){0};
	sb_add_html(&sb, in);
	snprintf(expect, sizeof(expect), "%s ", want);   /* HTML shows a C0 control as a space */
	assert_string_equal(sb_str(&sb), expect);
	sb_free(&sb);

	/* a lone lead byte at the end of the text is read no further than its end */
	shown = escape_controls("x\xe2\x80");
	assert_string_equal(shown, "x\xe2\x80");
	free(shown);
}

/* ---- reading a stored params JSON ---------------------------------------------------------- */

/* json_field gives a text value whole and decoded (it used to stop at the first quote, escaped or
 * not, and keep escapes as written), matches keys only where they are keys, and reads non-text
 * values as written. */
static void test_render__json_field_reads_text_values_whole(void **state)
{
	(void)state;
	const char *json = "{\"a\":\"say \\\"hi\\\", x\\\\y\",\"note\":\"\\\"b\\\":1\",\"b\":2,"
			   "\"u\":\"\\u00e9\\ud83d\\ude00\\n\",\"o\":{\"b\":3},\"t\":true}";
	char v[64];
	json_field(json, "a", v, sizeof(v));
	assert_string_equal(v, "say \"hi\", x\\y");
	json_field(json, "b", v, sizeof(v));   /* not the "b": inside the note's text */
	assert_string_equal(v, "2");
	json_field(json, "u", v, sizeof(v));
	assert_string_equal(v, "\xc3\xa9\xf0\x9f\x98\x80\n");
	json_field(json, "o", v, sizeof(v));
	assert_string_equal(v, "{\"b\":3}");
	json_field(json, "t", v, sizeof(v));
	assert_string_equal(v, "true");
	json_field(json, "missing", v, sizeof(v));
	assert_string_equal(v, "");
	json_field("{\"a\": \"x\" , \"c\" : 5 }", "c", v, sizeof(v));
	assert_string_equal(v, "5");
	json_field("{\"a\":\"unterminated", "a", v, sizeof(v));
	assert_string_equal(v, "");
	json_field(NULL, "a", v, sizeof(v));
	assert_string_equal(v, "");
}

/* ---- LaTeX --------------------------------------------------------------------------------- */

static void test_render__tex_escapes_every_special_character(void **state)
{
	(void)state;
	struct table t;
	table_init(&t, "50% of $peak_{x}");
	table_column(&t, "what & why", "m^2", 0);
	table_text(&t, table_row(&t), 0, "& % $ # _ { } ~ ^ \\ < > | [a] *b\nc");
	char *text = render_one(&t, FORMAT_TEX);
	assert_non_null(strstr(text, "\\caption{50\\% of \\$peak\\_\\{x\\}}\n"));
	assert_non_null(strstr(text, "\\toprule\nwhat \\& why (m\\textasciicircum{}2) \\\\\n"));
	assert_non_null(strstr(text, "\\midrule\n\\& \\% \\$ \\# \\_ \\{ \\} \\textasciitilde{} "
				     "\\textasciicircum{} \\textbackslash{} \\textless{} \\textgreater{} "
				     "\\textbar{} {[}a{]} {*}b c \\\\\n\\bottomrule\n"));
	free(text);
	table_free(&t);
}

/* A control character (a stored label's escape sequence) is written as visible text, never raw:
 * TeX rejects it as an invalid character, and the report's terminal escaping would turn it into
 * \x1b, an undefined control sequence. */
static void test_render__tex_shows_control_characters_as_text(void **state)
{
	(void)state;
	struct table t;
	table_init(&t, "run \x1b]0;title\x07");
	table_column(&t, "label", "", 0);
	table_text(&t, table_row(&t), 0, "a\x1b[31mb\x7f\x01");
	char *text = render_one(&t, FORMAT_TEX);
	for (const char *p = text; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n')
			fail_msg("raw control character 0x%02x in:\n%s", (unsigned char)*p, text);
	assert_non_null(strstr(text, "\\caption{run \\textbackslash{}x1b{]}0;title\\textbackslash{}x07}"));
	assert_non_null(strstr(text, "a\\textbackslash{}x1b{[}31mb\\textbackslash{}x7f"
				     "\\textbackslash{}x01 \\\\\n"));
	free(text);
	table_free(&t);
}

/* `report nodes` marks a case within bounds ✓ and out of bounds ✗: glyphs no LaTeX font has
 * without a package (pdflatex stops: "Unicode character ✓ (U+2713) not set up for use with
 * LaTeX"); they are math symbols, other text (é, °, —, which LaTeX has) stays as it is. */
static void test_render__tex_marks_are_math_symbols(void **state)
{
	(void)state;
	struct table t;
	table_init(&t, NULL);
	table_column(&t, "memory", "", 0);
	table_column(&t, "temp", "\xc2\xb0" "C", 0);
	size_t r = table_row(&t);
	table_text(&t, r, 0, "\xe2\x9c\x93");
	table_text(&t, r, 1, "\xe2\x9c\x97 caf\xc3\xa9 \xe2\x80\x94");
	char *text = render_one(&t, FORMAT_TEX);
	assert_null(strstr(text, "\xe2\x9c\x93"));
	assert_null(strstr(text, "\xe2\x9c\x97"));
	assert_non_null(strstr(text, "memory & temp (\xc2\xb0" "C) \\\\\n\\midrule\n"
				     "\\ensuremath{\\surd} & \\ensuremath{\\times} caf\xc3\xa9 \xe2\x80\x94 \\\\\n"));
	free(text);
	table_free(&t);
}

static void test_render__tex_without_title_has_no_caption(void **state)
{
	(void)state;
	struct table t;
	table_init(&t, NULL);
	table_column(&t, "x", "", 0);
	char *text = render_one(&t, FORMAT_TEX);
	assert_null(strstr(text, "\\caption"));
	assert_string_equal(text, "\\begin{table}[ht]\n\\centering\n\\begin{tabular}{l}\n\\toprule\n"
				  "x \\\\\n\\midrule\n\\bottomrule\n\\end{tabular}\n\\end{table}\n\n");
	free(text);
	table_free(&t);
}

/* ---- framing and names --------------------------------------------------------------------- */

static void test_render__begin_end_add_nothing_for_text_formats(void **state)
{
	(void)state;
	const enum report_format fmts[] = {FORMAT_MD, FORMAT_CSV, FORMAT_TEX, FORMAT_SUMMARY};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		struct strbuf out = STRBUF_INIT;
		render_begin(fmts[i], &out);
		render_end(fmts[i], &out);
		assert_int_equal(out.len, 0);
		sb_free(&out);
	}
}

static void test_render__format_parse_accepts_every_format_name(void **state)
{
	(void)state;
	assert_int_equal(format_parse("md"), FORMAT_MD);
	assert_int_equal(format_parse("csv"), FORMAT_CSV);
	assert_int_equal(format_parse("json"), FORMAT_JSON);
	assert_int_equal(format_parse("tex"), FORMAT_TEX);
	for (int i = 0; i < FORMAT_COUNT; i++)
		assert_int_equal(format_parse(format_names[i]), i);
}

static void test_render__format_parse_rejects_other_names(void **state)
{
	(void)state;
	const char *bad[] = {"", "MD", "Json", "xml", "jsonl", "latex", "markdown", "csv ", "t"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(format_parse(bad[i]), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render__md_matches_golden),
		cmocka_unit_test(test_render__summary_matches_golden),
		cmocka_unit_test(test_render__csv_matches_golden),
		cmocka_unit_test(test_render__json_matches_golden),
		cmocka_unit_test(test_render__tex_matches_golden),
		cmocka_unit_test(test_render__json_checker_rejects_invalid_documents),
		cmocka_unit_test(test_render__json_of_one_table_is_valid_with_typed_values),
		cmocka_unit_test(test_render__json_two_tables_between_begin_end_form_one_array),
		cmocka_unit_test(test_render__json_begin_end_without_tables_is_an_empty_array),
		cmocka_unit_test(test_render__json_table_without_rows_columns_or_notes_is_valid),
		cmocka_unit_test(test_render__json_numbers_read_back_exactly_and_non_finite_are_null),
		cmocka_unit_test(test_render__json_is_utf8_whatever_the_stored_text),
		cmocka_unit_test(test_render__json_keys_are_identifiers_and_unique),
		cmocka_unit_test(test_render__notes_are_kept_whole),
		cmocka_unit_test(test_render__md_keeps_its_table_whole_whatever_the_text),
		cmocka_unit_test(test_render__hidden_characters_are_shown_not_obeyed),
		cmocka_unit_test(test_render__json_field_reads_text_values_whole),
		cmocka_unit_test(test_render__tex_escapes_every_special_character),
		cmocka_unit_test(test_render__tex_shows_control_characters_as_text),
		cmocka_unit_test(test_render__tex_marks_are_math_symbols),
		cmocka_unit_test(test_render__tex_without_title_has_no_caption),
		cmocka_unit_test(test_render__begin_end_add_nothing_for_text_formats),
		cmocka_unit_test(test_render__format_parse_accepts_every_format_name),
		cmocka_unit_test(test_render__format_parse_rejects_other_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
