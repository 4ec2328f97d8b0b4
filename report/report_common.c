/* report/report_common.c: opening the database, selecting runs, loading sample series. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

int report_open(const char *db_path, const char *run_selector, struct db **db, int64_t *run_id)
{
	struct bd_error err;
	if (db_open(db_path, 0, db, &err) ||
	    (run_selector && db_run_resolve(*db, run_selector, run_id, &err))) {
		bd_error_print(REPORT_PROG, &err);
		return err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	return -1;
}

int report_format_arg(const char *format)
{
	int fmt = format_parse(format);
	if (fmt < 0) {
		struct strbuf valid = STRBUF_INIT;
		for (int i = 0; i < FORMAT_COUNT; i++)
			sb_addf(&valid, "%s%s", i ? ", " : "", format_names[i]);
		fprintf(stderr, "%s: unknown format '%s' (valid: %s)\n", REPORT_PROG, format,
			sb_str(&valid));
		sb_free(&valid);
	}
	return fmt;
}

int case_series_load(struct db *db, const struct case_row *c, struct case_series *s,
		     struct bd_error *err)
{
	struct sample *samples = NULL;
	size_t n = 0;
	memset(s, 0, sizeof(*s));
	int rc = db_samples_get(db, c->id, &samples, &n, err);
	if (rc)
		return rc;
	size_t iters = c->iters > 0 ? (size_t)c->iters : 0;
	for (int p = 0; p < DB_PHASES; p++)
		s->ns[p] = calloc(iters ? iters : 1, sizeof(double));
	s->total = calloc(iters ? iters : 1, sizeof(double));
	unsigned *have = calloc(iters ? iters : 1, sizeof(unsigned));
	if (!s->total || !have || !s->ns[0] || !s->ns[1] || !s->ns[2]) {
		free(samples);
		free(have);
		case_series_free(s);
		return bd_fail(err, BD_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		int64_t it = samples[i].iter - c->warmup;
		int p = samples[i].phase;
		if (it < 0 || (size_t)it >= iters || s->n[p] >= iters)
			continue;
		s->ns[p][s->n[p]++] = (double)samples[i].ns;
		s->total[it] += (double)samples[i].ns;
		have[it] |= 1u << p;
		s->phases |= 1u << p;
	}
	for (size_t it = 0; it < iters; it++)
		if (have[it] == s->phases && s->phases)
			s->total[s->ntotal++] = s->total[it];
	free(have);
	free(samples);
	return 0;
}

void case_series_free(struct case_series *s)
{
	for (int p = 0; p < DB_PHASES; p++)
		free(s->ns[p]);
	free(s->total);
	memset(s, 0, sizeof(*s));
}

void json_field(const char *json, const char *key, char *out, size_t n)
{
	char pat[128];
	out[0] = '\0';
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = json ? strstr(json, pat) : NULL;
	if (!p)
		return;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p == '"') {
		p++;
		size_t len = strcspn(p, "\"");
		snprintf(out, n, "%.*s", (int)len, p);
	} else {
		size_t len = strcspn(p, ",}");
		snprintf(out, n, "%.*s", (int)len, p);
	}
}
