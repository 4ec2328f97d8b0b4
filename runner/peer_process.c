/* runner/peer_process.c: the peer's processes — started, read, stopped (schemas/peer-protocol.md,
 * "How a peer is run").
 *
 * The peer is `/bin/sh -c COMMAND`, started in its own process group in the sweep file's
 * directory, with stdin from /dev/null. The runner reads its stdout (the protocol) and keeps the
 * tail of its stderr until it exits; on a timeout or an interrupt it stops the whole group
 * (SIGTERM, then SIGKILL). A small guardian process leads the group and kills it when the runner
 * dies, however it dies.
 */
#include "peer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
/* Exit status of the guardian when it could not set the peer up (the reason is on stderr). */
#define PEER_EXIT_SETUP 125

static void tail_add(struct peer_run *r, const char *buf, size_t n)
{
	if (n >= PEER_STDERR_TAIL) {
		memcpy(r->err, buf + n - PEER_STDERR_TAIL, PEER_STDERR_TAIL);
		r->err_len = PEER_STDERR_TAIL;
		return;
	}
	size_t keep = r->err_len + n > PEER_STDERR_TAIL ? PEER_STDERR_TAIL - n : r->err_len;
	memmove(r->err, r->err + r->err_len - keep, keep);
	memcpy(r->err + keep, buf, n);
	r->err_len = keep + n;
}

/* Report progress from the sample lines that arrived since the last call. */
static void scan_progress(struct peer_run *r, int64_t total,
			  void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	const char *text = sb_str(&r->out);
	for (;;) {
		const char *nl = memchr(text + r->scanned, '\n', r->out.len - r->scanned);
		if (!nl)
			break;
		const char *line = text + r->scanned;
		r->scanned = (size_t)(nl - text) + 1;
		if (strncmp(line, "sample ", 7))
			continue;
		char *end;
		long long it = strtoll(line + 7, &end, 10);
		if (end != line + 7 && it >= 0 && it < total && it + 1 > r->iters_seen) {
			r->iters_seen = it + 1;
			if (on_iteration)
				on_iteration(ctx, r->iters_seen, total);
		}
	}
}

/* 1 when the child has exited (it stays a zombie, so its process group id stays reserved). */
static int child_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno != EINTR;
	return si.si_pid == pid;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	nanosleep(&ts, NULL);
}

/* Stop the peer's whole process group: SIGTERM, a grace period, SIGKILL. */
static void stop_group(pid_t pid)
{
	if (kill(-pid, SIGTERM) < 0)
		kill(pid, SIGTERM);
	int64_t t0 = now_ns();
	while (!child_exited(pid) && now_ns() - t0 < PEER_TERM_GRACE_NS)
		sleep_ns(10000000);
	if (kill(-pid, SIGKILL) < 0)
		kill(pid, SIGKILL);
}

/* Between fork and exec (the runner may have threads): async-signal-safe calls only. */

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

/* The peer: `/bin/sh -c command` with the pipes as stdout and stderr, in dir. */
static void __attribute__((noreturn)) peer_exec(const char *command, const char *dir, char **envp,
						int null_fd, int out_fd, int err_fd)
{
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)command, NULL};
	sigset_t none;
	if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
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

/* SIGHUP in the guardian: its runner died. */
static void guardian_orphaned(int sig)
{
	(void)sig;
	kill(0, SIGKILL);   /* the whole peer group, the guardian included */
}

/*
 * The runner's child: the guardian of the peer's process group. It leads the group, runs the peer
 * in it and ends as the peer ended (same exit status or signal). When the runner dies, even by
 * SIGKILL, the kernel sends the guardian SIGHUP (PR_SET_PDEATHSIG) and it kills the whole group:
 * no peer process outlives its runner. (The peer's shell itself cannot be the child that gets the
 * parent-death signal: whatever it starts would not.)
 */
static void __attribute__((noreturn)) guardian(const char *command, const char *dir, char **envp,
					       int null_fd, int out_fd, int err_fd, pid_t runner)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	if (setpgid(0, 0) < 0 || getpgrp() != getpid()) {   /* kill(0, ...) must be the peer's group */
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot give the peer a process group of its own\n");
		_exit(PEER_EXIT_SETUP);
	}
	sa.sa_handler = SIG_IGN;            /* the peer gets these itself (the group is signalled) */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = guardian_orphaned;
	sigaction(SIGHUP, &sa, NULL);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGHUP);
#endif
	if (getppid() != runner)            /* it died before prctl */
		kill(0, SIGKILL);
	pid_t pid = fork();
	if (pid == 0)
		peer_exec(command, dir, envp, null_fd, out_fd, err_fd);
	if (pid < 0) {
		dup2(err_fd, STDERR_FILENO);
		say("benchdb: cannot start the peer (fork failed)\n");
		_exit(PEER_EXIT_SETUP);
	}
	close_from(0);                      /* the pipes close when the peer's ends do */
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(PEER_EXIT_SETUP);
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	kill(getpid(), sig);
	_exit(128 + sig);
}

/* peer_internal.h */
void peer_process_run(const struct sweep_peer *peer, const char *dir, char **envp, int64_t total,
		      struct peer_run *r,
		      void (*on_iteration)(void *ctx, int64_t iter, int64_t total), void *ctx)
{
	int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, null_fd = -1;
	pid_t pid = -1;
	char buf[65536];

	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0 ||
	    (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(r->start_error, sizeof(r->start_error), "%s", strerror(errno));
		goto done;
	}
	pid_t parent = getpid();
	fflush(NULL);
	if ((pid = fork()) < 0) {
		snprintf(r->start_error, sizeof(r->start_error), "fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0)
		guardian(peer->command, dir, envp, null_fd, out_pipe[1], err_pipe[1], parent);
	setpgid(pid, pid);   /* also in the guardian: whichever runs first */
	close(out_pipe[1]);
	close(err_pipe[1]);
	out_pipe[1] = err_pipe[1] = -1;
	fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);

	int64_t start = now_ns(), deadline = start + peer->timeout_s * 1000000000LL, exit_seen = 0;
	int fds[2] = {out_pipe[0], err_pipe[0]};
	for (;;) {
		int64_t now = now_ns();
		if (measure_interrupted) {
			r->interrupted = 1;
			break;
		}
		if (!exit_seen && now >= deadline) {
			r->timed_out = 1;
			break;
		}
		if (!exit_seen && child_exited(pid)) {
			exit_seen = now;
			kill(-pid, SIGKILL);   /* stragglers it left in its group */
		}
		if (fds[0] < 0 && fds[1] < 0 && exit_seen)
			break;
		if (exit_seen && now - exit_seen > PEER_DRAIN_NS)
			break;
		struct pollfd pfd[2];
		nfds_t n = 0;
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				pfd[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		int64_t wait_ms = (deadline - now) / 1000000 + 1;
		if (wait_ms > PEER_POLL_MS || exit_seen)
			wait_ms = exit_seen ? 10 : PEER_POLL_MS;
		if (n == 0) {
			sleep_ns(wait_ms * 1000000);
			continue;
		}
		if (poll(pfd, n, (int)wait_ms) < 0 && errno != EINTR)
			sleep_ns(wait_ms * 1000000);
		for (int i = 0; i < 2; i++) {
			if (fds[i] < 0)
				continue;
			ssize_t got = read(fds[i], buf, sizeof(buf));
			if (got > 0 && i == 0) {
				sb_addn(&r->out, buf, (size_t)got);
				scan_progress(r, total, on_iteration, ctx);
			} else if (got > 0) {
				tail_add(r, buf, (size_t)got);
			} else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
		if (r->out.len > PEER_STDOUT_MAX) {
			r->overflow = 1;
			break;
		}
	}
	if (r->timed_out || r->interrupted || r->overflow)
		stop_group(pid);
	else if (!exit_seen)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &r->wstatus, 0) < 0 && errno == EINTR)
		;
	r->exited = 1;
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	out_pipe[0] = err_pipe[0] = -1;
done:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	if (null_fd >= 0)
		close(null_fd);
}
