/* runner/gpu_probe.h: what the GPU does while a case runs — its temperature, SM clock and clock
 * throttle reasons, read with NVML every 100 ms on a thread of its own. NVML is opened at run
 * time (dlopen of libnvidia-ml.so.1, which comes with the NVIDIA driver), so the runner neither
 * links it nor needs it: without a driver or a GPU the probe reads nothing and the figures stay
 * unknown (NULL). */
#ifndef BENCHDB_GPU_PROBE_H
#define BENCHDB_GPU_PROBE_H

#include "db.h"

struct gpu_probe;

/* Start sampling the GPU the case runs on: the first of CUDA_VISIBLE_DEVICES, an index or a
 * GPU-/MIG- UUID (a MIG instance: its GPU); without it NVML's device 0. NULL when there is
 * nothing to read (that device not found). */
struct gpu_probe *gpu_probe_start(void);
/* Stop and fill *out (hottest temperature, lowest SM clock, every throttle reason seen but idle);
 * out->known 0 when nothing was read. Accepts NULL (then out->known is 0). */
void gpu_probe_stop(struct gpu_probe *p, struct case_gpu *out);

/* The names of NVML's throttle-reason bits in mask, comma-separated, into out ("" for none;
 * gpu_idle is left out: it only says that no kernel was running at that instant). */
void gpu_throttle_names(unsigned long long mask, char *out, size_t n);

#endif
