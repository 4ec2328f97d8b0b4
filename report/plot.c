/* report/plot.c: charts through a pipe to gnuplot.
 *
 * plot_write() builds one gnuplot script: the data as datablocks ($s0, $s1, ... written once at
 * the top), the axes and key, then the plot for pngcairo and a `replot` for svg. gnuplot is
 * started with posix_spawnp (no shell: the script and user text never reach /bin/sh), the script
 * goes to its stdin through a pipe, its stdout goes to /dev/null (gnuplot writes the image there
 * when it cannot open the output file) and its stderr is collected through a second pipe. Both
 * pipes are served by one poll() loop, so a gnuplot that talks a lot on stderr, or exits before
 * reading all of its input, can neither deadlock us nor kill us with SIGPIPE.
 *
 * User text (titles, labels, series and category names) goes into single-quoted gnuplot
 * strings, which do no backslash, backquote (shell command) or @macro substitution; a quote is
 * written as '' and control characters become spaces, bytes that are not well-formed UTF-8 '?'
 * (the SVG must stay well-formed XML). Every such string is drawn `noenhanced`,
 * so "flash_fwd" is not set as "flash" with a subscript. Output paths get a "./" in front when
 * relative, so that a name starting with '|' (a pipe to gnuplot) or '~' stays a plain file. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"
#include "strbuf.h"

extern char **environ;

#define PLOT_DEFAULT_WIDTH 900
#define PLOT_DEFAULT_HEIGHT 540
#define PLOT_MAX_SIDE 20000        /* pixels; anything larger is a caller's mistake */
#define STDERR_KEEP 8192           /* bytes of gnuplot's stderr kept for the message */
#define STDERR_LINES 4             /* lines of it quoted in the message */
#define LOG_XTICS_MAX 12           /* on a log x axis, tics at the data's x values up to this many */
#define POINTS_SHOWN 25            /* longer series mark every k-th point only */
#define BAR_FILL 0.95              /* share of its slot a bar fills */

/* Marker per series (filled circle, square, triangles, diamond, then their outlines), so that
 * lines stay apart in grey print too; colours are gnuplot's default linetypes, 8 of them. Past 8
 * series the colours come round again with another dash type (lines) or fill pattern (bars), so
 * that no two of up to 40 series look alike. */
static const int point_types[] = {7, 5, 9, 11, 13, 6, 4, 8, 10, 12};
#define PLOT_COLOURS 8
#define PLOT_DASHES 5              /* gnuplot's dash types 1 (solid) to 5 */

/* Text metrics of the 10 pt sans the charts use, in pixels, on the safe side (capitals and
 * digits of DejaVu Sans run 6-7 px): what the layout of labels and legend is computed from. */
#define CHAR_PX 7.0
#define LINE_PX 15.0               /* a line of text, with the gap to the next (the key's) */
#define LEFT_PX 80.0               /* the y label and tics */
#define KEY_SAMPLE_PX 70.0         /* a legend entry's sample line, marker and gaps */

static const char *const gnuplot_missing =
	"gnuplot is not installed: install gnuplot-nox (Debian/Ubuntu) to get charts";

/* The program to run: $GNUPLOT (a program name or path, no arguments) or "gnuplot". */
static const char *gnuplot_program(void)
{
	const char *g = getenv("GNUPLOT");
	return g && *g ? g : "gnuplot";
}

static int is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int plot_available(void)
{
	const char *prog = gnuplot_program();
	if (strchr(prog, '/'))
		return is_executable_file(prog);

	/* The same search posix_spawnp does: PATH, or the system default path when unset. */
	const char *path = getenv("PATH");
	char default_path[256];
	if (!path) {
		size_t n = confstr(_CS_PATH, default_path, sizeof(default_path));
		path = n > 0 && n <= sizeof(default_path) ? default_path : "/bin:/usr/bin";
	}
	int found = 0;
	struct strbuf candidate = STRBUF_INIT;
	for (const char *dir = path; !found; dir++) {
		const char *end = strchr(dir, ':');
		size_t len = end ? (size_t)(end - dir) : strlen(dir);
		sb_reset(&candidate);
		if (len == 0)
			sb_add(&candidate, ".");   /* an empty PATH entry is the current directory */
		else
			sb_addn(&candidate, dir, len);
		sb_addc(&candidate, '/');
		sb_add(&candidate, prog);
		found = is_executable_file(sb_str(&candidate));
		if (!end)
			break;
		dir = end;
	}
	sb_free(&candidate);
	return found;
}

/* ---- the script ------------------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at c of a character XML allows (not a surrogate,
 * an overlong form, past U+10FFFF, or U+FFFE/U+FFFF), 0 when there is none. c[0] >= 0x80. */
static size_t utf8_char_len(const unsigned char *c)
{
	size_t len = c[0] >= 0xC2 && c[0] <= 0xDF ? 2 : c[0] >= 0xE0 && c[0] <= 0xEF ? 3
		   : c[0] >= 0xF0 && c[0] <= 0xF4 ? 4 : 0;
	unsigned long cp = len == 2 ? c[0] & 0x1Fu : len == 3 ? c[0] & 0x0Fu : c[0] & 0x07u;
	for (size_t k = 1; k < len; k++) {
		if ((c[k] & 0xC0) != 0x80)   /* also stops at the terminating NUL */
			return 0;
		cp = cp << 6 | (c[k] & 0x3Fu);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF) || cp >= 0xFFFE)) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

/* Append s as a single-quoted gnuplot string: '' for a quote, control characters as spaces, and
 * unless s is a file name (is_path: its bytes are the file's), a byte that is not part of
 * well-formed UTF-8 as '?' (gnuplot copies text into the SVG as it is, and one such byte makes
 * the whole file unreadable XML). */
static void sb_add_gp_text(struct strbuf *sb, const char *s, int is_path)
{
	sb_addc(sb, '\'');
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
		size_t len;
		if (*c == '\'')
			sb_add(sb, "''");
		else if (*c < 0x20 || *c == 0x7f)
			sb_addc(sb, ' ');
		else if (*c < 0x80 || is_path)
			sb_addc(sb, (char)*c);
		else if ((len = utf8_char_len(c)) == 0)
			sb_addc(sb, '?');
		else {
			sb_addn(sb, (const char *)c, len);
			c += len - 1;
		}
	}
	sb_addc(sb, '\'');
}

static void sb_add_gp_str(struct strbuf *sb, const char *s)
{
	sb_add_gp_text(sb, s, 0);
}

static int has_control_chars(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 1;
	return 0;
}

/* Can v be drawn on an axis (log axes take only positive values)? */
static int plottable(double v, int log_axis)
{
	return isfinite(v) && (!log_axis || v > 0);
}

static int point_plottable(const struct plot *p, const struct plot_series *s, size_t i)
{
	if (!plottable(s->y[i], p->logy))
		return 0;
	return p->kind == PLOT_BARS || plottable(s->x[i], p->logx);
}

/* The error-bar ends of point i, clamped to something the y axis can show. */
static void error_bar(const struct plot *p, const struct plot_series *s, size_t i, double *lo, double *hi)
{
	double y = s->y[i];
	*lo = plottable(s->ylo[i], p->logy) ? s->ylo[i] : y;
	*hi = plottable(s->yhi[i], p->logy) ? s->yhi[i] : y;
}

static size_t bar_categories(const struct plot *p)
{
	return p->nseries ? p->series[0].n : 0;
}

/* Whether series j has a point the axes can show: one that has none is drawn nowhere and has
 * no legend entry (an entry without its line would name nothing on the chart). */
static int series_shown(const struct plot *p, size_t j)
{
	for (size_t i = 0; i < p->series[j].n; i++)
		if (point_plottable(p, &p->series[j], i))
			return 1;
	return 0;
}

static size_t series_with_points(const struct plot *p)
{
	size_t k = 0;
	for (size_t j = 0; j < p->nseries; j++)
		k += series_shown(p, j);
	return k;
}

/* Bar j (0-based among the non-empty series) of category i sits at i + bar_offset(j). */
static double bar_width(const struct plot *p)
{
	return 0.8 / (double)series_with_points(p);
}

static double bar_offset(const struct plot *p, size_t j)
{
	double w = bar_width(p);
	return -0.4 + w * ((double)j + 0.5);
}

/* One datablock per non-empty series: "x y [ylo yhi]" per row. A line skips a point it cannot
 * draw and breaks there (a blank row starts a new segment); a bar that cannot be drawn is left out. */
static void add_datablocks(struct strbuf *sb, const struct plot *p)
{
	size_t visible = 0;
	for (size_t j = 0; j < p->nseries; j++) {
		const struct plot_series *s = &p->series[j];
		if (!series_shown(p, j))
			continue;
		sb_addf(sb, "$s%zu << EOD\n", j);
		int broken = 0;
		for (size_t i = 0; i < s->n; i++) {
			if (!point_plottable(p, s, i)) {
				if (p->kind == PLOT_LINES && !broken && i > 0)
					sb_addc(sb, '\n');
				broken = 1;
				continue;
			}
			broken = 0;
			double x = p->kind == PLOT_BARS ? (double)i + bar_offset(p, visible) : s->x[i];
			sb_addf(sb, "%.10g %.10g", x, s->y[i]);
			if (s->ylo && s->yhi) {
				double lo, hi;
				error_bar(p, s, i, &lo, &hi);
				sb_addf(sb, " %.10g %.10g", lo, hi);
			}
			sb_addc(sb, '\n');
		}
		sb_add(sb, "EOD\n");
		visible++;
	}
	/* the marked points of every series, drawn again as rings over them */
	int any = 0;
	visible = 0;
	for (size_t j = 0; j < p->nseries; j++) {
		const struct plot_series *s = &p->series[j];
		if (!series_shown(p, j))   /* counted as the bars' datablocks count them */
			continue;
		for (size_t i = 0; s->marked && i < s->n; i++) {
			if (!s->marked[i] || !point_plottable(p, s, i))
				continue;
			if (!any)
				sb_add(sb, "$marked << EOD\n");
			any = 1;
			double x = p->kind == PLOT_BARS ? (double)i + bar_offset(p, visible) : s->x[i];
			sb_addf(sb, "%.10g %.10g\n", x, s->y[i]);
		}
		visible++;
	}
	if (any)
		sb_add(sb, "EOD\n");
}

/* Whether some series has a marked point that can be drawn. */
static int has_marked(const struct plot *p)
{
	for (size_t j = 0; j < p->nseries; j++)
		for (size_t i = 0; p->series[j].marked && i < p->series[j].n; i++)
			if (p->series[j].marked[i] && point_plottable(p, &p->series[j], i))
				return 1;
	return 0;
}

/* On a log x axis with few distinct x values (sequence lengths, sizes), put the tics there. */
static void add_log_xtics(struct strbuf *sb, const struct plot *p)
{
	double xs[LOG_XTICS_MAX + 1];
	size_t nx = 0;
	for (size_t j = 0; j < p->nseries; j++) {
		const struct plot_series *s = &p->series[j];
		for (size_t i = 0; i < s->n; i++) {
			if (!point_plottable(p, s, i))
				continue;
			size_t k = 0;
			while (k < nx && xs[k] != s->x[i])
				k++;
			if (k < nx)
				continue;
			if (nx == LOG_XTICS_MAX)
				return;   /* too many: gnuplot's own decades read better */
			xs[nx++] = s->x[i];
		}
	}
	if (nx < 2)
		return;
	sort_doubles(xs, nx);
	/* Autoscaling would run on to the next decade; keep a margin of a quarter octave. */
	sb_addf(sb, "set xrange [%.10g:%.10g]\n", xs[0] / 1.2, xs[nx - 1] * 1.2);
	sb_add(sb, "set xtics (");
	for (size_t k = 0; k < nx; k++)
		sb_addf(sb, "%s%.10g", k ? ", " : "", xs[k]);
	sb_add(sb, ")\nset mxtics default\n");
}

/* Characters of UTF-8 text s. */
static size_t text_chars(const char *s)
{
	size_t n = 0;
	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Pixels the legend takes at the right of the plot: its longest entry and the sample. */
static double key_px(const struct plot *p)
{
	size_t longest = 0;
	for (size_t j = 0; j < p->nseries; j++)
		if (series_shown(p, j) && text_chars(p->series[j].title) > longest)
			longest = text_chars(p->series[j].title);
	return longest ? CHAR_PX * (double)longest + KEY_SAMPLE_PX : 0;
}

static size_t longest_category(const struct plot *p)
{
	size_t longest = 0;
	for (size_t i = 0; p->categories && i < bar_categories(p); i++)
		if (text_chars(p->categories[i]) > longest)
			longest = text_chars(p->categories[i]);
	return longest;
}

/* How the category names stand under the bars so that none runs into the next: level when each
 * fits its slot; else at 45 degrees when slots are a line and a half apart (two parallel names
 * are then slot x sin 45 apart); else upright (a line apart); else the chart is widened until
 * slots are a line wide. Returns the angle; *width may grow. */
static int category_angle(const struct plot *p, int *width)
{
	size_t ncat = bar_categories(p), longest = longest_category(p);
	if (!p->categories || !ncat)
		return 0;
	double plot_px = (double)*width - LEFT_PX - key_px(p);
	double slot = plot_px / ((double)ncat + 0.2);   /* xrange: ncat + 0.2 category widths */
	if (CHAR_PX * (double)longest + CHAR_PX <= slot)
		return 0;
	if (slot >= 1.5 * LINE_PX)
		return 45;
	if (slot < LINE_PX) {
		double need = LEFT_PX + key_px(p) + LINE_PX * ((double)ncat + 0.2) + 1;
		*width = need > PLOT_MAX_SIDE ? PLOT_MAX_SIDE : (int)ceil(need);
	}
	return 90;
}

/* Category names under the bars at angle (category_angle), the bottom margin made room for. */
static void add_category_xtics(struct strbuf *sb, const struct plot *p, int angle)
{
	size_t ncat = bar_categories(p);
	sb_addf(sb, "set xrange [-0.6:%zu.4]\n", ncat - 1);
	if (!p->categories) {
		sb_add(sb, "set xtics 1\n");
		return;
	}
	sb_add(sb, "set xtics (");
	for (size_t i = 0; i < ncat; i++) {
		if (i)
			sb_add(sb, ", ");
		sb_add_gp_str(sb, p->categories[i] ? p->categories[i] : "");
		sb_addf(sb, " %zu", i);
	}
	sb_add(sb, ") scale 0 noenhanced");
	if (angle) {
		/* the names hang below the axis as far as their length x sin(angle): that many
		 * lines of margin (a line of 10 pt text is about 2 characters' width), and the
		 * x label's below them */
		double drop = CHAR_PX * (double)longest_category(p) * sin(angle * M_PI / 180);
		int lines = (int)ceil(drop / (LINE_PX - 2)) + 2 + (p->xlabel && *p->xlabel);
		sb_addf(sb, " rotate by %d right\nset bmargin %d", angle, lines);
	}
	sb_addc(sb, '\n');
}

static void add_axes(struct strbuf *sb, const struct plot *p, int angle)
{
	sb_add(sb, "set encoding utf8\n");
	if (p->title && *p->title) {
		sb_add(sb, "set title ");
		sb_add_gp_str(sb, p->title);
		sb_add(sb, " noenhanced\n");
	}
	if (p->xlabel && *p->xlabel) {
		sb_add(sb, "set xlabel ");
		sb_add_gp_str(sb, p->xlabel);
		sb_add(sb, " noenhanced\n");
	}
	if (p->ylabel && *p->ylabel) {
		sb_add(sb, "set ylabel ");
		sb_add_gp_str(sb, p->ylabel);
		sb_add(sb, " noenhanced\n");
	}
	sb_add(sb, "set key outside right top vertical Left reverse noenhanced\n"
		   "set grid lt 1 lc rgb '#dddddd' lw 1\n"
		   "set border lw 1\n");
	if (p->logx && p->kind == PLOT_LINES) {
		sb_add(sb, "set logscale x\n");
		add_log_xtics(sb, p);
	}
	if (p->logy)
		sb_add(sb, "set logscale y\n");
	if (p->kind == PLOT_BARS) {
		sb_addf(sb, "set boxwidth %.6f absolute\n"
			    "set style fill solid 0.85 border lc rgb '#333333'\n"
			    "set grid noxtics\n", bar_width(p) * BAR_FILL);
		add_category_xtics(sb, p, angle);
		if (!p->logy)
			sb_add(sb, "set yrange [0:*]\n");   /* bars stand on zero */
	}
}

/* The plot command: one element per non-empty series, then the reference line. */
static void add_plot_command(struct strbuf *sb, const struct plot *p)
{
	const char *sep = "plot ";
	for (size_t j = 0; j < p->nseries; j++) {
		const struct plot_series *s = &p->series[j];
		if (!series_shown(p, j))
			continue;
		int errors = s->ylo && s->yhi;
		/* gnuplot's linetype 1-8: the same colour in both terminals; the round of colours
		 * picks the dash (lines) or the fill pattern (bars) */
		size_t color = j % PLOT_COLOURS + 1, round = j / PLOT_COLOURS;
		int marker = point_types[j % (sizeof(point_types) / sizeof(point_types[0]))];
		int dash = (int)(round % PLOT_DASHES) + 1;
		sb_addf(sb, "%s$s%zu using 1:2", sep, j);
		sep = ", \\\n     ";
		if (p->kind == PLOT_LINES) {
			if (errors)
				sb_addf(sb, ":3:4 with yerrorlines lt %zu dt %d pt %d lw 1.5 ps 0.8", color,
					dash, marker);
			else
				sb_addf(sb, " with linespoints lt %zu dt %d pt %d lw 1.5 ps 0.8 pi %zu", color,
					dash, marker,
					s->n > POINTS_SHOWN ? (s->n + POINTS_SHOWN - 1) / POINTS_SHOWN : 1);
		} else if (errors) {
			/* Not boxes + yerrorbars: those leave a white dot where the point would be. */
			sb_addf(sb, ":3:4:(%.6f) with boxerrorbars lt %zu", bar_width(p) * BAR_FILL, color);
		} else {
			sb_addf(sb, " with boxes lt %zu", color);
		}
		if (p->kind == PLOT_BARS && round)   /* patterns 1-7 are gnuplot's hatchings */
			sb_addf(sb, " fs pattern %d border lc rgb '#333333'", (int)((round - 1) % 7) + 1);
		sb_add(sb, " title ");
		if (s->title)
			sb_add_gp_str(sb, s->title);
		else
			sb_addf(sb, "'series %zu'", j + 1);
		sb_add(sb, " noenhanced");
	}
	if (p->has_hline && plottable(p->hline, p->logy))
		sb_addf(sb, ", \\\n     %.10g with lines dt 2 lw 1.5 lc rgb '#555555' notitle", p->hline);
	if (has_marked(p)) {   /* open rings, larger than any marker, in one colour of their own */
		sb_addf(sb, ", \\\n     $marked using 1:2 with points pt 6 ps 2.4 lw 2 lc rgb '#d62728' "
			    "title ");
		sb_add_gp_str(sb, p->mark_title ? p->mark_title : "marked");
		sb_add(sb, " noenhanced");
	}
	sb_addc(sb, '\n');
}

/* "./" in front of a relative path, so gnuplot sees no leading '|' (pipe) or '~' (home). */
static void sb_add_output_path(struct strbuf *sb, const char *path_base, const char *ext)
{
	struct strbuf path = STRBUF_INIT;
	if (path_base[0] != '/')
		sb_add(&path, "./");
	sb_add(&path, path_base);
	sb_add(&path, ext);
	sb_add_gp_text(sb, sb_str(&path), 1);
	sb_free(&path);
}

static void build_script(struct strbuf *sb, const struct plot *p, const char *path_base,
			 int width, int height)
{
	int angle = p->kind == PLOT_BARS ? category_angle(p, &width) : 0;
	/* a legend of one column: every entry a line tall, with the title and margins */
	double key_height = LINE_PX * (double)series_with_points(p) + 120;
	if (key_height > height)
		height = key_height > PLOT_MAX_SIDE ? PLOT_MAX_SIDE : (int)ceil(key_height);
	add_datablocks(sb, p);
	add_axes(sb, p, angle);
	sb_addf(sb, "set terminal pngcairo size %d,%d enhanced font 'sans,10'\nset output ",
		width, height);
	sb_add_output_path(sb, path_base, ".png");
	sb_addc(sb, '\n');
	add_plot_command(sb, p);
	sb_addf(sb, "unset output\n"
		    "set terminal svg size %d,%d dynamic enhanced font 'sans,10'\nset output ",
		width, height);
	sb_add_output_path(sb, path_base, ".svg");
	sb_add(sb, "\nreplot\nunset output\n");
}

/* ---- running gnuplot ---------------------------------------------------------------------- */

/* Feed script to gnuplot's stdin and collect its stderr (up to STDERR_KEEP bytes) until it
 * closes; *wait_status is waitpid's. BD_ENOTFOUND when the program cannot be found. */
static int gnuplot_run(const char *script, size_t len, struct strbuf *errout, int *wait_status,
		       struct bd_error *err)
{
	const char *prog = gnuplot_program();
	int rc = BD_OK;
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
	posix_spawn_file_actions_t actions;
	int have_actions = 0;
	pid_t pid = -1;
	sigset_t sigpipe_set, old_mask;
	int masked = 0, sigpipe_was_pending = 0, got_epipe = 0;

	if (pipe2(to_child, O_CLOEXEC) || pipe2(from_child, O_CLOEXEC)) {
		rc = bd_fail(err, BD_EIO, "cannot create a pipe to gnuplot: %s", strerror(errno));
		goto done;
	}
	if (posix_spawn_file_actions_init(&actions)) {
		rc = bd_fail(err, BD_ENOMEM, "out of memory starting gnuplot");
		goto done;
	}
	have_actions = 1;
	if (posix_spawn_file_actions_adddup2(&actions, to_child[0], 0) ||
	    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) ||
	    posix_spawn_file_actions_adddup2(&actions, from_child[1], 2)) {
		rc = bd_fail(err, BD_ENOMEM, "out of memory starting gnuplot");
		goto done;
	}
	char *argv[] = {(char *)prog, NULL};
	int spawn_errno = posix_spawnp(&pid, prog, &actions, NULL, argv, environ);
	if (spawn_errno) {
		pid = -1;
		if (spawn_errno == ENOENT)
			rc = bd_fail(err, BD_ENOTFOUND, "%s", gnuplot_missing);
		else
			rc = bd_fail(err, BD_EIO, "cannot run '%s': %s", prog, strerror(spawn_errno));
		goto done;
	}
	close(to_child[0]);
	close(from_child[1]);
	to_child[0] = from_child[1] = -1;

	/* A gnuplot that exits before reading everything must not kill us with SIGPIPE: block it
	 * (after the spawn, so gnuplot does not inherit the mask) and write non-blocking. */
	sigemptyset(&sigpipe_set);
	sigaddset(&sigpipe_set, SIGPIPE);
	sigset_t pending;
	if (sigpending(&pending) == 0)
		sigpipe_was_pending = sigismember(&pending, SIGPIPE);
	masked = pthread_sigmask(SIG_BLOCK, &sigpipe_set, &old_mask) == 0;
	fcntl(to_child[1], F_SETFL, fcntl(to_child[1], F_GETFL) | O_NONBLOCK);

	size_t sent = 0;
	if (len == 0) {
		close(to_child[1]);
		to_child[1] = -1;
	}
	while (from_child[0] >= 0) {
		struct pollfd fds[2] = {{.fd = from_child[0], .events = POLLIN},
					{.fd = to_child[1], .events = POLLOUT}};
		if (poll(fds, to_child[1] >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = bd_fail(err, BD_EIO, "waiting for gnuplot: %s", strerror(errno));
			goto done;
		}
		if (to_child[1] >= 0 && fds[1].revents) {
			ssize_t w = write(to_child[1], script + sent, len - sent);
			if (w > 0)
				sent += (size_t)w;
			if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == len) {
				got_epipe |= w < 0 && errno == EPIPE;
				close(to_child[1]);   /* done, or gnuplot stopped reading: EOF */
				to_child[1] = -1;
			}
		}
		if (fds[0].revents) {
			char chunk[4096];
			ssize_t r = read(from_child[0], chunk, sizeof(chunk));
			if (r > 0 && errout->len < STDERR_KEEP)
				sb_addn(errout, chunk, (size_t)r);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				close(from_child[0]);
				from_child[0] = -1;
			}
		}
	}

done:
	/* Closed before waiting, so that a gnuplot still reading or writing cannot block forever. */
	for (int k = 0; k < 2; k++) {
		if (to_child[k] >= 0)
			close(to_child[k]);
		if (from_child[k] >= 0)
			close(from_child[k]);
	}
	if (pid > 0) {
		while (waitpid(pid, wait_status, 0) < 0 && errno == EINTR)
			;
	}
	if (masked) {
		if (got_epipe && !sigpipe_was_pending) {
			struct timespec zero = {0, 0};
			sigtimedwait(&sigpipe_set, NULL, &zero);   /* drop the SIGPIPE we caused */
		}
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	}
	if (have_actions)
		posix_spawn_file_actions_destroy(&actions);
	return rc;
}

/* Does this line of gnuplot's stderr report an error? gnuplot's own are "line N: <what>" (and
 * "system error: ..."); "warning" lines are not errors, nor is anything else it chats about. */
static int stderr_line_is_error(const char *s)
{
	if (strcasestr(s, "warning"))
		return 0;
	if (strcasestr(s, "error"))
		return 1;
	int n = 0;
	return sscanf(s, "line %*d:%n", &n) == 0 && n > 0;
}

/* Up to STDERR_LINES distinct lines of gnuplot's stderr worth quoting (no echoed "gnuplot> ..."
 * commands, caret lines or blank lines): its errors, or what else it said when none; *error_seen
 * when a line reads as an error. */
static void summarize_stderr(const char *text, struct strbuf *summary, int *error_seen)
{
	*error_seen = 0;
	int lines = 0;
	/* Pass 0 takes the error lines; pass 1, only when there are none, the rest. */
	for (int pass = 0; pass < 2 && !(pass == 1 && summary->len); pass++) {
		const char *line = text;
		while (*line && lines < STDERR_LINES) {
			const char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line) : strlen(line);
			const char *next = end ? end + 1 : line + len;
			while (len && (*line == ' ' || *line == '\t')) {
				line++;
				len--;
			}
			while (len && (line[len - 1] == ' ' || line[len - 1] == '\r' || line[len - 1] == '^'))
				len--;
			struct strbuf one = STRBUF_INIT;   /* the line, blank runs squeezed to one */
			for (size_t k = 0; k < len; k++)
				if (!(line[k] == ' ' || line[k] == '\t') ||
				    !(k + 1 < len && (line[k + 1] == ' ' || line[k + 1] == '\t')))
					sb_addc(&one, line[k] == '\t' ? ' ' : line[k]);
			const char *s = sb_str(&one);
			int is_error = stderr_line_is_error(s);
			*error_seen |= is_error;
			/* gnuplot goes on after an error, so the svg pass often repeats the png's. */
			if (len && strncasecmp(s, "gnuplot>", 8) != 0 && is_error == !pass &&
			    !strstr(sb_str(summary), s)) {
				if (summary->len)
					sb_add(summary, "; ");
				sb_add(summary, s);
				lines++;
			}
			sb_free(&one);
			line = next;
		}
	}
}

/* Whether path is a whole chart: a regular file whose last bytes (trailing whitespace aside) are
 * end. gnuplot exits 0 even when the disk filled under it, leaving a truncated image. */
static int file_complete(const char *path, const char *end, size_t end_len)
{
	struct stat st;
	char tail[64];
	FILE *f = NULL;
	int ok = stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)end_len &&
		 (f = fopen(path, "rb")) != NULL;
	size_t n = 0;
	if (ok) {
		long from = st.st_size > (off_t)sizeof(tail) ? (long)(st.st_size - (off_t)sizeof(tail)) : 0;
		ok = fseek(f, from, SEEK_SET) == 0;
		n = ok ? fread(tail, 1, sizeof(tail), f) : 0;
	}
	if (f)
		fclose(f);
	while (ok && n > 0 && strchr(" \t\r\n", tail[n - 1]) && tail[n - 1])
		n--;
	return ok && n >= end_len && !memcmp(tail + n - end_len, end, end_len);
}

/* ---- plot_write ---------------------------------------------------------------------------- */

static int plot_check(const struct plot *p, const char *path_base, struct bd_error *err)
{
	if (!p || !path_base || !*path_base)
		return bd_fail(err, BD_EINVAL, "a chart needs a plot and an output path");
	if (has_control_chars(path_base))
		return bd_fail(err, BD_EINVAL, "chart path '%s' contains control characters", path_base);
	if (p->kind != PLOT_LINES && p->kind != PLOT_BARS)
		return bd_fail(err, BD_EINVAL, "unknown chart kind %d", (int)p->kind);
	if (p->width < 0 || p->height < 0 || p->width > PLOT_MAX_SIDE || p->height > PLOT_MAX_SIDE)
		return bd_fail(err, BD_EINVAL, "chart size %dx%d is out of range (1..%d pixels)",
			       p->width, p->height, PLOT_MAX_SIDE);
	if (p->nseries && !p->series)
		return bd_fail(err, BD_EINVAL, "chart '%s' has %zu series and no series array",
			       p->title ? p->title : "", p->nseries);
	size_t points = 0;
	for (size_t j = 0; j < p->nseries; j++) {
		const struct plot_series *s = &p->series[j];
		const char *name = s->title ? s->title : "";
		if (s->n == 0)
			continue;
		if (!s->y || (p->kind == PLOT_LINES && !s->x))
			return bd_fail(err, BD_EINVAL, "series '%s' has %zu points and no %s values",
				       name, s->n, s->y ? "x" : "y");
		if (!s->ylo != !s->yhi)
			return bd_fail(err, BD_EINVAL, "series '%s' has only one end of its error bars", name);
		if (p->kind == PLOT_BARS && s->n > bar_categories(p))
			return bd_fail(err, BD_EINVAL, "series '%s' has %zu bars for %zu categories",
				       name, s->n, bar_categories(p));
		for (size_t i = 0; i < s->n; i++)
			points += point_plottable(p, s, i);
	}
	if (points == 0)
		return bd_fail(err, BD_EINVAL, "chart '%s' has nothing to plot%s",
			       p->title ? p->title : "",
			       p->logx || p->logy ? " (no finite, positive values for its log axes)"
						  : " (no finite values)");
	return BD_OK;
}

/* Where gnuplot writes the chart path_base before it is whole: TMP.png and TMP.svg beside it,
 * TMP being ".NAME.tmpPID-N" (NAME path_base's last component). */
static void temp_base(struct strbuf *tmp, const char *path_base)
{
	static unsigned long counter;
	const char *name = strrchr(path_base, '/');
	name = name ? name + 1 : path_base;
	sb_addf(tmp, "%.*s.%s.tmp%ld-%lu", (int)(name - path_base), path_base, name, (long)getpid(),
		counter++);
}

/* Run script (which writes tmp_base.png and .svg), check that gnuplot wrote both whole, then
 * rename them to path_base.png and .svg. On failure neither is renamed and both are removed:
 * the old chart stays as it was, and no partial one is left. */
static int plot_run_checked(const struct strbuf *script, const char *path_base,
			    const char *tmp_base, struct bd_error *err)
{
	struct strbuf errout = STRBUF_INIT, summary = STRBUF_INIT;
	struct strbuf png = STRBUF_INIT, svg = STRBUF_INIT, tmp_png = STRBUF_INIT,
		      tmp_svg = STRBUF_INIT;
	int rc;
	sb_addf(&png, "%s.png", path_base);
	sb_addf(&svg, "%s.svg", path_base);
	sb_addf(&tmp_png, "%s.png", tmp_base);
	sb_addf(&tmp_svg, "%s.svg", tmp_base);
	/* Nothing left over must pass for what gnuplot writes. */
	unlink(sb_str(&tmp_png));
	unlink(sb_str(&tmp_svg));

	int status = 0;
	rc = gnuplot_run(script->buf, script->len, &errout, &status, err);
	if (rc)
		goto done;
	int error_seen;
	summarize_stderr(sb_str(&errout), &summary, &error_seen);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || error_seen) {
		char how[64];
		if (WIFSIGNALED(status))
			snprintf(how, sizeof(how), "was killed by signal %d", WTERMSIG(status));
		else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
			snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
		else
			snprintf(how, sizeof(how), "reported an error");
		rc = bd_fail(err, BD_EIO, "gnuplot %s writing chart '%s': %s", how, path_base,
			     summary.len ? sb_str(&summary) : "(nothing on stderr)");
		goto done;
	}
	/* a PNG ends with its IEND chunk (empty, with its CRC), an SVG with its closing tag */
	static const char png_end[] = "\0\0\0\0IEND\xae\x42\x60\x82", svg_end[] = "</svg>";
	const char *missing =
		!file_complete(sb_str(&tmp_png), png_end, sizeof(png_end) - 1) ? sb_str(&png)
		: !file_complete(sb_str(&tmp_svg), svg_end, sizeof(svg_end) - 1) ? sb_str(&svg)
		: NULL;
	if (missing) {
		rc = bd_fail(err, BD_EIO, "gnuplot left chart '%s' missing, empty or cut short (a "
			     "full disk?)%s%s", missing, summary.len ? ": " : "", sb_str(&summary));
		goto done;
	}
	if (rename(sb_str(&tmp_png), sb_str(&png)) || rename(sb_str(&tmp_svg), sb_str(&svg)))
		rc = bd_fail(err, BD_EIO, "cannot write chart '%s': %s", path_base, strerror(errno));

done:
	unlink(sb_str(&tmp_png));   /* what was not renamed: cut short, or of a failed chart */
	unlink(sb_str(&tmp_svg));
	sb_free(&tmp_png);
	sb_free(&tmp_svg);
	sb_free(&errout);
	sb_free(&summary);
	sb_free(&png);
	sb_free(&svg);
	return rc;
}

int plot_write(const struct plot *p, const char *path_base, struct bd_error *err)
{
	struct strbuf script = STRBUF_INIT, tmp = STRBUF_INIT;
	int rc = plot_check(p, path_base, err);
	if (rc)
		goto done;
	if (!plot_available()) {
		rc = bd_fail(err, BD_ENOTFOUND, "%s", gnuplot_missing);
		goto done;
	}

	int width = p->width ? p->width : PLOT_DEFAULT_WIDTH;
	int height = p->height ? p->height : PLOT_DEFAULT_HEIGHT;
	temp_base(&tmp, path_base);
	build_script(&script, p, sb_str(&tmp), width, height);
	rc = plot_run_checked(&script, path_base, sb_str(&tmp), err);

done:
	sb_free(&script);
	sb_free(&tmp);
	return rc;
}

void plot_add_str(struct strbuf *sb, const char *s)
{
	sb_add_gp_str(sb, s);
}

int plot_write_script(const char *setup, const char *draw, const char *path_base, int width,
		      int height, struct bd_error *err)
{
	struct strbuf script = STRBUF_INIT, tmp = STRBUF_INIT;
	int rc = 0;
	if (!path_base || !*path_base || has_control_chars(path_base))
		return bd_fail(err, BD_EINVAL, "chart path '%s' is empty or contains control characters",
			       path_base ? path_base : "");
	if (width < 1 || height < 1 || width > PLOT_MAX_SIDE || height > PLOT_MAX_SIDE)
		return bd_fail(err, BD_EINVAL, "chart size %dx%d is out of range (1..%d pixels)", width,
			       height, PLOT_MAX_SIDE);
	if (!plot_available())
		return bd_fail(err, BD_ENOTFOUND, "%s", gnuplot_missing);
	temp_base(&tmp, path_base);
	sb_add(&script, "set encoding utf8\n");
	sb_add(&script, setup);
	sb_addf(&script, "set terminal pngcairo size %d,%d enhanced font 'sans,10'\nset output ", width,
		height);
	sb_add_output_path(&script, sb_str(&tmp), ".png");
	sb_addc(&script, '\n');
	sb_add(&script, draw);
	sb_addf(&script, "unset output\nset terminal svg size %d,%d enhanced font 'sans,10'\n"
			 "set output ", width, height);
	sb_add_output_path(&script, sb_str(&tmp), ".svg");
	sb_addc(&script, '\n');
	sb_add(&script, draw);
	sb_add(&script, "unset output\n");
	rc = plot_run_checked(&script, path_base, sb_str(&tmp), err);
	sb_free(&script);
	sb_free(&tmp);
	return rc;
}
