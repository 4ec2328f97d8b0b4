/* common/vocab.c: the spellings of the enums in vocab.h, indexed by the enum (the designated
 * initialisers tie each name to its value). */
#include "vocab.h"

#include <string.h>

static const char *const device_names[DEVICE_COUNT] = {
	[DEVICE_CPU] = "cpu", [DEVICE_CUDA] = "cuda",
};
static const char *const dtype_names[DTYPE_COUNT] = {
	[DTYPE_FLOAT32] = "float32", [DTYPE_FLOAT16] = "float16", [DTYPE_BFLOAT16] = "bfloat16",
};
static const char *const pass_names[PASS_COUNT] = {
	[PASS_FORWARD] = "forward", [PASS_BACKWARD] = "backward",
	[PASS_FORWARD_BACKWARD] = "forward_backward", [PASS_TRAIN_STEP] = "train_step",
};
static const char *const phase_names[PHASE_COUNT] = {
	[PHASE_FWD] = "fwd", [PHASE_BWD] = "bwd", [PHASE_OPT] = "opt",
};
static const char *const status_names[STATUS_COUNT] = {
	[STATUS_OK] = "ok", [STATUS_OOM] = "oom", [STATUS_ERROR] = "error",
	[STATUS_UNSUPPORTED] = "unsupported", [STATUS_SKIPPED] = "skipped",
};

static const char *name_of(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "?";
}

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

const char *device_name(enum bd_device d) { return name_of(device_names, DEVICE_COUNT, (int)d); }
const char *dtype_name(enum bd_dtype t) { return name_of(dtype_names, DTYPE_COUNT, (int)t); }
const char *pass_name(enum bd_pass p) { return name_of(pass_names, PASS_COUNT, (int)p); }
const char *phase_name(enum bd_phase p) { return name_of(phase_names, PHASE_COUNT, (int)p); }
const char *status_name(enum bd_status s) { return name_of(status_names, STATUS_COUNT, (int)s); }
int device_parse(const char *s) { return lookup(device_names, DEVICE_COUNT, s); }
int dtype_parse(const char *s) { return lookup(dtype_names, DTYPE_COUNT, s); }
int pass_parse(const char *s) { return lookup(pass_names, PASS_COUNT, s); }
int phase_parse(const char *s) { return lookup(phase_names, PHASE_COUNT, s); }
int status_parse(const char *s) { return lookup(status_names, STATUS_COUNT, s); }

size_t dtype_size(enum bd_dtype t) { return t == DTYPE_FLOAT32 ? 4 : 2; }

unsigned pass_phases(enum bd_pass p)
{
	switch (p) {
	case PASS_FORWARD: return 1u << PHASE_FWD;
	case PASS_BACKWARD: return 1u << PHASE_BWD;
	case PASS_FORWARD_BACKWARD: return 1u << PHASE_FWD | 1u << PHASE_BWD;
	case PASS_TRAIN_STEP: return 1u << PHASE_FWD | 1u << PHASE_BWD | 1u << PHASE_OPT;
	default: return 0;
	}
}
