/* scripts/json_libs/lib_cjson.c: one library's parse for bench.c (a file each: their headers collide). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <cjson/cJSON.h>
int p_cjson(const char *s, size_t len, long *pos, char *msg, size_t n)
{
	const char *end = NULL;
	cJSON *v = cJSON_ParseWithLengthOpts(s, len, &end, 0);
	if (!v) {
		*pos = end ? end - s : -1;
		snprintf(msg, n, "parse error");
		return -1;
	}
	/* trailing content: ParseWithLengthOpts stops after the value */
	const char *p = end;
	while (p < s + len && isspace((unsigned char)*p))
		p++;
	cJSON_Delete(v);
	if (p != s + len) {
		*pos = p - s;
		snprintf(msg, n, "trailing bytes");
		return -1;
	}
	return 0;
}
