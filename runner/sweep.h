/* runner/sweep.h: sweep files (YAML, format in schemas/sweep-format.md) and their expansion.
 *
 * The files: sweep.c (the YAML walk), sweep_models.c and sweep_peers.c (`models:`, `peers:`),
 * sweep_values.c (one value checked and typed), sweep_expand.c (cases); the parameters' table is
 * common/params.c.
 * sweep_load() parses and validates the whole file; every error names file:line:col, the key and
 * the valid choices, and nothing is run or written. sweep_expand() multiplies axes into cases.
 */
#ifndef BENCHDB_SWEEP_H
#define BENCHDB_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "params.h"
#include "values.h"   /* parse_digits, parse_bytes */

/* A scalar as written in the sweep, kept as text with its position (for messages and for
 * the canonical JSON); typed values are in struct case_params. */
struct sweep_scalar {
	char *text;
	int line, column;
};

struct sweep_setting {          /* `key: value` (fixed) or `key: [v1, v2]` (axis) */
	char *key;
	struct sweep_scalar *values;
	size_t nvalues;
	int is_axis;
	int peer_param;             /* key is a peer's parameter (struct sweep_peer_param), its values
				     * checked against each peer of the benchmark that declares it */
	int line, column;
};

struct sweep_exclude {          /* one `exclude:` entry: a case matching all pairs is dropped */
	struct sweep_setting *pairs;
	size_t npairs;
	int line, column;
};

struct sweep_benchmark {
	enum suite_id suite;
	struct sweep_setting *settings;  /* fixed parameters and axes, defaults merged in */
	size_t nsettings;
	struct sweep_exclude *excludes;
	size_t nexcludes;
	int line, column;
};

/* A parameter of a peer's own, from the peer's `params:` (schemas/sweep-format.md, "Peers"). */
enum peer_param_type {
	PEER_PARAM_CHOICE,    /* one of values (names) */
	PEER_PARAM_BOOL,      /* true, false */
	PEER_PARAM_INT,       /* a decimal integer >= 0 */
	PEER_PARAM_TEXT,      /* a name */
};

struct sweep_peer_param {
	char *name;           /* lowercase letters, digits, '_'; never a built-in parameter's key */
	enum peer_param_type type;
	char **values;        /* PEER_PARAM_CHOICE: the valid values, canonical; NULL-terminated */
	size_t nvalues;
	char *def;            /* the default, canonical text */
	int line, column;     /* of the name */
};

/* A peer parameter's value in one case. */
struct case_peer_param {
	const struct sweep_peer_param *def;   /* into the case's peer */
	char value[64];                       /* canonical text */
};

/* An external implementation from `peers:` (schemas/sweep-format.md, "Peers"; the protocol it
 * speaks is schemas/peer-protocol.md). Its name is an impl of its suite in this sweep. */
struct sweep_peer {
	char *name;           /* the impl name cases use; never a built-in impl's name */
	char *command;        /* run as `/bin/sh -c command` in the sweep file's directory */
	char *suite;          /* attention, e2e or matmul */
	int64_t timeout_s;    /* per case, wall clock; SWEEP_PEER_TIMEOUT_S unless set */
	int persistent;       /* `persistent: true` (PEER_PERSISTENT): one process serves its cases
			       * in turn (protocol 2); `keep` (PEER_KEPT): and stays idle while
			       * other cases run, to the end of the invocation */
	int check_required;   /* `check: required`: an ok case needs a `check` line */
	int whole;            /* `interleave: false`: a persistent peer's cases are measured whole,
			       * one after the other, not paced in the rounds of their shape */
	struct sweep_peer_param *params;  /* `params:`, in file order */
	size_t nparams;
	int line, column;     /* of the name */
};

#define SWEEP_PEER_TIMEOUT_S 3600
enum { PEER_PERSISTENT = 1, PEER_KEPT = 2 };   /* struct sweep_peer's persistent, when set */

struct sweep {
	char *path;           /* as given */
	char *text;           /* the whole file */
	char hash[65];        /* sha256 of text */
	char *name;           /* `name:` or the file's basename without extension */
	struct sweep_benchmark *benchmarks;
	size_t nbenchmarks;
	struct model_config *models;  /* user presets from `models:` */
	size_t nmodels;
	struct sweep_peer *peers;     /* from `peers:`, in file order */
	size_t npeers;
};

struct sweep_case {
	size_t index;              /* 0-based order in the expanded sweep */
	size_t benchmark;          /* index into sweep.benchmarks */
	struct case_params params; /* typed, defaults applied */
	char *key;                 /* canonical case key: equal for the same benchmark across runs */
	char *params_json;         /* canonical JSON object of every parameter, keys sorted */
	char *name;                /* short label for progress lines and tables */
	const struct sweep_peer *peer; /* the peer that runs the case (into sweep.peers), NULL for a
				        * built-in impl */
	struct case_peer_param *peer_params; /* every parameter the peer declares, by name; malloc'd */
	size_t npeer_params;
};

struct sweep_cases {
	struct sweep_case *items;
	size_t n;
};

/* Parse and validate path. On error returns BD_EINVAL/BD_EIO with err (file, line, column set)
 * and *out NULL. The caller frees *out with sweep_free. Host out-of-memory stops the process
 * (common/xalloc.h), here and in sweep_expand. */
int sweep_load(const char *path, struct sweep **out, struct bd_error *err);
/* Same, from text already in memory (path is used for messages). */
int sweep_parse(const char *path, const char *text, struct sweep **out, struct bd_error *err);
void sweep_free(struct sweep *s);

/* Expand into cases in document order (benchmarks in order; within one, the cartesian product
 * with the first axis varying slowest). Excluded combinations are dropped. Value errors that
 * depend on the combination (head_dim not dividing d_model, ...) are reported here with the
 * position of the offending value. */
int sweep_expand(const struct sweep *s, struct sweep_cases *out, struct bd_error *err);
void sweep_cases_free(struct sweep_cases *c);

/* Built-in model presets (docs/design.md, "The e2e model"), NULL-terminated by an empty name. */
extern const struct model_config model_presets[];

#endif
