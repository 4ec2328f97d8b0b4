/* runner/cpu_wait.h: the share of its time the runner waited for a CPU (cpu_wait.c). */
#ifndef BENCHDB_CPU_WAIT_H
#define BENCHDB_CPU_WAIT_H

#include <stdint.h>
#include <sys/types.h>

struct cpu_wait {
	int64_t run_ns, wait_ns;   /* summed over the process's threads */
	int ok;                    /* 0: /proc/self/task/.../schedstat could not be read */
};

/* The process's totals now. */
void cpu_wait_read(struct cpu_wait *w);
/* wait / (run + wait) between two readings, in [0, 1]; -1 when unknown (no schedstat, or no
 * time counted in between). */
double cpu_wait_share(const struct cpu_wait *before, const struct cpu_wait *after);

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
