/* report/chart_history.c: history charts that people read (history.h chart_history_write). One
 * panel per series: each run's median with its 95% interval as points on a line, oldest run
 * left; behind them, per segment between change points, the segment's mean with the band where
 * its runs should fall (mean x exp(+-2 run-to-run sd)); each change point a dashed vertical line
 * labelled with its change; the x axis labelled with run ids and dates; the y axis scaled to the
 * data, not from zero, so that a 5% step shows. Several series: small multiples, one panel each,
 * in a grid (at most HISTORY_PANELS_MAX). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "plot.h"
#include "strbuf.h"

#define NS_PER_MS 1e6
#define BAND_SDS 2.0              /* the band: segment mean x exp(+-2 sd): ~95% of its runs */
#define TICS_ONE 8                /* x labels on a chart of one series, at most (11 characters each) */
#define TICS_PANEL 4              /* ... on a panel of small multiples */
#define PANEL_WIDTH 420
#define PANEL_HEIGHT 250
#define PANEL_COLUMNS 3
#define WIDE_RANGE 10.0           /* medians spanning more than this: log y */

static const char *const colour_line = "#1f4e9c", *const colour_band = "#9ecae1",
			 *const colour_slower = "#c0392b", *const colour_faster = "#1e8449",
			 *const colour_contended = "#b9770e";

static const char *change_colour(enum history_verdict v)
{
	return v == HISTORY_SLOWER ? colour_slower : v == HISTORY_FASTER ? colour_faster
									  : colour_contended;
}

/* Datablocks of series k: $pK (x median lo hi, ms) and $bK_S per segment S (x lo hi mean). */
static void add_data(struct strbuf *sb, const struct history_series *s, size_t k)
{
	sb_addf(sb, "$p%zu << EOD\n", k);
	for (size_t i = 0; i < s->n; i++)
		sb_addf(sb, "%zu %.10g %.10g %.10g\n", i + 1, s->points[i].median / NS_PER_MS,
			s->points[i].lo / NS_PER_MS, s->points[i].hi / NS_PER_MS);
	sb_add(sb, "EOD\n");
	double sd = s->cp.noise;
	for (size_t seg = 0; seg <= s->cp.n; seg++) {
		size_t a = seg ? s->cp.points[seg - 1].index : 0,
		       b = seg < s->cp.n ? s->cp.points[seg].index : s->n;
		if (b <= a)
			continue;
		double mean = history_segment_mean(s, a, b);
		sb_addf(sb, "$b%zu_%zu << EOD\n", k, seg);
		/* the band spans its runs: from half a run before the first to half after the last */
		for (int end = 0; end < 2; end++)
			sb_addf(sb, "%.3f %.10g %.10g %.10g\n", end ? (double)b + 0.5 : (double)a + 0.5,
				exp(mean - BAND_SDS * sd) / NS_PER_MS, exp(mean + BAND_SDS * sd) / NS_PER_MS,
				exp(mean) / NS_PER_MS);
		sb_add(sb, "EOD\n");
	}
}

/* "not ok in run 12: oom" or "missing from run 12 (interrupted)": why the newest run of s, one
 * its case was ok before, has no point (history.h broken_run). */
static void history_broken_text(const struct history_series *s, char *out, size_t n)
{
	if (s->broken_row)
		snprintf(out, n, "not ok in run %lld: %s", (long long)s->broken_run->id,
			 status_name(s->broken_row->status));
	else
		snprintf(out, n, "missing from run %lld (%s)", (long long)s->broken_run->id,
			 s->broken_run->status ? s->broken_run->status : "of unknown status");
}

/* The settings and plot command of one panel (series k). */
static void add_panel(struct strbuf *sb, const struct history_series *s, size_t k, int small,
		      const char *title)
{
	sb_add(sb, "unset arrow\nunset label\nset title ");
	plot_add_str(sb, title);
	sb_add(sb, " noenhanced\n");
	sb_addf(sb, "set xrange [0.5:%zu.5]\n", s->n);
	/* log y where the medians span more than 10x (a run on a busy machine would flatten the
	 * others to a line) */
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < s->n; i++) {
		lo = fmin(lo, s->points[i].median);
		hi = fmax(hi, s->points[i].median);
	}
	sb_add(sb, hi > WIDE_RANGE * lo ? "set logscale y\n" : "unset logscale y\n");
	/* run ids (and, on a chart of one series, dates below them) under evenly spread runs, the
	 * newest always among them; the day, or month-day and time where two tics share a day */
	size_t most = small ? TICS_PANEL : TICS_ONE, step = (s->n + most - 1) / most;
	step = step ? step : 1;
	int same_day = 0;
	for (size_t i = (s->n - 1) % step; i + step < s->n; i += step) {
		const char *a = s->points[i].run->started_at, *b = s->points[i + step].run->started_at;
		same_day |= a && b && !strncmp(a, b, 10);
	}
	sb_add(sb, "set xtics (");
	for (size_t i = (s->n - 1) % step, first = 1; i < s->n; i += step, first = 0) {
		char id[32], date[32];
		snprintf(id, sizeof(id), "%lld", (long long)s->points[i].run->id);
		history_date(s->points[i].run->started_at, date, sizeof(date));
		sb_add(sb, first ? "" : ", ");
		plot_add_str(sb, id);
		if (!small) {   /* gnuplot's string concatenation: a newline inside a tic label */
			sb_add(sb, " . \"\\n\" . ");
			char shown[32];   /* "2026-02-01", or "02-01 13:45" */
			if (same_day && strlen(date) > 5)
				snprintf(shown, sizeof(shown), "%s", date + 5);
			else
				snprintf(shown, sizeof(shown), "%.10s", date);
			plot_add_str(sb, shown);
		}
		sb_addf(sb, " %zu", i + 1);
	}
	sb_add(sb, ") noenhanced\n");
	for (size_t c = 0; c < s->cp.n; c++) {
		const struct history_change *ch = &s->changes[c];
		double x = (double)ch->cp.index + 0.5;
		sb_addf(sb, "set arrow from %.3f, graph 0 to %.3f, graph 1 nohead dt 2 lw 2 lc rgb '%s' "
			    "front\n",
			x, x, change_colour(ch->verdict));
		char text[64];
		snprintf(text, sizeof(text), " %+.1f%%%s", 100 * ch->cp.change,
			 ch->verdict == HISTORY_CONTENDED ? " contended" : "");
		sb_addf(sb, "set label %zu ", c + 1);
		plot_add_str(sb, text);
		sb_addf(sb, " at %.3f, graph %.2f left tc rgb '%s' front noenhanced\n", x,
			c % 2 ? 0.88 : 0.95, change_colour(ch->verdict));
	}
	if (s->broken_run) {   /* the newest run has no point: say why where the point would be */
		char text[160];
		history_broken_text(s, text, sizeof(text));
		sb_addf(sb, "set label %zu ", s->cp.n + 1);
		plot_add_str(sb, text);
		sb_addf(sb, " at graph 0.98, graph 0.05 right tc rgb '%s' front noenhanced\n",
			colour_slower);
	}
	const char *sep = "plot ";
	for (size_t seg = 0; seg <= s->cp.n; seg++) {
		size_t a = seg ? s->cp.points[seg - 1].index : 0,
		       b = seg < s->cp.n ? s->cp.points[seg].index : s->n;
		if (b <= a)
			continue;
		sb_addf(sb, "%s$b%zu_%zu using 1:2:3 with filledcurves fc rgb '%s' fs transparent solid "
			    "0.45 noborder %s, \\\n     $b%zu_%zu using 1:4 with lines lw 1 dt 3 lc rgb '%s' "
			    "notitle",
			sep, k, seg, colour_band,
			seg == 0 && !small ? "title 'segment mean +-2 run-to-run sd'" : "notitle", k, seg,
			colour_line);
		sep = ", \\\n     ";
	}
	sb_addf(sb, "%s$p%zu using 1:2:3:4 with yerrorbars pt 7 ps %s lw 1 lc rgb '%s' %s, \\\n"
		    "     $p%zu using 1:2 with lines lw 1.5 lc rgb '%s' notitle\n",
		sep, k, small ? "0.5" : "0.8", colour_line,
		small ? "notitle" : "title 'run median (95% interval)'", k, colour_line);
}

int chart_history_write(const struct history_series *const *series, size_t n, const char *title,
			const char *path_base, enum series_pick pick, struct strbuf *notes,
			struct bd_error *err)
{
	struct strbuf setup = STRBUF_INIT, draw = STRBUF_INIT;
	size_t shown = 0;
	for (size_t k = 0; k < n; k++)
		shown += series[k]->n > 0;
	if (shown == 0)
		return bd_fail(err, BD_EINVAL, "no run of the history has an ok case to draw");
	if (shown > HISTORY_PANELS_MAX) {
		sb_addf(notes, "%zu of the %zu series drawn (at most %d panels): narrow with --where or "
			       "--case\n", (size_t)HISTORY_PANELS_MAX, shown, HISTORY_PANELS_MAX);
		shown = HISTORY_PANELS_MAX;
	}
	int small = shown > 1;
	size_t cols = shown < PANEL_COLUMNS ? shown : PANEL_COLUMNS, rows = (shown + cols - 1) / cols;
	int width = small ? (int)cols * PANEL_WIDTH : 900, height = small ? (int)rows * PANEL_HEIGHT + 40 : 540;
	sb_add(&setup, "set grid lt 1 lc rgb '#e0e0e0' lw 1\nset border lw 1\n"
		       "set offsets 0, 0, graph 0.08, graph 0.12\n");
	/* a case's name says its pass ("fwd+bwd"): a --phase picks part of it, which the axis says */
	if (pick == PICK_TOTAL)
		sb_add(&setup, "set ylabel 'ms'\n");
	else
		sb_addf(&setup, "set ylabel 'median %s time (ms)'\n", series_pick_names[pick]);
	if (small)
		sb_add(&setup, "unset key\nset tics font 'sans,8'\nset title font 'sans,9'\n");
	else
		sb_add(&setup, "set key outside bottom center horizontal noenhanced\n"
			       "set xlabel 'run (oldest left), started' offset 0,-0.8\nset bmargin 7\n");
	for (size_t k = 0, drawn = 0; k < n && drawn < shown; k++)
		if (series[k]->n)
			add_data(&setup, series[k], drawn++);
	if (small) {
		sb_addf(&draw, "set multiplot layout %zu, %zu title ", rows, cols);
		plot_add_str(&draw, title);
		sb_add(&draw, " noenhanced\n");
	}
	int in_sessions = 0;   /* a drawn series has runs of one session, counted once */
	for (size_t k = 0, drawn = 0; k < n && drawn < shown; k++) {
		const struct history_series *s = series[k];
		if (!s->n)
			continue;
		in_sessions |= s->nsessions < s->n;
		char panel_title[512];
		if (small)
			snprintf(panel_title, sizeof(panel_title), "%s (%s)%s", s->name, s->host,
				 s->cp.n ? "" : ", no change");
		else
			snprintf(panel_title, sizeof(panel_title), "%s", title);
		add_panel(&draw, s, drawn++, small, panel_title);
	}
	if (small)
		sb_add(&draw, "unset multiplot\n");
	sb_addf(notes, "band: each segment's mean (dotted) x exp(+-%.0f x the run-to-run sd of the "
		       "series); dashed lines: change points (red slower, green faster, amber contended)\n",
		BAND_SDS);
	if (in_sessions)
		sb_add(notes, "runs of one session (one runner run --repeat) count once: a segment's "
			      "mean is its sessions' mean, the band's sd that of a session's mean (one "
			      "session's runs spread about it)\n");
	/* what the points do not show: a newest run where the case is no longer ok (as `report
	 * changes` fails it), and the runs left out of a series */
	size_t not_ok = 0;
	for (size_t k = 0, drawn = 0; k < n && drawn < shown; k++) {
		const struct history_series *s = series[k];
		if (!s->n)
			continue;
		drawn++;
		not_ok += s->not_ok;
		if (s->broken_run) {
			char text[160];
			history_broken_text(s, text, sizeof(text));
			sb_addf(notes, "%s on %s: %s%s%s (ok in run %lld, its last point)\n", s->name,
				s->host, text, s->broken_row && s->broken_row->reason ? " — " : "",
				s->broken_row && s->broken_row->reason ? s->broken_row->reason : "",
				(long long)s->points[s->n - 1].run->id);
		}
	}
	if (not_ok)
		sb_addf(notes, "not drawn: %zu case%s of these series' runs that %s not ok or had no "
			       "samples\n", not_ok, not_ok == 1 ? "" : "s", not_ok == 1 ? "was" : "were");
	int rc = plot_write_script(sb_str(&setup), sb_str(&draw), path_base, width, height, err);
	sb_free(&setup);
	sb_free(&draw);
	return rc;
}
