/* runner/cpu_wait.c: how long the runner's threads waited for a CPU while a case was measured.
 *
 * The process's threads' time running and waiting for a CPU is read by common/proc_wait.c.
 * Summed over the process's threads, wait / (run + wait) is the share of the time the runner
 * wanted a CPU and did not have one: about 0 on a quiet machine, 0.5 for a single-threaded case
 * sharing its core with one busy process. `report regress` refuses to call a change slower (or
 * faster) when the two sides' shares differ enough to explain it (report/verdict.c).
 *
 * Before a run, a short spin of the main thread measures the same share for the machine as it
 * is (with the load average), so that `runner run` can say up front that the times will be
 * inflated; after it, the cases that waited are counted for its closing warning.
 */
#include "cpu_wait.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <string.h>

/* This thread's run and wait nanoseconds; 0 when unknown. */
static int thread_schedstat(int64_t *run, int64_t *wait)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long r, w;
	int ok = f && fscanf(f, "%llu %llu", &r, &w) == 2;
	if (f)
		fclose(f);
	if (ok) {
		*run = (int64_t)r;
		*wait = (int64_t)w;
	}
	return ok;
}

static int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void machine_load_probe(int64_t probe_ns, struct machine_load *out)
{
	int64_t run0, wait0, run1, wait1;
	out->probe_wait = out->load_average = -1;
	out->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	out->probe_s = (double)probe_ns / 1e9;
	int ok = thread_schedstat(&run0, &wait0);
	volatile uint64_t spin = 0;
	for (int64_t end = monotonic_ns() + probe_ns; monotonic_ns() < end;)
		for (int k = 0; k < 1000; k++)
			spin += (uint64_t)k;
	if (ok && thread_schedstat(&run1, &wait1) && run1 - run0 + wait1 - wait0 > 0)
		out->probe_wait = (double)(wait1 - wait0) / (double)(run1 - run0 + wait1 - wait0);
	FILE *f = fopen("/proc/loadavg", "r");
	if (f && fscanf(f, "%lf", &out->load_average) != 1)
		out->load_average = -1;
	if (f)
		fclose(f);
}

int machine_load_busy(const struct machine_load *m, double wait_level)
{
	return m->probe_wait > wait_level || (m->cpus > 0 && m->load_average >= (double)m->cpus);
}

void contention_add(struct contention_count *c, double cpu_wait)
{
	if (!(cpu_wait >= 0)) {
		c->unmeasured++;
		return;
	}
	c->measured++;
	if (cpu_wait > c->level)
		c->contended++;
	if (cpu_wait > c->worst)
		c->worst = cpu_wait;
}

/* What to do about it, the same in both warnings. */
#define CONTENTION_ADVICE                                                                          \
	"run on a quiet machine, with fewer threads (OMP_NUM_THREADS), or with --repeat N to "      \
	"measure how much the times move"

void contention_warn_before(FILE *f, const struct machine_load *m)
{
	fprintf(f, "warning: this machine is busy before the first case: ");
	if (m->probe_wait >= 0)
		fprintf(f, "a thread spinning for %.1f s waited for a CPU %.0f%% of that time", m->probe_s,
			100 * m->probe_wait);
	if (m->load_average >= 0)
		fprintf(f, "%sload average %.1f on %ld CPUs", m->probe_wait >= 0 ? "; " : "",
			m->load_average, m->cpus);
	fprintf(f, ". The cases will wait too, and their times will be longer and vary with what "
		   "else runs: " CONTENTION_ADVICE ".\n");
}

void contention_warn_after(FILE *f, const struct contention_count *c)
{
	if (!c->contended && !(c->busy_before && c->unmeasured))
		return;
	if (c->contended)
		fprintf(f, "warning: %zu of %zu cases waited for a CPU more than %.0f%% of their "
			   "measured time (up to %.0f%%): their times include that wait and say more about "
			   "the machine's load than about the code; the reports mark them (cases.cpu_wait)",
			c->contended, c->measured, 100 * c->level, 100 * c->worst);
	else
		fprintf(f, "warning: the machine was busy before the first case");
	if (c->unmeasured)
		fprintf(f, "%s%zu ok case%s had no wait to count (a kernel without sched_info, or a peer "
			   "too short for the kernel's counters): %s times may include waiting that no "
			   "report marks",
			c->contended ? "; " : ", and ", c->unmeasured, c->unmeasured == 1 ? "" : "s",
			c->unmeasured == 1 ? "its" : "their");
	fprintf(f, ": " CONTENTION_ADVICE ".\n");
}

/* ---- a process tree (a peer's) ---------------------------------------------------------------- */

/* Every thread of process pid: its schedstat into w (a new thread with baseline 0 unless
 * baseline), then the same for pid's children (each thread's /proc/PID/task/TID/children), to a
 * depth that no real tree reaches. */
static void tree_walk(struct cpu_wait_tree *w, pid_t pid, int baseline, int depth, int self)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d || depth > 64) {
		if (d)
			closedir(d);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = (pid_t)atoi(e->d_name);
		if (!self) {   /* the root (the guardian) only waits: not counted */
			unsigned long long run, wait;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
			FILE *f = fopen(path, "r");
			if (f && fscanf(f, "%llu %llu", &run, &wait) == 2) {
				size_t i = 0;
				while (i < w->n && w->threads[i].tid != tid)
					i++;
				if (i == w->n) {
					if (w->n == w->cap) {
						size_t cap = w->cap ? 2 * w->cap : 32;
						struct cpu_wait_thread *t = realloc(w->threads, cap * sizeof(*t));
						if (!t) {
							fclose(f);
							continue;
						}
						w->threads = t;
						w->cap = cap;
					}
					w->threads[w->n++] = (struct cpu_wait_thread){
						tid, baseline ? (int64_t)run : 0, baseline ? (int64_t)wait : 0, 0, 0};
				}
				w->threads[i].run = (int64_t)run;
				w->threads[i].wait = (int64_t)wait;
				w->ok = 1;
			}
			if (f)
				fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
		FILE *c = fopen(path, "r");
		int child;
		while (c && fscanf(c, "%d", &child) == 1)
			tree_walk(w, (pid_t)child, baseline, depth + 1, 0);
		if (c)
			fclose(c);
	}
	closedir(d);
}

void cpu_wait_tree_begin(struct cpu_wait_tree *w, pid_t root)
{
	w->n = 0;
	w->ok = 0;
	tree_walk(w, root, 1, 0, 1);
}

void cpu_wait_tree_sample(struct cpu_wait_tree *w, pid_t root) { tree_walk(w, root, 0, 0, 1); }

double cpu_wait_tree_share(const struct cpu_wait_tree *w)
{
	int64_t run = 0, wait = 0;
	for (size_t i = 0; i < w->n; i++) {
		const struct cpu_wait_thread *t = &w->threads[i];
		run += t->run > t->run0 ? t->run - t->run0 : 0;
		wait += t->wait > t->wait0 ? t->wait - t->wait0 : 0;
	}
	if (!w->ok || run + wait <= 0)
		return -1;
	return (double)wait / (double)(run + wait);
}

void cpu_wait_tree_free(struct cpu_wait_tree *w)
{
	free(w->threads);
	memset(w, 0, sizeof(*w));
}
