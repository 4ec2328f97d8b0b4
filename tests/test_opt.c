/* tests/test_opt.c: opt_dispatch — options written before the command word are the command's
 * own, the command word is the first word that is not an option's value, and what happens
 * without one. Two fake commands record what they parsed. Also OPT_PERCENT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "opt.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* What the last command that got past its option parsing saw. */
static struct {
	const char *cmd, *db, *label, *arg;
	int flag, calls;
} seen;

/* show [--db PATH] [--flag] [ARG] */
static int cmd_show(struct cmd_line *line)
{
	const char *db = NULL;
	int flag = 0, npos = 0;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database", &db},
		{"flag", 'f', OPT_FLAG, NULL, "a flag", &flag},
		{0},
	};
	static const struct cmd_usage usage = {"prog", "show", "[options] [ARG]", "Show."};
	char **argv = NULL;
	int status = opt_parse_command(line, specs, &usage, 0, 1, &argv, &npos);
	if (status >= 0)
		return status;
	seen.calls++;
	seen.cmd = "show";
	seen.db = db;
	seen.flag = flag;
	seen.label = NULL;
	seen.arg = npos ? argv[0] : NULL;
	return 0;
}

/* tag [--db PATH] [--label TEXT] */
static int cmd_tag(struct cmd_line *line)
{
	const char *db = NULL, *label = NULL;
	int npos = 0;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database", &db},
		{"label", 'l', OPT_STRING, "TEXT", "label", &label},
		{0},
	};
	static const struct cmd_usage usage = {"prog", "tag", "[options]", "Tag."};
	int status = opt_parse_command(line, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0)
		return status;
	seen.calls++;
	seen.cmd = "tag";
	seen.db = db;
	seen.label = label;
	seen.flag = 0;
	seen.arg = NULL;
	return 0;
}

static const struct opt_command commands[] = {
	{"show", cmd_show, "show"},
	{"tag", cmd_tag, "tag"},
	{NULL, NULL, NULL},
};

/* Run "prog" + words with or without show as the fallback; returns the exit status. */
static int dispatch(int with_fallback, int argc, const char *const *words)
{
	char *argv[16];
	assert_true(argc < 15);
	argv[0] = "prog";
	for (int i = 0; i < argc; i++)
		argv[i + 1] = (char *)words[i];
	argv[argc + 1] = NULL;
	memset(&seen, 0, sizeof(seen));
	return opt_dispatch("prog", commands, with_fallback ? &commands[0] : NULL, argc + 1, argv);
}

#define DISPATCH(fb, ...) \
	dispatch(fb, ARRAY_LEN(((const char *const[]){__VA_ARGS__})), (const char *const[]){__VA_ARGS__})

static void test_opt__options_before_the_command_are_its_own(void **state)
{
	(void)state;
	assert_int_equal(DISPATCH(0, "--db", "x.db", "tag", "--label", "nightly"), EXIT_OK);
	assert_string_equal(seen.cmd, "tag");
	assert_string_equal(seen.db, "x.db");
	assert_string_equal(seen.label, "nightly");
	assert_int_equal(DISPATCH(0, "--db=x.db", "-f", "show", "thing"), EXIT_OK);
	assert_string_equal(seen.cmd, "show");
	assert_string_equal(seen.db, "x.db");
	assert_int_equal(seen.flag, 1);
	assert_string_equal(seen.arg, "thing");
}

static void test_opt__a_value_that_names_a_command_is_a_value(void **state)
{
	(void)state;
	/* --label takes a value in tag; show does not know --label: "show" is the label */
	assert_int_equal(DISPATCH(0, "--label", "show", "tag"), EXIT_OK);
	assert_string_equal(seen.cmd, "tag");
	assert_string_equal(seen.label, "show");
	assert_int_equal(seen.calls, 1);
	/* --db takes a value in show: with the fallback, "tag" is the database */
	assert_int_equal(DISPATCH(1, "--db", "tag"), EXIT_OK);
	assert_string_equal(seen.cmd, "show");
	assert_string_equal(seen.db, "tag");
	/* ... and the second "tag" is the command */
	assert_int_equal(DISPATCH(1, "--db", "tag", "tag"), EXIT_OK);
	assert_string_equal(seen.cmd, "tag");
	assert_string_equal(seen.db, "tag");
	/* a flag before the command does not take it as a value */
	assert_int_equal(DISPATCH(0, "--flag", "show"), EXIT_OK);
	assert_string_equal(seen.cmd, "show");
	assert_int_equal(seen.flag, 1);
	assert_null(seen.arg);
}

static void test_opt__without_a_command_word(void **state)
{
	(void)state;
	assert_int_equal(DISPATCH(1, "--db", "x.db", "--flag"), EXIT_OK);
	assert_string_equal(seen.cmd, "show");
	assert_string_equal(seen.db, "x.db");
	assert_int_equal(DISPATCH(0, "--db", "x.db"), EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(DISPATCH(1, "frobnicate", "--db", "x.db"), EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	/* after "--" nothing is a command word */
	assert_int_equal(DISPATCH(1, "--", "tag"), EXIT_OK);
	assert_string_equal(seen.cmd, "show");
	assert_string_equal(seen.arg, "tag");
}

static void test_opt__an_option_the_command_does_not_take_is_a_usage_error(void **state)
{
	(void)state;
	assert_int_equal(DISPATCH(1, "--label", "x", "show"), EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(DISPATCH(0, "--db", "tag"), EXIT_USAGE);   /* --db's value is missing */
	assert_int_equal(seen.calls, 0);
	assert_int_equal(DISPATCH(0, "--nope", "show", "tag"), EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
}

static void test_opt__a_percent_is_stored_as_a_fraction(void **state)
{
	(void)state;
	double threshold = 0.05, alpha = 0.01;
	const struct opt_spec specs[] = {
		{"threshold", 0, OPT_PERCENT, "PCT", "threshold", &threshold},
		{"alpha", 0, OPT_DOUBLE, "P", "alpha", &alpha},
		{0},
	};
	char *argv[] = {"cmd", "--threshold", "12.5", "--alpha=0.05", NULL};
	struct bd_error err;
	int npos = -1;
	assert_int_equal(opt_parse(specs, 4, argv, &npos, &err), 0);
	assert_true(threshold == 0.125);
	assert_true(alpha == 0.05);
	char *bad[] = {"cmd", "--threshold", "5%", NULL};
	assert_int_equal(opt_parse(specs, 3, bad, &npos, &err), BD_EINVAL);
	assert_string_equal(err.msg, "option '--threshold' expects a number, got '5%'");
	char *hex[] = {"cmd", "--threshold", "0x10", NULL};   /* strtod's hexadecimal: was 16% */
	assert_int_equal(opt_parse(specs, 3, hex, &npos, &err), BD_EINVAL);
	assert_string_equal(err.msg, "option '--threshold' expects a number, got '0x10'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opt__options_before_the_command_are_its_own),
		cmocka_unit_test(test_opt__a_value_that_names_a_command_is_a_value),
		cmocka_unit_test(test_opt__without_a_command_word),
		cmocka_unit_test(test_opt__an_option_the_command_does_not_take_is_a_usage_error),
		cmocka_unit_test(test_opt__a_percent_is_stored_as_a_fraction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
