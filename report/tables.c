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

int table_of_cases(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		   unsigned flags, struct table *t, struct bd_error *err)
{
	const char *columns[9];
	const char *const *params = params_of(suite, columns);
	struct case_series *series = xcalloc(n, sizeof(*series));
	unsigned phases = 0;
	int rc = 0, causal_col = suite_is(suite, SUITE_ATTENTION);
	table_init(t, suite);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = case_series_load(db, &cases[i], &series[i], err);
		phases |= series[i].phases;
	}
	if (rc)
		goto done;

	size_t col_param[8], ncol_param = 0, col_causal = 0, col_count = 0, col_peer = 0;
	for (; ncol_param < 8 && params[ncol_param]; ncol_param++)
		col_param[ncol_param] = table_column(t, params[ncol_param], "", 0);
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
	int counted = 0;
	for (size_t i = 0; i < n; i++)
		counted |= cases[i].param_count > 0;
	if (counted)
		col_count = table_column(t, "param count", "M", 1);
	if (causal_col)
		col_causal = table_column(t, "causal", "", 0);
	size_t col_status = table_column(t, "status", "", 0);
	size_t col_n = table_column(t, "n", "", 0);   /* measured iterations of the case */
	size_t col_mean[PHASE_COUNT], col_std[PHASE_COUNT], col_tmean = 0, col_tstd = 0;
	int total_col = __builtin_popcount(phases) > 1;
	for (int p = 0; p < PHASE_COUNT; p++) {
		if (!(phases & (1u << p)))
			continue;
		char name[32];
		snprintf(name, sizeof(name), "%s mean", phase_name(p));
		col_mean[p] = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "%s std", phase_name(p));
		col_std[p] = table_column(t, name, "ms", 3);
	}
	if (total_col) {
		const char *total = phases & (1u << 2) ? "fwd+bwd+opt" : "fwd+bwd";
		char name[32];
		snprintf(name, sizeof(name), "%s mean", total);
		col_tmean = table_column(t, name, "ms", 3);
		snprintf(name, sizeof(name), "%s std", total);
		col_tstd = table_column(t, name, "ms", 3);
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

	size_t nunvalidated = 0;
	for (size_t i = 0; i < n; i++) {
		const struct case_row *c = &cases[i];
		size_t r = table_row(t);
		char v[256];
		for (size_t k = 0; k < ncol_param; k++) {
			json_field(c->params_json, params[k], v, sizeof(v));
			table_text(t, r, col_param[k], v);
		}
		if (peer_params) {
			case_key_peer_params(c->case_key, v, sizeof(v));
			table_text(t, r, col_peer, v);
		}
		if (counted && c->param_count > 0)
			table_number(t, r, col_count, (double)c->param_count / 1e6);
		if (causal_col)
			table_text(t, r, col_causal, c->causal > 0 ? "yes" : "no");
		/* an ok case not checked against a reference: a peer without `check` lines */
		int unvalidated = c->status == STATUS_OK && c->max_diff < 0;
		nunvalidated += unvalidated;
		table_text(t, r, col_status, unvalidated ? "ok, unvalidated" : status_name(c->status));
		size_t measured = series[i].ntotal;
		for (int p = 0; p < PHASE_COUNT; p++)
			measured = series[i].n[p] > measured ? series[i].n[p] : measured;
		if (measured)
			table_number(t, r, col_n, (double)measured);
		if (c->status != STATUS_OK)
			table_note(t, "case %lld (%s): %s — %s", (long long)c->ord + 1, c->name, status_name(c->status),
				   c->reason ? c->reason : "no reason stored");
		for (int p = 0; p < PHASE_COUNT; p++) {
			if (!(series[i].phases & (1u << p)))
				continue;
			struct summary s;
			summarize(series[i].ns[p], series[i].n[p], &s);
			table_number(t, r, col_mean[p], s.mean / NS_PER_MS);
			if (s.n > 1)   /* no spread from one sample */
				table_number(t, r, col_std[p], s.std / NS_PER_MS);
			if ((rated & (1u << p)) && c->flops[p] > 0 && s.mean > 0)
				table_number(t, r, col_rate[p], c->flops[p] / s.mean);
			if (derived && (moved & (1u << p)) && c->bytes[p] > 0 && s.mean > 0)
				table_number(t, r, col_gbs[p], c->bytes[p] / s.mean);
		}
		if (derived) {
			size_t nt;
			const double *tot = case_series_pick(&series[i], PICK_TOTAL, &nt);
			struct summary s;
			summarize(tot, nt, &s);
			if (nt && s.mean > 0) {
				double per_s = 1e9 / s.mean;
				table_number(t, r, col_tok, per_s * (double)c->batch_size * (double)c->seq_len);
				table_number(t, r, col_smp, per_s * (double)c->batch_size);
				table_number(t, r, col_cv, 100 * s.cv);
			}
		}
		if (total_col && series[i].ntotal) {
			struct summary s;
			summarize(series[i].total, series[i].ntotal, &s);
			table_number(t, r, col_tmean, s.mean / NS_PER_MS);
			if (s.n > 1)
				table_number(t, r, col_tstd, s.std / NS_PER_MS);
		}
		if (c->peak_bytes >= 0)
			table_number(t, r, col_peak, (double)c->peak_bytes / BYTES_PER_MIB);
		const int64_t held[4] = {c->param_bytes, c->grad_bytes, c->optim_bytes,
					 c->activation_bytes};
		for (int k = 0; breakdown && c->activation_bytes > 0 && k < 4; k++)
			table_number(t, r, col_mem[k], held[k] > 0 ? (double)held[k] / BYTES_PER_MIB : 0);
	}
	if (nunvalidated)
		table_note(t, "ok, unvalidated: %zu case%s not checked against a reference (a peer without "
			   "check lines: schemas/peer-protocol.md, \"Validation\")", nunvalidated,
			   nunvalidated == 1 ? "" : "s");
done:
	for (size_t i = 0; i < n; i++)
		case_series_free(&series[i]);
	free(series);
	return rc;
}

int pivot_table(struct db *db, const char *suite, const struct case_row *cases, size_t n,
		       const char *key, enum series_pick pick, struct table *t, struct bd_error *err)
{
	const char *columns[9];
	const char *const *params = params_of(suite, columns);
	char **row_key = xcalloc(n, sizeof(*row_key));
	char (*value)[128] = xcalloc(n, sizeof(*value));
	size_t *row_of = xcalloc(n, sizeof(*row_of)), *col_of = xcalloc(n, sizeof(*col_of));
	size_t col_param[8], ncol_param = 0;
	int rc = 0;
	char title[128];
	snprintf(title, sizeof(title), "%s: mean %s time by %s", suite, series_pick_names[pick], key);
	table_init(t, title);
	for (; ncol_param < 8 && params[ncol_param]; ncol_param++)
		if (strcmp(params[ncol_param], key))
			col_param[ncol_param] = table_column(t, params[ncol_param], "", 0);
		else
			col_param[ncol_param] = (size_t)-1;
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
		row_key[i] = case_key_without(cases[i].case_key, key);
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
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct case_series series;
		if (cases[i].status != STATUS_OK) {
			table_text(t, row_of[i], col_of[i], status_name(cases[i].status));
			continue;
		}
		if ((rc = case_series_load(db, &cases[i], &series, err)))
			break;
		size_t m;
		const double *x = case_series_pick(&series, pick, &m);
		struct summary s;
		summarize(x, m, &s);
		if (m)
			table_number(t, row_of[i], col_of[i], s.mean / NS_PER_MS);
		case_series_free(&series);
	}
	for (size_t i = 0; i < n; i++)
		free(row_key[i]);
	free(row_key);
	free(value);
	free(row_of);
	free(col_of);
	return rc;
}
