/* runner/peer_process.c: the peer's processes — started, read, stopped (schemas/peer-protocol.md,
 * "How a peer is run", "Persistent peers", "Processes").
 *
 * The peer is `/bin/sh -c COMMAND` in the sweep file's directory, its stdin /dev/null (one
 * process per case) or a pipe (a persistent peer, fed one `case` line at a time). Its parent is a
 * small guardian process of the runner that leads the peer's process group and is a child
 * subreaper: every process the peer starts, however it detaches (setsid, a double fork), stays
 * below the guardian. When the peer's main process exits, when the runner asks (SIGUSR1: a
 * timeout, an interrupt, a persistent peer stopped) or when the runner dies (SIGHUP, by
 * PR_SET_PDEATHSIG), the guardian kills everything below it, reaps it, and exits as the peer
 * ended. The runner reads the peer's stdout (the protocol) and keeps the tail of its stderr.
 */
#include "peer_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* How long the pipes are still drained after the peer exited (a straggler may hold them). */
#define PEER_DRAIN_NS 1000000000LL
/* The longest wait in one poll(), so that an interrupt is seen promptly. */
#define PEER_POLL_MS 100
/* How often the peer's process tree is read for cpu_wait while it runs. */
#define PEER_WAIT_SAMPLE_NS 200000000LL
/* Exit status of the guardian when it could not set the peer up (the reason is on stderr). */
#define PEER_EXIT_SETUP 125
/* Processes the guardian kills in one round (the rest in the next). */
#define GUARDIAN_BATCH 256

/* ---- the guardian (between fork and exec or exit: async-signal-safe calls only) ------------- */

static void close_from(int first)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)first, ~0u, 0u) == 0)
		return;
#endif
	for (int fd = first; fd < 4096; fd++)
		close(fd);
}

static void say(const char *s)
{
	ssize_t w = write(STDERR_FILENO, s, strlen(s));
	(void)w;
}

/* Decimal text of v into buf (room for 24), returns buf's end. */
static char *put_int(char *buf, long v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n)
		*buf++ = tmp[--n];
	*buf = '\0';
	return buf;
}

/* The children of the calling process (single-threaded: its task's children file, else a scan of
 * /proc for processes whose parent it is), at most max, into pids; returns how many. */
static int own_children(pid_t self, pid_t *pids, int max)
{
	char path[64] = "/proc/", buf[4096];
	char *p = put_int(path + 6, self);
	memcpy(p, "/task/", 6);
	p = put_int(p + 6, self);
	memcpy(p, "/children", 10);
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	if (fd >= 0) {
		ssize_t len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		long v = -1;
		for (ssize_t i = 0; i < len && n < max; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				v = (v < 0 ? 0 : v * 10) + (buf[i] - '0');
			} else if (v >= 0) {
				pids[n++] = (pid_t)v;
				v = -1;
			}
		}
		if (v >= 0 && n < max)
			pids[n++] = (pid_t)v;
		return n;
	}
	/* no children file (a kernel without CONFIG_PROC_CHILDREN): /proc/PID/stat's fourth field */
	int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 0;
	char ents[4096];
	long got;
	while (n < max && (got = syscall(SYS_getdents64, dir, ents, sizeof(ents))) > 0) {
		for (long at = 0; at < got && n < max;) {
			struct {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *e = (void *)(ents + at);
			at += e->reclen;
			if (e->name[0] < '1' || e->name[0] > '9')
				continue;
			char stat[64] = "/proc/";
			size_t k = 6;
			for (const char *c = e->name; *c && k < 40; c++)
				stat[k++] = *c;
			memcpy(stat + k, "/stat", 6);
			int sfd = open(stat, O_RDONLY | O_CLOEXEC);
			if (sfd < 0)
				continue;
			ssize_t len = read(sfd, buf, sizeof(buf) - 1);
			close(sfd);
			if (len <= 0)
				continue;
			buf[len] = '\0';
			char *c = strrchr(buf, ')');   /* "PID (COMM) STATE PPID ..." */
			if (!c || c[1] != ' ' || !c[2] || c[3] != ' ')
				continue;
			long ppid = 0, pid = 0;
			for (c += 4; *c >= '0' && *c <= '9'; c++)
				ppid = ppid * 10 + (*c - '0');
			for (const char *d = e->name; *d >= '0' && *d <= '9'; d++)
				pid = pid * 10 + (*d - '0');
			if (ppid == self)
				pids[n++] = (pid_t)pid;
		}
	}
	close(dir);
	return n;
}

/* Kill and reap everything below the guardian: its children (the peer, and whatever the
 * subreaper adopted), then theirs as they are adopted in turn, until none is left. The peer's
 * exit status goes to *peer_status if it is reaped here. */
static void guardian_kill_all(pid_t self, pid_t peer, int *peer_status, int *peer_done)
{
	pid_t pids[GUARDIAN_BATCH];
	for (int n; (n = own_children(self, pids, GUARDIAN_BATCH)) > 0;) {
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		for (int i = 0; i < n; i++) {
			int status;
			if (waitpid(pids[i], &status, 0) == peer && !*peer_done) {
				*peer_status = status;
				*peer_done = 1;
			}
		}
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)   /* any that ended on their own meanwhile */
		;
}

/* The peer: `/bin/sh -c command` with in_fd, the pipes as stdout and stderr, in dir. */
static void __attribute__((noreturn)) peer_exec(const char *command, const char *dir, char **envp,
						int in_fd, int out_fd, int err_fd)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)command, NULL};
	sigset_t none;
	if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		_exit(PEER_EXIT_SETUP);
	close_from(3);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir(dir) < 0) {
		say("benchdb: cannot enter the sweep file's directory: ");
		say(dir);
		say("\n");
		_exit(126);
	}
	execve("/bin/sh", argv, envp);
	say("benchdb: cannot run /bin/sh\n");
	_exit(127);
}

/*
 * The runner's child: the guardian of the peer. It leads the peer's process group, is a child
 * subreaper, runs the peer, and waits for a signal: SIGCHLD (the peer, or something it started,
 * ended), SIGUSR1 (the runner stops the peer) or SIGHUP (the runner died). Once the peer has
 * ended, or on SIGUSR1 or SIGHUP, it kills everything below it and ends as the peer ended (same
 * exit status or signal). SIGINT and SIGTERM, sent to the whole group by a terminal or by the
 * runner, are for the peer; SIGTERM (a stop) gives everything below the guardian its grace: it
 * waits, up to PEER_TERM_GRACE_NS, until all of it has ended, not only the peer's main process
 * (the shell of `sh -c COMMAND`, which SIGTERM ends at once).
 */
static void __attribute__((noreturn)) guardian(const char *command, const char *dir, char **envp,
					       int in_fd, int out_fd, int err_fd, pid_t runner)
{
	pid_t self = getpid();
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (setpgid(0, 0) < 0 || getpgrp() != self) {   /* kill(-self, ...) must be the peer's group */
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot give the peer a process group of its own\n");
		_exit(PEER_EXIT_SETUP);
	}
#ifdef __linux__
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot make the peer's guardian a child subreaper\n");
		_exit(PEER_EXIT_SETUP);
	}
	prctl(PR_SET_PDEATHSIG, SIGHUP);
#endif
	if (getppid() != runner)            /* it died before prctl */
		_exit(PEER_EXIT_SETUP);
	pid_t pid = fork();
	if (pid == 0)
		peer_exec(command, dir, envp, in_fd, out_fd, err_fd);
	if (pid < 0) {
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot start the peer (fork failed)\n");
		_exit(PEER_EXIT_SETUP);
	}
	close_from(0);                      /* the pipes close when the peer's ends do */
	int status = 0, done = 0;
	int64_t term_at = 0;                /* when SIGTERM came to the group (a stop), 0: none */
	for (;;) {
		siginfo_t si;
		int sig;
		if (done) {   /* stopped, the peer's main process gone: the rest of the grace for
			       * what is left below (until it has ended, or 2 s from the SIGTERM) */
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			int64_t rest = term_at + PEER_TERM_GRACE_NS -
				       ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
			if (rest <= 0)
				break;
			struct timespec wait = {(time_t)(rest / 1000000000), (long)(rest % 1000000000)};
			sig = sigtimedwait(&set, &si, &wait);
		} else {
			sig = sigwaitinfo(&set, &si);
		}
		if (sig == SIGCHLD) {
			pid_t got;
			int st;
			while ((got = waitpid(-1, &st, WNOHANG)) > 0)
				if (got == pid) {
					status = st;
					done = 1;
				}
			/* the peer's main process has ended; in a stop, the rest have their grace
			 * too: the shell of `sh -c COMMAND` dies of SIGTERM at once, and the peer
			 * it runs must still have its 2 s (its handler's last words on stderr) */
			if (done && (!term_at || (got < 0 && errno == ECHILD)))
				break;
		} else if (sig == SIGTERM && !term_at) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			term_at = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
			if (!term_at)
				term_at = 1;
		} else if (sig == SIGUSR1 || sig == SIGHUP) {
			break;
		}
	}
	guardian_kill_all(self, pid, &status, &done);
	if (!done)
		status = SIGKILL;   /* (not reaped here: as if killed) */
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	struct rlimit no_core = {0, 0};     /* the peer's end, told on: no core of the runner's */
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	kill(self, sig);
	_exit(128 + sig);
}

/* ---- the runner's side ----------------------------------------------------------------------- */

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	nanosleep(&ts, NULL);
}

/* 1 when the guardian has exited (it stays a zombie, so the process group id stays reserved). */
static int guardian_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno != EINTR;
	return si.si_pid == pid;
}

static void tail_add(struct peer_proc *pr, const char *buf, size_t n)
{
	if (n >= PEER_STDERR_TAIL) {
		memcpy(pr->err, buf + n - PEER_STDERR_TAIL, PEER_STDERR_TAIL);
		pr->err_len = PEER_STDERR_TAIL;
		return;
	}
	size_t keep = pr->err_len + n > PEER_STDERR_TAIL ? PEER_STDERR_TAIL - n : pr->err_len;
	memmove(pr->err, pr->err + pr->err_len - keep, keep);
	memcpy(pr->err + keep, buf, n);
	pr->err_len = keep + n;
}

/* Whether the line [line, nl) starts with the keyword kw, ended by white space or the line's end
 * (the parser's tokens: peer_protocol.c splits at spaces and tabs) */
static int keyword_at(const char *line, const char *nl, const char *kw)
{
	size_t n = strlen(kw);
	return (size_t)(nl - line) >= n && !strncmp(line, kw, n) &&
	       (line + n == nl || isspace((unsigned char)line[n]));
}

/* Whether the line [line, nl), leading white space skipped, is one no output may hold: a nul
 * byte anywhere, or a first word that is no line kind of the protocol ("status: ok", "STATUS
 * OK"). The parse refuses such a line whatever follows it. */
static int line_refused(const char *line, const char *nl)
{
	static const char *const kinds[] = {"benchdb-peer", "info", "sample", "memory", "check",
					    "work", "ready", "status", NULL};
	if (memchr(line, '\0', (size_t)(nl - line)))
		return 1;
	if (peer_line_ignored(line, nl))
		return 0;
	for (size_t i = 0; kinds[i]; i++)
		if (keyword_at(line, nl, kinds[i]))
			return 0;
	return 1;
}

/* New complete lines of pr->out: progress from `sample` lines, whether a `status` line has come,
 * which ends the case (pr->case_end is then the byte after it), and (persistent) a paced case's
 * `ready` line, which stops the scan until it is answered (pr->ready). A persistent peer's line
 * that line_refused() finds ends the case too (pr->case_refused; peer_proc_read waits a moment
 * for a process that exits after it): such a peer waits for its next case line after a status
 * line the runner cannot see, and the case would end only at its timeout (an hour by default)
 * with a reason that hides the line; its parse names the line instead. */
static void scan_lines(struct peer_proc *pr, int persistent, int64_t total,
		       void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const char *text = sb_str(&pr->out);
	while (!pr->case_end && !pr->ready) {
		const char *nl = memchr(text + pr->scanned, '\n', pr->out.len - pr->scanned);
		if (!nl)
			break;
		const char *line = text + pr->scanned;
		pr->scanned = (size_t)(nl - text) + 1;
		/* leading white space as the parser skips it (peer_line_ignored, parse_text); a
		 * keyword then ends at any white space, so that a status line the parser refuses
		 * ("status\fok": an unknown word to it) ends the case with that refusal at once
		 * instead of at the timeout */
		while (line < nl && isspace((unsigned char)*line))
			line++;
		if (keyword_at(line, nl, "status"))
			pr->case_end = pr->scanned;
		else if (persistent && line_refused(line, nl)) {
			pr->case_end = pr->scanned;
			pr->case_refused = 1;
		}
		if (persistent && keyword_at(line, nl, "ready")) {
			pr->ready = 1;
			pr->iters_at_ready = pr->iters_seen;
		}
		if (!keyword_at(line, nl, "sample"))
			continue;
		/* the iteration, after any white space within the line (a paced case's step count
		 * rests on it: a sample line the parser takes must count here too) */
		const char *num = line + 6;
		while (num < nl && isspace((unsigned char)*num))
			num++;
		if (num == nl || !isdigit((unsigned char)*num))
			continue;
		char *end;
		long long it = strtoll(num, &end, 10);
		if (end != num && it >= 0 && it < total && it + 1 > pr->iters_seen) {
			pr->iters_seen = it + 1;
			if (on_iteration)
				on_iteration(ctx, pr->iters_seen, total);
		}
	}
}

/* peer_internal.h */
int peer_proc_start(struct peer_proc *pr, const char *command, const char *dir, char **envp,
		    int persistent)
{
	int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_fd = -1;
	memset(pr, 0, sizeof(*pr));
	pr->pid = -1;
	pr->in_fd = pr->out_fd = pr->err_fd = -1;
	pr->out = (struct strbuf)STRBUF_INIT;
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0 ||
	    (persistent ? pipe2(in_pipe, O_CLOEXEC) : (in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)))
	    < 0) {
		snprintf(pr->start_error, sizeof(pr->start_error), "%s", strerror(errno));
		goto fail;
	}
	if (persistent)
		in_fd = in_pipe[0];
	pid_t parent = getpid();
	fflush(NULL);
	if ((pr->pid = fork()) < 0) {
		snprintf(pr->start_error, sizeof(pr->start_error), "fork: %s", strerror(errno));
		goto fail;
	}
	if (pr->pid == 0)
		guardian(command, dir, envp, in_fd, out_pipe[1], err_pipe[1], parent);
	setpgid(pr->pid, pr->pid);   /* also in the guardian: whichever runs first */
	close(in_fd);
	close(out_pipe[1]);
	close(err_pipe[1]);
	pr->in_fd = persistent ? in_pipe[1] : -1;
	pr->out_fd = out_pipe[0];
	pr->err_fd = err_pipe[0];
	fcntl(pr->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(pr->err_fd, F_SETFL, O_NONBLOCK);
	pr->started_ns = now_ns();
	cpu_wait_tree_begin(&pr->wait, pr->pid);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (in_pipe[i] >= 0)
			close(in_pipe[i]);
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	if (!persistent && in_fd >= 0)
		close(in_fd);
	pr->pid = -1;
	return BD_EIO;
}

/* peer_internal.h */
int peer_proc_alive(struct peer_proc *pr) { return pr->pid > 0 && !guardian_exited(pr->pid); }

/* peer_internal.h */
int peer_proc_output_waiting(struct peer_proc *pr)
{
	char buf[4096];
	struct pollfd pfd = {.fd = pr->out_fd, .events = POLLIN};
	/* what the pipe holds now joins out (the next read scans it as usual) */
	while (pr->out_fd >= 0 && pr->out.len <= PEER_STDOUT_MAX && poll(&pfd, 1, 0) == 1 &&
	       (pfd.revents & POLLIN)) {
		ssize_t got = read(pr->out_fd, buf, sizeof(buf));
		if (got <= 0)
			break;
		sb_addn(&pr->out, buf, (size_t)got);
	}
	const char *text = sb_str(&pr->out);
	return !peer_text_ignored(text + pr->scanned, text + pr->out.len);
}

/* peer_internal.h */
int peer_proc_send(struct peer_proc *pr, const char *text, size_t len)
{
	/* a peer that is gone must not end the run: SIGPIPE held, and taken if it came */
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	int rc = 0;
	for (size_t at = 0; at < len && !rc;) {
		ssize_t w = pr->in_fd >= 0 ? write(pr->in_fd, text + at, len - at) : -1;
		if (w > 0)
			at += (size_t)w;
		else if (w < 0 && errno == EINTR)
			continue;
		else
			rc = BD_EIO;
	}
	if (rc) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* peer_internal.h */
void peer_proc_case_begin(struct peer_proc *pr)
{
	size_t used = pr->case_end;   /* the previous case's lines, up to its status line */
	if (used) {
		const char *text = sb_str(&pr->out);
		for (size_t i = 0; i < used; i++)
			pr->lines_before += text[i] == '\n';
		memmove(pr->out.buf, pr->out.buf + used, pr->out.len - used + 1);
		pr->out.len -= used;
	}
	pr->case_end = 0;
	pr->case_refused = 0;
	pr->scanned = 0;
	pr->ready = 0;
	pr->iters_seen = 0;
	pr->err_len = 0;
	pr->case_started_ns = now_ns();
	if (used || pr->ncases)
		cpu_wait_tree_begin(&pr->wait, pr->pid);
	pr->ncases++;
}

/* peer_internal.h */
enum peer_read peer_proc_read(struct peer_proc *pr, int64_t deadline, int until_status,
			      int64_t total,
			      void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	char buf[65536];
	int64_t exit_seen = 0, closed_seen = 0, refused_seen = 0, sampled = now_ns();
	int64_t idle_ms = 1;   /* the wait for the guardian once both pipes closed (doubling) */
	int status_sampled = 0;
	int fds[2] = {pr->out_fd, pr->err_fd};
	enum peer_read why;
	scan_lines(pr, until_status, total, on_iteration, ctx);   /* after an answered `ready` */
	for (;;) {
		int64_t now = now_ns();
		if (now - sampled >= PEER_WAIT_SAMPLE_NS) {
			cpu_wait_tree_sample(&pr->wait, pr->pid);
			sampled = now;
		}
		if (pr->case_end && !status_sampled) {   /* the case's work is done: its last reading */
			cpu_wait_tree_sample(&pr->wait, pr->pid);
			status_sampled = 1;
		}
		/* a refused line ends the case too; a process that exits meanwhile (a message on
		 * stdout, then exit 1) ends it as any that exits, its exit status told */
		if (pr->case_end && pr->case_refused && !refused_seen)
			refused_seen = now;
		if (pr->case_end && until_status &&
		    (!pr->case_refused || (!exit_seen && now - refused_seen > PEER_DRAIN_NS))) {
			why = PEER_READ_STATUS;
			break;
		}
		if (pr->ready && until_status) {
			why = PEER_READ_READY;
			break;
		}
		if (measure_interrupted) {
			why = PEER_READ_INTERRUPTED;
			break;
		}
		if (!exit_seen && now >= deadline) {
			why = PEER_READ_TIMEOUT;
			break;
		}
		if (!exit_seen && guardian_exited(pr->pid))
			exit_seen = now;
		/* no status line can come: a peer that exits now is read as any that exits (its
		 * status says how it ended); one that stays is not waited for to its timeout */
		if (until_status && fds[0] < 0 && !exit_seen && !closed_seen)
			closed_seen = now;
		if (closed_seen && !exit_seen && now - closed_seen > PEER_DRAIN_NS) {
			why = PEER_READ_CLOSED;
			break;
		}
		if ((fds[0] < 0 && fds[1] < 0 && exit_seen) || (exit_seen && now - exit_seen > PEER_DRAIN_NS)) {
			why = PEER_READ_ENDED;
			break;
		}
		struct pollfd pfd[2];
		nfds_t n = 0;
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				pfd[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		int64_t wait_ms = (deadline - now) / 1000000 + 1;
		if (wait_ms > PEER_POLL_MS || exit_seen)
			wait_ms = exit_seen ? 10 : PEER_POLL_MS;
		if (n == 0) {   /* nothing to poll: the guardian's exit, due now that the pipes
				 * closed, is looked for soon (a peer that stays: less often) */
			sleep_ns((idle_ms < wait_ms ? idle_ms : wait_ms) * 1000000);
			idle_ms = idle_ms * 2 < PEER_POLL_MS ? idle_ms * 2 : PEER_POLL_MS;
			continue;
		}
		if (poll(pfd, n, (int)wait_ms) < 0 && errno != EINTR)
			sleep_ns(wait_ms * 1000000);
		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0)
				continue;
			ssize_t got = read(fds[i], buf, sizeof(buf));
			if (got > 0 && i == 0) {
				sb_addn(&pr->out, buf, (size_t)got);
				scan_lines(pr, until_status, total, on_iteration, ctx);
			} else if (got > 0) {
				tail_add(pr, buf, (size_t)got);
			} else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
				fds[i] = -1;   /* closed (pr keeps the descriptor until peer_proc_stop) */
			}
		}
		if (pr->out.len > PEER_STDOUT_MAX) {
			why = PEER_READ_OVERFLOW;
			break;
		}
	}
	return why;
}

/* What the peer wrote to stderr until its end joins the tail: after a timeout or an interrupt,
 * what its SIGTERM handler said (where it hung) comes only then. Once the guardian is reaped its
 * processes, the pipe's writers, are gone; the descriptor does not block, and a writer that
 * escaped the group is read no further than a few reads. */
static void stderr_drain(struct peer_proc *pr)
{
	char buf[65536];
	for (int reads = 0; pr->err_fd >= 0 && reads < 64;) {
		ssize_t got = read(pr->err_fd, buf, sizeof(buf));
		if (got > 0) {
			tail_add(pr, buf, (size_t)got);
			reads++;
		} else if (got == 0 || errno != EINTR) {
			break;
		}
	}
}

/* peer_internal.h */
void peer_proc_stop(struct peer_proc *pr, int gently)
{
	if (pr->pid <= 0)
		return;
	if (pr->in_fd >= 0) {   /* a persistent peer ends when its stdin does */
		close(pr->in_fd);
		pr->in_fd = -1;
	}
	int64_t t0 = now_ns();
	if (gently)
		while (!guardian_exited(pr->pid) && now_ns() - t0 < PEER_TERM_GRACE_NS)
			sleep_ns(10000000);
	if (!guardian_exited(pr->pid)) {   /* SIGTERM to the peer's group, then the guardian's kill */
		kill(-pr->pid, SIGTERM);
		t0 = now_ns();
		while (!guardian_exited(pr->pid) && now_ns() - t0 < PEER_TERM_GRACE_NS)
			sleep_ns(10000000);
		kill(pr->pid, SIGUSR1);
		t0 = now_ns();
		while (!guardian_exited(pr->pid) && now_ns() - t0 < PEER_TERM_GRACE_NS)
			sleep_ns(10000000);
		if (!guardian_exited(pr->pid))   /* a guardian that cannot finish: the group at least */
			kill(-pr->pid, SIGKILL);
	}
	while (waitpid(pr->pid, &pr->wstatus, 0) < 0 && errno == EINTR)
		;
	pr->pid = -1;
	pr->exited = 1;
	stderr_drain(pr);
}

/* peer_internal.h */
void peer_proc_free(struct peer_proc *pr)
{
	if (pr->pid > 0)
		peer_proc_stop(pr, 0);
	if (pr->out_fd >= 0)
		close(pr->out_fd);
	if (pr->err_fd >= 0)
		close(pr->err_fd);
	pr->out_fd = pr->err_fd = -1;
	sb_free(&pr->out);
	cpu_wait_tree_free(&pr->wait);
}
