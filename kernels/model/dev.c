/* kernels/model/dev.c: opening the backend of a device (ops.h). */
#include "ops.h"

#include <string.h>

int dev_open(struct dev *dev, enum bd_device device, struct mem_arena *mem, struct bd_error *err)
{
	switch (device) {
	case DEVICE_CPU:
		return dev_cpu_open(dev, mem, err);
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
