// SPDX-License-Identifier: GPL-2.0
/*
 * Who hwpmc speaks to, and how it names processes:
 *  - SIGIO is sent with the credentials the opener had when it opened
 *    /dev/hwpmc, under fcntl(F_SETOWN)'s rule: a process that became
 *    another user since (a set-uid program) is not signalled, whoever
 *    holds the descriptor and makes the signal happen;
 *  - pids in log records and GETPMCINFO's owner pids are those of the
 *    opener's pid namespace: a containerised owner sees its own pids, not
 *    the host's (0 for a process it cannot see).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NOBODY	65534

static volatile sig_atomic_t got_sigio;

static void on_sigio(int sig)
{
	got_sigio++;
}

/* A PMCRW on a PMC that has no target raises SIGIO; 0 or a step. */
static int raise_sigio(int fd)
{
	__u64 v;
	__u32 id;

	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id))
		return 1;
	if (hwpmc_read(fd, id, &v))
		return 2;
	usleep(100000);
	return 0;
}

/*
 * Opened as uid 65534 (keeping root as saved uid), then root again, as a
 * set-uid program does: the open's SIGIO may not reach it.  An open made
 * as root does.
 */
static int sigio_child(void)
{
	struct sigaction sa = { .sa_handler = on_sigio };
	int fd, fd2;

	if (sigaction(SIGIO, &sa, NULL))
		return 10;
	if (setresuid(NOBODY, NOBODY, 0))
		return 11;
	fd = hwpmc_open();
	if (fd < 0)
		return 12;
	if (setresuid(0, 0, 0))
		return 13;
	if (raise_sigio(fd))
		return 14;
	if (got_sigio)
		return 15;	/* signalled with privilege it did not have */
	fd2 = hwpmc_open();
	if (fd2 < 0 || raise_sigio(fd2))
		return 16;
	if (got_sigio != 1)
		return 17;	/* the rule must still let the owner hear */
	return 0;
}

TEST(sigio_needs_the_openers_credentials)
{
	int status;
	pid_t child;

	if (geteuid())
		SKIP(return, "needs root to change uids");
	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(sigio_child());
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("%s", WEXITSTATUS(status) == 15 ?
		       "SIGIO reached a process that is now another user" :
		       WEXITSTATUS(status) == 17 ? "no SIGIO for root's own open" :
		       "setup failed");
}

struct seen {
	int userdata_pid, attach_pid, fork_ppid, fork_pid, exit_pid;
	int nfork, nexit;
	int host_row_pid, own_rows;	/* GETPMCINFO's owner pids */
};

/* The row of CPU 0 that the test's system PMC holds. */
static int host_row = -1;

static int seen_fn(const struct pmclog_header *h, void *arg)
{
	struct seen *s = arg;

	switch (h->pl_type) {
	case PMCLOG_TYPE_USERDATA:
		s->userdata_pid = ((const struct pmclog_userdata *)h)->pl_pid;
		break;
	case PMCLOG_TYPE_PMCATTACH:
		s->attach_pid = ((const struct pmclog_pmcattach *)h)->pl_pid;
		break;
	case PMCLOG_TYPE_PROCFORK:
		s->fork_ppid = ((const struct pmclog_procfork *)h)->pl_ppid;
		s->fork_pid = ((const struct pmclog_procfork *)h)->pl_pid;
		s->nfork++;
		break;
	case PMCLOG_TYPE_PROCEXIT:
		s->exit_pid = ((const struct pmclog_procexit *)h)->pl_pid;
		s->nexit++;
		break;
	}
	return 0;
}

/* Pid 1 of a new pid namespace: log about itself and a child. */
static int pidns_init(int out, int unprivileged)
{
	struct seen s = { 0 };
	int fd, p[2], status;
	ssize_t len;
	pid_t c;
	char *buf;
	__u32 id;

	if (getpid() != 1)
		return 20;
	fd = hwpmc_open();
	if (fd < 0 || pipe(p))
		return 21;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH,
			  PMC_F_DESCENDANTS | PMC_F_LOG_PROCEXIT, &id) ||
	    hwpmc_configure_log(fd, p[1]) || hwpmc_attach(fd, id, 0) ||
	    hwpmc_start(fd, id))
		return 22;
	close(p[1]);
	{
		struct pmc_op_writelog w = { .pm_userdata = 7 };

		if (hwpmc_ioctl_err(fd, HWPMC_IOC_WRITELOG, &w))
			return 23;
	}
	c = fork();
	if (c < 0)
		return 24;
	if (!c)
		_exit(0);
	if (waitpid(c, &status, 0) != c)
		return 25;
	/* Its records fit in the pipe; CLOSELOG lets the pipe end. */
	if (hwpmc_closelog(fd))
		return 26;
	buf = malloc(1 << 16);
	len = buf ? read(p[0], buf, 1 << 16) : -1;
	if (len <= 0)
		return 27;
	hwpmc_for_each_record(buf, len, seen_fn, &s);
	free(buf);
	s.fork_pid -= c;	/* 0 if it is the child's pid here */
	s.exit_pid -= c;
	s.own_rows = 1;
	/* A system PMC of its own, and the host's: who owns which row. */
	if (!unprivileged) {
		struct pmc_info info[256];
		__u32 n = 256, r, sc;

		if (hwpmc_soft_sc(fd, PMC_SOFT_SCHED_SWITCH, 0, &sc) ||
		    hwpmc_pmcinfo(fd, 0, info, &n) || host_row < 0 ||
		    (__u32)host_row >= n)
			return 29;
		s.host_row_pid = info[host_row].pm_ownerpid;
		s.own_rows = 0;
		for (r = 0; r < n; r++)
			s.own_rows += info[r].pm_ownerpid == 1;
	}
	return hwpmc_xwrite(out, &s, sizeof(s)) ? 28 : 0;
}

/* As uid 65534, in its own user namespace (a rootless container). */
static int become_container_user(void)
{
	char map[64];

	if (hwpmc_leave_chroot())
		return 13;
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 14;
	if (prctl(PR_SET_DUMPABLE, 1) || unshare(CLONE_NEWUSER))
		return 15;
	snprintf(map, sizeof(map), "0 %u 1\n", NOBODY);
	if (hwpmc_write_str("/proc/self/setgroups", "deny") ||
	    hwpmc_write_str("/proc/self/uid_map", map) ||
	    hwpmc_write_str("/proc/self/gid_map", map))
		return 16;
	return 0;
}

FIXTURE(pidns) {
	int fd;
};

FIXTURE_VARIANT(pidns) {
	int unprivileged;
};

/* Root in a new pid namespace. */
FIXTURE_VARIANT_ADD(pidns, root) {
	.unprivileged = 0,
};

/* Uid 65534 in new user and pid namespaces. */
FIXTURE_VARIANT_ADD(pidns, nobody) {
	.unprivileged = 1,
};

FIXTURE_SETUP(pidns)
{
	struct pmc_info info[256];
	__u32 n = 256, r, sc;

	if (geteuid())
		SKIP(return, "needs root to make the namespaces");
	/* A system PMC owned by this process, outside the namespace. */
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &sc));
	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	for (r = 0; r < n; r++)
		if (info[r].pm_ownerpid == getpid())
			host_row = r;
	ASSERT_LE(0, host_row);
}

FIXTURE_TEARDOWN(pidns)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(pidns, record_pids_are_the_openers_namespace_pids)
{
	int res[2], status;
	struct seen s;
	pid_t child;

	ASSERT_EQ(0, pipe(res));
	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		pid_t init;
		int err;

		close(self->fd);
		if (variant->unprivileged) {
			err = become_container_user();
			if (err)
				_exit(err);
		}
		if (unshare(CLONE_NEWPID))
			_exit(10);
		init = fork();
		if (init < 0)
			_exit(11);
		if (!init)
			_exit(pidns_init(res[1], variant->unprivileged));
		if (waitpid(init, &status, 0) != init || !WIFEXITED(status))
			_exit(12);
		_exit(WEXITSTATUS(status));
	}
	close(res[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed",
						 WEXITSTATUS(status));
	ASSERT_EQ(0, hwpmc_xread(res[0], &s, sizeof(s)));
	close(res[0]);
	/* The owner is pid 1 there; its child is whatever fork() said. */
	EXPECT_EQ(1, s.userdata_pid);
	EXPECT_EQ(1, s.attach_pid);
	EXPECT_EQ(1, s.nfork);
	EXPECT_EQ(1, s.fork_ppid);
	EXPECT_EQ(0, s.fork_pid);
	EXPECT_LE(1, s.nexit);
	EXPECT_EQ(0, s.exit_pid);
	/* GETPMCINFO: its own row is pid 1's, the host's pid is hidden. */
	EXPECT_EQ(1, s.own_rows);
	EXPECT_EQ(0, s.host_row_pid);
}

TEST_HARNESS_MAIN
