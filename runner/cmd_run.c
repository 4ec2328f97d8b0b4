/* runner/cmd_run.c: `runner run SWEEP.yaml` — expand, measure every case, store each in one
 * transaction. An interrupt keeps every finished case and marks the run `interrupted`. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "db.h"
#include "gpu_probe.h"
#include "liveness.h"
#include "measure.h"
#include "noise.h"
#include "opt.h"
#include "peer.h"
#include "progress.h"
#include "resume.h"
#include "sha256.h"
#include "shard.h"
#include "splitmix64.h"
#include "sweep.h"
#include "sysinfo.h"
#include "xalloc.h"

/* Exit status after SIGINT/SIGTERM, as shells report a signal death (128 + SIGINT). */
#define EXIT_INTERRUPTED 130
/* Without mem_limit in the sweep or --mem-limit, a CPU case may use this share of the memory
 * that was available when the run started, so that no sweep drives the machine into swap. */
#define DEFAULT_MEM_SHARE 0.8
/* --repeat's bound: enough for any noise study, small enough that a typo is caught */
#define REPEAT_MAX 1000

static void on_signal(int sig)
{
	(void)sig;
	measure_interrupted = 1;
}

/* SIGPIPE without --stop-on-closed-output: the write that raised it failed with EPIPE, and the
 * progress (progress.c) stops writing; the sweep goes on. */
static void on_closed_output(int sig)
{
	(void)sig;
}

static void install_signals(int stop_on_closed_output)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* restart interrupted system calls: the flag is read at iteration boundaries (and by the
	 * peer's poll loop, which sees EINTR whatever this says), so no library call in any thread
	 * (oneDNN's, OpenMP's, SQLite's) has to cope with EINTR */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* an ssh drop and a file-size limit end the run the same way */
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGXFSZ, &sa, NULL);
	/* `runner run ... 2>&1 | head`: a write to the closed pipe fails with EPIPE instead of killing
	 * the bookkeeping; it ends the run only when asked to */
	if (!stop_on_closed_output)
		sa.sa_handler = on_closed_output;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Fisher-Yates over order[0..n) with a generator seeded from seed (the run's uuid text): each
 * repetition of --repeat gets its own order of the cases, so that drift over the repetitions
 * reaches every case alike. splitmix64: small, and the same order for the same seed anywhere. */
static void shuffle_cases(size_t *order, size_t n, const char *seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (const char *c = seed; *c; c++)
		x = (x ^ (unsigned char)*c) * 0x100000001b3ull;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(splitmix64(&x) % i), t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

/* A random version-4 UUID from /dev/urandom (falls back to time and pid). */
static void make_uuid(char out[40])
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, b, sizeof(b)) != (ssize_t)sizeof(b)) {
		char seed[64];
		snprintf(seed, sizeof(seed), "%lld-%d", (long long)now_ns(), (int)getpid());
		unsigned char d[32];
		struct sha256 h;
		sha256_init(&h);
		sha256_update(&h, seed, strlen(seed));
		sha256_final(&h, d);
		memcpy(b, d, sizeof(b));
	}
	if (fd >= 0)
		close(fd);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
}

/* The command line as typed, arguments with spaces quoted. */
static char *command_line(const struct cmd_line *cl)
{
	int argc;
	char *const *argv = cmd_line_words(cl, &argc);
	struct strbuf sb = STRBUF_INIT;
	sb_add(&sb, RUNNER_PROG);
	for (int i = 0; i < argc; i++) {
		sb_addc(&sb, ' ');
		if (strpbrk(argv[i], " \t'\"") || !argv[i][0])
			sb_addf(&sb, "'%s'", argv[i]);
		else
			sb_add(&sb, argv[i]);
	}
	return sb_detach(&sb);
}

static void case_record_fill(struct case_record *r, const struct sweep_case *c,
			     const struct case_result *res, const char *started_at)
{
	const struct case_params *p = &c->params;
	memset(r, 0, sizeof(*r));
	r->ord = (int64_t)c->index;
	r->params = p;   /* the typed columns */
	r->params_json = c->params_json;
	r->case_key = c->key;
	r->name = c->name;
	r->warmup = p->warmup;
	r->iters = res->iters;   /* iters: auto: the measured iterations it took */
	r->status = res->status;
	r->reason = res->reason[0] ? res->reason : NULL;
	r->max_diff = res->max_diff;
	r->tolerance = res->tolerance;
	r->mem_limit = p->mem_limit;
	/* bytes held: the model's own count (with a bfloat16 shadow) when the workload gives one */
	r->param_bytes = res->memory.params > 0 ? res->memory.params
			 : res->figures.param_bytes > 0 ? res->figures.param_bytes : -1;
	r->param_count = res->figures.param_count;
	r->grad_bytes = res->memory.grads;
	r->optim_bytes = res->memory.optim;
	r->activation_bytes = res->memory.activations;
	r->workspace_bytes = res->memory.workspace;
	r->peak_fwd_bytes = res->peak_fwd_bytes;
	r->peak_bwd_bytes = res->peak_bwd_bytes;
	r->peak_bytes = res->peak_bytes;
	unsigned phases = pass_phases(p->pass);
	for (int ph = 0; ph < PHASE_COUNT; ph++) {
		int timed = (phases >> ph) & 1;
		r->flops[ph] = timed ? res->figures.flops[ph] : -1;
		r->bytes[ph] = timed ? res->figures.bytes[ph] : -1;
	}
	snprintf(r->started_at, sizeof(r->started_at), "%s", started_at);
	r->elapsed_ns = res->elapsed_ns;
	r->impl_info = res->impl_info;
	r->stop_reason = res->status == STATUS_OK ? res->stop_reason : NULL;
	r->cpu_wait = res->status == STATUS_OK ? res->cpu_wait : -1;
}

int cmd_run(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB, *label = NULL, *mem_limit_text = NULL;
	const char *shard_text = NULL, *group = NULL, *resume_run = NULL;
	int dry_run = 0, force = 0, stop_on_closed_output = 0;
	long busy_timeout_s = 3600, repeat = 1;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to write (default bench.db; created if missing)",
		 &db_path},
		{"label", 0, OPT_STRING, "TEXT", "label stored with the run (select it later with --run)",
		 &label},
		{"mem-limit", 0, OPT_STRING, "SIZE",
		 "memory a case may allocate, e.g. 8GiB (overrides the sweep's mem_limit)", &mem_limit_text},
		{"dry-run", 'n', OPT_FLAG, NULL, "expand and list the cases; run and write nothing",
		 &dry_run},
		{"shard", 0, OPT_STRING, "I/N",
		 "run slice I (0-based) of N balanced slices; auto: from Slurm or Kubernetes", &shard_text},
		{"group", 0, OPT_STRING, "ID",
		 "group id shared by the shards (default: the Slurm job, else sweep hash and N)", &group},
		{"resume", 0, OPT_STRING, "RUN",
		 "continue a run that did not complete: same run, only the cases it lacks", &resume_run},
		{"force", 0, OPT_FLAG, NULL,
		 "with --resume: resume although the sweep text, build or machine differ", &force},
		{"repeat", 0, OPT_INT, "N",
		 "run the sweep N times: N runs of one label and group, cases reshuffled each time "
		 "(how many: below)",
		 &repeat},
		{"busy-timeout", 0, OPT_INT, "SECONDS",
		 "how long to wait for another writer's lock, retrying (default 3600)", &busy_timeout_s},
		{"stop-on-closed-output", 0, OPT_FLAG, NULL,
		 "end the run (interrupted) when stdout or stderr is a closed pipe; default: drop the "
		 "progress and go on", &stop_on_closed_output},
		{0},
	};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "run", "[options] SWEEP.yaml",
		"Run every case of a sweep and store the run, its system, each case and every iteration's\n"
		"timing (warm-up included) in a SQLite database. Exit status: 0 when every case was stored\n"
		"(oom and unsupported cases are results), 1 when a case failed validation or the database\n"
		"could not be written, 2 for a bad sweep or option, 130 when interrupted.\n"
		"How many runs: `report regress` compares runs, not iterations, and prints the run noise s\n"
		"(a run's median moves s from run to run) and the smallest change it detects. To detect a\n"
		"change D (10% = 0.10) 90% of the time at alpha 0.01, about 26 (s/D)^2 runs a side: 4 at\n"
		"s = 4%, D = 10%. Runs of one --repeat group share the machine's state and agree more\n"
		"closely than runs made at different times, so spread them (one --repeat group a day, or\n"
		"history of the same commit) to reach D when a new session moves the median too."};
	measure_hold_signals();   /* before any thread exists: see measure.h */
	char *cmdline = command_line(cl);
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct sweep_cases whole = {0};   /* with --shard: the whole sweep; cases borrows its slice */
	struct shard shard = {0, 0};
	char group_id[128] = "";
	struct db *db = NULL;
	struct strbuf env = STRBUF_INIT;
	struct run_resume resume = {0};
	struct bd_error err;
	int npos = 0, status = EXIT_OK, rc;
	int64_t mem_limit = 0, run_id = 0;
	size_t counts[STATUS_COUNT] = {0}, stored = 0;
	const char *run_status = "complete";

	char **argv = NULL;   /* the positional arguments */
	if ((status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos)) >= 0)
		goto done;
	status = EXIT_OK;
	if (busy_timeout_s < 0 || busy_timeout_s > INT32_MAX / 1000) {
		fprintf(stderr, "runner run: --busy-timeout expects seconds from 0 to %d, got %ld\n",
			INT32_MAX / 1000, busy_timeout_s);
		status = EXIT_USAGE;
		goto done;
	}
	if (repeat < 1 || repeat > REPEAT_MAX || (repeat > 1 && (resume_run || shard_text || group))) {
		if (repeat < 1 || repeat > REPEAT_MAX)
			fprintf(stderr, "runner run: --repeat expects a count from 1 to %d, got %ld\n",
				REPEAT_MAX, repeat);
		else
			fprintf(stderr, "runner run: --repeat starts new runs of one group: it does not "
					"combine with --%s\n",
				resume_run ? "resume" : shard_text ? "shard" : "group");
		status = EXIT_USAGE;
		goto done;
	}
	if ((status = mem_limit_option(mem_limit_text, "runner run", &mem_limit)) >= 0)
		goto done;
	status = EXIT_OK;
	if ((rc = sweep_load(argv[0], &sweep, &err)) || (rc = sweep_expand(sweep, &cases, &err))) {
		bd_error_print("runner run", &err);
		status = EXIT_USAGE;
		goto done;
	}
	if (shard_text && (shard_parse(shard_text, &shard, &err) ||
			   shard_group_id(group, sweep->hash, shard.count, group_id, sizeof(group_id)))) {
		bd_error_print("runner run", &err);
		status = EXIT_USAGE;
		goto done;
	}
	if (!shard_text && group)
		snprintf(group_id, sizeof(group_id), "%s", group);
	if (shard_text) {
		whole = cases;
		if (shard_select(&whole, &shard, &cases)) {
			fprintf(stderr, "runner run: cannot split the sweep into %d shards\n", shard.count);
			status = EXIT_FAIL;
			goto done;
		}
	}
	if (!mem_limit) {
		int64_t total, available;
		sysinfo_memory(&total, &available);
		mem_limit = (int64_t)(DEFAULT_MEM_SHARE * (double)(available ? available : total));
	}
	cases_limit_memory(&cases, mem_limit, mem_limit_text != NULL);
	if (dry_run) {   /* the cases with the limits the run would give them */
		print_case_list(sweep, &cases);
		goto done;
	}

	if ((rc = db_open(db_path, DB_CREATE, &db, &err))) {
		bd_error_print("runner run", &err);
		status = EXIT_FAIL;
		goto done;
	}
	db_set_busy_timeout(db, (int)(busy_timeout_s * 1000));
	struct sysinfo si;
	sysinfo_collect(&si);
	int64_t system_id;
	sysinfo_env_json(&env);
	struct run_record run = {
		.git_commit = build_git_commit,
		.git_dirty = build_git_dirty,
		.git_branch = build_git_branch,
		.tool_version = BENCHDB_VERSION,
		.command_line = cmdline,
		.sweep_path = sweep->path,
		.sweep_name = sweep->name,
		.sweep_text = sweep->text,
		.sweep_hash = sweep->hash,
		.label = label,
		.env_json = sb_str(&env),
		.group_id = group_id[0] ? group_id : NULL,
		.shard_index = shard.index,
		.shard_count = shard.count,
	};
	size_t *order = xcalloc(cases.n, sizeof(*order));
	char repeat_id[48] = "";
	for (size_t i = 0; i < cases.n; i++)
		order[i] = i;
	for (long rep = 0; rep < repeat && !measure_interrupted; rep++) {
		memset(counts, 0, sizeof(counts));
		stored = 0;
		run_status = "complete";
		make_uuid(run.uuid);
		db_now(run.started_at);
		if (repeat > 1) {
			if (!rep) {   /* the group: named after the first run */
				snprintf(repeat_id, sizeof(repeat_id), "repeat-%.8s", run.uuid);
				run.group_id = repeat_id;
				if (!run.label)
					run.label = repeat_id;
			}
			shuffle_cases(order, cases.n, run.uuid);
			fprintf(stderr, "repetition %ld of %ld (group and label %s)\n", rep + 1, repeat,
				run.label);
		}
		size_t ords = 0;   /* case orders are the whole sweep's (a shard holds a subset) */
		for (size_t i = 0; i < cases.n; i++)
			ords = cases.items[i].index + 1 > ords ? cases.items[i].index + 1 : ords;
		if ((!rep && (rc = db_system_put(db, &si, &system_id, &err))) ||
		    (resume_run ? (rc = run_resume_begin(db, resume_run, &run, system_id, ords, force,
							 &resume, &err))
				: (rc = db_run_begin_live(db, system_id, &run, &run_id, &err)))) {
			bd_error_print("runner run", &err);
			status = rc == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
			free(order);
			goto done;
		}
		if (resume_run) {
			run_id = resume.run_id;
			memcpy(run.uuid, resume.uuid, sizeof(run.uuid));
			fprintf(stderr, "resuming run %lld: %zu of %zu cases stored before\n",
				(long long)run_id, resume.nstored, cases.n);
		}
		if (!rep)
			install_signals(stop_on_closed_output);
		fprintf(stderr, "run %lld (%.8s) of %s: %zu cases into %s\n", (long long)run_id, run.uuid,
			sweep->path, cases.n, db_path);
		if (shard_text)
			fprintf(stderr, "shard %d/%d of group %s: %zu of the sweep's %zu cases\n", shard.index,
				shard.count, group_id, cases.n, whole.n);

		struct progress pg;
		struct progress_work *work = xcalloc(cases.n, sizeof(*work));
		for (size_t k = 0; k < cases.n; k++)   /* what a resumed run stored costs nothing */
			if (!resume.stored || !resume.stored[cases.items[order[k]].index])
				case_work(&cases.items[order[k]], 1, &work[k]);
		progress_init(&pg, cases.n, work);
		free(work);
		struct run_heartbeat hb = {&pg, db, run_id, now_ns()};
		struct peer_session *session = peer_session_new();   /* a persistent peer's process */
		for (size_t k = 0; k < cases.n; k++) {
			size_t i = order[k];   /* the sweep's order, or this repetition's */
			if (measure_take_signals())
				break;
			if (resume.stored && resume.stored[cases.items[i].index])
				continue;
			const struct sweep_case *c = &cases.items[i];
			struct case_result res;
			struct case_record rec;
			char started_at[32];
			db_now(started_at);
			progress_case_start(&pg, k, c->name);
			if (!c->peer || !c->peer->persistent)   /* no idle peer beside another case */
				peer_session_end(session);
			struct case_gpu gpu;   /* what NVML saw while the case ran (CUDA cases) */
			struct gpu_probe *probe = c->params.device == DEVICE_CUDA ? gpu_probe_start() : NULL;
			if (c->peer) {   /* an external implementation from the sweep's `peers:` */
				measure_release_signals();   /* its wait loop reads the flag */
				peer_measure_case(c, sweep->path, session, &res, run_heartbeat_iteration, &hb);
				measure_hold_signals();
			} else
				measure_case(workload_find(suite_name(c->params.suite), c->params.impl,
							   c->params.device),
					     &c->params, &res, run_heartbeat_iteration, &hb);
			gpu_probe_stop(probe, &gpu);
			if (res.interrupted) {
				free(res.samples);
				break;
			}
			case_record_fill(&rec, c, &res, started_at);
			rc = db_case_put(db, run_id, &rec, res.samples, res.nsamples, &err);
			if (!rc)
				rc = db_case_gpu_put(db, run_id, rec.ord, &gpu, &err);
			free(res.samples);
			if (rc) {
				progress_finish(&pg);
				bd_error_print("runner run", &err);
				run_status = "failed";
				status = EXIT_FAIL;
				break;
			}
			progress_case_end(&pg, &res);
			run_heartbeat_now(&hb);
			counts[res.status]++;
			stored++;
		}
		peer_session_free(session);
		progress_finish(&pg);
		if (measure_take_signals() && strcmp(run_status, "failed")) {
			run_status = "interrupted";
			status = EXIT_INTERRUPTED;
		}
		if (db_run_end(db, run_id, run_status, &err)) {
			bd_error_print("runner run", &err);
			status = EXIT_FAIL;
		}
		int folded;   /* the run into the noise between runs (report/noise.h): not fatal */
		if (!strcmp(run_status, "complete") && noise_fold_run(db, run_id, &folded, &err))
			bd_error_print("runner run: warning", &err);
		if (counts[STATUS_ERROR] && status == EXIT_OK)
			status = EXIT_FAIL;
		if (!strcmp(run_status, "failed"))
			rep = repeat;   /* the database could not be written: no further repetition */
		printf("run %lld %s: %zu of %zu cases stored (", (long long)run_id, run_status,
		       stored + resume.nstored, cases.n);
		for (int k = 0; k < STATUS_COUNT; k++)   /* "4 ok, 0 oom, ..." */
			printf("%s%zu %s", k ? ", " : "", counts[k], status_name((enum bd_status)k));
		printf(") in %s\n", db_path);
		if (pg.dropped_at)
			printf("progress: stderr could not be written from case %zu of %zu on (a closed "
			       "pipe?); the sweep went on\n", pg.dropped_at, cases.n);
		if (stored && repeat == 1)
			printf("see: report --db %s --run %lld\n", db_path, (long long)run_id);
	}
	free(order);
	if (repeat > 1 && repeat_id[0])
		printf("the runs of this invocation share label and group %s: report --db %s "
		       "regress --baseline-label %s (or --candidate-label) takes them together\n",
		       repeat_id, db_path, run.label);
done:
	run_resume_free(&resume);
	db_close(db);
	sb_free(&env);
	if (whole.items) {
		free(cases.items);
		cases = whole;
	}
	sweep_cases_free(&cases);
	sweep_free(sweep);
	free(cmdline);
	return status;
}
