/* common/opt.c: table-driven option parsing and usage text. */
#include "opt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct cmd_line {
	int argc;
	char **argv;         /* as written: argv[0] is the command's name */
	char **args;         /* opt_parse_command's copy of argv[1..], positional arguments first */
	/* opt_dispatch's reading: argv[1..leading] were written before the command word.
	 * not_command: the parse found that the option written just before the command word takes
	 * a value (so the word is that value), or that an option written before it is unknown to
	 * this command while a later word names another command (whose option it may be, the word
	 * being its value); then opt_dispatch reads the command line another way, if retry (another
	 * way is left) allows. */
	int leading;
	int retry;           /* 0: none; 1: a later command word or a fallback; 2: a later word;
			      * 3: this is the fallback, tried after a command word that an option
			      * unknown to its command may have taken as its value */
	int not_command;
};

static const struct opt_spec *find_long(const struct opt_spec *s, const char *name, size_t n)
{
	for (; s->name; s++)
		if (strlen(s->name) == n && !strncmp(s->name, name, n))
			return s;
	return NULL;
}

static const struct opt_spec *find_short(const struct opt_spec *s, char c)
{
	for (; s->name; s++)
		if (s->short_name && s->short_name == c)
			return s;
	return NULL;
}

static int store(const struct opt_spec *s, const char *value, struct bd_error *err)
{
	char *end;
	switch (s->kind) {
	case OPT_FLAG:
		*(int *)s->dest = 1;
		return 0;
	case OPT_STRING:
		*(const char **)s->dest = value;
		return 0;
	case OPT_INT: {
		errno = 0;
		long v = strtol(value, &end, 10);
		if (errno || end == value || *end)
			return bd_fail(err, BD_EINVAL, "option '--%s' expects an integer, got '%s'",
				       s->name, value);
		*(long *)s->dest = v;
		return 0;
	}
	case OPT_DOUBLE:
	case OPT_PERCENT: {
		errno = 0;
		double v = strtod(value, &end);
		/* decimal only: strtod reads hexadecimal too, and --threshold 0x10 was 16% */
		if (errno || end == value || *end || strpbrk(value, "xX"))
			return bd_fail(err, BD_EINVAL, "option '--%s' expects a number, got '%s'",
				       s->name, value);
		*(double *)s->dest = s->kind == OPT_PERCENT ? v / 100 : v;
		return 0;
	}
	case OPT_LIST: {
		struct opt_list *l = s->dest;
		if (l->n >= (int)(sizeof(l->items) / sizeof(l->items[0])))
			return bd_fail(err, BD_EINVAL, "option '--%s' given too many times", s->name);
		l->items[l->n++] = value;
		return 0;
	}
	}
	return bd_fail(err, BD_EINVAL, "internal: bad option kind");
}

/* opt_parse, with the dispatch reading of line (NULL: none) kept up to date. */
static int parse(const struct opt_spec *specs, struct cmd_line *line, int argc, char **argv,
		 int *npos, struct bd_error *err)
{
	struct cmd_line none = {0};
	struct cmd_line *dispatch = line ? line : &none;
	int pos = 0;
	int only_positional = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_positional || a[0] != '-' || !a[1]) {
			argv[pos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_positional = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return 1;
		const struct opt_spec *s;
		const char *value = NULL;
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			s = find_long(specs, name, n);
			/* unknown to this command: the word after it may be its value in another
			 * reading (`report --group-by warmup`: table's option, not warmup's) */
			if (!s && ((i <= dispatch->leading && dispatch->retry == 2) ||
				   (i == dispatch->leading && dispatch->retry && !eq) ||
				   dispatch->retry == 3))
				dispatch->not_command = 1;
			if (!s)
				return bd_fail(err, BD_EINVAL, "unknown option '--%.*s' (see --help)", (int)n,
					       name);
			if (eq)
				value = eq + 1;
		} else {
			s = find_short(specs, a[1]);
			if (!s && ((i <= dispatch->leading && dispatch->retry == 2) ||
				   (i == dispatch->leading && dispatch->retry && !a[2]) ||
				   dispatch->retry == 3))
				dispatch->not_command = 1;
			if (!s || a[2])
				return bd_fail(err, BD_EINVAL, "unknown option '%s' (see --help)", a);
		}
		if (s->kind == OPT_FLAG) {
			if (value)
				return bd_fail(err, BD_EINVAL, "option '--%s' takes no value", s->name);
		} else if (!value) {
			if (i == dispatch->leading) {
				dispatch->not_command = 1;
				return bd_fail(err, BD_EINVAL, "option '--%s' needs a value (%s) before "
					       "the command", s->name, s->value_name ? s->value_name : "VALUE");
			}
			if (i + 1 >= argc)
				return bd_fail(err, BD_EINVAL, "option '--%s' needs a value (%s)", s->name,
					       s->value_name ? s->value_name : "VALUE");
			value = argv[++i];
		}
		int rc = store(s, value, err);
		if (rc)
			return rc;
	}
	*npos = pos;
	return 0;
}

int opt_parse(const struct opt_spec *specs, int argc, char **argv, int *npos, struct bd_error *err)
{
	return parse(specs, NULL, argc, argv, npos, err);
}

void opt_usage(struct strbuf *sb, const struct cmd_usage *u, const struct opt_spec *specs)
{
	if (u->cmd)
		sb_addf(sb, "usage: %s %s %s\n\n%s\n\noptions:\n", u->prog, u->cmd, u->synopsis, u->summary);
	else
		sb_addf(sb, "usage: %s %s\n\n%s\n\noptions:\n", u->prog, u->synopsis, u->summary);
	for (const struct opt_spec *s = specs; s->name; s++) {
		struct strbuf left = STRBUF_INIT;
		if (s->short_name)
			sb_addf(&left, "-%c, ", s->short_name);
		sb_addf(&left, "--%s", s->name);
		if (s->value_name)
			sb_addf(&left, " %s", s->value_name);
		sb_addf(sb, "  %-24s %s\n", sb_str(&left), s->help);
		sb_free(&left);
	}
	sb_addf(sb, "  %-24s %s\n", "-h, --help", "show this help");
}

int opt_parse_command(struct cmd_line *line, const struct opt_spec *specs,
		      const struct cmd_usage *u, int min_pos, int max_pos, char ***args, int *npos)
{
	struct bd_error err;
	struct strbuf sb = STRBUF_INIT;
	/* parse a copy, so that cmd_line_words stays the command line as written */
	free(line->args);
	line->args = xcalloc((size_t)line->argc + 1, sizeof(*line->args));
	memcpy(line->args, line->argv, (size_t)line->argc * sizeof(*line->args));
	char **argv = line->args;
	int rc = parse(specs, line, line->argc, argv, npos, &err);
	int status = -1;
	if (args)
		*args = argv;
	if (rc < 0 && line->not_command && line->retry) {
		status = EXIT_USAGE;   /* quietly: opt_dispatch reads the command line another way */
	} else if (rc == 1) {
		opt_usage(&sb, u, specs);
		fputs(sb_str(&sb), stdout);
		status = EXIT_OK;
	} else if (rc < 0 || *npos < min_pos || *npos > max_pos) {
		if (rc < 0)
			sb_addf(&sb, "%s %s: %s\n", u->prog, u->cmd ? u->cmd : "", err.msg);
		else if (*npos < min_pos)
			sb_addf(&sb, "%s %s: missing argument (%s)\n", u->prog, u->cmd ? u->cmd : "",
				u->synopsis);
		else
			sb_addf(&sb, "%s %s: unexpected argument '%s'\n", u->prog, u->cmd ? u->cmd : "",
				argv[max_pos]);
		opt_usage(&sb, u, specs);
		fputs(sb_str(&sb), stderr);
		status = EXIT_USAGE;
	}
	sb_free(&sb);
	return status;
}

char *const *cmd_line_words(const struct cmd_line *line, int *argc)
{
	*argc = line->argc;
	return line->argv;
}

/* Run fn on argv as line (its dispatch reading set by the caller); frees the parse's copy. */
static int line_run(int (*fn)(struct cmd_line *line), struct cmd_line *line, int argc, char **argv)
{
	line->argc = argc;
	line->argv = argv;
	int status = fn(line);
	free(line->args);
	line->args = NULL;
	return status;
}

int cmd_line_run(int (*fn)(struct cmd_line *line), int argc, char **argv)
{
	struct cmd_line line = {0};
	return line_run(fn, &line, argc, argv);
}

static const struct opt_command *command_find(const struct opt_command *commands, const char *name)
{
	for (const struct opt_command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void commands_valid(FILE *out, const char *prog, const char *what, const char *word,
			   const struct opt_command *commands)
{
	fprintf(out, "%s: %s%s%s%s (valid:", prog, what, word ? " '" : "", word ? word : "",
		word ? "'" : "");
	for (const struct opt_command *c = commands; c->name; c++)
		fprintf(out, "%s %s", c == commands ? "" : ",", c->name);
	fprintf(out, ")\n");
}

int opt_dispatch(const char *prog, const struct opt_command *commands,
		 const struct opt_command *fallback, int argc, char **argv)
{
	if (argc >= 2 && argv[1][0] != '-' && !command_find(commands, argv[1])) {
		commands_valid(stderr, prog, "unknown command", argv[1], commands);
		return EXIT_USAGE;
	}
	char **args = xmalloc((size_t)(argc + 1) * sizeof(*args));
	int status = -1, end = 1, unknown_before = 0;   /* the command word an unknown option preceded */
	while (end < argc && strcmp(argv[end], "--"))
		end++;
	for (int k = 1; k < end && status < 0; k++) {
		const struct opt_command *c = command_find(commands, argv[k]);
		if (!c)
			continue;
		int later_word = 0;
		for (int j = k + 1; j < end && !later_word; j++)
			later_word = command_find(commands, argv[j]) != NULL;
		/* argv[k] first, then what was written before it, then what was written after it */
		int n = 0;
		args[n++] = argv[k];
		for (int j = 1; j < argc; j++)
			if (j != k)
				args[n++] = argv[j];
		args[n] = NULL;
		struct cmd_line line = {.leading = k - 1,
					.retry = later_word ? 2 : fallback ? 1 : 0};
		status = line_run(c->fn, &line, n, args);
		if (line.not_command && line.retry) {
			status = -1;   /* argv[k] was an option's value */
			if (!later_word && !unknown_before)
				unknown_before = k;
		}
	}
	if (status < 0 && fallback) {
		int n = 0;
		args[n++] = (char *)fallback->name;
		for (int j = 1; j < argc; j++)
			args[n++] = argv[j];
		args[n] = NULL;
		/* After a command word whose reading stopped at an option it does not know: the
		 * fallback, unless it does not know an option either; then that command says so
		 * (`report --nope warmup`: warmup's unknown option, not table's). */
		struct cmd_line line = {.retry = unknown_before ? 3 : 0};
		status = line_run(fallback->fn, &line, n, args);
		if (line.not_command && unknown_before) {
			const struct opt_command *c = command_find(commands, argv[unknown_before]);
			n = 0;
			args[n++] = argv[unknown_before];
			for (int j = 1; j < argc; j++)
				if (j != unknown_before)
					args[n++] = argv[j];
			args[n] = NULL;
			status = cmd_line_run(c->fn, n, args);
		}
	} else if (status < 0) {
		commands_valid(stderr, prog, "no command among the arguments", NULL, commands);
		status = EXIT_USAGE;
	}
	free(args);
	return status;
}
