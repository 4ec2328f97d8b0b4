/* scripts/json_libs/lib_jsonc.c: one library's parse for bench.c (a file each: their headers collide). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <json-c/json.h>
int p_jsonc(const char *s, size_t len, long *pos, char *msg, size_t n)
{
	struct json_tokener *tok = json_tokener_new_ex(32);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *v = json_tokener_parse_ex(tok, s, (int)len);
	enum json_tokener_error err = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	int rc = 0;
	if (!v || err != json_tokener_success) {
		*pos = (long)end;
		snprintf(msg, n, "%s", err == json_tokener_continue ? "incomplete" :
			 json_tokener_error_desc(err));
		rc = -1;
	} else if (end != len) {
		*pos = (long)end;
		snprintf(msg, n, "trailing bytes");
		rc = -1;
	}
	json_object_put(v);
	json_tokener_free(tok);
	return rc;
}
