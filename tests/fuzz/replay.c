/* tests/fuzz/replay.c: run a fuzz target's LLVMFuzzerTestOneInput on every file of the given
 * directories — the corpus and every crash input ever found — as an ordinary test in every build
 * (no clang needed), so that what the fuzzer once found stays fixed (tests/fuzz/README.md). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	size_t n = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			fprintf(stderr, "replay: cannot open directory '%s'\n", argv[i]);
			return 1;
		}
		for (struct dirent *e; (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			struct strbuf path = STRBUF_INIT;
			sb_addf(&path, "%s/%s", argv[i], e->d_name);
			size_t len = 0;
			char *data = read_file(sb_str(&path), &len);
			if (!data) {
				fprintf(stderr, "replay: cannot read '%s'\n", sb_str(&path));
				closedir(d);
				sb_free(&path);
				return 1;
			}
			LLVMFuzzerTestOneInput((const uint8_t *)data, len);
			free(data);
			sb_free(&path);
			n++;
		}
		closedir(d);
	}
	printf("replay: %zu inputs, no crash\n", n);
	return 0;
}
