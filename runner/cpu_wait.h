/* runner/cpu_wait.h: the share of its time the runner waited for a CPU, how busy the machine is
 * before a run, and the warnings about both (cpu_wait.c). */
#ifndef BENCHDB_CPU_WAIT_H
#define BENCHDB_CPU_WAIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proc_wait.h"

/* Whether the machine is busy before a run: the calling thread spins for probe_ns and measures
 * the share of it that it waited for a CPU (/proc/thread-self/schedstat; -1 unknown), and the
 * 1-minute load average (/proc/loadavg; -1 unknown) against the online CPUs. */
struct machine_load {
	double probe_wait, load_average;
	long cpus;
	double probe_s;
};
void machine_load_probe(int64_t probe_ns, struct machine_load *out);
/* Whether out says busy: the probe waited more than wait_level, or the load average is at least
 * the number of CPUs. */
int machine_load_busy(const struct machine_load *m, double wait_level);

/* Tallies the cases of a run measured under contention: cpu_wait above level. */
struct contention_count {
	double level, worst;
	size_t measured, contended;   /* ok cases with a known share; those above level */
	size_t unmeasured;            /* ok cases whose share is unknown (cpu_wait NULL) */
	int busy_before;              /* the machine was busy before the first case */
};
void contention_add(struct contention_count *c, double cpu_wait);
/* The warnings runner run prints (to f): before the first case when the machine is busy, and
 * after a run whose cases waited, or that started busy with cases whose wait no reading could
 * count (the reports cannot mark those); nothing when there is nothing to say. */
void contention_warn_before(FILE *f, const struct machine_load *m);
void contention_warn_after(FILE *f, const struct contention_count *c);

/* The same over another process's descendants (a peer's process tree, below its guardian root;
 * the root itself left out), read by sampling: threads seen at cpu_wait_tree_begin count from
 * their reading then, threads that appear later from their start, threads that end count up to
 * their last sample. Sample at least every few hundred milliseconds while the tree works. */
struct cpu_wait_thread {
	pid_t tid;
	int64_t run0, wait0;   /* at begin (0 for a thread that appeared later) */
	int64_t run, wait;     /* at the last sample that saw it */
};
struct cpu_wait_tree {
	struct cpu_wait_thread *threads;
	size_t n, cap;
	int ok;                /* some thread's schedstat was read */
};
void cpu_wait_tree_begin(struct cpu_wait_tree *w, pid_t root);
void cpu_wait_tree_sample(struct cpu_wait_tree *w, pid_t root);
/* wait / (run + wait) summed over the threads since begin, in [0, 1]; -1 when unknown. */
double cpu_wait_tree_share(const struct cpu_wait_tree *w);
void cpu_wait_tree_free(struct cpu_wait_tree *w);

#endif
