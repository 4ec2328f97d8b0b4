/* scripts/json_libs/lib_jsonparser.c: one library's parse for bench.c (a file each: their headers collide). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <json-parser/json.h>
int p_jsonparser(const char *s, size_t len, long *pos, char *msg, size_t n)
{
	json_settings set = {0};
	char err[json_error_max];
	json_value *v = json_parse_ex(&set, s, len, err);
	if (!v) {
		*pos = -1;
		snprintf(msg, n, "%s", err);
		return -1;
	}
	json_value_free(v);
	return 0;
}
