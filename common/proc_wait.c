/* common/proc_wait.c: this process's threads' time on a CPU and waiting for one.
 *
 * Linux keeps, per thread, the time it ran and the time it sat runnable on a run queue waiting for
 * a CPU (/proc/self/task/TID/schedstat: "on-cpu-ns wait-ns timeslices"; the scheduler's
 * sched_info, present on Debian's and most distributions' kernels). A thread that waits was
 * ready to work and another process had its CPU: what it timed is inflated by that much.
 */
#include "proc_wait.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

/* A thread's CPU clock by its id (what glibc's pthread_getcpuclockid makes of a thread's kernel
 * id: Linux's per-thread CPUCLOCK_SCHED clock), readable for any thread of this process. */
static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 4 /* per thread */ | 2 /* sched */);
}

/* Add one thread's figures; a thread that ended between the listing and the read is skipped.
 * The time it ran comes from its CPU clock: schedstat's on-cpu figure is brought up to date only
 * at the scheduler's tick and switches (4 ms apart at HZ 250), so read alone a stretch shorter
 * than that often ran "0 ns" and a wait in it counted as all of the time; the clock brings a
 * running thread's figure up to now. The wait comes from schedstat (counted when a thread that
 * waited gets its CPU). */
static void add_thread(const char *tid, struct cpu_wait *w)
{
	char path[300], *end;
	long id = strtol(tid, &end, 10);
	if (*end || id <= 0)
		return;
	struct timespec ts;
	int clocked = !clock_gettime(thread_clock((pid_t)id), &ts);
	snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	unsigned long long run, wait;
	if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
		/* a kernel without sched_info reads "0 0 0": no figures, whatever the clock says */
		if (clocked && (run || wait))
			run = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
		w->run_ns += (int64_t)run;
		w->wait_ns += (int64_t)wait;
		w->ok = 1;
	}
	fclose(f);
}

static void (*planted_reader)(struct cpu_wait *w);

void cpu_wait_plant(void (*reader)(struct cpu_wait *w))
{
	planted_reader = reader;
}

void cpu_wait_read(struct cpu_wait *w)
{
	w->run_ns = w->wait_ns = 0;
	w->ok = 0;
	if (planted_reader) {
		planted_reader(w);
		return;
	}
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			add_thread(e->d_name, w);
	closedir(d);
}

double cpu_wait_share(const struct cpu_wait *before, const struct cpu_wait *after)
{
	if (!before->ok || !after->ok)
		return -1;
	/* A thread that ended in between takes its figures with it: a negative delta is clamped,
	 * and the share stays within [0, 1]. */
	int64_t run = after->run_ns - before->run_ns, wait = after->wait_ns - before->wait_ns;
	if (run < 0)
		run = 0;
	if (wait < 0)
		wait = 0;
	if (run + wait <= 0)   /* a kernel without sched_info: every thread reads 0 0 */
		return -1;
	return (double)wait / (double)(run + wait);
}
