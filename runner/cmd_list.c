/* runner/cmd_list.c: `runner list SWEEP.yaml` — every case a sweep expands to, whether it would
 * run or why not (for a model: its parameter count and memory estimate), and the axes that
 * produced them. Runs and writes nothing. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "shard.h"
#include "sweep.h"
#include "sysinfo.h"
#include "workload.h"

/* "" when the case would run, else why it would be stored without running. A peer's case
 * always runs: only the peer knows what it supports. */
static void would_run(const struct sweep_case *c, char *why, size_t n)
{
	const struct case_params *p = &c->params;
	struct wl_status st = {0};
	why[0] = '\0';
	if (c->peer && p->iters == ITERS_AUTO)   /* as peer_measure_case stores it */
		snprintf(why, n, "unsupported: iters: auto is not supported for a peer");
	if (c->peer)
		return;
	const struct workload *w = workload_find(suite_name(p->suite), p->impl, p->device);
	if (!w)
		snprintf(why, n, "unsupported: no %s implementation '%s' for device %s in this build",
			 suite_name(p->suite), p->impl, device_name(p->device));
	else if (w->check(p, &st) != STATUS_OK)
		snprintf(why, n, "unsupported: %s", st.reason);
}

/* bytes in the largest binary unit that keeps it at 1 or more: "512 B", "3.0 KiB", "490.7 MiB",
 * "2.41 GiB". */
static void add_bytes(struct strbuf *sb, int64_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int u = -1;
	while (u < 3 && v >= 1024) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		sb_addf(sb, "%lld B", (long long)bytes);
	else
		sb_addf(sb, u >= 2 ? "%.2f %s" : "%.1f %s", v, units[u]);
}

/* n with a comma between thousands: 128,625,408. */
static void add_count(struct strbuf *sb, int64_t n)
{
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%lld", (long long)n);
	for (int i = 0; i < len; i++) {
		if (i && digits[i - 1] != '-' && (len - i) % 3 == 0)
			sb_addc(sb, ',');
		sb_addc(sb, digits[i]);
	}
}

/* For a case whose workload has a model: its parameter count and, where the workload can say
 * without allocating, the memory its pass and dtype need, by what it holds. Returns whether it
 * added a line. */
static int add_model_line(struct strbuf *out, const struct sweep_case *c)
{
	const struct case_params *p = &c->params;
	const struct workload *w = workload_find(suite_name(p->suite), p->impl, p->device);
	struct wl_figures f = {0};
	struct wl_memory m = {0};
	struct wl_status st = {0};
	if (c->peer || !w)
		return 0;
	w->figures(p, &f);
	if (f.param_count <= 0)
		return 0;
	sb_add(out, "       params ");
	add_count(out, f.param_count);
	if (w->estimate && w->estimate(p, &m, &st) == STATUS_OK) {
		const struct {
			const char *what;
			int64_t bytes;
		} held[] = {{"parameters", m.params}, {"gradients", m.grads}, {"AdamW state", m.optim},
			    {"activations", m.activations}, {"scratch", m.workspace}};
		int64_t total = m.params + m.grads + m.optim + m.activations + m.workspace;
		sb_add(out, ", memory ");
		add_bytes(out, total);
		for (size_t k = 0, shown = 0; k < sizeof(held) / sizeof(held[0]); k++) {
			if (held[k].bytes <= 0)
				continue;
			sb_addf(out, "%s%s ", shown++ ? ", " : " = ", held[k].what);
			add_bytes(out, held[k].bytes);
		}
		if (p->mem_limit > 0 && total > p->mem_limit) {
			sb_add(out, "; over its mem_limit of ");
			add_bytes(out, p->mem_limit);
			sb_add(out, ": expect oom");
		}
	}
	sb_addc(out, '\n');
	return 1;
}

/* iters: auto's rule after a case line: ", iters auto: 10-10000 measured, until rse <= 0.005
 * or 10 s measured". */
static void add_auto_rule(struct strbuf *out, const struct case_params *p)
{
	char rse[64], secs[64];
	if (p->iters != ITERS_AUTO)
		return;
	param_format(p, param_find("target_rse"), rse);
	param_format(p, param_find("max_time"), secs);
	sb_addf(out, ", iters auto: %lld-%lld measured, until rse <= %s or %s s measured",
		(long long)p->min_iters, (long long)p->max_iters, rse, secs);
}

/* How many cases of benchmark b are in cases. */
static size_t benchmark_cases(const struct sweep_cases *cases, size_t b)
{
	size_t n = 0;
	for (size_t i = 0; i < cases->n; i++)
		n += cases->items[i].benchmark == b;
	return n;
}

void print_case_list(const struct sweep *s, const struct sweep_cases *cases,
		     const struct sweep_cases *all)
{
	struct strbuf out = STRBUF_INIT;
	size_t runnable = 0, expect_oom = 0;
	int models = 0;
	char why[600];
	if (all)
		sb_addf(&out, "sweep %s (%s): %zu of its %zu cases in this shard\n\n", s->name, s->path,
			cases->n, all->n);
	else
		sb_addf(&out, "sweep %s (%s): %zu cases\n\n", s->name, s->path, cases->n);
	for (size_t i = 0; i < cases->n; i++) {
		const struct sweep_case *c = &cases->items[i];
		would_run(c, why, sizeof(why));
		runnable += !why[0];
		/* stored oom in its setup, as its model line says: not one the run will measure */
		expect_oom += !why[0] && case_expect_oom(c);
		if (!why[0] && c->peer)
			snprintf(why, sizeof(why), "run by peer %s", c->peer->name);
		/* its number in the sweep (a shard's cases are a subset) */
		sb_addf(&out, "%5zu  %-52s %s", (all ? c->index : i) + 1, c->name, why[0] ? why : "run");
		if (!why[0])
			add_auto_rule(&out, &c->params);
		sb_addc(&out, '\n');
		models |= add_model_line(&out, c);
	}
	if (models)
		sb_add(&out, "\nmemory: what the case allocates for its pass and dtype: float32 parameters\n"
			     "(+ their bfloat16 copy in bfloat16), float32 gradients (passes with a backward),\n"
			     "AdamW m and v (train_step), the activations the forward keeps (naive attention:\n"
			     "its score matrices, at the least every device keeps), and scratch; not the other\n"
			     "attention workspaces (flash, sdpa: O(context), the device's)\n");
	if (expect_oom)
		sb_addf(&out, "\n%zu to run, %zu expected oom (over their mem_limit), %zu unsupported here\n",
			runnable - expect_oom, expect_oom, cases->n - runnable);
	else
		sb_addf(&out, "\n%zu to run, %zu unsupported here\n", runnable, cases->n - runnable);
	for (size_t b = 0; b < s->nbenchmarks; b++) {
		const struct sweep_benchmark *bm = &s->benchmarks[b];
		size_t in_bench = benchmark_cases(all ? all : cases, b), product = 1;
		if (all)   /* the exclusions below are of the whole sweep's */
			sb_addf(&out, "\nbenchmark %zu (suite %s, line %d): %zu of its %zu cases\n", b + 1,
				suite_name(bm->suite), bm->line, benchmark_cases(cases, b), in_bench);
		else
			sb_addf(&out, "\nbenchmark %zu (suite %s, line %d): %zu cases\n", b + 1,
				suite_name(bm->suite), bm->line, in_bench);
		for (size_t k = 0; k < bm->nsettings; k++) {
			const struct sweep_setting *st = &bm->settings[k];
			if (!st->is_axis)
				continue;
			product *= st->nvalues;
			sb_addf(&out, "  axis %-16s %zu values:", st->key, st->nvalues);
			for (size_t v = 0; v < st->nvalues; v++)
				sb_addf(&out, " %s", st->values[v].text);
			sb_addc(&out, '\n');
		}
		if (bm->nexcludes)
			sb_addf(&out, "  %zu combinations, %zu excluded by %zu exclude entries\n", product,
				product - in_bench, bm->nexcludes);
	}
	for (size_t i = 0; i < s->npeers; i++) {
		const struct sweep_peer *peer = &s->peers[i];
		sb_addf(&out, "%speer %s (suite %s, timeout %lld s%s%s%s", i ? "" : "\n", peer->name,
			peer->suite, (long long)peer->timeout_s,
			peer->persistent == PEER_KEPT ? ", persistent, kept" :
			peer->persistent ? ", persistent" : "",
			peer->persistent && peer->whole ? ", not interleaved" : "",
			peer->check_required ? ", check required" : "");
		for (size_t k = 0; k < peer->nparams; k++)   /* its own parameters and defaults */
			sb_addf(&out, "%s%s=%s", k ? " " : ", params ", peer->params[k].name,
				peer->params[k].def);
		sb_addf(&out, ", line %d): %s\n", peer->line, peer->command);
	}
	fputs(sb_str(&out), stdout);
	sb_free(&out);
}

int mem_limit_option(const char *text, const char *command, int64_t *limit)
{
	*limit = 0;
	if (!text)
		return -1;
	if (parse_bytes(text, limit) || *limit <= 0) {
		fprintf(stderr, "%s: --mem-limit expects a size such as 512MiB or 8GiB, got '%s'\n",
			command, text);
		return EXIT_USAGE;
	}
	return -1;
}

void cases_limit_memory(struct sweep_cases *cases, int64_t limit, int given)
{
	/* the default share is of host memory: a case on a device with memory of its own (CUDA)
	 * and without a limit of its own is bounded by that memory, which refuses itself */
	for (size_t i = 0; limit > 0 && i < cases->n; i++) {
		struct case_params *p = &cases->items[i].params;
		if (given || (!p->mem_limit && workload_host_memory(p->device)))
			p->mem_limit = limit;
	}
}

int64_t default_mem_limit(void)
{
	int64_t total, available;
	sysinfo_memory(&total, &available);
	return (int64_t)(DEFAULT_MEM_SHARE * (double)(available ? available : total));
}

int cmd_list(struct cmd_line *cl)
{
	const char *mem_limit_text = NULL;
	const struct opt_spec specs[] = {
		{"mem-limit", 0, OPT_STRING, "SIZE",
		 "memory a case may allocate, e.g. 8GiB (overrides the sweep's mem_limit, as in run)",
		 &mem_limit_text},
		{0},
	};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "list", "[options] SWEEP.yaml",
		"Expand a sweep and print every case, whether it would run on this machine or why not,\n"
		"and the values of each axis; for an e2e case also the model's parameter count and the\n"
		"memory its pass and dtype need (parameters, gradients, AdamW state, activations,\n"
		"scratch), flagged where it is over the case's mem_limit (the sweep's, --mem-limit, or\n"
		"as in run 80% of the memory available now for a CPU case without one).\n"
		"Nothing is run or written."};
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct bd_error err;
	int64_t mem_limit;
	int npos = 0, rc;
	char **argv = NULL;   /* the positional arguments */
	int status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos);
	if (status >= 0)
		return status;
	if ((status = mem_limit_option(mem_limit_text, "runner list", &mem_limit)) >= 0)
		return status;
	status = EXIT_OK;
	if ((rc = sweep_load(argv[0], &sweep, &err)) || (rc = sweep_expand(sweep, &cases, &err))) {
		bd_error_print("runner list", &err);
		status = EXIT_USAGE;
		goto done;
	}
	/* as run: --mem-limit for every case, else the default share for the CPU cases without
	 * mem_limit of their own (a case over it is stored oom, so it is flagged here too) */
	cases_limit_memory(&cases, mem_limit ? mem_limit : default_mem_limit(), mem_limit != 0);
	print_case_list(sweep, &cases, NULL);
done:
	sweep_cases_free(&cases);
	sweep_free(sweep);
	return status;
}
