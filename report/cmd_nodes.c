/* report/cmd_nodes.c: `report nodes` — node-to-node consistency. For every case key that ran on
 * more than one host (from any run of the database, e.g. the runs of several nodes brought
 * together by `runner merge`), each node's runs of it (the runs of its latest code and sweep:
 * `runner run --repeat 3` on every node gives each node its run-to-run spread): per node the
 * throughput, the median time, the peak memory and what the GPU did while the case ran (NVML:
 * hottest temperature, lowest SM clock, throttle reasons), the spread across nodes, and a mark per
 * metric, each node against the other nodes:
 *   throughput:  the run is the unit: the node's mean log median against the other nodes', with
 *                the noise between runs pooled over the nodes and cases (report/noise.h) —
 *                out of bounds (✗) when the difference is beyond --throughput-band and
 *                significant at alpha, Benjamini-Hochberg over every node-case comparison
 *                (slower; faster too from three nodes up: of two nodes that differ, the slower
 *                is flagged; from three nodes up, only when it also differs the same way from
 *                most of the other nodes one by one); within bounds (✓) when its 95%
 *                interval lies inside the band;
 *                ~ when neither (the runs cannot tell a difference of the band from their
 *                spread); contended when the node's runs waited for a CPU (--cpu-wait-level):
 *                a busy node is neither passed nor failed;
 *   memory:      peak bytes within --memory-band of the others' median;
 *   temperature: within --temp-band degrees of the others' median (blank without a GPU);
 *                either off, from three nodes up, only when also off from most nodes one by one.
 * A node with no ok case of a key other nodes ran (failed, skipped, not reached) is not compared.
 * Exit 1 when any node is out of bounds; 2 when nothing could be compared (a node-case too), the
 * noise between runs could not be measured (one run per node), a node's runs were contended (and
 * none failed), or the database's data could not be read; 0 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "escape.h"
#include "history.h"
#include "opt.h"
#include "plot.h"
#include "report.h"
#include "xalloc.h"

#define NODES_THROUGHPUT_BAND_PCT 5
#define NODES_MEMORY_BAND_PCT 2
#define NODES_TEMP_BAND_C 10.0
/* Cases the chart shows at most (clustered bars get unreadable beyond). */
#define NODES_CHART_CASES 24
/* A database whose data cannot be read (damaged, a table unreadable) cannot tell: never 1, the
 * verdict "a node is out of bounds", which a CI job gating on this reads as a slow node. */
#define EXIT_CANNOT_TELL 2

enum mark { MARK_NONE, MARK_PASS, MARK_FAIL, MARK_UNSURE, MARK_NOISE, MARK_CONTENDED };
enum { LEFT_OTHER_CODE = 1, LEFT_OTHER_JOB };
static const char *const mark_text[] = {"", "✓", "✗", "?", "~", "contended"};
/* A node's runs of a case: the runs of its latest code (commit) and sweep, the latest this many. */
#define NODES_RUNS_MAX 16

/* One case key on one host. */
struct node_case {
	const struct case_row *row;  /* the latest run's (memory, GPU, price) */
	const struct case_row *runs[NODES_RUNS_MAX];   /* every run's, latest first */
	size_t nruns;
	double y;                    /* mean over the runs of log(median time) */
	double wait;                 /* mean cases.cpu_wait of the runs; -1 unknown */
	char sessions[NODES_RUNS_MAX][DB_SESSION_MAX];
	const char *host;
	char device[256];            /* what it is priced by: its GPU's name, or cpu */
	double median_ns;            /* of the picked series */
	double samples_s, tokens_s;  /* tokens_s 0 when the case has no sequence */
	struct case_gpu gpu;
	enum mark throughput, memory, temp;
	double delta;                /* throughput / the nodes' median throughput - 1 */
	int left_out;                /* not compared, its runs kept out of the others' baseline
					(nruns 0, shown: code_runs): LEFT_OTHER_CODE, its latest code
					or sweep is not the key's newest (a difference may be the
					code's); LEFT_OTHER_JOB, its latest run is not of the
					every-node job of the key's newest run (an older job's) */
	size_t code_runs;
};

static int by_session_id(const void *a, const void *b)
{
	int64_t x = ((const struct run_session *)a)->id, y = ((const struct run_session *)b)->id;
	return (x > y) - (x < y);
}


/* Whether runs of run's group were made on another host too (an every-node job's group). */
static int group_spans_hosts(const struct run_row *runs, size_t nruns, const struct run_row *run)
{
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].group_id && !strcmp(runs[i].group_id, run->group_id) &&
		    !db_text_same(runs[i].hostname, run->hostname))
			return 1;
	return 0;
}


static enum mark worst(enum mark a, enum mark b)
{
	static const int rank[] = {0, 1, 4, 3, 2, 3};
	return rank[a] >= rank[b] ? a : b;
}

/* The median of what the nodes but skip have (have[k] 0: node k has no figure); 0 for none. */
static double others_median(const double *value, const int *have, size_t n, size_t skip)
{
	double *x = xcalloc(n + 1, sizeof(*x));
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if (k != skip && have[k])
			x[m++] = value[k];
	double median = m ? median_inplace(x, m) : 0;
	free(x);
	return median;
}

/* Whether node i's figure is off (beyond band: a fraction when relative, else a difference) from
 * most of the other nodes' one by one, where there are two others or more (else 1). Beside one
 * odd node the others' median of a healthy node of three is the mean of the odd node and a
 * healthy one: half the odd one's difference away, which a band of less flagged. */
static int off_from_most(const double *value, const int *have, size_t n, size_t i, double band,
			 int relative)
{
	size_t others = 0, off = 0;
	for (size_t k = 0; k < n; k++)
		if (k != i && have[k]) {
			others++;
			off += (relative ? fabs(value[i] / value[k] - 1) : fabs(value[i] - value[k])) >
			       band;
		}
	return others < 2 || 2 * off > others;
}

/* The throughput comparison of node i of nc[0..n-1] (one case key) against the others (only <
 * n: against node only alone): the node's runs as the candidate, the other nodes' runs as the
 * baseline (their log medians as in `report compare` across runs), into *pr (a family of one;
 * decided with the report's family). */
static void judge_throughput(const struct node_case *nc, size_t n, size_t i, size_t only,
			     const struct noise_model *m, const struct noise_data *d,
			     const struct verdict_rule *rule, struct pair_result *pr)
{
	const char *mine[NODES_RUNS_MAX], **others = xcalloc(n * NODES_RUNS_MAX, sizeof(*others));
	size_t nmine = 0, nothers = 0;
	double others_y = 0, others_runs = 0, wait = 0;
	size_t waits = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t r = 0; r < nc[k].nruns; r++) {
			if (k == i) {
				mine[nmine++] = nc[k].sessions[r];
			} else if (only >= n || k == only) {
				others[nothers++] = nc[k].sessions[r];
				others_y += nc[k].y;
				others_runs++;
			}
		}
	for (size_t k = 0; k < n; k++)
		if (k != i && (only >= n || k == only) && nc[k].wait >= 0) {
			wait += nc[k].wait;
			waits++;
		}
	struct noise_side b = {others, nothers}, c = {mine, nmine};
	double var, df;
	noise_diff_var(m, noise_data_find(d, nc[i].row->case_key), &b, &c, 0, 0, &var, &df);
	memset(pr, 0, sizeof(*pr));
	compare_modeled(nc[i].y - others_y / others_runs, var, df, 0, rule, pr);
	pr->runs_base = nothers;
	pr->runs_cand = nmine;
	pr->wait_cand = nc[i].wait;
	pr->wait_base = waits ? wait / (double)waits : -1;
	free(others);
}

/* The marks of the nodes nc[0..n-1] of one case key (n >= 2) from their throughput results
 * (decided with the report's family) and their memory and temperature against the others. */
static void judge(struct node_case *nc, size_t n, const struct pair_result *results,
		  double wait_level, double memory_band, double temp_band)
{
	double *thr = xcalloc(3 * n, sizeof(*thr)), *mem = thr + n, *temp = thr + 2 * n;
	int *has_thr = xcalloc(3 * n, sizeof(*has_thr)), *has_mem = has_thr + n,
	    *has_temp = has_thr + 2 * n;
	size_t compared = 0;   /* nodes with runs: those whose throughput was compared */
	for (size_t i = 0; i < n; i++)
		compared += nc[i].nruns > 0;
	for (size_t i = 0; i < n; i++) {
		thr[i] = nc[i].samples_s;
		mem[i] = (double)nc[i].row->peak_bytes;
		temp[i] = nc[i].gpu.temp_c;
		/* a node of other code is neither judged nor part of the others' median */
		has_thr[i] = thr[i] > 0 && !nc[i].left_out;
		has_mem[i] = mem[i] > 0 && !nc[i].left_out;
		has_temp[i] = nc[i].gpu.known && temp[i] > 0 && !nc[i].left_out;
	}
	for (size_t i = 0; i < n; i++) {
		struct node_case *c = &nc[i];
		const struct pair_result *pr = &results[i];
		double thr_med = others_median(thr, has_thr, n, i);
		double mem_med = others_median(mem, has_mem, n, i);
		double temp_med = others_median(temp, has_temp, n, i);
		c->delta = c->samples_s > 0 && thr_med > 0 && !c->left_out ? c->samples_s / thr_med - 1
										   : 0;
		/* slower than the rest is out of bounds; faster too where there is a rest to be
		 * faster than (3 compared nodes or more): of two nodes that differ, the slower one is
		 * flagged (a third node not compared, ?, is no rest) */
		if (pr->verdict == VERDICT_SLOWER || (pr->verdict == VERDICT_FASTER && compared >= 3))
			c->throughput = MARK_FAIL;
		else if (pr->verdict == VERDICT_CONTENDED && pr->log_change > 0)
			c->throughput = MARK_CONTENDED;
		else if (pr->verdict == VERDICT_SAME)
			c->throughput = MARK_PASS;
		else if (pr->verdict == VERDICT_INSUFFICIENT)
			c->throughput = MARK_UNSURE;
		else
			c->throughput = MARK_NOISE;
		/* a node whose runs waited for a CPU is not vouched for, slow or not */
		if (c->throughput != MARK_FAIL && c->wait >= wait_level && wait_level < 1)
			c->throughput = MARK_CONTENDED;
		if (has_mem[i] && mem_med > 0)
			c->memory = fabs(mem[i] / mem_med - 1) <= memory_band ||
					    !off_from_most(mem, has_mem, n, i, memory_band, 1)
				    ? MARK_PASS
				    : MARK_FAIL;
		if (has_temp[i] && temp_med > 0)
			c->temp = fabs(temp[i] - temp_med) <= temp_band ||
					  !off_from_most(temp, has_temp, n, i, temp_band, 0)
				  ? MARK_PASS
				  : MARK_FAIL;
	}
	free(thr);
	free(has_thr);
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
	size_t c_case, c_host, c_runs, c_samples, c_tokens, c_median, c_peak, c_temp, c_clock, c_throttle,
		c_delta, c_thr, c_mem, c_tmp, c_cost;
	size_t s_case, s_nodes, s_thr, s_mem, s_temp, s_verdict;
	enum mark overall;
	size_t keys, failed_nodes;
	/* throughput marks ~ (these runs cannot tell a difference of the band), and those of them
	 * whose difference lies beyond the band (--lenient passes the others) */
	size_t noise, noise_beyond;
	double band;
	const struct prices *prices;
};

static void report_init(struct nodes_report *r, const struct prices *prices)
{
	table_init(&r->per_node, "per node");
	struct table *t = &r->per_node;
	r->c_case = table_column(t, "case", "", 0);
	r->c_host = table_column(t, "node", "", 0);
	r->c_runs = table_column(t, "runs", "", 0);
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
	double *thr = xcalloc(3 * n, sizeof(*thr)), *mem = thr + n, *temp = thr + 2 * n;
	size_t nthr = 0, nmem = 0, ntemp = 0;
	enum mark key_mark = MARK_PASS;
	for (size_t i = 0; i < n; i++) {
		const struct node_case *c = &nc[i];
		size_t row = table_row(t);
		table_text(t, row, r->c_case, c->row->name);
		table_text(t, row, r->c_host, c->host);
		table_number(t, row, r->c_runs, (double)(c->left_out ? c->code_runs : c->nruns));
		if (c->samples_s > 0)   /* a node-case not compared (?) has no figure, not 0 */
			table_number(t, row, r->c_samples, c->samples_s);
		if (c->tokens_s > 0)
			table_number(t, row, r->c_tokens, c->tokens_s);
		if (c->median_ns > 0)
			table_number(t, row, r->c_median, c->median_ns / 1e6);
		/* a node of other code: its figures shown, out of the spread across nodes */
		if (c->row->peak_bytes > 0) {
			table_number(t, row, r->c_peak, (double)c->row->peak_bytes / (1 << 20));
			if (!c->left_out)
				mem[nmem++] = (double)c->row->peak_bytes;
		}
		if (c->gpu.known) {
			if (c->gpu.temp_c > 0) {
				table_number(t, row, r->c_temp, c->gpu.temp_c);
				if (!c->left_out)
					temp[ntemp++] = c->gpu.temp_c;
			}
			if (c->gpu.sm_clock_mhz > 0)
				table_number(t, row, r->c_clock, c->gpu.sm_clock_mhz);
			table_text(t, row, r->c_throttle, c->gpu.throttle[0] ? c->gpu.throttle : "none");
		}
		if (c->samples_s > 0 && !c->left_out)
			table_number(t, row, r->c_delta, 100 * c->delta);
		table_text(t, row, r->c_thr, mark_text[c->throughput]);
		table_text(t, row, r->c_mem, mark_text[c->memory]);
		table_text(t, row, r->c_tmp, mark_text[c->temp]);
		double price;
		if (r->prices && c->samples_s > 0 && prices_lookup(r->prices, c->device, &price) == 0)
			table_number(t, row, r->c_cost, cost_per_1k_samples(price, c->samples_s));
		enum mark m = worst(worst(c->throughput, c->memory), c->temp);
		if (m == MARK_FAIL)
			r->failed_nodes++;
		if (c->throughput == MARK_NOISE) {
			r->noise++;
			r->noise_beyond += !(fabs(c->delta) <= r->band);
		}
		key_mark = worst(key_mark, m);
		if (c->samples_s > 0 && !c->left_out)   /* not compared (?): no throughput */
			thr[nthr++] = c->samples_s;
	}
	t = &r->per_case;
	size_t row = table_row(t);
	table_text(t, row, r->s_case, nc[0].row->name);
	table_number(t, row, r->s_nodes, (double)n);
	if (nthr >= 2)
		table_number(t, row, r->s_thr, spread_pct(thr, nthr));
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
	free(thr);
}

/* The table that opens the report: a line per node — how many cases it was compared on and
 * which put it out of bounds ("n2 | 7 | 7 | slow on 7 of 7 cases — flash ..., naive ..."). */
#define NODES_NAMED 3   /* out-of-bounds cases named on a node's line, at most */
static void nodes_summary(const struct node_case *all, size_t nall, const char *const *hosts,
			  const size_t *missing, size_t nhosts, struct table *t)
{
	table_init(t, "nodes");
	size_t c_node = table_column(t, "node", "", 0), c_cases = table_column(t, "cases", "", 0),
	       c_out = table_column(t, "out of bounds", "", 0),
	       c_line = table_column(t, "summary", "", 0);
	for (size_t h = 0; h < nhosts; h++) {
		/* what put it out: slow, fast, memory, temperature; what left it open */
		size_t cases = 0, out = 0, slow = 0, fast = 0, memory = 0, temp = 0, pass = 0, open = 0,
		       busy = 0;
		struct strbuf line = STRBUF_INIT, named = STRBUF_INIT;
		for (size_t i = 0; i < nall; i++) {
			const struct node_case *c = &all[i];
			if (strcmp(c->host, hosts[h]))
				continue;
			cases++;
			int bad = c->throughput == MARK_FAIL || c->memory == MARK_FAIL ||
				  c->temp == MARK_FAIL;
			slow += c->throughput == MARK_FAIL && c->delta < 0;
			fast += c->throughput == MARK_FAIL && c->delta >= 0;
			memory += c->memory == MARK_FAIL;
			temp += c->temp == MARK_FAIL;
			pass += !bad && c->throughput == MARK_PASS;
			busy += !bad && c->throughput == MARK_CONTENDED;
			open += !bad && c->throughput != MARK_PASS && c->throughput != MARK_CONTENDED;
			if (bad && out++ < NODES_NAMED)
				sb_addf(&named, "%s%s", out > 1 ? ", " : "", c->row->name);
		}
		cases += missing[h];
		const struct {
			size_t n;
			const char *what;
		} parts[] = {{slow, "slow"}, {fast, "fast"}, {memory, "peak memory off"},
			     {temp, "GPU temperature off"},
			     {busy, "contended (waited for a CPU)"}, {open, "cannot tell"},
			     {missing[h], "no ok case (failed or not run; not compared)"},
			     {pass, "within bounds"}};
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
			if (parts[k].n)
				sb_addf(&line, "%s%s on %zu of %zu case%s", line.len ? "; " : "",
					parts[k].what, parts[k].n, cases, cases == 1 ? "" : "s");
		if (out)
			sb_addf(&line, " — %s%s", sb_str(&named), out > NODES_NAMED ? ", ..." : "");
		size_t row = table_row(t);
		table_text(t, row, c_node, hosts[h]);
		table_number(t, row, c_cases, (double)cases);
		table_number(t, row, c_out, (double)out);
		table_text(t, row, c_line, sb_str(&line));
		sb_free(&line);
		sb_free(&named);
	}
	table_note(t, "a case is out of bounds on a node when its throughput (slow, or fast among three "
		      "nodes or more), peak memory or GPU temperature is; the tables below say by how "
		      "much");
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
				if (!strcmp(all[i].host, hosts[h]) && all[i].samples_s > 0)
					y[h * ncat + k] = 100 * (1 + all[i].delta);
	}
	for (size_t h = 0; h < nhosts; h++)
		series[h] = (struct plot_series){.title = hosts[h], .y = y + h * ncat, .n = ncat};
	char title[160] = "throughput per node (100% = the other nodes' median)";
	if (ncat < nkeys)
		snprintf(title, sizeof(title), "throughput per node (100%% = the other nodes' median): "
			 "the first %zu of %zu cases", ncat, nkeys);   /* says what it leaves out */
	struct plot p = {
		.kind = PLOT_BARS, .title = title,
		.xlabel = "case", .ylabel = "throughput (% of the other nodes' median)", .series = series,
		.nseries = nhosts, .categories = cats, .has_hline = 1, .hline = 100,
	};
	char base[4096];
	snprintf(base, sizeof(base), "%s/nodes_throughput", dir);
	int rc = output_dir_make(dir, err) ? -1 : plot_write(&p, base, err);
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
	const char *price = NULL;   /* --price: parsed by prices_load_options */
	int lenient = 0;
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
		{"run-noise", 0, OPT_PERCENT, "PCT",
		 "run-to-run spread assumed where nothing measures it (default "
		 REPORT_STR(NOISE_RUN_NOISE_PCT) ")", &o.rule.assumed.run_noise},
		{"cpu-wait-level", 0, OPT_PERCENT, "PCT",
		 "a node whose runs waited for a CPU PCT of their time is contended (default "
		 REPORT_STR(REPORT_CPU_WAIT_LEVEL_PCT) "; 100: off)", &o.rule.cpu_wait_level},
		REPORT_OPT_PHASE(&o),
		REPORT_OPT_SUITE(&o),
		REPORT_OPT_WHERE(&o),
		{"lenient", 0, OPT_FLAG, NULL,
		 "pass a throughput these runs cannot tell (~) when its difference is within the band "
		 "(exit 0, not 2)", &lenient},
		{"chart", 0, OPT_STRING, "DIR", "also write DIR/nodes_throughput.png and .svg", &chart_dir},
		REPORT_OPT_PRICE(&price),
		REPORT_OPT_PRICES(&prices_path),
		REPORT_OPT_FORMAT(&o, 0),
		{0},
	};
	static const struct cmd_usage usage = {
		REPORT_PROG, "nodes", "[options]",
		"Node-to-node consistency: every case key that ran on more than one host, with each\n"
		"node's runs of it (those of its latest commit and sweep: `runner run --repeat 3` on every\n"
		"node), its throughput, time, peak memory and, on GPUs, the temperature, SM clock and\n"
		"throttle reasons recorded while the case ran; the spread across nodes; and a mark per\n"
		"metric. Throughput: the run is the unit, the node's runs against the other nodes' with\n"
		"the noise between runs the repeated runs show: out of bounds (✗) when the difference is\n"
		"beyond the band and significant (Benjamini-Hochberg over all comparisons, alpha);\n"
		"within (✓) when its 95% interval lies inside the band; ~ when neither; contended when\n"
		"the node's runs waited for a CPU. Memory and temperature against the nodes' median.\n"
		"Exit status: 1 when a node is out of bounds, 2 when nothing could be compared, a\n"
		"node-case was not compared (? in the table: too few samples, a case the node\n"
		"lacks or only it ran, or whose latest run on the node is of other code or sweep\n"
		"than the case's newest run, or not of its every-node job), the database's data\n"
		"cannot be read, the noise between runs\n"
		"is not measured (one run per node), a node's runs were contended, or a throughput\n"
		"is ~ (--lenient: ~ with a difference beyond the band), 0 otherwise."};
	struct db *db = NULL;
	struct run_row *runs = NULL;
	struct case_row *rows = NULL;
	struct node_case *all = NULL;
	size_t *key_start = NULL;
	const char **hosts = NULL;
	char *host_mixed = NULL;   /* per host: some case's runs are of more than one system */
	struct strbuf code_example = STRBUF_INIT;   /* a case key whose nodes ran different code */
	struct strbuf other_example = STRBUF_INIT;  /* node-cases not of the key's newest code */
	struct strbuf job_example = STRBUF_INIT;    /* node-cases not of the key's newest job */
	size_t *key_rows = NULL;   /* per key: its first row in rows (rows of a key are adjacent) */
	size_t *missing = NULL;    /* per host: keys other nodes ran that it has no ok case of */
	size_t *single_rows = NULL, nsingle = 0;   /* keys of one host with ok cases: first row */
	const char **single_host = NULL;           /* and that host */
	struct strbuf missing_example = STRBUF_INIT;
	struct prices *prices = NULL;
	struct nodes_report r = {0};
	struct run_session *sessions = NULL;
	size_t nsessions = 0;
	struct noise_data noise = {0};
	struct noise_model model = {0};
	struct pair_result *results = NULL, **family = NULL;
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
	if (!(memory_band >= 0 && temp_band >= 0)) {   /* written so that a NaN fails too */
		fprintf(stderr, "report nodes: --memory-band and --temp-band must be numbers, 0 or more\n");
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
		status = report_error(&err, err.code == BD_EINVAL ? EXIT_USAGE : EXIT_CANNOT_TELL);
		goto done;
	}
	history_rows_order(runs, nruns, rows, nrows);   /* a node's latest run is its newest in time */
	all = xcalloc(nrows + 1, sizeof(*all));
	key_start = xcalloc(nrows + 1, sizeof(*key_start));
	key_rows = xcalloc(nrows + 1, sizeof(*key_rows));
	single_rows = xcalloc(nrows + 1, sizeof(*single_rows));
	single_host = xcalloc(nrows + 1, sizeof(*single_host));
	hosts = xcalloc(nrows + 1, sizeof(*hosts));
	host_mixed = xcalloc(nrows + 1, sizeof(*host_mixed));
	if (db_run_sessions(db, 0, 0, &sessions, &nsessions, &err)) {
		status = report_error(&err, EXIT_CANNOT_TELL);
		goto done;
	}
	qsort(sessions, nsessions, sizeof(*sessions), by_session_id);
	/* rows come grouped by case key, oldest run first: per host its latest ok case, and the
	 * older ok cases of runs of the same code (commit) and sweep */
	for (size_t i = 0; i < nrows;) {
		size_t end = i, start = nall;
		while (end < nrows && !strcmp(rows[end].case_key, rows[i].case_key))
			end++;
		for (size_t k = end; k-- > i;) {
			const struct run_row *run = db_run_find(runs, nruns, rows[k].run_id);
			if (!run || rows[k].status != STATUS_OK)
				continue;
			size_t h = start;
			while (h < nall && strcmp(all[h].host, run->hostname))
				h++;
			if (h == nall) {
				all[nall++] = (struct node_case){.row = &rows[k], .host = run->hostname};
			}
			struct node_case *c = &all[h];
			const struct run_row *latest = db_run_find(runs, nruns, c->row->run_id);
			if (c->nruns && c->runs[c->nruns - 1]->run_id == rows[k].run_id) {
				/* a run that measured the key twice is one run: its first ok case (rows
				 * of a run come in ord order, walked backwards here) */
				if (c->row == c->runs[c->nruns - 1])
					c->row = &rows[k];
				c->runs[c->nruns - 1] = &rows[k];
				continue;
			}
			if (c->nruns >= NODES_RUNS_MAX || !db_run_same_code(latest, run))
				continue;
			c->runs[c->nruns++] = &rows[k];
		}
		if (nall - start < 2) {
			if (nall > start) {   /* one host: nothing to compare, but other hosts lack it */
				single_rows[nsingle] = i;
				single_host[nsingle++] = all[start].host;
			}
			nall = start;
		} else {
			key_rows[nkeys] = i;
			key_start[nkeys++] = start;
		}
		i = end;
	}
	if (!nkeys) {
		/* the hosts with ok cases: one (merge the others in), or several that share no case */
		const char *first = NULL, *second = NULL;
		for (size_t k = 0; k < nsingle && !second; k++)
			if (!first)
				first = single_host[k];
			else if (strcmp(first, single_host[k]))
				second = single_host[k];
		if (second) {   /* names from the database: their control characters as \xHH */
			char *a = escape_controls(first), *b = escape_controls(second);
			fprintf(stderr, "report nodes: no case key has ok cases from more than one host in "
					"%s: hosts such as %s and %s ran no case in common (run the same "
					"sweep on every node)\n", o.db_path, a, b);
			free(a);
			free(b);
		} else
			fprintf(stderr, "report nodes: no case key has ok cases from more than one host "
					"in %s (merge the nodes' databases first: runner merge --db %s "
					"NODE.db...)\n", o.db_path, o.db_path);
		status = EXIT_USAGE;
		goto done;
	}
	size_t single = 0;   /* nodes with one run of a case */
	size_t mixed = 0;    /* node-cases whose runs are of more than one system */
	for (size_t i = 0; i < nall; i++) {
		struct node_case *c = &all[i];
		if (db_case_gpu_get(db, c->row->id, &c->gpu, &err) ||
		    prices_device(db, c->row->run_id, c->row->device, c->device, sizeof(c->device),
				  &err)) {
			status = report_error(&err, EXIT_CANNOT_TELL);
			goto done;
		}
		size_t h = 0;
		while (h < nhosts && strcmp(hosts[h], c->host))
			h++;
		if (h == nhosts)
			hosts[nhosts++] = c->host;
		/* each run's log median: one sample of the node's throughput */
		size_t used = 0, waits = 0;
		double sum = 0, wait = 0;
		for (size_t r = 0; r < c->nruns; r++) {
			struct case_series series;
			double y, wv;
			if (case_series_load(db, c->runs[r], &series, &err)) {
				status = report_error(&err, EXIT_CANNOT_TELL);
				goto done;
			}
			int bad = noise_run_y(&series, pick, &y, &wv);
			case_series_free(&series);
			struct run_session key = {.id = c->runs[r]->run_id};
			const struct run_session *s =
				bsearch(&key, sessions, nsessions, sizeof(*sessions), by_session_id);
			if (bad || !s)
				continue;
			noise_session_key(s->group_id, s->uuid, c->sessions[used]);
			noise_data_add_run(&noise, c->row->case_key, (int)h + 1, c->sessions[used], "",
					   s->started_at, y);
			c->runs[used++] = c->runs[r];
			sum += y;
			if (c->runs[r]->cpu_wait >= 0) {
				wait += c->runs[r]->cpu_wait;
				waits++;
			}
		}
		c->nruns = used;
		/* runs of one node name made on more than one system (another machine of the same
		 * name, or this one changed): compared as one node's, and said so */
		for (size_t r = 1; r < used; r++)
			if (db_run_find(runs, nruns, c->runs[r]->run_id)->system_id !=
			    db_run_find(runs, nruns, c->runs[0]->run_id)->system_id) {
				mixed++;
				host_mixed[h] = 1;
				break;
			}
		c->y = used ? sum / (double)used : 0;
		c->wait = waits ? wait / (double)waits : -1;
		c->median_ns = used ? exp(c->y) : 0;
		single += used == 1;
		double per_iter = c->row->batch_size > 0 ? (double)c->row->batch_size : 1;
		c->samples_s = c->median_ns > 0 ? per_iter / (c->median_ns / 1e9) : 0;
		c->tokens_s = c->row->seq_len > 0 ? c->samples_s * (double)c->row->seq_len : 0;
	}
	/* a node of the report with no ok case of a key that other nodes ran (its runs of it failed,
	 * were skipped, or never reached it): not compared, so cannot tell, never a silent pass */
	missing = xcalloc(nhosts + 1, sizeof(*missing));
	size_t nmissing = 0;
	for (size_t k = 0; k < nkeys + nsingle; k++) {
		/* the compared keys, then those that one node alone has ok cases of */
		size_t start = k < nkeys ? key_start[k] : 0,
		       end = k + 1 < nkeys ? key_start[k + 1] : k < nkeys ? nall : 0;
		size_t lo = k < nkeys ? key_rows[k] : single_rows[k - nkeys], hi = lo;
		while (hi < nrows && !strcmp(rows[hi].case_key, rows[lo].case_key))
			hi++;
		const char *only = k < nkeys ? NULL : single_host[k - nkeys];
		size_t h0 = 0;
		while (only && h0 < nhosts && strcmp(hosts[h0], only))
			h0++;
		if (only && h0 == nhosts)
			continue;   /* a host of no compared key: not one of the report's nodes */
		for (size_t h = 0; h < nhosts; h++) {
			size_t i = start;
			while (i < end && strcmp(all[i].host, hosts[h]))
				i++;
			if (i < end || (only && h == h0))
				continue;
			const struct case_row *latest = NULL;   /* the node's latest case of the key */
			for (size_t j = hi; j-- > lo && !latest;) {
				const struct run_row *run = db_run_find(runs, nruns, rows[j].run_id);
				if (run && !strcmp(run->hostname, hosts[h]))
					latest = &rows[j];
			}
			missing[h]++;
			if (nmissing++ < NODES_NAMED)
				sb_addf(&missing_example, "%s%s: %s %s", nmissing > 1 ? "; " : "", hosts[h],
					rows[lo].name,
					latest ? status_name((enum bd_status)latest->status) : "not run");
		}
	}
	/* case keys whose nodes ran different code or sweeps: a difference may be the code's, not
	 * the node's. The nodes whose latest code and sweep are the key's newest (the newest run's)
	 * are compared; the others are not (?, cannot tell): a node left out of tonight's job kept
	 * last week's runs, and a slow node on old code beside a slower new code read "within". */
	size_t mixed_code = 0, other_code = 0;
	for (size_t k = 0; k < nkeys; k++) {
		size_t start = key_start[k], end = k + 1 < nkeys ? key_start[k + 1] : nall;
		const struct run_row *first = db_run_find(runs, nruns, all[start].row->run_id);
		size_t i = start + 1;
		while (i < end &&
		       db_run_same_code(first, db_run_find(runs, nruns, all[i].row->run_id)))
			i++;
		if (i == end)
			continue;
		const struct run_row *newest = first;
		for (size_t j = start + 1; j < end; j++) {
			const struct run_row *run = db_run_find(runs, nruns, all[j].row->run_id);
			if (db_run_time_cmp(run, newest) > 0)
				newest = run;
		}
		for (size_t j = start; j < end; j++)
			if (!db_run_same_code(newest, db_run_find(runs, nruns, all[j].row->run_id))) {
				all[j].left_out = LEFT_OTHER_CODE;
				all[j].code_runs = all[j].nruns;
				all[j].nruns = 0;
				if (other_code++ < NODES_NAMED)
					sb_addf(&other_example, "%s%s: %s", other_code > 1 ? "; " : "",
						all[j].host, all[j].row->name);
			}
		if (mixed_code++)
			continue;
		sb_addf(&code_example, "%s:", all[start].row->name);
		for (i = start; i < end && i < start + NODES_NAMED; i++) {
			const struct run_row *run = db_run_find(runs, nruns, all[i].row->run_id);
			sb_addf(&code_example, " %s %.7s%s/%.7s%s", all[i].host,
				run->git_commit ? run->git_commit : "?", run->git_dirty == 1 ? "+dirty" : "",
				run->sweep_hash ? run->sweep_hash : "?", i + 1 < end ? "," : "");
		}
		if (end - start > NODES_NAMED)
			sb_add(&code_example, " ...");
	}
	/* every-node jobs (`runner slurm --nodes`: slurm-JOBID; `runner kube`: NAME-UID): one group
	 * over several hosts. Where a key's newest run is of one, a node whose latest run of the key
	 * is not of it was left out of that job (its pod or task failed, its node drained) and its
	 * runs are an older job's, merged into the same file: not compared. */
	size_t other_job = 0;
	for (size_t k = 0; k < nkeys; k++) {
		size_t start = key_start[k], end = k + 1 < nkeys ? key_start[k + 1] : nall;
		const struct run_row *newest = NULL;
		for (size_t j = start; j < end; j++) {
			const struct run_row *run = db_run_find(runs, nruns, all[j].row->run_id);
			if (!all[j].left_out && (!newest || db_run_time_cmp(run, newest) > 0))
				newest = run;
		}
		/* a shard's group spans hosts too, each case on one of them: no every-node job */
		if (!newest || !newest->group_id || newest->shard_count > 0 ||
		    !group_spans_hosts(runs, nruns, newest))
			continue;
		for (size_t j = start; j < end; j++) {
			const struct run_row *run = db_run_find(runs, nruns, all[j].row->run_id);
			if (all[j].left_out || db_text_same(run->group_id, newest->group_id))
				continue;
			all[j].left_out = LEFT_OTHER_JOB;
			all[j].code_runs = all[j].nruns;
			all[j].nruns = 0;
			if (other_job++ < NODES_NAMED)   /* notes are escaped where they are written */
				sb_addf(&job_example, "%s%s: %s (not in %s)", other_job > 1 ? "; " : "",
					all[j].host, all[j].row->name, newest->group_id);
		}
	}
	noise_model_fit(&noise, &o.rule.assumed, &model);
	/* throughput: every node of every case key against its others, one family (BH) */
	results = xcalloc(nall + 1, sizeof(*results));
	family = xcalloc(nall + 1, sizeof(*family));
	size_t nfamily = 0, unmeasured_cases = 0;
	for (size_t k = 0; k < nkeys; k++) {
		size_t end = k + 1 < nkeys ? key_start[k + 1] : nall;
		size_t with_runs = 0;
		for (size_t i = key_start[k]; i < end; i++)
			with_runs += all[i].nruns > 0;
		for (size_t i = key_start[k]; i < end; i++) {
			/* a node with no run whose samples could be read, or no other node with one:
			 * nothing was compared, so it cannot tell (never a verdict from no data) */
			if (!all[i].nruns || with_runs < 2) {
				results[i].insufficient = 1;
				results[i].verdict = VERDICT_INSUFFICIENT;
				unmeasured_cases += !all[i].left_out;
				continue;
			}
			judge_throughput(all + key_start[k], end - key_start[k], i - key_start[k],
					 SIZE_MAX, &model, &noise, &o.rule, &results[i]);
			family[nfamily++] = &results[i];
		}
	}
	verdicts_decide(family, nfamily, &o.rule);
	/* From three nodes up, "the others" of a healthy node include the odd one: beside a node 10%
	 * slower, each healthy node of three is 5% faster than the other two together. A node is out
	 * of bounds only when it also differs, the same way, from most of the other nodes one by one
	 * (each pair a family of one); else these runs cannot tell that it is the odd one (~). */
	size_t unconfirmed = 0;
	for (size_t k = 0; k < nkeys; k++) {
		size_t start = key_start[k], end = k + 1 < nkeys ? key_start[k + 1] : nall;
		size_t with_runs = 0;
		for (size_t i = start; i < end; i++)
			with_runs += all[i].nruns > 0;
		if (with_runs < 3)
			continue;
		for (size_t i = start; i < end; i++) {
			enum verdict v = results[i].verdict;
			if (v != VERDICT_SLOWER && v != VERDICT_FASTER)
				continue;
			size_t agree = 0;
			for (size_t j = start; j < end; j++) {
				if (j == i || !all[j].nruns)
					continue;
				struct pair_result pair, *one = &pair;
				judge_throughput(all + start, end - start, i - start, j - start, &model,
						 &noise, &o.rule, &pair);
				pair.wait_base = pair.wait_cand = -1;   /* the direction alone */
				verdicts_decide(&one, 1, &o.rule);
				agree += pair.verdict == v;
			}
			if (2 * agree <= with_runs - 1) {
				results[i].verdict = VERDICT_UNSURE;
				unconfirmed++;
			}
		}
	}
	report_init(&r, prices);
	r.band = o.rule.threshold;
	for (size_t k = 0; k < nkeys; k++) {
		size_t end = k + 1 < nkeys ? key_start[k + 1] : nall;
		judge(all + key_start[k], end - key_start[k], results + key_start[k],
		      o.rule.cpu_wait_level, memory_band, temp_band);
		report_key(&r, all + key_start[k], end - key_start[k]);
	}
	table_note(&r.per_node, "runs: the node's runs of the case (its latest code and sweep); "
		   "samples/s: batch_size / median time of an iteration (%s; over several runs the "
		   "geometric mean of their medians); tokens/s: × seq_len", series_pick_names[pick]);
	table_note(&r.per_node, "vs others: throughput against the other nodes' median; throughput: "
		   "the run is the unit, the node's runs against the other nodes' runs with the noise "
		   "between runs; ✗ beyond ±%.3g%% and significant (t test, Benjamini-Hochberg over the "
		   "%zu node-case comparisons, alpha %.3g; of two nodes the slower is flagged), ✓ its "
		   "95%% interval inside ±%.3g%%, ~ neither: the runs cannot tell a difference of the "
		   "band from their spread; memory ±%.3g%% and GPU temperature ±%.3g °C of the other "
		   "nodes' median; contended: the node's runs waited for a CPU %.3g%% of their measured "
		   "time or more (--cpu-wait-level): a busy node is neither passed nor failed",
		   100 * o.rule.threshold, nfamily, o.rule.alpha, 100 * o.rule.threshold,
		   100 * memory_band, temp_band, 100 * o.rule.cpu_wait_level);
	struct strbuf nl = STRBUF_INIT;
	noise_model_describe(&model, &nl);
	table_note(&r.per_node, "%s", sb_str(&nl));
	sb_free(&nl);
	int unmeasured = model.basis == NOISE_ASSUMED;
	if (unmeasured_cases)
		table_note(&r.per_node, "%zu node-case%s not compared (?): no run of the node, or of "
			   "no other node, has measured samples of the phase (%s) that can be read",
			   unmeasured_cases, unmeasured_cases == 1 ? "" : "s", series_pick_names[pick]);
	if (unconfirmed)
		table_note(&r.per_node, "%zu node-case%s beyond the band against the other nodes together "
			   "but not against most of them one by one (~): another node is the odd one, or "
			   "these runs cannot tell which", unconfirmed, unconfirmed == 1 ? "" : "s");
	if (nmissing)
		table_note(&r.per_node, "%zu node-case%s not compared (?): the node has no ok case of "
			   "a key other nodes ran (%s%s): cannot tell", nmissing, nmissing == 1 ? "" : "s",
			   sb_str(&missing_example), nmissing > NODES_NAMED ? "; ..." : "");
	if (mixed_code)
		table_note(&r.per_node, "%zu case key%s whose nodes ran different code or sweeps "
			   "(commit/sweep; %s): a difference there may be the code's, not the node's, so "
			   "only the nodes that ran the code and sweep of the key's newest run are "
			   "compared; %zu node-case%s whose latest run is of other code (%s%s): not "
			   "compared (?), cannot tell; run one build and sweep on every node",
			   mixed_code, mixed_code == 1 ? "" : "s", sb_str(&code_example), other_code,
			   other_code == 1 ? "" : "s", sb_str(&other_example),
			   other_code > NODES_NAMED ? "; ..." : "");
	if (other_job)
		table_note(&r.per_node, "%zu node-case%s whose latest run is not of the every-node job "
			   "of the case's newest run (%s%s): the node was left out of that job, its runs are "
			   "an older job's: not compared (?), cannot tell", other_job,
			   other_job == 1 ? "" : "s", sb_str(&job_example),
			   other_job > NODES_NAMED ? "; ..." : "");
	if (mixed) {
		struct strbuf names = STRBUF_INIT;
		for (size_t h = 0, named = 0; h < nhosts; h++)
			if (host_mixed[h] && named++ < NODES_NAMED)
				sb_addf(&names, "%s%s", named > 1 ? ", " : "", hosts[h]);
			else if (host_mixed[h] && named == NODES_NAMED + 1)
				sb_add(&names, ", ...");
		table_note(&r.per_node, "%zu node-case%s whose runs were made on more than one system "
			   "(machine, OS, driver: `report runs`) under one node name (%s): compared as "
			   "one node's runs; machines that share a host name need names of their own "
			   "(BENCHDB_NODE)", mixed, mixed == 1 ? "" : "s", sb_str(&names));
		sb_free(&names);
	}
	if (single)
		table_note(&r.per_node, "%zu node-case%s with a single run: a node's run-to-run spread "
			   "needs repeated runs (`runner run --repeat 3` on every node)",
			   single, single == 1 ? "" : "s");
	/* what a pass is worth: the difference these runs flag 90% of the time */
	double *detect = xcalloc(nfamily + 1, sizeof(*detect)), med = 0, lo, hi;
	size_t ndetect = 0;
	for (size_t i = 0; i < nfamily; i++)
		if (isfinite(family[i]->detectable))
			detect[ndetect++] = family[i]->detectable;
	int have_detect = ndetect && !detectable_range(detect, ndetect, &med, &lo, &hi);
	free(detect);
	if (have_detect)
		table_note(&r.per_case, "these runs flag a node %.3g%% slower than the others 90%% of "
			   "the time (the median case; %.3g%% to %.3g%%); a node off by less can pass "
			   "(~); more runs per node, at different times, flag less",
			   100 * med, 100 * lo, 100 * hi);
	size_t undecided = lenient ? r.noise_beyond : r.noise;   /* ~ that cannot pass */
	if (r.noise)
		table_note(&r.per_case, "~: %zu node-case throughput%s these runs cannot tell from the "
			   "band (%zu with a difference beyond it): cannot tell (exit 2)%s; more runs per "
			   "node, at different times, tell",
			   r.noise, r.noise == 1 ? "" : "s", r.noise_beyond,
			   lenient ? ", --lenient passing those within it" : "");
	const char *verdict = r.overall == MARK_FAIL	 ? "a node is out of bounds"
			      : r.overall == MARK_CONTENDED ? "a node's runs waited for a CPU (contended): "
							      "rerun on a quiet machine"
			      : r.overall == MARK_UNSURE || nmissing ? "some comparisons cannot tell"
			      : unmeasured ? "the noise between runs is not measured (one run per node): "
					     "cannot tell"
			      : undecided ? "these runs cannot tell whether a node is within the band (~)"
					   : "no node out of bounds";
	table_note(&r.per_case, "%zu case key%s on %zu nodes: %s", r.keys, r.keys == 1 ? "" : "s",
		   nhosts, verdict);
	status = r.overall == MARK_FAIL ? EXIT_FAIL
		 : r.overall == MARK_UNSURE || r.overall == MARK_CONTENDED || unmeasured || undecided ||
				   nmissing
			 ? EXIT_USAGE
			 : EXIT_OK;
	struct table tables[3];
	nodes_summary(all, nall, hosts, missing, nhosts, &tables[0]);
	tables[1] = r.per_node;
	tables[2] = r.per_case;
	if (format_is((enum report_format)fmt, FORMAT_SHORT)) {
		/* a CI job's comment: the marker and the verdict (as regress and changes), then the
		 * per-node lines and the tables */
		struct report_output out = REPORT_OUTPUT_INIT;
		format_summary_head("nodes", status,
				    status == EXIT_FAIL	  ? "OUT OF BOUNDS"
				    : status == EXIT_USAGE ? "CANNOT TELL"
							   : "no node out of bounds", &out.text);
		sb_addf(&out.text, "%zu case key%s on %zu nodes: %s.\n\n", r.keys,
			r.keys == 1 ? "" : "s", nhosts, verdict);
		report_output_begin(&out, (enum report_format)fmt);
		for (size_t i = 0; i < 3; i++)
			render_table(&tables[i], (enum report_format)fmt, &out.text);
		report_output_end(&out, 0);
		report_output_free(&out);
	} else {
		report_print((enum report_format)fmt, tables, 3);
	}
	table_free(&tables[0]);
	if (chart_dir && nodes_chart(chart_dir, all, nall, key_start, nkeys, hosts, nhosts, &err)) {
		report_error(&err, 0);
		if (status == EXIT_OK)
			status = EXIT_FAIL;
	}
done:
	sb_free(&code_example);
	sb_free(&other_example);
	sb_free(&job_example);
	sb_free(&missing_example);
	free(key_rows);
	free(single_rows);
	free(single_host);
	free(missing);
	free(host_mixed);
	noise_data_free(&noise);
	noise_model_free(&model);
	free(results);
	free(family);
	free(sessions);
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
