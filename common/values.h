/* common/values.h: typing what a person wrote (in a sweep, on a command line, in a peer's output)
 * and the did-you-mean for a name that is not one of the valid ones. */
#ifndef BENCHDB_VALUES_H
#define BENCHDB_VALUES_H

#include <stdint.h>

#include "strbuf.h"

/* Decimal digits only, into *out. 0, -1 when not digits (or empty), -2 when beyond int64. */
int parse_digits(const char *s, int64_t *out);
/* A decimal number: digits with an optional fraction and exponent (10, 0.5, .25, 5e-3, 1E+2);
 * no sign, no hex, inf or nan. 0, -1 when not of that form, -2 when beyond a double's range. */
int parse_decimal(const char *s, double *out);
/* Parse a byte size: an integer, or a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB
 * (case-insensitive; decimals down to whole bytes). 0, or BD_EINVAL. */
int parse_bytes(const char *s, int64_t *out);

/* Whether s is one of names (NULL-terminated; names NULL: none). */
int name_in(const char *const *names, const char *s);
/* Whether s is a word of letters, digits and the characters of punct, shorter than size. */
int is_word(const char *s, const char *punct, size_t size);
/* names joined with ", ". */
void sb_add_list(struct strbuf *sb, const char *const *names);
/* The name in names that word is most likely a typo of (a common spelling from other tools, or
 * within a small edit distance, case-insensitive), or NULL when none is close. */
const char *suggest(const char *word, const char *const *names);

#endif
