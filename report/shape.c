/* report/shape.c: tables made ready to paste (shape.h) — column choice, order and names, one
 * time unit, constant columns folded into the caption — and the named layouts. */
#include "shape.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "report.h"
#include "xalloc.h"

/* The layouts, one row each. coursework: the transformer-systems coursework's timing table, one
 * row per model and context length (its forward+backward case, else its training step, else its
 * forward), times in seconds, a table per dtype. */
static const struct table_layout layouts[] = {
	{.name = "coursework",
	 .summary = "the coursework's e2e timing table: a row per model and context length, seconds, "
		    "a table per dtype",
	 .suite = "e2e",
	 .prefer = "pass=forward_backward,train_step,forward",
	 .group_by = "dtype",
	 .columns = "model,context_length,?impl,fwd mean=fwd avg,fwd std,bwd mean=back avg,bwd std=back std,"
		    "fwd+bwd mean=fwd & back avg,fwd+bwd std=fwd & back std,status,dtype,device,"
		    "batch_size,compile",
	 .time_unit = "sec",
	 .title = "e2e timing"},
};

const struct table_layout *table_layout_find(const char *name)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (!strcmp(layouts[i].name, name))
			return &layouts[i];
	return NULL;
}

void table_layout_names(struct strbuf *out)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		sb_addf(out, "%s%s", i ? ", " : "", layouts[i].name);
}

/* ---- time units ------------------------------------------------------------------------------ */

/* Nanoseconds per unit of a time unit's text; 0 when it is not one. */
static double ns_per(const char *unit)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"sec", 1e9}};
	for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].name))
			return units[i].ns;
	return 0;
}

/* ---- names ----------------------------------------------------------------------------------- */

/* A column name as --columns matches it: lower case, and ' ', '_', '+' and '/' all '_' (so that
 * "fwd+bwd mean" and CSV's "fwd_bwd_mean" are one name). */
static void name_key(const char *s, char *out, size_t n)
{
	size_t k = 0;
	for (; *s && k + 1 < n; s++)
		out[k++] = strchr(" _+/", *s) ? '_' : (char)tolower((unsigned char)*s);
	out[k] = '\0';
}

/* Index of the column of t that name means (its name, or its CSV header name_unit), or -1. */
static long column_find(const struct table *t, const char *name)
{
	char want[256], have[256];
	name_key(name, want, sizeof(want));
	for (size_t c = 0; c < t->ncols; c++) {
		name_key(t->cols[c].name, have, sizeof(have));
		if (!strcmp(want, have))
			return (long)c;
		if (t->cols[c].unit[0]) {
			size_t len = strlen(have);
			snprintf(have + len, sizeof(have) - len, "_%s", t->cols[c].unit);
			name_key(have, have, sizeof(have));
			if (!strcmp(want, have))
				return (long)c;
		}
	}
	return -1;
}

/* ---- parse ----------------------------------------------------------------------------------- */

static char *trimmed(const char *s, size_t len)
{
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return xstrndup(s, len);
}

int table_shape_parse(const char *columns, const char *time_unit, int fold,
		      struct table_shape *s, struct bd_error *err)
{
	memset(s, 0, sizeof(*s));
	s->fold = fold;
	if (time_unit && !ns_per(time_unit))
		return bd_fail(err, BD_EINVAL, "--time-unit: unknown unit '%s' (valid: %s)", time_unit,
			       SHAPE_TIME_UNITS);
	s->time_unit = time_unit;
	for (const char *p = columns; p && *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		char *name = trimmed(p, eq ? (size_t)(eq - p) : len);
		char *heading = eq ? trimmed(eq + 1, len - (size_t)(eq + 1 - p)) : NULL;
		s->cols = xrealloc(s->cols, (s->ncols + 1) * sizeof(*s->cols));
		int if_varies = name[0] == '?';
		if (if_varies)
			memmove(name, name + 1, strlen(name));
		s->cols[s->ncols++] = (struct shape_column){name, heading, if_varies};
		if (!name[0] || (heading && !heading[0])) {
			int rc = bd_fail(err, BD_EINVAL, "--columns: '%.*s' is not NAME or NAME=HEADING",
					 (int)len, p);
			table_shape_free(s);
			return rc;
		}
		char a[256], b[256];
		name_key(name, a, sizeof(a));
		for (size_t k = 0; k + 1 < s->ncols; k++) {
			name_key(s->cols[k].name, b, sizeof(b));
			if (!strcmp(a, b)) {
				int rc = bd_fail(err, BD_EINVAL, "--columns: '%s' is listed twice", name);
				table_shape_free(s);
				return rc;
			}
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

void table_shape_free(struct table_shape *s)
{
	for (size_t i = 0; i < s->ncols; i++) {
		free(s->cols[i].name);
		free(s->cols[i].heading);
	}
	free(s->cols);
	memset(s, 0, sizeof(*s));
}

/* ---- apply ----------------------------------------------------------------------------------- */

static int cells_equal(const struct cell *a, const struct cell *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == CELL_TEXT)
		return !strcmp(a->text, b->text);
	return a->kind == CELL_EMPTY || a->value == b->value;
}

/* Whether column c of t holds one value on every row. */
static int column_same(const struct table *t, size_t c)
{
	for (size_t r = 1; r < t->nrows; r++)
		if (!cells_equal(&t->cells[c], &t->cells[r * t->ncols + c]))
			return 0;
	return 1;
}

/* Whether column c of t holds one non-empty value on every row (of two rows or more). */
static int column_constant(const struct table *t, size_t c)
{
	return t->nrows >= 2 && t->cells[c].kind != CELL_EMPTY && column_same(t, c);
}

/* The columns of t for an error message: "model, context_length, fwd mean, ...". */
static void column_names(const struct table *t, struct strbuf *out)
{
	for (size_t c = 0; c < t->ncols; c++)
		sb_addf(out, "%s%s", c ? ", " : "", t->cols[c].name);
}

int table_shape_apply(const struct table_shape *s, int titled, int exact, struct table *t,
		      struct bd_error *err)
{
	size_t ncols = s->ncols ? s->ncols : t->ncols;
	/* contention and instability stay visible whatever the columns chosen: a table's mark
	 * column (report_common.c case_mark_note) is kept, last, when --columns leaves it out */
	long mark = s->ncols ? column_find(t, "mark") : -1;
	for (size_t k = 0; k < s->ncols && mark >= 0; k++)
		if (column_find(t, s->cols[k].name) == mark)
			mark = -1;
	size_t *from = xcalloc(ncols + 1, sizeof(*from));
	const struct shape_column **chosen = xcalloc(ncols + 1, sizeof(*chosen));
	size_t nchosen = 0;
	for (size_t k = 0; k < ncols; k++) {
		long c = s->ncols ? column_find(t, s->cols[k].name) : (long)k;
		if (s->ncols && s->cols[k].if_varies && (c < 0 || column_same(t, (size_t)c)))
			continue;
		if (c < 0) {
			struct strbuf names = STRBUF_INIT;
			column_names(t, &names);
			int rc = bd_fail(err, BD_EINVAL, "--columns: table '%s' has no column '%s' (its "
							 "columns: %s)", t->title ? t->title : "",
					 s->cols[k].name, sb_str(&names));
			sb_free(&names);
			free(from);
			free(chosen);
			return rc;
		}
		chosen[nchosen] = s->ncols ? &s->cols[k] : NULL;
		from[nchosen++] = (size_t)c;
	}
	if (mark >= 0) {
		chosen[nchosen] = NULL;
		from[nchosen++] = (size_t)mark;
	}
	ncols = nchosen;
	/* A column folds when it is constant over the whole table; the kept ones' sources move up
	 * in from[] as they are added (their index in out is at most k). */
	struct strbuf caption = STRBUF_INIT;
	double to_ns = s->time_unit ? ns_per(s->time_unit) : 0;
	struct table out;
	table_init(&out, NULL);
	for (size_t k = 0; k < ncols; k++) {
		const struct column *col = &t->cols[from[k]];
		const char *name = chosen[k] && chosen[k]->heading ? chosen[k]->heading : col->name;
		double unit_ns = ns_per(col->unit), scale = 1;
		const char *unit = col->unit;
		int decimals = col->decimals;
		if (to_ns && unit_ns) {
			scale = unit_ns / to_ns;
			unit = s->time_unit;
			decimals += (int)lround(log10(to_ns / unit_ns));
			decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
		}
		if (s->fold && titled && column_constant(t, from[k]) &&
		    !(exact && t->cells[from[k]].kind == CELL_NUMBER)) {
			const struct cell *v = &t->cells[from[k]];
			sb_addf(&caption, "%s%s ", caption.len ? ", " : "", name);
			if (v->kind == CELL_TEXT)
				sb_add(&caption, v->text);
			else
				sb_addf(&caption, "%.*f%s%s", decimals, v->value * scale, unit[0] ? " " : "",
					unit);
			continue;
		}
		from[table_column(&out, name, unit, decimals)] = from[k];
	}
	for (size_t r = 0; r < t->nrows; r++) {
		size_t row = table_row(&out);
		for (size_t k = 0; k < out.ncols; k++) {
			const struct cell *v = &t->cells[r * t->ncols + from[k]];
			double scale = 1, unit_ns = ns_per(t->cols[from[k]].unit);
			if (to_ns && unit_ns)
				scale = unit_ns / to_ns;
			if (v->kind == CELL_TEXT)
				table_text(&out, row, k, v->text);
			else if (v->kind == CELL_NUMBER)
				table_number(&out, row, k, v->value * scale);
		}
	}
	if (t->title || caption.len) {
		struct strbuf title = STRBUF_INIT;
		if (t->title)
			sb_add(&title, t->title);
		if (caption.len)
			sb_addf(&title, t->title ? " (%s)" : "%s", sb_str(&caption));
		out.title = sb_detach(&title);
	}
	out.notes = t->notes;
	out.nnotes = t->nnotes;
	t->notes = NULL;
	t->nnotes = 0;
	table_free(t);
	*t = out;
	sb_free(&caption);
	free(chosen);
	free(from);
	return 0;
}

/* ---- one row among cases that differ in one parameter ------------------------------------------ */

/* Position of value in the comma-separated list, or -1. */
static long list_rank(const char *list, const char *value)
{
	size_t len = strlen(value);
	long rank = 0;
	for (const char *p = list;; rank++) {
		size_t n = strcspn(p, ",");
		if (n == len && !strncmp(p, value, len))
			return rank;
		p += n;
		if (!*p++)
			return -1;
	}
}

int case_rows_prefer(struct case_row *rows, size_t *n, const char *prefer, struct bd_error *err)
{
	const char *eq = prefer ? strchr(prefer, '=') : NULL;
	if (!eq || eq == prefer || !eq[1] || (size_t)(eq - prefer) >= 64)
		return bd_fail(err, BD_EINVAL, "--prefer expects KEY=VALUE,VALUE,..., got '%s'",
			       prefer ? prefer : "");
	char key[64], v[256];
	snprintf(key, sizeof(key), "%.*s", (int)(eq - prefer), prefer);
	const char *list = eq + 1;
	size_t m = *n;
	char **rest = xcalloc(m, sizeof(*rest));
	long *rank = xcalloc(m, sizeof(*rank));
	for (size_t i = 0; i < m; i++) {
		rest[i] = case_key_without(rows[i].case_key, key);
		json_field(rows[i].params_json, key, v, sizeof(v));
		rank[i] = list_rank(list, v);
	}
	size_t kept = 0;
	int *keep = xcalloc(m, sizeof(*keep));
	/* a case whose value is not listed gives way to any that is; where none of the cases that
	 * differ only in KEY has a listed value (a suite without KEY), there is nothing to prefer
	 * and they stay */
	for (size_t i = 0; i < m; i++) {
		keep[i] = 1;
		for (size_t j = 0; j < m && keep[i]; j++)
			if (j != i && rank[j] >= 0 && !strcmp(rest[i], rest[j]) &&
			    (rank[i] < 0 || rank[j] < rank[i] || (rank[j] == rank[i] && j < i)))
				keep[i] = 0;
	}
	for (size_t i = 0; i < m; i++) {
		if (!keep[i])
			continue;
		struct case_row t = rows[i];
		rows[i] = rows[kept];
		rows[kept++] = t;   /* the row moved to i was passed over already */
	}
	for (size_t i = 0; i < m; i++)
		free(rest[i]);
	free(rest);
	free(rank);
	free(keep);
	*n = kept;
	return 0;
}

/* ---- a run's tables ---------------------------------------------------------------------------- */

/* The group a case belongs to: its suite, and with group_by the value of that parameter. */
static void group_of(const struct case_row *c, const char *group_by, char *out, size_t n)
{
	char v[128] = "";
	if (group_by)
		json_field(c->params_json, group_by, v, sizeof(v));
	snprintf(out, n, "%s%s%s%s%s", c->suite, group_by ? ", " : "", group_by ? group_by : "",
		 group_by ? "=" : "", v);
}

/* A layout's title: "TITLE: KEY VALUE, K warm-up steps" (the warm-up when the cases agree). */
static char *layout_title(const struct table_request *rq, const struct case_row *group, size_t m)
{
	struct strbuf sb = STRBUF_INIT;
	char v[128] = "";
	sb_add(&sb, rq->title);
	if (rq->group_by) {
		json_field(group[0].params_json, rq->group_by, v, sizeof(v));
		sb_addf(&sb, ": %s %s", rq->group_by, v);
	}
	int64_t w = rq->warmup != TABLE_OWN_WARMUP ? rq->warmup : group[0].warmup;
	int same = 1;
	for (size_t i = 1; i < m && rq->warmup == TABLE_OWN_WARMUP; i++)
		same &= group[i].warmup == w;
	if (same)
		sb_addf(&sb, "%s%lld warm-up step%s%s", rq->group_by ? ", " : ": ", (long long)w,
			w == 1 ? "" : "s", rq->warmup != TABLE_OWN_WARMUP ? " (from the stored iterations)"
									 : "");
	return sb_detach(&sb);
}

int report_tables(struct db *db, struct case_row *rows, size_t n, const struct table_request *rq,
		  struct table **tables, size_t *ntables, struct bd_error *err)
{
	int rc = 0;
	*tables = NULL;
	*ntables = 0;
	if (rq->prefer && (rc = case_rows_prefer(rows, &n, rq->prefer, err)))
		return rc;
	/* One table per suite (and group_by value), in order of first appearance. */
	char gi[256], gj[256];
	for (size_t i = 0; i < n && !rc; i++) {
		group_of(&rows[i], rq->group_by, gi, sizeof(gi));
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++) {
			group_of(&rows[j], rq->group_by, gj, sizeof(gj));
			seen = !strcmp(gi, gj);
		}
		if (seen)
			continue;
		size_t m = 0;
		struct case_row *group = xcalloc(n, sizeof(*group));
		for (size_t j = i; j < n; j++) {
			group_of(&rows[j], rq->group_by, gj, sizeof(gj));
			if (!strcmp(gi, gj))
				group[m++] = rows[j];   /* shallow: strings stay owned by rows */
		}
		*tables = xrealloc(*tables, (*ntables + 1) * sizeof(**tables));
		struct table *t = &(*tables)[(*ntables)++];
		const struct table_options opt = {
			.flags = rq->flags | (rq->shape && rq->shape->ncols && !rq->pivot ? TABLE_EVERY_COLUMN
											 : 0),
			.warmup = rq->warmup};
		rc = rq->pivot ? pivot_table(db, rows[i].suite, group, m, rq->pivot,
					     (enum series_pick)rq->pick, rq->warmup, t, err)
			       : table_of_cases_opts(db, rows[i].suite, group, m, &opt, t, err);
		if (!rc && (rq->group_by || rq->title)) {
			free(t->title);
			t->title = rq->title ? layout_title(rq, group, m) : xstrdup(gi);
		}
		if (!rc && rq->shape)
			rc = table_shape_apply(rq->shape, rq->titled, rq->exact, t, err);
		free(group);
	}
	return rc;
}

/* ---- cases named by their parameters, for data exports ---------------------------------------- */

/* Case-key order: the parameter table's key_rank, then names the table lacks, by name. */
static int key_rank_cmp(const void *a, const void *b)
{
	const struct param_def *x = param_find((const char *)a), *y = param_find((const char *)b);
	int rx = x ? x->key_rank : 1 << 30, ry = y ? y->key_rank : 1 << 30;
	return rx != ry ? (rx > ry) - (rx < ry) : strcmp((const char *)a, (const char *)b);
}

size_t case_param_columns(const struct case_row *const *rows, size_t n, char (*keys)[PARAM_KEY_MAX],
			  size_t max)
{
	size_t nkeys = 0;
	for (size_t i = 0; i < n; i++) {
		struct key_token t[CASE_KEY_MAX_TOKENS];
		size_t m;
		if (case_key_split(rows[i]->case_key, t, CASE_KEY_MAX_TOKENS, &m, NULL))
			continue;
		for (size_t k = 0; k < m && nkeys < max; k++) {
			size_t j = 0;
			while (j < nkeys && (strlen(keys[j]) != t[k].name_len ||
					     strncmp(keys[j], t[k].name, t[k].name_len)))
				j++;
			if (j == nkeys && t[k].name_len < PARAM_KEY_MAX && !key_token_is(&t[k], "impl"))
				snprintf(keys[nkeys++], PARAM_KEY_MAX, "%.*s", (int)t[k].name_len, t[k].name);
		}
	}
	qsort(keys, nkeys, sizeof(*keys), key_rank_cmp);
	return nkeys;
}

#define BYTES_PER_MIB 1048576.0

void compare_table_add_cases(struct table *t, const struct case_set *base,
			     const struct case_set *cand, const struct case_pair *pairs, size_t n)
{
	const struct case_row **rows = xcalloc(n ? n : 1, sizeof(*rows));
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if (pairs[k].ok)
			rows[m++] = &cand->rows[pairs[k].cand];
	char keys[64][PARAM_KEY_MAX];
	size_t nkeys = case_param_columns(rows, m, keys, 64);
	size_t first = t->ncols;
	for (size_t k = 0; k < nkeys; k++)
		table_column(t, keys[k], "", 0);
	size_t c_bmem = table_column(t, "baseline peak mem", "MiB", 1),
	       c_cmem = table_column(t, "candidate peak mem", "MiB", 1);
	for (size_t k = 0, r = 0; k < n && r < t->nrows; k++) {
		if (!pairs[k].ok)
			continue;
		const struct case_row *c = &cand->rows[pairs[k].cand], *b = &base->rows[pairs[k].base];
		char v[256];
		for (size_t j = 0; j < nkeys; j++) {
			json_field(c->params_json, keys[j], v, sizeof(v));
			if (v[0])
				table_text(t, r, first + j, v);
		}
		if (b->peak_bytes >= 0)
			table_number(t, r, c_bmem, (double)b->peak_bytes / BYTES_PER_MIB);
		if (c->peak_bytes >= 0)
			table_number(t, r, c_cmem, (double)c->peak_bytes / BYTES_PER_MIB);
		r++;
	}
	free(rows);
}
