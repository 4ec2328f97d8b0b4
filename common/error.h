/* common/error.h: the error record that library functions fill; only commands print it. */
#ifndef BENCHDB_ERROR_H
#define BENCHDB_ERROR_H

#include <stdarg.h>

/* Negative return codes of library functions (0 is success). */
enum bd_rc {
	BD_OK = 0,
	BD_EINVAL = -1,   /* bad input: a sweep, an option, a selector */
	BD_EIO = -2,      /* file or pipe failure */
	BD_EDB = -3,      /* SQLite failure */
	BD_ENOMEM = -4,   /* host allocation failure */
	BD_ENOTFOUND = -5,/* a run, a case, a file that does not exist */
	BD_EVERSION = -6, /* a database made by a newer benchdb */
	BD_EUNSUPPORTED = -7, /* this machine, library or build cannot do it (no GPU, no bf16
			       * matmul on this CPU, a cuDNN refusal): msg names what is missing */
	BD_EINTR = -8,    /* stopped by a signal (an interrupt); nothing half-done left behind */
};

/* Exit statuses of the commands. */
enum bd_exit { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct bd_error {
	int code;          /* an enum bd_rc */
	char file[512];    /* subject file (a sweep, a database), "" if none */
	int line, column;  /* 1-based position in file, 0 if none */
	char msg[1024];    /* lowercase, no trailing newline */
};

/* Fill err (if not NULL) and return code. Usable as `return bd_fail(err, BD_EINVAL, "...")`. */
int bd_fail(struct bd_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Like bd_fail, with a file position. */
int bd_fail_at(struct bd_error *err, int code, const char *file, int line, int column,
	       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Print "prog: file:line:col: msg" (the parts that are set) to stderr. */
void bd_error_print(const char *prog, const struct bd_error *err);

#endif
