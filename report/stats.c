/* report/stats.c: mean, standard deviation, median, extremes. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double median_inplace(double *x, size_t n)
{
	if (n == 0)
		return 0;
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

void summarize(const double *x, size_t n, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	s->n = n;
	s->min = s->max = x[0];
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < s->min)
			s->min = x[i];
		if (x[i] > s->max)
			s->max = x[i];
	}
	s->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	s->cv = s->mean != 0 ? s->std / s->mean : 0;
	double *copy = malloc(n * sizeof(*copy));
	if (copy) {
		memcpy(copy, x, n * sizeof(*copy));
		s->median = median_inplace(copy, n);
		free(copy);
	}
}
