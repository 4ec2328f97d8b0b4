/* tests/fuzz/fuzz_peer_output.c: libFuzzer target for the peer-output parser
 * (peer_parse_output, schemas/peer-protocol.md) on any bytes a peer could print, for a case whose
 * pass, warm-up and iteration count come from the input's first byte (tests/fuzz/README.md).
 * Text that starts with "#block\n" (a comment line for the whole-output parse) is parsed as one
 * case of a persistent peer instead (peer_parse_case_block, version 2, from line 7), and with
 * "#paced\n" as a paced case (its `ready` lines valid). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "peer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct case_params p;
	memset(&p, 0, sizeof(p));
	unsigned shape = size ? data[0] : 0;
	static const enum bd_pass passes[] = {PASS_FORWARD, PASS_BACKWARD, PASS_FORWARD_BACKWARD,
					      PASS_TRAIN_STEP};
	p.suite = shape & 0x80 ? SUITE_E2E : SUITE_ATTENTION;
	snprintf(p.impl, sizeof(p.impl), "peer");
	p.pass = passes[shape & 3];
	p.warmup = (shape >> 2) & 3;
	p.iters = 1 + ((shape >> 4) & 7);
	struct peer_output out;
	memset(&out, 0, sizeof(out));
	const char *text = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0;
	static const char block[] = "#block\n", paced[] = "#paced\n";
	_Static_assert(sizeof(block) == sizeof(paced), "the two prefixes are as long");
	int is_block = len >= sizeof(block) - 1 && !memcmp(text, block, sizeof(block) - 1);
	int is_paced = len >= sizeof(paced) - 1 && !memcmp(text, paced, sizeof(paced) - 1);
	if (is_block || is_paced)
		peer_parse_case_block(text + sizeof(block) - 1, len - (sizeof(block) - 1), &p, 2,
				      is_paced, 7, &out);
	else
		peer_parse_output(text, len, &p, &out);
	peer_output_free(&out);
	return 0;
}
