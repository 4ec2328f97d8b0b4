/* runner/progress.c: sweep progress lines with elapsed time and an ETA. */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

/* Redraw the terminal line at most this often. */
#define REDRAW_NS 100000000LL

static void fmt_duration(char *out, size_t n, int64_t ns)
{
	int64_t s = ns / 1000000000LL;
	if (s >= 3600)
		snprintf(out, n, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
			 (long long)(s % 60));
	else
		snprintf(out, n, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
}

/* Remaining time: elapsed / cases done (fractional) x cases left; "?" before any progress. */
static void eta(const struct progress *pg, double done, int64_t now, char *out, size_t n)
{
	if (done <= 0) {
		snprintf(out, n, "?");
		return;
	}
	double per_case = (double)(now - pg->start_ns) / done;
	fmt_duration(out, n, (int64_t)(per_case * ((double)pg->ncases - done)));
}

void progress_init(struct progress *pg, size_t ncases)
{
	pg->tty = isatty(STDERR_FILENO);
	pg->ncases = ncases;
	pg->index = 0;
	pg->name = "";
	pg->start_ns = pg->last_draw_ns = now_ns();
}

static void draw(struct progress *pg, double fraction)
{
	char el[32], left[32];
	pg->last_draw_ns = now_ns();
	fmt_duration(el, sizeof(el), pg->last_draw_ns - pg->start_ns);
	eta(pg, (double)pg->index + fraction, pg->last_draw_ns, left, sizeof(left));
	fprintf(stderr, "\r\033[K[%zu/%zu] %s  %3.0f%%  elapsed %s  eta %s", pg->index + 1, pg->ncases,
		pg->name, 100.0 * fraction, el, left);
	fflush(stderr);
}

void progress_case_start(struct progress *pg, size_t index, const char *name)
{
	pg->index = index;
	pg->name = name;
	if (pg->tty)
		draw(pg, 0);
}

void progress_iteration(void *ctx, int64_t iter, int64_t total)
{
	struct progress *pg = ctx;
	if (pg->tty && now_ns() - pg->last_draw_ns > REDRAW_NS)
		draw(pg, (double)iter / (double)total);
}

void progress_case_end(struct progress *pg, const struct case_result *res)
{
	if (pg->tty) {
		draw(pg, 1.0);
		return;
	}
	char el[32], left[32];
	int64_t now = now_ns();
	fmt_duration(el, sizeof(el), now - pg->start_ns);
	eta(pg, (double)pg->index + 1, now, left, sizeof(left));
	fprintf(stderr, "[%zu/%zu] %s: %s%s%s (%.2f s; elapsed %s, eta %s)\n", pg->index + 1,
		pg->ncases, pg->name, case_status_name(res->status), res->reason[0] ? ": " : "",
		res->reason, (double)res->elapsed_ns / 1e9, el, left);
}

void progress_finish(struct progress *pg)
{
	if (pg->tty)
		fprintf(stderr, "\r\033[K");
}
