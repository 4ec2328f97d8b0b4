/* tests/fake_nvml.c: a libnvidia-ml.so.1 stand-in for test_gpu_probe_nvml: two GPUs, index 0
 * and 1, whose temperatures tell which one the probe read (40 and 41 °C), and the UUID
 * GPU-11111111-2222-3333-4444-555555555555 naming device 1, MIG-66666666-... a MIG instance of it
 * (no temperature of its own). */
#include <stdint.h>
#include <string.h>

#define UUID_OF_1 "GPU-11111111-2222-3333-4444-555555555555"
#define MIG_OF_1 "MIG-66666666-2222-3333-4444-555555555555"
#define MIG_HANDLE ((void *)(uintptr_t)100)

int nvmlInit_v2(void) { return 0; }

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device)
{
	if (index > 1)
		return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
	*device = (void *)(uintptr_t)(index + 1);
	return 0;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, void **device)
{
	if (!strcmp(uuid, MIG_OF_1)) {
		*device = MIG_HANDLE;
		return 0;
	}
	if (strcmp(uuid, UUID_OF_1))
		return 6;   /* NVML_ERROR_NOT_FOUND */
	*device = (void *)(uintptr_t)2;
	return 0;
}

int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(void *mig, void **device)
{
	if (mig != MIG_HANDLE)
		return 2;
	*device = (void *)(uintptr_t)2;
	return 0;
}

int nvmlDeviceGetTemperature(void *device, int sensor, unsigned int *temp)
{
	(void)sensor;
	if (device == MIG_HANDLE)
		return 3;   /* NVML_ERROR_NOT_SUPPORTED */
	*temp = 39 + (unsigned int)(uintptr_t)device;
	return 0;
}

int nvmlDeviceGetClockInfo(void *device, int type, unsigned int *clock)
{
	(void)device;
	(void)type;
	*clock = 1000;
	return 0;
}
