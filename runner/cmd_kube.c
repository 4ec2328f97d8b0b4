/* runner/cmd_kube.c: `runner kube SWEEP.yaml --shards N | --nodes N --image IMAGE` — a Kubernetes
 * manifest for a sweep: a ConfigMap holding the sweep text and an Indexed Job of N pods, each
 * running `runner run` into a database on its own scratch disk and copying it to a shared
 * volume when it ends; --shards: pod i runs slice i (`--shard auto/N`, the index from
 * JOB_COMPLETION_INDEX), --nodes: every pod runs the whole sweep, one pod per node (pod
 * anti-affinity), recorded under its node's name. `--merge` writes the Job that merges the
 * volume's databases into one. The manifest goes to standard output (or -o FILE) for `kubectl
 * apply -f`; benchdb talks to no cluster. Scalars are written as double-quoted YAML (JSON)
 * strings, so no sweep text or name can break out of its place. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "strbuf.h"
#include "sweep.h"

/* Kubernetes' Indexed Jobs take up to 100,000 completions; parallelism is N. */
#define KUBE_MAX_PODS 100000
#define KUBE_NAME_MAX 52           /* DNS-1123 labels are 63: room for "-merge", "-sweep" */

struct kube_job {
	const char *image, *runner, *claim, *label, *mem_limit, *cpus, *memory, *name;
	long shards, nodes, gpus;
	long threads;   /* OMP_NUM_THREADS for the pods: the whole CPUs of --cpus (0: not set) */
	const char *sweep_text;
};

/* The CPUs of a Kubernetes CPU quantity ("8", "2.5", "500m"): 0 with *cpus set, -1 when text is
 * not one (or is not positive). */
static int cpu_quantity(const char *text, double *cpus)
{
	/* digits with at most one '.', or whole millicores: what Kubernetes takes, no sign,
	 * exponent or hex (strtod would read those) */
	size_t digits = strspn(text, "0123456789"), dot = text[digits] == '.';
	size_t frac = dot ? strspn(text + digits + 1, "0123456789") : 0;
	const char *tail = text + digits + dot + frac;
	if (!digits || (dot && !frac) || (*tail && (strcmp(tail, "m") || dot)))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end != tail || errno)
		return -1;
	if (*end == 'm' && !end[1] && !strchr(text, '.'))
		v /= 1000;
	else if (*end)
		return -1;
	if (!(v > 0 && v <= 1e6))
		return -1;
	*cpus = v;
	return 0;
}

/* A DNS-1123 label from text: lower case letters, digits and '-', starting and ending with a
 * letter or digit, at most KUBE_NAME_MAX characters. */
static void dns_label(const char *prefix, const char *text, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = prefix; *p && k + 1 < n; p++)
		out[k++] = *p;
	for (const char *p = text; *p && k + 1 < n && k < KUBE_NAME_MAX; p++) {
		char c = (char)tolower((unsigned char)*p);
		c = isalnum((unsigned char)c) && (unsigned char)c < 0x80 ? c : '-';
		if (c == '-' && k && out[k - 1] == '-')
			continue;
		out[k++] = c;
	}
	while (k && out[k - 1] == '-')
		k--;
	out[k] = '\0';
}

/* key: "value" at indent (value as a JSON string, which YAML reads as a double-quoted scalar). */
static void yaml_kv(struct strbuf *sb, int indent, const char *key, const char *value)
{
	sb_addf(sb, "%*s%s: ", indent, "", key);
	sb_add_json_str(sb, value);
	sb_addc(sb, '\n');
}

/* What each pod runs: the sweep into /scratch, then the database onto the volume. */
static void pod_script(const struct kube_job *j, struct strbuf *sb)
{
	const char *kind = j->shards ? "shard" : "node";
	/* the group is this Job's, NAME-UID: under the name alone every Job of that name was one
	 * group, and an earlier Job's database that a pod of this one did not replace on the volume
	 * (it wrote nothing), or the earlier runs in the merged NAME.db, stood in for this Job's */
	sb_add(sb, "set -u\n"
		   "if [ -z \"${BENCHDB_JOB_UID:-}\" ]; then\n"
		   "  echo \"no BENCHDB_JOB_UID (the Job's uid, from the pod's label "
		   "batch.kubernetes.io/controller-uid): a group of this Job's alone cannot be named\" >&2\n"
		   "  exit 2\n"
		   "fi\n"
		   "group=");
	sb_add_shell_word(sb, j->name);
	sb_add(sb, "\"-$BENCHDB_JOB_UID\"\n"
		   "\"$BENCHDB_RUNNER\" run /sweep/sweep.yaml --db /scratch/run.db --group \"$group\"");
	if (j->shards)
		sb_addf(sb, " --shard auto/%ld", j->shards);
	cluster_run_options(sb, j->label, j->mem_limit);
	/* the runner in the background, this shell waiting: a pod is stopped with SIGTERM to its
	 * first process alone, this shell, which as PID 1 ignored it — the runner heard nothing and
	 * was killed at the end of the grace period, its database lost with the scratch volume */
	sb_addf(sb, " &\nrunner=$!\n"
		    "# Kubernetes stops a pod (deleted, evicted, preempted) with SIGTERM to this shell\n"
		    "# alone: pass it on, so that the run ends interrupted at its next iteration and its\n"
		    "# database is still copied below\n"
		    "trap 'kill -TERM \"$runner\" 2>/dev/null' TERM INT HUP\n"
		    "while :; do\n"
		    "  wait \"$runner\"\n"
		    "  status=$?\n"
		    "  kill -0 \"$runner\" 2>/dev/null || break\n"
		    "done\n"
		    "out=\"/results/%s-%s-${JOB_COMPLETION_INDEX}.db\"\n"
		    "# an interrupted or failed run still keeps its finished cases: copy it either way\n"
		    "if [ -f /scratch/run.db ]; then\n"
		    "  # a -wal or -shm left beside $out by an earlier Job of this name is another\n"
		    "  # file's: SQLite would read its pages into this one\n"
		    "  rm -f \"$out-wal\" \"$out-shm\"\n"
		    "  cp /scratch/run.db \"$out.part\" && mv \"$out.part\" \"$out\" || exit 1\n"
		    "  if [ -s /scratch/run.db-wal ]; then cp /scratch/run.db-wal \"$out-wal\" || exit 1; fi\n"
		    "fi\n"
		    "echo \"runner run exited $status; database: $out, group $group\"\n"
		    "# 0 and 1 (a case failed its validation: stored as error) are complete runs\n"
		    "[ \"$status\" -le 1 ] || exit \"$status\"\n", j->name, kind);
}

static void write_sweep_map(const struct kube_job *j, struct strbuf *sb)
{
	sb_add(sb, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n");
	char name[96];
	snprintf(name, sizeof(name), "%s-sweep", j->name);
	yaml_kv(sb, 2, "name", name);
	sb_add(sb, "  labels:\n");
	yaml_kv(sb, 4, "app.kubernetes.io/name", "benchdb");
	yaml_kv(sb, 4, "benchdb.io/job", j->name);
	sb_add(sb, "data:\n");
	yaml_kv(sb, 2, "sweep.yaml", j->sweep_text);
}

/* The container's resources, when any was asked for. */
static void write_resources(const struct kube_job *j, struct strbuf *sb)
{
	if (!j->cpus && !j->memory && j->gpus <= 0)
		return;
	sb_add(sb, "          resources:\n");
	for (int lim = 0; lim < 2; lim++) {
		if (!lim && !j->cpus && !j->memory)
			continue;   /* GPUs are limits only */
		sb_addf(sb, "            %s:\n", lim ? "limits" : "requests");
		if (j->cpus)
			yaml_kv(sb, 14, "cpu", j->cpus);
		if (j->memory)
			yaml_kv(sb, 14, "memory", j->memory);
		if (lim && j->gpus > 0)
			sb_addf(sb, "              nvidia.com/gpu: %ld\n", j->gpus);
	}
}

/* The pod template's volumes: scratch (the node's disk), the sweep, the results claim. */
static void write_volumes(const struct kube_job *j, struct strbuf *sb, int with_sweep)
{
	sb_add(sb, "      volumes:\n");
	if (with_sweep) {
		char map[96];
		snprintf(map, sizeof(map), "%s-sweep", j->name);
		sb_add(sb, "        - name: scratch\n          emptyDir: {}\n"
			   "        - name: sweep\n          configMap:\n");
		yaml_kv(sb, 12, "name", map);
	}
	sb_add(sb, "        - name: results\n          persistentVolumeClaim:\n");
	yaml_kv(sb, 12, "claimName", j->claim);
}

static void write_job(const struct kube_job *j, struct strbuf *sb)
{
	long n = j->shards ? j->shards : j->nodes;
	struct strbuf script = STRBUF_INIT;
	pod_script(j, &script);
	sb_add(sb, "apiVersion: batch/v1\nkind: Job\nmetadata:\n");
	yaml_kv(sb, 2, "name", j->name);
	sb_add(sb, "  labels:\n");
	yaml_kv(sb, 4, "app.kubernetes.io/name", "benchdb");
	yaml_kv(sb, 4, "benchdb.io/job", j->name);
	sb_addf(sb, "spec:\n"
		    "  completionMode: Indexed\n"
		    "  completions: %ld\n"
		    "  parallelism: %ld\n"
		    "  # a pod that fails is not retried (its database is on the volume), and the other\n"
		    "  # indexes go on\n"
		    "  backoffLimitPerIndex: 0\n"
		    "  maxFailedIndexes: %ld\n"
		    "  template:\n"
		    "    metadata:\n"
		    "      labels:\n", n, n, n);
	yaml_kv(sb, 8, "app.kubernetes.io/name", "benchdb");
	yaml_kv(sb, 8, "benchdb.io/job", j->name);
	sb_add(sb, "    spec:\n      restartPolicy: Never\n");
	if (j->nodes) {   /* one pod per node */
		sb_add(sb, "      affinity:\n"
			   "        podAntiAffinity:\n"
			   "          requiredDuringSchedulingIgnoredDuringExecution:\n"
			   "            - topologyKey: kubernetes.io/hostname\n"
			   "              labelSelector:\n"
			   "                matchLabels:\n");
		yaml_kv(sb, 18, "benchdb.io/job", j->name);
	}
	sb_add(sb, "      containers:\n        - name: runner\n");
	yaml_kv(sb, 10, "image", j->image);
	sb_add(sb, "          command:\n            - \"/bin/sh\"\n            - \"-c\"\n            - ");
	sb_add_json_str(sb, sb_str(&script));
	sb_add(sb, "\n          env:\n            - name: BENCHDB_RUNNER\n");
	yaml_kv(sb, 14, "value", j->runner);
	/* the Job's uid, one per Job object (a Job deleted and applied again gets a new one): the
	 * runs' group */
	sb_add(sb, "            - name: BENCHDB_JOB_UID\n"
		   "              valueFrom:\n"
		   "                fieldRef:\n"
		   "                  fieldPath: \"metadata.labels['batch.kubernetes.io/controller-uid']\"\n");
	if (j->threads > 0) {
		/* the pod's CPU limit is a quota the container does not see: OpenMP would start a
		 * thread per CPU of the node and wait out the quota (runner/cgroup_cpu.h) */
		char threads[24];
		snprintf(threads, sizeof(threads), "%ld", j->threads);
		sb_add(sb, "            - name: OMP_NUM_THREADS\n");
		yaml_kv(sb, 14, "value", threads);
	}
	/* recorded under the node's name, shards too: report nodes tells nodes apart by it, and a
	 * case's history and the noise between runs are per host and system; under the pod's own
	 * host name (NAME-I-xxxxx, new each Job) every night was a new machine of one run */
	sb_add(sb, "            - name: BENCHDB_NODE\n"
		   "              valueFrom:\n"
		   "                fieldRef:\n"
		   "                  fieldPath: spec.nodeName\n");
	write_resources(j, sb);
	sb_add(sb, "          volumeMounts:\n"
		   "            - name: scratch\n              mountPath: /scratch\n"
		   "            - name: sweep\n              mountPath: /sweep\n              readOnly: true\n"
		   "            - name: results\n              mountPath: /results\n");
	write_volumes(j, sb, 1);
	sb_free(&script);
}

/* The Job that merges the volume's databases of this job into /results/NAME.db, then waits an
 * hour so that `kubectl cp` can fetch it. */
static void write_merge_job(const struct kube_job *j, struct strbuf *sb)
{
	const char *kind = j->shards ? "shard" : "node";
	char name[96];
	snprintf(name, sizeof(name), "%s-merge", j->name);
	struct strbuf script = STRBUF_INIT;
	sb_addf(&script, "set -u\n"
			 "\"$BENCHDB_RUNNER\" merge --db \"/results/%s.db\" /results/%s-%s-*.db\n"
			 "status=$?\n"
			 "echo \"merged into /results/%s.db (exit $status); kubectl cp this pod's "
			 "/results/%s.db within the hour\"\n"
			 "sleep \"${BENCHDB_HOLD_SECONDS:-3600}\"\n"
			 "exit $status\n", j->name, j->name, kind, j->name, j->name);
	sb_add(sb, "apiVersion: batch/v1\nkind: Job\nmetadata:\n");
	yaml_kv(sb, 2, "name", name);
	sb_add(sb, "  labels:\n");
	yaml_kv(sb, 4, "app.kubernetes.io/name", "benchdb");
	yaml_kv(sb, 4, "benchdb.io/job", j->name);
	sb_add(sb, "spec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n"
		   "      containers:\n        - name: merge\n");
	yaml_kv(sb, 10, "image", j->image);
	sb_add(sb, "          command:\n            - \"/bin/sh\"\n            - \"-c\"\n            - ");
	sb_add_json_str(sb, sb_str(&script));
	sb_add(sb, "\n          env:\n            - name: BENCHDB_RUNNER\n");
	yaml_kv(sb, 14, "value", j->runner);
	sb_add(sb, "          volumeMounts:\n            - name: results\n              mountPath: /results\n");
	write_volumes(j, sb, 0);
	sb_free(&script);
}

int cmd_kube(struct cmd_line *cl)
{
	struct kube_job j = {.runner = "runner", .claim = "benchdb-results"};
	const char *out_path = NULL, *name = NULL;
	int merge = 0;
	const struct opt_spec specs[] = {
		{"shards", 0, OPT_INT, "N", "pods that each run one slice of the sweep", &j.shards},
		{"nodes", 0, OPT_INT, "N", "instead: N pods, one per node, each the whole sweep",
		 &j.nodes},
		{"image", 0, OPT_STRING, "IMAGE", "container image with the runner (required)", &j.image},
		{"runner", 0, OPT_STRING, "PATH", "the runner in the image (default runner, on PATH)",
		 &j.runner},
		{"volume-claim", 0, OPT_STRING, "NAME",
		 "PersistentVolumeClaim for the databases, ReadWriteMany (default benchdb-results)",
		 &j.claim},
		{"name", 0, OPT_STRING, "NAME", "the Job's name (default benchdb-SWEEPNAME)", &name},
		{"label", 0, OPT_STRING, "TEXT", "label stored with every pod's run", &j.label},
		{"mem-limit", 0, OPT_STRING, "SIZE", "passed to each pod's runner run", &j.mem_limit},
		{"cpus", 0, OPT_STRING, "CPU",
		 "each pod's CPU request and limit, e.g. 8; its whole CPUs are OMP_NUM_THREADS", &j.cpus},
		{"memory", 0, OPT_STRING, "SIZE", "each pod's memory request and limit, e.g. 32Gi",
		 &j.memory},
		{"gpus", 0, OPT_INT, "G", "GPUs each pod gets (nvidia.com/gpu)", &j.gpus},
		{"merge", 0, OPT_FLAG, NULL, "write the Job that merges the databases instead", &merge},
		{"output", 'o', OPT_STRING, "FILE", "write the manifest to FILE (default: standard output)",
		 &out_path},
		{0},
	};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "kube", "SWEEP.yaml --shards N | --nodes N --image IMAGE [options]",
		"Write a Kubernetes manifest for kubectl apply -f: a ConfigMap with the sweep and an\n"
		"Indexed Job of N pods. --shards: pod i runs slice i of the sweep (--shard auto/N);\n"
		"--nodes: one pod per node (anti-affinity), each the whole sweep, recorded under its\n"
		"node's name. Each pod writes its database on its own scratch disk and copies it to the\n"
		"volume claim as NAME-shard-I.db or NAME-node-I.db. Once the Job is done, --merge writes\n"
		"the Job that merges them into NAME.db on the volume (then: report nodes, or report --run\n"
		"NAME-UID: each Job's runs are a group of their own, UID the Job's metadata.uid). The\n"
		"image must hold the runner and what the sweep's peers run."};
	struct sweep *sweep = NULL;
	struct sweep_cases cases = {0};
	struct strbuf manifest = STRBUF_INIT;
	struct bd_error err;
	char job_name[KUBE_NAME_MAX + 16];
	int npos = 0, status;
	char **argv = NULL;
	if ((status = opt_parse_command(cl, specs, &usage, 1, 1, &argv, &npos)) >= 0)
		return status;
	status = EXIT_OK;
	long n = j.shards ? j.shards : j.nodes;
	if ((j.shards != 0) == (j.nodes != 0) || n < 1 || n > KUBE_MAX_PODS) {
		fprintf(stderr, "runner kube: give --shards N (the sweep in N slices) or --nodes N (the "
				"whole sweep on each of N nodes), N from 1 to %d\n", KUBE_MAX_PODS);
		return EXIT_USAGE;
	}
	if (!j.image || !*j.image) {
		fprintf(stderr, "runner kube: --image IMAGE is required (an image with the runner)\n");
		return EXIT_USAGE;
	}
	if (j.gpus < 0) {
		fprintf(stderr, "runner kube: --gpus expects a count >= 0, got %ld\n", j.gpus);
		return EXIT_USAGE;
	}
	double cpus;
	if (j.cpus && cpu_quantity(j.cpus, &cpus)) {
		fprintf(stderr, "runner kube: --cpus expects a Kubernetes CPU quantity above 0 (e.g. 8, "
				"2.5, 500m), got '%s'\n", j.cpus);
		return EXIT_USAGE;
	}
	if (j.cpus)
		j.threads = cpus >= 1 ? (long)cpus : 1;
	int64_t mem_limit;   /* every pod would refuse it at once */
	if ((status = mem_limit_option(j.mem_limit, "runner kube", &mem_limit)) >= 0)
		return status;
	status = EXIT_OK;
	if (sweep_load(argv[0], &sweep, &err) || sweep_expand(sweep, &cases, &err)) {
		bd_error_print("runner kube", &err);
		status = EXIT_USAGE;
		goto done;
	}
	dns_label(name ? "" : "benchdb-", name ? name : sweep->name, job_name, sizeof(job_name));
	if (!job_name[0] || !isalnum((unsigned char)job_name[0])) {
		fprintf(stderr, "runner kube: '%s' gives no Kubernetes name (letters, digits, '-'); "
				"give --name\n", name ? name : sweep->name);
		status = EXIT_USAGE;
		goto done;
	}
	j.name = job_name;
	j.sweep_text = sweep->text;
	if (merge) {
		write_merge_job(&j, &manifest);
	} else {
		sb_addf(&manifest, "# written by `runner kube`: %s, %zu cases, %s %ld; then `runner kube "
				   "... --merge`\n# the runs' group: %s-UID, UID the Job's metadata.uid "
				   "(kubectl get job %s -o jsonpath='{.metadata.uid}')\n", sweep->path,
			cases.n, j.shards ? "shards" : "the whole sweep on each of", n, job_name, job_name);
		write_sweep_map(&j, &manifest);
		sb_add(&manifest, "---\n");
		write_job(&j, &manifest);
	}
	if (out_path && file_same(out_path, sweep->path)) {   /* the manifest over its sweep */
		fprintf(stderr, "runner kube: -o %s is the sweep file %s: the manifest would replace "
				"it; name another file\n", out_path, sweep->path);
		status = EXIT_USAGE;
		goto done;
	}
	/* -o FILE whole or not at all: a failed rewrite keeps the old manifest */
	int written = out_path ? !file_replace(out_path, sb_str(&manifest), manifest.len)
			       : fputs(sb_str(&manifest), stdout) >= 0;
	if (!written) {
		fprintf(stderr, "runner kube: cannot write '%s': %s\n", out_path ? out_path : "stdout",
			strerror(errno));
		status = EXIT_FAIL;
	} else if (out_path) {
		printf("wrote %s: %s%s\n", out_path, merge ? "the merge Job of " : "", job_name);
	}
done:
	sb_free(&manifest);
	sweep_cases_free(&cases);
	sweep_free(sweep);
	return status;
}
