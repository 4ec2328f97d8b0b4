/* scripts/json_libs/bench.c: Debian 12's C JSON libraries compared for benchdb's peer protocol —
 * RFC 8259 strictness probes and parse speed on peer-like lines, in interleaved rounds (run.sh). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "scanner_old.inc"   /* the hand-written validator jansson replaced (runner/peer.c before) */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Each returns 0 when valid, else -1 with *pos (byte offset, -1 unknown) and msg. */
typedef int (*parse_fn)(const char *s, size_t len, long *pos, char *msg, size_t n);

static int p_scanner(const char *s, size_t len, long *pos, char *msg, size_t n)
{
	struct json_scan J = {.p = s, .end = s + len};
	json_skip_space(&J);
	if (J.p < J.end && *J.p == '{')
		json_container(&J);
	else
		json_fail(&J, "not an object");
	json_skip_space(&J);
	if (!J.why && J.p != J.end)
		json_fail(&J, "something follows the object");
	if (J.why) {
		*pos = J.p - s;
		snprintf(msg, n, "%s", J.why);
		return -1;
	}
	return 0;
}

int p_jansson(const char *s, size_t len, long *pos, char *msg, size_t n);

int p_jsonc(const char *s, size_t len, long *pos, char *msg, size_t n);

int p_cjson(const char *s, size_t len, long *pos, char *msg, size_t n);

int p_yajl(const char *s, size_t len, long *pos, char *msg, size_t n);

int p_jsonparser(const char *s, size_t len, long *pos, char *msg, size_t n);

static const struct lib {
	const char *name;
	parse_fn fn;
} libs[] = {
	{"scanner(validate only)", p_scanner}, {"jansson 2.14", p_jansson},
	{"json-c 0.16", p_jsonc}, {"cJSON 1.7.15", p_cjson}, {"yajl 2.1.0", p_yajl},
	{"json-parser 1.1.0", p_jsonparser},
};
#define NLIBS (sizeof(libs) / sizeof(libs[0]))

/* peer-like lines: the pytorch peer's info object, a small info object, a params JSON, a check */
static const char *lines[] = {
	"{\"torch\": \"2.15.0+cu132\", \"python\": \"3.11.7\", \"interpreter\": \"/work/venv-torch/bin/python\", \"threads\": 2, \"interop_threads\": 2, \"set_threads\": 2, \"compile\": false, \"blas\": \"mkl\", \"mkl\": \"2024.2-Product Build 20240605\", \"mkl_available\": true, \"onednn\": \"3.13.3\", \"mkldnn_enabled\": true, \"openmp\": \"201511\", \"cpu_capability\": \"AVX512\", \"cxx_compiler\": \"GCC 13.3\"}",
	"{\"peer\": \"fake_ok.sh\", \"seq_len\": 32}",
	"{\"batch_size\":1,\"causal\":false,\"device\":\"cpu\",\"dtype\":\"float32\",\"head_dim\":8,\"heads\":2,\"impl\":\"fake\",\"iters\":3,\"mem_limit\":1073741824,\"pass\":\"forward_backward\",\"seed\":0,\"seq_len\":32,\"suite\":\"attention\",\"sync\":true,\"tf32\":false,\"warmup\":2,\"backend\":\"flash\"}",
	"{\"torch\": \"2.5.1\", \"cuda\": \"12.4\", \"cudnn\": 90100, \"device\": \"NVIDIA H100 80GB HBM3\", \"capability\": [9, 0], \"sdpa_backends\": {\"flash\": true, \"efficient\": true, \"cudnn\": true, \"math\": true}, \"note\": \"caf\\u00e9 \xc3\xa9t\xc3\xa9\"}",
};
#define NLINES (sizeof(lines) / sizeof(lines[0]))

static const struct probe {
	const char *what, *text;
	int valid;   /* what RFC 8259 says */
} probes[] = {
	{"plain object", "{\"a\": 1}", 1},
	{"trailing comma", "{\"a\": 1,}", 0},
	{"NaN", "{\"a\": NaN}", 0},
	{"Infinity", "{\"a\": Infinity}", 0},
	{"comment", "{\"a\": 1 /* x */}", 0},
	{"single quotes", "{'a': 1}", 0},
	{"unquoted key", "{a: 1}", 0},
	{"leading zero", "{\"a\": 01}", 0},
	{"hex number", "{\"a\": 0x10}", 0},
	{"+1", "{\"a\": +1}", 0},
	{"1.", "{\"a\": 1.}", 0},
	{".5", "{\"a\": .5}", 0},
	{"control char in string", "{\"a\": \"x\ty\"}", 0},
	{"invalid UTF-8 (\\xff)", "{\"a\": \"\xff\"}", 0},
	{"overlong UTF-8 (\\xc0\\xaf)", "{\"a\": \"\xc0\xaf\"}", 0},
	{"UTF-8 surrogate (\\xed\\xa0\\x80)", "{\"a\": \"\xed\xa0\x80\"}", 0},
	{"truncated UTF-8", "{\"a\": \"\xe2\x82\"}", 0},
	{"lone \\ud800 escape", "{\"a\": \"\\ud800\"}", 1},
	{"\\u0000 escape", "{\"a\": \"x\\u0000y\"}", 1},
	{"bad escape \\x", "{\"a\": \"\\x41\"}", 0},
	{"trailing garbage", "{\"a\": 1} x", 0},
	{"two objects", "{\"a\": 1}{}", 0},
	{"duplicate key", "{\"a\": 1, \"a\": 2}", 1},
	{"int64 max", "{\"a\": 9223372036854775807}", 1},
	{"int64 max + 1", "{\"a\": 9223372036854775808}", 1},
	{"1e400", "{\"a\": 1e400}", 1},
	{"depth 17", "{\"a\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}", 1},
	{"true as TRUE", "{\"a\": TRUE}", 0},
	{"empty", "", 0},
};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 15, reps = argc > 2 ? atoi(argv[2]) : 20000;
	long pos;
	char msg[256];

	printf("== strictness (A = accepted, r = rejected; * = differs from RFC 8259)\n%-34s", "");
	for (size_t l = 0; l < NLIBS; l++)
		printf(" %-10.10s", libs[l].name);
	printf("\n");
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		printf("%-34s", probes[i].what);
		for (size_t l = 0; l < NLIBS; l++) {
			int ok = libs[l].fn(probes[i].text, strlen(probes[i].text), &pos, msg, sizeof(msg)) == 0;
			printf(" %s%-9s", ok ? "A" : "r", ok != probes[i].valid ? "*" : "");
		}
		printf("\n");
	}
	printf("\n== error messages for {\"a\": [1, 2,, 3]}\n");
	for (size_t l = 0; l < NLIBS; l++) {
		const char *t = "{\"a\": [1, 2,, 3]}";
		pos = -2;
		msg[0] = 0;
		libs[l].fn(t, strlen(t), &pos, msg, sizeof(msg));
		printf("%-24s pos %ld: %s\n", libs[l].name, pos, msg);
	}

	/* speed: every round runs every library (order rotated) over reps x NLINES lines */
	double best[NLIBS], all[NLIBS][64];
	size_t bytes = 0;
	for (size_t k = 0; k < NLINES; k++)
		bytes += strlen(lines[k]);
	for (int r = 0; r < rounds && r < 64; r++) {
		for (size_t j = 0; j < NLIBS; j++) {
			size_t l = (j + (size_t)r) % NLIBS;
			int64_t t0 = now_ns();
			for (int i = 0; i < reps; i++)
				for (size_t k = 0; k < NLINES; k++)
					if (libs[l].fn(lines[k], strlen(lines[k]), &pos, msg, sizeof(msg)))
						printf("%s rejects line %zu: %s\n", libs[l].name, k, msg), exit(1);
			all[l][r] = (double)(now_ns() - t0) / ((double)reps * NLINES);
		}
	}
	printf("\n== parse speed: %zu peer-like lines (%zu bytes, mean %zu), %d reps each, %d interleaved rounds\n",
	       NLINES, bytes, bytes / NLINES, reps, rounds);
	printf("%-24s %12s %12s %10s\n", "library", "median ns", "min ns", "MB/s(med)");
	for (size_t l = 0; l < NLIBS; l++) {
		double v[64];
		memcpy(v, all[l], sizeof(double) * (size_t)rounds);
		for (int a = 0; a < rounds; a++)
			for (int b = a + 1; b < rounds; b++)
				if (v[b] < v[a]) {
					double t = v[a];
					v[a] = v[b];
					v[b] = t;
				}
		best[l] = v[rounds / 2];
		printf("%-24s %12.0f %12.0f %10.1f\n", libs[l].name, v[rounds / 2], v[0],
		       (double)bytes / NLINES / v[rounds / 2] * 1e3);
	}
	printf("ratios to jansson (median): ");
	for (size_t l = 0; l < NLIBS; l++)
		printf("%s %.2f; ", libs[l].name, best[l] / best[1]);
	printf("\n");
	return 0;
}
