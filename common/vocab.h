/* common/vocab.h: the words every part of benchdb shares — devices, dtypes, passes, timed phases
 * and a case's status — as enums, each with its one spelling (name) and the way back (parse).
 * The spellings are what sweeps, the database, peers and reports write; db/, runner/, kernels/
 * and report/ all read them from here. */
#ifndef BENCHDB_VOCAB_H
#define BENCHDB_VOCAB_H

#include <stddef.h>

enum bd_device { DEVICE_CPU, DEVICE_CUDA, DEVICE_COUNT };
enum bd_dtype { DTYPE_FLOAT32, DTYPE_FLOAT16, DTYPE_BFLOAT16, DTYPE_COUNT };
enum bd_pass { PASS_FORWARD, PASS_BACKWARD, PASS_FORWARD_BACKWARD, PASS_TRAIN_STEP, PASS_COUNT };
/* Timed phases of one iteration (samples.phase). */
enum bd_phase { PHASE_FWD, PHASE_BWD, PHASE_OPT, PHASE_COUNT };
/* A case's outcome (docs/design.md, "Measurement"): who is at fault. Workloads return these; the runner stores
 * them (cases.status); reports read them back. Every status but ok comes with a reason. */
enum bd_status {
	STATUS_OK,
	STATUS_OOM,          /* it needs more memory than allowed */
	STATUS_ERROR,        /* our code or a peer failed, or validation failed */
	STATUS_UNSUPPORTED,  /* this machine, library or build cannot do it */
	STATUS_SKIPPED,      /* not run */
	STATUS_COUNT
};

const char *device_name(enum bd_device d);   /* "cpu", "cuda" */
const char *dtype_name(enum bd_dtype t);     /* "float32", "float16", "bfloat16" */
const char *pass_name(enum bd_pass p);       /* "forward", "backward", "forward_backward", "train_step" */
const char *phase_name(enum bd_phase p);     /* "fwd", "bwd", "opt" */
const char *status_name(enum bd_status s);   /* "ok", "oom", "error", "unsupported", "skipped" */
/* The value named s (exact spelling), or -1 when s is no such name (or NULL). */
int device_parse(const char *s);
int dtype_parse(const char *s);
int pass_parse(const char *s);
int phase_parse(const char *s);
int status_parse(const char *s);

/* Bytes of one element: 4 for float32, 2 for float16 and bfloat16. */
size_t dtype_size(enum bd_dtype t);
/* Bit mask of the phases a pass times: forward -> fwd; backward -> bwd; forward_backward -> fwd|bwd;
 * train_step -> fwd|bwd|opt. */
unsigned pass_phases(enum bd_pass p);

#endif
