/* tests/make_planted.c: write a benchdb database of planted runs with known truth, for the
 * verdict tests (tests/cli/planted_test.sh) and the figures in docs/performance.md, "Measurement
 * validity". The runs vary, not only their iterations: each run's median moves by a known
 * run-to-run spread, made of a part shared by the runs of one session and a part of each run.
 *
 *   make_planted OUT.db [--trials T] [--one-system] [--cases N] [--iters I] [--between S]
 *                       [--session F] [--shared F] [--within S] [--rho R] [--noisy K:M]
 *                       [--seed S] GROUP...
 *
 * GROUP is LABEL[@HOST]:RUNS[t]:FACTOR[:WAIT] — RUNS complete runs labelled LABEL (with --trials
 * T > 1: labelled tK-LABEL for each trial K = 0..T-1, every trial drawn afresh) on HOST (default
 * planted-host), every case's time multiplied by FACTOR (1.05: a planted 5% slowdown); WAIT, when
 * given, is stored as every case's cpu_wait (0.5: the runner waited for a CPU half of its
 * measured time), else NULL. RUNS runs are one session, as `runner run --repeat RUNS` makes them
 * (one group id; a single run has none); RUNSt are RUNS runs made at different times, each a
 * session of its own. Groups are written in order, a minute apart, so time order is the command
 * line's. Each label has its own git commit. Each trial is on its own systems (HOST), so no trial
 * is history for another; --one-system puts every trial on the same ones.
 *
 * Each run has N attention cases (flash, seq_len 256, 320, ...; one phase, fwd), 2 warm-up and I
 * measured iterations. The noise, on the log scale:
 *   - between runs: S (--between, default 0.02) is the sd of a case's log median between runs
 *     made at different times; a share F (--session, default 0.25) of its variance is the
 *     session's (shared by the runs of one session), the rest each run's own. Of each part, a
 *     share (--shared, default 0.5) is common to every case of the run, the rest each case's;
 *     --noisy K:M multiplies the run-to-run spread of the first K cases by M;
 *   - within a run: a stationary AR(1) series with lag-1 autocorrelation R (--rho, default 0.5)
 *     and standard deviation --within (default 0.02), plus a 2% chance per iteration of an
 *     outlier 1.2-2x slower.
 * The same seed gives the same database on every machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "params.h"
#include "synthetic.h"

struct noise {
	double between, session, shared, within, rho;
	int cases, iters, warmup, noisy_cases;
	double noisy_factor;
};

#define MAX_CASES 256

/* One session's (or run's) shift of every case: a part common to the cases and one per case. */
static void draw_shifts(double *shift, const struct noise *nz, double sd)
{
	double common = sd * sqrt(nz->shared) * rng_normal();
	for (int c = 0; c < nz->cases; c++) {
		double scale = c < nz->noisy_cases ? nz->noisy_factor : 1;
		shift[c] = scale * (common + sd * sqrt(1 - nz->shared) * rng_normal());
	}
}

struct run_spec {
	const char *label, *commit, *group_id;
	int serial;
	double factor, wait;
	const double *session_shift;
};

static int write_run(struct db *db, int64_t system_id, const struct run_spec *spec,
		     const struct noise *nz, struct bd_error *err)
{
	struct run_record r = {
		.git_commit = spec->commit,
		.git_dirty = 0,
		.git_branch = "main",
		.tool_version = "planted",
		.command_line = "make_planted",
		.sweep_path = "planted.yaml",
		.sweep_name = "planted",
		.sweep_text = "name: planted\n",
		.sweep_hash = "0",
		.label = spec->label,
		.env_json = "{}",
		.group_id = spec->group_id,
	};
	snprintf(r.uuid, sizeof(r.uuid), "%08d-0000-4000-8000-%012d", spec->serial, spec->serial);
	/* a minute apart, in the order written (months of 28 days: in order for 483,840 runs) */
	unsigned minute = (unsigned)spec->serial, day = minute / 1440;
	snprintf(r.started_at, sizeof(r.started_at), "2026-%02u-%02uT%02u:%02u:00.000Z",
		 1 + day / 28 % 12, 1 + day % 28, minute / 60 % 24, minute % 60);
	int64_t run_id;
	int rc = db_run_begin(db, system_id, &r, &run_id, err);
	size_t total = (size_t)(nz->warmup + nz->iters);
	struct sample *samples = calloc(total, sizeof(*samples));
	double run_shift[MAX_CASES];
	if (!samples)
		return bd_fail(err, BD_ENOMEM, "out of memory");
	draw_shifts(run_shift, nz, nz->between * sqrt(1 - nz->session));
	for (int c = 0; c < nz->cases && !rc; c++) {
		int64_t S = 256 + 64 * (int64_t)c;
		char key[256], json[512], name[128];
		snprintf(key, sizeof(key),
			 "suite=attention impl=flash device=cpu dtype=float32 pass=forward "
			 "batch_size=8 heads=1 seq_len=%lld head_dim=64 causal=false",
			 (long long)S);
		snprintf(json, sizeof(json),
			 "{\"batch_size\":8,\"causal\":false,\"device\":\"cpu\",\"dtype\":\"float32\","
			 "\"head_dim\":64,\"heads\":1,\"impl\":\"flash\",\"iters\":%d,\"mem_limit\":0,"
			 "\"pass\":\"forward\",\"seed\":0,\"seq_len\":%lld,\"suite\":\"attention\","
			 "\"sync\":true,\"warmup\":%d}",
			 nz->iters, (long long)S, nz->warmup);
		snprintf(name, sizeof(name), "flash float32 fwd B8 H1 S%lld D64", (long long)S);
		double base = 1e5 * (1 + c) * spec->factor;
		double shift = spec->session_shift[c] + run_shift[c];
		double e = nz->within * rng_normal();   /* stationary start */
		for (size_t it = 0; it < total; it++) {
			if (it > 0)
				e = nz->rho * e + sqrt(1 - nz->rho * nz->rho) * nz->within * rng_normal();
			double t = base * exp(shift + e);
			if (it < (size_t)nz->warmup)
				t *= 2;
			if (rng_uniform() < 0.02)
				t *= 1.2 + 0.8 * rng_uniform();
			samples[it] = (struct sample){(int32_t)it, 0, (int64_t)t};
		}
		struct case_params params;
		if ((rc = case_key_parse(key, &params, err)))
			break;
		struct case_record cr = {
			.ord = c, .params = &params, .params_json = json, .case_key = key,
			.name = name, .warmup = nz->warmup, .iters = nz->iters,
			.status = STATUS_OK, .max_diff = 1e-6, .tolerance = 1e-4,
			.param_bytes = -1, .peak_fwd_bytes = -1, .peak_bwd_bytes = -1,
			.peak_bytes = -1, .flops = {-1, -1, -1}, .bytes = {-1, -1, -1},
			.elapsed_ns = 1000000, .stop_reason = "iters", .cpu_wait = spec->wait,
		};
		snprintf(cr.started_at, sizeof(cr.started_at), "%s", r.started_at);
		rc = db_case_put(db, run_id, &cr, samples, total, err);
	}
	free(samples);
	if (!rc)
		rc = db_run_end(db, run_id, "complete", err);
	return rc;
}

/* A 40-hex-digit commit made from text (FNV-1a, repeated). */
static void commit_of(const char *text, char out[41])
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = text; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (int i = 0; i < 40; i += 8) {
		snprintf(out + i, 9, "%08x", (unsigned)(h >> 32));
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	out[40] = 0;
}

struct group {
	char label[210], host[210];
	int runs, separate;
	double factor, wait;
};

static int group_parse(const char *text, struct group *g)
{
	char who[210], runs[16];
	memset(g, 0, sizeof(*g));
	g->wait = -1;
	int got = sscanf(text, "%200[^:]:%15[^:]:%lf:%lf", who, runs, &g->factor, &g->wait);
	if (got < 3 || g->wait > 1)
		return -1;
	char *at = strchr(who, '@');
	snprintf(g->host, sizeof(g->host), "%s", at ? at + 1 : "planted-host");
	if (at)
		*at = 0;
	snprintf(g->label, sizeof(g->label), "%s", who);
	char *end;
	g->runs = (int)strtol(runs, &end, 10);
	g->separate = *end == 't';
	return g->runs >= 1 && (!*end || (*end == 't' && !end[1])) && g->label[0] ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct noise nz = {.between = 0.02, .session = 0.25, .shared = 0.5, .within = 0.02,
			   .rho = 0.5, .cases = 24, .iters = 30, .warmup = 2, .noisy_factor = 1};
	int trials = 1, one_system = 0;
	uint64_t seed = 1;
	const char *groups[64];
	int ngroups = 0;
	if (argc < 3) {
		fprintf(stderr, "usage: make_planted OUT.db [--trials T] [--one-system] [--cases N] "
				"[--iters I] [--between S] [--session F] [--shared F] [--within S] "
				"[--rho R] [--noisy K:M] [--seed S] LABEL[@HOST]:RUNS[t]:FACTOR[:WAIT]...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(argv[i], "--trials"))
			trials = atoi(v), i++;
		else if (!strcmp(argv[i], "--one-system"))
			one_system = 1;
		else if (!strcmp(argv[i], "--cases"))
			nz.cases = atoi(v), i++;
		else if (!strcmp(argv[i], "--iters"))
			nz.iters = atoi(v), i++;
		else if (!strcmp(argv[i], "--between"))
			nz.between = atof(v), i++;
		else if (!strcmp(argv[i], "--session"))
			nz.session = atof(v), i++;
		else if (!strcmp(argv[i], "--shared"))
			nz.shared = atof(v), i++;
		else if (!strcmp(argv[i], "--within"))
			nz.within = atof(v), i++;
		else if (!strcmp(argv[i], "--rho"))
			nz.rho = atof(v), i++;
		else if (!strcmp(argv[i], "--noisy")) {
			if (sscanf(v, "%d:%lf", &nz.noisy_cases, &nz.noisy_factor) != 2)
				nz.noisy_cases = -1;
			i++;
		} else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(v, NULL, 10), i++;
		else if (argv[i][0] != '-' && ngroups < 64)
			groups[ngroups++] = argv[i];
		else {
			fprintf(stderr, "make_planted: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (trials < 1 || nz.cases < 1 || nz.cases > MAX_CASES || nz.iters < 1 || ngroups == 0 ||
	    !(nz.rho > -1 && nz.rho < 1) || !(nz.session >= 0 && nz.session <= 1) ||
	    !(nz.shared >= 0 && nz.shared <= 1) || nz.noisy_cases < 0 || !(nz.noisy_factor > 0)) {
		fprintf(stderr, "make_planted: need --trials >= 1, 1 <= --cases <= %d, --iters >= 1, "
				"|--rho| < 1, --session and --shared in [0, 1], --noisy K:M with M > 0 "
				"and a group\n", MAX_CASES);
		return 2;
	}
	struct group parsed[64];
	for (int g = 0; g < ngroups; g++)
		if (group_parse(groups[g], &parsed[g])) {
			fprintf(stderr, "make_planted: group '%s' is not LABEL[@HOST]:RUNS[t]:FACTOR[:WAIT] "
					"(WAIT in [0, 1])\n", groups[g]);
			return 2;
		}
	rng_state = seed;
	remove(argv[1]);
	struct db *db = NULL;
	struct bd_error err;
	int rc = db_open(argv[1], DB_CREATE, &db, &err), serial = 0;
	double session_shift[MAX_CASES];
	for (int t = 0; t < trials && !rc; t++) {
		for (int g = 0; g < ngroups && !rc; g++) {
			const struct group *gr = &parsed[g];
			char full[160], host[160], commit[41], group_id[64];
			if (trials > 1)
				snprintf(full, sizeof(full), "t%d-%.100s", t, gr->label);
			else
				snprintf(full, sizeof(full), "%.100s", gr->label);
			if (trials > 1 && !one_system)
				snprintf(host, sizeof(host), "%.100s-t%d", gr->host, t);
			else
				snprintf(host, sizeof(host), "%.100s", gr->host);
			commit_of(gr->label, commit);
			struct sysinfo si;
			int64_t system_id;
			synthetic_system(&si, host);
			if ((rc = db_system_put(db, &si, &system_id, &err)))
				break;
			/* one group id for a session of several runs, named after its first */
			snprintf(group_id, sizeof(group_id), "repeat-%08d", serial + 1);
			int grouped = gr->runs > 1 && !gr->separate;
			for (int r = 0; r < gr->runs && !rc; r++) {
				/* a new session: for the group's first run, or every run made apart */
				if (r == 0 || gr->separate)
					draw_shifts(session_shift, &nz, nz.between * sqrt(nz.session));
				struct run_spec spec = {full, commit, grouped ? group_id : NULL, ++serial,
							gr->factor, gr->wait, session_shift};
				rc = write_run(db, system_id, &spec, &nz, &err);
			}
		}
	}
	db_close(db);
	if (rc) {
		bd_error_print("make_planted", &err);
		return 1;
	}
	return 0;
}
