/* kernels/workloads/dev_workload.c: see dev_workload.h. */
#include "dev_workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impls.h"

int wl_case_open(size_t size, const struct case_params *p, struct mem_arena *mem, void **state,
		 struct wl_status *st)
{
	struct wl_case *c = calloc(1, size);
	*state = c;
	if (!c)
		return wl_set(st, STATUS_ERROR, "out of host memory");
	c->p = *p;
	c->mem = mem;
	struct bd_error err = {0};
	int rc = dev_open(&c->dev, p->device, mem, &err);
	if (rc)
		return wl_from_error(st, rc, NULL, &err);
	c->dev_open = 1;
	c->dev.tf32 = p->tf32;
	return STATUS_OK;
}

void wl_case_close(struct wl_case *c)
{
	if (!c)
		return;
	if (c->dev_open)
		dev_close(&c->dev);
	free(c);
}

int wl_case_mark(void *state, int slot, struct wl_status *st)
{
	struct dev *dev = &((struct wl_case *)state)->dev;
	int rc = dev->ops->mark(dev, slot);
	return rc ? wl_from_dev(st, dev, rc, "timer") : STATUS_OK;
}

int wl_case_elapsed(void *state, enum bd_phase phase, int64_t *ns, struct wl_status *st)
{
	struct dev *dev = &((struct wl_case *)state)->dev;
	int rc = dev->ops->elapsed(dev, 2 * (int)phase, 2 * (int)phase + 1, ns);
	return rc ? wl_from_dev(st, dev, rc, phase_name(phase)) : STATUS_OK;
}

void wl_case_describe(void *state, char *buf, size_t n)
{
	struct wl_case *c = state;
	if (n)
		buf[0] = '\0';
	if (c && c->dev_open && c->dev.ops->describe)
		c->dev.ops->describe(&c->dev, buf, n);
}

int wl_case_drain(void *state, struct wl_status *st)
{
	struct dev *dev = &((struct wl_case *)state)->dev;
	int rc = dev->ops->sync(dev);
	return rc ? wl_from_dev(st, dev, rc, "synchronize") : STATUS_OK;
}

int wl_from_dev(struct wl_status *st, const struct dev *dev, int rc, const char *what)
{
	size_t n = what ? strlen(what) : 0;
	if (n && !strncmp(dev->err.msg, what, n))
		what = NULL;
	return wl_from_error(st, rc, what, &dev->err);
}

void *wl_dev_alloc(struct dev *dev, size_t bytes, const char *what, ...)
{
	void *p = dev->ops->alloc(dev, bytes);
	if (p)
		return p;
	char why[sizeof(dev->err.msg)];
	snprintf(why, sizeof(why), "%s", dev->err.msg);
	va_list ap;
	va_start(ap, what);
	mem_vfail(&dev->err, dev->mem, (double)bytes, why, what, ap);
	va_end(ap);
	return NULL;
}

int wl_check_dtype(const struct case_params *p, struct wl_status *st)
{
	const struct impl *m = impl_find(suite_name(p->suite), p->impl, p->device);
	if (!m || !m->dtypes || (m->dtypes & IMPL_DTYPE(p->dtype)))
		return STATUS_OK;
	char takes[64] = "";
	int left = __builtin_popcount(m->dtypes);
	for (int t = 0; t < DTYPE_COUNT; t++) {
		if (!(m->dtypes & IMPL_DTYPE(t)))
			continue;
		left--;
		snprintf(takes + strlen(takes), sizeof(takes) - strlen(takes), "%s%s",
			 dtype_name((enum bd_dtype)t), left > 1 ? ", " : left ? " and " : "");
	}
	return wl_set(st, STATUS_UNSUPPORTED, "the %s %s %s runs %s only, not %s",
		      device_name(p->device), p->impl, suite_name(p->suite), takes,
		      dtype_name(p->dtype));
}

int wl_check_device(const struct case_params *p, struct wl_status *st)
{
	const struct dev_backend *b = dev_backend(p->device);
	struct bd_error err = {0};
	int rc;
	if (!b)
		return wl_set(st, STATUS_UNSUPPORTED, "no %s backend in this build",
			      device_name(p->device));
	if (b->available && (rc = b->available(&err)))
		return wl_from_error(st, rc, NULL, &err);
	return STATUS_OK;
}

int wl_check_gemm(const struct case_params *p, struct wl_status *st)
{
	const struct dev_backend *b = dev_backend(p->device);
	struct bd_error err = {0};
	int rc;
	if (b && b->gemm_supported && (rc = b->gemm_supported(p->dtype, p->tf32, &err)))
		return wl_from_error(st, rc, NULL, &err);
	return STATUS_OK;
}
