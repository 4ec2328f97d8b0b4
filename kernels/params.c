/* kernels/params.c: names of the enums in params.h. */
#include "params.h"

#include <string.h>

static const char *const device_names[DEVICE_COUNT] = {"cpu", "cuda"};
static const char *const dtype_names[DTYPE_COUNT] = {"float32", "float16", "bfloat16"};
static const char *const pass_names[PASS_COUNT] = {"forward", "backward", "forward_backward",
						   "train_step"};
static const char *const phase_names[PHASE_COUNT] = {"fwd", "bwd", "opt"};

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

const char *device_name(enum bd_device d) { return d < DEVICE_COUNT ? device_names[d] : "?"; }
const char *dtype_name(enum bd_dtype t) { return t < DTYPE_COUNT ? dtype_names[t] : "?"; }
size_t dtype_size(enum bd_dtype t) { return t == DTYPE_FLOAT32 ? 4 : 2; }
const char *pass_name(enum bd_pass p) { return p < PASS_COUNT ? pass_names[p] : "?"; }
const char *phase_name(enum bd_phase p) { return p < PHASE_COUNT ? phase_names[p] : "?"; }
int device_parse(const char *s) { return lookup(device_names, DEVICE_COUNT, s); }
int dtype_parse(const char *s) { return lookup(dtype_names, DTYPE_COUNT, s); }
int pass_parse(const char *s) { return lookup(pass_names, PASS_COUNT, s); }
int phase_parse(const char *s) { return lookup(phase_names, PHASE_COUNT, s); }

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

int64_t model_param_count(const struct model_config *m)
{
	int64_t d = m->d_model, sq, ff, layer, blocks, embed, total;
	if (__builtin_mul_overflow(d, d, &sq) || __builtin_mul_overflow(sq, 4, &sq) ||
	    __builtin_mul_overflow(d, m->d_ff, &ff) || __builtin_mul_overflow(ff, 3, &ff) ||
	    __builtin_add_overflow(sq, ff, &layer) || __builtin_add_overflow(layer, 2 * d, &layer) ||
	    __builtin_mul_overflow(layer, m->num_layers, &blocks) ||
	    __builtin_mul_overflow(m->vocab_size, d, &embed) || __builtin_mul_overflow(embed, 2, &embed) ||
	    __builtin_add_overflow(blocks, embed, &total) || __builtin_add_overflow(total, d, &total))
		return -1;
	return total;
}
