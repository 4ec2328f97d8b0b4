/* tests/test_peer.c: the peer protocol parser (runner/peer.c, schemas/peer-protocol.md) — a good
 * output gives every sample of the case, and each kind of malformed output is refused with the
 * line number and what is wrong. The process side (start, timeout, exit codes) is tested end to
 * end in tests/cli/peer_test.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "peer.h"

/* An attention case: warmup 1 + iters 2 of the given pass. */
static struct case_params params(enum bd_pass pass)
{
	struct case_params p;
	memset(&p, 0, sizeof(p));
	p.suite = SUITE_ATTENTION;
	snprintf(p.impl, sizeof(p.impl), "fake");
	p.pass = pass;
	p.batch_size = p.heads = 1;
	p.seq_len = p.head_dim = 16;
	p.warmup = 1;
	p.iters = 2;
	p.sync = 1;
	return p;
}

/* Header and the 6 samples of forward_backward with warmup 1 + iters 2 (ns = 100 iter + phase). */
#define HEADER "benchdb-peer 1\n"
#define FB_SAMPLES                                                                               \
	"sample 0 fwd 100\nsample 0 bwd 101\nsample 1 fwd 200\nsample 1 bwd 201\n"               \
	"sample 2 fwd 300\nsample 2 bwd 301\n"

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* The output is valid for pass; returns the parse for more checks (free it). */
static struct peer_output parse_ok(const char *text, enum bd_pass pass)
{
	struct case_params p = params(pass);
	struct peer_output out;
	int rc = peer_parse_output(text, strlen(text), &p, &out);
	if (rc)
		fail_msg("unexpected parse error %d: %s", rc, out.error);
	assert_string_equal(out.error, "");
	return out;
}

/* The output is refused with an error containing every string given (NULL-terminated); returns
 * whether it was only truncated. */
static int check_refused(const char *text, enum bd_pass pass, ...)
{
	struct case_params p = params(pass);
	struct peer_output out;
	int rc = peer_parse_output(text, strlen(text), &p, &out);
	if (rc != BD_EINVAL)
		fail_msg("output accepted (rc %d), expected an error:\n%s", rc, text);
	assert_null(out.samples);
	assert_int_equal(out.nsamples, 0);
	va_list ap;
	va_start(ap, pass);
	for (const char *sub; (sub = va_arg(ap, const char *));)
		assert_contains(out.error, sub);
	va_end(ap);
	int truncated = out.truncated;
	peer_output_free(&out);
	return truncated;
}

/* ---- good output ----------------------------------------------------------------------------- */

static void test_peer__good_output_gives_every_sample_iteration_major(void **state)
{
	(void)state;
	/* phases of one iteration in any order, comments, blank lines, CRLF, info and fields
	 * separated by tabs or several spaces are fine */
	struct peer_output out = parse_ok("# a fake peer\n\n"
					  HEADER
					  "info torch 1.13.1\ninfo device cpu (2 threads)\n"
					  "sample 0 bwd 101\r\nsample 0 fwd 100\n"
					  "  sample 1 fwd 200\nsample\t1 \tbwd  201\n"
					  "sample 2 fwd 300\nsample 2 bwd 301\n"
					  "memory param 4096\nmemory peak_fwd 1000\nmemory peak_bwd 3000\n"
					  "status ok\n# done\n\n",
					  PASS_FORWARD_BACKWARD);
	assert_int_equal(out.status, STATUS_OK);
	assert_int_equal(out.status_line, 15);
	assert_string_equal(out.reason, "");
	assert_int_equal(out.ninfo, 2);
	assert_int_equal(out.nsamples, 6);
	for (size_t i = 0; i < out.nsamples; i++) {
		assert_int_equal(out.samples[i].iter, (int32_t)(i / 2));
		assert_int_equal(out.samples[i].phase, (int32_t)(i % 2));
		assert_int_equal(out.samples[i].ns, 100 * (int64_t)(i / 2 + 1) + (int64_t)(i % 2));
	}
	assert_int_equal(out.param_bytes, 4096);
	assert_int_equal(out.peak_fwd_bytes, 1000);
	assert_int_equal(out.peak_bwd_bytes, 3000);
	assert_int_equal(out.peak_bytes, -1);
	peer_output_free(&out);
}

static void test_peer__train_step_has_three_phases_and_forward_one(void **state)
{
	(void)state;
	struct peer_output out = parse_ok(HEADER
					  "sample 0 fwd 1\nsample 0 bwd 2\nsample 0 opt 3\n"
					  "sample 1 fwd 4\nsample 1 bwd 5\nsample 1 opt 6\n"
					  "sample 2 fwd 7\nsample 2 bwd 8\nsample 2 opt 9\n"
					  "status ok",   /* no final newline */
					  PASS_TRAIN_STEP);
	assert_int_equal(out.nsamples, 9);
	assert_int_equal(out.samples[8].phase, PHASE_OPT);
	assert_int_equal(out.samples[8].ns, 9);
	peer_output_free(&out);

	out = parse_ok(HEADER "sample 0 fwd 1\nsample 1 fwd 9223372036854775807\nsample 2 fwd 3\n"
		       "status ok\n", PASS_FORWARD);
	assert_int_equal(out.nsamples, 3);
	assert_int_equal(out.samples[1].ns, INT64_MAX);
	peer_output_free(&out);
}

static void test_peer__non_ok_status_keeps_its_reason_and_drops_samples(void **state)
{
	(void)state;
	struct peer_output out = parse_ok(HEADER "sample 0 fwd 100\nmemory peak 123456\n"
					  "status oom CUDA out of memory. Tried to allocate 2.00 GiB\n",
					  PASS_FORWARD_BACKWARD);
	assert_int_equal(out.status, STATUS_OOM);
	assert_string_equal(out.reason, "CUDA out of memory. Tried to allocate 2.00 GiB");
	assert_null(out.samples);
	assert_int_equal(out.peak_bytes, 123456);
	peer_output_free(&out);

	out = parse_ok(HEADER "status unsupported torch 1.13 has no scaled_dot_product_attention\n",
		       PASS_FORWARD);
	assert_int_equal(out.status, STATUS_UNSUPPORTED);
	assert_string_equal(out.reason, "torch 1.13 has no scaled_dot_product_attention");
	peer_output_free(&out);

	out = parse_ok(HEADER "status error\n", PASS_FORWARD);
	assert_int_equal(out.status, STATUS_ERROR);
	assert_string_equal(out.reason, "the peer reported error without a reason");
	peer_output_free(&out);
}

/* ---- malformed output ------------------------------------------------------------------------ */

static void test_peer__bad_header_or_version_is_refused(void **state)
{
	(void)state;
	check_refused("sample 0 fwd 1\n", PASS_FORWARD, "line 1: 'sample 0 fwd 1'",
		      "expected 'benchdb-peer 1' as the first line", NULL);
	check_refused("# comment\nbenchdb-peer 3\nstatus ok\n", PASS_FORWARD,
		      "line 2: 'benchdb-peer 3': protocol version 3 is not supported (this runner reads 1 "
		      "to 2)", NULL);
	check_refused("benchdb-peer 0\n", PASS_FORWARD, "protocol version 0 is not supported", NULL);
	check_refused("benchdb-peer one\n", PASS_FORWARD, "version must be an integer", NULL);
	check_refused("benchdb-peer 1 extra\n", PASS_FORWARD, "expected 'benchdb-peer 1'", NULL);
	check_refused(HEADER HEADER, PASS_FORWARD, "line 2", "a second header line", NULL);
	/* nothing at all, or only comments: truncated, not malformed */
	assert_true(check_refused("", PASS_FORWARD, "no output", NULL));
	assert_true(check_refused("# only a comment\n\n", PASS_FORWARD, "no output", NULL));
}

static void test_peer__unknown_line_kind_quotes_the_line(void **state)
{
	(void)state;
	assert_false(check_refused(HEADER "sample 0 fwd 1\nTraceback (most recent call last):\n",
				   PASS_FORWARD, "line 3: 'Traceback (most recent call last):'",
				   "unknown line kind 'Traceback' (valid: info, sample, memory, status", NULL));
	/* a long line is shortened in the message */
	char text[400];
	snprintf(text, sizeof(text), HEADER "%s\n",
		 "garbage-garbage-garbage-garbage-garbage-garbage-garbage-garbage-garbage-garbage");
	check_refused(text, PASS_FORWARD, "line 2: 'garbage-garbage-garbage-garbage-garbage-garbage-"
		      "garbage-garb...'", NULL);
	check_refused(HEADER "info\n", PASS_FORWARD, "line 2", "an info line is 'info KEY VALUE...'",
		      NULL);
	check_refused(HEADER "memory peak\n", PASS_FORWARD, "a memory line is 'memory KIND BYTES'",
		      NULL);
	check_refused(HEADER "memory vram 10\n", PASS_FORWARD, "unknown memory kind 'vram'", NULL);
	check_refused(HEADER "memory peak -1\n", PASS_FORWARD, "BYTES must be a non-negative integer",
		      NULL);
	check_refused(HEADER "memory peak 1\nmemory peak 2\n", PASS_FORWARD,
		      "line 3", "memory peak is given twice (first on line 2)", NULL);
	const char nul[] = "benchdb-peer 1\nsample 0 fwd\0 1\n";
	struct case_params p = params(PASS_FORWARD);
	struct peer_output out;
	assert_int_equal(peer_parse_output(nul, sizeof(nul) - 1, &p, &out), BD_EINVAL);
	assert_contains(out.error, "line 2: 'sample 0 fwd': the line contains a nul byte");
	peer_output_free(&out);
}

static void test_peer__bad_phase_is_refused(void **state)
{
	(void)state;
	check_refused(HEADER "sample 0 forward 1\n", PASS_FORWARD, "line 2",
		      "unknown phase 'forward' (valid: fwd, bwd, opt)", NULL);
	/* a real phase that the pass does not time */
	check_refused(HEADER "sample 0 opt 1\n", PASS_FORWARD_BACKWARD, "line 2: 'sample 0 opt 1'",
		      "phase 'opt' is not timed by pass forward_backward (timed: fwd, bwd)", NULL);
	check_refused(HEADER "sample 0 fwd 1\n", PASS_BACKWARD,
		      "phase 'fwd' is not timed by pass backward (timed: bwd)", NULL);
}

static void test_peer__ns_must_be_a_positive_integer(void **state)
{
	(void)state;
	const char *bad[] = {"abc", "-5", "0", "1.5", "1e6", "+3", "12ns"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128], want[64];
		snprintf(text, sizeof(text), HEADER "sample 0 fwd %s\n", bad[i]);
		snprintf(want, sizeof(want), "got '%s'", bad[i]);
		check_refused(text, PASS_FORWARD, "line 2",
			      "NS must be a positive integer of nanoseconds", want, NULL);
	}
	check_refused(HEADER "sample 0 fwd 9223372036854775808\n", PASS_FORWARD,
		      "NS 9223372036854775808 is too large", NULL);
	check_refused(HEADER "sample 0 fwd\n", PASS_FORWARD, "a sample line is 'sample ITER PHASE NS'",
		      NULL);
	check_refused(HEADER "sample 0 fwd 1 2\n", PASS_FORWARD, "a sample line is", NULL);
	check_refused(HEADER "sample -1 fwd 1\n", PASS_FORWARD,
		      "ITER must be a non-negative integer, got '-1'", NULL);
}

static void test_peer__duplicate_sample_names_both_lines(void **state)
{
	(void)state;
	check_refused(HEADER "sample 0 fwd 1\nsample 1 fwd 1\nsample 0 fwd 2\n", PASS_FORWARD,
		      "line 4: 'sample 0 fwd 2'",
		      "a second sample of iteration 0 phase fwd (the first is on line 2)", NULL);
}

static void test_peer__missing_sample_is_refused_for_status_ok(void **state)
{
	(void)state;
	/* iteration 1's bwd (a measured iteration) is missing */
	check_refused(HEADER "sample 0 fwd 100\nsample 0 bwd 101\nsample 1 fwd 200\n"
		      "sample 2 fwd 300\nsample 2 bwd 301\nstatus ok\n", PASS_FORWARD_BACKWARD,
		      "'status ok' (line 7) but the sample of iteration 1 phase bwd is missing "
		      "(5 of 6 samples given)", NULL);
	/* warm-up iterations are part of the protocol too */
	check_refused(HEADER "sample 1 fwd 1\nsample 2 fwd 1\nstatus ok\n", PASS_FORWARD,
		      "iteration 0 phase fwd is missing (2 of 3 samples given)", NULL);
}

static void test_peer__sample_beyond_the_iterations_is_refused(void **state)
{
	(void)state;
	check_refused(HEADER "sample 3 fwd 1\n", PASS_FORWARD, "line 2: 'sample 3 fwd 1'",
		      "iteration 3 is beyond the case's 3 (warmup 1 + iters 2, counted from 0)", NULL);
	check_refused(HEADER "sample 99999999999999999999 fwd 1\n", PASS_FORWARD,
		      "ITER must be a non-negative integer", NULL);
}

static void test_peer__missing_status_is_truncated_output(void **state)
{
	(void)state;
	assert_true(check_refused(HEADER FB_SAMPLES, PASS_FORWARD_BACKWARD,
				  "the output ends without a status line (after line 7)", NULL));
}

static void test_peer__status_must_be_last_and_known(void **state)
{
	(void)state;
	assert_false(check_refused(HEADER FB_SAMPLES "status ok\nsample 0 fwd 1\n",
				   PASS_FORWARD_BACKWARD, "line 9: 'sample 0 fwd 1'",
				   "nothing may follow the status line (line 8)", NULL));
	check_refused(HEADER "status error boom\nstatus ok\n", PASS_FORWARD,
		      "line 3", "nothing may follow the status line (line 2)", NULL);
	check_refused(HEADER FB_SAMPLES "status fine\n", PASS_FORWARD_BACKWARD,
		      "line 8: 'status fine'", "unknown status 'fine' (valid: ok, unsupported, oom, error)",
		      NULL);
	check_refused(HEADER FB_SAMPLES "status ok all good\n", PASS_FORWARD_BACKWARD,
		      "'status ok' takes no reason", NULL);
	check_refused(HEADER "status\n", PASS_FORWARD, "a status line is 'status ok' or", NULL);
}

/* ---- info {JSON} ----------------------------------------------------------------------------- */

static void test_peer__info_object_is_kept_as_printed(void **state)
{
	(void)state;
	const char *json = "{\"torch\": \"2.5.1+cpu\", \"threads\": 2, \"mkldnn\": {\"enabled\": true, "
			   "\"version\": [3, 5, 3]}, \"blas\": null, \"x\": -1.5e-3, \"s\": \"a\\u00e9\\n\xc3\xa9\"}";
	char text[1024];
	snprintf(text, sizeof(text), HEADER "info torch 2.5.1\n  info   %s  \r\n" FB_SAMPLES "status ok\n",
		 json);
	struct peer_output out = parse_ok(text, PASS_FORWARD_BACKWARD);
	assert_string_equal(out.impl_info, json);
	assert_int_equal(out.ninfo, 1);   /* the free-text line; the object is not counted there */
	peer_output_free(&out);

	out = parse_ok(HEADER "info {}\nstatus unsupported no\n", PASS_FORWARD);
	assert_string_equal(out.impl_info, "{}");
	peer_output_free(&out);
	/* 16 deep, \u0000, an integer beyond int64 (a real) and a repeated key: valid RFC 8259 */
	const char *edge = "{\"a\": [[[[[[[[[[[[[[[1]]]]]]]]]]]]]]], \"z\": \"x\\u0000y\", "
			   "\"n\": 9223372036854775808, \"a\": 2}";
	snprintf(text, sizeof(text), HEADER "info %s\nstatus unsupported no\n", edge);
	out = parse_ok(text, PASS_FORWARD);
	assert_string_equal(out.impl_info, edge);
	peer_output_free(&out);
	out = parse_ok(HEADER FB_SAMPLES "status ok\n", PASS_FORWARD_BACKWARD);
	assert_string_equal(out.impl_info, "");   /* none printed: nothing stored */
	peer_output_free(&out);
}

static void test_peer__info_object_must_be_one_valid_json_object(void **state)
{
	(void)state;
	const struct {
		const char *line, *why;
	} bad[] = {
		{"info {", "at byte 1: string or '}' expected near end of file"},
		{"info {\"a\": \"b}", "premature end of input"},
		{"info {\"a\": 1", "'}' expected near end of file"},
		{"info {\"a\": 1} x", "at byte 10: end of file expected near 'x'"},
		{"info {\"a\": 1}{}", "end of file expected near '{'"},
		{"info {a: 1}", "at byte 2: string or '}' expected near 'a'"},
		{"info {\"a\" 1}", "':' expected near '1'"},
		{"info {\"a\": 01}", "invalid token near '0'"},
		{"info {\"a\": 1.}", "invalid token near '1.'"},
		{"info {\"a\": .5}", "invalid token near '.'"},
		{"info {\"a\": nan}", "invalid token near 'nan'"},
		{"info {\"a\": [1,]}", "unexpected token near ']'"},
		{"info {\"a\": \"\\x\"}", "invalid escape"},
		{"info {\"a\": \"\\u12g4\"}", "invalid escape"},
		{"info {\"a\": \"\\ud800\"}", "invalid Unicode '\\uD800'"},   /* a lone surrogate */
		{"info {\"a\": \"\t\"}", "control character 0x9"},
		{"info {\"a\": \"\xc3\"}", "unable to decode byte 0xc3"},
		{"info {\"a\": \"\xed\xa0\x80\"}", "unable to decode byte 0xed"},   /* a surrogate */
		{"info {\"a\": \"\xc0\xaf\"}", "unable to decode byte 0xc0"},       /* overlong */
		{"info {\"a\": tru}", "invalid token near 'tru'"},
		{"info {\"a\": 1e400}", "real number overflow"},
		{"info {\"a\": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}", "nested more than 16 deep"},
	};
	char text[512];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), HEADER "%s\nstatus unsupported no\n", bad[i].line);
		check_refused(text, PASS_FORWARD, "line 2: 'info {", "the info object is not valid JSON",
			      bad[i].why, NULL);
	}
	check_refused(HEADER "info {\"a\": 1}\ninfo {\"b\": 2}\nstatus unsupported no\n", PASS_FORWARD,
		      "line 3", "a second info object (the first is on line 2)", NULL);

	/* the bound: PEER_INFO_MAX - 1 bytes fit, one more does not */
	static char big[PEER_INFO_MAX + 64];
	for (size_t len = PEER_INFO_MAX - 1; len <= PEER_INFO_MAX; len++) {
		const char *head = HEADER "info {\"pad\": \"";
		size_t n = (size_t)snprintf(big, sizeof(big), "%s", head);
		size_t pad = len - strlen("{\"pad\": \"\"}");
		memset(big + n, 'x', pad);
		snprintf(big + n + pad, sizeof(big) - n - pad, "\"}\nstatus unsupported no\n");
		if (len < PEER_INFO_MAX) {
			struct peer_output out = parse_ok(big, PASS_FORWARD);
			assert_int_equal(strlen(out.impl_info), len);
			peer_output_free(&out);
		} else {
			check_refused(big, PASS_FORWARD, "the info object has 2048 bytes, more than 2047",
				      NULL);
		}
	}
}

/* ---- protocol 2 ------------------------------------------------------------------------------ */

#define HEADER2 "benchdb-peer 2\n"

static void test_peer__check_lines_keep_the_worst_and_say_when_one_fails(void **state)
{
	(void)state;
	/* the worst is the largest diff / bound, not the largest diff */
	struct peer_output out = parse_ok(HEADER2 "check output 1e-6 1e-4 O[b=0, h=1]\n"
					  "check dq 2e-6 4e-6 dQ[b=0, h=0, s=3, d=1]\ncheck dk 0 0.5\n"
					  FB_SAMPLES "status ok\n", PASS_FORWARD_BACKWARD);
	assert_int_equal(out.version, 2);
	assert_int_equal(out.nchecks, 3);
	assert_string_equal(out.worst.stage, "dq");
	assert_true(out.worst.diff == 2e-6 && out.worst.bound == 4e-6);
	assert_string_equal(out.worst.where, "dQ[b=0, h=0, s=3, d=1]");
	assert_false(out.check_failed);
	assert_int_equal(out.nsamples, 6);
	peer_output_free(&out);

	/* over the bound, or not a number: the output is valid, the check failed */
	out = parse_ok(HEADER2 "check output 3e-2 2e-5 O[0]\n" FB_SAMPLES "status ok\n",
		       PASS_FORWARD_BACKWARD);
	assert_true(out.check_failed);
	assert_string_equal(out.worst.stage, "output");
	peer_output_free(&out);
	out = parse_ok(HEADER2 "check loss 1e-9 1e-4\ncheck grad_norm nan 1e-4\n" FB_SAMPLES
		       "status ok\n", PASS_FORWARD_BACKWARD);
	assert_true(out.check_failed);
	assert_string_equal(out.worst.stage, "grad_norm");
	peer_output_free(&out);
}

static void test_peer__bad_check_lines_are_refused(void **state)
{
	(void)state;
	const struct {
		const char *line, *why;
	} bad[] = {
		{"check output 1e-6", "a check line is 'check STAGE DIFF BOUND [WHERE...]'"},
		{"check output -1e-6 1e-4", "DIFF must be a non-negative decimal number"},
		{"check output 0x10 1e-4", "DIFF must be"},
		{"check output 1e-6 0", "BOUND must be a positive decimal number, got '0'"},
		{"check output 1e-6 inf", "BOUND must be"},
		{"check output 1e-6 nan", "BOUND must be"},
		{"check out/put 1e-6 1e-4", "STAGE must be a name"},
		{"check output 1e-6 1e-4\ncheck output 1e-7 1e-4", "a second check of stage 'output' (the "
		 "first is on line 2)"},
	};
	char text[512];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), HEADER2 "%s\nstatus unsupported no\n", bad[i].line);
		check_refused(text, PASS_FORWARD, bad[i].why, NULL);
	}
	/* version 1 has no check and no work lines */
	check_refused(HEADER "check output 1e-6 1e-4\nstatus unsupported no\n", PASS_FORWARD,
		      "unknown line kind 'check' (valid: info, sample, memory, status;", NULL);
	check_refused(HEADER "work benchdb\nstatus unsupported no\n", PASS_FORWARD,
		      "unknown line kind 'work'", NULL);
}

static void test_peer__work_lines_give_figures_per_phase_or_benchdbs(void **state)
{
	(void)state;
	struct peer_output out = parse_ok(HEADER2 "work fwd 1000 - \nwork bwd 2500 640\n" FB_SAMPLES
					  "status ok\n", PASS_FORWARD_BACKWARD);
	assert_false(out.work_benchdb);
	assert_int_equal(out.work_flops[PHASE_FWD], 1000);
	assert_int_equal(out.work_bytes[PHASE_FWD], -1);
	assert_int_equal(out.work_flops[PHASE_BWD], 2500);
	assert_int_equal(out.work_bytes[PHASE_BWD], 640);
	assert_int_equal(out.work_flops[PHASE_OPT], -1);
	peer_output_free(&out);
	out = parse_ok(HEADER2 "work benchdb\n" FB_SAMPLES "status ok\n", PASS_FORWARD_BACKWARD);
	assert_true(out.work_benchdb);
	peer_output_free(&out);
	/* none: unknown */
	out = parse_ok(HEADER2 FB_SAMPLES "status ok\n", PASS_FORWARD_BACKWARD);
	assert_false(out.work_benchdb);
	assert_int_equal(out.work_flops[PHASE_FWD], -1);
	peer_output_free(&out);

	check_refused(HEADER2 "work benchdb\nwork fwd 1 1\nstatus unsupported no\n", PASS_FORWARD,
		      "line 3", "a work line after 'work benchdb' (line 2)", NULL);
	check_refused(HEADER2 "work fwd 1 1\nwork benchdb\nstatus unsupported no\n", PASS_FORWARD,
		      "'work benchdb' after another work line (line 2)", NULL);
	check_refused(HEADER2 "work bwd 1 1\nstatus unsupported no\n", PASS_FORWARD,
		      "phase 'bwd' is not timed by pass forward (timed: fwd)", NULL);
	check_refused(HEADER2 "work fwd 1 1\nwork fwd 2 2\nstatus unsupported no\n", PASS_FORWARD,
		      "a second work line of phase fwd (the first is on line 2)", NULL);
	check_refused(HEADER2 "work fwd 1.5e9 1\nstatus unsupported no\n", PASS_FORWARD,
		      "FLOPS must be a non-negative integer or '-' (unknown), got '1.5e9'", NULL);
	check_refused(HEADER2 "work fwd\nstatus unsupported no\n", PASS_FORWARD,
		      "a work line is 'work benchdb' or 'work PHASE FLOPS BYTES'", NULL);
}

static void test_peer__a_persistent_case_block_has_no_header_and_counts_lines_on(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD);
	struct peer_output out;
	const char *block = "info torch 2.5\nsample 0 fwd 5\nsample 1 fwd 6\nsample 2 fwd 7\n"
			    "status ok\n";
	if (peer_parse_case_block(block, strlen(block), &p, 2, 0, 12, &out))
		fail_msg("%s", out.error);
	assert_int_equal(out.version, 2);
	assert_int_equal(out.status_line, 16);   /* the process's lines 12..16 */
	assert_int_equal(out.nsamples, 3);
	peer_output_free(&out);

	block = "sample 0 fwd 5\nsample 0 fwd 6\n";
	assert_int_equal(peer_parse_case_block(block, strlen(block), &p, 2, 0, 40, &out), BD_EINVAL);
	assert_contains(out.error, "line 41: 'sample 0 fwd 6': a second sample of iteration 0 phase "
			"fwd (the first is on line 40)");
	peer_output_free(&out);
	block = "benchdb-peer 2\nstatus unsupported no\n";
	assert_int_equal(peer_parse_case_block(block, strlen(block), &p, 2, 0, 7, &out), BD_EINVAL);
	assert_contains(out.error, "line 7: 'benchdb-peer 2': a second header line");
	peer_output_free(&out);
	/* the first case of a process: its header comes first (version 0: expected) */
	block = "benchdb-peer 2\nstatus unsupported no gpu\n";
	assert_int_equal(peer_parse_case_block(block, strlen(block), &p, 0, 0, 1, &out), 0);
	assert_int_equal(out.version, 2);
	assert_int_equal(out.status, STATUS_UNSUPPORTED);
	peer_output_free(&out);
	/* without it: the header a persistent peer must print is version 2's, not 1 */
	block = "status ok\n";
	assert_int_equal(peer_parse_case_block(block, strlen(block), &p, 0, 0, 1, &out), BD_EINVAL);
	assert_contains(out.error, "line 1: 'status ok': expected 'benchdb-peer 2' as the first "
			"line");
	peer_output_free(&out);
	assert_int_equal(peer_parse_case_block("", 0, &p, 0, 0, 1, &out), BD_EINVAL);
	assert_contains(out.error, "no output (expected 'benchdb-peer 2' as the first line)");
	peer_output_free(&out);
}

static void test_peer__ready_lines_belong_to_a_paced_case_only(void **state)
{
	(void)state;
	struct case_params p = params(PASS_FORWARD);
	struct peer_output out;
	const char *block = "ready\nsample 0 fwd 5\nready\nsample 1 fwd 6\nsample 2 fwd 7\nstatus ok\n";
	if (peer_parse_case_block(block, strlen(block), &p, 2, 1, 3, &out))
		fail_msg("%s", out.error);
	assert_int_equal(out.nsamples, 3);
	assert_int_equal(out.status_line, 8);
	peer_output_free(&out);
	assert_int_equal(peer_parse_case_block(block, strlen(block), &p, 2, 0, 3, &out), BD_EINVAL);
	assert_contains(out.error, "line 3: 'ready': a 'ready' line in a case that is not paced");
	peer_output_free(&out);
	block = "ready 2\nstatus ok\n";
	assert_int_equal(peer_parse_case_block(block, strlen(block), &p, 2, 1, 1, &out), BD_EINVAL);
	assert_contains(out.error, "line 1: 'ready 2': a ready line is 'ready' alone");
	peer_output_free(&out);
	/* version 1 knows no ready line */
	block = "benchdb-peer 1\nready\nstatus ok\n";
	assert_int_equal(peer_parse_output(block, strlen(block), &p, &out), BD_EINVAL);
	assert_contains(out.error, "unknown line kind 'ready'");
	peer_output_free(&out);
}

static void test_peer__text_from_a_peer_is_made_printable(void **state)
{
	(void)state;
	char s[64];
	snprintf(s, sizeof(s), "red \x1b[31mtext\x07 \xc2\x9b" "2J caf\xc3\xa9 \xff\xc3(");
	peer_text_clean(s);
	/* ESC, BEL, the C1 CSI (two bytes, one '?' each), 0xff and a broken sequence: all '?' */
	assert_string_equal(s, "red ?[31mtext? ??2J caf\xc3\xa9 ?" "?(");   /* (no trigraph) */
	/* well-formed in shape but refused by RFC 3629 (a JSON reader or a database's UTF-8 check
	 * would fail on them): a UTF-16 surrogate, overlong forms of '/', a code point beyond
	 * U+10FFFF, an F5 lead; the largest 3- and 4-byte code points stay */
	snprintf(s, sizeof(s), "a\xed\xa0\x80 b\xe0\x80\xaf c\xf0\x80\x80\xaf d\xf4\x90\x80\x80 "
		 "e\xf5\x80\x80\x80 \xef\xbf\xbd\xf4\x8f\xbf\xbf");
	peer_text_clean(s);
	assert_string_equal(s, "a??? b??? c???" "? d???" "? e???" "? \xef\xbf\xbd\xf4\x8f\xbf\xbf");
	/* bidirectional formatting characters (a right-to-left override, an isolate, a mark) would
	 * show the text after them reordered: each byte a '?'; a hyphen beside them stays */
	snprintf(s, sizeof(s), "ok\xe2\x80\xae" "cba \xe2\x81\xa7" "x \xd8\x9c" "y \xe2\x80\x90");
	peer_text_clean(s);
	assert_string_equal(s, "ok???cba ???x ??y \xe2\x80\x90");
}

static void test_peer__free_accepts_null_and_errors_leave_nothing_to_free(void **state)
{
	(void)state;
	peer_output_free(NULL);
	struct case_params p = params(PASS_FORWARD);
	p.iters = 0;   /* not a case the sweep parser would give */
	struct peer_output out;
	const char *text = HEADER "status ok\n";
	assert_int_equal(peer_parse_output(text, strlen(text), &p, &out), BD_EINVAL);
	assert_contains(out.error, "out of range");
	peer_output_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer__good_output_gives_every_sample_iteration_major),
		cmocka_unit_test(test_peer__train_step_has_three_phases_and_forward_one),
		cmocka_unit_test(test_peer__non_ok_status_keeps_its_reason_and_drops_samples),
		cmocka_unit_test(test_peer__bad_header_or_version_is_refused),
		cmocka_unit_test(test_peer__unknown_line_kind_quotes_the_line),
		cmocka_unit_test(test_peer__bad_phase_is_refused),
		cmocka_unit_test(test_peer__ns_must_be_a_positive_integer),
		cmocka_unit_test(test_peer__duplicate_sample_names_both_lines),
		cmocka_unit_test(test_peer__missing_sample_is_refused_for_status_ok),
		cmocka_unit_test(test_peer__sample_beyond_the_iterations_is_refused),
		cmocka_unit_test(test_peer__missing_status_is_truncated_output),
		cmocka_unit_test(test_peer__status_must_be_last_and_known),
		cmocka_unit_test(test_peer__info_object_is_kept_as_printed),
		cmocka_unit_test(test_peer__info_object_must_be_one_valid_json_object),
		cmocka_unit_test(test_peer__check_lines_keep_the_worst_and_say_when_one_fails),
		cmocka_unit_test(test_peer__bad_check_lines_are_refused),
		cmocka_unit_test(test_peer__work_lines_give_figures_per_phase_or_benchdbs),
		cmocka_unit_test(test_peer__a_persistent_case_block_has_no_header_and_counts_lines_on),
		cmocka_unit_test(test_peer__ready_lines_belong_to_a_paced_case_only),
		cmocka_unit_test(test_peer__text_from_a_peer_is_made_printable),
		cmocka_unit_test(test_peer__free_accepts_null_and_errors_leave_nothing_to_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
