/* common/params.h: one benchmark case's parameters (struct case_params, as the runner hands them
 * to a workload) and the one table that says, for each parameter, everything the rest of benchdb
 * does with it: its sweep key and the values it takes, the suites that have it, its default, its
 * place in struct case_params, its token in the case key, its peer environment variable, its
 * legend label, its report column and its typed column in the database.
 *
 * Adding a parameter is one row of param_defs (common/params.c) and a field of case_params; a
 * typed database column also needs a migration in schemas/ that adds it. */
#ifndef BENCHDB_PARAMS_H
#define BENCHDB_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "vocab.h"

/* struct case_params' iters for `iters: auto`: measure until the median is precise enough. */
#define ITERS_AUTO INT64_C(-1)

/* A transformer size (docs/design.md, "The e2e model"); presets small..2.7B or user-defined in the sweep. */
struct model_config {
	char name[32];
	int64_t d_model, d_ff, num_layers, num_heads, vocab_size;
};

/* Parameter count of the e2e model (docs/design.md): L(4d^2 + 3 d d_ff + 2d) + 2Vd + d; -1 on overflow. */
int64_t model_param_count(const struct model_config *m);

/* ---- suites ---------------------------------------------------------------------------------- */

enum suite_id { SUITE_ATTENTION, SUITE_E2E, SUITE_MATMUL, SUITE_COUNT };

#define SUITE_BIT(s) (1u << (s))
#define S_ATT SUITE_BIT(SUITE_ATTENTION)
#define S_E2E SUITE_BIT(SUITE_E2E)
#define S_MM SUITE_BIT(SUITE_MATMUL)
#define S_ALL (S_ATT | S_E2E | S_MM)

const char *suite_name(enum suite_id s);     /* "attention", "e2e", "matmul" */
int suite_parse(const char *s);               /* -1 when unknown */
/* Whether name (text from a database or a peer, which may name a suite this build does not know;
 * NULL: none) is suite s. */
int suite_is(const char *name, enum suite_id s);
/* Bit mask (1 << enum bd_pass) of the passes a suite accepts. */
unsigned suite_passes(enum suite_id s);

struct case_params {
	enum suite_id suite;
	char impl[32];         /* "naive", "flash", "sdpa", "onednn", "benchdb", ... */
	enum bd_device device;
	enum bd_dtype dtype;
	enum bd_pass pass;
	int64_t batch_size;

	/* attention: Q, K, V are (batch_size, heads, seq_len, head_dim) */
	int64_t heads, seq_len, head_dim;
	int causal;

	/* e2e */
	struct model_config model;
	int64_t context_length;
	char attention[16];    /* attention impl inside the model: "naive", "flash", "sdpa" */

	/* matmul: C(m,n) = A(m,k) B(k,n) */
	int64_t m, n, k;

	/* measurement */
	int64_t warmup, iters;  /* iters: measured iterations, or ITERS_AUTO (`iters: auto`) */
	/* iters: auto's stopping rule (runner/measure.c, schemas/sweep-format.md "iters: auto"): at
	 * least min_iters and at most max_iters measured iterations; in between, stop once the
	 * median's estimated relative standard error is <= target_rse, or once max_time seconds of
	 * measured time are spent. Meaningless (left at their defaults) for a fixed count. */
	int64_t min_iters, max_iters;
	double max_time, target_rse;
	uint64_t seed;
	int64_t mem_limit;     /* bytes the workload may allocate; 0 = no limit */
	int sync;              /* CUDA: synchronize before reading timers (default 1) */
	int tf32;              /* CUDA: float32 GEMMs on TF32 tensor cores (default 0) */
};

/* ---- the parameter table --------------------------------------------------------------------- */

/* What a sweep may write as the value (runner/sweep_values.c checks it and names the choices). */
enum value_kind {
	V_DERIVED,    /* not a sweep key: set from other parameters (the model's sizes) */
	V_IMPL,       /* an impl of the suite (kernels' names, or a peer of the sweep) */
	V_DEVICE,     /* cpu, cuda */
	V_DTYPE,      /* float32, float16, bfloat16 */
	V_PASS,       /* a pass the suite accepts */
	V_MODEL,      /* a built-in preset or one from `models:` */
	V_ATTENTION,  /* the attention impl inside the e2e model */
	V_POSITIVE,   /* decimal integer >= 1 */
	V_ITERS,      /* decimal integer >= 1, or auto */
	V_SECONDS,    /* decimal number > 0 (seconds) */
	V_FRACTION,   /* decimal number > 0 and < 1 */
	V_NONNEG,     /* decimal integer >= 0 */
	V_BOOL,       /* true, false */
	V_BYTES,      /* a byte size (parse_bytes); canonical text: the bytes as an integer */
	V_SUITE,      /* the benchmark's `suite:` (a structural key, not a parameter key) */
};

/* How a value is held in struct case_params (and so how it is written: text, integer, bool). */
enum param_type {
	PT_NONE,       /* held nowhere (matmul's size: sugar for m = n = k) */
	PT_TEXT,       /* char array of size bytes */
	PT_INT,        /* int64_t (or uint64_t: seed) */
	PT_ITERS,      /* int64_t, ITERS_AUTO written auto */
	PT_REAL,       /* double, written in the fewest digits that read back the same */
	PT_BOOL,       /* int 0/1, written true/false */
	PT_DEVICE,     /* enum bd_device, written by vocab.h's name */
	PT_DTYPE,
	PT_PASS,
	PT_SUITE,      /* enum suite_id, written by suite_name */
};

/* When a parameter is a token of the case key. */
enum key_rule {
	KEY_NO,             /* never (measurement settings: warm-up, iterations, seed, limit) */
	KEY_ALWAYS,         /* in every key of the suites that have it */
	KEY_UNLESS_DEFAULT, /* only when it differs from the default, so that keys made before it
			     * existed still match */
};

struct param_def {
	const char *key;        /* sweep key, case-key token, params JSON key; its peer environment
				 * variable is BENCHDB_ and the key in capitals (param_env_name) */
	enum value_kind kind;
	unsigned sweep;         /* S_* suites where a sweep may set it */
	unsigned required;      /* S_* suites where a sweep must set it */
	unsigned suites;        /* S_* suites whose cases have it: case key, params JSON, peer env */
	const char *defaults[SUITE_COUNT];  /* canonical text per suite; NULL: zero / empty */
	enum param_type type;   /* place in struct case_params: type, offset, size */
	size_t offset, size;
	enum key_rule in_key;
	int key_rank;           /* tokens of a case key are in ascending key_rank */
	/* Legend label (charts): prefix + value ("S" -> "S1024"; "" -> the bare value); booleans:
	 * label when true, label_off when false; NULL: "key=value". */
	const char *label, *label_off;
	int column_rank;        /* report tables: parameter columns in ascending rank; 0: none */
	unsigned column_suites; /* S_* suites whose tables show the column */
	const char *db_column;  /* typed column of table cases that holds it, NULL: only in params */
	/* A setting of iters: auto's stopping rule: a sweep may set it only where iters is auto, and
	 * it is in the params JSON and the peer environment only of cases whose iters is auto (so
	 * that a fixed-count case's JSON is what it always was). */
	int auto_only;
};

extern const struct param_def param_defs[];
extern const size_t param_count;
#define PARAM_MAX 48   /* param_count is at most this (for arrays of one entry per row) */

/* The row of key, or NULL. */
const struct param_def *param_find(const char *key);
/* "BENCHDB_" + key in capitals, into out. */
void param_env_name(const struct param_def *d, char *out, size_t size);

/* The canonical text of p's value of d (the case key's and the peer's form): integers in decimal,
 * booleans true/false, devices, dtypes and passes by name; "" for PT_NONE. */
void param_format(const struct case_params *p, const struct param_def *d, char out[64]);
/* Set p's value of d from canonical text. BD_EINVAL (a message naming the key and the text) when
 * text is not a value of d's type or does not fit. */
int param_set(struct case_params *p, const struct param_def *d, const char *text,
	      struct bd_error *err);
/* The built-in defaults of suite: every parameter's default (zero where it has none). */
void case_params_defaults(struct case_params *p, enum suite_id suite);
/* Whether d is written as a JSON string (text, device, dtype, pass) rather than a number/bool. */
int param_is_text(const struct param_def *d);
/* Whether case p has parameter d: d's suites hold p's, and d is not an auto_only setting of a
 * case with a fixed iteration count (what the params JSON and the peer environment hold). */
int param_applies(const struct case_params *p, const struct param_def *d);

/* ---- case keys --------------------------------------------------------------------------------
 * A case key is `name=value` tokens separated by single spaces, suite first, then the suite's
 * parameters with in_key != KEY_NO in key_rank order (schemas/sweep-format.md, "Case keys"). It is
 * equal for the same benchmark across runs; history and compare join on it. */

/* The case key of p (malloc'd). */
char *case_key_build(const struct case_params *p);
/* The rows a key of suite may have (in_key != KEY_NO), in key order, into rows (room for
 * PARAM_MAX); returns how many. */
size_t case_key_rows(enum suite_id suite, const struct param_def **rows);

/* One token of a key; pointers into the key (not NUL-terminated). */
struct key_token {
	const char *name, *value;
	size_t name_len, value_len;
	const struct param_def *def;   /* the row of name, NULL for a name this build does not know */
};
#define CASE_KEY_MAX_TOKENS 64

/* Split key into tokens (at most max). Names this build does not know are kept with def NULL
 * (keys of newer databases). BD_EINVAL when a token has no '=' or an empty name, a name is
 * repeated, or there are more than max tokens; the message quotes the token. */
int case_key_split(const char *key, struct key_token *t, size_t max, size_t *n,
		   struct bd_error *err);
/* Whether t is the token called name. */
int key_token_is(const struct key_token *t, const char *name);
/* The case a key describes: suite defaults, then every token's value. BD_EINVAL when the key
 * does not split, names no known suite, has a token this build or its suite does not know, or a
 * value that is not of its parameter's type. */
int case_key_parse(const char *key, struct case_params *p, struct bd_error *err);
/* The key without its token called name (malloc'd). Keys that do not split are copied whole. */
char *case_key_drop(const char *key, const char *name);

/* The canonical JSON of every parameter of p's suite (the suites mask), keys sorted, no spaces
 * (cases.params; malloc'd). */
char *case_params_json(const struct case_params *p);
/* The same with members of no row of the table besides (a peer's own parameters): extra sorted
 * by key, no key a row's; value written as a JSON string when is_text, else as it is. */
struct json_member {
	const char *key, *value;
	int is_text;
};
char *case_params_json_with(const struct case_params *p, const struct json_member *extra,
			    size_t nextra);

/* A token as a chart legend reads it ("S1024", "causal", "flash", "attn=sdpa"), appended to sb
 * after a space when sb is not empty. */
struct strbuf;
void key_token_label(struct strbuf *sb, const struct key_token *t);

/* ---- typed columns of table cases -------------------------------------------------------------
 * The common axes have typed columns beside the params JSON (schemas/001_init.sql): db_column of
 * the rows, and for e2e the model's attention shape (heads, seq_len, head_dim, causal). */

/* The typed columns parameters fill, each once, in param_defs order; at most max. Returns how
 * many. */
size_t param_db_columns(const char **names, size_t max);
/* p's value of typed column name as text (into out; booleans 0/1) or, when the column does not
 * apply to p's suite, NULL (SQL NULL). *is_text: 1 for a text column, 0 for an integer one. */
const char *param_db_value(const struct case_params *p, const char *name, char out[64],
			   int *is_text);

/* The report table's parameter columns for suite (NULL or unknown: the columns every suite has),
 * in column order, NULL-terminated; at most max - 1. Returns how many. */
size_t param_columns(const char *suite, const char **keys, size_t max);

#endif
