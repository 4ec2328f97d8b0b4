/* runner/shard.h: one sweep split over N machines (`runner run --shard I/N`): deterministic
 * slices of the expanded cases, balanced by each case's estimated work, and the shard a
 * launcher (a Slurm job array, a Kubernetes Indexed Job) gives this process. */
#ifndef BENCHDB_SHARD_H
#define BENCHDB_SHARD_H

#include <stddef.h>

#include "error.h"
#include "progress.h"

struct sweep_case;
struct sweep_cases;

/* Which slice this process runs: index in 0..count-1 (0-based, as launchers count). */
struct shard {
	int index, count;
};

/* What case c will cost: FLOPs and bytes of its timed phases per iteration (the workload's
 * figures) times warmup + iters (iters: auto counts min_iters, the least it runs). With
 * only_runnable, 0 when it will not run here (no workload, its check refuses, or
 * case_expect_oom: stored at once), for the progress ETA; without, the figures whatever this
 * machine can do, so that every node of a cluster weighs a sweep alike. < 0 when the workload
 * does not say. */
void case_work(const struct sweep_case *c, int only_runnable, struct progress_work *work);

/* The bytes c's workload says it will allocate (its estimate: parameters, gradients, optimizer
 * state, activations, scratch; the same count that allocates), -1 when it cannot say (a peer, a
 * workload without an estimate). */
int64_t case_memory_need(const struct sweep_case *c);
/* Whether c is predicted to run out of memory: its estimate is over its mem_limit (0: none). */
int case_expect_oom(const struct sweep_case *c);

/* Parse `--shard` text: "I/N" (0 <= I < N), "auto" (the index and count from the launcher's
 * environment: SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT, or
 * JOB_COMPLETION_INDEX with BENCHDB_SHARD_COUNT), or "auto/N" (the index from the environment,
 * the count given). BD_EINVAL with a message naming what is wrong or missing. */
int shard_parse(const char *text, struct shard *out, struct bd_error *err);

/* The group id of a sharded run into out: explicit when given (--group), else "slurm-JOB" in a
 * Slurm job array (SLURM_ARRAY_JOB_ID: one per submission). Anything else has no id of its
 * launch (shards started by hand, a Kubernetes Job), and an id made of the sweep alone made
 * every launch's shards one group: BD_EINVAL, asking for --group (shard_text: the --shard given,
 * for the message). BD_EINVAL too when the id is empty or does not fit in n. */
int shard_group_id(const char *explicit, const char *shard_text, char *out, size_t n,
		   struct bd_error *err);

/* Split n cases of costs cost[0..n-1] (>= 0, any unit) into count slices: owner[i] is the slice
 * of case i. Deterministic (a function of the costs alone): the largest cases first, each to the
 * slice with the least work so far (ties: the lower case index, the lower slice). Every case
 * also weighs a fixed share of the mean, for its setup. 0, or BD_EINVAL (count < 1). */
int shard_assign(const double *cost, size_t n, int count, int *owner);

/* The cases of slice s of all, in sweep order, into slice: slice->items is a malloc'd array of
 * shallow copies that borrow all's strings, so free only slice->items (never sweep_cases_free
 * it). Case indices, and so the stored `ord`, stay those of the whole sweep. The cases that
 * differ only in impl (one shape's impls) are in one slice, assigned as one unit. Cases weigh
 * case_work(c, 0)'s FLOPs where any case states them, else its bytes, else one each; a case
 * without a figure weighs the mean of those with one. 0, or BD_EINVAL (s->count < 1). */
int shard_select(const struct sweep_cases *all, const struct shard *s, struct sweep_cases *slice);
/* How many units shard_select cuts all into: its shapes (the cases that differ only in impl are
 * one). More shards than this leave some empty. */
size_t shard_unit_count(const struct sweep_cases *all);

#endif
