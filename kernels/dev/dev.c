/* kernels/dev/dev.c: opening the backend of a device (ops.h). */
#include "ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int dev_open(struct dev *dev, enum bd_device device, struct mem_arena *mem, struct bd_error *err)
{
	switch (device) {
	case DEVICE_CPU:
		return dev_cpu_open(dev, mem, err);
	case DEVICE_CUDA:
		return dev_cuda_open(dev, mem, err);
	default:
		memset(dev, 0, sizeof(*dev));
		return bd_fail(err, BD_EUNSUPPORTED, "no %s backend in this build",
			       device_name(device));
	}
}

void dev_close(struct dev *dev)
{
	if (dev->ops && dev->ops->release)
		dev->ops->release(dev);
}

void dev_range_push(struct dev *dev, const char *fmt, ...)
{
	if (!dev->ops->range_push)
		return;
	char name[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	dev->ops->range_push(dev, name);
}

void dev_range_pop(struct dev *dev)
{
	if (dev->ops->range_pop)
		dev->ops->range_pop(dev);
}

int wl_from_dev(struct wl_status *st, const struct dev *dev, int rc, const char *what)
{
	return wl_from_error(st, rc, what, &dev->err);
}

int wl_dev_open(struct dev *dev, const struct case_params *p, struct mem_arena *mem,
		struct wl_status *st)
{
	struct bd_error err = {0};
	int rc = dev_open(dev, p->device, mem, &err);
	if (rc)
		return wl_from_error(st, rc, NULL, &err);
	dev->tf32 = p->tf32;
	return STATUS_OK;
}

int wl_dev_mark(struct dev *dev, int slot, struct wl_status *st)
{
	int rc = dev->ops->mark(dev, slot);
	return rc ? wl_from_dev(st, dev, rc, "timer") : STATUS_OK;
}

int wl_dev_elapsed(struct dev *dev, enum bd_phase phase, int64_t *ns, struct wl_status *st)
{
	int rc = dev->ops->elapsed(dev, 2 * (int)phase, 2 * (int)phase + 1, ns);
	return rc ? wl_from_dev(st, dev, rc, phase_name(phase)) : STATUS_OK;
}

int wl_dev_drain(struct dev *dev, struct wl_status *st)
{
	int rc = dev->ops->sync(dev);
	return rc ? wl_from_dev(st, dev, rc, "synchronize") : STATUS_OK;
}
