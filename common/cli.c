/* common/cli.c: the command dispatcher both programs share (cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int run_program(const struct cli_program *p, int argc, char **argv);

/* Standard output goes through write_stdout (a stdio cookie stream over fd 1), so that the reason
 * of the first failed write is kept: stdio keeps only a flag, and errno is long gone at exit. */
static int stdout_errno;
/* cli_stdout_pipe_may_close: a closed pipe on standard output is no failure of the command */
static int stdout_pipe_may_close;

void cli_stdout_pipe_may_close(void)
{
	stdout_pipe_may_close = 1;
}

static ssize_t write_stdout(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {   /* stdio takes fewer than n bytes (0 included) as the error */
			if (!stdout_errno)
				stdout_errno = w < 0 ? errno : EIO;
			return (ssize_t)done;   /* never negative (fopencookie(3)): stdio would
						 * miscount and read past its buffer */
		}
		done += (size_t)w;
	}
	return (ssize_t)n;
}

static int close_stdout_fd(void *cookie)
{
	(void)cookie;
	if (close(STDOUT_FILENO) != 0 && errno != EINTR) {
		if (!stdout_errno)
			stdout_errno = errno;
		return -1;
	}
	return 0;
}

static void open_stdout(void)
{
	static const cookie_io_functions_t io = {.write = write_stdout, .close = close_stdout_fd};
	FILE *f = fopencookie(NULL, "w", io);
	if (!f)
		return;   /* stdio's own stream: the check below still sees a failure, not its reason */
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	fflush(stdout);
	stdout = f;
}

/* status, or a failure when standard output could not be written (a full disk, /dev/full, an
 * I/O error at close): what reached it may be truncated, which must never look like success —
 * nor like a verdict (regress's 2, "cannot tell", points at notes that were lost): exit 1,
 * except an interrupt (128 + the signal), which already says the output is partial. */
static int close_stdout(const char *prog, int status)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);
	bad |= fclose(stdout) != 0;
	if (!bad)
		return status;
	if (stdout_errno == EPIPE && stdout_pipe_may_close)   /* the reader stopped reading */
		return status;
	fprintf(stderr, "%s: cannot write standard output: %s\n", prog,
		stdout_errno ? strerror(stdout_errno) : "a write failed");
	return status > 128 ? status : EXIT_FAIL;
}

int cli_main(const struct cli_program *p, int argc, char **argv)
{
	open_stdout();
	return close_stdout(p->name, run_program(p, argc, argv));
}

static int run_program(const struct cli_program *p, int argc, char **argv)
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
