/* report/cmd_plot.c: placeholder until `report plot` lands (it is being written). */
#include <stdio.h>

#include "report.h"

int cmd_plot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "report plot: not available in this build yet\n");
	return EXIT_FAIL;
}
