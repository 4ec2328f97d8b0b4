/* runner/sweep_limits.c: the limits of schemas/sweep-format.md ("Limits"), checked when a sweep is
 * parsed (exit 2 naming the value), so that no arithmetic the runner or a workload does on a
 * case's sizes can leave int64: per value (sweep_value_max) and per case, the bytes of every
 * tensor the case describes (sweep_case_sizes_check). All arithmetic here goes through
 * common/checked.h. */
#include "sweep_limits.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "checked.h"
#include "xalloc.h"

int64_t sweep_value_max(const char *key)
{
	static const struct {
		const char *key;
		int64_t max;
	} limits[] = {
		{"warmup", BD_MAX_WARMUP}, {"iters", BD_MAX_ITERS}, {"min_iters", BD_MAX_ITERS},
		{"max_iters", BD_MAX_ITERS},
		{"batch_size", BD_MAX_DIM}, {"heads", BD_MAX_DIM}, {"seq_len", BD_MAX_DIM},
		{"head_dim", BD_MAX_DIM}, {"context_length", BD_MAX_DIM}, {"vocab_size", BD_MAX_DIM},
		{"m", BD_MAX_DIM}, {"n", BD_MAX_DIM}, {"k", BD_MAX_DIM}, {"size", BD_MAX_DIM},
		{"d_model", BD_MAX_DIM}, {"d_ff", BD_MAX_DIM}, {"num_layers", BD_MAX_DIM},
		{"num_heads", BD_MAX_DIM},
	};
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (!strcmp(limits[i].key, key))
			return limits[i].max;
	return INT64_MAX;
}

/* 0 when the tensor of these dimensions (8 bytes an element) is within BD_MAX_TENSOR_BYTES. */
static int tensor_fits(const int64_t *dims, size_t n)
{
	int64_t elements, bytes;
	return !ck_product(dims, n, &elements) && !ck_mul(elements, 8, &bytes) &&
	       bytes <= BD_MAX_TENSOR_BYTES;
}

/* Whether what the e2e model allocates in all (kernels/model/model.c: take_state, take_scratch,
 * the naive attention's score matrices), summed over its layers, fits: counted generously in
 * elements (the bfloat16 shadow as a whole element, every layer with a backward's buffers), so
 * that no per-category sum or total the model, the estimate or the runner makes leaves int64.
 * params: L (4 d^2 + 3 d d_ff + 2 d) + 2 V d, already checked. */
static int model_memory_fits(const struct case_params *p, int64_t params)
{
	const struct model_config *m = &p->model;
	int64_t b = p->batch_size, t = p->context_length, d = m->d_model, f = m->d_ff;
	int64_t L = m->num_layers, h = m->num_heads, V = m->vocab_size, n = b * t;
	int naive = !p->attention[0] || !strcmp(p->attention, "naive");
	/* each term a product of six factors */
	const int64_t terms[][6] = {
		{5, params, 1, 1, 1, 1},       /* parameters (+ shadow), gradients, AdamW m and v */
		{10, L, n, d, 1, 1},           /* per layer: x, h1, q, k, v, o, om, x_mid, h2 (+1) */
		{3, L, n, f, 1, 1},            /* per layer: u (2 f), g */
		{2, L, n, 1, 1, 1},            /* per layer: rstd1, rstd2 */
		{1, L, b, h, t, 1},            /* per layer: lse */
		{13, n, d, 1, 1, 1},           /* final activations and the shared scratch */
		{3, n, f, 1, 1, 1},
		{2, n, V, 1, 1, 1},            /* logits, dlogits */
		{4, n, 1, 1, 1, 1},
		{1, t, d, 1, 1, 1},            /* RoPE */
		{naive ? 2 : 0, L + 1, b, h, t, t},   /* naive: P and dP per layer, one shared */
	};
	int64_t total = 0, x;
	for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]); i++)
		if (ck_product(terms[i], 6, &x) || ck_add(total, x, &total))
			return 0;
	return tensor_fits(&total, 1);
}

int sweep_case_sizes_check(const struct case_params *p, char *msg, size_t size)
{
	const struct model_config *m = &p->model;
	const char *what = NULL;
	switch (p->suite) {
	case SUITE_ATTENTION: {
		const int64_t qkv[] = {p->batch_size, p->heads, p->seq_len, p->head_dim};
		const int64_t scores[] = {p->batch_size, p->heads, p->seq_len, p->seq_len};
		if (!tensor_fits(qkv, 4))
			what = "Q (batch_size x heads x seq_len x head_dim)";
		else if (!tensor_fits(scores, 4))
			what = "the scores (batch_size x heads x seq_len x seq_len)";
		break;
	}
	case SUITE_E2E: {
		int64_t t = p->context_length, b = p->batch_size, d2, dff, layer, params;
		const int64_t act[] = {b, t, m->d_model > m->d_ff ? m->d_model : m->d_ff};
		const int64_t logits[] = {b, t, m->vocab_size};
		const int64_t scores[] = {b, m->num_heads, t, t};
		const int64_t embed[] = {m->vocab_size, m->d_model};
		/* parameters: L (4 d^2 + 3 d d_ff + 2 d) + 2 V d + d */
		int bad = ck_mul(m->d_model, m->d_model, &d2) || ck_mul(d2, 4, &d2) ||
			  ck_mul(m->d_model, m->d_ff, &dff) || ck_mul(dff, 3, &dff) ||
			  ck_add(d2, dff, &layer) || ck_add(layer, 2 * (int64_t)m->d_model, &layer) ||
			  ck_mul(layer, m->num_layers, &params) || !tensor_fits(embed, 2) ||
			  ck_add(params, 2 * (embed[0] * embed[1]), &params) || !tensor_fits(&params, 1);
		if (bad)
			what = "the model's parameters";
		else if (!tensor_fits(act, 3))
			what = "the activations (batch_size x context_length x max(d_model, d_ff))";
		else if (!tensor_fits(logits, 3))
			what = "the logits (batch_size x context_length x vocab_size)";
		else if (!tensor_fits(scores, 4))
			what = "the attention scores (batch_size x num_heads x context_length^2)";
		else if (!model_memory_fits(p, params))
			what = "the model's memory (parameters, gradients, AdamW state and every "
			       "layer's activations)";
		break;
	}
	case SUITE_MATMUL: {
		const int64_t a[] = {p->m, p->k}, bm[] = {p->k, p->n}, c[] = {p->m, p->n};
		if (!tensor_fits(a, 2) || !tensor_fits(bm, 2) || !tensor_fits(c, 2))
			what = "a matrix (m x k, k x n or m x n)";
		break;
	}
	case SUITE_COUNT: break;
	}
	if (!what)
		return 0;
	snprintf(msg, size, "the case is too large: %s would exceed %" PRId64 " bytes", what,
		 (int64_t)BD_MAX_TENSOR_BYTES);
	return -1;
}

/* ---- the file, before libyaml sees it ------------------------------------------------------- */

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a pipe" : S_ISSOCK(m) ? "a socket"
	       : "not a regular file";
}

int sweep_file_read(const char *path, char **text, size_t *len, struct bd_error *err)
{
	int rc = 0;
	char *buf = NULL;
	size_t n = 0;
	*text = NULL;
	/* O_NONBLOCK: a pipe without a writer must not hang the open; reads of a file ignore it */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		char reason[256];
		snprintf(reason, sizeof(reason), "%s", strerror(errno));
		reason[0] = (char)tolower((unsigned char)reason[0]);
		rc = bd_fail_at(err, BD_EIO, path, 0, 0, "cannot read the sweep file: %s", reason);
		goto done;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc = bd_fail_at(err, BD_EIO, path, 0, 0,
				"cannot read the sweep file: it is %s, not a regular file",
				file_kind(sb.st_mode));
		goto done;
	}
	if (sb.st_size > SWEEP_MAX_BYTES) {
		rc = bd_fail_at(err, BD_EINVAL, path, 0, 0,
				"the sweep file is %lld bytes; a sweep may have at most %d",
				(long long)sb.st_size, SWEEP_MAX_BYTES);
		goto done;
	}
	/* read at most one byte beyond the limit: a file that grows meanwhile is still bounded */
	buf = xmalloc(SWEEP_MAX_BYTES + 2);
	for (;;) {
		ssize_t got = read(fd, buf + n, SWEEP_MAX_BYTES + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = bd_fail_at(err, BD_EIO, path, 0, 0, "cannot read the sweep file: %s",
					strerror(errno));
			goto done;
		}
		if (got == 0 || (n += (size_t)got) > SWEEP_MAX_BYTES)
			break;
	}
	if (n > SWEEP_MAX_BYTES) {
		rc = bd_fail_at(err, BD_EINVAL, path, 0, 0,
				"the sweep file is over %d bytes, the most a sweep may have",
				SWEEP_MAX_BYTES);
		goto done;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
done:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

int sweep_text_depth_check(const char *path, const char *text, struct bd_error *err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int rc = 0, depth = 0, anchors = 0;
	if (!yaml_parser_initialize(&parser))
		return bd_fail(err, BD_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	/* events, not the document: libyaml's loader recurses once per level, its event parser does
	 * not, and stopping at the first level too deep keeps the scan short */
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev))
			break;   /* a syntax error: the real parse reports it with its position */
		int type = ev.type;
		const yaml_char_t *anchor = type == YAML_SCALAR_EVENT ? ev.data.scalar.anchor :
					    type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor :
					    type == YAML_MAPPING_START_EVENT ? ev.data.mapping_start.anchor : NULL;
		if (anchor && ++anchors > SWEEP_MAX_ANCHORS) {
			rc = bd_fail_at(err, BD_EINVAL, path, (int)ev.start_mark.line + 1,
					(int)ev.start_mark.column + 1,
					"the sweep defines more than %d anchors (&name)", SWEEP_MAX_ANCHORS);
			yaml_event_delete(&ev);
			break;
		}
		if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
			if (++depth > SWEEP_MAX_DEPTH) {
				rc = bd_fail_at(err, BD_EINVAL, path, (int)ev.start_mark.line + 1,
						(int)ev.start_mark.column + 1,
						"the sweep nests lists and mappings more than %d deep",
						SWEEP_MAX_DEPTH);
				yaml_event_delete(&ev);
				break;
			}
		} else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	return rc;
}
