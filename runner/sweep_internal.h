/* runner/sweep_internal.h: what the sweep's files share — sweep.c (the YAML walk into struct
 * sweep, with sweep_models.c and sweep_peers.c: sweep_loader.h), sweep_values.c (one value
 * checked and typed) and sweep_expand.c (cases). Not for use outside runner/sweep*.c. */
#ifndef BENCHDB_SWEEP_INTERNAL_H
#define BENCHDB_SWEEP_INTERNAL_H

#include "strbuf.h"
#include "sweep.h"
#include "values.h"

/* A sweep that expands beyond this is almost certainly a mistake (and would take forever). */
#define SWEEP_MAX_CASES 100000
/* vocab_size of a user preset that does not give one (the built-in presets' vocabulary). */
#define SWEEP_DEFAULT_VOCAB_SIZE 10000

/* Where value errors go: the file, the error record, the user presets and peers, and a suffix
 * naming where a value came from when it is not where it is used (defaults). */
struct checker {
	const char *path;
	struct bd_error *err;
	const struct model_config *models;
	size_t nmodels;
	const struct sweep_peer *peers;
	size_t npeers;
	const char *where;
};

/* A typed scalar; canon is its canonical text (duplicates, excludes, keys, JSON). */
struct value {
	int64_t num;       /* integers, byte sizes, booleans (0/1), device/dtype/pass enums */
	const char *str;   /* impl/model/attention: a static or sweep-owned name */
	char canon[64];
};

/* BD_EINVAL at (line, column) of the sweep, with ck->where appended. */
int sweep_fail_at(const struct checker *ck, int line, int column, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "HEAD (valid: a, b, c); did you mean 'b'?" at v. */
int sweep_fail_choice(const struct checker *ck, const struct sweep_scalar *v, const char *head,
		      const char *const *names);

/* The row of a key a sweep may set (in some suite), or NULL. */
const struct param_def *sweep_param(const char *key);
int sweep_is_param(const struct param_def *d, const char *key);
/* m, n, k or size: matmul's shape, where size stands for all three. */
int sweep_is_matmul_shape(const struct param_def *d);
/* The keys a sweep may set in the suites of mask, NULL-terminated, in param_defs order; keys has
 * room for PARAM_MAX + 1. */
void sweep_param_keys(unsigned mask, const char **keys);
/* "a positive integer", "a dtype name", ... */
const char *sweep_kind_noun(enum value_kind k);
/* NULL-terminated union of the built-in impl names of every suite. */
void sweep_union_impls(const char *out[32]);

/* A built-in preset or one of ck's user presets, or NULL. */
const struct model_config *sweep_model_find(const struct checker *ck, const char *name);
/* 0 when the model can be built, else -1 and a message in msg. */
int sweep_model_check(const struct model_config *m, char *msg, size_t size);

/* Check and canonicalize text as a value of peer parameter d (sweep_peers.c): 0 with out, or -1
 * with why ("not one of its values", "expects true or false", ...). */
int sweep_peer_param_value(const struct sweep_peer_param *d, const char *text, char out[64],
			   char *why, size_t n);
/* peer's parameter called name, or NULL (peer may be NULL). */
const struct sweep_peer_param *sweep_peer_param_find(const struct sweep_peer *peer,
						     const char *name);

/* Strings seen so far, to find a repeat among n of them in linear time (a list or mapping of a
 * 1 MiB sweep holds 100,000 entries: comparing each with every earlier one took a minute). The
 * strings are the caller's and must outlive the set. */
struct sweep_seen {
	const char **texts;   /* open addressing, NULL: empty */
	size_t *index;
	size_t mask;
};
void sweep_seen_init(struct sweep_seen *set, size_t n);
/* The index given with an equal string added before, or -1 after adding text at index. */
long sweep_seen_add(struct sweep_seen *set, const char *text, size_t index);
/* The index given with an equal string, or -1 when there is none. */
long sweep_seen_find(const struct sweep_seen *set, const char *text);
void sweep_seen_free(struct sweep_seen *set);

/* Position of setting key in b, or -1. */
int sweep_setting_index(const struct sweep_benchmark *b, const char *key);

/* Check and type one scalar v of parameter p for suite (-1: for any suite that has the key). */
int sweep_value_parse(const struct checker *ck, const struct param_def *p, int suite,
		      const struct sweep_scalar *v, struct value *out);

#endif
