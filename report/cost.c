/* report/cost.c: prices per device-hour and what benchmarks cost (cost.h). */
#include "cost.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "report.h"
#include "xalloc.h"

double cost_per_1k_samples(double usd_per_hour, double samples_s)
{
	return samples_s > 0 ? usd_per_hour / 3600.0 / samples_s * 1000.0 : 0;
}

double cost_of_ns(double usd_per_hour, double ns) { return usd_per_hour * ns / 3600e9; }

int prices_lookup(const struct prices *p, const char *device, double *usd_per_hour)
{
	const char *key = device && *device ? device : "cpu";
	for (size_t i = 0; p && i < p->n; i++)
		if (!strcmp(p->entries[i].device, key)) {
			*usd_per_hour = p->entries[i].usd_per_hour;
			return 0;
		}
	if (p && p->fallback >= 0) {
		*usd_per_hour = p->fallback;
		return 0;
	}
	return -1;
}

void prices_free(struct prices *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->entries[i].device);
	free(p->entries);
	free(p);
}

int prices_device(struct db *db, int64_t run_id, const char *case_device, char *out, size_t n,
		  struct bd_error *err)
{
	struct run_row run = {0};
	struct sysinfo si;
	snprintf(out, n, "cpu");
	if (!case_device || device_parse(case_device) != DEVICE_CUDA)
		return 0;
	int rc = db_run_get(db, run_id, &run, err);
	if (!rc)
		rc = db_system_get(db, run.system_id, &si, err);
	if (!rc && si.gpu_name[0])
		snprintf(out, n, "%s", si.gpu_name);
	db_run_row_clear(&run);
	return rc;
}

/* Parse the document of parser into p: a mapping with `prices:` a mapping of scalars. */
static int prices_parse(yaml_parser_t *parser, const char *path, struct prices *p,
			struct bd_error *err)
{
	yaml_document_t doc;
	if (!yaml_parser_load(parser, &doc))
		return bd_fail_at(err, BD_EINVAL, path, (int)parser->problem_mark.line + 1,
				  (int)parser->problem_mark.column + 1, "%s",
				  parser->problem ? parser->problem : "bad YAML");
	int rc = 0;
	yaml_node_t *root = yaml_document_get_root_node(&doc), *table = NULL, *table_key = NULL;
	for (yaml_node_pair_t *kv = root && root->type == YAML_MAPPING_NODE
					    ? root->data.mapping.pairs.start : NULL;
	     kv && kv < root->data.mapping.pairs.top; kv++) {
		yaml_node_t *k = yaml_document_get_node(&doc, kv->key);
		if (k->type != YAML_SCALAR_NODE || strcmp((char *)k->data.scalar.value, "prices"))
			continue;
		if (table) {   /* a second table: which one is meant? */
			rc = bd_fail_at(err, BD_EINVAL, path, (int)k->start_mark.line + 1,
					(int)k->start_mark.column + 1,
					"`prices:` is given twice (first on line %d): give one table",
					(int)table_key->start_mark.line + 1);
			goto done;
		}
		table = yaml_document_get_node(&doc, kv->value);
		table_key = k;
	}
	if (!table || table->type != YAML_MAPPING_NODE) {
		rc = bd_fail_at(err, BD_EINVAL, path, 1, 1,
				"expected `prices:` a mapping of GPU name (or cpu) to USD per "
				"device-hour, e.g. prices: {\"NVIDIA A10\": 0.60, cpu: 0.05}");
		goto done;
	}
	for (yaml_node_pair_t *kv = table->data.mapping.pairs.start;
	     kv < table->data.mapping.pairs.top; kv++) {
		yaml_node_t *k = yaml_document_get_node(&doc, kv->key),
			    *v = yaml_document_get_node(&doc, kv->value);
		char *end = NULL;
		double usd = v->type == YAML_SCALAR_NODE
				     ? strtod((char *)v->data.scalar.value, &end) : -1;
		/* strtod takes nan and inf: no price */
		if (k->type != YAML_SCALAR_NODE || !end || end == (char *)v->data.scalar.value ||
		    *end || !(usd >= 0) || !isfinite(usd)) {
			rc = bd_fail_at(err, BD_EINVAL, path, (int)v->start_mark.line + 1,
					(int)v->start_mark.column + 1,
					"prices: '%s' needs a price in USD per hour (a finite number >= 0)",
					k->type == YAML_SCALAR_NODE ? (char *)k->data.scalar.value : "?");
			goto done;
		}
		/* a device priced twice: the first would win, silently */
		for (yaml_node_pair_t *prev = table->data.mapping.pairs.start; prev < kv; prev++) {
			yaml_node_t *pk = yaml_document_get_node(&doc, prev->key);
			if (!strcmp((char *)pk->data.scalar.value, (char *)k->data.scalar.value)) {
				rc = bd_fail_at(err, BD_EINVAL, path, (int)k->start_mark.line + 1,
						(int)k->start_mark.column + 1,
						"prices: '%s' is given twice (first on line %d): give "
						"one price", (char *)k->data.scalar.value,
						(int)pk->start_mark.line + 1);
				goto done;
			}
		}
		p->entries = xrealloc(p->entries, (p->n + 1) * sizeof(*p->entries));
		p->entries[p->n].device = xstrdup((char *)k->data.scalar.value);
		p->entries[p->n++].usd_per_hour = usd;
	}
done:
	yaml_document_delete(&doc);
	return rc;
}

int prices_load(const char *path, struct prices *p, struct bd_error *err)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (!f)
		return bd_fail_at(err, BD_EIO, path, 0, 0, "cannot read the prices file: %s",
				  strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {   /* libyaml: "input error" */
		fclose(f);
		return bd_fail_at(err, BD_EIO, path, 0, 0, "cannot read the prices file: it is a "
				  "directory");
	}
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int rc = prices_parse(&parser, path, p, err);
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}

int prices_load_options(const char *price_text, const char *path, const char *command,
			struct prices **out)
{
	struct bd_error err;
	double price = -1;   /* no --price */
	*out = NULL;
	if (price_text) {   /* a price, whatever its value: -1 is no way to say "none" */
		char *end = NULL;
		price = strtod(price_text, &end);
		if (end == price_text || *end || !(price >= 0 && isfinite(price))) {
			fprintf(stderr, "report %s: --price expects USD per device-hour, a finite number "
				">= 0, got '%s'\n", command, price_text);
			return 2;
		}
	}
	if (!price_text && !path)
		return -1;
	struct prices *p = xcalloc(1, sizeof(*p));
	p->fallback = price;
	if (path && prices_load(path, p, &err)) {
		char prog[64];
		snprintf(prog, sizeof(prog), "report %s", command);
		bd_error_print(prog, &err);
		prices_free(p);
		return 2;
	}
	*out = p;
	return -1;
}

int cost_table(struct db *db, const struct case_set *set, const struct prices *p, int pick,
	       const char *title, struct table *t, struct bd_error *err)
{
	table_init(t, title);
	size_t c_case = table_column(t, "case", "", 0), c_impl = table_column(t, "impl", "", 0),
	       c_device = table_column(t, "priced as", "", 0),
	       c_price = table_column(t, "price", "USD/h", 2),
	       c_samples = table_column(t, "samples/s", "", 2),
	       c_per_1k = table_column(t, "cost per 1K samples", "USD", 6),
	       c_case_cost = table_column(t, "case cost", "USD", 6);
	double run_cost = 0, run_ns = 0;
	size_t unpriced = 0;
	char missing[512] = "";
	/* a case measured under contention, or too unstable, is marked (a column only where one
	 * is): its samples/s, and so its cost per 1K samples, are not the code's */
	unsigned marked = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct case_mark m;
		if (set->rows[i].status != STATUS_OK)
			continue;
		case_mark_of(&set->rows[i], set->series[i].total, set->series[i].ntotal, &m);
		marked |= m.bits;
	}
	size_t c_mark = marked ? table_column(t, "mark", "", 0) : 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct case_row *c = &set->rows[i];
		char device[256];
		double usd;
		int rc = prices_device(db, c->run_id, c->device, device, sizeof(device), err);
		if (rc)
			return rc;
		if (prices_lookup(p, device, &usd)) {
			unpriced++;
			if (!strstr(missing, device) && strlen(missing) + strlen(device) + 8 < sizeof(missing))
				snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s'%s'",
					 missing[0] ? ", " : "", device);
			continue;
		}
		run_cost += cost_of_ns(usd, (double)c->elapsed_ns);
		run_ns += (double)c->elapsed_ns;
		if (c->status != STATUS_OK)
			continue;
		size_t n;
		const double *x = case_series_pick(&set->series[i], (enum series_pick)pick, &n);
		struct summary sum;
		summarize(x, n, &sum);
		double samples_s = sum.median > 0 ? (c->batch_size > 0 ? (double)c->batch_size : 1) /
							(sum.median / 1e9) : 0;
		size_t r = table_row(t);
		table_text(t, r, c_case, c->name);
		table_text(t, r, c_impl, c->impl);
		table_text(t, r, c_device, device);
		table_number(t, r, c_price, usd);
		if (samples_s > 0) {
			table_number(t, r, c_samples, samples_s);
			table_number(t, r, c_per_1k, cost_per_1k_samples(usd, samples_s));
		}
		table_number(t, r, c_case_cost, cost_of_ns(usd, (double)c->elapsed_ns));
		struct case_mark m;
		case_mark_of(c, set->series[i].total, set->series[i].ntotal, &m);
		if (m.bits) {
			char text[96];
			case_mark_text(&m, text, sizeof(text));
			table_text(t, r, c_mark, text);
		}
	}
	table_note(t, "cost of the run: %.6g USD for %.1f s of device time (every priced case's wall "
		      "time, setup and validation included)", run_cost, run_ns / 1e9);
	table_note(t, "samples/s: batch_size (1 without one) / median time of an iteration (%s); cost "
		      "per 1K samples = price per hour / 3600 / samples/s × 1000",
		   series_pick_names[pick]);
	case_mark_note(t, marked);
	if (unpriced)
		table_note(t, "%zu case%s without a price (no --price, and no entry for %s in the "
			      "prices file)", unpriced, unpriced == 1 ? "" : "s", missing);
	return 0;
}
