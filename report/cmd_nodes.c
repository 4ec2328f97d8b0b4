/* report/cmd_nodes.c: `report nodes` — node-to-node consistency. For every case key that ran on
 * more than one host (the latest ok case of each host, from any run of the database, e.g. the
 * runs of several nodes brought together by `runner merge`): per node the throughput, the median
 * time, the peak memory and what the GPU did while the case ran (NVML: hottest temperature,
 * lowest SM clock, throttle reasons), the spread across nodes, and a mark per metric, each node
 * against the other nodes:
 *   throughput:  the node's samples against the others' pooled, by compare_pair — out of bounds
 *                (✗) when slower beyond --throughput-band and significant at alpha / (the number
 *                of node-case comparisons) (Bonferroni: the false-alarm rate holds over the whole
 *                report); faster counts too from three nodes up (of two nodes that differ, the
 *                slower is the one flagged); ? when the data cannot tell;
 *   memory:      peak bytes within --memory-band of the others' median;
 *   temperature: within --temp-band degrees of the others' median (blank without a GPU).
 * Exit 1 when any node is out of bounds, 2 when nothing could be compared or some comparison
 * cannot tell (and none failed), 0 when every comparison passed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "opt.h"
#include "plot.h"
#include "report.h"
#include "xalloc.h"

#define NODES_THROUGHPUT_BAND_PCT 5
#define NODES_MEMORY_BAND_PCT 2
#define NODES_TEMP_BAND_C 10.0
/* Cases the chart shows at most (clustered bars get unreadable beyond). */
#define NODES_CHART_CASES 24

enum mark { MARK_NONE, MARK_PASS, MARK_FAIL, MARK_UNSURE };
static const char *const mark_text[] = {"", "✓", "✗", "?"};

/* One case key on one host. */
struct node_case {
	const struct case_row *row;
	const char *host;
	char device[256];            /* what it is priced by: its GPU's name, or cpu */
	double median_ns;            /* of the picked series */
	double samples_s, tokens_s;  /* tokens_s 0 when the case has no sequence */
	struct case_gpu gpu;
	struct case_series series;
	enum mark throughput, memory, temp;
	double delta;                /* throughput / the nodes' median throughput - 1 */
};

static int by_run_id(const void *key, const void *elem)
{
	int64_t id = *(const int64_t *)key, have = ((const struct run_row *)elem)->id;
	return (id > have) - (id < have);
}

static enum mark worst(enum mark a, enum mark b)
{
	static const int rank[] = {0, 1, 3, 2};
	return rank[a] >= rank[b] ? a : b;
}

/* The median of what the nodes but skip have (have[k] 0: node k has no figure); 0 for none. */
static double others_median(const double *value, const int *have, size_t n, size_t skip)
{
	double x[64];
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if (k != skip && have[k])
			x[m++] = value[k];
	return m ? median_inplace(x, m) : 0;
}

/* Verdicts of the nodes nc[0..n-1] of one case key (2 <= n <= 64), each against the others. */
static void judge(struct node_case *nc, size_t n, enum series_pick pick,
		  const struct verdict_rule *rule, double memory_band, double temp_band)
{
	double thr[64], mem[64], temp[64];
	int has_thr[64], has_mem[64], has_temp[64];
	for (size_t i = 0; i < n; i++) {
		thr[i] = nc[i].samples_s;
		mem[i] = (double)nc[i].row->peak_bytes;
		temp[i] = nc[i].gpu.temp_c;
		has_thr[i] = thr[i] > 0;
		has_mem[i] = mem[i] > 0;
		has_temp[i] = nc[i].gpu.known && temp[i] > 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct node_case *c = &nc[i];
		double thr_med = others_median(thr, has_thr, n, i);
		double mem_med = others_median(mem, has_mem, n, i);
		double temp_med = others_median(temp, has_temp, n, i);
		c->delta = thr_med > 0 ? c->samples_s / thr_med - 1 : 0;
		/* the others' samples, pooled */
		size_t nx, total = 0, m = 0, nmine;
		for (size_t k = 0; k < n; k++)
			if (k != i)
				case_series_pick(&nc[k].series, pick, &nx), total += nx;
		double *others = xcalloc(total, sizeof(*others));
		for (size_t k = 0; k < n; k++) {
			if (k == i)
				continue;
			const double *x = case_series_pick(&nc[k].series, pick, &nx);
			memcpy(others + m, x, nx * sizeof(*x));
			m += nx;
		}
		const double *mine = case_series_pick(&c->series, pick, &nmine);
		struct pair_result pr;
		/* slower than the rest is out of bounds; faster too where there is a rest to be
		 * faster than (3 nodes or more): of two nodes that differ, the slower one is flagged */
		if (compare_pair(others, m, mine, nmine, rule, &pr))
			c->throughput = MARK_UNSURE;
		else if (pr.verdict == VERDICT_SLOWER || (pr.verdict == VERDICT_FASTER && n >= 3))
			c->throughput = MARK_FAIL;
		else
			c->throughput = pr.verdict == VERDICT_UNSURE ? MARK_UNSURE : MARK_PASS;
		free(others);
		if (has_mem[i] && mem_med > 0)
			c->memory = fabs(mem[i] / mem_med - 1) <= memory_band ? MARK_PASS : MARK_FAIL;
		if (has_temp[i] && temp_med > 0)
			c->temp = fabs(temp[i] - temp_med) <= temp_band ? MARK_PASS : MARK_FAIL;
	}
}

/* (max - min) / median of x[0..n-1], in percent; 0 for fewer than 2. */
static double spread_pct(double *x, size_t n)
{
	if (n < 2)
		return 0;
	double lo = x[0], hi = x[0];
	for (size_t i = 1; i < n; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	double med = median_inplace(x, n);
	return med > 0 ? 100 * (hi - lo) / med : 0;
}

struct nodes_report {
	struct table per_node, per_case;
	size_t c_case, c_host, c_samples, c_tokens, c_median, c_peak, c_temp, c_clock, c_throttle,
		c_delta, c_thr, c_mem, c_tmp, c_cost;
	size_t s_case, s_nodes, s_thr, s_mem, s_temp, s_verdict;
	enum mark overall;
	size_t keys, failed_nodes;
	const struct prices *prices;
};

static void report_init(struct nodes_report *r, const struct prices *prices)
{
	table_init(&r->per_node, "per node");
	struct table *t = &r->per_node;
	r->c_case = table_column(t, "case", "", 0);
	r->c_host = table_column(t, "node", "", 0);
	r->c_samples = table_column(t, "samples/s", "", 2);
	r->c_tokens = table_column(t, "tokens/s", "", 0);
	r->c_median = table_column(t, "median", "ms", 3);
	r->c_peak = table_column(t, "peak mem", "MiB", 1);
	r->c_temp = table_column(t, "GPU temp", "°C", 0);
	r->c_clock = table_column(t, "SM clock", "MHz", 0);
	r->c_throttle = table_column(t, "throttle", "", 0);
	r->c_delta = table_column(t, "vs others", "%", 1);
	r->c_thr = table_column(t, "throughput", "", 0);
	r->c_mem = table_column(t, "memory", "", 0);
	r->c_tmp = table_column(t, "temp", "", 0);
	r->prices = prices;
	if (prices)
		r->c_cost = table_column(t, "cost per 1K samples", "USD", 6);
	table_init(&r->per_case, "spread across nodes");
	t = &r->per_case;
	r->s_case = table_column(t, "case", "", 0);
	r->s_nodes = table_column(t, "nodes", "", 0);
	r->s_thr = table_column(t, "throughput spread", "%", 1);
	r->s_mem = table_column(t, "memory spread", "%", 1);
	r->s_temp = table_column(t, "temp spread", "°C", 0);
	r->s_verdict = table_column(t, "verdict", "", 0);
	r->overall = MARK_NONE;
}

static void report_key(struct nodes_report *r, struct node_case *nc, size_t n)
{
	struct table *t = &r->per_node;
	double thr[64], mem[64], temp[64];
	size_t nmem = 0, ntemp = 0;
	enum mark key_mark = MARK_PASS;
	for (size_t i = 0; i < n; i++) {
		const struct node_case *c = &nc[i];
		size_t row = table_row(t);
		table_text(t, row, r->c_case, c->row->name);
		table_text(t, row, r->c_host, c->host);
		table_number(t, row, r->c_samples, c->samples_s);
		if (c->tokens_s > 0)
			table_number(t, row, r->c_tokens, c->tokens_s);
		table_number(t, row, r->c_median, c->median_ns / 1e6);
		if (c->row->peak_bytes > 0) {
			table_number(t, row, r->c_peak, (double)c->row->peak_bytes / (1 << 20));
			mem[nmem++] = (double)c->row->peak_bytes;
		}
		if (c->gpu.known) {
			if (c->gpu.temp_c > 0) {
				table_number(t, row, r->c_temp, c->gpu.temp_c);
				temp[ntemp++] = c->gpu.temp_c;
			}
			if (c->gpu.sm_clock_mhz > 0)
				table_number(t, row, r->c_clock, c->gpu.sm_clock_mhz);
			table_text(t, row, r->c_throttle, c->gpu.throttle[0] ? c->gpu.throttle : "none");
		}
		table_number(t, row, r->c_delta, 100 * c->delta);
		table_text(t, row, r->c_thr, mark_text[c->throughput]);
		table_text(t, row, r->c_mem, mark_text[c->memory]);
		table_text(t, row, r->c_tmp, mark_text[c->temp]);
		double price;
		if (r->prices && prices_lookup(r->prices, c->device, &price) == 0)
			table_number(t, row, r->c_cost, cost_per_1k_samples(price, c->samples_s));
		enum mark m = worst(worst(c->throughput, c->memory), c->temp);
		if (m == MARK_FAIL)
			r->failed_nodes++;
		key_mark = worst(key_mark, m);
		thr[i] = c->samples_s;
	}
	t = &r->per_case;
	size_t row = table_row(t);
	table_text(t, row, r->s_case, nc[0].row->name);
	table_number(t, row, r->s_nodes, (double)n);
	table_number(t, row, r->s_thr, spread_pct(thr, n));
	if (nmem >= 2)
		table_number(t, row, r->s_mem, spread_pct(mem, nmem));
	if (ntemp >= 2) {
		double lo = temp[0], hi = temp[0];
		for (size_t i = 1; i < ntemp; i++) {
			lo = temp[i] < lo ? temp[i] : lo;
			hi = temp[i] > hi ? temp[i] : hi;
		}
		table_number(t, row, r->s_temp, hi - lo);
	}
	table_text(t, row, r->s_verdict, mark_text[key_mark]);
	r->overall = worst(r->overall == MARK_NONE ? MARK_PASS : r->overall, key_mark);
	r->keys++;
}

/* The per-node throughput chart: one cluster of bars per case (relative to the nodes' median,
 * in percent), one bar per host. hosts: the distinct hosts, in order of appearance. */
static int nodes_chart(const char *dir, struct node_case *all, size_t nall, const size_t *key_start,
		       size_t nkeys, const char *const *hosts, size_t nhosts, struct bd_error *err)
{
	size_t ncat = nkeys < NODES_CHART_CASES ? nkeys : NODES_CHART_CASES;
	double *y = xcalloc(ncat * nhosts + 1, sizeof(*y));
	const char **cats = xcalloc(ncat + 1, sizeof(*cats));
	struct plot_series *series = xcalloc(nhosts + 1, sizeof(*series));
	for (size_t k = 0; k < ncat; k++) {
		size_t end = k + 1 < nkeys ? key_start[k + 1] : nall;
		cats[k] = all[key_start[k]].row->name;
		for (size_t h = 0; h < nhosts; h++)
			y[h * ncat + k] = NAN;
		for (size_t i = key_start[k]; i < end; i++)
			for (size_t h = 0; h < nhosts; h++)
				if (!strcmp(all[i].host, hosts[h]))
					y[h * ncat + k] = 100 * (1 + all[i].delta);
	}
	for (size_t h = 0; h < nhosts; h++)
		series[h] = (struct plot_series){.title = hosts[h], .y = y + h * ncat, .n = ncat};
	struct plot p = {
		.kind = PLOT_BARS, .title = "throughput per node (100% = the nodes' median)",
		.xlabel = "case", .ylabel = "throughput (% of median)", .series = series,
		.nseries = nhosts, .categories = cats, .has_hline = 1, .hline = 100,
	};
	char base[4096];
	snprintf(base, sizeof(base), "%s/nodes_throughput", dir);
	int rc = plot_write(&p, base, err);
	free(y);
	free(cats);
	free(series);
	return rc;
}

int cmd_nodes(struct cmd_line *cl)
{
	struct report_options o = REPORT_OPTIONS_INIT;
	double memory_band = NODES_MEMORY_BAND_PCT / 100.0, temp_band = NODES_TEMP_BAND_C;
	const char *chart_dir = NULL, *prices_path = NULL;
	double price = -1;
	o.rule.threshold = NODES_THROUGHPUT_BAND_PCT / 100.0;
	const struct opt_spec specs[] = {
		REPORT_OPT_DB(&o),
		{"throughput-band", 0, OPT_PERCENT, "PCT",
		 "a node's throughput may differ this much from the others' (default "
		 REPORT_STR(NODES_THROUGHPUT_BAND_PCT) ")", &o.rule.threshold},
		{"memory-band", 0, OPT_PERCENT, "PCT",
		 "its peak memory this much from the nodes' median (default "
		 REPORT_STR(NODES_MEMORY_BAND_PCT) ")", &memory_band},
		{"temp-band", 0, OPT_DOUBLE, "C",
		 "its GPU temperature this many degrees from the median (default 10)", &temp_band},
		REPORT_OPT_ALPHA(&o),
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		{"chart", 0, OPT_STRING, "DIR", "also write DIR/nodes_throughput.png and .svg", &chart_dir},
		REPORT_OPT_PRICE(&price),
		REPORT_OPT_PRICES(&prices_path),
		REPORT_OPT_FORMAT(&o, 0),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "nodes", "[options]",
		"Node-to-node consistency: every case key that ran on more than one host (the latest ok\n"
		"case of each), with each node's throughput, time, peak memory and, on GPUs, the\n"
		"temperature, SM clock and throttle reasons recorded while the case ran; the spread\n"
		"across nodes; and a mark per metric: throughput against the other nodes' samples\n"
		"(beyond the band and significant at alpha over all comparisons: ✗; cannot tell: ?),\n"
		"memory and temperature against the nodes' median. Exit status: 1 when a node is out of\n"
		"bounds, 2 when nothing could be compared or a comparison cannot tell, 0 otherwise."};
	struct db *db = NULL;
	struct run_row *runs = NULL;
	struct case_row *rows = NULL;
	struct node_case *all = NULL;
	size_t *key_start = NULL;
	const char **hosts = NULL;
	struct prices *prices = NULL;
	struct nodes_report r = {0};
	struct bd_error err;
	size_t nruns = 0, nrows = 0, nall = 0, nkeys = 0, nhosts = 0;
	int npos, fmt, pick;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	if ((status = verdict_rule_check(&o.rule, "nodes")) >= 0)
		return status;
	if ((fmt = report_format_arg(o.format, 0)) < 0 || (pick = series_pick_arg(o.phase)) < 0)
		return EXIT_USAGE;
	if (memory_band < 0 || temp_band < 0) {
		fprintf(stderr, "report nodes: --memory-band and --temp-band must not be negative\n");
		return EXIT_USAGE;
	}
	if ((status = prices_load_options(price, prices_path, "nodes", &prices)) >= 0)
		return status;
	status = EXIT_USAGE;
	if (report_open(o.db_path, NULL, &db, NULL) >= 0)
		goto done;
	struct case_filter filter = report_filter(&o);
	if (db_runs_list(db, &runs, &nruns, &err) ||
	    db_cases_by_key(db, NULL, o.suite, &rows, &nrows, &err) ||
	    case_rows_filter(rows, &nrows, &filter, "any run", &err)) {
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL);
		goto done;
	}
	all = xcalloc(nrows + 1, sizeof(*all));
	key_start = xcalloc(nrows + 1, sizeof(*key_start));
	hosts = xcalloc(nrows + 1, sizeof(*hosts));
	/* rows come grouped by case key, oldest run first: the latest ok case per host wins */
	for (size_t i = 0; i < nrows;) {
		size_t end = i, start = nall;
		while (end < nrows && !strcmp(rows[end].case_key, rows[i].case_key))
			end++;
		for (size_t k = i; k < end; k++) {
			const struct run_row *run =
				bsearch(&rows[k].run_id, runs, nruns, sizeof(*runs), by_run_id);
			if (!run || rows[k].status != STATUS_OK)
				continue;
			size_t h = start;
			while (h < nall && strcmp(all[h].host, run->hostname))
				h++;
			if (h == nall && nall - start < 64)
				nall++;
			if (h < nall)
				all[h] = (struct node_case){.row = &rows[k], .host = run->hostname};
		}
		if (nall - start < 2)
			nall = start;   /* one host: nothing to compare */
		else
			key_start[nkeys++] = start;
		i = end;
	}
	if (!nkeys) {
		fprintf(stderr, "report nodes: no case key has ok cases from more than one host in %s "
				"(merge the nodes' databases first: runner merge --db %s NODE.db...)\n",
			o.db_path, o.db_path);
		status = EXIT_USAGE;
		goto done;
	}
	/* every node-case comparison at alpha / m: the false-alarm rate holds over the report */
	struct verdict_rule rule = o.rule;
	rule.alpha = o.rule.alpha / (double)nall;
	for (size_t i = 0; i < nall; i++) {
		struct node_case *c = &all[i];
		if (case_series_load(db, c->row, &c->series, &err) ||
		    db_case_gpu_get(db, c->row->id, &c->gpu, &err) ||
		    prices_device(db, c->row->run_id, c->row->device, c->device, sizeof(c->device),
				  &err)) {
			status = report_error(&err, EXIT_FAIL);
			goto done;
		}
		size_t n;
		const double *x = case_series_pick(&c->series, pick, &n);
		double *copy = xcalloc(n, sizeof(*copy));
		if (n) {
			memcpy(copy, x, n * sizeof(*x));
			c->median_ns = median_inplace(copy, n);
		}
		free(copy);
		double per_iter = c->row->batch_size > 0 ? (double)c->row->batch_size : 1;
		c->samples_s = c->median_ns > 0 ? per_iter / (c->median_ns / 1e9) : 0;
		c->tokens_s = c->row->seq_len > 0 ? c->samples_s * (double)c->row->seq_len : 0;
		size_t h = 0;
		while (h < nhosts && strcmp(hosts[h], c->host))
			h++;
		if (h == nhosts)
			hosts[nhosts++] = c->host;
	}
	report_init(&r, prices);
	for (size_t k = 0; k < nkeys; k++) {
		size_t end = k + 1 < nkeys ? key_start[k + 1] : nall;
		judge(all + key_start[k], end - key_start[k], (enum series_pick)pick, &rule,
		      memory_band, temp_band);
		report_key(&r, all + key_start[k], end - key_start[k]);
	}
	table_note(&r.per_node, "samples/s: batch_size / median time of an iteration (%s); tokens/s: "
		   "× seq_len; the latest ok case of each node", series_pick_names[pick]);
	table_note(&r.per_node, "vs others: throughput against the other nodes' median; bounds: "
		   "throughput ±%.3g%% (the median against the other nodes' samples pooled, significant "
		   "by the Mann-Whitney U test at p < %.3g = alpha %.3g / %zu comparisons; of two nodes "
		   "the slower is flagged), memory ±%.3g%% and GPU temperature ±%.3g °C of the other "
		   "nodes' median; ✗ out of bounds, ? cannot tell",
		   100 * o.rule.threshold, rule.alpha, o.rule.alpha, nall, 100 * memory_band, temp_band);
	table_note(&r.per_case, "%zu case key%s on %zu nodes: %s", r.keys, r.keys == 1 ? "" : "s",
		   nhosts, r.overall == MARK_FAIL ? "a node is out of bounds"
			   : r.overall == MARK_UNSURE ? "some comparisons cannot tell"
						      : "every node within bounds");
	struct table tables[2] = {r.per_node, r.per_case};
	report_print((enum report_format)fmt, tables, 2);
	status = r.overall == MARK_FAIL ? EXIT_FAIL : r.overall == MARK_UNSURE ? EXIT_USAGE : EXIT_OK;
	if (chart_dir && nodes_chart(chart_dir, all, nall, key_start, nkeys, hosts, nhosts, &err)) {
		report_error(&err, 0);
		if (status == EXIT_OK)
			status = EXIT_FAIL;
	}
done:
	for (size_t i = 0; all && i < nall; i++)
		case_series_free(&all[i].series);
	table_free(&r.per_node);
	table_free(&r.per_case);
	free(all);
	free(key_start);
	free(hosts);
	prices_free(prices);
	db_case_rows_free(rows, nrows);
	db_run_rows_free(runs, nruns);
	db_close(db);
	return status;
}
