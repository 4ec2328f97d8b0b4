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
 * With --e2e it writes instead one run of end-to-end model cases (write_e2e_run).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "params.h"
#include "synthetic.h"
#include "strbuf.h"

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

/* --e2e: one run (label "e2e", warm-up 5, 10 measured) of the coursework's e2e grid — models
 * small, medium and large, context 128 and 256, float32 and bfloat16, passes forward,
 * forward_backward and train_step — where large at context 256 runs out of memory beyond the
 * forward, plus two compiled cases of small: an impl named pytorch_compile, and a peer `pytorch`
 * with its `compile` parameter true (and false). Time per iteration: 2 FLOPs per parameter and
 * token at 50 GFLOP/s (bfloat16 0.6x), bwd 2x fwd, opt 20 ms per 100M parameters, warm-up
 * iterations 0-2 3.0x/2.0x/1.5x, noise sigma 2%. */
static int write_e2e_run(struct db *db, int64_t system_id, struct bd_error *err)
{
	static const struct {
		const char *name;
		int64_t params;
		int d_model, d_ff, layers, heads;
	} models[] = {{"small", 128625408, 768, 3072, 12, 12},
		      {"medium", 423183360, 1024, 4096, 24, 16},
		      {"large", 969411840, 1280, 5120, 36, 20}};
	static const char *const passes[] = {"forward", "forward_backward", "train_step"};
	static const char *const dtypes[] = {"float32", "bfloat16"};
	struct run_record r = {
		.git_commit = "cccccccccccccccccccccccccccccccccccccccc", .git_dirty = 0,
		.git_branch = "main", .tool_version = "fixture", .command_line = "make_fixture --e2e",
		.sweep_path = "coursework.yaml", .sweep_name = "coursework-fixture",
		.sweep_text = "name: coursework-fixture\n", .sweep_hash = "0", .label = "e2e",
		.env_json = "{}", .uuid = "00000003-0000-4000-8000-000000000000",
		.started_at = "2026-01-03T00:00:00.000Z"};
	int64_t run_id;
	int rc = db_run_begin(db, system_id, &r, &run_id, err);
	const int warmup = 5, iters = 10;
	struct sample samples[(5 + 10) * 3];
	int64_t ord = 0;
	/* the grid, then small's compiled cases: impl, peer compile value ("" none) */
	struct {
		const char *impl, *compile;
	} extra[] = {{"pytorch_compile", ""}, {"pytorch", "false"}, {"pytorch", "true"}};
	for (int m = 0; m < 3 && !rc; m++)
		for (int ctx = 128; ctx <= 256 && !rc; ctx *= 2)
			for (int d = 0; d < 2 && !rc; d++)
				for (int ps = 0; ps < 3 + 3 && !rc; ps++) {
					int is_extra = ps >= 3;
					if (is_extra && (m || ctx != 128 || d))
						continue;
					const char *pass = is_extra ? "forward_backward" : passes[ps];
					const char *impl = is_extra ? extra[ps - 3].impl : "benchdb";
					const char *compile = is_extra ? extra[ps - 3].compile : "";
					char key[512];
					snprintf(key, sizeof(key),
						 "suite=e2e impl=%s device=cpu dtype=%s pass=%s model=%s d_model=%d "
						 "d_ff=%d num_layers=%d num_heads=%d vocab_size=10000 "
						 "context_length=%d batch_size=4 attention=flash",
						 impl, dtypes[d], pass, models[m].name, models[m].d_model,
						 models[m].d_ff, models[m].layers, models[m].heads, ctx);
					struct case_params p;
					if ((rc = case_key_parse(key, &p, err)))
						break;
					p.warmup = warmup;
					p.iters = iters;
					char *k = case_key_build(&p), *json = case_params_json(&p);
					struct strbuf fk = STRBUF_INIT, fj = STRBUF_INIT, name = STRBUF_INIT;
					sb_add(&fk, k);
					if (compile[0]) {   /* a peer parameter: last in the key, sorted in JSON */
						sb_addf(&fk, " compile=%s", compile);
						const char *at = strstr(json, "\"context_length\"");
						sb_addn(&fj, json, (size_t)(at - json));
						sb_addf(&fj, "\"compile\":%s,%s", compile, at);
					} else {
						sb_add(&fj, json);
					}
					sb_addf(&name, "%s %s %s %s ctx%d B4%s%s", impl, dtypes[d],
						ps == 0 ? "fwd" : ps == 2 ? "train" : "fwd+bwd", models[m].name, ctx,
						!strcmp(compile, "true") ? " compile=true" : "",
						!strcmp(compile, "false") ? " compile=false" : "");
					int oom = m == 2 && ctx == 256 && ps >= 1 && ps < 3;
					double tokens = 4.0 * ctx, fwd_flops = 2.0 * (double)models[m].params * tokens;
					double fwd = fwd_flops / 50.0 * (d ? 0.6 : 1.0);   /* ns at 50 GFLOP/s */
					unsigned phases = pass_phases(p.pass);
					size_t ns = 0;
					for (int it = 0; !oom && it < warmup + iters; it++)
						for (int ph = 0; ph < 3; ph++) {
							if (!(phases & (1u << ph)))
								continue;
							double t = ph == 0 ? fwd : ph == 1 ? 2 * fwd
									   : 2e7 * (double)models[m].params / 1e8;
							if (it < 3)
								t *= warmup_factor[it];
							t *= exp(NOISE_SIGMA * rng_normal());
							samples[ns++] = (struct sample){it, ph, (int64_t)t};
						}
					int64_t pbytes = models[m].params * 4, act = (int64_t)(tokens * 4e5);
					struct case_record c = {
						.ord = ord++, .params = &p, .params_json = sb_str(&fj),
						.case_key = sb_str(&fk), .name = sb_str(&name), .warmup = warmup,
						.iters = oom ? 0 : iters, .status = oom ? STATUS_OOM : STATUS_OK,
						.reason = oom ? "activations: needs 9.21 GiB in all, over the 8.00 GiB "
								"mem_limit" : NULL,
						.max_diff = oom ? -1 : 1e-5, .tolerance = oom ? -1 : 1e-4,
						.mem_limit = 8LL << 30, .param_bytes = pbytes,
						.param_count = models[m].params,
						.grad_bytes = ps ? pbytes : 0, .optim_bytes = ps == 2 ? 2 * pbytes : 0,
						.activation_bytes = act, .workspace_bytes = 0,
						.peak_fwd_bytes = oom ? -1 : pbytes + act,
						.peak_bwd_bytes = oom || !ps ? -1 : 2 * pbytes + act,
						.peak_bytes = oom ? -1 : pbytes * (ps == 2 ? 4 : ps ? 2 : 1) + act,
						.flops = {fwd_flops, ps ? 2 * fwd_flops : -1, -1},
						.bytes = {-1, -1, -1}, .elapsed_ns = 1000000};
					snprintf(c.started_at, sizeof(c.started_at), "%s", r.started_at);
					rc = db_case_put(db, run_id, &c, samples, ns, err);
					free(k);
					free(json);
					sb_free(&fk);
					sb_free(&fj);
					sb_free(&name);
				}
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
				"[--seed S] [--e2e]\n");
		return 2;
	}
	int e2e = 0;
	for (int i = 2; i < argc; i += 2) {
		if (!strcmp(argv[i], "--e2e")) {
			e2e = 1;
			i--;
			continue;
		}
		if (i + 1 == argc) {
			fprintf(stderr, "make_fixture: '%s' needs a value\n", argv[i]);
			return 2;
		}
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
	synthetic_system(&si, "fixture-host");
	int64_t system_id;
	int rc = db_open(argv[1], DB_CREATE, &db, &err);
	if (!rc)
		rc = db_system_put(db, &si, &system_id, &err);
	for (int run = 1; run <= 2 && !rc && !e2e; run++)
		rc = write_run(db, system_id, run, ncases, warmup, iters, &err);
	if (!rc && e2e)
		rc = write_e2e_run(db, system_id, &err);
	db_close(db);
	if (rc) {
		bd_error_print("make_fixture", &err);
		return 1;
	}
	return 0;
}
