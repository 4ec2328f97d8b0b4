/* kernels/registry.c: every workload built into this binary. Each suite has one workload,
 * written once over the device ops (workloads/); the registry makes of it one per device whose
 * implementation table (impls.c) has the suite, with that device's timing: a synchronous
 * backend's (ops.h dev_backend) copy has no mark, elapsed or drain, so that the runner times it
 * with the host clock. */
#include "workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "impls.h"
#include "ops.h"

extern const struct workload attention_workload, e2e_workload, matmul_workload;

static const struct workload *const suites[] = {
	&attention_workload,
	&e2e_workload,
	&matmul_workload,
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

static struct workload made[DEVICE_COUNT][NSUITES];
static const struct workload *list[DEVICE_COUNT * NSUITES + 1];
const struct workload *const *const workloads = list;

static int has_suite(enum bd_device device, const char *suite)
{
	for (const struct impl *m = impl_table(device); m->suite; m++)
		if (!strcmp(m->suite, suite))
			return 1;
	return 0;
}

/* Fill made and list before main (the list is read as data: workload.h). */
__attribute__((constructor)) static void registry_make(void)
{
	size_t n = 0;
	for (int d = 0; d < DEVICE_COUNT; d++) {
		const struct dev_backend *b = dev_backend((enum bd_device)d);
		for (size_t s = 0; s < NSUITES; s++) {
			if (!b || !has_suite((enum bd_device)d, suites[s]->suite))
				continue;
			struct workload *w = &made[d][s];
			*w = *suites[s];
			w->device = (enum bd_device)d;
			if (!b->async)
				w->mark = NULL, w->elapsed = NULL, w->drain = NULL;
			list[n++] = w;
		}
	}
	list[n] = NULL;
}

const struct workload *workload_find(const char *suite, const char *impl, enum bd_device device)
{
	if (!impl_runs_on(suite, impl, device))
		return NULL;
	for (const struct workload *const *w = workloads; *w; w++)
		if (!strcmp((*w)->suite, suite) && (*w)->device == device)
			return *w;
	return NULL;
}

int workload_host_memory(enum bd_device device)
{
	const struct dev_backend *b = dev_backend(device);
	return b && b->host_memory;
}

int wl_set(struct wl_status *st, int code, const char *fmt, ...)
{
	st->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof(st->reason), fmt, ap);
	va_end(ap);
	return code;
}

int wl_from_error(struct wl_status *st, int rc, const char *what, const struct bd_error *err)
{
	int code = rc == BD_ENOMEM ? STATUS_OOM : rc == BD_EUNSUPPORTED ? STATUS_UNSUPPORTED : STATUS_ERROR;
	if (what)
		return wl_set(st, code, "%s: %s", what, err->msg);
	return wl_set(st, code, "%s", err->msg);
}
