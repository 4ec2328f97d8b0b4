/* tests/make_planted.c: write a benchdb database of planted runs with known truth, for the
 * verdict tests of issue 14 (tests/cli/planted_test.sh) and the figures in docs/performance.md.
 *
 *   make_planted OUT.db [--trials T] [--cases N] [--iters I] [--between S] [--within S]
 *                       [--rho R] [--seed S] GROUP...
 *
 * GROUP is LABEL:RUNS:FACTOR[:WAIT] — RUNS complete runs labelled LABEL (with --trials T > 1:
 * labelled tK-LABEL for each trial K = 0..T-1, every trial drawn afresh), every case's time
 * multiplied by FACTOR (1.05: a planted 5% slowdown); WAIT, when given, is stored as every case's
 * cpu_wait (0.5: the runner waited for a CPU half of its measured time), else NULL. All on one system; each run has N attention cases (flash,
 * seq_len 256, 320, ...; one phase, fwd), 2 warm-up and I measured iterations. The noise, on the
 * log scale:
 *   - between runs: each run shifts all its cases by a shared N(0, S^2/2) and each case by its
 *     own N(0, S^2/2) (S = --between, default 0.02: a run-to-run spread of 2%);
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
	double between, within, rho;
	int cases, iters, warmup;
};

#define MAX_CASES 256

static int write_run(struct db *db, int64_t system_id, const char *label, int serial, double factor,
		     double wait, const struct noise *nz, struct bd_error *err)
{
	struct run_record r = {
		.git_commit = "cccccccccccccccccccccccccccccccccccccccc",
		.git_dirty = 0,
		.git_branch = "main",
		.tool_version = "planted",
		.command_line = "make_planted",
		.sweep_path = "planted.yaml",
		.sweep_name = "planted",
		.sweep_text = "name: planted\n",
		.sweep_hash = "0",
		.label = label,
		.env_json = "{}",
	};
	snprintf(r.uuid, sizeof(r.uuid), "%08d-0000-4000-8000-%012d", serial, serial);
	snprintf(r.started_at, sizeof(r.started_at), "2026-02-01T00:00:00.000Z");
	int64_t run_id;
	int rc = db_run_begin(db, system_id, &r, &run_id, err);
	size_t total = (size_t)(nz->warmup + nz->iters);
	struct sample *samples = calloc(total, sizeof(*samples));
	if (!samples)
		return bd_fail(err, BD_ENOMEM, "out of memory");
	double shared = nz->between / sqrt(2.0) * rng_normal();
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
		double base = 1e5 * (1 + c) * factor;
		double shift = shared + nz->between / sqrt(2.0) * rng_normal();
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
			.elapsed_ns = 1000000, .stop_reason = "iters", .cpu_wait = wait,
		};
		snprintf(cr.started_at, sizeof(cr.started_at), "%s", r.started_at);
		rc = db_case_put(db, run_id, &cr, samples, total, err);
	}
	free(samples);
	if (!rc)
		rc = db_run_end(db, run_id, "complete", err);
	return rc;
}

int main(int argc, char **argv)
{
	struct noise nz = {.between = 0.02, .within = 0.02, .rho = 0.5, .cases = 24, .iters = 30,
			   .warmup = 2};
	int trials = 1;
	uint64_t seed = 1;
	const char *groups[16];
	int ngroups = 0;
	if (argc < 3) {
		fprintf(stderr, "usage: make_planted OUT.db [--trials T] [--cases N] [--iters I] "
				"[--between S] [--within S] [--rho R] [--seed S] LABEL:RUNS:FACTOR[:WAIT]...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(argv[i], "--trials"))
			trials = atoi(v), i++;
		else if (!strcmp(argv[i], "--cases"))
			nz.cases = atoi(v), i++;
		else if (!strcmp(argv[i], "--iters"))
			nz.iters = atoi(v), i++;
		else if (!strcmp(argv[i], "--between"))
			nz.between = atof(v), i++;
		else if (!strcmp(argv[i], "--within"))
			nz.within = atof(v), i++;
		else if (!strcmp(argv[i], "--rho"))
			nz.rho = atof(v), i++;
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(v, NULL, 10), i++;
		else if (argv[i][0] != '-' && ngroups < 16)
			groups[ngroups++] = argv[i];
		else {
			fprintf(stderr, "make_planted: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (trials < 1 || nz.cases < 1 || nz.cases > MAX_CASES || nz.iters < 1 || ngroups == 0 ||
	    !(nz.rho > -1 && nz.rho < 1)) {
		fprintf(stderr, "make_planted: need --trials >= 1, 1 <= --cases <= %d, --iters >= 1, "
				"|--rho| < 1 and a group\n", MAX_CASES);
		return 2;
	}
	rng_state = seed;
	remove(argv[1]);
	struct db *db = NULL;
	struct bd_error err;
	struct sysinfo si;
	synthetic_system(&si, "planted-host");
	int64_t system_id;
	int rc = db_open(argv[1], DB_CREATE, &db, &err), serial = 0;
	if (!rc)
		rc = db_system_put(db, &si, &system_id, &err);
	for (int t = 0; t < trials && !rc; t++) {
		for (int g = 0; g < ngroups && !rc; g++) {
			char label[128];
			int runs, got;
			double factor, wait = -1;
			got = sscanf(groups[g], "%100[^:]:%d:%lf:%lf", label, &runs, &factor, &wait);
			if (got < 3 || runs < 1 || wait > 1) {
				fprintf(stderr, "make_planted: group '%s' is not LABEL:RUNS:FACTOR[:WAIT] "
						"(WAIT in [0, 1])\n", groups[g]);
				db_close(db);
				return 2;
			}
			char full[160];
			if (trials > 1)
				snprintf(full, sizeof(full), "t%d-%s", t, label);
			else
				snprintf(full, sizeof(full), "%s", label);
			for (int r = 0; r < runs && !rc; r++)
				rc = write_run(db, system_id, full, ++serial, factor, wait, &nz, &err);
		}
	}
	db_close(db);
	if (rc) {
		bd_error_print("make_planted", &err);
		return 1;
	}
	return 0;
}
