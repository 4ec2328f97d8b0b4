/* common/strbuf.c: growable strings and whole-file reads. */
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

static void sb_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->alloc)
		return;
	size_t want = sb->alloc ? sb->alloc : 64;
	while (want < sb->len + extra + 1)
		want *= 2;
	sb->buf = xrealloc(sb->buf, want);
	sb->alloc = want;
}

void sb_addn(struct strbuf *sb, const char *s, size_t n)
{
	sb_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_add(struct strbuf *sb, const char *s) { sb_addn(sb, s, strlen(s)); }

void sb_addc(struct strbuf *sb, char c) { sb_addn(sb, &c, 1); }

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void sb_add_shell_word(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_add(sb, "'\\''");
		else
			sb_addc(sb, *s);
	}
	sb_addc(sb, '\'');
}

void sb_add_json_str(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sb_add(sb, "\\\""); break;
		case '\\': sb_add(sb, "\\\\"); break;
		case '\n': sb_add(sb, "\\n"); break;
		case '\r': sb_add(sb, "\\r"); break;
		case '\t': sb_add(sb, "\\t"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)   /* DEL too: raw, escape_controls makes it \x7f */
				sb_addf(sb, "\\u%04x", *p);
			else
				sb_addc(sb, (char)*p);
		}
	}
	sb_addc(sb, '"');
}

const char *sb_str(const struct strbuf *sb) { return sb->buf ? sb->buf : ""; }

char *sb_detach(struct strbuf *sb)
{
	char *p = sb->buf;
	if (!p)
		p = xcalloc(1, 1);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	return p;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sb_addn(&sb, chunk, n);
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		sb_free(&sb);
		errno = EIO;
		return NULL;
	}
	if (len)
		*len = sb.len;
	return sb_detach(&sb);
}

/* Write all of buf to fd; 0, or -1 with errno (EIO when a write takes nothing). */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Write buf to path with an ordinary open-truncate-write: for what is no regular file. */
static int write_in_place(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	int rc = write_all(fd, buf, len);
	int saved = errno;
	if (close(fd) && !rc) {
		rc = -1;
		saved = errno;
	}
	errno = saved;
	return rc;
}

int file_replace(const char *path, const char *buf, size_t len)
{
	struct stat st, lst;
	int exists = stat(path, &st) == 0;
	/* a device, a FIFO, /dev/stdout: no file to replace, written as it is */
	if (exists && !S_ISREG(st.st_mode))
		return write_in_place(path, buf, len);
	/* a link to a file: the file is replaced, the link kept */
	char *real = exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) ? realpath(path, NULL)
									       : NULL;
	const char *target = real ? real : path;
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	struct strbuf tmp = STRBUF_INIT;
	sb_addf(&tmp, "%.*s.%s.tmpXXXXXX", (int)(base - target), target, base);
	/* An interrupt (or SIGXFSZ, a file-size limit's) waits until the temporary file is renamed or
	 * removed: none is left behind */
	sigset_t stops, old_mask;
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigaddset(&stops, SIGQUIT);
	sigaddset(&stops, SIGXFSZ);
	int masked = pthread_sigmask(SIG_BLOCK, &stops, &old_mask) == 0;
	int rc = -1, saved = 0, fd = mkstemp(tmp.buf);
	if (fd < 0 && (errno == ENAMETOOLONG ||
		       ((errno == EACCES || errno == EPERM) && exists && access(target, W_OK) == 0))) {
		/* a name too long for the temporary one's, or a file this user may write in a
		 * directory it may not: in place, as it always was */
		if (masked)
			pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
		sb_free(&tmp);
		free(real);
		return write_in_place(path, buf, len);
	}
	if (fd < 0) {
		saved = errno;
		goto done;
	}
	mode_t mask = umask(0);
	umask(mask);
	if (exists && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(fd, st.st_uid, st.st_gid) != 0) {
		/* not ours to give away (only root may): the new file is this user's */
	}
	if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask) || write_all(fd, buf, len)) {
		saved = errno;
		close(fd);
		unlink(tmp.buf);
		goto done;
	}
	if (close(fd) || rename(tmp.buf, target)) {
		saved = errno;
		unlink(tmp.buf);
		goto done;
	}
	rc = 0;
done:
	if (masked)
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	sb_free(&tmp);
	free(real);
	errno = saved;
	return rc;
}

int file_same(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}
