/* runner/peer.c: a case run by an external implementation (schemas/peer-protocol.md).
 *
 * The peer is `/bin/sh -c COMMAND`, started in its own process group in the sweep file's
 * directory, with the case's parameters in BENCHDB_* environment variables and stdin from
 * /dev/null. The runner reads its stdout (the protocol) and keeps the tail of its stderr until
 * it exits; on a timeout or an interrupt it stops the whole group (SIGTERM, then SIGKILL). A
 * small guardian process leads the group and kills it when the runner dies, however it dies.
 * Then peer_parse_output() validates the output against the case. Every outcome is a status in
 * struct case_result, as in measure.c.
 */
#include "peer.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "strbuf.h"
#include "workload.h"

extern char **environ;

/* How long a peer may take to exit after SIGTERM (timeout, interrupt) before SIGKILL. */
#define PEER_TERM_GRACE_NS 2000000000LL
/* How long the pipes are still drained after the peer exited (a straggler may hold them). */
#define PEER_DRAIN_NS 1000000000LL
/* The longest wait in one poll(), so that an interrupt is seen promptly. */
#define PEER_POLL_MS 100
/* Exit status of the guardian when it could not set the peer up (the reason is on stderr). */
#define PEER_EXIT_SETUP 125

/* ---- the protocol ---------------------------------------------------------------------------- */

enum { MEM_PARAM, MEM_PEAK_FWD, MEM_PEAK_BWD, MEM_PEAK, MEM_COUNT };
static const char *const memory_kinds[MEM_COUNT] = {"param", "peak_fwd", "peak_bwd", "peak"};

/* One (iteration, phase) of the case: its nanoseconds and the line that gave it (0: none). */
struct slot {
	int64_t ns;
	size_t line;
};

/* out->error = "line N: 'LINE': MESSAGE", the line shortened and made printable. */
static int line_fail(struct peer_output *out, size_t lineno, const char *line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int line_fail(struct peer_output *out, size_t lineno, const char *line, const char *fmt, ...)
{
	enum { QUOTE_MAX = 60 };
	char quoted[QUOTE_MAX + 4], msg[384];
	size_t n = 0, len = strlen(line);
	for (; n < len && n < QUOTE_MAX; n++)
		quoted[n] = isprint((unsigned char)line[n]) ? line[n] : '?';
	if (len > QUOTE_MAX)
		n += (size_t)snprintf(quoted + n, sizeof(quoted) - n, "...");
	quoted[n] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(out->error, sizeof(out->error), "line %zu: '%s': %s", lineno, quoted, msg);
	return BD_EINVAL;
}

/* "fwd, bwd": the phases a pass times. */
static void phase_list(unsigned phases, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		if (phases & (1u << ph))
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? ", " : "",
					      phase_name((enum bd_phase)ph));
}

/* What one line may look like, checked against the case; the parse state it updates. */
struct parser {
	struct peer_output *out;
	const struct case_params *p;
	int64_t total;             /* warmup + iters */
	unsigned phases;           /* pass_phases(p->pass) */
	int have_header;
	struct slot *slots;        /* total x PHASE_COUNT, iteration-major */
	size_t mem_line[MEM_COUNT];
	size_t info_json_line;     /* the `info {...}` line, 0 while there is none */
	size_t lineno;
};

static int parse_sample(struct parser *P, const char *line, char **tok, size_t ntok)
{
	struct peer_output *out = P->out;
	char timed[32];
	int64_t iter = 0, ns = 0;
	if (ntok != 4)
		return line_fail(out, P->lineno, line, "a sample line is 'sample ITER PHASE NS'");
	int rc = parse_digits(tok[1], &iter);
	if (rc)
		return line_fail(out, P->lineno, line, "ITER must be a non-negative integer, got '%s'",
				 tok[1]);
	if (iter >= P->total)
		return line_fail(out, P->lineno, line, "iteration %s is beyond the case's %" PRId64
				 " (warmup %" PRId64 " + iters %" PRId64 ", counted from 0)", tok[1],
				 P->total, P->p->warmup, P->p->iters);
	int ph = phase_parse(tok[2]);
	phase_list(P->phases, timed, sizeof(timed));
	if (ph < 0)
		return line_fail(out, P->lineno, line, "unknown phase '%s' (valid: fwd, bwd, opt)", tok[2]);
	if (!(P->phases & (1u << ph)))
		return line_fail(out, P->lineno, line, "phase '%s' is not timed by pass %s (timed: %s)",
				 tok[2], pass_name(P->p->pass), timed);
	rc = parse_digits(tok[3], &ns);
	if (rc == -2)
		return line_fail(out, P->lineno, line, "NS %s is too large", tok[3]);
	if (rc || ns <= 0)
		return line_fail(out, P->lineno, line, "NS must be a positive integer of nanoseconds, "
				 "got '%s'", tok[3]);
	struct slot *s = &P->slots[iter * PHASE_COUNT + ph];
	if (s->line)
		return line_fail(out, P->lineno, line, "a second sample of iteration %" PRId64
				 " phase %s (the first is on line %zu)", iter, tok[2], s->line);
	s->ns = ns;
	s->line = P->lineno;
	return 0;
}

static int parse_memory(struct parser *P, const char *line, char **tok, size_t ntok)
{
	struct peer_output *out = P->out;
	int64_t *dest[MEM_COUNT] = {&out->param_bytes, &out->peak_fwd_bytes, &out->peak_bwd_bytes,
				    &out->peak_bytes};
	int64_t bytes;
	if (ntok != 3)
		return line_fail(out, P->lineno, line, "a memory line is 'memory KIND BYTES'");
	int k = 0;
	while (k < MEM_COUNT && strcmp(memory_kinds[k], tok[1]))
		k++;
	if (k == MEM_COUNT)
		return line_fail(out, P->lineno, line, "unknown memory kind '%s' (valid: param, peak_fwd, "
				 "peak_bwd, peak)", tok[1]);
	if (parse_digits(tok[2], &bytes))
		return line_fail(out, P->lineno, line, "BYTES must be a non-negative integer, got '%s'",
				 tok[2]);
	if (P->mem_line[k])
		return line_fail(out, P->lineno, line, "memory %s is given twice (first on line %zu)",
				 tok[1], P->mem_line[k]);
	P->mem_line[k] = P->lineno;
	*dest[k] = bytes;
	return 0;
}

/* rest: the line from the reason's first character (NULL or "" when there is none). */
static int parse_status(struct parser *P, const char *line, char **tok, size_t ntok,
			const char *rest)
{
	struct peer_output *out = P->out;
	if (ntok < 2)
		return line_fail(out, P->lineno, line, "a status line is 'status ok' or 'status "
				 "unsupported|oom|error REASON'");
	int status = status_parse(tok[1]);   /* a peer reports anything but skipped */
	if (status < 0 || status == STATUS_SKIPPED)
		return line_fail(out, P->lineno, line, "unknown status '%s' (valid: ok, unsupported, oom, "
				 "error)", tok[1]);
	if (status == STATUS_OK && ntok != 2)
		return line_fail(out, P->lineno, line, "'status ok' takes no reason");
	out->status = (enum bd_status)status;
	out->status_line = P->lineno;
	if (status != STATUS_OK) {
		if (rest && *rest)
			snprintf(out->reason, sizeof(out->reason), "%s", rest);
		else
			snprintf(out->reason, sizeof(out->reason), "the peer reported %s without a reason",
				 tok[1]);
	}
	return 0;
}

/* ---- `info {JSON}`: one JSON object (RFC 8259), checked here and stored as it is ----------- */

/* How deep arrays and objects may nest in an info object. */
#define INFO_JSON_DEPTH 16

struct json_scan {
	const char *p, *end;
	const char *why;   /* the first thing wrong, NULL while nothing is */
	int depth;
};

static int json_fail(struct json_scan *J, const char *why)
{
	if (!J->why)
		J->why = why;
	return -1;
}

static void json_skip_space(struct json_scan *J)
{
	while (J->p < J->end && (*J->p == ' ' || *J->p == '\t' || *J->p == '\n' || *J->p == '\r'))
		J->p++;
}

/* One UTF-8 sequence from a lead byte >= 0x80 (no overlong forms, no surrogates, <= U+10FFFF). */
static int json_utf8(struct json_scan *J)
{
	const unsigned char *u = (const unsigned char *)J->p;
	size_t left = (size_t)(J->end - J->p), len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		len = 2;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		len = 3, lo = u[0] == 0xe0 ? 0xa0 : 0x80, hi = u[0] == 0xed ? 0x9f : 0xbf;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		len = 4, lo = u[0] == 0xf0 ? 0x90 : 0x80, hi = u[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return json_fail(J, "a string is not valid UTF-8");
	if (left < len || u[1] < lo || u[1] > hi)
		return json_fail(J, "a string is not valid UTF-8");
	for (size_t i = 2; i < len; i++)
		if (u[i] < 0x80 || u[i] > 0xbf)
			return json_fail(J, "a string is not valid UTF-8");
	J->p += len;
	return 0;
}

static int json_string(struct json_scan *J)
{
	if (J->p >= J->end || *J->p != '"')
		return json_fail(J, "expected a string");
	for (J->p++; J->p < J->end;) {
		unsigned char ch = (unsigned char)*J->p;
		if (ch == '"') {
			J->p++;
			return 0;
		}
		if (ch < 0x20)
			return json_fail(J, "a control character in a string (escape it)");
		if (ch >= 0x80) {
			if (json_utf8(J))
				return -1;
			continue;
		}
		J->p++;
		if (ch != '\\')
			continue;
		if (J->p >= J->end)
			break;
		if (*J->p == 'u') {
			for (int i = 1; i <= 4; i++)
				if (J->p + i >= J->end || !isxdigit((unsigned char)J->p[i]))
					return json_fail(J, "\\u takes four hex digits");
			J->p += 5;
		} else if (*J->p && strchr("\"\\/bfnrt", *J->p)) {
			J->p++;
		} else {
			return json_fail(J, "an unknown escape in a string");
		}
	}
	return json_fail(J, "a string is not closed");
}

static int json_digits(struct json_scan *J)
{
	const char *start = J->p;
	while (J->p < J->end && isdigit((unsigned char)*J->p))
		J->p++;
	return J->p > start ? 0 : json_fail(J, "a number needs digits");
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int json_number(struct json_scan *J)
{
	if (J->p < J->end && *J->p == '-')
		J->p++;
	if (J->p < J->end && *J->p == '0')
		J->p++;
	else if (json_digits(J))
		return -1;
	if (J->p < J->end && *J->p == '.' && (J->p++, json_digits(J)))
		return -1;
	if (J->p < J->end && (*J->p == 'e' || *J->p == 'E')) {
		J->p++;
		if (J->p < J->end && (*J->p == '+' || *J->p == '-'))
			J->p++;
		if (json_digits(J))
			return -1;
	}
	return 0;
}

static int json_value(struct json_scan *J);

/* An object or an array; J->p is on its opening bracket. */
static int json_container(struct json_scan *J)
{
	char close = *J->p == '{' ? '}' : ']';
	if (++J->depth > INFO_JSON_DEPTH)
		return json_fail(J, "nested too deeply");
	J->p++;
	json_skip_space(J);
	if (J->p < J->end && *J->p == close) {
		J->p++;
		J->depth--;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			json_skip_space(J);
			if (json_string(J))
				return json_fail(J, "an object's key must be a string");
			json_skip_space(J);
			if (J->p >= J->end || *J->p != ':')
				return json_fail(J, "expected ':' after a key");
			J->p++;
		}
		if (json_value(J))
			return -1;
		json_skip_space(J);
		if (J->p < J->end && *J->p == ',') {
			J->p++;
			continue;
		}
		if (J->p < J->end && *J->p == close)
			break;
		return json_fail(J, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
	J->p++;
	J->depth--;
	return 0;
}

static int json_word(struct json_scan *J, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(J->end - J->p) < n || memcmp(J->p, word, n))
		return json_fail(J, "expected a value");
	J->p += n;
	return 0;
}

static int json_value(struct json_scan *J)
{
	json_skip_space(J);
	if (J->p >= J->end)
		return json_fail(J, "a value is missing");
	switch (*J->p) {
	case '{':
	case '[':
		return json_container(J);
	case '"':
		return json_string(J);
	case 't':
		return json_word(J, "true");
	case 'f':
		return json_word(J, "false");
	case 'n':
		return json_word(J, "null");
	default:
		if (*J->p == '-' || isdigit((unsigned char)*J->p))
			return json_number(J);
		return json_fail(J, "expected a value");
	}
}

/* `info {...}`: json is the line from its '{' on (trimmed). One object, nothing after it, at
 * most PEER_INFO_MAX - 1 bytes, and one such line per output; kept in out->impl_info. */
static int parse_info_json(struct parser *P, const char *line, const char *json)
{
	struct peer_output *out = P->out;
	size_t len = strlen(json);
	if (P->info_json_line)
		return line_fail(out, P->lineno, line, "a second info object (the first is on line %zu)",
				 P->info_json_line);
	if (len >= sizeof(out->impl_info))
		return line_fail(out, P->lineno, line, "the info object has %zu bytes, more than %zu",
				 len, sizeof(out->impl_info) - 1);
	struct json_scan J = {.p = json, .end = json + len};
	if (!json_container(&J) && J.p != J.end)
		json_fail(&J, "something follows the object");
	if (J.why)
		return line_fail(out, P->lineno, line, "the info object is not valid JSON at byte %zu: %s",
				 (size_t)(J.p - json) + 1, J.why);
	memcpy(out->impl_info, json, len + 1);
	P->info_json_line = P->lineno;
	return 0;
}

/* One line (trimmed, not blank, not a comment). */
static int parse_line(struct parser *P, char *line)
{
	enum { TOKENS_MAX = 5 };
	struct peer_output *out = P->out;
	char *copy = strdup(line), *tok[TOKENS_MAX], *save = NULL;
	const char *rest = NULL;
	size_t ntok = 0;
	int rc = 0;

	if (!copy)
		return line_fail(out, P->lineno, line, "out of memory");
	/* Tokens of copy; rest: where the third token starts in line (a status reason). */
	for (char *t = strtok_r(copy, " \t", &save); t && ntok < TOKENS_MAX;
	     t = strtok_r(NULL, " \t", &save)) {
		if (ntok == 2)
			rest = line + (t - copy);
		tok[ntok++] = t;
	}
	if (!P->have_header) {
		int64_t version;
		if (strcmp(tok[0], "benchdb-peer") || ntok != 2)
			rc = line_fail(out, P->lineno, line, "expected 'benchdb-peer %d' as the first line",
				       PEER_PROTOCOL_VERSION);
		else if (parse_digits(tok[1], &version))
			rc = line_fail(out, P->lineno, line, "the protocol version must be an integer");
		else if (version != PEER_PROTOCOL_VERSION)
			rc = line_fail(out, P->lineno, line, "protocol version %s is not supported (this "
				       "runner speaks %d)", tok[1], PEER_PROTOCOL_VERSION);
		P->have_header = !rc;
	} else if (out->status_line) {
		rc = line_fail(out, P->lineno, line, "nothing may follow the status line (line %d)",
			       out->status_line);
	} else if (!strcmp(tok[0], "sample")) {
		rc = parse_sample(P, line, tok, ntok);
	} else if (!strcmp(tok[0], "memory")) {
		rc = parse_memory(P, line, tok, ntok);
	} else if (!strcmp(tok[0], "status")) {
		rc = parse_status(P, line, tok, ntok, ntok > 2 ? rest : NULL);
	} else if (!strcmp(tok[0], "info") && ntok > 1 && tok[1][0] == '{') {
		rc = parse_info_json(P, line, line + (tok[1] - copy));
	} else if (!strcmp(tok[0], "info")) {
		if (ntok < 2)
			rc = line_fail(out, P->lineno, line, "an info line is 'info KEY VALUE...'");
		else
			out->ninfo++;
	} else if (!strcmp(tok[0], "benchdb-peer")) {
		rc = line_fail(out, P->lineno, line, "a second header line");
	} else {
		rc = line_fail(out, P->lineno, line, "unknown line kind '%s' (valid: info, sample, "
			       "memory, status; '#' starts a comment)", tok[0]);
	}
	free(copy);
	return rc;
}

/* Every sample of the case is there: move them into out->samples, iteration-major. */
static int collect_samples(struct parser *P)
{
	struct peer_output *out = P->out;
	size_t want = 0, have = 0;
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		want += (P->phases >> ph) & 1;
	want *= (size_t)P->total;
	for (size_t i = 0; i < (size_t)P->total * PHASE_COUNT; i++)
		have += P->slots[i].line != 0;
	for (int64_t it = 0; it < P->total; it++) {
		for (int ph = 0; ph < PHASE_COUNT; ph++) {
			if ((P->phases & (1u << ph)) && !P->slots[it * PHASE_COUNT + ph].line) {
				snprintf(out->error, sizeof(out->error),
					 "'status ok' (line %d) but the sample of iteration %" PRId64 " phase %s "
					 "is missing (%zu of %zu samples given)", out->status_line, it,
					 phase_name((enum bd_phase)ph), have, want);
				return BD_EINVAL;
			}
		}
	}
	if (!(out->samples = calloc(want ? want : 1, sizeof(*out->samples)))) {
		snprintf(out->error, sizeof(out->error), "out of memory for %zu samples", want);
		return BD_ENOMEM;
	}
	for (int64_t it = 0; it < P->total; it++)
		for (int ph = 0; ph < PHASE_COUNT; ph++)
			if (P->phases & (1u << ph))
				out->samples[out->nsamples++] = (struct sample){
					.iter = (int32_t)it, .phase = ph,
					.ns = P->slots[it * PHASE_COUNT + ph].ns};
	return 0;
}

int peer_parse_output(const char *text, size_t len, const struct case_params *p,
		      struct peer_output *out)
{
	struct parser P = {.out = out, .p = p};
	char *line = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->param_bytes = out->peak_fwd_bytes = out->peak_bwd_bytes = out->peak_bytes = -1;
	P.phases = pass_phases(p->pass);
	/* the sample grid; iterations are stored as int32 */
	if (p->warmup < 0 || p->iters < 1 || p->warmup > INT32_MAX - p->iters ||
	    (uint64_t)(p->warmup + p->iters) > SIZE_MAX / PHASE_COUNT / sizeof(struct slot)) {
		snprintf(out->error, sizeof(out->error), "the case's warmup %" PRId64 " and iters %" PRId64
			 " are out of range", p->warmup, p->iters);
		return BD_EINVAL;
	}
	P.total = p->warmup + p->iters;
	if (!(P.slots = calloc((size_t)P.total * PHASE_COUNT, sizeof(*P.slots))) ||
	    !(line = malloc(len + 1))) {
		snprintf(out->error, sizeof(out->error), "out of memory for %" PRId64 " iterations",
			 P.total);
		rc = BD_ENOMEM;
		goto done;
	}

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
		P.lineno++;
		memcpy(line, text + at, n);
		line[n] = '\0';
		at = end + 1;
		if (strlen(line) != n) {
			rc = line_fail(out, P.lineno, line, "the line contains a nul byte");
			goto done;
		}
		while (n && isspace((unsigned char)line[n - 1]))   /* also a CR of CRLF */
			line[--n] = '\0';
		char *start = line;
		while (isspace((unsigned char)*start))
			start++;
		if (!*start || *start == '#')
			continue;
		if ((rc = parse_line(&P, start)))
			goto done;
	}
	if (!P.have_header) {
		out->truncated = 1;
		snprintf(out->error, sizeof(out->error), "no output (expected 'benchdb-peer %d' as the "
			 "first line)", PEER_PROTOCOL_VERSION);
		rc = BD_EINVAL;
	} else if (!out->status_line) {
		out->truncated = 1;
		snprintf(out->error, sizeof(out->error), "the output ends without a status line (after "
			 "line %zu)", P.lineno);
		rc = BD_EINVAL;
	} else if (out->status == STATUS_OK) {
		rc = collect_samples(&P);
	}
done:
	if (rc) {
		free(out->samples);
		out->samples = NULL;
		out->nsamples = 0;
	}
	free(line);
	free(P.slots);
	return rc;
}

void peer_output_free(struct peer_output *out)
{
	if (!out)
		return;
	free(out->samples);
	out->samples = NULL;
	out->nsamples = 0;
}

/* ---- the environment ------------------------------------------------------------------------- */

/* The variables the runner sets besides the parameters' own (param_env_name of every row). */
static const char *const env_extra[] = {
	"BENCHDB_PEER_PROTOCOL", "BENCHDB_PARAMS", "BENCHDB_PHASES", NULL,
};

/* Whether the environment entry var ("NAME=VALUE") is one the runner sets, for any suite;
 * inherited ones of these names are dropped. */
static int env_is_ours(const char *var)
{
	size_t klen = strcspn(var, "=");
	for (size_t i = 0; env_extra[i]; i++)
		if (strlen(env_extra[i]) == klen && !strncmp(env_extra[i], var, klen))
			return 1;
	for (size_t i = 0; i < param_count; i++) {
		char name[64];
		param_env_name(&param_defs[i], name, sizeof(name));
		if (param_defs[i].suites && strlen(name) == klen && !strncmp(name, var, klen))
			return 1;
	}
	return 0;
}

struct env {
	char **vars;   /* NULL-terminated, each "NAME=VALUE" malloc'd */
	size_t n, cap;
	int failed;    /* an allocation failed */
};

static void env_put(struct env *e, char *var)
{
	if (!var) {
		e->failed = 1;
		return;
	}
	if (e->n + 2 > e->cap) {
		size_t want = e->cap ? e->cap * 2 : 64;
		char **vars = realloc(e->vars, want * sizeof(*vars));
		if (!vars) {
			free(var);
			e->failed = 1;
			return;
		}
		e->vars = vars;
		e->cap = want;
	}
	e->vars[e->n++] = var;
	e->vars[e->n] = NULL;
}

static void env_setf(struct env *e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void env_setf(struct env *e, const char *name, const char *fmt, ...)
{
	char *value = NULL, *var = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&value, fmt, ap);
	va_end(ap);
	if (n < 0 || asprintf(&var, "%s=%s", name, value) < 0)
		var = NULL;
	if (n >= 0)
		free(value);
	env_put(e, var);
}

static void env_free(struct env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->vars[i]);
	free(e->vars);
}

/* The runner's environment without the BENCHDB_* names the runner sets, plus the case's
 * parameters: every parameter of its suite as BENCHDB_<KEY> in canonical text
 * (schemas/peer-protocol.md). */
static int env_build(const struct sweep_case *c, struct env *e)
{
	const struct case_params *p = &c->params;
	char phases[32];
	for (char **v = environ; v && *v; v++)
		if (!env_is_ours(*v))
			env_put(e, strdup(*v));
	phase_list(pass_phases(p->pass), phases, sizeof(phases));
	for (char *s = phases; (s = strstr(s, ", "));)   /* "fwd bwd opt" for shell loops */
		memmove(s, s + 1, strlen(s + 1) + 1);
	env_setf(e, "BENCHDB_PEER_PROTOCOL", "%d", PEER_PROTOCOL_VERSION);
	env_setf(e, "BENCHDB_PARAMS", "%s", c->params_json);
	env_setf(e, "BENCHDB_PHASES", "%s", phases);
	for (size_t i = 0; i < param_count; i++) {
		const struct param_def *d = &param_defs[i];
		char name[64], value[64];
		if (!param_applies(p, d))
			continue;
		param_env_name(d, name, sizeof(name));
		param_format(p, d, value);
		env_setf(e, name, "%s", value);
	}
	return e->failed ? BD_ENOMEM : 0;
}

/* ---- the process ----------------------------------------------------------------------------- */

struct peer_run {
	struct strbuf out;                  /* stdout, whole */
	char err[PEER_STDERR_TAIL];         /* the last bytes of stderr */
	size_t err_len;
	int wstatus;                        /* waitpid's, valid when exited */
	int exited, timed_out, interrupted, overflow;
	char start_error[256];              /* why the peer could not be started */
	size_t scanned;                     /* stdout scanned for progress up to here */
	int64_t iters_seen;
};

static void tail_add(struct peer_run *r, const char *buf, size_t n)
{
	if (n >= PEER_STDERR_TAIL) {
		memcpy(r->err, buf + n - PEER_STDERR_TAIL, PEER_STDERR_TAIL);
		r->err_len = PEER_STDERR_TAIL;
		return;
	}
	size_t keep = r->err_len + n > PEER_STDERR_TAIL ? PEER_STDERR_TAIL - n : r->err_len;
	memmove(r->err, r->err + r->err_len - keep, keep);
	memcpy(r->err + keep, buf, n);
	r->err_len = keep + n;
}

/* Report progress from the sample lines that arrived since the last call. */
static void scan_progress(struct peer_run *r, int64_t total,
			  void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const char *text = sb_str(&r->out);
	for (;;) {
		const char *nl = memchr(text + r->scanned, '\n', r->out.len - r->scanned);
		if (!nl)
			break;
		const char *line = text + r->scanned;
		r->scanned = (size_t)(nl - text) + 1;
		if (strncmp(line, "sample ", 7))
			continue;
		char *end;
		long long it = strtoll(line + 7, &end, 10);
		if (end != line + 7 && it >= 0 && it < total && it + 1 > r->iters_seen) {
			r->iters_seen = it + 1;
			if (on_iteration)
				on_iteration(ctx, r->iters_seen, total);
		}
	}
}

/* 1 when the child has exited (it stays a zombie, so its process group id stays reserved). */
static int child_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno != EINTR;
	return si.si_pid == pid;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	nanosleep(&ts, NULL);
}

/* Stop the peer's whole process group: SIGTERM, a grace period, SIGKILL. */
static void stop_group(pid_t pid)
{
	if (kill(-pid, SIGTERM) < 0)
		kill(pid, SIGTERM);
	int64_t t0 = now_ns();
	while (!child_exited(pid) && now_ns() - t0 < PEER_TERM_GRACE_NS)
		sleep_ns(10000000);
	if (kill(-pid, SIGKILL) < 0)
		kill(pid, SIGKILL);
}

/* Between fork and exec (the runner may have threads): async-signal-safe calls only. */

static void close_from(int first)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)first, ~0u, 0u) == 0)
		return;
#endif
	for (int fd = first; fd < 4096; fd++)
		close(fd);
}

static void say(const char *s)
{
	ssize_t w = write(STDERR_FILENO, s, strlen(s));
	(void)w;
}

/* The peer: `/bin/sh -c command` with the pipes as stdout and stderr, in dir. */
static void __attribute__((noreturn)) peer_exec(const char *command, const char *dir, char **envp,
						int null_fd, int out_fd, int err_fd)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)command, NULL};
	sigset_t none;
	if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		_exit(PEER_EXIT_SETUP);
	close_from(3);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir(dir) < 0) {
		say("benchdb: cannot enter the sweep file's directory: ");
		say(dir);
		say("\n");
		_exit(126);
	}
	execve("/bin/sh", argv, envp);
	say("benchdb: cannot run /bin/sh\n");
	_exit(127);
}

/* SIGHUP in the guardian: its runner died. */
static void guardian_orphaned(int sig)
{
	(void)sig;
	kill(0, SIGKILL);   /* the whole peer group, the guardian included */
}

/*
 * The runner's child: the guardian of the peer's process group. It leads the group, runs the peer
 * in it and ends as the peer ended (same exit status or signal). When the runner dies, even by
 * SIGKILL, the kernel sends the guardian SIGHUP (PR_SET_PDEATHSIG) and it kills the whole group:
 * no peer process outlives its runner. (The peer's shell itself cannot be the child that gets the
 * parent-death signal: whatever it starts would not.)
 */
static void __attribute__((noreturn)) guardian(const char *command, const char *dir, char **envp,
					       int null_fd, int out_fd, int err_fd, pid_t runner)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (setpgid(0, 0) < 0 || getpgrp() != getpid()) {   /* kill(0, ...) must be the peer's group */
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot give the peer a process group of its own\n");
		_exit(PEER_EXIT_SETUP);
	}
	sa.sa_handler = SIG_IGN;            /* the peer gets these itself (the group is signalled) */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = guardian_orphaned;
	sigaction(SIGHUP, &sa, NULL);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGHUP);
#endif
	if (getppid() != runner)            /* it died before prctl */
		kill(0, SIGKILL);
	pid_t pid = fork();
	if (pid == 0)
		peer_exec(command, dir, envp, null_fd, out_fd, err_fd);
	if (pid < 0) {
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot start the peer (fork failed)\n");
		_exit(PEER_EXIT_SETUP);
	}
	close_from(0);                      /* the pipes close when the peer's ends do */
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(PEER_EXIT_SETUP);
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	kill(getpid(), sig);
	_exit(128 + sig);
}

/* Start the peer and read it until it exits, times out, overflows or the runner is
 * interrupted; the process group is gone and the child reaped when this returns. */
static void peer_run(const struct sweep_peer *peer, const char *dir, char **envp, int64_t total,
		     struct peer_run *r, void (*on_iteration)(void *ctx, int64_t iter, int64_t total),
		     void *ctx)
{
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, null_fd = -1;
	pid_t pid = -1;
	char buf[65536];

	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0 ||
	    (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(r->start_error, sizeof(r->start_error), "%s", strerror(errno));
		goto done;
	}
	pid_t parent = getpid();
	fflush(NULL);
	if ((pid = fork()) < 0) {
		snprintf(r->start_error, sizeof(r->start_error), "fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0)
		guardian(peer->command, dir, envp, null_fd, out_pipe[1], err_pipe[1], parent);
	setpgid(pid, pid);   /* also in the guardian: whichever runs first */
	close(out_pipe[1]);
	close(err_pipe[1]);
	out_pipe[1] = err_pipe[1] = -1;
	fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);

	int64_t start = now_ns(), deadline = start + peer->timeout_s * 1000000000LL, exit_seen = 0;
	int fds[2] = {out_pipe[0], err_pipe[0]};
	for (;;) {
		int64_t now = now_ns();
		if (measure_interrupted) {
			r->interrupted = 1;
			break;
		}
		if (!exit_seen && now >= deadline) {
			r->timed_out = 1;
			break;
		}
		if (!exit_seen && child_exited(pid)) {
			exit_seen = now;
			kill(-pid, SIGKILL);   /* stragglers it left in its group */
		}
		if (fds[0] < 0 && fds[1] < 0 && exit_seen)
			break;
		if (exit_seen && now - exit_seen > PEER_DRAIN_NS)
			break;
		struct pollfd pfd[2];
		nfds_t n = 0;
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				pfd[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		int64_t wait_ms = (deadline - now) / 1000000 + 1;
		if (wait_ms > PEER_POLL_MS || exit_seen)
			wait_ms = exit_seen ? 10 : PEER_POLL_MS;
		if (n == 0) {
			sleep_ns(wait_ms * 1000000);
			continue;
		}
		if (poll(pfd, n, (int)wait_ms) < 0 && errno != EINTR)
			sleep_ns(wait_ms * 1000000);
		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0)
				continue;
			ssize_t got = read(fds[i], buf, sizeof(buf));
			if (got > 0 && i == 0) {
				sb_addn(&r->out, buf, (size_t)got);
				scan_progress(r, total, on_iteration, ctx);
			} else if (got > 0) {
				tail_add(r, buf, (size_t)got);
			} else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
		if (r->out.len > PEER_STDOUT_MAX) {
			r->overflow = 1;
			break;
		}
	}
	if (r->timed_out || r->interrupted || r->overflow)
		stop_group(pid);
	else if (!exit_seen)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &r->wstatus, 0) < 0 && errno == EINTR)
		;
	r->exited = 1;
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	out_pipe[0] = err_pipe[0] = -1;
done:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	if (null_fd >= 0)
		close(null_fd);
}

/* ---- the case -------------------------------------------------------------------------------- */

/* peer.h */
void peer_figures(const struct case_params *p, struct wl_figures *f)
{
	const struct workload *any = NULL, *same = NULL;
	for (const struct workload *const *w = workloads; *w; w++) {
		if (!suite_is((*w)->suite, p->suite) || !(*w)->figures)
			continue;
		if (!any)
			any = *w;
		if (!same && (*w)->device == p->device)
			same = *w;
	}
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		f->flops[ph] = f->bytes[ph] = -1;
	f->param_bytes = f->param_count = -1;
	if (same || any)
		(same ? same : any)->figures(p, f);
}

/* The directory of the sweep file (the peer's working directory). */
static char *sweep_dir(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* The stderr tail as one line ("a | b | c"), control characters as spaces, into out. */
static size_t stderr_line(const char *err, size_t len, char *out, size_t size)
{
	size_t n = 0;
	int at_line_start = 1;
	for (size_t i = 0; i < len && n + 4 < size; i++) {
		unsigned char ch = (unsigned char)err[i];
		if (ch == '\n' || ch == '\r') {
			at_line_start = 1;
			continue;
		}
		if (at_line_start && (ch == ' ' || ch == '\t'))
			continue;
		if (at_line_start && n) {
			memcpy(out + n, " | ", 3);
			n += 3;
		}
		at_line_start = 0;
		out[n++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return n;
}

/* res->reason = msg, then as much of the end of the stderr tail as fits. */
static void fail_with_stderr(struct case_result *res, const struct peer_run *r, const char *msg)
{
	static const char sep[] = "; stderr: ";
	char tail[PEER_STDERR_TAIL * 2];
	size_t n = stderr_line(r->err, r->err_len, tail, sizeof(tail));
	size_t room = sizeof(res->reason) - 1, mlen = strlen(msg);
	res->status = STATUS_ERROR;
	if (!n || mlen + sizeof(sep) + 16 > room) {
		snprintf(res->reason, sizeof(res->reason), "%s", msg);
		return;
	}
	size_t avail = room - mlen - (sizeof(sep) - 1);
	const char *from = tail, *dots = "";
	if (n > avail) {
		from = tail + n - (avail - 3);
		while ((*from & 0xc0) == 0x80)   /* not in the middle of a UTF-8 character */
			from++;
		dots = "...";
	}
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s%s%s%s", msg, sep, dots, from);
	memcpy(res->reason, sb_str(&sb), sb.len < room ? sb.len + 1 : room);
	res->reason[room] = '\0';
	sb_free(&sb);
}

/* "" when the peer exited with status 0, else how it ended. */
static void exit_text(const struct peer_run *r, char *out, size_t size)
{
	out[0] = '\0';
	if (WIFEXITED(r->wstatus) && WEXITSTATUS(r->wstatus)) {
		int code = WEXITSTATUS(r->wstatus);
		snprintf(out, size, "peer exited with status %d%s", code,
			 code == 127 ? " (command not found)" :
			 code == 126 ? " (command not executable, or its directory cannot be entered)" : "");
	} else if (WIFSIGNALED(r->wstatus)) {
		int sig = WTERMSIG(r->wstatus);
		snprintf(out, size, "peer killed by signal %d (%s)", sig, strsignal(sig));
	}
}

void peer_measure_case(const struct sweep_case *c, const char *sweep_path, struct case_result *res,
		       void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const struct case_params *p = &c->params;
	const struct sweep_peer *peer = c->peer;
	int64_t t_start = now_ns();
	struct peer_run run;
	struct peer_output po;
	struct env env = {0};
	char *dir = NULL, msg[768], how[160];

	memset(res, 0, sizeof(*res));
	memset(&run, 0, sizeof(run));
	memset(&po, 0, sizeof(po));
	run.out = (struct strbuf)STRBUF_INIT;
	res->max_diff = res->tolerance = -1;   /* a peer is not validated against the reference */
	res->peak_fwd_bytes = res->peak_bwd_bytes = res->peak_bytes = -1;
	peer_figures(p, &res->figures);

	if (!peer) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "case '%s' has no peer", c->name);
		goto done;
	}
	res->iters = p->iters == ITERS_AUTO ? 0 : p->iters;
	/* the protocol gives a peer a count to run (schemas/peer-protocol.md); it cannot be told
	 * when the median is precise enough, and a count chosen here would not be iters: auto */
	if (p->iters == ITERS_AUTO) {
		res->status = STATUS_UNSUPPORTED;
		snprintf(res->reason, sizeof(res->reason), "iters: auto is not supported for a peer "
			 "('%s' is run by peer %s, and the peer protocol runs a fixed count of "
			 "iterations); give this benchmark a fixed iters", c->name, peer->name);
		goto done;
	}
	if (env_build(c, &env) || !(dir = sweep_dir(sweep_path))) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "out of memory for peer '%s'", peer->name);
		goto done;
	}
	peer_run(peer, dir, env.vars, p->warmup + p->iters, &run, on_iteration, ctx);
	if (run.start_error[0]) {
		res->status = STATUS_ERROR;
		snprintf(res->reason, sizeof(res->reason), "cannot start peer '%s': %s", peer->name,
			 run.start_error);
		goto done;
	}
	if (run.interrupted) {
		res->interrupted = 1;
		goto done;
	}
	if (run.timed_out) {
		snprintf(msg, sizeof(msg), "peer '%s' timed out after %" PRId64 " s", peer->name,
			 peer->timeout_s);
		fail_with_stderr(res, &run, msg);
		goto done;
	}
	if (run.overflow) {
		snprintf(msg, sizeof(msg), "peer '%s' wrote more than %u MiB to stdout", peer->name,
			 PEER_STDOUT_MAX >> 20);
		fail_with_stderr(res, &run, msg);
		goto done;
	}
	exit_text(&run, how, sizeof(how));
	int rc = peer_parse_output(sb_str(&run.out), run.out.len, p, &po);
	if (rc && po.truncated && how[0]) {          /* it died before finishing its output */
		fail_with_stderr(res, &run, how);
	} else if (rc) {
		snprintf(msg, sizeof(msg), "malformed peer output: %s%s%s", po.error, how[0] ? "; " : "",
			 how);
		fail_with_stderr(res, &run, msg);
	} else if (po.status == STATUS_OK && how[0]) {
		snprintf(msg, sizeof(msg), "the peer printed 'status ok' but %s", how);
		fail_with_stderr(res, &run, msg);
	} else {
		res->status = po.status;
		res->stop_reason = po.status == STATUS_OK ? "iters" : NULL;
		snprintf(res->reason, sizeof(res->reason), "%s", po.reason);
		res->samples = po.samples;
		res->nsamples = po.nsamples;
		po.samples = NULL;
		po.nsamples = 0;
		if (po.param_bytes >= 0)
			res->figures.param_bytes = po.param_bytes;
		res->peak_fwd_bytes = po.peak_fwd_bytes;
		res->peak_bwd_bytes = po.peak_bwd_bytes;
		res->peak_bytes = po.peak_bytes;
		memcpy(res->impl_info, po.impl_info, sizeof(res->impl_info));
		if (res->peak_bytes < 0)   /* the overall peak is at least each phase's */
			res->peak_bytes = po.peak_fwd_bytes > po.peak_bwd_bytes ? po.peak_fwd_bytes :
										 po.peak_bwd_bytes;
	}
done:
	peer_output_free(&po);
	sb_free(&run.out);
	env_free(&env);
	free(dir);
	res->elapsed_ns = now_ns() - t_start;
}
