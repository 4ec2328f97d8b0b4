/* report/plot.h: charts through a pipe to gnuplot (PNG via pngcairo, and SVG).
 *
 * A command fills a struct plot with series of numbers; plot_write() sends gnuplot a script with
 * the data inline and checks that both files were written. A missing gnuplot, or an error gnuplot
 * reports, comes back as a status with gnuplot's own message — never a crash. */
#ifndef BENCHDB_PLOT_H
#define BENCHDB_PLOT_H

#include <stddef.h>

#include "error.h"

enum plot_kind {
	PLOT_LINES,   /* x-y lines with points, one line per series */
	PLOT_BARS,    /* clustered bars: category i at x = i, one bar per series */
};

struct plot_series {
	const char *title;          /* legend entry */
	const double *x, *y;        /* n points; x ignored for PLOT_BARS */
	size_t n;
	const double *ylo, *yhi;    /* optional error bars (both or neither) */
	const unsigned char *marked;/* optional, n flags: points drawn ringed (plot.mark_title) */
};

struct plot {
	enum plot_kind kind;
	const char *title, *xlabel, *ylabel;
	int logx, logy;
	const struct plot_series *series;
	size_t nseries;
	const char *const *categories; /* PLOT_BARS: label of category i (n of the first series) */
	int has_hline;                 /* draw a horizontal reference line at y = hline */
	double hline;
	int width, height;             /* pixels; 0 = 900 x 540 */
	const char *mark_title;        /* legend of the ringed (marked) points; NULL: "marked" */
};

/* 1 when a gnuplot executable is on PATH (or $GNUPLOT names one). */
int plot_available(void);
/* Write path_base.png and path_base.svg. BD_ENOTFOUND without gnuplot ("gnuplot is not
 * installed: install gnuplot-nox (Debian/Ubuntu) to get charts"), BD_EIO with gnuplot's stderr
 * when it fails or a file is missing/empty/cut short afterwards, BD_EINVAL for an empty plot.
 * gnuplot writes both into temporary files beside them, renamed over the old chart only once
 * both are whole: on failure the old chart is kept and no partial file is left. */
int plot_write(const struct plot *p, const char *path_base, struct bd_error *err);

/* A chart whose gnuplot script the caller writes (report/chart_history.c: bands, markers, text
 * tics, small multiples): setup (datablocks and settings) once, then draw (plot or multiplot
 * commands) once for pngcairo and once for svg, with the checks of plot_write. */
int plot_write_script(const char *setup, const char *draw, const char *path_base, int width,
		      int height, struct bd_error *err);
/* Append s as a single-quoted gnuplot string ('' for a quote, control characters as spaces,
 * bytes that are not well-formed UTF-8 as '?'):
 * the only way user text may enter such a script, and then drawn noenhanced. */
struct strbuf;
void plot_add_str(struct strbuf *sb, const char *s);

#endif
