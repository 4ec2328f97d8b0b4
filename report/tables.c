/* report/tables.c: the tables of a run's cases — `report table`'s table per suite and its pivot —
 * shared by `report table` and `report writeup`: parameters (and the model's parameter count),
 * then mean and std of each timed phase and of fwd+bwd, status, memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "report.h"
#include "xalloc.h"

/* The parameters shown for a suite, in column order (keys of the canonical params JSON; the
 * table's column_rank, common/params.c), NULL-terminated in params[9]. */
static const char *const *params_of(const char *suite, const char *params[9])
{
	param_columns(suite, params, 9);   /* at most 8 columns */
	return params;
}

#define NS_PER_MS 1e6
#define BYTES_PER_MIB 1048576.0

int case_compiled(const struct case_row *c)
{
	char v[16];
	/* what the peer says ran (its info's top-level `compile`, as the kit records it): a peer
	 * started with --compile, whatever its name and parameters, or asked and not compiled */
	json_field(c->impl_info, "compile", v, sizeof(v));
	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return v[0] == 't';
	json_field(c->params_json, "compile", v, sizeof(v));
	if (v[0])   /* a peer's `compile` parameter (schemas/peer-protocol.md) says */
		return !strcmp(v, "true");
	/* else the impl's name: a word "compile" in it (pytorch_compile) */
	for (const char *p = c->impl; p && (p = strstr(p, "compile")); p += 7)
		if ((p == c->impl || strchr("_-.", p[-1])) && strchr("_-.", p[7]))
			return 1;
	return 0;
}

/* The keys of a flat JSON object (our canonical params JSON) in order, each once, appended to
 * keys (*n of them, at most max) when not there yet; pointers are malloc'd. */
static void json_keys(const char *json, char **keys, size_t *n, size_t max)
{
	const char *p = json ? strchr(json, '{') : NULL;
	while (p && *p && *n < max) {
		p = strchr(p, '"');
		if (!p)
			return;
		const char *end = strchr(p + 1, '"');
		if (!end || end[1] != ':')
			return;
		size_t k = 0;
		while (k < *n && (strlen(keys[k]) != (size_t)(end - p - 1) ||
				  strncmp(keys[k], p + 1, (size_t)(end - p - 1))))
			k++;
		if (k == *n)
			keys[(*n)++] = xstrndup(p + 1, (size_t)(end - p - 1));
		p = end + 2;
		if (*p == '"') {   /* a string value: to its closing quote */
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			p += *p == '"';
		}
		p += strcspn(p, ",}");
		if (*p != ',')
			return;
	}
}

/* Which timed series a column group shows: a phase, or a per-iteration sum of phases. */
enum { SUM_TOTAL = PHASE_COUNT, SUM_FWD_BWD, SUM_FWD_BWD_OPT, SERIES_KINDS };

/* The per-iteration sum of phases 0..last (fwd+bwd: 1, fwd+bwd+opt: 2) of s, into x (malloc'd):
 * of the iterations that have each of them, each phase's time of that same iteration. */
static size_t phase_sum(const struct case_series *s, int last, double **x)
{
	size_t window = 0;
	for (int p = 0; p <= last; p++)
		for (size_t k = 0; k < s->n[p]; k++)
			window = s->at[p][k] + 1 > window ? s->at[p][k] + 1 : window;
	double *sum = xcalloc(window ? window : 1, sizeof(*sum));
	unsigned *have = xcalloc(window ? window : 1, sizeof(*have));
	for (int p = 0; p <= last; p++)
		for (size_t k = 0; k < s->n[p]; k++) {
			sum[s->at[p][k]] += s->ns[p][k];
			have[s->at[p][k]] |= 1u << p;
		}
	size_t n = 0;
	for (size_t i = 0; i < window; i++)
		if (have[i] == (2u << last) - 1)
			sum[n++] = sum[i];
	free(have);
	*x = sum;
	return n;
}

int table_of_cases(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		   unsigned flags, struct table *t, struct bd_error *err)
{
	const struct table_options opt = {.flags = flags, .warmup = TABLE_OWN_WARMUP};
	return table_of_cases_opts(db, suite, cases, n, &opt, t, err);
}

int table_of_cases_opts(struct db *db, const char *suite, const struct case_row *cases, size_t n,
			const struct table_options *opt, struct table *t, struct bd_error *err)
{
	const char *columns[9];
	const char *const *params = params_of(suite, columns);
	struct case_series *series = xcalloc(n, sizeof(*series));
	char *extra[PARAM_MAX + 32];   /* every: the params JSON's other keys (peers' too) */
	size_t nextra = 0;
	unsigned phases = 0, flags = opt->flags;
	int rc = 0, causal_col = suite_is(suite, SUITE_ATTENTION), every = flags & TABLE_EVERY_COLUMN;
	table_init(t, suite);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = case_series_load_from(db, &cases[i], opt->warmup, &series[i], err);
		phases |= series[i].phases;
	}
	if (rc)
		goto done;

	size_t col_param[8], ncol_param = 0, col_causal = 0, col_count = 0, col_compile = 0;
	size_t col_peer = 0;
	size_t col_extra[sizeof(extra) / sizeof(extra[0])];
	for (; ncol_param < 8 && params[ncol_param]; ncol_param++)
		col_param[ncol_param] = table_column(t, params[ncol_param], "", 0);
	if (every) {
		char *keys[sizeof(extra) / sizeof(extra[0])];
		size_t nkeys = 0;
		for (size_t i = 0; i < n; i++)
			json_keys(cases[i].params_json, keys, &nkeys, sizeof(keys) / sizeof(keys[0]));
		for (size_t k = 0; k < nkeys; k++) {
			/* iters and compile have columns of their own: what was measured, and the
			 * parameter or the impl's name */
			int shown = !strcmp(keys[k], "iters") || !strcmp(keys[k], "compile");
			for (size_t j = 0; j < ncol_param && !shown; j++)
				shown = !strcmp(keys[k], params[j]);
			if (shown) {
				free(keys[k]);
				continue;
			}
			col_extra[nextra] = table_column(t, keys[k], "", 0);
			extra[nextra++] = keys[k];
		}
	}
	/* a peer's own parameters (schemas/peer-protocol.md), where some case has them */
	int peer_params = 0;
	for (size_t i = 0; i < n && !peer_params; i++) {
		char v[256];
		case_key_peer_params(cases[i].case_key, v, sizeof(v));
		peer_params = v[0] != '\0';
	}
	if (peer_params)
		col_peer = table_column(t, "peer params", "", 0);
	/* The model's parameter count, as the runner stored it (schema 4; e2e) */
	int counted = 0, compiled = 0;
	for (size_t i = 0; i < n; i++) {
		counted |= cases[i].param_count > 0;
		compiled |= case_compiled(&cases[i]);
	}
	if (counted)
		col_count = table_column(t, "param count", "M", 1);
	if (causal_col)
		col_causal = table_column(t, "causal", "", 0);
	if (compiled || every)
		col_compile = table_column(t, "compile", "", 0);
	size_t col_status = table_column(t, "status", "", 0);
	/* contention and instability: a column only where some case has a mark */
	struct case_mark *marks = xcalloc(n ? n : 1, sizeof(*marks));
	unsigned marked = 0;
	for (size_t i = 0; i < n; i++) {
		case_mark_of(&cases[i], series[i].total, series[i].ntotal, &marks[i]);
		marked |= marks[i].bits;
	}
	size_t col_mark = marked ? table_column(t, "mark", "", 0) : 0;
	/* measured iterations of the case ("iters", not "n": matmul has a parameter n) */
	size_t col_n = table_column(t, "iters", "", 0);
	/* Mean, median and std of each phase and of the per-iteration total; every: all phases,
	 * and fwd+bwd and fwd+bwd+opt beside each other. */
	unsigned shown_series = 0;
	for (int p = 0; p < PHASE_COUNT; p++)
		if ((phases & (1u << p)) || every)
			shown_series |= 1u << p;
	if (every)
		shown_series |= (1u << SUM_FWD_BWD) | (1u << SUM_FWD_BWD_OPT);
	else if (__builtin_popcount(phases) > 1)
		shown_series |= 1u << SUM_TOTAL;
	size_t col_mean[SERIES_KINDS], col_median[SERIES_KINDS], col_std[SERIES_KINDS];
	for (int k = 0; k < SERIES_KINDS; k++) {
		if (!(shown_series & (1u << k)))
			continue;
		const char *what = k < PHASE_COUNT	  ? phase_name(k)
				   : k == SUM_FWD_BWD	  ? "fwd+bwd"
				   : k == SUM_FWD_BWD_OPT ? "fwd+bwd+opt"
				   : phases & (1u << 2)	  ? "fwd+bwd+opt"
							  : "fwd+bwd";
		char name[48];
		snprintf(name, sizeof(name), "%s mean", what);
		col_mean[k] = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "%s median", what);
		col_median[k] = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "%s std", what);
		col_std[k] = table_column(t, name, "ms", 3);
	}
	/* Achieved rate per phase where the workload stated its FLOPs: flops / mean ns = GFLOP/s. */
	size_t col_rate[PHASE_COUNT];
	unsigned rated = 0;
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < PHASE_COUNT; p++)
			if (cases[i].flops[p] > 0 && (phases & (1u << p)))
				rated |= 1u << p;
	for (int p = 0; p < PHASE_COUNT; p++) {
		if (!(rated & (1u << p)))
			continue;
		char name[32];
		snprintf(name, sizeof(name), "%s GFLOP/s", phase_name(p));
		col_rate[p] = table_column(t, name, "", 1);
	}
	/* Derived rates. Tokens per iteration: batch_size x seq_len (attention: query positions; e2e:
	 * the context). Bytes: what the workload states it must move at least. */
	int derived = flags & TABLE_DERIVED;
	size_t col_tok = 0, col_smp = 0, col_cv = 0, col_gbs[PHASE_COUNT];
	unsigned moved = 0;
	if (derived) {
		col_tok = table_column(t, "tokens/s", "", 0);
		col_smp = table_column(t, "samples/s", "", 1);
		for (size_t i = 0; i < n; i++)
			for (int p = 0; p < PHASE_COUNT; p++)
				if (cases[i].bytes[p] > 0 && (phases & (1u << p)))
					moved |= 1u << p;
		for (int p = 0; p < PHASE_COUNT; p++) {
			if (!(moved & (1u << p)))
				continue;
			char name[32];
			snprintf(name, sizeof(name), "%s GB/s", phase_name(p));
			col_gbs[p] = table_column(t, name, "", 1);
		}
		col_cv = table_column(t, "CV", "%", 1);
	}
	size_t col_peak = table_column(t, "peak mem", "MiB", 1);
	/* What the memory holds, where the workload said (e2e): parameters, gradients, AdamW
	 * state, activations. */
	int breakdown = 0;
	for (size_t i = 0; i < n; i++)
		breakdown |= cases[i].activation_bytes > 0;
	size_t col_mem[4] = {0};
	if (breakdown) {
		col_mem[0] = table_column(t, "params", "MiB", 1);
		col_mem[1] = table_column(t, "grads", "MiB", 1);
		col_mem[2] = table_column(t, "optim", "MiB", 1);
		col_mem[3] = table_column(t, "activations", "MiB", 1);
	}

	size_t short_windows = 0;
	size_t nunvalidated = 0;
	for (size_t i = 0; i < n; i++) {
		const struct case_row *c = &cases[i];
		size_t r = table_row(t);
		char v[256];
		for (size_t k = 0; k < ncol_param; k++) {
			json_field(c->params_json, params[k], v, sizeof(v));
			table_text(t, r, col_param[k], v);
		}
		for (size_t k = 0; k < nextra; k++) {
			json_field(c->params_json, extra[k], v, sizeof(v));
			if (v[0])
				table_text(t, r, col_extra[k], v);
		}
		if (peer_params) {
			case_key_peer_params(c->case_key, v, sizeof(v));
			table_text(t, r, col_peer, v);
		}
		if (counted && c->param_count > 0)
			table_number(t, r, col_count, (double)c->param_count / 1e6);
		if (causal_col)
			table_text(t, r, col_causal, c->causal > 0 ? "yes" : "no");
		if (compiled || every)
			table_text(t, r, col_compile, case_compiled(c) ? "yes" : "no");
		/* an ok case not checked against a reference: a peer without `check` lines */
		int unvalidated = c->status == STATUS_OK && c->max_diff < 0;
		nunvalidated += unvalidated;
		table_text(t, r, col_status, unvalidated ? "ok, unvalidated" : status_name(c->status));
		if (marks[i].bits) {
			char text[96];
			case_mark_text(&marks[i], text, sizeof(text));
			table_text(t, r, col_mark, text);
		}
		size_t measured = series[i].ntotal;
		for (int p = 0; p < PHASE_COUNT; p++)
			measured = series[i].n[p] > measured ? series[i].n[p] : measured;
		if (measured)
			table_number(t, r, col_n, (double)measured);
		short_windows += c->status == STATUS_OK && c->iters > 0 && measured < (size_t)c->iters;
		if (c->status != STATUS_OK)
			table_note(t, "case %lld (%s): %s — %s", (long long)c->ord + 1, c->name, status_name(c->status),
				   c->reason ? c->reason : "no reason stored");
		for (int k = 0; k < SERIES_KINDS; k++) {
			if (!(shown_series & (1u << k)))
				continue;
			double *sum = NULL;
			size_t m = 0;
			const double *x = NULL;
			if (k < PHASE_COUNT && (series[i].phases & (1u << k)))
				x = case_series_pick(&series[i], (enum series_pick)k, &m);
			else if (k == SUM_TOTAL && series[i].phases == phases)
				/* the sum its heading names: a forward case's total is no fwd+bwd, nor is
				 * a forward_backward case's a fwd+bwd+opt */
				x = case_series_pick(&series[i], PICK_TOTAL, &m);
			else if (k > SUM_TOTAL) {
				int last = k == SUM_FWD_BWD ? 1 : 2;
				if ((series[i].phases & ((2u << last) - 1)) == (2u << last) - 1)
					m = phase_sum(&series[i], last, &sum);
				x = sum;
			}
			if (m == 0) {
				free(sum);
				continue;
			}
			struct summary s;
			summarize(x, m, &s);
			table_number(t, r, col_mean[k], s.mean / NS_PER_MS);
			table_number(t, r, col_median[k], s.median / NS_PER_MS);
			if (s.n > 1)   /* no spread from one sample */
				table_number(t, r, col_std[k], s.std / NS_PER_MS);
			free(sum);
			if (k >= PHASE_COUNT)
				continue;
			if ((rated & (1u << k)) && c->flops[k] > 0 && s.mean > 0)
				table_number(t, r, col_rate[k], c->flops[k] / s.mean);
			if (derived && (moved & (1u << k)) && c->bytes[k] > 0 && s.mean > 0)
				table_number(t, r, col_gbs[k], c->bytes[k] / s.mean);
		}
		if (derived) {
			size_t nt;
			const double *tot = case_series_pick(&series[i], PICK_TOTAL, &nt);
			struct summary s;
			summarize(tot, nt, &s);
			if (nt && s.mean > 0) {
				double per_s = 1e9 / s.mean;
				/* none where the suite has no batch or sequence (matmul): not 0 per second */
				if (c->batch_size > 0 && c->seq_len > 0)
					table_number(t, r, col_tok,
						     per_s * (double)c->batch_size * (double)c->seq_len);
				if (c->batch_size > 0)
					table_number(t, r, col_smp, per_s * (double)c->batch_size);
				if (nt > 1)   /* no spread from one sample */
					table_number(t, r, col_cv, 100 * s.cv);
			}
		}
		if (c->peak_bytes >= 0)
			table_number(t, r, col_peak, (double)c->peak_bytes / BYTES_PER_MIB);
		const int64_t held[4] = {c->param_bytes, c->grad_bytes, c->optim_bytes,
					 c->activation_bytes};
		for (int k = 0; breakdown && c->activation_bytes > 0 && k < 4; k++)
			table_number(t, r, col_mem[k], held[k] > 0 ? (double)held[k] / BYTES_PER_MIB : 0);
	}
	if (opt->warmup != TABLE_OWN_WARMUP)
		table_note(t, "times as if %lld warm-up iteration%s had been run: the stored iterations "
			      "after the first %lld, as many as each case measured (the run's warm-up ones "
			      "included; nothing was re-run)%s", (long long)opt->warmup,
			   opt->warmup == 1 ? "" : "s", (long long)opt->warmup,
			   short_windows ? "; iters: fewer where the run did not store that many" : "");
	if (nunvalidated)
		table_note(t, "ok, unvalidated: %zu case%s not checked against a reference (a peer without "
			   "check lines: schemas/peer-protocol.md, \"Validation\")", nunvalidated,
			   nunvalidated == 1 ? "" : "s");
	case_mark_note(t, marked);
	free(marks);
done:
	for (size_t k = 0; k < nextra; k++)
		free(extra[k]);
	for (size_t i = 0; i < n; i++)
		case_series_free(&series[i]);
	free(series);
	return rc;
}

int pivot_table(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		const char *key, enum series_pick pick, int64_t warmup, struct table *t,
		struct bd_error *err)
{
	const char *columns[9];
	const char *const *params = params_of(suite, columns);
	char **row_key = xcalloc(n, sizeof(*row_key));
	char (*value)[128] = xcalloc(n, sizeof(*value));
	size_t *row_of = xcalloc(n, sizeof(*row_of)), *col_of = xcalloc(n, sizeof(*col_of));
	size_t col_param[8], ncol_param = 0;
	unsigned marked = 0;
	int rc = 0;
	char title[128];
	snprintf(title, sizeof(title), "%s: mean %s time by %s", suite, series_pick_names[pick], key);
	table_init(t, title);
	for (; ncol_param < 8 && params[ncol_param]; ncol_param++)
		if (strcmp(params[ncol_param], key))
			col_param[ncol_param] = table_column(t, params[ncol_param], "", 0);
		else
			col_param[ncol_param] = (size_t)-1;
	/* What else tells the rows apart, as the run's table shows it: causal (attention) and a
	 * peer's own parameters (other than KEY), so that two rows never read the same */
	int causal_col = suite_is(suite, SUITE_ATTENTION) && strcmp(key, "causal"), peer_params = 0;
	for (size_t i = 0; i < n; i++) {
		row_key[i] = case_key_without(cases[i].case_key, key);
		char v[256];
		case_key_peer_params(row_key[i], v, sizeof(v));
		peer_params |= v[0] != '\0';
	}
	size_t col_causal = causal_col ? table_column(t, "causal", "", 0) : 0;
	size_t col_peer = peer_params ? table_column(t, "peer params", "", 0) : 0;
	/* Columns: the values of KEY in order of first appearance. */
	for (size_t i = 0; i < n; i++) {
		json_field(cases[i].params_json, key, value[i], sizeof(value[i]));
		size_t j = 0;
		while (j < i && strcmp(value[j], value[i]))
			j++;
		if (j == i) {
			char name[160];
			snprintf(name, sizeof(name), "%s=%s", key, value[i]);
			col_of[i] = table_column(t, name, "ms", 3);
		} else {
			col_of[i] = col_of[j];
		}
	}
	/* Rows: cases equal but for KEY share one. */
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && strcmp(row_key[j], row_key[i]))
			j++;
		if (j < i) {
			row_of[i] = row_of[j];
			continue;
		}
		row_of[i] = table_row(t);
		char v[256];
		for (size_t k = 0; k < ncol_param; k++) {
			if (col_param[k] == (size_t)-1)
				continue;
			json_field(cases[i].params_json, params[k], v, sizeof(v));
			table_text(t, row_of[i], col_param[k], v);
		}
		if (causal_col)
			table_text(t, row_of[i], col_causal, cases[i].causal > 0 ? "yes" : "no");
		if (peer_params) {
			case_key_peer_params(row_key[i], v, sizeof(v));
			table_text(t, row_of[i], col_peer, v);
		}
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct case_series series;
		/* a cell measured twice (a case key listed in two benchmarks): its first case counts */
		size_t j = 0;
		while (j < i && (row_of[j] != row_of[i] || col_of[j] != col_of[i]))
			j++;
		if (j < i) {
			table_note(t, "case %lld (%s): measured again in the run; the first, case %lld, "
				      "is shown", (long long)cases[i].ord + 1, cases[i].name,
				   (long long)cases[j].ord + 1);
			continue;
		}
		if (cases[i].status != STATUS_OK) {
			table_text(t, row_of[i], col_of[i], status_name(cases[i].status));
			continue;
		}
		if ((rc = case_series_load_from(db, &cases[i], warmup, &series, err)))
			break;
		size_t m;
		const double *x = case_series_pick(&series, pick, &m);
		struct summary s;
		summarize(x, m, &s);
		if (m)
			table_number(t, row_of[i], col_of[i], s.mean / NS_PER_MS);
		struct case_mark mark;   /* a number cell cannot carry it: a note names the case */
		case_mark_of(&cases[i], series.total, series.ntotal, &mark);
		if (mark.bits) {
			char text[96];
			case_mark_text(&mark, text, sizeof(text));
			table_note(t, "%s: %s", cases[i].name, text);
			marked |= mark.bits;
		}
		case_series_free(&series);
	}
	if (warmup != TABLE_OWN_WARMUP)
		table_note(t, "times as if %lld warm-up iteration%s had been run: the stored iterations "
			      "after the first %lld, as many as each case measured (the run's warm-up ones "
			      "included; nothing was re-run)", (long long)warmup, warmup == 1 ? "" : "s",
			   (long long)warmup);
	case_mark_note(t, marked);
	for (size_t i = 0; i < n; i++)
		free(row_key[i]);
	free(row_key);
	free(value);
	free(row_of);
	free(col_of);
	return rc;
}
