/* runner/gpu_probe.c: NVML sampling during a case (gpu_probe.h). */
#include "gpu_probe.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xalloc.h"

/* Sampling period, nanoseconds. */
#define PROBE_PERIOD_NS 100000000L

/* The few NVML entry points used, as nvml.h declares them (nvmlDevice_t is a pointer, enums are
 * ints, NVML_SUCCESS is 0). */
typedef void *nvml_device;
struct nvml {
	void *lib;
	int (*init)(void);
	int (*handle_by_index)(unsigned int, nvml_device *);
	int (*handle_by_uuid)(const char *, nvml_device *);              /* NULL: not exported */
	int (*mig_parent)(nvml_device, nvml_device *);                   /* NULL: not exported */
	int (*temperature)(nvml_device, int, unsigned int *);        /* sensor 0: the GPU die */
	int (*clock)(nvml_device, int, unsigned int *);              /* clock 1: SM */
	int (*throttle)(nvml_device, unsigned long long *);
};

struct gpu_probe {
	struct nvml nvml;   /* a copy of the process's NVML, opened once (nvml_once) */
	nvml_device device;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;
	struct case_gpu seen;
	unsigned long long reasons;
};

static const struct {
	unsigned long long bit;
	const char *name;
} throttle_bits[] = {
	{0x2, "applications_clocks"}, {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},
	{0x10, "sync_boost"}, {0x20, "sw_thermal"}, {0x40, "hw_thermal"},
	{0x80, "hw_power_brake"}, {0x100, "display_clocks"},
};

void gpu_throttle_names(unsigned long long mask, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(throttle_bits) / sizeof(throttle_bits[0]); i++)
		if ((mask & throttle_bits[i].bit) && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "",
						throttle_bits[i].name);
}

static void sample(struct gpu_probe *p)
{
	unsigned int temp = 0, clock = 0;
	unsigned long long reasons = 0;
	if (!p->nvml.temperature(p->device, 0, &temp) && temp > 0) {
		p->seen.known = 1;
		if (temp > p->seen.temp_c)
			p->seen.temp_c = temp;
	}
	if (!p->nvml.clock(p->device, 1, &clock) && clock > 0) {
		p->seen.known = 1;
		if (!p->seen.sm_clock_mhz || (int)clock < p->seen.sm_clock_mhz)
			p->seen.sm_clock_mhz = (int)clock;
	}
	if (p->nvml.throttle && !p->nvml.throttle(p->device, &reasons))
		p->reasons |= reasons;
}

static void *probe_loop(void *arg)
{
	struct gpu_probe *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		sample(p);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PROBE_PERIOD_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &until) == 0)
			;
	}
	sample(p);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int nvml_open(struct nvml *n)
{
	if (!(n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)))
		return -1;
	*(void **)&n->init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&n->handle_by_index = dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->handle_by_uuid = dlsym(n->lib, "nvmlDeviceGetHandleByUUID");
	*(void **)&n->mig_parent = dlsym(n->lib, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
	*(void **)&n->temperature = dlsym(n->lib, "nvmlDeviceGetTemperature");
	*(void **)&n->clock = dlsym(n->lib, "nvmlDeviceGetClockInfo");
	*(void **)&n->throttle = dlsym(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	if (!n->init || !n->handle_by_index || !n->temperature || !n->clock ||
	    n->init() != 0) {
		dlclose(n->lib);
		n->lib = NULL;
		return -1;
	}
	return 0;
}

/* NVML for the whole process: opened at the first case, left open (nvmlInit takes a while, and
 * the driver cleans up at exit). NULL when it cannot be had. */
static const struct nvml *nvml_once(void)
{
	static struct nvml nvml;
	static int tried;
	if (!tried) {
		tried = 1;
		if (nvml_open(&nvml))
			nvml.lib = NULL;
	}
	return nvml.lib ? &nvml : NULL;
}

struct gpu_probe *gpu_probe_start(void)
{
	const struct nvml *nvml = nvml_once();
	if (!nvml)
		return NULL;
	struct gpu_probe *p = xcalloc(1, sizeof(*p));
	p->nvml = *nvml;
	unsigned int index = 0;
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	/* the first entry: an index, or a UUID (GPU-..., MIG-...: NVML's own spelling), which names
	 * no index, so NVML is asked for that device; a MIG instance's figures are its GPU's */
	char uuid[96] = "";
	if (visible && *visible >= '0' && *visible <= '9')
		index = (unsigned int)strtoul(visible, NULL, 10);
	else if (visible && (!strncmp(visible, "GPU-", 4) || !strncmp(visible, "MIG-", 4)))
		snprintf(uuid, sizeof(uuid), "%.*s", (int)strcspn(visible, ","), visible);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	int found = uuid[0] ? p->nvml.handle_by_uuid && !p->nvml.handle_by_uuid(uuid, &p->device)
			    : !p->nvml.handle_by_index(index, &p->device);
	nvml_device parent;
	if (found && !strncmp(uuid, "MIG-", 4) && p->nvml.mig_parent &&
	    !p->nvml.mig_parent(p->device, &parent))
		p->device = parent;
	if (!found ||
	    pthread_create(&p->thread, NULL, probe_loop, p)) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->wake);
		free(p);
		return NULL;
	}
	return p;
}

void gpu_probe_stop(struct gpu_probe *p, struct case_gpu *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	*out = p->seen;
	gpu_throttle_names(p->reasons, out->throttle, sizeof(out->throttle));
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	free(p);
}
