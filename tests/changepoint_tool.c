/* tests/changepoint_tool.c: the change-point detector of `report changes` on histories read from
 * stdin, for the comparison with the reference implementations (tests/changepoint/reference.py)
 * and the figures in docs/performance.md.
 *
 *   changepoint_tool [--alpha P] [--permutations R] [--min-segment M] [--min-change PCT]
 *                    [--run-noise PCT] [--form 0|1|2] < histories
 *
 * Each input line is one history: run medians (times, > 0), oldest first, separated by spaces or
 * commas. --form: 0 both (the default), 1 the search over kappa only (as
 * Otava), 2 Y to the segment's end only (as MongoDB's implementation), to explain differences. Each output line is that history's change points: the 0-based index of the first run of
 * each new segment, space-separated (an empty line: none). A malformed line is an error (exit 2)
 * that names the line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "xalloc.h"

static int parse_double(const char *text, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(text, &end);
	return errno || end == text || *end;
}

int main(int argc, char **argv)
{
	struct cp_options o = CP_OPTIONS_DEFAULT;
	double run_noise = 0;
	for (int i = 1; i < argc; i++) {
		double v;
		if (i + 1 >= argc || parse_double(argv[i + 1], &v)) {
			fprintf(stderr, "changepoint_tool: %s needs a number\n", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--alpha"))
			o.alpha = v;
		else if (!strcmp(argv[i], "--permutations"))
			o.permutations = (unsigned)v;
		else if (!strcmp(argv[i], "--min-segment"))
			o.min_segment = (size_t)v;
		else if (!strcmp(argv[i], "--min-change"))
			o.min_change = v / 100;
		else if (!strcmp(argv[i], "--form"))
			o.form = (enum cp_form)v;
		else if (!strcmp(argv[i], "--run-noise"))
			run_noise = v / 100;
		else {
			fprintf(stderr, "changepoint_tool: unknown option %s\n", argv[i]);
			return 2;
		}
		i++;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	double *y = NULL;
	size_t ycap = 0;
	while (getline(&line, &cap, stdin) > 0) {
		lineno++;
		size_t n = 0;
		for (char *tok = strtok(line, " ,\t\r\n"); tok; tok = strtok(NULL, " ,\t\r\n")) {
			double v;
			if (parse_double(tok, &v) || !(v > 0)) {
				fprintf(stderr, "changepoint_tool: line %zu: '%s' is not a time > 0\n", lineno,
					tok);
				return 2;
			}
			if (n == ycap)
				y = xrealloc(y, (ycap = ycap ? 2 * ycap : 64) * sizeof(*y));
			y[n++] = log(v);
		}
		struct cp_series s = {.y = y, .n = n, .run_noise = run_noise};
		struct cp_result r;
		if (changepoints_find(&s, &o, &r)) {
			fprintf(stderr, "changepoint_tool: line %zu: bad options or values\n", lineno);
			return 2;
		}
		for (size_t i = 0; i < r.n; i++)
			printf(i ? " %zu" : "%zu", r.points[i].index);
		printf("\n");
		cp_result_free(&r);
	}
	free(line);
	free(y);
	return 0;
}
