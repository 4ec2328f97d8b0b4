/* runner/cgroup_cpu.c: the CPU quota of this process's control group (cgroup_cpu.h). */
#include "cgroup_cpu.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CG_PATH_MAX 4096

/* A mounted cgroup hierarchy: where it is mounted and which of its groups is its root there. */
struct cg_mount {
	char point[CG_PATH_MAX], root[CG_PATH_MAX];
};

/* Whether the comma-separated list has the token. */
static int list_has(const char *list, const char *token)
{
	size_t n = strlen(token);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && !strncmp(p, token, n))
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* mountinfo writes a space, tab, newline and backslash in a path as \040, \011, \012, \134. */
static void unescape(char *s)
{
	char *w = s;
	for (const char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/* The first mount of the v2 hierarchy (v2 set) or of the v1 hierarchy with the cpu controller:
 * 0 when found. */
static int find_mount(const char *mountinfo, int v2, struct cg_mount *m)
{
	FILE *f = fopen(mountinfo, "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int found = -1;
	while (found && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS */
		char *save = NULL, *field[5] = {0};
		char *tok = strtok_r(line, " \n", &save);
		for (int i = 0; i < 5 && tok; i++, tok = strtok_r(NULL, " \n", &save))
			field[i] = tok;
		while (tok && strcmp(tok, "-"))
			tok = strtok_r(NULL, " \n", &save);
		char *fstype = tok ? strtok_r(NULL, " \n", &save) : NULL;
		char *source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
		char *super = source ? strtok_r(NULL, " \n", &save) : NULL;
		if (!field[4] || !fstype ||
		    !(v2 ? !strcmp(fstype, "cgroup2")
			 : !strcmp(fstype, "cgroup") && super && list_has(super, "cpu")))
			continue;
		if (strlen(field[3]) >= sizeof(m->root) || strlen(field[4]) >= sizeof(m->point))
			continue;
		strcpy(m->root, field[3]);
		strcpy(m->point, field[4]);
		unescape(m->root);
		unescape(m->point);
		found = 0;
	}
	free(line);
	fclose(f);
	return found;
}

/* The process's group in the v2 hierarchy (v2 set: the "0::" line) or in the v1 hierarchy with
 * the cpu controller: 0 when found. */
static int find_group(const char *proc_cgroup, int v2, char *path, size_t size)
{
	FILE *f = fopen(proc_cgroup, "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int found = -1;
	ssize_t len;
	while (found && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';   /* line: the hierarchy's id */
		const char *controllers = c1 + 1;
		int match = v2 ? !strcmp(line, "0") && !*controllers
			       : *controllers && list_has(controllers, "cpu");
		if (match && strlen(c2 + 1) < size) {
			strcpy(path, c2 + 1);
			found = 0;
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* The quota in the group at dir, in CPUs; 0 when none or unreadable. */
static double group_quota(const char *dir, int v2)
{
	char file[2 * CG_PATH_MAX + 64];
	double cpus = 0;
	if (v2) {
		char quota[32] = "";
		double period = 0;
		snprintf(file, sizeof(file), "%s/cpu.max", dir);
		FILE *f = fopen(file, "r");
		if (!f)
			return 0;
		if (fscanf(f, "%31s %lf", quota, &period) == 2 && strcmp(quota, "max") && period > 0)
			cpus = strtod(quota, NULL) / period;
		fclose(f);
	} else {
		double quota = -1, period = 0;
		snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
		FILE *f = fopen(file, "r");
		if (!f)
			return 0;
		if (fscanf(f, "%lf", &quota) != 1)
			quota = -1;
		fclose(f);
		snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
		if (quota > 0 && (f = fopen(file, "r"))) {
			if (fscanf(f, "%lf", &period) == 1 && period > 0)
				cpus = quota / period;
			fclose(f);
		}
	}
	return isfinite(cpus) && cpus > 0 ? cpus : 0;
}

/* The smallest quota from the process's group up to the mount's root in one hierarchy; 0: none. */
static double hierarchy_quota(const char *proc_cgroup, const char *mountinfo, int v2)
{
	struct cg_mount m;
	char path[CG_PATH_MAX], dir[2 * CG_PATH_MAX + 2];
	if (find_group(proc_cgroup, v2, path, sizeof(path)) || find_mount(mountinfo, v2, &m))
		return 0;
	/* the group's path below the mount's root ("/" mounts the whole hierarchy) */
	const char *rel = path;
	size_t root_len = strlen(m.root);
	if (strcmp(m.root, "/")) {
		if (strncmp(path, m.root, root_len) || (path[root_len] && path[root_len] != '/'))
			return 0;   /* a group outside what is mounted here */
		rel = path + root_len;
	}
	char walk[CG_PATH_MAX];
	snprintf(walk, sizeof(walk), "%s", rel);
	double least = 0;
	for (;;) {
		size_t n = strlen(walk);
		while (n && walk[n - 1] == '/')
			walk[--n] = '\0';
		int len = snprintf(dir, sizeof(dir), "%s%s", m.point, walk);
		double q = len > 0 && (size_t)len < sizeof(dir) ? group_quota(dir, v2) : 0;
		if (q > 0 && (least == 0 || q < least))
			least = q;
		char *slash = strrchr(walk, '/');
		if (!n || !slash)
			break;
		*slash = '\0';
	}
	return least;
}

int cgroup_cpu_quota(const char *proc_cgroup, const char *mountinfo, double *cpus)
{
	double v2 = hierarchy_quota(proc_cgroup, mountinfo, 1);
	double v1 = hierarchy_quota(proc_cgroup, mountinfo, 0);
	double least = v2 > 0 && (v1 <= 0 || v2 < v1) ? v2 : v1;
	if (least <= 0)
		return 1;
	*cpus = least;
	return 0;
}

int cgroup_cpu_quota_self(double *cpus)
{
	return cgroup_cpu_quota("/proc/self/cgroup", "/proc/self/mountinfo", cpus);
}

int cgroup_cpu_quota_warn(FILE *f)
{
	double cpus;
	int threads = omp_get_max_threads(), limit = omp_get_thread_limit();
	if (limit < threads)
		threads = limit;
	if (cgroup_cpu_quota_self(&cpus) || cpus >= threads)
		return 0;
	int fit = (int)floor(cpus);
	fprintf(f, "warning: this process's control group allows %.3g CPUs' time (a container's or "
		   "pod's CPU limit) and the cases run %d threads: they will stop whenever the quota "
		   "runs out and wait for a CPU (cpu_wait; the reports mark them contended): %s\n",
		cpus, threads, fit >= 1 ? "give OMP_NUM_THREADS at most the quota, or raise the limit"
					: "raise the limit to a whole CPU or more");
	return 1;
}
