/* tests/fuzz/fuzz_sweep.c: libFuzzer target for the sweep parser — sweep_parse and sweep_expand
 * on any text, as `runner run` reads it (tests/fuzz/README.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"
#include "sweep_limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > SWEEP_MAX_BYTES)   /* sweep_file_read refuses these before parsing */
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';   /* sweep_load refuses a text with a nul byte before parsing */
	struct sweep *s = NULL;
	struct sweep_cases cases = {0};
	struct bd_error err;
	if (!memchr(data, '\0', size) && sweep_parse("fuzz.yaml", text, &s, &err) == 0 &&
	    sweep_expand(s, &cases, &err) == 0)
		sweep_cases_free(&cases);
	sweep_free(s);
	free(text);
	return 0;
}
