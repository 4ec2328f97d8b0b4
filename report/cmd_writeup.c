/* report/cmd_writeup.c: placeholder until `report writeup` lands (it is being written). */
#include <stdio.h>

#include "report.h"

int cmd_writeup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "report writeup: not available in this build yet\n");
	return EXIT_FAIL;
}
