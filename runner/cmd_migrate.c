/* runner/cmd_migrate.c: `runner migrate` — bring a database's schema to this build's level. `report`
 * never migrates (it opens read-only); this is the command its refusal of an unreadable older
 * schema names. `runner run` migrates the same way when it opens the file. */
#include <stdio.h>

#include "commands.h"
#include "opt.h"

int cmd_migrate(struct cmd_line *cl)
{
	const char *db_path = BENCHDB_DEFAULT_DB;
	long busy_timeout_s = DB_BUSY_TIMEOUT_DEFAULT_S;
	const struct opt_spec specs[] = {
		{"db", 0, OPT_STRING, "PATH", "database to upgrade (default " BENCHDB_DEFAULT_DB ")",
		 &db_path},
		RUNNER_OPT_BUSY_TIMEOUT(&busy_timeout_s),
		{0}};
	static const struct cmd_usage usage = {
		RUNNER_PROG, "migrate", "[--db PATH] [--busy-timeout SECONDS]",
		"Upgrade a database made by an older benchdb to this build's schema, in place, in one "
		"transaction: a step that fails leaves the file as it was. A file that is missing is "
		"not created."};
	int npos = 0;
	int status = opt_parse_command(cl, specs, &usage, 0, 0, NULL, &npos);
	if (status >= 0 || (status = runner_busy_timeout("migrate", busy_timeout_s)) >= 0)
		return status;
	struct db *db = NULL;
	struct bd_error err;
	if (db_open(db_path, 0, &db, &err)) {
		bd_error_print(RUNNER_PROG " migrate", &err);
		/* BD_EINVAL: --db names no file ("", :memory:), a usage error as in run and close */
		return err.code == BD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	printf("%s: schema version %d\n", db_path, db_schema_version(db));
	db_close(db);
	return EXIT_OK;
}
