/* tests/make_fixture.c: write a benchdb database of known synthetic samples.
 *
 *   make_fixture OUT.db [--cases N] [--warmup W] [--iters I] [--seed S]
 *
 * Two runs on one system: run 1 (label "base", commit aaaa...) and run 2 (label "cand", commit
 * bbbb...). Each has the same attention cases: impls naive, flash and sdpa over seq_len values,
 * head_dim 64, pass forward_backward, W warm-up + I measured iterations, fwd and bwd per iteration.
 * Every sample is median_ns(case, phase) x warm-up factor x log-normal noise (sigma 2%), with:
 *   - a planted warm-up: iterations 0, 1, 2 are 3.0x, 2.0x and 1.5x slower, then steady;
 *   - a planted 10% slowdown: in run 2, flash at seq_len 2048 takes 1.10x as long;
 *   - a planted no-change: everything else is drawn from the same distribution in both runs;
 *   - sdpa is 0.8x flash's time, flash 0.9x naive's (so `compare` has known speedups).
 * The tests (tests/cli/report_test.sh) and the report-latency benchmark (docs/performance.md)
 * use it; --cases scales the number of seq_len values (3 impls each) for large databases.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "params.h"
#include "strbuf.h"

/* splitmix64: a small deterministic generator (the fixture must be the same on every machine). */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rng_uniform(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }

static double rng_normal(void)
{
	return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform());
}

static const char *const impls[] = {"naive", "flash", "sdpa"};
/* Time of each impl relative to naive. */
static const double impl_factor[] = {1.0, 0.9, 0.72};
static const double warmup_factor[] = {3.0, 2.0, 1.5};
#define NOISE_SIGMA 0.02
#define SLOWDOWN 1.10

/* 256, 512, 1024, 2048, then 2112, 2176, ... for large fixtures. */
static int64_t seq_len_of(int i) { return i < 4 ? (int64_t)256 << i : 2048 + 64 * (int64_t)(i - 3); }

static int write_run(struct db *db, int64_t system_id, int run, int ncases, int warmup, int iters,
		     struct bd_error *err)
{
	struct run_record r = {
		.git_commit = run == 1 ? "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				       : "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		.git_dirty = 0,
		.git_branch = "main",
		.tool_version = "fixture",
		.command_line = "make_fixture",
		.sweep_path = "fixture.yaml",
		.sweep_name = "fixture",
		.sweep_text = "name: fixture\n",
		.sweep_hash = "0",
		.label = run == 1 ? "base" : "cand",
		.env_json = "{}",
	};
	snprintf(r.uuid, sizeof(r.uuid), "%08d-0000-4000-8000-000000000000", run);
	snprintf(r.started_at, sizeof(r.started_at), "2026-01-0%dT00:00:00.000Z", run);
	int64_t run_id;
	int rc = db_run_begin(db, system_id, &r, &run_id, err);
	size_t total = (size_t)(warmup + iters);
	struct sample *samples = calloc(total * 2, sizeof(*samples));
	if (!samples)
		return bd_fail(err, BD_ENOMEM, "out of memory");
	for (int s = 0; s < ncases && !rc; s++) {
		for (int m = 0; m < 3 && !rc; m++) {
			int64_t S = seq_len_of(s);
			char key[256], json[512], name[128];
			snprintf(key, sizeof(key),
				 "suite=attention impl=%s device=cpu dtype=float32 pass=forward_backward "
				 "batch_size=8 heads=1 seq_len=%lld head_dim=64 causal=false",
				 impls[m], (long long)S);
			snprintf(json, sizeof(json),
				 "{\"batch_size\":8,\"causal\":false,\"device\":\"cpu\",\"dtype\":\"float32\","
				 "\"head_dim\":64,\"heads\":1,\"impl\":\"%s\",\"iters\":%d,\"mem_limit\":0,"
				 "\"pass\":\"forward_backward\",\"seed\":0,\"seq_len\":%lld,\"suite\":"
				 "\"attention\",\"sync\":true,\"warmup\":%d}",
				 impls[m], iters, (long long)S, warmup);
			snprintf(name, sizeof(name), "%s float32 fwd+bwd B8 H1 S%lld D64", impls[m],
				 (long long)S);
			/* naive: ~S^2 cost; 1 ms at S = 1024 for fwd, bwd 2.5x fwd. */
			double fwd = 1e6 * (double)S * (double)S / (1024.0 * 1024.0) * impl_factor[m];
			double planted = (run == 2 && m == 1 && S == 2048) ? SLOWDOWN : 1.0;
			double flops = 4.0 * 8 * S * S * 64;
			size_t n = 0;
			for (size_t it = 0; it < total; it++)
				for (int ph = 0; ph < 2; ph++) {
					double t = fwd * (ph ? 2.5 : 1.0) * planted;
					if (it < 3)
						t *= warmup_factor[it];
					t *= exp(NOISE_SIGMA * rng_normal());
					samples[n++] = (struct sample){(int32_t)it, ph, (int64_t)t};
				}
			struct case_params params;
			if ((rc = case_key_parse(key, &params, err)))
				break;
			struct case_record c = {
				.ord = s * 3 + m, .params = &params,
				.params_json = json, .case_key = key, .name = name,
				.warmup = warmup, .iters = iters, .status = STATUS_OK,
				.max_diff = 1e-6, .tolerance = 1e-4,
				.param_bytes = -1,
				.peak_fwd_bytes = (m == 0 ? 8 * S * S * 8 : 0) + 4 * 8 * S * 64 * 4,
				.peak_bwd_bytes = (m == 0 ? 8 * S * S * 8 : 0) + 8 * 8 * S * 64 * 4,
				.peak_bytes = (m == 0 ? 8 * S * S * 8 : 0) + 8 * 8 * S * 64 * 4,
				.flops = {flops, 2.5 * flops, -1},
				.bytes = {4.0 * 8 * S * 64 * 4, 8.0 * 8 * S * 64 * 4, -1},
				.elapsed_ns = 1000000,
			};
			snprintf(c.started_at, sizeof(c.started_at), "%s", r.started_at);
			rc = db_case_put(db, run_id, &c, samples, n, err);
		}
	}
	free(samples);
	if (!rc)
		rc = db_run_end(db, run_id, "complete", err);
	return rc;
}

int main(int argc, char **argv)
{
	int ncases = 4, warmup = 5, iters = 30;
	uint64_t seed = 1;
	if (argc < 2) {
		fprintf(stderr, "usage: make_fixture OUT.db [--cases N] [--warmup W] [--iters I] "
				"[--seed S]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cases"))
			ncases = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--warmup"))
			warmup = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 10);
		else {
			fprintf(stderr, "make_fixture: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	if (ncases < 1 || warmup < 3 || iters < 2) {
		fprintf(stderr, "make_fixture: need --cases >= 1, --warmup >= 3, --iters >= 2\n");
		return 2;
	}
	rng_state = seed;
	remove(argv[1]);
	struct db *db = NULL;
	struct bd_error err;
	struct sysinfo si;
	memset(&si, 0, sizeof(si));
	snprintf(si.hostname, sizeof(si.hostname), "fixture-host");
	snprintf(si.cpu_model, sizeof(si.cpu_model), "Synthetic CPU");
	si.cpu_cores = si.cpu_threads = 2;
	snprintf(si.blas, sizeof(si.blas), "none");
	int64_t system_id;
	int rc = db_open(argv[1], DB_CREATE, &db, &err);
	if (!rc)
		rc = db_system_put(db, &si, &system_id, &err);
	for (int run = 1; run <= 2 && !rc; run++)
		rc = write_run(db, system_id, run, ncases, warmup, iters, &err);
	db_close(db);
	if (rc) {
		bd_error_print("make_fixture", &err);
		return 1;
	}
	return 0;
}
