/* common/cli.c: the command dispatcher both programs share (cli.h). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "xalloc.h"

static void usage(FILE *out, const struct cli_program *p)
{
	fprintf(out, "usage: %s [options] %s [options]\n\n%s\n\ncommands:\n", p->name,
		p->fallback ? "[COMMAND]" : "COMMAND", p->summary);
	for (const struct opt_command *c = p->commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->help);
	fprintf(out, "\n'%s COMMAND --help' describes a command's options. Options may also come\n"
		     "before the command: '%s %s' is '%s %s'.\n",
		p->name, p->name, p->example_before, p->name, p->example_after);
}

static const struct opt_command *command_named(const struct cli_program *p, const char *name)
{
	for (const struct opt_command *c = p->commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* argv[i] is the shorthand option (alone, its value in argv[i + 1], or "--option=value"): run its
 * command with the other arguments, the option turned into the command's own. */
static int run_shorthand(const struct cli_program *p, int i, int argc, char **argv)
{
	const struct cli_shorthand *s = p->shorthand;
	const struct opt_command *c = command_named(p, s->command);
	size_t len = strlen(s->option);
	if (!c) {
		fprintf(stderr, "%s: internal: no command '%s' for %s\n", p->name, s->command, s->option);
		return EXIT_FAIL;
	}
	char **args = xmalloc((size_t)(argc + 2) * sizeof(*args));
	int n = 0;
	args[n++] = (char *)c->name;
	for (int j = 1; j < argc; j++) {
		if (j != i) {
			args[n++] = argv[j];
		} else {
			args[n++] = (char *)s->as;   /* its value follows (missing: the command says so) */
			if (argv[j][len] == '=')
				args[n++] = argv[j] + len + 1;
		}
	}
	args[n] = NULL;
	int status = cmd_line_run(c->fn, n, args);
	free(args);
	return status;
}

int cli_main(const struct cli_program *p, int argc, char **argv)
{
	if (argc < 2 && !p->fallback) {
		usage(stderr, p);
		return EXIT_USAGE;
	}
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "help"))) {
		usage(stdout, p);
		return EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("%s (benchdb) %s\n", p->name, p->version);
		return EXIT_OK;
	}
	if (p->shorthand && argc >= 2 && argv[1][0] == '-') {
		size_t len = strlen(p->shorthand->option);
		for (int i = 1; i < argc; i++)
			if (!strncmp(argv[i], p->shorthand->option, len) &&
			    (argv[i][len] == '\0' || argv[i][len] == '='))
				return run_shorthand(p, i, argc, argv);
	}
	return opt_dispatch(p->name, p->commands, p->fallback, argc, argv);
}
