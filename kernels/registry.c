/* kernels/registry.c: every workload built into this binary, one per suite and device; which
 * impls each runs is its device's implementation table (impls.c). */
#include "workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "impls.h"

extern const struct workload attention_cpu;
extern const struct workload matmul_cpu_onednn;
extern const struct workload e2e_cpu_benchdb;
extern const struct workload e2e_cuda_benchdb;
extern const struct workload matmul_cuda_cublaslt;
extern const struct workload attention_cuda;

const struct workload *const workloads[] = {
	&attention_cpu,
	&matmul_cpu_onednn,
	&e2e_cpu_benchdb,
	&e2e_cuda_benchdb,
	&matmul_cuda_cublaslt,
	&attention_cuda,
	NULL,
};

const struct workload *workload_find(const char *suite, const char *impl, enum bd_device device)
{
	if (!impl_runs_on(suite, impl, device))
		return NULL;
	for (const struct workload *const *w = workloads; *w; w++)
		if (!strcmp((*w)->suite, suite) && (*w)->device == device)
			return *w;
	return NULL;
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
