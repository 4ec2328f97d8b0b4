/* tests/test_cgroup_cpu.c: the CPU quota of a process's control group (runner/cgroup_cpu.h),
 * read from planted /proc/self/cgroup and mountinfo files and cgroup trees in a temporary
 * directory: v1 and v2, nested limits (the smallest counts), "max" and -1 (no limit), a mount
 * whose root is a group (a container without a cgroup namespace), a mount point with a space. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup_cpu.h"

static char top[256];

static void put(const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", top, rel);
	/* make the parents */
	for (char *s = strchr(path + strlen(top) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void path_of(const char *rel, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", top, rel);
}

/* mountinfo with a v2 hierarchy at TOP/v2 and a v1 cpu hierarchy at TOP/v1 cpu (a space), both
 * mounting their whole hierarchy ("/") unless told a root */
static void mountinfo(const char *v1_root, const char *v2_root)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "22 1 0:20 / /proc rw,nosuid - proc proc rw\n"
		 "30 25 0:26 %s %s/v2 rw,relatime shared:4 - cgroup2 cgroup2 rw\n"
		 "31 25 0:27 / %s/v1\\040mem rw,relatime - cgroup cgroup rw,memory\n"
		 "32 25 0:28 %s %s/v1\\040cpu rw,relatime shared:9 master:2 - cgroup cgroup rw,cpu,cpuacct\n",
		 v2_root, top, top, v1_root, top);
	put("mountinfo", text);
}

static int quota(double *cpus)
{
	char cg[512], mi[512];
	path_of("cgroup", cg, sizeof(cg));
	path_of("mountinfo", mi, sizeof(mi));
	return cgroup_cpu_quota(cg, mi, cpus);
}

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/test_cgroup_cpu.XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_cgroup_cpu__v2_quota_of_the_group(void **state)
{
	(void)state;
	mountinfo("/", "/");
	put("cgroup", "0::/pod/ctr\n");
	put("v2/cpu.max", "max 100000\n");
	put("v2/pod/cpu.max", "max 100000\n");
	put("v2/pod/ctr/cpu.max", "150000 100000\n");
	double cpus = 0;
	assert_int_equal(quota(&cpus), 0);
	assert_true(cpus > 1.4999 && cpus < 1.5001);
}

static void test_cgroup_cpu__the_smallest_along_the_path_counts(void **state)
{
	(void)state;
	mountinfo("/", "/");
	put("cgroup", "0::/pod/ctr\n");
	put("v2/pod/cpu.max", "50000 100000\n");   /* the pod: half a CPU */
	put("v2/pod/ctr/cpu.max", "400000 100000\n");
	double cpus = 0;
	assert_int_equal(quota(&cpus), 0);
	assert_true(cpus > 0.4999 && cpus < 0.5001);
}

static void test_cgroup_cpu__no_limit_is_no_quota(void **state)
{
	(void)state;
	mountinfo("/", "/");
	put("cgroup", "0::/a\n1:cpu,cpuacct:/a\n");
	put("v2/a/cpu.max", "max 100000\n");
	put("v1 cpu/a/cpu.cfs_quota_us", "-1\n");
	put("v1 cpu/a/cpu.cfs_period_us", "100000\n");
	double cpus = -7;
	assert_int_equal(quota(&cpus), 1);
	assert_true(cpus == -7);   /* untouched */
}

static void test_cgroup_cpu__v1_cpu_hierarchy_with_a_space_in_its_mount_point(void **state)
{
	(void)state;
	mountinfo("/", "/");
	/* the memory hierarchy's group is not the cpu one's */
	put("cgroup", "5:memory:/elsewhere\n3:cpu,cpuacct:/user/job\n0::/\n");
	put("v1 cpu/user/job/cpu.cfs_quota_us", "250000\n");
	put("v1 cpu/user/job/cpu.cfs_period_us", "100000\n");
	put("v1 mem/elsewhere/cpu.cfs_quota_us", "10000\n");   /* not a cpu hierarchy: ignored */
	put("v1 mem/elsewhere/cpu.cfs_period_us", "100000\n");
	double cpus = 0;
	assert_int_equal(quota(&cpus), 0);
	assert_true(cpus > 2.4999 && cpus < 2.5001);
}

static void test_cgroup_cpu__a_mount_of_the_containers_own_group(void **state)
{
	(void)state;
	/* no cgroup namespace: /proc/self/cgroup names the host's path, and the container's mount
	 * shows that group (root /docker/abc) at the mount point */
	mountinfo("/docker/abc", "/docker/abc");
	put("cgroup", "0::/docker/abc\n2:cpu:/docker/abc\n");
	put("v2/cpu.max", "200000 100000\n");
	put("v1 cpu/cpu.cfs_quota_us", "300000\n");
	put("v1 cpu/cpu.cfs_period_us", "100000\n");
	double cpus = 0;
	assert_int_equal(quota(&cpus), 0);
	assert_true(cpus > 1.9999 && cpus < 2.0001);   /* the smaller of the two hierarchies' */
}

static void test_cgroup_cpu__a_group_outside_the_mount_reads_nothing(void **state)
{
	(void)state;
	mountinfo("/docker/abc", "/docker/abc");
	put("cgroup", "0::/docker/abcdef\n");   /* a prefix by bytes, not by path */
	put("v2/cpu.max", "50000 100000\n");
	double cpus = 0;
	assert_int_equal(quota(&cpus), 1);
}

static void test_cgroup_cpu__missing_or_damaged_files_read_no_quota(void **state)
{
	(void)state;
	double cpus = 0;
	assert_int_equal(cgroup_cpu_quota("/nonexistent/cgroup", "/nonexistent/mountinfo", &cpus), 1);
	mountinfo("/", "/");
	put("cgroup", "garbage without colons\n0::/g\n");
	put("v2/g/cpu.max", "lots 0\n");
	assert_int_equal(quota(&cpus), 1);
	put("v2/g/cpu.max", "-5 100000\n");
	assert_int_equal(quota(&cpus), 1);
	put("mountinfo", "30 25 0:26 / /x rw - cgroup2\n");   /* truncated: no source, no options */
	put("v2/g/cpu.max", "50000 100000\n");
	assert_int_equal(quota(&cpus), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cgroup_cpu__v2_quota_of_the_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_cpu__the_smallest_along_the_path_counts,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_cpu__no_limit_is_no_quota, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_cgroup_cpu__v1_cpu_hierarchy_with_a_space_in_its_mount_point, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_cpu__a_mount_of_the_containers_own_group,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_cpu__a_group_outside_the_mount_reads_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_cpu__missing_or_damaged_files_read_no_quota,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
