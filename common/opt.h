/* common/opt.h: option tables. One table per command drives both parsing and --help. */
#ifndef BENCHDB_OPT_H
#define BENCHDB_OPT_H

#include "error.h"
#include "strbuf.h"

enum opt_kind {
	OPT_FLAG,   /* int *: set to 1 */
	OPT_STRING, /* const char **: points into argv */
	OPT_INT,    /* long *: decimal */
	OPT_DOUBLE, /* double * */
	OPT_PERCENT,/* double *: typed in percent, stored as a fraction ("5" is 0.05) */
	OPT_LIST,   /* struct opt_list *: every occurrence appended */
};

struct opt_list {
	const char *items[32];
	int n;
};

struct opt_spec {
	const char *name;       /* long name without dashes, e.g. "db" */
	char short_name;        /* 0 if none */
	enum opt_kind kind;
	const char *value_name; /* e.g. "PATH"; NULL for flags */
	const char *help;       /* one line */
	void *dest;
};

/* A command's usage: "usage: PROG CMD SYNOPSIS" then summary then the option table. */
struct cmd_usage {
	const char *prog;
	const char *cmd;      /* NULL for a program without subcommands */
	const char *synopsis; /* e.g. "[options] SWEEP.yaml" */
	const char *summary;  /* one paragraph */
};

/*
 * Parse argv[1..argc-1] (argv[0] is the command name) against specs (terminated by a zeroed
 * entry). Positional arguments are moved, in order, to argv[0..*npos-1]. Returns 0, 1 when
 * --help/-h was given, or BD_EINVAL with err filled ("unknown option '--x'", ...).
 */
int opt_parse(const struct opt_spec *specs, int argc, char **argv, int *npos, struct bd_error *err);
/* Append the usage text (synopsis, summary, options) to sb. */
void opt_usage(struct strbuf *sb, const struct cmd_usage *u, const struct opt_spec *specs);

/* A command's command line as opt_dispatch (or cmd_line_run) hands it to the command. Opaque: a
 * command reaches its arguments only through opt_parse_command, which reads them against the
 * command's option table — and, while opt_dispatch is still finding the command word, tells it
 * when the word was in fact an option's value (opt_dispatch). So "parse the options first" is
 * not a rule a command must remember: it has nothing else to read. */
struct cmd_line;

/*
 * What every command does first: parse line against specs, and on --help print the usage to
 * stdout (returns EXIT_OK); on a bad option or a positional count outside [min_pos, max_pos] print
 * the problem and the usage to stderr (returns EXIT_USAGE). Returns -1 when the command should go
 * on, with the positional arguments, in order, at (*args)[0..*npos-1] (owned by line; args may be
 * NULL for a command that takes none).
 */
int opt_parse_command(struct cmd_line *line, const struct opt_spec *specs,
		      const struct cmd_usage *u, int min_pos, int max_pos, char ***args, int *npos);
/* The command line as written, words[0] the command's name, *argc of them: for a record of it
 * (a run's command_line, a writeup's provenance), never for parsing. */
char *const *cmd_line_words(const struct cmd_line *line, int *argc);

/* A program's command table row: `PROG [options] NAME [options] [args]` runs fn. */
struct opt_command {
	const char *name;
	int (*fn)(struct cmd_line *line);   /* returns the exit status */
	const char *help;
};

/* Run fn with argv[0..argc-1] (argv[0] the command's name) as its command line, as written: no
 * command word to find. Returns fn's exit status. */
int cmd_line_run(int (*fn)(struct cmd_line *line), int argc, char **argv);

/*
 * Run the command argv[1..] names (commands ends with a zeroed row). Options written before the
 * command word are the command's own, as if written right after it: `report --db x.db runs` is
 * `report runs --db x.db`. The command word is the first argument that names a command and is not
 * the value of an option written before it: `report --run warmup` selects the run labelled
 * warmup, `runner --label list run s.yaml` runs with the label list. Whether an option takes a
 * value is its command's table's say, so opt_dispatch asks the command itself: it calls it with a
 * struct cmd_line that carries this reading, and the command's opt_parse_command returns quietly
 * when the word was a value (or when an option before the word is unknown to it and a later word
 * names a command, or the option right before the word is unknown to it and fallback may take
 * the word as its value: `report --group-by warmup` is table's; where fallback does not know an
 * option either, the command word's reading reports it); the command has not started anything, since opt_parse_command is the only
 * way to its arguments. Without a command word, fallback (may be NULL)
 * runs with every argument. Returns the command's exit status; prints the problem and returns
 * EXIT_USAGE when argv[1] is a word that names no command, or when argv names no command and
 * there is no fallback.
 */
int opt_dispatch(const char *prog, const struct opt_command *commands,
		 const struct opt_command *fallback, int argc, char **argv);

#endif
