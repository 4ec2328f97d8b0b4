/* kernels/dev/dev.c: the table of backends, one per device, and opening one (ops.h). */
#include "ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct dev_backend *const backends[DEVICE_COUNT] = {
	[DEVICE_CPU] = &dev_cpu_backend,
	[DEVICE_CUDA] = &dev_cuda_backend,
};

const struct dev_backend *dev_backend(enum bd_device device)
{
	return (unsigned)device < DEVICE_COUNT ? backends[device] : NULL;
}

int dev_open(struct dev *dev, enum bd_device device, struct mem_arena *mem, struct bd_error *err)
{
	const struct dev_backend *b = dev_backend(device);
	if (!b) {
		memset(dev, 0, sizeof(*dev));
		return bd_fail(err, BD_EUNSUPPORTED, "no %s backend in this build",
			       device_name(device));
	}
	int rc = b->open(dev, mem, err);
	if (!rc)
		dev->backend = b;
	return rc;
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
