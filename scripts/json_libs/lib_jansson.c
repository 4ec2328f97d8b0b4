/* scripts/json_libs/lib_jansson.c: one library's parse for bench.c (a file each: their headers collide). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <jansson.h>
int p_jansson(const char *s, size_t len, long *pos, char *msg, size_t n)
{
	json_error_t e;
	json_t *v = json_loadb(s, len, JSON_REJECT_DUPLICATES, &e);
	if (!v) {
		*pos = e.position;
		snprintf(msg, n, "%s (line %d col %d)", e.text, e.line, e.column);
		return -1;
	}
	json_decref(v);
	return 0;
}
