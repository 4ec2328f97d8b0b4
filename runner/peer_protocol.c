/* runner/peer_protocol.c: a peer's stdout, line by line, checked against its case
 * (schemas/peer-protocol.md, "Output"). peer_parse_output() never prints and never fails as a
 * function on bad input: what is wrong is out->error, with the line number and the line.
 *
 * JSON (the `info {...}` object here, the case line of a persistent peer in peer_env.c) is read
 * and written with jansson (Debian 12: libjansson-dev 2.14), chosen among Debian 12's C JSON
 * libraries by API and measurement (scripts/json_libs/run.sh: 29 RFC 8259 probes, and 4
 * peer-like lines of 35-460 bytes parsed 20,000 times in 21 interleaved rounds; on the 2-core
 * Xeon under a load of 12, median ns per line):
 *   jansson 2.14      15,000 ns  strict on all 29 probes: UTF-8 validated (overlong forms,
 *                                surrogates, truncated sequences), no NaN/Infinity/comments/
 *                                trailing commas, control characters refused, lone \uD800
 *                                refused, numbers beyond int64/double refused or (a flag) read as
 *                                reals; error line, column, byte position and text; json_int_t
 *                                is int64; JSON_REJECT_DUPLICATES; a writer with sorted keys
 *   json-c 0.16       11,800 ns  even with JSON_TOKENER_STRICT accepts NaN, Infinity, 'single
 *                                quotes', "1.", raw control characters, overlong UTF-8
 *   cJSON 1.7.15       3,400 ns  accepts leading zeros, invalid UTF-8, control characters;
 *                                numbers only as double (int64 beyond 2^53 lost); the error
 *                                position is a global
 *   yajl 2.1.0         8,900 ns  its tree API allows comments; no error position; unmaintained
 *   json-parser 1.1.0  7,300 ns  accepts trailing commas, invalid UTF-8, unknown escapes
 * (the hand-written validator it replaces: 950 ns, no tree). A case reads or writes a few JSON
 * lines, so 15 us each is below 1% of even a one-process-per-case peer's start (a fork and exec
 * of /bin/sh, about 1 ms): strictness and the API decide (docs/design.md, "Peers").
 */
#include "peer_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

enum { MEM_PARAM, MEM_PEAK_FWD, MEM_PEAK_BWD, MEM_PEAK, MEM_COUNT };
static const char *const memory_kinds[MEM_COUNT] = {"param", "peak_fwd", "peak_bwd", "peak"};

/* One (iteration, phase) of the case: its nanoseconds and the line that gave it (0: none). */
struct slot {
	int64_t ns;
	size_t line;
};

/* out->error = "line N: 'LINE': MESSAGE", the line shortened, both made printable (ASCII). */
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
	for (char *c = msg; *c; c++)   /* it quotes the peer's bytes too */
		if (!isprint((unsigned char)*c))
			*c = '?';
	snprintf(out->error, sizeof(out->error), "line %zu: '%s': %s", lineno, quoted, msg);
	return BD_EINVAL;
}

/* peer_internal.h */
void peer_phase_list(unsigned phases, const char *sep, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		if (phases & (1u << ph))
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? sep : "",
					      phase_name((enum bd_phase)ph));
}

/* What one line may look like, checked against the case; the parse state it updates. */
struct parser {
	struct peer_output *out;
	const struct case_params *p;
	int64_t total;             /* warmup + iters */
	unsigned phases;           /* pass_phases(p->pass) */
	int have_header;
	int header_version;        /* the header a missing one's message asks for: a persistent
				    * peer's is 2, a one-process peer's the oldest one read */
	int paced;                 /* a paced case: `ready` lines are valid */
	struct slot *slots;        /* total x PHASE_COUNT, iteration-major */
	size_t mem_line[MEM_COUNT];
	size_t info_json_line;     /* the `info {...}` line, 0 while there is none */
	size_t lineno;
	size_t work_line[PHASE_COUNT], work_benchdb_line;  /* `work` lines given, 0: none */
	struct peer_check *checks; /* every `check` line's, for the duplicate check */
	size_t *check_lines;
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
	peer_phase_list(P->phases, ", ", timed, sizeof(timed));
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


/* ---- version 2: `check` and `work` --------------------------------------------------------- */

/* `check STAGE DIFF BOUND [WHERE...]`; where: the line from WHERE on, or NULL. */
static int parse_check(struct parser *P, const char *line, char **tok, size_t ntok,
		       const char *where)
{
	struct peer_output *out = P->out;
	struct peer_check c;
	memset(&c, 0, sizeof(c));
	if (ntok < 4)
		return line_fail(out, P->lineno, line, "a check line is 'check STAGE DIFF BOUND "
				 "[WHERE...]'");
	if (!is_word(tok[1], "_.-", sizeof(c.stage)))
		return line_fail(out, P->lineno, line, "STAGE must be a name of at most %zu letters, "
				 "digits, '_', '.' and '-', got '%s'", sizeof(c.stage) - 1, tok[1]);
	for (size_t i = 0; i < out->nchecks; i++)
		if (!strcmp(P->checks[i].stage, tok[1]))
			return line_fail(out, P->lineno, line, "a second check of stage '%s' (the first is "
					 "on line %zu)", tok[1], P->check_lines[i]);
	if (!strcmp(tok[2], "nan") || !strcmp(tok[2], "inf"))
		c.diff = !strcmp(tok[2], "nan") ? NAN : INFINITY;
	else if (parse_decimal(tok[2], &c.diff))
		return line_fail(out, P->lineno, line, "DIFF must be a non-negative decimal number (or "
				 "nan, inf), got '%s'", tok[2]);
	if (parse_decimal(tok[3], &c.bound) || !(c.bound > 0))
		return line_fail(out, P->lineno, line, "BOUND must be a positive decimal number, got "
				 "'%s'", tok[3]);
	snprintf(c.stage, sizeof(c.stage), "%s", tok[1]);
	if (where)
		snprintf(c.where, sizeof(c.where), "%s", where);
	struct peer_check *checks = realloc(P->checks, (out->nchecks + 1) * sizeof(*checks));
	size_t *lines = checks ? realloc(P->check_lines, (out->nchecks + 1) * sizeof(*lines)) : NULL;
	if (checks)
		P->checks = checks;
	if (!lines)
		return line_fail(out, P->lineno, line, "out of memory");
	P->check_lines = lines;
	P->checks[out->nchecks] = c;
	P->check_lines[out->nchecks] = P->lineno;
	/* the worst: the largest diff / bound, a diff that is not a number worst of all */
	double ratio = isnan(c.diff) ? INFINITY : c.diff / c.bound;
	double worst = !out->nchecks ? -1 : isnan(out->worst.diff) ? INFINITY
					    : out->worst.diff / out->worst.bound;
	if (ratio > worst)
		out->worst = c;
	out->check_failed |= !(ratio <= 1);
	out->nchecks++;
	return 0;
}

/* `work benchdb` or `work PHASE FLOPS BYTES` (FLOPS, BYTES: an integer or '-'). */
static int parse_work(struct parser *P, const char *line, char **tok, size_t ntok)
{
	struct peer_output *out = P->out;
	char timed[32];
	size_t given = 0;
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		given = P->work_line[ph] ? P->work_line[ph] : given;
	if (ntok == 2 && !strcmp(tok[1], "benchdb")) {
		if (P->work_benchdb_line || given)
			return line_fail(out, P->lineno, line, "'work benchdb' after another work line "
					 "(line %zu)", P->work_benchdb_line ? P->work_benchdb_line : given);
		P->work_benchdb_line = P->lineno;
		out->work_benchdb = 1;
		return 0;
	}
	if (ntok != 4)
		return line_fail(out, P->lineno, line, "a work line is 'work benchdb' or 'work PHASE "
				 "FLOPS BYTES'");
	if (P->work_benchdb_line)
		return line_fail(out, P->lineno, line, "a work line after 'work benchdb' (line %zu)",
				 P->work_benchdb_line);
	int ph = phase_parse(tok[1]);
	peer_phase_list(P->phases, ", ", timed, sizeof(timed));
	if (ph < 0 || !(P->phases & (1u << ph)))
		return line_fail(out, P->lineno, line, "phase '%s' is not timed by pass %s (timed: %s)",
				 tok[1], pass_name(P->p->pass), timed);
	if (P->work_line[ph])
		return line_fail(out, P->lineno, line, "a second work line of phase %s (the first is on "
				 "line %zu)", tok[1], P->work_line[ph]);
	int64_t v[2];
	for (int i = 0; i < 2; i++) {
		v[i] = -1;
		if (strcmp(tok[2 + i], "-") && parse_digits(tok[2 + i], &v[i]))
			return line_fail(out, P->lineno, line, "%s must be a non-negative integer or '-' "
					 "(unknown), got '%s'", i ? "BYTES" : "FLOPS", tok[2 + i]);
	}
	out->work_flops[ph] = v[0];
	out->work_bytes[ph] = v[1];
	P->work_line[ph] = P->lineno;
	return 0;
}

/* ---- `info {JSON}`: one JSON object (RFC 8259), checked here and stored as it is ----------- */

/* How deep arrays and objects may nest in an info object. */
#define INFO_JSON_DEPTH 16

/* The deepest nesting of arrays and objects in v (1 for a flat object). */
static int json_depth(const json_t *v)
{
	int deepest = 0;
	if (json_is_object(v)) {
		const char *key;
		json_t *item;
		json_object_foreach((json_t *)v, key, item) {
			int d = json_depth(item);
			deepest = d > deepest ? d : deepest;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *item;
		json_array_foreach(v, i, item) {
			int d = json_depth(item);
			deepest = d > deepest ? d : deepest;
		}
	} else {
		return 0;
	}
	return deepest + 1;
}

/* `info {...}`: json is the line from its '{' on (trimmed). One object, nothing after it, at
 * most PEER_INFO_MAX - 1 bytes, and one such line per output; kept in out->impl_info as printed.
 * jansson reads it: \u0000 is accepted (JSON_ALLOW_NUL) and integers beyond int64 are read as
 * reals (JSON_DECODE_INT_AS_REAL), as RFC 8259 allows; a repeated key keeps its last value
 * (stored as printed, so nothing is lost). */
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
	json_error_t e;
	json_t *v = json_loadb(json, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &e);
	int rc = 0;
	if (!v)
		rc = line_fail(out, P->lineno, line, "the info object is not valid JSON at byte %d: %s",
			       e.position, e.text);
	else if (!json_is_object(v))
		rc = line_fail(out, P->lineno, line, "the info object is not valid JSON at byte 1: "
			       "not an object");
	else if (json_depth(v) > INFO_JSON_DEPTH)
		rc = line_fail(out, P->lineno, line, "the info object is not valid JSON: nested more "
			       "than %d deep", INFO_JSON_DEPTH);
	json_decref(v);
	if (rc)
		return rc;
	memcpy(out->impl_info, json, len + 1);
	P->info_json_line = P->lineno;
	return 0;
}

static int parse_line(struct parser *P, char *line)
{
	enum { TOKENS_MAX = 5 };
	struct peer_output *out = P->out;
	char *copy = strdup(line), *tok[TOKENS_MAX], *save = NULL;
	const char *rest = NULL, *fifth = NULL;
	size_t ntok = 0;
	int rc = 0;

	if (!copy)
		return line_fail(out, P->lineno, line, "out of memory");
	/* Tokens of copy; rest: where the third token starts in line (a status reason). */
	for (char *t = strtok_r(copy, " \t", &save); t && ntok < TOKENS_MAX;
	     t = strtok_r(NULL, " \t", &save)) {
		if (ntok == 2)
			rest = line + (t - copy);
		if (ntok == 4)
			fifth = line + (t - copy);
		tok[ntok++] = t;
	}
	if (!P->have_header) {
		int64_t version;
		if (strcmp(tok[0], "benchdb-peer") || ntok != 2)
			rc = line_fail(out, P->lineno, line, "expected 'benchdb-peer %d' as the first line",
				       P->header_version);
		else if (parse_digits(tok[1], &version))
			rc = line_fail(out, P->lineno, line, "the protocol version must be an integer");
		else if (version < PEER_PROTOCOL_VERSION || version > PEER_PROTOCOL_MAX)
			rc = line_fail(out, P->lineno, line, "protocol version %s is not supported (this "
				       "runner reads %d to %d)", tok[1], PEER_PROTOCOL_VERSION,
				       PEER_PROTOCOL_MAX);
		P->have_header = !rc;
		out->version = rc ? 0 : (int)version;
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
	} else if (!strcmp(tok[0], "check") && out->version >= 2) {
		rc = parse_check(P, line, tok, ntok, fifth);
	} else if (!strcmp(tok[0], "work") && out->version >= 2) {
		rc = parse_work(P, line, tok, ntok);
	} else if (!strcmp(tok[0], "ready") && out->version >= 2) {
		if (!P->paced)
			rc = line_fail(out, P->lineno, line, "a 'ready' line in a case that is not paced "
				       "(its BENCHDB_PACED is not true)");
		else if (ntok != 1)
			rc = line_fail(out, P->lineno, line, "a ready line is 'ready' alone");
	} else if (!strcmp(tok[0], "benchdb-peer")) {
		rc = line_fail(out, P->lineno, line, "a second header line");
	} else {
		rc = line_fail(out, P->lineno, line, "unknown line kind '%s' (valid: info, sample, "
			       "memory, %s%sstatus; '#' starts a comment)", tok[0],
			       out->version >= 2 ? "check, work, " : "", P->paced ? "ready, " : "");
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

/* peer_internal.h */
int peer_line_ignored(const char *line, const char *end)
{
	while (line < end && *line != '\n' && isspace((unsigned char)*line))
		line++;
	return line == end || *line == '\n' || *line == '#';
}

/* peer_internal.h */
int peer_text_ignored(const char *text, const char *end)
{
	for (const char *line = text; line < end;) {
		if (!peer_line_ignored(line, end))
			return 0;
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		line = nl ? nl + 1 : end;
	}
	return 1;
}

/* The parse of peer_parse_output and peer_parse_case_block: version 0 expects a header line. */
static int parse_text(const char *text, size_t len, const struct case_params *p, int version,
		      int header_version, int paced, size_t first_line, struct peer_output *out)
{
	struct parser P = {.out = out, .p = p, .have_header = version > 0,
			   .header_version = header_version, .paced = paced,
			   .lineno = first_line - 1};
	char *line = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->version = version;
	out->param_bytes = out->peak_fwd_bytes = out->peak_bwd_bytes = out->peak_bytes = -1;
	for (int ph = 0; ph < PHASE_COUNT; ph++)
		out->work_flops[ph] = out->work_bytes[ph] = -1;
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
		if (peer_line_ignored(line, line + n))
			continue;
		char *start = line;
		while (isspace((unsigned char)*start))
			start++;
		if ((rc = parse_line(&P, start)))
			goto done;
	}
	if (!P.have_header) {
		out->truncated = 1;
		snprintf(out->error, sizeof(out->error), "no output (expected 'benchdb-peer %d' as the "
			 "first line)", header_version);
		rc = BD_EINVAL;
	} else if (!out->status_line) {
		out->truncated = 1;
		snprintf(out->error, sizeof(out->error), "the output ends without a status line (after "
			 "line %zu)", P.lineno ? P.lineno : first_line);
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
	free(P.checks);
	free(P.check_lines);
	return rc;
}

int peer_parse_output(const char *text, size_t len, const struct case_params *p,
		      struct peer_output *out)
{
	return parse_text(text, len, p, 0, PEER_PROTOCOL_VERSION, 0, 1, out);
}

int peer_parse_case_block(const char *text, size_t len, const struct case_params *p, int version,
			  int paced, size_t first_line, struct peer_output *out)
{
	/* a persistent peer's: it speaks protocol 2 (a header of 1 is refused by peer.c) */
	return parse_text(text, len, p, version, PEER_PROTOCOL_MAX, paced,
			  first_line ? first_line : 1, out);
}

void peer_output_free(struct peer_output *out)
{
	if (!out)
		return;
	free(out->samples);
	out->samples = NULL;
	out->nsamples = 0;
}
