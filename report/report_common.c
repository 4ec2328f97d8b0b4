/* report/report_common.c: what every command does — opening the database, selecting runs and
 * cases, loading sample series, printing the output — and the case index by key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "median_rse.h"
#include "params.h"
#include "report.h"
#include "xalloc.h"

int report_open(const char *db_path, const char *run_selector, struct db **db, int64_t *run_id)
{
	struct bd_error err;
	if (db_open(db_path, DB_READONLY, db, &err) ||
	    (run_selector && db_run_resolve(*db, run_selector, run_id, &err))) {
		bd_error_print(REPORT_PROG, &err);
		return err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	/* a group of shards that is not its sweep once, complete: said in every format (a CSV has
	 * no heading to carry the run's status) */
	char *gap = NULL, *shard_group = NULL;
	int64_t whole_runs = 0;
	int shard_index, shard_count;
	if (run_selector && (db_group_gap(*db, *run_id, &gap, &err) ||
			     db_group_whole_runs(*db, *run_id, &whole_runs, &err) ||
			     db_run_shard_alone(*db, *run_id, &shard_group, &shard_index, &shard_count,
						&err))) {
		bd_error_print(REPORT_PROG, &err);
		free(gap);
		return EXIT_FAIL;
	}
	if (shard_group) {   /* `latest` or a label after a merge of shards: one slice, said */
		char *sel = escape_controls(run_selector), *group = escape_controls(shard_group);
		fprintf(stderr, "%s: run %lld ('%s') is shard %d of %d of group '%s': what follows is "
			"that slice of the sweep alone (--run '%s' reads the group's shards as one run)\n",
			REPORT_PROG, (long long)*run_id, sel, shard_index, shard_count, group, group);
		free(sel);
		free(group);
		free(shard_group);
	}
	if (whole_runs > 1) {   /* every node's run, every repetition: one of them stands for all */
		char *sel = escape_controls(run_selector);
		fprintf(stderr, "%s: group '%s' holds %lld runs of the whole sweep (a node's or a "
			"repetition each); what follows is its latest, run %lld, alone (report nodes "
			"compares nodes; report runs lists the runs)\n",
			REPORT_PROG, sel, (long long)whole_runs, (long long)*run_id);
		free(sel);
	}
	if (gap) {
		char *sel = escape_controls(run_selector);
		fprintf(stderr, "%s: group '%s' is not one whole run of its sweep: %s; what follows is of the "
			"shards it has (report runs lists them)\n", REPORT_PROG, sel, gap);
		free(sel);
		free(gap);
	}
	return -1;
}

int report_format_arg(const char *format, unsigned kind)
{
	if (!format) {
		int first = 0;
		while (first < FORMAT_COUNT - 1 && !format_is((enum report_format)first, kind))
			first++;
		return first;
	}
	int fmt = format_parse(format);
	if (fmt < 0) {
		struct strbuf valid = STRBUF_INIT;
		format_list(0, &valid);
		fprintf(stderr, "%s: unknown format '%s' (valid: %s)\n", REPORT_PROG, format,
			sb_str(&valid));
		sb_free(&valid);
	}
	return fmt;
}

int report_error(const struct bd_error *err, int status)
{
	bd_error_print(REPORT_PROG, err);
	return status;
}

void report_output_begin(struct report_output *out, enum report_format fmt)
{
	out->fmt = fmt;
	render_begin(fmt, &out->text);
}

int report_output_table(struct report_output *out, struct table *t, int rc,
			const struct bd_error *err)
{
	if (rc)
		bd_error_print(REPORT_PROG, err);
	else
		render_table(t, out->fmt, &out->text);
	table_free(t);
	return rc;
}

int report_output_end(struct report_output *out, int rc)
{
	if (rc)
		return EXIT_FAIL;
	render_end(out->fmt, &out->text);
	/* the output quotes stored text (names, labels, reasons): no escape sequence from a database
	 * reaches the terminal raw */
	char *shown = escape_controls(sb_str(&out->text));
	fputs(shown, stdout);
	free(shown);
	return EXIT_OK;
}

void report_output_free(struct report_output *out)
{
	sb_free(&out->text);
}

void report_print(enum report_format fmt, const struct table *tables, size_t n)
{
	struct report_output out = REPORT_OUTPUT_INIT;
	report_output_begin(&out, fmt);
	for (size_t i = 0; i < n; i++)
		render_table(&tables[i], fmt, &out.text);
	report_output_end(&out, 0);
	report_output_free(&out);
}

int verdict_rule_check(const struct verdict_rule *rule, const char *command)
{
	/* written so that a NaN (--alpha nan) fails too */
	if (rule->threshold >= 0 && isfinite(rule->threshold) && rule->alpha > 0 && rule->alpha < 1 &&
	    rule->tie_band >= 0 && isfinite(rule->tie_band) && rule->assumed.run_noise >= 0 &&
	    isfinite(rule->assumed.run_noise) && rule->cpu_wait_gap >= 0 &&
	    rule->cpu_wait_gap <= 1 && rule->cpu_wait_level >= 0 && rule->cpu_wait_level <= 1 &&
	    rule->detect > 0 && isfinite(rule->detect))
		return -1;
	fprintf(stderr, "%s %s: --threshold, --tie-band and --run-noise must be >= 0, --detect > 0, "
		"--alpha in (0, 1), --cpu-wait-gap and --cpu-wait-level in [0, 100]\n", REPORT_PROG,
		command);
	return EXIT_USAGE;
}

struct case_filter report_filter(const struct report_options *o)
{
	return (struct case_filter){.suite = o->suite, .where = o->where.items, .nwhere = o->where.n};
}

int case_series_load(struct db *db, const struct case_row *c, struct case_series *s,
		     struct bd_error *err)
{
	return case_series_load_from(db, c, -1, s, err);
}

int case_series_load_from(struct db *db, const struct case_row *c, int64_t warmup,
			  struct case_series *s, struct bd_error *err)
{
	struct sample *samples = NULL;
	size_t n = 0;
	memset(s, 0, sizeof(*s));
	int rc = db_samples_get(db, c->id, &samples, &n, err);
	if (rc)
		return rc;
	size_t iters = c->iters > 0 ? (size_t)c->iters : 0;
	for (int p = 0; p < PHASE_COUNT; p++) {
		s->ns[p] = xcalloc(iters, sizeof(double));
		s->at[p] = xcalloc(iters ? iters : 1, sizeof(size_t));
	}
	s->total = xcalloc(iters, sizeof(double));
	unsigned *have = xcalloc(iters, sizeof(unsigned));
	for (size_t i = 0; i < n; i++) {
		int64_t it = samples[i].iter - (warmup < 0 ? c->warmup : warmup);
		int p = samples[i].phase;
		if (it < 0 || (size_t)it >= iters || s->n[p] >= iters)
			continue;
		s->at[p][s->n[p]] = (size_t)it;
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
	for (int p = 0; p < PHASE_COUNT; p++) {
		free(s->ns[p]);
		free(s->at[p]);
	}
	free(s->total);
	memset(s, 0, sizeof(*s));
}

void case_mark_of(const struct case_row *c, const double *times, size_t n, struct case_mark *m)
{
	m->bits = 0;
	m->cpu_wait = c->status == STATUS_OK ? c->cpu_wait : -1;
	m->rse = c->status == STATUS_OK ? c->rse : -1;
	if (m->rse < 0 && times && n >= MEDIAN_RSE_MIN_SAMPLES && c->status == STATUS_OK) {
		int64_t *scratch = xmalloc(n * sizeof(*scratch));   /* a case stored before schema 12 */
		double rse = median_rse_of(times, n, scratch);
		m->rse = isfinite(rse) ? rse : -1;
		free(scratch);
	}
	if (m->cpu_wait > REPORT_CPU_WAIT_LEVEL_PCT / 100.0)
		m->bits |= CASE_MARK_CONTENDED;
	if (m->rse > REPORT_UNSTABLE_RSE_PCT / 100.0)
		m->bits |= CASE_MARK_UNSTABLE;
}

void case_mark_text(const struct case_mark *m, char *out, size_t n)
{
	int k = 0;
	out[0] = '\0';
	if (m->bits & CASE_MARK_CONTENDED)
		k = snprintf(out, n, "contended (waited %.0f%%)", 100 * m->cpu_wait);
	if ((m->bits & CASE_MARK_UNSTABLE) && k >= 0 && (size_t)k < n)
		snprintf(out + k, n - (size_t)k, "%sunstable (median +-%.1f%%)", k ? ", " : "",
			 100 * m->rse);
}

void case_mark_note(struct table *t, unsigned bits)
{
	if (bits & CASE_MARK_CONTENDED)
		table_note(t, "contended: the case waited for a CPU more than %d%% of its measured time "
			      "(cases.cpu_wait): its times include that wait and depend on what else the "
			      "machine ran; rerun on a quiet machine or with fewer threads",
			   REPORT_CPU_WAIT_LEVEL_PCT);
	if (bits & CASE_MARK_UNSTABLE)
		table_note(t, "unstable: the median's estimated relative standard error within the run "
			      "(cases.rse) is above %.3g%%, so its figure is uncertain by more than +-%.3g%% "
			      "(95%%); more iterations (iters: auto) or a quieter machine",
			   (double)REPORT_UNSTABLE_RSE_PCT, 2 * REPORT_UNSTABLE_RSE_PCT);
}

static const char *json_skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Append code point cp to out as UTF-8. */
static void utf8_add(struct strbuf *out, unsigned long cp)
{
	if (cp < 0x80) {
		sb_addc(out, (char)cp);
	} else if (cp < 0x800) {
		sb_addc(out, (char)(0xC0 | cp >> 6));
		sb_addc(out, (char)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		sb_addc(out, (char)(0xE0 | cp >> 12));
		sb_addc(out, (char)(0x80 | (cp >> 6 & 0x3F)));
		sb_addc(out, (char)(0x80 | (cp & 0x3F)));
	} else {
		sb_addc(out, (char)(0xF0 | cp >> 18));
		sb_addc(out, (char)(0x80 | (cp >> 12 & 0x3F)));
		sb_addc(out, (char)(0x80 | (cp >> 6 & 0x3F)));
		sb_addc(out, (char)(0x80 | (cp & 0x3F)));
	}
}

/* The four hex digits at p as a number; -1 when they are not. */
static long hex4(const char *p)
{
	char digits[5] = {0}, *end;
	for (int i = 0; i < 4; i++)
		if (!(digits[i] = p[i]) || !strchr("0123456789abcdefABCDEF", p[i]))
			return -1;
	return strtol(digits, &end, 16);
}

/* The JSON string at p (its opening quote) decoded into out (NULL: skipped); returns the
 * character after its closing quote, or NULL when the string is malformed. */
static const char *json_string_read(const char *p, struct strbuf *out)
{
	for (p++; *p != '"'; p++) {
		if (!*p)
			return NULL;
		char c = *p;
		if (c == '\\') {
			switch (*++p) {
			case '"': case '\\': case '/': c = *p; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				long cp = hex4(p + 1), low;
				if (cp < 0)
					return NULL;
				p += 4;
				if (cp >= 0xD800 && cp < 0xDC00 && p[1] == '\\' && p[2] == 'u' &&
				    (low = hex4(p + 3)) >= 0xDC00 && low < 0xE000) {   /* a surrogate pair */
					cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
					p += 6;
				}
				if (out && cp)
					utf8_add(out, (unsigned long)cp);
				continue;
			}
			default: return NULL;
			}
		}
		if (out)
			sb_addc(out, c);
	}
	return p + 1;
}

/* The JSON value at p skipped (a nested object or array whole); NULL when malformed. */
static const char *json_value_skip(const char *p)
{
	if (*p == '"')
		return json_string_read(p, NULL);
	if (*p != '{' && *p != '[')
		return p + strcspn(p, ",}] \t\n\r");
	for (int depth = 0;;) {
		if (*p == '"') {
			if (!(p = json_string_read(p, NULL)))
				return NULL;
			continue;
		}
		if (!*p)
			return NULL;
		depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
		p++;
		if (depth == 0)
			return p;
	}
}

void json_field(const char *json, const char *key, char *out, size_t n)
{
	struct strbuf name = STRBUF_INIT, value = STRBUF_INIT;
	out[0] = '\0';
	const char *p = json ? json_skip_ws(json) : NULL;
	if (!p || *p != '{')
		return;
	p = json_skip_ws(p + 1);
	/* the top-level members in turn: a key's text is matched decoded, never inside a value */
	while (*p == '"') {
		sb_reset(&name);
		if (!(p = json_string_read(p, &name)))
			break;
		p = json_skip_ws(p);
		if (*p != ':')
			break;
		p = json_skip_ws(p + 1);
		if (!strcmp(sb_str(&name), key)) {
			if (*p == '"') {
				if (json_string_read(p, &value))
					snprintf(out, n, "%s", sb_str(&value));
			} else {
				const char *end = json_value_skip(p);
				if (end)
					snprintf(out, n, "%.*s", (int)(end - p), p);
			}
			break;
		}
		if (!(p = json_value_skip(p)))
			break;
		p = json_skip_ws(p);
		if (*p != ',')
			break;
		p = json_skip_ws(p + 1);
	}
	sb_free(&name);
	sb_free(&value);
}

const char *const series_pick_names[4] = {"fwd", "bwd", "opt", "total"};

int series_pick_arg(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, series_pick_names[i]))
			return i;
	fprintf(stderr, "%s: unknown phase '%s' (valid: fwd, bwd, opt, total)\n", REPORT_PROG, s);
	return -1;
}

const double *case_series_pick(const struct case_series *s, enum series_pick pick, size_t *n)
{
	if (pick == PICK_TOTAL) {
		*n = s->ntotal;
		return s->total;
	}
	*n = s->n[pick];
	return s->ns[pick];
}

/* Split "key=value" into key (copied into k) and a pointer to value; -1 when malformed. */
static int split_where(const char *w, char *k, size_t n, const char **value)
{
	const char *eq = strchr(w, '=');
	if (!eq || eq == w || (size_t)(eq - w) >= n)
		return -1;
	snprintf(k, n, "%.*s", (int)(eq - w), w);
	*value = eq + 1;
	return 0;
}

/* Whether value is one of the comma-separated alternatives of list. */
static int value_listed(const char *list, const char *value)
{
	size_t len = strlen(value);
	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ",");
		if (n == len && !strncmp(p, value, len))
			return 1;
		p += n;
		if (!*p)
			return 0;
	}
}

int case_rows_filter(struct case_row *rows, size_t *n, const struct case_filter *f,
		     const char *scope, struct bd_error *err)
{
	char k[64], v[256], other[64];
	const char *want = "";
	/* A --where key that no case has is a typo, not an empty result. */
	for (int i = 0; i < f->nwhere; i++) {
		if (split_where(f->where[i], k, sizeof(k), &want))
			return bd_fail(err, BD_EINVAL, "--where expects key=value, got '%s'", f->where[i]);
		int known = 0;
		for (size_t c = 0; c < *n && !known; c++) {
			json_field(rows[c].params_json, k, v, sizeof(v));
			known = v[0] != '\0';
		}
		if (!known && *n)
			return bd_fail(err, BD_EINVAL, "--where: no case of %s has a parameter '%s' (its "
				       "parameters: %s)", scope, k, rows[0].params_json);
	}
	/* Values of one key are alternatives (KEY=A,B, or KEY=A and KEY=B); keys must all hold. */
	size_t kept = 0;
	for (size_t c = 0; c < *n; c++) {
		int pass = 1;
		for (int i = 0; i < f->nwhere && pass; i++) {
			split_where(f->where[i], k, sizeof(k), &want);
			json_field(rows[c].params_json, k, v, sizeof(v));
			int any = value_listed(want, v);
			for (int j = 0; j < f->nwhere && !any; j++) {
				const char *alt;
				if (j != i && !split_where(f->where[j], other, sizeof(other), &alt) &&
				    !strcmp(other, k))
					any = value_listed(alt, v);
			}
			pass = any;
		}
		if (pass) {
			struct case_row keep = rows[c];
			rows[c] = rows[kept];
			rows[kept++] = keep;
		}
	}
	*n = kept;
	return 0;
}

int case_set_load(struct db *db, int64_t run_id, const struct case_filter *f, struct case_set *out,
		  struct bd_error *err)
{
	struct case_row *rows = NULL;
	size_t n = 0;
	int rc;
	memset(out, 0, sizeof(*out));
	if ((rc = db_cases_list(db, run_id, f->suite, &rows, &n, err)))
		return rc;
	char scope[64];
	size_t all = n;
	snprintf(scope, sizeof(scope), "run %lld", (long long)run_id);
	if ((rc = case_rows_filter(rows, &n, f, scope, err)))
		goto done;
	out->rows = xcalloc(n, sizeof(*out->rows));
	out->series = xcalloc(n, sizeof(*out->series));
	for (size_t c = 0; c < n; c++) {
		if (!f->rows_only && (rc = case_series_load(db, &rows[c], &out->series[out->n], err)))
			goto done;
		out->rows[out->n++] = rows[c];
		memset(&rows[c], 0, sizeof(rows[c]));   /* ownership moved to out */
	}
done:
	db_case_rows_free(rows, all);   /* the filtered-out rows sit after the kept ones */
	if (rc)
		case_set_free(out);
	return rc;
}

int report_open_set(const char *db_path, const char *run_selector, const struct case_filter *f,
		    struct db **db, int64_t *run_id, struct case_set *set)
{
	struct bd_error err;
	int status = report_open(db_path, run_selector, db, run_id);
	if (status < 0 && case_set_load(*db, *run_id, f, set, &err)) {
		bd_error_print(REPORT_PROG, &err);
		status = err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	return status;
}

void case_set_free(struct case_set *s)
{
	for (size_t i = 0; s->series && i < s->n; i++)
		case_series_free(&s->series[i]);
	db_case_rows_free(s->rows, s->n);
	free(s->series);
	memset(s, 0, sizeof(*s));
}


struct case_index_entry {
	char *key;
	const char *impl;
	size_t index;
};

char *case_key_without_impl(const char *key) { return case_key_without(key, "impl"); }

char *case_key_without(const char *key, const char *param) { return case_key_drop(key, param); }

/* The tokens of key that are (peer: 1) or are not (0) a peer's parameters, space-separated. */
static void key_tokens(const char *key, int peer, struct strbuf *sb)
{
	struct key_token t[CASE_KEY_MAX_TOKENS];
	size_t n;
	if (case_key_split(key, t, CASE_KEY_MAX_TOKENS, &n, NULL)) {
		if (!peer)
			sb_add(sb, key);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if ((t[i].def == NULL) == peer)
			sb_addf(sb, "%s%.*s=%.*s", sb->len ? " " : "", (int)t[i].name_len, t[i].name,
				(int)t[i].value_len, t[i].value);
}

char *case_key_without_peer_params(const char *key)
{
	struct strbuf sb = STRBUF_INIT;
	key_tokens(key, 0, &sb);
	return sb_detach(&sb);
}

void case_key_peer_params(const char *key, char *out, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	key_tokens(key, 1, &sb);
	snprintf(out, n, "%s", sb_str(&sb));
	sb_free(&sb);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct case_index_entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (!c)
		c = strcmp(x->impl, y->impl);
	/* copies of a key in one run: the first case first (case_index_find returns it) */
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

void case_index_build(const struct case_set *set, int without_impl, struct case_index *idx)
{
	idx->n = set->n;
	idx->entries = xcalloc(set->n, sizeof(*idx->entries));
	for (size_t i = 0; i < set->n; i++) {
		const struct case_row *c = &set->rows[i];
		idx->entries[i].key = without_impl ? case_key_without_impl(c->case_key) : xstrdup(c->case_key);
		idx->entries[i].impl = c->impl;
		idx->entries[i].index = i;
	}
	qsort(idx->entries, idx->n, sizeof(*idx->entries), entry_cmp);
}

long case_index_find(const struct case_index *idx, const char *key, const char *impl)
{
	size_t lo = 0, hi = idx->n;
	while (lo < hi) {   /* first entry with entry.key >= key */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(idx->entries[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < idx->n && !strcmp(idx->entries[i].key, key); i++)
		if (!impl || !strcmp(idx->entries[i].impl, impl))
			return (long)idx->entries[i].index;
	return -1;
}

struct first_of_key {
	const char *key;
	size_t index;
};

static int first_of_key_cmp(const void *a, const void *b)
{
	const struct first_of_key *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

unsigned char *case_rows_first_of_key(const struct case_row *rows, size_t n)
{
	unsigned char *first = xcalloc(n + 1, 1);
	struct first_of_key *e = xcalloc(n + 1, sizeof(*e));
	for (size_t i = 0; i < n; i++)
		e[i] = (struct first_of_key){rows[i].case_key, i};
	qsort(e, n, sizeof(*e), first_of_key_cmp);
	for (size_t i = 0; i < n; i++)
		first[e[i].index] = i == 0 || strcmp(e[i].key, e[i - 1].key) != 0;
	free(e);
	return first;
}

void case_index_free(struct case_index *idx)
{
	for (size_t i = 0; idx->entries && i < idx->n; i++)
		free(idx->entries[i].key);
	free(idx->entries);
	idx->entries = NULL;
	idx->n = 0;
}

