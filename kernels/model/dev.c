/* kernels/model/dev.c: opening the backend of a device (ops.h). */
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
		return bd_fail(err, BD_EINVAL, "no %s backend in this build", device_name(device));
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
