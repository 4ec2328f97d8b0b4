/* tests/test_shard.c: `runner run --shard I/N` (runner/shard.c). The slices of a sweep are
 * disjoint and cover it, for every shipped and test sweep and many N (more shards than cases
 * included), and keep the impls of one shape together; they are a function of the sweep alone;
 * they balance estimated work, not counts;
 * and --shard's text and the launchers' environment parse as documented. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "params.h"
#include "shard.h"
#include "sweep.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Every case of all lands in exactly one of the count slices, in sweep order, the cases that
 * differ only in impl in the same one, and slicing twice gives the same slice (path: what to
 * name in a failure). One slice is taken twice, not every one: each shard_select assigns the
 * whole sweep, so count slices cost count assignments, and a second of each doubled the test's
 * time (minutes under ASan) for no case it could catch that the one slice does not. */
static void check_cut(const char *path, const struct sweep_cases *src, int count)
{
	const struct sweep_cases all = *src;
	int *seen = calloc(all.n + 1, sizeof(*seen)), *slice_of = calloc(all.n + 1, sizeof(*slice_of));
	assert_non_null(seen);
	assert_non_null(slice_of);
	for (int i = 0; i < count; i++) {
		struct shard sh = {i, count};
		struct sweep_cases slice, again = {0};
		const int twice = i == count / 2;
		assert_int_equal(shard_select(&all, &sh, &slice), 0);
		if (twice) {
			assert_int_equal(shard_select(&all, &sh, &again), 0);
			assert_int_equal(slice.n, again.n);
		}
		for (size_t k = 0; k < slice.n; k++) {
			size_t index = slice.items[k].index;
			assert_true(index < all.n);
			if (twice)
				assert_int_equal(again.items[k].index, index);
			assert_string_equal(slice.items[k].key, all.items[index].key);
			if (k)
				assert_true(index > slice.items[k - 1].index);
			seen[index]++;
			slice_of[index] = i;
		}
		free(slice.items);
		free(again.items);
	}
	for (size_t i = 0; i < all.n; i++)
		if (seen[i] != 1)
			fail_msg("%s, %d shards: case %zu is in %d slices", path, count, i, seen[i]);
	/* the impls of one shape (cases that differ only in impl) are in one slice: compared on
	 * one machine, in alternating rounds */
	char **shape = calloc(all.n + 1, sizeof(*shape));
	assert_non_null(shape);
	for (size_t i = 0; i < all.n; i++)
		shape[i] = case_key_drop(all.items[i].key, "impl");
	for (size_t i = 0; i < all.n; i++)
		for (size_t j = i + 1; j < all.n; j++)
			if (slice_of[i] != slice_of[j] && !strcmp(shape[i], shape[j]))
				fail_msg("%s, %d shards: %s in slice %d, %s in slice %d", path, count,
					 all.items[i].key, slice_of[i], all.items[j].key, slice_of[j]);
	for (size_t i = 0; i < all.n; i++)
		free(shape[i]);
	free(shape);
	free(seen);
	free(slice_of);
}

/* check_cut of the sweep at path. Returns the number of cases (0 when the sweep is one of the
 * deliberately bad fixtures). */
static size_t check_slices(const char *path, int count)
{
	struct sweep *s = NULL;
	struct sweep_cases all = {0};
	struct bd_error err;
	if (sweep_load(path, &s, &err) || sweep_expand(s, &all, &err)) {
		sweep_free(s);
		return 0;
	}
	check_cut(path, &all, count);
	size_t n = all.n;
	sweep_cases_free(&all);
	sweep_free(s);
	return n;
}

static void check_dir(const char *sub, size_t *sweeps)
{
	char dir[4096];
	const char *src = getenv("BENCHDB_SOURCE_DIR");
	snprintf(dir, sizeof(dir), "%s/%s", src ? src : ".", sub);
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t n = check_slices(path, 1);
		if (!n)
			continue;
		(*sweeps)++;
		const int counts[] = {2, 3, 4, 5, 7, 8, 16, 64};
		for (size_t k = 0; k < ARRAY_LEN(counts); k++)
			check_slices(path, counts[k]);
		/* one shard a case, and more shards than cases (some slices empty): on the sweeps of
		 * up to 64 cases; on the larger ones each of n slices assigns all n cases again
		 * (minutes under ASan), and test_shard__every_size_and_count cuts every size of
		 * sweep into every count up to two more than its cases */
		if (n <= 64) {
			check_slices(path, (int)n);
			check_slices(path, (int)n + 3);
		}
	}
	closedir(d);
}

static void test_shard__slices_are_disjoint_and_cover_every_sweep(void **state)
{
	(void)state;
	size_t sweeps = 0;
	check_dir("configs", &sweeps);
	check_dir("configs/perf", &sweeps);
	check_dir("tests/sweeps", &sweeps);
	check_dir("tests/cli", &sweeps);
	assert_true(sweeps >= 15);
}

/* Random costs spanning six orders of magnitude: every case has one owner, the same on a second
 * call, and no slice carries more than the mean load plus the largest case (the greedy bound). */
/* Sweeps of every size from 1 to 60 cases, shapes of one to three impls (and a benchmark
 * without impls beside), cut into every count from 1 to two more than the cases: the slices are
 * the sweep, each case once, a shape's impls together. */
static void test_shard__every_size_and_count(void **state)
{
	(void)state;
	static const char *const impls[] = {"[naive]", "[naive, flash]", "[naive, flash, sdpa]"};
	for (int shapes = 1; shapes <= 12; shapes++)
		for (int m = 0; m < 3; m++)
			for (int matmul = 0; matmul < 2; matmul++) {
				char text[1024], seqs[256] = "";
				for (int k = 0; k < shapes; k++)
					snprintf(seqs + strlen(seqs), sizeof(seqs) - strlen(seqs), "%s%d",
						 k ? ", " : "", 16 + 8 * k);
				snprintf(text, sizeof(text),
					 "benchmarks:\n"
					 "  - {suite: attention, impl: %s, seq_len: [%s], head_dim: 16}\n%s",
					 impls[m], seqs,
					 matmul ? "  - {suite: matmul, size: [32, 64, 128]}\n" : "");
				struct sweep *s = NULL;
				struct sweep_cases all = {0};
				struct bd_error err;
				if (sweep_parse("sizes.yaml", text, &s, &err) ||
				    sweep_expand(s, &all, &err))
					fail_msg("%s: %s", text, err.msg);
				assert_int_equal(all.n, (size_t)(shapes * (m + 1) + 3 * matmul));
				for (int count = 1; count <= (int)all.n + 2; count++)
					check_cut(text, &all, count);
				sweep_cases_free(&all);
				sweep_free(s);
			}
}

static void test_shard__assign_balances_by_cost(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int trial = 0; trial < 200; trial++) {
		size_t n = 1 + (size_t)(trial * 7 % 97);
		int count = 1 + trial % 13;
		double *cost = malloc(n * sizeof(*cost));
		int *owner = malloc(n * sizeof(*owner)), *again = malloc(n * sizeof(*again));
		double *load = calloc((size_t)count, sizeof(*load)), total = 0, largest = 0;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			cost[i] = 1e3 * (1 + (seed >> 16) % 1000) * (double)(1u << (seed % 20));
		}
		assert_int_equal(shard_assign(cost, n, count, owner), 0);
		assert_int_equal(shard_assign(cost, n, count, again), 0);
		for (size_t i = 0; i < n; i++) {
			assert_true(owner[i] >= 0 && owner[i] < count);
			assert_int_equal(owner[i], again[i]);
			load[owner[i]] += cost[i];
			total += cost[i];
			largest = cost[i] > largest ? cost[i] : largest;
		}
		for (int s = 0; s < count; s++)
			assert_true(load[s] <= total / count + largest * 1.03 + 1e-6 * total);
		free(cost); free(owner); free(again); free(load);
	}
}

/* One huge case and many small ones: by count each of two slices would take half the cases;
 * by cost the huge one is alone. */
static void test_shard__weighs_work_not_count(void **state)
{
	(void)state;
	const double cost[] = {1, 1, 1, 1000, 1, 1, 1, 1};
	int owner[ARRAY_LEN(cost)];
	assert_int_equal(shard_assign(cost, ARRAY_LEN(cost), 2, owner), 0);
	for (size_t i = 0; i < ARRAY_LEN(cost); i++)
		if (i != 3)
			assert_int_not_equal(owner[i], owner[3]);
	/* no cost known: one each, split evenly */
	const double none[] = {0, 0, 0, 0, 0, 0};
	int even[ARRAY_LEN(none)], per[2] = {0, 0};
	assert_int_equal(shard_assign(none, ARRAY_LEN(none), 2, even), 0);
	for (size_t i = 0; i < ARRAY_LEN(none); i++)
		per[even[i]]++;
	assert_int_equal(per[0], 3);
	assert_int_equal(per[1], 3);
	assert_int_equal(shard_assign(cost, 1, 0, owner), BD_EINVAL);
}

/* iters: auto weighs warmup + min_iters, the least it runs (how many it takes is known only by
 * running it): the same as a fixed count of min_iters. */
static void test_shard__auto_cases_weigh_their_min_iters(void **state)
{
	(void)state;
	struct sweep *s = NULL;
	struct sweep_cases cases = {0};
	struct bd_error err;
	assert_int_equal(sweep_parse("auto.yaml", "benchmarks:\n"
				     "  - {suite: matmul, size: 64, iters: auto, min_iters: 25}\n"
				     "  - {suite: matmul, size: 64, iters: 25}\n"
				     "  - {suite: matmul, size: 64, iters: 50}\n", &s, &err), 0);
	assert_int_equal(sweep_expand(s, &cases, &err), 0);
	struct progress_work w[3];
	for (int i = 0; i < 3; i++)
		case_work(&cases.items[i], 0, &w[i]);
	assert_true(w[0].flops > 0 && w[0].flops == w[1].flops);
	assert_true(w[2].flops > w[1].flops);
	sweep_cases_free(&cases);
	sweep_free(s);
}

static void clear_launcher_env(void)
{
	const char *vars[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
			      "SLURM_ARRAY_JOB_ID", "JOB_COMPLETION_INDEX", "BENCHDB_SHARD_COUNT"};
	for (size_t i = 0; i < ARRAY_LEN(vars); i++)
		unsetenv(vars[i]);
}

static void test_shard__parse_text_and_launcher_environment(void **state)
{
	(void)state;
	struct shard s;
	struct bd_error err;
	clear_launcher_env();
	assert_int_equal(shard_parse("2/4", &s, &err), 0);
	assert_int_equal(s.index, 2);
	assert_int_equal(s.count, 4);
	const char *bad[] = {"4/4", "-1/4", "1/0", "1", "a/4", "1/b", "1/4x", "/4", "auto"};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++)
		if (shard_parse(bad[i], &s, &err) != BD_EINVAL)
			fail_msg("--shard '%s' was accepted", bad[i]);
	assert_non_null(strstr(err.msg, "SLURM_ARRAY_TASK_ID"));
	/* a count that is not a number, or too large, is named as such (it said "must be 1 or
	 * more" of 3x and of 2147483648) */
	const char *bad_count[] = {"1/3x", "0/2147483648", "0/99999999999999999999", "1/0"};
	for (size_t i = 0; i < ARRAY_LEN(bad_count); i++) {
		assert_int_equal(shard_parse(bad_count[i], &s, &err), BD_EINVAL);
		if (!strstr(err.msg, "must be a whole number from 1 to 2147483647, got '") ||
		    !strstr(err.msg, strchr(bad_count[i], '/') + 1))
			fail_msg("--shard '%s': %s", bad_count[i], err.msg);
	}
	assert_int_equal(shard_parse("0/2147483647", &s, &err), 0);

	/* Slurm: --array=1-4 numbers tasks 1..4; the shard is the offset from the first */
	setenv("SLURM_ARRAY_TASK_ID", "3", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	assert_int_equal(shard_parse("auto", &s, &err), 0);
	assert_int_equal(s.index, 2);
	assert_int_equal(s.count, 4);
	setenv("SLURM_ARRAY_JOB_ID", "811", 1);
	char group[64];
	assert_int_equal(shard_group_id(NULL, "auto", group, sizeof(group), &err), 0);
	assert_string_equal(group, "slurm-811");
	assert_int_equal(shard_group_id("nightly", "auto", group, sizeof(group), &err), 0);
	assert_string_equal(group, "nightly");
	assert_int_equal(shard_group_id("0123456789", "auto", group, 10, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "--group expects at most 9 bytes"));
	/* an empty id was stored as none, and the shard's run with it as a run of the whole sweep */
	assert_int_equal(shard_group_id("", "auto", group, sizeof(group), &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "--group expects an id, got an empty one"));
	clear_launcher_env();
	/* by hand (or in a Kubernetes Job) nothing names the launch: a default of the sweep's hash
	 * and N was every launch's, and two nights' shards made one group; --group is asked for */
	assert_int_equal(shard_group_id(NULL, "1/4", group, sizeof(group), &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "--shard 1/4: nothing in the environment names this launch"));
	assert_non_null(strstr(err.msg, "give --group ID"));
	setenv("JOB_COMPLETION_INDEX", "1", 1);
	assert_int_equal(shard_group_id(NULL, "auto/4", group, sizeof(group), &err), BD_EINVAL);
	assert_int_equal(shard_group_id("job-3f2a", "auto/4", group, sizeof(group), &err), 0);
	assert_string_equal(group, "job-3f2a");
	clear_launcher_env();

	/* Kubernetes Indexed Job: the index; the count from BENCHDB_SHARD_COUNT or auto/N */
	setenv("JOB_COMPLETION_INDEX", "1", 1);
	assert_int_equal(shard_parse("auto", &s, &err), BD_EINVAL);
	assert_non_null(strstr(err.msg, "auto/N"));
	assert_int_equal(shard_parse("auto/3", &s, &err), 0);
	assert_int_equal(s.index, 1);
	assert_int_equal(s.count, 3);
	setenv("BENCHDB_SHARD_COUNT", "2", 1);
	assert_int_equal(shard_parse("auto", &s, &err), 0);
	assert_int_equal(s.count, 2);
	setenv("JOB_COMPLETION_INDEX", "2", 1);
	assert_int_equal(shard_parse("auto", &s, &err), BD_EINVAL);   /* index 2 of 2 */
	clear_launcher_env();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shard__slices_are_disjoint_and_cover_every_sweep),
		cmocka_unit_test(test_shard__every_size_and_count),
		cmocka_unit_test(test_shard__assign_balances_by_cost),
		cmocka_unit_test(test_shard__weighs_work_not_count),
		cmocka_unit_test(test_shard__auto_cases_weigh_their_min_iters),
		cmocka_unit_test(test_shard__parse_text_and_launcher_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
