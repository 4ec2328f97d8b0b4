/* common/values.c: typing what a person wrote (decimal integers, byte sizes, a name out of a
 * list) and the did-you-mean for a name that is not in it. */
#include "values.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int name_in(const char *const *names, const char *s)
{
	for (size_t i = 0; names && names[i]; i++)
		if (!strcmp(names[i], s))
			return 1;
	return 0;
}

int is_word(const char *s, const char *punct, size_t size)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isalnum((unsigned char)s[n]) && !strchr(punct, s[n]))
			return 0;
	return n > 0 && n < size;
}

void sb_add_list(struct strbuf *sb, const char *const *names)
{
	for (size_t i = 0; names[i]; i++) {
		if (i)
			sb_add(sb, ", ");
		sb_add(sb, names[i]);
	}
}

/* Optimal string alignment distance (a transposition costs 1), case-insensitive. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			size_t best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* Common spellings from other tools that edit distance does not catch. */
static const char *const aliases[][2] = {
	{"fp32", "float32"}, {"float", "float32"}, {"fp16", "float16"}, {"half", "float16"},
	{"bf16", "bfloat16"}, {"gpu", "cuda"}, {"fwd", "forward"}, {"bwd", "backward"},
	{"fwd+bwd", "forward_backward"}, {"fwd_bwd", "forward_backward"}, {"train", "train_step"},
	{"cudnn", "sdpa"}, {"benchmark", "benchmarks"}, {"axis", "axes"}, {"excludes", "exclude"},
};

/* The name in names that word is most likely a typo of, or NULL when none is close. */
const char *suggest(const char *word, const char *const *names)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(word, aliases[i][0]) && name_in(names, aliases[i][1]))
			return aliases[i][1];
	const char *best = NULL;
	size_t best_d = SIZE_MAX, len = strlen(word);
	for (size_t i = 0; names[i]; i++) {
		size_t d = edit_distance(word, names[i]);
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	if (best && best_d <= 3 && 3 * best_d <= len)
		return best;
	return NULL;
}

int parse_digits(const char *s, int64_t *out)
{
	if (!*s)
		return -1;
	int64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		int d = *s - '0';
		if (v > (INT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_decimal(const char *s, double *out)
{
	const char *c = s;
	size_t digits = strspn(c, "0123456789");
	c += digits;
	if (*c == '.') {
		size_t frac = strspn(c + 1, "0123456789");
		digits += frac;
		c += 1 + frac;
	}
	if (!digits)
		return -1;
	if (*c == 'e' || *c == 'E') {
		c += 1 + (c[1] == '+' || c[1] == '-');
		size_t exp = strspn(c, "0123456789");
		if (!exp)
			return -1;
		c += exp;
	}
	if (*c)
		return -1;
	double v = strtod(s, NULL);
	if (!isfinite(v))
		return -2;
	*out = v;
	return 0;
}

int parse_bytes(const char *s, int64_t *out)
{
	static const struct { const char *suffix; int64_t mult; } units[] = {
		{"", 1}, {"b", 1},
		{"kb", 1000LL}, {"mb", 1000000LL}, {"gb", 1000000000LL}, {"tb", 1000000000000LL},
		{"kib", 1LL << 10}, {"mib", 1LL << 20}, {"gib", 1LL << 30}, {"tib", 1LL << 40},
	};
	if (!s || !out)
		return BD_EINVAL;
	const char *p = s;
	int64_t whole = 0, frac = 0, frac_scale = 1;
	int ndigits = 0, nfrac = 0;
	for (; *p >= '0' && *p <= '9'; p++, ndigits++) {
		if (whole > (INT64_MAX - (*p - '0')) / 10)
			return BD_EINVAL;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
			if (nfrac >= 6)     /* keeps frac * mult within int64 */
				return BD_EINVAL;
			frac = frac * 10 + (*p - '0');
			frac_scale *= 10;
		}
		if (!nfrac)
			return BD_EINVAL;
	}
	if (!ndigits)
		return BD_EINVAL;
	while (*p == ' ')
		p++;
	char suffix[4];
	size_t n = strlen(p);
	if (n > 3)
		return BD_EINVAL;
	for (size_t i = 0; i <= n; i++)
		suffix[i] = (char)tolower((unsigned char)p[i]);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(suffix, units[i].suffix))
			continue;
		int64_t mult = units[i].mult;
		if (nfrac && mult == 1)     /* a fraction of a byte */
			return BD_EINVAL;
		if (whole > INT64_MAX / mult)
			return BD_EINVAL;
		int64_t v = whole * mult;
		int64_t extra = frac * mult / frac_scale;  /* rounds down to whole bytes */
		if (v > INT64_MAX - extra)
			return BD_EINVAL;
		*out = v + extra;
		return 0;
	}
	return BD_EINVAL;
}
