/* runner/busy.c: --busy-timeout, which every runner command that opens a database takes. */
#include <stdio.h>

#include "commands.h"

int runner_busy_timeout(const char *command, long seconds)
{
	if (db_set_default_busy_timeout(seconds)) {
		fprintf(stderr, "runner %s: --busy-timeout expects seconds from 0 to %d, got %ld\n",
			command, DB_BUSY_TIMEOUT_MAX_S, seconds);
		return EXIT_USAGE;
	}
	return -1;
}
