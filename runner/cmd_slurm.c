/* runner/cmd_slurm.c: `runner slurm SWEEP.yaml --shards N` — an sbatch job-array script that runs
 * the sweep's N shards (`runner run --shard TASK/N`), each into its own database on the node's
 * local disk, copied to a shared results directory when the shard ends; or `--nodes N` — a job
 * of N nodes that runs the whole sweep on each (a job step with a task per node) and merges
 * their databases at its end, for `report nodes`. With --submit, handed to sbatch. Slurm
 * schedules; benchdb only writes the script. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "opt.h"
#include "shard.h"
#include "strbuf.h"
#include "sweep.h"

extern char **environ;

/* Slurm's default MaxArraySize is 1001: task ids 0..1000. */
#define SLURM_MAX_SHARDS 1001

/* s quoted for a message: control characters as \n, \xHH, so that a bad value shows what it is. */
static void sb_add_quoted(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\n')
			sb_add(sb, "\\n");
		else if (*c < 0x20 || *c == 0x7f)
			sb_addf(sb, "\\x%02x", *c);
		else
			sb_addc(sb, (char)*c);
	}
	sb_addc(sb, '\'');
}

/* Whether value may follow `#SBATCH --option=` as one word: no whitespace or control character
 * (a newline would start a directive of its own), and only letters, digits and the characters
 * of allowed (NULL: any other printable byte). Prints why not. */
static int sbatch_word_ok(const char *option, const char *value, const char *allowed,
			  const char *expects)
{
	int ok = *value != '\0';
	for (const unsigned char *c = (const unsigned char *)value; ok && *c; c++)
		ok = *c > 0x20 && *c != 0x7f &&
		     (!allowed || (*c < 0x80 && (isalnum(*c) || strchr(allowed, *c))));
	if (!ok) {
		struct strbuf q = STRBUF_INIT;
		sb_add_quoted(&q, value);
		fprintf(stderr, "runner slurm: --%s expects %s, got %s\n", option, expects, sb_str(&q));
		sb_free(&q);
	}
	return ok;
}

/* A Slurm time limit: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
 * days-hours:minutes, days-hours:minutes:seconds, or unlimited / infinite. */
static int slurm_time_ok(const char *t)
{
	if (!strcasecmp(t, "unlimited") || !strcasecmp(t, "infinite"))
		return 1;
	const char *dash = strchr(t, '-');
	int groups = 0;
	if (dash) {
		if (dash == t)
			return 0;
		for (const char *c = t; c < dash; c++)
			if (!isdigit((unsigned char)*c))
				return 0;
		t = dash + 1;
	}
	for (;;) {
		size_t n = strspn(t, "0123456789");
		if (!n || n > 9)
			return 0;
		groups++;
		t += n;
		if (!*t)
			break;
		if (*t++ != ':')
			return 0;
	}
	return groups <= 3;
}

struct slurm_job {
	const char *runner, *sweep, *results, *name;
	long shards, nodes, gpus_per_task, cpus_per_task;   /* one of shards, nodes is 0 */
	const char *partition, *time, *label, *mem_limit, *account;
};

/* The options that become #SBATCH lines: one word each, nothing that starts a line of its own
 * (`--partition $'gpu\n#SBATCH --exclusive'` wrote a second directive). Prints why not. */
static int sbatch_values_ok(const struct slurm_job *j, const char *results)
{
	if (j->partition && !sbatch_word_ok("partition", j->partition, "_-.,",
					    "a partition name (letters, digits, '_', '-', '.'; "
					    "several separated by ',')"))
		return 0;
	if (j->account && !sbatch_word_ok("account", j->account, "_-.",
					  "an account name (letters, digits, '_', '-', '.')"))
		return 0;
	if (j->time && !slurm_time_ok(j->time)) {
		struct strbuf q = STRBUF_INIT;
		sb_add_quoted(&q, j->time);
		fprintf(stderr, "runner slurm: --time expects a Slurm time limit (MINUTES, "
			"MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, "
			"DAYS-HOURS:MINUTES:SECONDS or UNLIMITED), got %s\n", sb_str(&q));
		sb_free(&q);
		return 0;
	}
	return !results || sbatch_word_ok("results", results, NULL,
					  "a directory without whitespace or control characters "
					  "(it is written into an #SBATCH line)");
}

/* The #SBATCH --output line: the results directory, '%' in it written '%%' (it starts a Slurm
 * filename pattern), then pattern. */
static void slurm_output(const struct slurm_job *j, const char *pattern, struct strbuf *sb)
{
	sb_add(sb, "#SBATCH --output=");
	for (const char *c = j->results; *c; c++)
		sb_add(sb, *c == '%' ? "%%" : (char[2]){*c, '\0'});
	sb_addf(sb, "/%s\n", pattern);
}

/* The #SBATCH lines of the resources every task gets. */
static void slurm_resources(const struct slurm_job *j, struct strbuf *sb)
{
	if (j->partition)
		sb_addf(sb, "#SBATCH --partition=%s\n", j->partition);
	if (j->account)
		sb_addf(sb, "#SBATCH --account=%s\n", j->account);
	if (j->gpus_per_task > 0)
		sb_addf(sb, "#SBATCH --gpus-per-task=%ld\n", j->gpus_per_task);
	if (j->cpus_per_task > 0)
		sb_addf(sb, "#SBATCH --cpus-per-task=%ld\n", j->cpus_per_task);
	if (j->time)
		sb_addf(sb, "#SBATCH --time=%s\n", j->time);
}

void cluster_run_options(struct strbuf *sb, const char *label, const char *mem_limit)
{
	if (label) {
		sb_add(sb, " --label ");
		sb_add_shell_word(sb, label);
	}
	if (mem_limit) {
		sb_add(sb, " --mem-limit ");
		sb_add_shell_word(sb, mem_limit);
	}
}

/* "set -u" and the paths the job's tasks read: RUNNER, SWEEP, RESULTS (after prefix: "export "
 * where a job step's tasks need them). */
static void slurm_paths(const struct slurm_job *j, const char *prefix, struct strbuf *sb)
{
	sb_addf(sb, "set -u\n%sRUNNER=", prefix);
	sb_add_shell_word(sb, j->runner);
	sb_add(sb, " SWEEP=");
	sb_add_shell_word(sb, j->sweep);
	sb_add(sb, " RESULTS=");
	sb_add_shell_word(sb, j->results);
	sb_addc(sb, '\n');
}

/* Slurm's time limit and scancel send SIGTERM to every process of the job, the script's shell
 * too, which died at once: the runner ended its run interrupted, and nothing copied it to the
 * results. With a trap the shell waits for the runner and goes on to the copy. No single quote:
 * the --nodes task script is itself single-quoted. */
static const char stop_trap[] =
	"# Slurm stops a job (time limit, scancel) with SIGTERM to every process, this shell too:\n"
	"# it waits for the runner, which ends the run interrupted at the next iteration, then copies\n"
	"trap \"echo benchdb: stop signal: the database is copied once the runner has stopped >&2\" "
	"TERM INT HUP\n";

/* The task's directory on its node's disk, LOCAL (named by id, shell text), and its database
 * file's name there, DB; and the trap that keeps the task's shell to its copy. */
static void slurm_local(struct strbuf *sb, const char *id, const char *db)
{
	sb_addf(sb, "LOCAL=\"${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/benchdb-%s\"\n"
		    "DB=%s\n"
		    "mkdir -p \"$LOCAL\" || exit 1\n", id, db);
	sb_add(sb, stop_trap);
}

/* The lines that copy $LOCAL/DB to $out when the run ends, and set status. No single quote: the
 * --nodes task script is single-quoted. */
static const char copy_back[] =
	"# an interrupted or failed run still keeps its finished cases: copy it either way\n"
	"if [ -f \"$LOCAL/$DB\" ]; then\n"
	"\t# a -wal or -shm left beside $out by an earlier attempt of this task (a requeue)\n"
	"\t# belongs to another file: SQLite would read its pages into this one\n"
	"\trm -f \"$out-wal\" \"$out-shm\"\n"
	"\tcp \"$LOCAL/$DB\" \"$out.part\" && mv \"$out.part\" \"$out\" || status=1\n"
	"\t# a WAL the runner could not fold into the file holds cases too: keep it beside\n"
	"\tif [ -s \"$LOCAL/$DB-wal\" ]; then\n"
	"\t\tcp \"$LOCAL/$DB-wal\" \"$out-wal\" || status=1\n"
	"\tfi\n"
	"fi\n"
	"rm -rf \"$LOCAL\"\n";

/* --nodes N: one job of N nodes; a job step runs a task on each, every task the whole sweep
 * into a database on its node's disk (recorded under Slurm's node name, in the group
 * slurm-JOB), copied to DIR/node-JOB-K.db; then the merge step folds them into DIR/nodes-JOB.db. */
static void slurm_nodes_script(const struct slurm_job *j, struct strbuf *sb)
{
	sb_add(sb, "#!/bin/bash\n");
	sb_addf(sb, "# %s: written by `runner slurm --nodes %ld`: the whole sweep once on each of %ld "
		    "nodes\n# (one job step, a task per node), then their databases merged.\n",
		j->name, j->nodes, j->nodes);
	sb_addf(sb, "#SBATCH --job-name=benchdb-%s\n", j->name);
	sb_addf(sb, "#SBATCH --nodes=%ld\n", j->nodes);
	sb_add(sb, "#SBATCH --ntasks-per-node=1\n");
	slurm_output(j, "slurm-%j.out", sb);
	slurm_resources(j, sb);
	slurm_paths(j, "export ", sb);
	sb_add(sb, "# a stop signal leaves the step to copy the nodes' databases, then merges them\n"
		   "trap \"echo benchdb: stop signal: merging what the nodes copied >&2\" TERM INT HUP\n");
	sb_addf(sb, "# each node's database lives on its own disk while it runs (SQLite on a network\n"
		    "# filesystem is slow and its locks are unreliable) and is copied when the run "
		    "ends\n"
		    "srun --ntasks=%ld --ntasks-per-node=1 --kill-on-bad-exit=0 bash -c '\n", j->nodes);
	slurm_local(sb, "${SLURM_JOB_ID}-${SLURM_PROCID}", "node.db");
	sb_add(sb, "# recorded under Slurm'\\''s name of the node (report nodes tells nodes apart by it)\n"
		    "BENCHDB_NODE=\"$SLURMD_NODENAME\" \"$RUNNER\" run \"$SWEEP\" --group "
		    "\"slurm-$SLURM_JOB_ID\" --db \"$LOCAL/$DB\"");
	struct strbuf opts = STRBUF_INIT;   /* inside the single-quoted script: quotes doubled up */
	cluster_run_options(&opts, j->label, j->mem_limit);
	for (const char *c = sb_str(&opts); *c; c++)
		if (*c == '\'')
			sb_add(sb, "'\\''");
		else
			sb_addc(sb, *c);
	sb_free(&opts);
	sb_add(sb, "\nstatus=$?\n"
		   "out=\"$RESULTS/node-${SLURM_JOB_ID}-${SLURM_PROCID}.db\"\n");
	sb_add(sb, copy_back);
	sb_add(sb, "exit $status'\n"
		   "step=$?\n"
		   "# the merge step: every node's database into one (a node whose run failed still\n"
		   "# brings its finished cases)\n"
		   "merged=\"$RESULTS/nodes-${SLURM_JOB_ID}.db\"\n"
		   "\"$RUNNER\" merge --db \"$merged\" \"$RESULTS\"/node-\"${SLURM_JOB_ID}\"-*.db\n"
		   "merge=$?\n"
		   "echo \"merged into $merged: report nodes --db $merged\"\n"
		   "[ $step -ne 0 ] && exit $step\n"
		   "exit $merge\n");
}

/* The sbatch script for job j. */
static void slurm_script(const struct slurm_job *j, struct strbuf *sb)
{
	sb_add(sb, "#!/bin/bash\n");
	sb_addf(sb, "# %s: written by `runner slurm`; one array task per shard of the sweep.\n",
		j->name);
	sb_addf(sb, "#SBATCH --job-name=benchdb-%s\n", j->name);
	sb_addf(sb, "#SBATCH --array=0-%ld\n", j->shards - 1);
	sb_add(sb, "#SBATCH --ntasks=1\n");
	slurm_output(j, "slurm-%A_%a.out", sb);
	slurm_resources(j, sb);
	slurm_paths(j, "", sb);
	sb_add(sb, "# the shard's database lives on the node's own disk while it runs (SQLite on a "
		   "network\n# filesystem is slow and its locks are unreliable) and is copied when the "
		   "shard ends\n");
	slurm_local(sb, "${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}", "shard.db");
	/* the slice is the task id of N, not --shard auto's place in the array: an array
	 * resubmitted in part (sbatch --array=2 SCRIPT, one task of one) ran the whole sweep */
	sb_addf(sb, "# the shard is the task id of the %ld this script cuts the sweep into (an array\n"
		    "# resubmitted in part, sbatch --array=2, still runs slice 2); the group (slurm-JOBID)\n"
		    "# comes from Slurm's environment\n"
		    "\"$RUNNER\" run \"$SWEEP\" --shard \"${SLURM_ARRAY_TASK_ID}/%ld\" "
		    "--db \"$LOCAL/$DB\"", j->shards, j->shards);
	cluster_run_options(sb, j->label, j->mem_limit);
	sb_add(sb, "\nstatus=$?\n"
		   "out=\"$RESULTS/shard-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}.db\"\n");
	sb_add(sb, copy_back);
	sb_add(sb, "exit $status\n");
}

/* Run `sbatch --parsable script`; the job id (up to ';') into id. Returns 0, or prints why not
 * and returns -1. */
static int slurm_submit(const char *sbatch, const char *script, char *id, size_t n)
{
	int out[2];
	pid_t pid;
	char *const argv[] = {(char *)sbatch, "--parsable", (char *)script, NULL};
	posix_spawn_file_actions_t fa;
	if (pipe(out)) {
		fprintf(stderr, "runner slurm: cannot make a pipe: %s\n", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	int rc = posix_spawnp(&pid, sbatch, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (rc) {
		close(out[0]);
		fprintf(stderr, "runner slurm: cannot run '%s': %s (is Slurm installed? without "
			"--submit the script is only written)\n", sbatch, strerror(rc));
		return -1;
	}
	size_t len = 0;
	ssize_t got;
	while (len + 1 < n && (got = read(out[0], id + len, n - 1 - len)) > 0)
		len += (size_t)got;
	id[len] = '\0';
	close(out[0]);
	int wstatus = 0;
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	id[strcspn(id, ";\n")] = '\0';
	if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) || !id[0]) {
		fprintf(stderr, "runner slurm: '%s --parsable %s' failed (exit %d); its message is "
			"above\n", sbatch, script, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
		return -1;
	}
	return 0;
}

int cmd_slurm(struct cmd_line *cl)
{
	struct slurm_job j = {.shards = 0};
	const char *results = NULL, *script_path = NULL, *sbatch = "sbatch";
	int submit = 0;
	const struct opt_spec specs[] = {
		{"shards", 0, OPT_INT, "N", "how many shards (array tasks) to cut the sweep into",
		 &j.shards},
		{"nodes", 0, OPT_INT, "N",
		 "instead: run the whole sweep once on each of N nodes, then merge them", &j.nodes},
		{"partition", 'p', OPT_STRING, "P", "Slurm partition", &j.partition},
		{"gpus-per-task", 0, OPT_INT, "G", "GPUs each shard gets", &j.gpus_per_task},
		{"cpus-per-task", 0, OPT_INT, "C", "CPUs each shard gets", &j.cpus_per_task},
		{"time", 't', OPT_STRING, "T", "time limit of each shard, e.g. 2:00:00", &j.time},
		{"account", 0, OPT_STRING, "A", "Slurm account to charge", &j.account},
		{"results", 0, OPT_STRING, "DIR",
		 "shared directory for the shards' databases and logs (default results-SWEEPNAME)",
		 &results},
		{"output", 'o', OPT_STRING, "PATH", "where to write the script (default DIR/SWEEPNAME.sbatch)",
		 &script_path},
		{"label", 0, OPT_STRING, "TEXT", "label stored with every shard's run", &j.label},
		{"mem-limit", 0, OPT_STRING, "SIZE", "passed to each shard's runner run", &j.mem_limit},
		{"submit", 0, OPT_FLAG, NULL, "submit the script with sbatch and print the job id",
		 &submit},
		{"sbatch", 0, OPT_STRING, "PATH", "the sbatch to run (default sbatch on PATH)", &sbatch},
		{0},
	};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "slurm", "[options] SWEEP.yaml --shards N | --nodes N",
		"Write an sbatch job-array script that runs the sweep's N shards (runner run --shard\n"
		"TASK/N), each into its own database on the node's local disk, copied to the results\n"
		"directory as DIR/shard-JOB-TASK.db when the shard ends; the shards' runs share the group\n"
		"slurm-JOB. With --submit, submit it and print the job id. This runner, the sweep and\n"
		"DIR must be on a filesystem every node sees. Then: runner merge --db all.db\n"
		"DIR/shard-JOB-*.db && report --db all.db --run slurm-JOB.\n"
		"--nodes N instead writes a job of N nodes whose step runs the whole sweep on each (its\n"
		"runs recorded under Slurm's node names, in the group slurm-JOB), copies each node's\n"
		"database to DIR/node-JOB-K.db and merges them into DIR/nodes-JOB.db at its end: then\n"
		"report nodes --db DIR/nodes-JOB.db."};
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct strbuf script = STRBUF_INIT, default_results = STRBUF_INIT;
	struct bd_error err;
	char runner_path[PATH_MAX], sweep_path[PATH_MAX], results_path[PATH_MAX];
	char script_default[PATH_MAX + 64], job_name[64];
	int npos = 0, status;

	char **argv = NULL;   /* the positional arguments */
	if ((status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos)) >= 0)
		return status;
	status = EXIT_OK;
	if (!sbatch_values_ok(&j, results))   /* before anything is made */
		return EXIT_USAGE;
	int64_t mem_limit;   /* every task would refuse it at once, after the queue */
	if ((status = mem_limit_option(j.mem_limit, "runner slurm", &mem_limit)) >= 0)
		return status;
	status = EXIT_OK;
	if ((j.shards != 0) == (j.nodes != 0)) {
		fprintf(stderr, "runner slurm: give --shards N (cut the sweep into N slices) or --nodes N "
				"(the whole sweep on each of N nodes)%s\n", j.shards ? ", not both" : "");
		return EXIT_USAGE;
	}
	if (j.gpus_per_task < 0 || j.cpus_per_task < 0) {   /* dropped from the script, unsaid */
		fprintf(stderr, "runner slurm: --%s expects a count >= 0, got %ld\n",
			j.gpus_per_task < 0 ? "gpus-per-task" : "cpus-per-task",
			j.gpus_per_task < 0 ? j.gpus_per_task : j.cpus_per_task);
		return EXIT_USAGE;
	}
	long count = j.shards ? j.shards : j.nodes;
	if (count < 1 || count > SLURM_MAX_SHARDS) {
		fprintf(stderr, "runner slurm: --%s expects a count from 1 to %d\n",
			j.shards ? "shards" : "nodes", SLURM_MAX_SHARDS);
		return EXIT_USAGE;
	}
	if ((sweep_load(argv[0], &sweep, &err)) || sweep_expand(sweep, &cases, &err)) {
		bd_error_print("runner slurm", &err);
		status = EXIT_USAGE;
		goto done;
	}
	/* the job's name (and the default results and script names): the sweep's, every byte
	 * but letters, digits, '.', '_' and '-' as '_' */
	snprintf(job_name, sizeof(job_name), "%s", sweep->name);
	for (char *c = job_name; *c; c++)
		if (!(isalnum((unsigned char)*c) && (unsigned char)*c < 0x80) && !strchr("._-", *c))
			*c = '_';
	j.name = job_name;
	if (!results) {
		sb_addf(&default_results, "results-%s", j.name);
		results = sb_str(&default_results);
	}
	if (mkdir(results, 0777) && errno != EEXIST) {
		fprintf(stderr, "runner slurm: cannot make the results directory '%s': %s\n", results,
			strerror(errno));
		status = EXIT_FAIL;
		goto done;
	}
	ssize_t len = readlink("/proc/self/exe", runner_path, sizeof(runner_path) - 1);
	if (len <= 0 || !realpath(argv[0], sweep_path) || !realpath(results, results_path)) {
		fprintf(stderr, "runner slurm: cannot resolve the paths of the runner, '%s' or '%s'\n",
			argv[0], results);
		status = EXIT_FAIL;
		goto done;
	}
	runner_path[len] = '\0';
	if (!sbatch_word_ok("results", results_path, NULL, "a directory without whitespace or "
			    "control characters (it is written into an #SBATCH line)")) {
		status = EXIT_USAGE;
		goto done;
	}
	j.runner = runner_path;
	j.sweep = sweep_path;
	j.results = results_path;
	if (!script_path) {
		snprintf(script_default, sizeof(script_default), "%s/%s.sbatch", results_path,
			 j.name);
		script_path = script_default;
	}
	if (j.nodes)
		slurm_nodes_script(&j, &script);
	else
		slurm_script(&j, &script);
	if (file_same(script_path, sweep_path)) {   /* the script over the sweep it runs */
		fprintf(stderr, "runner slurm: -o %s is the sweep file %s: the script would replace "
				"it; name another file\n", script_path, argv[0]);
		status = EXIT_USAGE;
		goto done;
	}
	/* whole or not at all: a failed rewrite keeps the old script */
	if (file_replace(script_path, sb_str(&script), script.len)) {
		fprintf(stderr, "runner slurm: cannot write '%s': %s\n", script_path, strerror(errno));
		status = EXIT_FAIL;
		goto done;
	}
	chmod(script_path, 0755);
	if (j.nodes)
		printf("wrote %s: the %zu cases of %s on each of %ld nodes, then merged\n", script_path,
		       cases.n, sweep->path, j.nodes);
	else
		printf("wrote %s: %ld shards of the %zu cases of %s%s\n", script_path, j.shards, cases.n,
		       sweep->path, (size_t)j.shards > shard_unit_count(&cases) ?
				" (more shards than shapes, whose impls stay in one shard: some are "
				"empty)" : "");
	if (!submit) {
		printf("submit: sbatch %s\n", script_path);
		goto done;
	}
	char job[64];
	if (slurm_submit(sbatch, script_path, job, sizeof(job))) {
		status = EXIT_FAIL;
		goto done;
	}
	if (j.nodes) {
		printf("submitted job %s: %ld nodes, results in %s\n", job, j.nodes, results_path);
		printf("when done: report nodes --db %s/nodes-%s.db\n", results_path, job);
	} else {
		printf("submitted job %s: %ld array tasks, results in %s\n", job, j.shards,
		       results_path);
		printf("when done: runner merge --db all.db %s/shard-%s-*.db && report --db all.db "
		       "--run slurm-%s\n", results_path, job, job);
	}
done:
	sb_free(&script);
	sb_free(&default_results);
	sweep_cases_free(&cases);
	sweep_free(sweep);
	return status;
}
