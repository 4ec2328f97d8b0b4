/* runner/cmd_list.c: `runner list SWEEP.yaml` — every case a sweep expands to, whether it would
 * run or why not, and the axes that produced them. Runs and writes nothing. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "sweep.h"
#include "workload.h"

/* "" when the case would run, else why it would be stored without running. A peer's case
 * always runs: only the peer knows what it supports. */
static void would_run(const struct sweep_case *c, char *why, size_t n)
{
	const struct case_params *p = &c->params;
	struct wl_status st = {0};
	why[0] = '\0';
	if (c->peer)
		return;
	const struct workload *w = workload_find(p->suite, p->impl, p->device);
	if (!w)
		snprintf(why, n, "unsupported: no %s implementation '%s' for device %s in this build",
			 p->suite, p->impl, device_name(p->device));
	else if (w->check(p, &st) != WL_OK)
		snprintf(why, n, "unsupported: %s", st.reason);
}

void print_case_list(const struct sweep *s, const struct sweep_cases *cases)
{
	struct strbuf out = STRBUF_INIT;
	size_t runnable = 0;
	char why[600];
	sb_addf(&out, "sweep %s (%s): %zu cases\n\n", s->name, s->path, cases->n);
	for (size_t i = 0; i < cases->n; i++) {
		const struct sweep_case *c = &cases->items[i];
		would_run(c, why, sizeof(why));
		runnable += !why[0];
		if (!why[0] && c->peer)
			snprintf(why, sizeof(why), "run by peer %s", c->peer->name);
		sb_addf(&out, "%5zu  %-52s %s\n", i + 1, c->name, why[0] ? why : "run");
	}
	sb_addf(&out, "\n%zu to run, %zu unsupported here\n", runnable, cases->n - runnable);
	for (size_t b = 0; b < s->nbenchmarks; b++) {
		const struct sweep_benchmark *bm = &s->benchmarks[b];
		size_t in_bench = 0, product = 1;
		for (size_t i = 0; i < cases->n; i++)
			in_bench += cases->items[i].benchmark == b;
		sb_addf(&out, "\nbenchmark %zu (suite %s, line %d): %zu cases\n", b + 1, bm->suite,
			bm->line, in_bench);
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
	for (size_t i = 0; i < s->npeers; i++)
		sb_addf(&out, "%speer %s (suite %s, timeout %lld s, line %d): %s\n", i ? "" : "\n",
			s->peers[i].name, s->peers[i].suite, (long long)s->peers[i].timeout_s,
			s->peers[i].line, s->peers[i].command);
	fputs(sb_str(&out), stdout);
	sb_free(&out);
}

int cmd_list(int argc, char **argv)
{
	static const struct opt_spec specs[] = {{0}};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "list", "SWEEP.yaml",
		"Expand a sweep and print every case, whether it would run on this machine or why not,\n"
		"and the values of each axis. Nothing is run or written."};
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct bd_error err;
	int npos = 0, rc;
	int status = opt_parse_command(specs, &usage, argc, argv, 1, 1, &npos);
	if (status >= 0)
		return status;
	status = EXIT_OK;
	if ((rc = sweep_load(argv[0], &sweep, &err)) || (rc = sweep_expand(sweep, &cases, &err))) {
		bd_error_print("runner list", &err);
		status = EXIT_USAGE;
		goto done;
	}
	print_case_list(sweep, &cases);
done:
	sweep_cases_free(&cases);
	sweep_free(sweep);
	return status;
}
