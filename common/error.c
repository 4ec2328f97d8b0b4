/* common/error.c: filling and printing struct bd_error. */
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static void set_msg(struct bd_error *err, const char *fmt, va_list ap)
{
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int bd_fail(struct bd_error *err, int code, const char *fmt, ...)
{
	if (!err)
		return code;
	memset(err, 0, sizeof(*err));
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
	return code;
}

int bd_fail_at(struct bd_error *err, int code, const char *file, int line, int column,
	       const char *fmt, ...)
{
	if (!err)
		return code;
	memset(err, 0, sizeof(*err));
	err->code = code;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = column;
	va_list ap;
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
	return code;
}

void bd_error_print(const char *prog, const struct bd_error *err)
{
	/* file names and messages quote user text: no escape sequence reaches the terminal raw */
	char *file = escape_controls(err->file), *msg = escape_controls(err->msg);
	if (err->file[0] && err->line > 0)
		fprintf(stderr, "%s: %s:%d:%d: %s\n", prog, file, err->line, err->column, msg);
	else if (err->file[0])
		fprintf(stderr, "%s: %s: %s\n", prog, file, msg);
	else
		fprintf(stderr, "%s: %s\n", prog, msg);
	free(file);
	free(msg);
}
