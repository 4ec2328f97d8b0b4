/* runner/cmd_run.c: `runner run SWEEP.yaml` — expand, measure every case, store each in one
 * transaction. An interrupt keeps every finished case and marks the run `interrupted`. */
#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "cgroup_cpu.h"
#include "cpu_wait.h"
#include "db.h"
#include "gpu_probe.h"
#include "liveness.h"
#include "measure.h"
#include "noise.h"
#include "opt.h"
#include "params.h"
#include "peer.h"
#include "progress.h"
#include "resume.h"
#include "sha256.h"
#include "shard.h"
#include "splitmix64.h"
#include "sweep.h"
#include "sysinfo.h"
#include "xalloc.h"

/* --repeat's bound: enough for any noise study, small enough that a typo is caught */
#define REPEAT_MAX 1000
/* --interleave's default and bound: the impls of one shape measured in 5 alternating rounds
 * halved the run-to-run spread of their ratio on a loaded machine (docs/performance.md,
 * "Interleaving") */
#define INTERLEAVE_ROUNDS 5
#define INTERLEAVE_MAX 1000
#define RUNNER_STR_(x) #x
#define RUNNER_STR(x) RUNNER_STR_(x)
/* How long the busy-machine probe before the first case spins (cpu_wait.h) */
#define LOAD_PROBE_NS 100000000

/* The signal that stopped the run (the last one taken). */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
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

/* The command line as typed, as a shell would take it back: an argument with anything but
 * letters, digits and _-./:=,+@% single-quoted ('\'' for a quote), one with a control
 * character (a newline in a label) as $'...' with \n, \xHH. */
static char *command_line(const struct cmd_line *cl)
{
	int argc;
	char *const *argv = cmd_line_words(cl, &argc);
	struct strbuf sb = STRBUF_INIT;
	sb_add(&sb, RUNNER_PROG);
	for (int i = 0; i < argc; i++) {
		const unsigned char *a = (const unsigned char *)argv[i];
		int plain = *a != '\0', controls = 0;
		for (const unsigned char *c = a; *c; c++) {
			plain &= isalnum(*c) || (*c < 0x80 && strchr("_-./:=,+@%", *c));
			controls |= *c < 0x20 || *c == 0x7f;
		}
		sb_addc(&sb, ' ');
		if (plain) {
			sb_add(&sb, argv[i]);
			continue;
		}
		sb_add(&sb, controls ? "$'" : "'");
		for (const unsigned char *c = a; *c; c++) {
			if (*c == '\'')
				sb_add(&sb, controls ? "\\'" : "'\\''");
			else if (controls && *c == '\\')
				sb_add(&sb, "\\\\");
			else if (controls && *c == '\n')
				sb_add(&sb, "\\n");
			else if (controls && (*c < 0x20 || *c == 0x7f))
				sb_addf(&sb, "\\x%02x", *c);
			else
				sb_addc(&sb, (char)*c);
		}
		sb_addc(&sb, '\'');
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
	r->rse = res->status == STATUS_OK ? res->rse : -1;
}

/* Whether two cases are the impls of one shape, measured in alternating rounds: two impls of one
 * benchmark of the sweep (so, the same measurement settings) with the same key but for the impl,
 * each built in or a persistent peer's (paced: peer_run_*). A peer with parameters of its own has
 * them in its key, so it is grouped only with impls that have the same. */
static int same_group(const struct sweep_case *a, const struct sweep_case *b)
{
	/* a peer that runs one process per case cannot pause between rounds; `interleave: false` */
	if ((a->peer && (!a->peer->persistent || a->peer->whole)) ||
	    (b->peer && (!b->peer->persistent || b->peer->whole)) ||
	    a->benchmark != b->benchmark ||
	    !strcmp(a->params.impl, b->params.impl))
		return 0;
	char *ka = case_key_drop(a->key, "impl"), *kb = case_key_drop(b->key, "impl");
	int same = ka && kb && !strcmp(ka, kb);
	free(ka);
	free(kb);
	return same;
}

/* The order with each shape's impls next to each other, at the place of the first: for each case
 * in order, the later ones of its group follow it (the order otherwise kept). */
static void group_order(const struct sweep_cases *cases, size_t *order)
{
	for (size_t k = 0; k + 1 < cases->n; k++) {
		size_t next = k + 1;
		for (size_t j = k + 1; j < cases->n; j++)
			if (same_group(&cases->items[order[k]], &cases->items[order[j]])) {
				size_t moved = order[j];
				memmove(&order[next + 1], &order[next], (j - next) * sizeof(*order));
				order[next++] = moved;
			}
	}
}

/* One case of a group being measured, and what it gave. */
struct measured {
	const struct sweep_case *c;
	size_t at;                 /* its place in this repetition's order */
	struct case_result res;
	struct case_gpu gpu;       /* what NVML saw while the group ran (CUDA cases); m[0]'s */
	char started_at[32];
};

/* interleave_ext's calls for the peers' cases of a group (peer_run_*, paced), their wait loops
 * reading the interrupt flag. */
struct group_peers {
	struct measured *m;
	const char *sweep_path;
	struct peer_session *session;
	struct run_heartbeat *hb;
};

static void *group_peer_begin(void *ctx, size_t k, struct case_result *res)
{
	struct group_peers *g = ctx;
	measure_release_signals();
	struct peer_run *r = peer_run_begin(g->m[k].c, g->sweep_path, g->session, 1, res,
					    run_heartbeat_iteration, g->hb);
	measure_hold_signals();
	return r;
}

static int group_peer_step(void *run, int64_t count)
{
	measure_release_signals();
	int done = peer_run_step(run, count);
	measure_hold_signals();
	return done;
}

static void group_peer_end(void *run) { peer_run_end(run); }

/* Measure the n cases of m: one alone (a peer by its command), several in `interleave`
 * alternating rounds (measure_interleaved; a persistent peer's cases paced, peer_run_*). */
static void measure_group(struct measured *m, size_t n, long interleave, const char *sweep_path,
			  struct peer_session *session, struct run_heartbeat *hb)
{
	const struct sweep_case *c = m[0].c;
	const struct sweep_peer **peers = xcalloc(n, sizeof(*peers));
	size_t npeers = 0;
	for (size_t j = 0; j < n; j++)
		if (m[j].c->peer)
			peers[npeers++] = m[j].c->peer;
	if (n > 1 || !c->peer)   /* no idle peer beside these cases, unless kept (a peer's case
				  * alone: its own) */
		peer_session_yield(session, peers, npeers);
	free(peers);
	struct gpu_probe *probe = c->params.device == DEVICE_CUDA ? gpu_probe_start() : NULL;
	for (size_t j = 0; j < n; j++)
		db_now(m[j].started_at);
	if (n == 1 && c->peer) {   /* an external implementation from the sweep's `peers:` */
		measure_release_signals();   /* its wait loop reads the flag */
		peer_measure_case(c, sweep_path, session, &m[0].res, run_heartbeat_iteration, hb);
		measure_hold_signals();
	} else if (n == 1) {
		measure_case(workload_find(suite_name(c->params.suite), c->params.impl, c->params.device),
			     &c->params, &m[0].res, run_heartbeat_iteration, hb);
	} else {
		const struct workload **w = xcalloc(n, sizeof(*w));
		const struct case_params **p = xcalloc(n, sizeof(*p));
		struct case_result *res = xcalloc(n, sizeof(*res));
		void **ctx = xcalloc(n, sizeof(*ctx));
		unsigned char *mine = xcalloc(n, 1);
		struct group_peers gp = {m, sweep_path, session, hb};
		const struct interleave_ext ext = {mine, group_peer_begin, group_peer_step,
						   group_peer_end, &gp};
		for (size_t j = 0; j < n; j++) {
			const struct case_params *pj = &m[j].c->params;
			mine[j] = m[j].c->peer != NULL;
			w[j] = mine[j] ? NULL : workload_find(suite_name(pj->suite), pj->impl, pj->device);
			p[j] = pj;
			ctx[j] = hb;
		}
		measure_interleaved_ext(w, p, res, n, (int)interleave, run_heartbeat_iteration, ctx, &ext);
		free(mine);
		for (size_t j = 0; j < n; j++)
			m[j].res = res[j];
		free(w);
		free(p);
		free(res);
		free(ctx);
	}
	gpu_probe_stop(probe, &m[0].gpu);
}

/* A failure to open the database or begin run rep (0-based, of --repeat): its exit status, said.
 * A lock wait that a stop signal ended (db_busy_interruptible) is an interruption before that run
 * stored anything; the runs of the repetitions before it are kept. */
static int stopped_waiting(int rc, struct bd_error *err, long rep)
{
	if (db_busy_stopped()) {
		if (rep > 0)
			fprintf(stderr, "runner run: stopped while waiting for another process's lock on "
					"the database; repetition %ld was not begun (the runs of those before "
					"it are stored)\n", rep + 1);
		else
			fprintf(stderr, "runner run: stopped while waiting for another process's lock on "
					"the database; no run was stored\n");
		return EXIT_INTERRUPTED;
	}
	bd_error_print("runner run", err);
	return rc == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
}

/* --resume: open the existing database (never creating one), store this machine and take over
 * the run (run_resume_begin). */
static int resume_open(const char *db_path, const char *selector, const char *sweep_hash,
		       size_t ords, int force, const struct run_resume_asked *asked, struct db **db,
		       struct sysinfo *si, int64_t *system_id, struct run_resume *resume,
		       struct bd_error *err)
{
	struct strbuf env = STRBUF_INIT;
	sysinfo_env_json(&env);
	const struct run_record current = {.git_commit = build_git_commit,
					   .git_dirty = build_git_dirty,
					   .tool_version = BENCHDB_VERSION,
					   .sweep_hash = sweep_hash,
					   .env_json = sb_str(&env)};
	int rc = db_open(db_path, 0, db, err);
	if (rc) {
		sb_free(&env);
		return rc;
	}
	sysinfo_collect(si);
	if (!(rc = db_system_put(*db, si, system_id, err)))
		rc = run_resume_begin(*db, selector, &current, *system_id, ords, force, asked, resume,
				      err);
	sb_free(&env);
	return rc;
}

int cmd_run(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB, *label = NULL, *mem_limit_text = NULL;
	const char *shard_text = NULL, *group = NULL, *resume_run = NULL;
	int dry_run = 0, force = 0, stop_on_closed_output = 0;
	long busy_timeout_s = DB_BUSY_TIMEOUT_DEFAULT_S, repeat = 1, interleave = INTERLEAVE_ROUNDS;
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
		 "group id shared by the shards of one launch (default: the Slurm job array's)", &group},
		{"resume", 0, OPT_STRING, "RUN",
		 "continue a run that did not complete: same run, only the cases it lacks", &resume_run},
		{"force", 0, OPT_FLAG, NULL,
		 "with --resume: resume although the sweep, build, machine, environment, label, group or "
		 "limit differ",
		 &force},
		{"repeat", 0, OPT_INT, "N",
		 "run the sweep N times: N runs of one label and group, cases reshuffled each time "
		 "(how many: below)",
		 &repeat},
		{"interleave", 0, OPT_INT, "ROUNDS",
		 "measure the impls of one shape in this many alternating rounds (default "
		 RUNNER_STR(INTERLEAVE_ROUNDS) "; 1: one case after the other)", &interleave},
		RUNNER_OPT_BUSY_TIMEOUT(&busy_timeout_s),
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
	char *cmdline = NULL;
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct sweep_cases whole = {0};   /* with --shard: the whole sweep; cases borrows its slice */
	struct shard shard = {0, 0};
	char group_id[128] = "";
	struct db *db = NULL;
	struct strbuf env = STRBUF_INIT;
	struct run_resume resume = {0};
	struct bd_error err;
	int npos = 0, status = EXIT_OK, rc, mem_limit_all;
	int64_t mem_limit = 0, run_id = 0;
	size_t counts[STATUS_COUNT] = {0}, stored = 0;
	const char *run_status = "complete";

	char **argv = NULL;   /* the positional arguments */
	if ((status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos)) >= 0)
		goto done;
	/* Only once the line is this command's: when its word was an option's value (`runner
	 * --db run merge IN.db`), opt_dispatch goes on to the command it names, which held signals
	 * would leave deaf to Ctrl-C (merge ran to the end, exit 0) and pass on to what it starts. */
	measure_hold_signals();   /* before any thread exists: see measure.h */
	cmdline = command_line(cl);
	status = EXIT_OK;
	if ((status = runner_busy_timeout("run", busy_timeout_s)) >= 0)
		goto done;
	status = EXIT_OK;
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
	if (interleave < 1 || interleave > INTERLEAVE_MAX) {
		fprintf(stderr, "runner run: --interleave expects a count of rounds from 1 to %d, got %ld\n",
			INTERLEAVE_MAX, interleave);
		status = EXIT_USAGE;
		goto done;
	}
	mem_limit_all = mem_limit_text != NULL;   /* --mem-limit: every case, the sweep's too */
	if ((status = mem_limit_option(mem_limit_text, "runner run", &mem_limit)) >= 0)
		goto done;
	status = EXIT_OK;
	if ((rc = sweep_load(argv[0], &sweep, &err)) || (rc = sweep_expand(sweep, &cases, &err))) {
		bd_error_print("runner run", &err);
		status = EXIT_USAGE;
		goto done;
	}
	if (shard_text && shard_parse(shard_text, &shard, &err)) {
		bd_error_print("runner run", &err);
		status = EXIT_USAGE;
		goto done;
	}
	struct sysinfo si;
	int64_t system_id = 0;
	size_t ords = 0;   /* case orders are the whole sweep's (a shard holds a subset) */
	for (size_t i = 0; i < cases.n; i++)
		ords = cases.items[i].index + 1 > ords ? cases.items[i].index + 1 : ords;
	if (resume_run && !dry_run) {
		/* the run's shard, group, label and limit, not this command line's (resume.h) */
		const struct run_resume_asked asked = {shard_text ? &shard : NULL, label, group,
						       mem_limit_text ? mem_limit : 0, cmdline};
		db_busy_interruptible(1);   /* nothing is taken over until resume_open returns */
		rc = resume_open(db_path, resume_run, sweep->hash, ords, force, &asked, &db, &si,
				 &system_id, &resume, &err);
		db_busy_interruptible(0);
		if (rc) {
			status = stopped_waiting(rc, &err, 0);
			goto done;
		}
		shard.index = resume.id.shard_index;
		shard.count = resume.id.shard_count;
		shard_text = shard.count ? "the run's" : NULL;
		label = resume.id.label;
		snprintf(group_id, sizeof(group_id), "%s", resume.id.group_id ? resume.id.group_id : "");
		if (resume.id.mem_limit > 0) {
			mem_limit = resume.id.mem_limit;
			mem_limit_all = resume.id.mem_limit_all;
		}
	} else if ((group || (shard_text && !dry_run)) &&
		   shard_group_id(group, shard_text, group_id, sizeof(group_id), &err)) {
		bd_error_print("runner run", &err);
		status = EXIT_USAGE;
		goto done;
	}
	if (shard_text) {
		whole = cases;
		if (shard_select(&whole, &shard, &cases)) {
			fprintf(stderr, "runner run: cannot split the sweep into %d shards\n", shard.count);
			status = EXIT_FAIL;
			goto done;
		}
	}
	if (!mem_limit)
		mem_limit = default_mem_limit();
	cases_limit_memory(&cases, mem_limit, mem_limit_all);
	if (dry_run) {   /* the cases with the limits the run would give them */
		print_case_list(sweep, &cases, whole.items ? &whole : NULL);
		goto done;
	}

	db_busy_interruptible(1);   /* Ctrl-C while another process holds the lock: nothing stored */
	if (!db && (rc = db_open(db_path, DB_CREATE, &db, &err))) {
		db_busy_interruptible(0);
		status = stopped_waiting(rc, &err, 0);   /* BD_EINVAL: --db names no file */
		goto done;
	}
	if (!resume_run)
		sysinfo_collect(&si);
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
		.mem_limit = mem_limit,
		.mem_limit_all = mem_limit_all,
	};
	size_t *order = xcalloc(cases.n, sizeof(*order));
	char repeat_id[48] = "";
	for (size_t i = 0; i < cases.n; i++)
		order[i] = i;
	/* the persistent peers' processes; a kept one's live through every repetition */
	struct peer_session *session = peer_session_new();
	/* a stop signal held since the last case of the previous run: no new, empty run */
	for (long rep = 0; rep < repeat && !(rep ? measure_take_signals() : measure_interrupted);
	     rep++) {
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
		if (interleave > 1)   /* each shape's impls together, measured in rounds */
			group_order(&cases, order);
		db_busy_interruptible(1);   /* until the run is begun, a lock wait yields to Ctrl-C */
		if (!resume_run && ((!rep && (rc = db_system_put(db, &si, &system_id, &err))) ||
				    (rc = db_run_begin_live(db, system_id, &run, &run_id, &err)))) {
			db_busy_interruptible(0);
			status = stopped_waiting(rc, &err, rep);
			free(order);
			peer_session_free(session);
			goto done;
		}
		db_busy_interruptible(0);   /* from here every finished case is stored, however long */
		if (resume_run) {
			run_id = resume.run_id;
			memcpy(run.uuid, resume.uuid, sizeof(run.uuid));
			fprintf(stderr, "resuming run %lld: %zu of %zu cases stored before\n",
				(long long)run_id, resume.nstored, cases.n);
		}
		if (!rep)
			install_signals(stop_on_closed_output);
		if (!stop_on_closed_output)   /* a closed pipe drops the summary too, not the run */
			cli_stdout_pipe_may_close();
		fprintf(stderr, "run %lld (%.8s) of %s: %zu cases into %s\n", (long long)run_id, run.uuid,
			sweep->path, cases.n, db_path);
		struct contention_count waited = {.level = CPU_WAIT_CONTENDED};
		struct machine_load load;
		if (!rep && (machine_load_probe(LOAD_PROBE_NS, &load),
			     machine_load_busy(&load, CPU_WAIT_CONTENDED))) {
			contention_warn_before(stderr, &load);
			waited.busy_before = 1;
		}
		if (!rep)
			cgroup_cpu_quota_warn(stderr);
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
		rc = 0;
		for (size_t k = 0, g; k < cases.n && !rc; k += g) {
			/* the cases at k..k+g-1: one, or the impls of one shape, interleaved */
			g = 1;
			while (interleave > 1 && k + g < cases.n &&
			       same_group(&cases.items[order[k]], &cases.items[order[k + g]]))
				g++;
			if (measure_take_signals())
				break;
			struct measured *m = xcalloc(g, sizeof(*m));
			size_t nm = 0;
			for (size_t j = 0; j < g; j++)
				if (!(resume.stored && resume.stored[cases.items[order[k + j]].index]))
					m[nm++] = (struct measured){.c = &cases.items[order[k + j]], .at = k + j};
			if (nm) {
				progress_case_start(&pg, m[0].at, m[0].c->name);
				measure_group(m, nm, interleave, sweep->path, session, &hb);
			}
			for (size_t j = 0; j < nm && !rc; j++) {
				struct case_result *res = &m[j].res;
				if (res->interrupted)
					continue;   /* an unfinished case is not stored */
				struct case_record rec;
				progress_case_start(&pg, m[j].at, m[j].c->name);
				case_record_fill(&rec, m[j].c, res, m[j].started_at);
				rc = db_case_put(db, run_id, &rec, res->samples, res->nsamples, &err);
				if (!rc)
					rc = db_case_gpu_put(db, run_id, rec.ord, &m[0].gpu, &err);
				if (rc) {
					progress_finish(&pg);
					bd_error_print("runner run", &err);
					if (measure_take_signals() && stop_signal == SIGXFSZ) {
						/* the file-size limit: an interrupt (below), not a broken
						 * database */
						fprintf(stderr, "runner run: the file-size limit (ulimit -f) "
							"stopped the run before case %s was stored; resume it "
							"(--resume %lld) where the file may grow\n",
							m[j].c->name, (long long)run_id);
						break;
					}
					run_status = "failed";
					status = EXIT_FAIL;
					break;
				}
				progress_case_end(&pg, res);
				if (res->status == STATUS_OK)
					contention_add(&waited, res->cpu_wait);
				run_heartbeat_now(&hb);
				counts[res->status]++;
				stored++;
			}
			for (size_t j = 0; j < nm; j++)
				free(m[j].res.samples);
			int interrupted = nm && m[nm - 1].res.interrupted;
			free(m);
			if (interrupted)
				break;
		}
		peer_session_yield(session, NULL, 0);   /* a kept peer's process stays for the next run */
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
		/* a resumed run's error cases stored before count too: the invocation that stored
		 * them was killed before it could exit 1 */
		if ((counts[STATUS_ERROR] || resume.counts[STATUS_ERROR]) && status == EXIT_OK)
			status = EXIT_FAIL;
		if (!strcmp(run_status, "failed"))
			rep = repeat;   /* the database could not be written: no further repetition */
		printf("run %lld %s: %zu of %zu cases stored (", (long long)run_id, run_status,
		       stored + resume.nstored, cases.n);
		for (int k = 0; k < STATUS_COUNT; k++)   /* "4 ok, 0 oom, ...", a resumed run's whole */
			printf("%s%zu %s", k ? ", " : "", counts[k] + resume.counts[k],
			       status_name((enum bd_status)k));
		printf(") in %s\n", db_path);
		contention_warn_after(stderr, &waited);
		if (pg.dropped_at)
			printf("progress: stderr could not be written from case %zu of %zu on (a closed "
			       "pipe?); the sweep went on\n", pg.dropped_at, cases.n);
		if (stored && repeat == 1)
			printf("see: report --db %s --run %lld\n", db_path, (long long)run_id);
	}
	free(order);
	peer_session_free(session);
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
