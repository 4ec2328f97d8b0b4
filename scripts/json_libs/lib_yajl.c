/* scripts/json_libs/lib_yajl.c: one library's parse for bench.c (a file each: their headers collide). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>
static char nulbuf[8192];
int p_yajl(const char *s, size_t len, long *pos, char *msg, size_t n)
{
	if (len >= sizeof(nulbuf))
		return -1;
	memcpy(nulbuf, s, len);   /* yajl_tree_parse needs a NUL-terminated string */
	nulbuf[len] = 0;
	char err[256];
	yajl_val v = yajl_tree_parse(nulbuf, err, sizeof(err));
	if (!v) {
		*pos = -1;
		for (char *c = err; *c; c++)
			if (*c == '\n')
				*c = ' ';
		snprintf(msg, n, "%.120s", err);
		return -1;
	}
	yajl_tree_free(v);
	return 0;
}
