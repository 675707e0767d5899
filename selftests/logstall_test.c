// SPDX-License-Identifier: GPL-2.0
/*
 * A log whose reader does not read stalls that log's operations only,
 * killably, and never the shutdown of its owner.
 *
 * The log is configured on a small pipe that nobody reads and filled with
 * USERDATA records, so that FLUSHLOG waits.  Then:
 *  - the opener exits while another process (which inherited the open)
 *    waits in FLUSHLOG: the owner's shutdown, a kernel worker, must not
 *    wait behind it.  The FLUSHLOG ends with ESRCH and the log lets go of
 *    the pipe (its reader sees end of file once it drains it).
 *  - another process's log operation on the same owner queues behind
 *    that FLUSHLOG: it must wait killably (a SIGKILL ends it while the
 *    flush still waits), or the kernel's hung-task detector reports it.
 *
 * Each case runs as root and as the unprivileged user 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#define NOBODY		65534
#define GUARD_MS	20000	/* a hang, not a timing: far beyond any run */

static long long now_ms(void)
{
	return hwpmc_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

static int become(uid_t uid)
{
	if (!uid)
		return 0;
	return setresgid(uid, uid, uid) || setresuid(uid, uid, uid);
}

static int writelog(int fd, __u32 data)
{
	struct pmc_op_writelog w = { .pm_userdata = data };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_WRITELOG, &w);
}

static char thread_state(pid_t pid, pid_t tid)
{
	return hwpmc_thread_state(pid, tid);
}

static int wait_blocked(pid_t pid, pid_t tid)
{
	return hwpmc_wait_blocked(pid, tid, GUARD_MS);
}

/*
 * An owner with a log on @logfd (a pipe of one page that nobody reads)
 * and more USERDATA records than the pipe takes.  Returns the /dev/hwpmc
 * descriptor, or -step.
 */
static int stalled_owner(int logfd)
{
	int fd, i, n = 0;

	fd = hwpmc_open();
	if (fd < 0)
		return -1;
	if (fcntl(logfd, F_SETPIPE_SZ, 4096) < 0)
		return -2;
	if (hwpmc_configure_log(fd, logfd))
		return -3;
	/* About 24 bytes each: well over the pipe's 4096. */
	for (i = 0; i < 2000; i++)
		if (!writelog(fd, i))
			n++;
	return n < 500 ? -4 : fd;
}

/* Read @fd until end of file (or GUARD_MS): 0 at EOF. */
static int drain_to_eof(int fd)
{
	long long end = now_ms() + GUARD_MS;
	char buf[4096];
	ssize_t n;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (!n)
			return 0;
		if (n < 0 && errno != EAGAIN)
			return -1;
		if (now_ms() >= end)
			return -1;
		if (n < 0)
			usleep(10000);
	}
}

FIXTURE(stall) {
	int p[2];
};

FIXTURE_VARIANT(stall) {
	uid_t uid;
};

FIXTURE_VARIANT_ADD(stall, root) {
	.uid = 0,
};

FIXTURE_VARIANT_ADD(stall, nobody) {
	.uid = NOBODY,
};

FIXTURE_SETUP(stall)
{
	ASSERT_EQ(0, pipe2(self->p, O_CLOEXEC));
}

FIXTURE_TEARDOWN(stall)
{
	close(self->p[0]);
	if (self->p[1] >= 0)
		close(self->p[1]);
}

/*
 * The opener exits while its inheritor waits in FLUSHLOG for the unread
 * pipe.  Opener's exit codes: 0 or a step; the inheritor reports the
 * FLUSHLOG's errno through @res.
 */
TEST_F_TIMEOUT(stall, opener_exit_ends_a_stalled_flush, 120)
{
	int res[2], status, err = -1;
	struct pollfd pf = { .events = POLLIN };
	pid_t opener;

	ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
	fflush(stdout);
	opener = fork();
	ASSERT_LE(0, opener);
	if (!opener) {
		pid_t heir;
		int fd;

		close(res[0]);
		close(self->p[0]);
		if (become(variant->uid))
			_exit(10);
		fd = stalled_owner(self->p[1]);
		if (fd < 0)
			_exit(10 - fd);
		close(self->p[1]);	/* the log holds the only writer */
		heir = fork();
		if (heir < 0)
			_exit(20);
		if (!heir) {
			err = hwpmc_flushlog(fd);
			_exit(hwpmc_xwrite(res[1], &err, sizeof(err)) ? 1 : 0);
		}
		/* The heir waits in FLUSHLOG: now the opener goes. */
		_exit(wait_blocked(heir, heir) ? 21 : 0);
	}
	close(res[1]);
	pf.fd = res[0];
	close(self->p[1]);
	self->p[1] = -1;
	ASSERT_EQ(opener, waitpid(opener, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("opener failed at step %d", WEXITSTATUS(status));
	/* A hang shows as no answer within GUARD_MS; the pipe then drains. */
	EXPECT_EQ(1, poll(&pf, 1, GUARD_MS))
		TH_LOG("FLUSHLOG still waits %d s after its owner's opener exited",
		       GUARD_MS / 1000);
	/* The owner shut down: the log let go of the pipe. */
	EXPECT_EQ(0, drain_to_eof(self->p[0]))
		TH_LOG("the log still holds the pipe");
	ASSERT_EQ(sizeof(err), read(res[0], &err, sizeof(err)));
	EXPECT_EQ(ESRCH, err) TH_LOG("FLUSHLOG: %s", strerror(err));
	close(res[0]);
}

/* Wait (up to GUARD_MS) for @pid to end; 0 and its status if it did. */
static int reap(pid_t pid, int *status)
{
	long long end = now_ms() + GUARD_MS;
	pid_t w;

	while (!(w = waitpid(pid, status, WNOHANG)) && now_ms() < end)
		usleep(10000);
	return w == pid ? 0 : -1;
}

/* Wait (up to GUARD_MS) until @pid, not a child, is dead: 0 if it is. */
static int wait_dead(pid_t pid)
{
	long long end = now_ms() + GUARD_MS;
	char st;

	while ((st = thread_state(pid, pid)) != 'Z' && st != '?') {
		if (now_ms() >= end)
			return -1;
		usleep(10000);
	}
	return 0;
}

/*
 * The opener keeps its owner alive (until @gate closes) with two heirs:
 * one waits in FLUSHLOG for the unread pipe, holding the owner's log
 * lock; the other (@pids[1]) then waits in WRITELOG for that lock.  The
 * pids go to the test through @out.  Exit code: 0 or a step.
 */
static int queued_opener(uid_t uid, int logfd, int out, int gate)
{
	int status;
	pid_t pids[2];
	char c;
	int fd;

	if (become(uid))
		return 10;
	fd = stalled_owner(logfd);
	if (fd < 0)
		return 10 - fd;
	close(logfd);
	pids[0] = fork();
	if (pids[0] < 0)
		return 20;
	if (!pids[0]) {
		close(out);
		close(gate);
		_exit(hwpmc_flushlog(fd));
	}
	if (wait_blocked(pids[0], pids[0]))
		return 21;
	pids[1] = fork();
	if (pids[1] < 0)
		return 22;
	if (!pids[1]) {
		close(out);
		close(gate);
		_exit(writelog(fd, 1));
	}
	if (wait_blocked(pids[1], pids[1]))
		return 23;
	if (hwpmc_xwrite(out, pids, sizeof(pids)))
		return 24;
	close(out);
	/* Until the test lets go, having killed pids[1]. */
	if (read(gate, &c, 1) < 0)
		return 25;
	/* The flush still waits; the opener's exit will end it. */
	return waitpid(pids[0], &status, WNOHANG) ? 26 : 0;
}

/*
 * A WRITELOG queued behind a FLUSHLOG of another process waits killably:
 * a SIGKILL ends it while the flush still waits.  (An uninterruptible wait
 * would also be reported by the hung-task detector after 120 s.)
 */
TEST_F_TIMEOUT(stall, log_op_queued_behind_a_stalled_flush_is_killable, 120)
{
	int res[2], gate[2], status = 0;
	pid_t opener, pids[2] = { -1, -1 };
	ssize_t got;

	ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(gate, O_CLOEXEC));
	fflush(stdout);
	opener = fork();
	ASSERT_LE(0, opener);
	if (!opener) {
		close(res[0]);
		close(gate[1]);
		close(self->p[0]);
		_exit(queued_opener(variant->uid, self->p[1], res[1],
				    gate[0]));
	}
	close(res[1]);
	close(gate[0]);
	close(self->p[1]);
	self->p[1] = -1;
	got = read(res[0], pids, sizeof(pids));
	close(res[0]);
	if (got != sizeof(pids)) {
		close(gate[1]);
		waitpid(opener, &status, 0);
	}
	ASSERT_EQ(sizeof(pids), got)
		TH_LOG("opener failed at step %d", WEXITSTATUS(status));
	/* pids[1] is not our child: watch it through its /proc entry. */
	ASSERT_EQ(0, kill(pids[1], SIGKILL));
	EXPECT_EQ(0, wait_dead(pids[1]))
		TH_LOG("WRITELOG did not end on SIGKILL while the flush waits (state %c)",
		       thread_state(pids[1], pids[1]));
	/* The flush still waits: only the killed one went. */
	EXPECT_EQ('D', thread_state(pids[0], pids[0]));
	/* The opener's exit ends the flush (see the case above). */
	close(gate[1]);
	ASSERT_EQ(0, reap(opener, &status));
	EXPECT_EQ(0, drain_to_eof(self->p[0]));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
