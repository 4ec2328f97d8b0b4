/* runner/sweep_limits.h: the sweep format's limits on user-given sizes (sweep_limits.c). */
#ifndef BENCHDB_SWEEP_LIMITS_H
#define BENCHDB_SWEEP_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "params.h"

/* A sweep file's size and nesting, checked before libyaml builds its document. */
#define SWEEP_MAX_BYTES (1 << 20)
#define SWEEP_MAX_DEPTH 32
/* anchors (&name): libyaml's document loader compares each anchor and alias with every anchor
 * before it (90,000 anchors in 1 MiB took 20 s) */
#define SWEEP_MAX_ANCHORS 1000

/* The largest value an integer key (a parameter or a model field) may take; INT64_MAX for a key
 * with no limit of its own. */
int64_t sweep_value_max(const char *key);
/* 0, or -1 with msg filled when a tensor the case describes would exceed BD_MAX_TENSOR_BYTES. */
int sweep_case_sizes_check(const struct case_params *p, char *msg, size_t size);
/* Read a sweep file: a regular file (after symlinks; a directory, device or pipe is refused by
 * kind) of at most SWEEP_MAX_BYTES, read no further than that. *text is malloc'd and
 * nul-terminated, *len its length (the file may hold nul bytes). */
int sweep_file_read(const char *path, char **text, size_t *len, struct bd_error *err);
/* BD_EINVAL at the first list or mapping nested deeper than SWEEP_MAX_DEPTH, or at the anchor
 * beyond SWEEP_MAX_ANCHORS. */
int sweep_text_depth_check(const char *path, const char *text, struct bd_error *err);

#endif
