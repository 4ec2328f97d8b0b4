/* tests/test_plot.c: charts through gnuplot (report/plot.c). Real charts are written into a fresh
 * directory under /tmp and checked on disk (PNG signature and size, SVG elements and the legend
 * text); a stand-in $GNUPLOT (a missing program, a small failing script) checks how failures come
 * back. The whole binary exits 77 (skipped) when no gnuplot is installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "strbuf.h"

struct fixture {
	char dir[64];
	char *saved_gnuplot;   /* $GNUPLOT as the test found it, NULL if unset */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/benchdb-test-plot-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	const char *g = getenv("GNUPLOT");
	fx->saved_gnuplot = g ? strdup(g) : NULL;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	if (fx->saved_gnuplot)
		setenv("GNUPLOT", fx->saved_gnuplot, 1);
	else
		unsetenv("GNUPLOT");
	DIR *d = opendir(fx->dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(fx->dir);
	free(fx->saved_gnuplot);
	free(fx);
	return 0;
}

/* dir/name as a malloc'd string. */
static char *path_in(const struct fixture *fx, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", fx->dir, name);
	return sb_detach(&sb);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static size_t count_of(const char *haystack, const char *needle)
{
	size_t n = 0;
	for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Is text the whole content of some SVG text node (tic labels carry a leading blank)? */
static int svg_has_text(const char *svg, const char *text)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	sb_addf(&a, ">%s<", text);
	sb_addf(&b, "> %s<", text);
	int found = strstr(svg, a.buf) || strstr(svg, b.buf);
	sb_free(&a);
	sb_free(&b);
	return found;
}

/* Read base.png and base.svg, check the PNG signature and size; returns the SVG (malloc'd). */
static char *read_chart(const char *base, size_t min_png_bytes)
{
	static const unsigned char png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	struct strbuf png_path = STRBUF_INIT, svg_path = STRBUF_INIT;
	sb_addf(&png_path, "%s.png", base);
	sb_addf(&svg_path, "%s.svg", base);
	size_t png_len = 0, svg_len = 0;
	char *png = read_file(png_path.buf, &png_len);
	assert_non_null(png);
	assert_true(png_len >= sizeof(png_signature));
	assert_memory_equal(png, png_signature, sizeof(png_signature));
	assert_true(png_len > min_png_bytes);
	char *svg = read_file(svg_path.buf, &svg_len);
	assert_non_null(svg);
	assert_non_null(strstr(svg, "<svg"));
	assert_non_null(strstr(svg, "</svg>"));
	free(png);
	sb_free(&png_path);
	sb_free(&svg_path);
	return svg;
}

/* Write an executable shell script into the fixture directory. */
static char *write_script(const struct fixture *fx, const char *name, const char *body)
{
	char *path = path_in(fx, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
	return path;
}

/* Attention latency vs sequence length: two impls, one with error bars, spanning four decades. */
static const double seq_len[] = {256, 1024, 4096, 16384};
static const double naive_ms[] = {0.05, 0.6, 9.5, 160.0};
static const double flash_ms[] = {0.04, 0.3, 3.1, 45.0};
static const double flash_lo[] = {0.035, 0.27, 2.9, 41.0};
static const double flash_hi[] = {0.045, 0.33, 3.4, 49.0};

static void test_plot__lines_with_log_axes_and_awkward_titles_write_png_and_svg(void **state)
{
	struct fixture *fx = *state;
	char *base = path_in(fx, "latency");
	char *pwned = path_in(fx, "pwned");
	/* Underscores (enhanced text would make subscripts), both quotes, a percent sign, gnuplot's
	 * @macro and `shell` syntax, and XML's & and <: all must come out as written. */
	struct strbuf shell_title = STRBUF_INIT;
	sb_addf(&shell_title, "naive_fp32 it's `touch %s` @x", pwned);
	const struct plot_series series[] = {
		{.title = shell_title.buf, .x = seq_len, .y = naive_ms, .n = 4},
		{.title = "flash_fwd \"tiled\" 100% & <bf16>", .x = seq_len, .y = flash_ms, .n = 4,
		 .ylo = flash_lo, .yhi = flash_hi},
	};
	const struct plot p = {
		.kind = PLOT_LINES, .title = "attention forward, head_dim=64",
		.xlabel = "sequence length", .ylabel = "latency (ms)", .logx = 1, .logy = 1,
		.series = series, .nseries = 2,
	};
	struct bd_error err = {0};
	int rc = plot_write(&p, base, &err);
	assert_int_equal(rc, BD_OK);

	char *svg = read_chart(base, 4096);
	/* Two data lines and their key samples, the border, the tics and the error bars. */
	assert_true(count_of(svg, "<path") >= 20);
	assert_non_null(strstr(svg, "<text>attention forward, head_dim=64</text>"));
	assert_non_null(strstr(svg, "<text>sequence length</text>"));
	assert_non_null(strstr(svg, "<text>latency (ms)</text>"));
	struct strbuf key = STRBUF_INIT;
	sb_addf(&key, "<text>naive_fp32 it's `touch %s` @x</text>", pwned);
	assert_non_null(strstr(svg, key.buf));
	assert_non_null(strstr(svg, "<text>flash_fwd \"tiled\" 100% &amp; &lt;bf16></text>"));
	assert_false(exists(pwned));   /* the backquotes were text, not a command */
	/* Log y: decade tics; a linear axis over 0.04..160 would read 0, 20, 40, ... */
	assert_true(svg_has_text(svg, "0.1"));
	assert_true(svg_has_text(svg, "1"));
	assert_true(svg_has_text(svg, "10"));
	assert_true(svg_has_text(svg, "100"));
	assert_false(svg_has_text(svg, "20"));
	/* Log x: tics at the sequence lengths. */
	assert_true(svg_has_text(svg, "256"));
	assert_true(svg_has_text(svg, "16384"));

	free(svg);
	sb_free(&key);
	sb_free(&shell_title);
	free(pwned);
	free(base);
}

static const char *const shapes[] = {"S=256_D=64", "S=1024_D=64", "S=4096_D=64", "S=16384_D=64"};
static const double flash_speedup[] = {0.8, 1.3, 2.4, 3.1};
static const double naive_speedup[] = {1.0, 0.7, 0.45, 0.3};
static const double naive_speedup_lo[] = {0.95, 0.66, 0.42, 0.27};
static const double naive_speedup_hi[] = {1.05, 0.74, 0.48, 0.33};

static void test_plot__bars_with_reference_line_write_png_and_svg(void **state)
{
	struct fixture *fx = *state;
	char *base = path_in(fx, "speedup");
	char *plain = path_in(fx, "speedup-no-line");
	const struct plot_series series[] = {
		{.title = "flash_fwd", .y = flash_speedup, .n = 4},
		{.title = "naive_fwd", .y = naive_speedup, .n = 4,
		 .ylo = naive_speedup_lo, .yhi = naive_speedup_hi},
	};
	struct plot p = {
		.kind = PLOT_BARS, .title = "speedup vs sdpa", .ylabel = "speedup (x)",
		.series = series, .nseries = 2, .categories = shapes,
		.has_hline = 1, .hline = 1.0, .width = 800, .height = 480,
	};
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_OK);

	char *svg = read_chart(base, 4096);
	assert_non_null(strstr(svg, "width=\"800\" height=\"480\""));
	/* Eight bars (filled paths with borders) besides the axes and tics. */
	assert_true(count_of(svg, "<path") >= 16);
	for (size_t i = 0; i < 4; i++)
		assert_true(svg_has_text(svg, shapes[i]));
	assert_non_null(strstr(svg, "<text>flash_fwd</text>"));
	assert_non_null(strstr(svg, "<text>naive_fwd</text>"));
	/* The reference line is the chart's only dashed line: gone when has_hline is off. */
	assert_int_equal(count_of(svg, "stroke-dasharray"), 1);

	p.has_hline = 0;
	assert_int_equal(plot_write(&p, plain, &err), BD_OK);
	char *svg_plain = read_chart(plain, 4096);
	assert_int_equal(count_of(svg_plain, "stroke-dasharray"), 0);

	free(svg_plain);
	free(svg);
	free(plain);
	free(base);
}

static void test_plot__output_names_with_quotes_and_pipes_are_plain_files(void **state)
{
	struct fixture *fx = *state;
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(fx->dir), 0);
	const struct plot_series series[] = {{.title = "a", .x = seq_len, .y = naive_ms, .n = 4}};
	const struct plot p = {.kind = PLOT_LINES, .series = series, .nseries = 1};
	struct bd_error err = {0};
	/* gnuplot reads `set output '|cmd'` as a pipe to cmd. */
	int rc_pipe = plot_write(&p, "|touch piped", &err);
	int rc_quote = plot_write(&p, "it's \"q\"", &err);
	int piped = exists("piped") || exists("piped.png");
	int pipe_png = exists("|touch piped.png"), pipe_svg = exists("|touch piped.svg");
	int quote_png = exists("it's \"q\".png"), quote_svg = exists("it's \"q\".svg");
	assert_int_equal(chdir(cwd), 0);

	assert_int_equal(rc_pipe, BD_OK);
	assert_int_equal(rc_quote, BD_OK);
	assert_false(piped);
	assert_true(pipe_png && pipe_svg);
	assert_true(quote_png && quote_svg);
}

static void test_plot__missing_gnuplot_is_enotfound_with_install_hint(void **state)
{
	struct fixture *fx = *state;
	const struct plot_series series[] = {{.title = "a", .x = seq_len, .y = naive_ms, .n = 4}};
	const struct plot p = {.kind = PLOT_LINES, .series = series, .nseries = 1};
	char *base = path_in(fx, "none");
	const char *programs[] = {"/nonexistent/benchdb-gnuplot", "benchdb-no-such-gnuplot"};
	for (size_t k = 0; k < 2; k++) {
		setenv("GNUPLOT", programs[k], 1);
		assert_int_equal(plot_available(), 0);
		struct bd_error err = {0};
		assert_int_equal(plot_write(&p, base, &err), BD_ENOTFOUND);
		assert_int_equal(err.code, BD_ENOTFOUND);
		assert_non_null(strstr(err.msg, "install gnuplot-nox"));
	}
	free(base);
}

static void test_plot__gnuplot_error_is_eio_with_its_stderr(void **state)
{
	struct fixture *fx = *state;
	/* It closes its input unread and lingers: writing the rest of a script longer than a pipe
	 * holds fails with EPIPE, which must neither stop nor kill the writer (SIGPIPE). */
	char *fake = write_script(fx, "fake-gnuplot",
				  "#!/bin/sh\n"
				  "exec 0<&-\n"
				  "sleep 0.2\n"
				  "echo 'gnuplot> plot $s0' >&2\n"
				  "echo '         line 7: fake gnuplot refuses this chart' >&2\n"
				  "exit 1\n");
	setenv("GNUPLOT", fake, 1);
	enum { N = 20000 };
	double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
	assert_non_null(x);
	assert_non_null(y);
	for (size_t i = 0; i < N; i++) {
		x[i] = (double)i;
		y[i] = 1000.0 + (double)(i % 97);
	}
	const struct plot_series series[] = {{.title = "warmup", .x = x, .y = y, .n = N}};
	const struct plot p = {.kind = PLOT_LINES, .series = series, .nseries = 1};
	char *base = path_in(fx, "refused");
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_EIO);
	assert_int_equal(err.code, BD_EIO);
	assert_non_null(strstr(err.msg, "line 7: fake gnuplot refuses this chart"));
	assert_non_null(strstr(err.msg, "status 1"));
	assert_null(strstr(err.msg, "gnuplot> plot"));   /* the echoed command is left out */
	free(base);
	free(y);
	free(x);
	free(fake);
}

static void test_plot__gnuplot_that_writes_no_files_is_eio(void **state)
{
	struct fixture *fx = *state;
	char *fake = write_script(fx, "silent-gnuplot", "#!/bin/sh\ncat >/dev/null\nexit 0\n");
	setenv("GNUPLOT", fake, 1);
	char *base = path_in(fx, "silent");
	char *stale = path_in(fx, "silent.png");
	FILE *f = fopen(stale, "w");   /* an old chart must not pass for the new one */
	assert_non_null(f);
	fputs("old chart", f);
	fclose(f);
	const struct plot_series series[] = {{.title = "a", .x = seq_len, .y = naive_ms, .n = 4}};
	const struct plot p = {.kind = PLOT_LINES, .series = series, .nseries = 1};
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_EIO);
	assert_non_null(strstr(err.msg, "missing, empty or cut short"));
	assert_non_null(strstr(err.msg, "silent.png"));
	free(stale);
	free(base);
	free(fake);
}

/* dir's entries but . and .., sorted, one a line (malloc'd). */
static char *dir_listing(const struct fixture *fx)
{
	struct dirent **names;
	int n = scandir(fx->dir, &names, NULL, alphasort);
	assert_true(n >= 0);
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			sb_addf(&sb, "%s\n", names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return sb_detach(&sb);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* gnuplot exits 0 when the disk fills under it: a chart cut short is a failure, not a chart. The
 * chart it would have replaced stays as it was, and nothing of the cut one is left. */
static void test_plot__chart_cut_short_is_eio(void **state)
{
	struct fixture *fx = *state;
	char *fake = write_script(fx, "full-disk-gnuplot",
				  "#!/bin/sh\n"
				  "sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" | while read -r f; do\n"
				  "  printf '\\211PNG\\r\\n\\032\\n<svg partial' >\"$f\"\n"
				  "done\nexit 0\n");
	setenv("GNUPLOT", fake, 1);
	char *base = path_in(fx, "cut");
	char *png = path_in(fx, "cut.png"), *svg = path_in(fx, "cut.svg");
	write_text(png, "the old png");
	write_text(svg, "the old svg");
	const struct plot_series series[] = {{.title = "a", .x = seq_len, .y = naive_ms, .n = 4}};
	const struct plot p = {.kind = PLOT_LINES, .series = series, .nseries = 1};
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_EIO);
	assert_non_null(strstr(err.msg, "cut short"));
	assert_non_null(strstr(err.msg, "cut.png"));
	char *old_png = read_file(png, NULL), *old_svg = read_file(svg, NULL);
	assert_string_equal(old_png, "the old png");
	assert_string_equal(old_svg, "the old svg");
	char *listing = dir_listing(fx);
	assert_string_equal(listing, "cut.png\ncut.svg\nfull-disk-gnuplot\n");
	free(listing);
	free(old_png);
	free(old_svg);
	free(png);
	free(svg);
	free(base);
	free(fake);
}

/* A chart rewritten whole replaces the old one, and leaves nothing else beside it. */
static void test_plot__rewritten_chart_replaces_the_old_one(void **state)
{
	struct fixture *fx = *state;
	char *base = path_in(fx, "again");
	char *png = path_in(fx, "again.png");
	write_text(png, "the old png");
	const struct plot_series series[] = {{.title = "a", .x = seq_len, .y = naive_ms, .n = 4}};
	const struct plot p = {.kind = PLOT_LINES, .series = series, .nseries = 1};
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_OK);
	char *svg = read_chart(base, 1000);
	free(svg);
	char *listing = dir_listing(fx);
	assert_string_equal(listing, "again.png\nagain.svg\n");
	free(listing);
	free(png);
	free(base);
}

static void test_plot__empty_plot_is_einval(void **state)
{
	struct fixture *fx = *state;
	char *base = path_in(fx, "empty");
	char *png = path_in(fx, "empty.png");
	const double nothing[] = {NAN, INFINITY};
	const double negative[] = {-1.0, 0.0};
	const struct plot_series no_points[] = {{.title = "a", .x = seq_len, .y = naive_ms, .n = 0},
						{.title = "b", .x = seq_len, .y = flash_ms, .n = 0}};
	const struct plot_series not_finite[] = {{.title = "a", .x = seq_len, .y = nothing, .n = 2}};
	const struct plot_series not_positive[] = {{.title = "a", .x = seq_len, .y = negative, .n = 2}};
	const struct plot plots[] = {
		{.kind = PLOT_LINES, .series = NULL, .nseries = 0},
		{.kind = PLOT_LINES, .series = no_points, .nseries = 2},
		{.kind = PLOT_BARS, .series = no_points, .nseries = 2},
		{.kind = PLOT_LINES, .series = not_finite, .nseries = 1},
		{.kind = PLOT_LINES, .series = not_positive, .nseries = 1, .logy = 1},
	};
	for (size_t k = 0; k < sizeof(plots) / sizeof(plots[0]); k++) {
		struct bd_error err = {0};
		assert_int_equal(plot_write(&plots[k], base, &err), BD_EINVAL);
		assert_non_null(strstr(err.msg, "nothing to plot"));
	}
	assert_false(exists(png));
	free(png);
	free(base);
}

/* The x of the first row of datablock name ("$s1", "$marked") in a gnuplot script; NAN if none. */
static double datablock_first_x(const char *script, const char *name)
{
	struct strbuf head = STRBUF_INIT;
	sb_addf(&head, "%s << EOD\n", name);
	const char *p = strstr(script, head.buf);
	double x = NAN;
	if (p)
		x = strtod(p + head.len, NULL);
	sb_free(&head);
	return x;
}

static void test_plot__bar_rings_sit_on_their_bars_past_a_series_with_nothing_to_draw(void **state)
{
	struct fixture *fx = *state;
	char *base = path_in(fx, "rings");
	char *script = path_in(fx, "rings.gp");
	/* a stand-in gnuplot that keeps the script it is sent and draws it with the real one */
	const char *real = fx->saved_gnuplot ? fx->saved_gnuplot : "gnuplot";
	struct strbuf body = STRBUF_INIT;
	sb_addf(&body, "#!/bin/sh\ntee '%s' | exec '%s'\n", script, real);
	char *tee = write_script(fx, "tee-gnuplot", body.buf);
	setenv("GNUPLOT", tee, 1);
	/* series 0 has bars but none that can be drawn (a speedup over a zero time): it is left
	 * out, so series 1's bars take the first slot, and its ringed bar must be ringed there */
	const double nothing[] = {INFINITY, NAN};
	const double speedup[] = {1.5, 2.0};
	const unsigned char marked[] = {1, 0};
	const char *const two[] = {"S16", "S32"};
	const struct plot_series series[] = {
		{.title = "undrawable", .y = nothing, .n = 2},
		{.title = "flash", .y = speedup, .n = 2, .marked = marked},
	};
	const struct plot p = {.kind = PLOT_BARS, .series = series, .nseries = 2, .categories = two};
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_OK);
	size_t len = 0;
	char *text = read_file(script, &len);
	assert_non_null(text);
	double bar = datablock_first_x(text, "$s1"), ring = datablock_first_x(text, "$marked");
	assert_true(isfinite(bar));
	assert_true(fabs(ring - bar) < 1e-9);
	free(text);
	free(tee);
	sb_free(&body);
	free(script);
	free(base);
}

static void test_plot__text_that_is_not_utf8_keeps_the_svg_well_formed(void **state)
{
	struct fixture *fx = *state;
	char *base = path_in(fx, "bytes\xe9");   /* a file name keeps its bytes */
	/* a Latin-1 byte, a UTF-16 surrogate, a sequence cut short, beside good UTF-8 */
	const struct plot_series series[] = {
		{.title = "caf\xc3\xa9 \xff \xed\xa0\x80 \xe2\x82 \xf0\x9d\x84\x9e", .x = seq_len,
		 .y = naive_ms, .n = 4},
		{.title = "S\xe9q \xe2\x80\x94 ok", .x = seq_len, .y = flash_ms, .n = 4},
	};
	const struct plot p = {.kind = PLOT_LINES, .title = "caf\xe9", .series = series, .nseries = 2};
	struct bd_error err = {0};
	assert_int_equal(plot_write(&p, base, &err), BD_OK);
	char *svg = read_chart(base, 1000);
	/* every byte of the SVG is well-formed UTF-8: a bad one stood in for by '?' */
	for (const unsigned char *c = (const unsigned char *)svg; *c; c++) {
		size_t len = *c < 0x80 ? 1 : *c >= 0xC2 && *c <= 0xDF ? 2 : *c >= 0xE0 && *c <= 0xEF ? 3
			   : *c >= 0xF0 && *c <= 0xF4 ? 4 : 0;
		assert_true(len > 0);
		for (size_t k = 1; k < len; k++)
			assert_int_equal(c[k] & 0xC0, 0x80);
		c += len - 1;
	}
	assert_non_null(strstr(svg, "<text>caf\xc3\xa9 ? ??? ?? \xf0\x9d\x84\x9e</text>"));
	assert_non_null(strstr(svg, "<text>S?q \xe2\x80\x94 ok</text>"));
	assert_non_null(strstr(svg, "<text>caf?</text>"));
	free(svg);
	free(base);
}

int main(void)
{
	if (!plot_available()) {
		fprintf(stderr, "test_plot: no gnuplot (install gnuplot-nox); skipped\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_plot__lines_with_log_axes_and_awkward_titles_write_png_and_svg, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__bars_with_reference_line_write_png_and_svg, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__output_names_with_quotes_and_pipes_are_plain_files, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__missing_gnuplot_is_enotfound_with_install_hint, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__gnuplot_error_is_eio_with_its_stderr, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__gnuplot_that_writes_no_files_is_eio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plot__chart_cut_short_is_eio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plot__rewritten_chart_replaces_the_old_one, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plot__empty_plot_is_einval, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__bar_rings_sit_on_their_bars_past_a_series_with_nothing_to_draw, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_plot__text_that_is_not_utf8_keeps_the_svg_well_formed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
