// SPDX-License-Identifier: GPL-2.0
/*
 * The pids of the operations are the caller's: PMCATTACH and PMCDETACH
 * name processes by their pid in the caller's pid namespace, and
 * GETPMCINFO reports a row's owner by its pid there (0 when the owner is
 * not in it).  A process in a new pid namespace (pid 1 there) attaches to
 * its child, pid 2 there (pid 2 of the initial namespace is kthreadd), and
 * finds itself as the owner of its system-scope PMC.  As root, and as uid
 * 65534 in a user namespace of its own.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define SYSPMCS	"/proc/sys/kernel/hwpmc/unprivileged_syspmcs"
#define NOBODY	65534

/* Results, written by the namespace's init to the test. */
struct result {
	int step;		/* 0, or the step that failed */
	int err;
	pid_t attached;		/* the ns pid attached to */
	__u64 count;		/* SYSCALL.ENTER of that child */
	int detach_err;
	int ownerpid;		/* CPU 0's system rows whose owner is 1 */
	int other_ownerpid;	/* ... whose owner is 0 (not in the ns) */
	pid_t mypid;
};

/* The owners of CPU 0's system-scope rows: how many show @pid. */
static int count_owners(int fd, pid_t pid, int *n)
{
	static struct pmc_info info[256];
	__u32 rows = 256, i;
	int err = hwpmc_pmcinfo(fd, 0, info, &rows);

	*n = 0;
	for (i = 0; !err && i < rows; i++)
		if (info[i].pm_mode == PMC_MODE_SC &&
		    info[i].pm_ownerpid == pid)
			(*n)++;
	return err;
}

/* pid 1 of the new namespace. */
static void ns_init(int out)
{
	struct result r = { 0 };
	int go[2], fd;
	pid_t kid;
	__u32 id, sid;
	char c = 0;

	r.mypid = getpid();
	if (pipe(go)) {
		r.step = 1;
		goto out;
	}
	kid = fork();
	if (!kid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		hwpmc_burn_syscalls(1000);
		_exit(0);
	}
	close(go[0]);
	r.attached = kid;
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id)) {
		r.step = 2;
		goto out;
	}
	r.err = hwpmc_attach(fd, id, kid);
	if (r.err) {
		r.step = 3;
		goto out;
	}
	if (hwpmc_start(fd, id) || write(go[1], &c, 1) != 1 ||
	    waitpid(kid, NULL, 0) != kid || hwpmc_read(fd, id, &r.count)) {
		r.step = 4;
		goto out;
	}
	/* Detached by its exit already: ESRCH names it as a process here. */
	r.detach_err = hwpmc_detach(fd, id, kid);
	r.err = hwpmc_soft_sc(fd, PMC_SOFT_SCHED_SWITCH, 0, &sid);
	if (r.err) {
		r.step = 5;
		goto out;
	}
	/* Its own PMC shows pid 1; the test's, outside, shows 0. */
	r.err = count_owners(fd, 1, &r.ownerpid);
	if (!r.err)
		r.err = count_owners(fd, 0, &r.other_ownerpid);
	if (r.err)
		r.step = 6;
out:
	hwpmc_xwrite(out, &r, sizeof(r));
	_exit(0);
}

static int run(struct __test_metadata *_metadata, int userns,
	       struct result *r)
{
	int p[2], status, testfd;
	__u32 sid;
	pid_t pid;

	/* The test's own system PMC on CPU 0: its row shows the test. */
	testfd = hwpmc_open();
	if (testfd < 0 || hwpmc_soft_sc(testfd, PMC_SOFT_SCHED_SWITCH, 0, &sid))
		return -1;
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char map[64];

		close(p[0]);
		if (userns) {
			if (hwpmc_leave_chroot() || setgroups(0, NULL) ||
			    setresgid(NOBODY, NOBODY, NOBODY) ||
			    setresuid(NOBODY, NOBODY, NOBODY) ||
			    prctl(PR_SET_DUMPABLE, 1))
				_exit(10);
			if (unshare(CLONE_NEWUSER))
				_exit(11);
			snprintf(map, sizeof(map), "0 %u 1\n", NOBODY);
			if (hwpmc_write_str("/proc/self/setgroups", "deny") ||
			    hwpmc_write_str("/proc/self/uid_map", map) ||
			    hwpmc_write_str("/proc/self/gid_map", map))
				_exit(12);
		}
		if (unshare(CLONE_NEWPID))
			_exit(13);
		pid = fork();
		if (pid < 0)
			_exit(14);
		if (!pid)
			ns_init(p[1]);	/* no return */
		_exit(waitpid(pid, &status, 0) == pid ? 0 : 15);
	}
	close(p[1]);
	if (hwpmc_xread(p[0], r, sizeof(*r)))
		r->step = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	close(testfd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check(struct __test_metadata *_metadata, struct result *r)
{
	EXPECT_EQ(0, r->step) TH_LOG("step %d failed: %s", r->step,
				     strerror(r->err));
	EXPECT_EQ(1, r->mypid);
	EXPECT_EQ(2, r->attached);
	/* Its 1000 calls (and its exit) were counted: the right process. */
	EXPECT_LE(1000, r->count);
	EXPECT_GT(1100, r->count);
	EXPECT_EQ(ESRCH, r->detach_err);
	/* Its own system PMC shows pid 1, the test's (outside) 0. */
	EXPECT_EQ(1, r->ownerpid);
	EXPECT_EQ(1, r->other_ownerpid);
}

TEST(ops_use_the_callers_pid_namespace_root)
{
	struct result r = { 0 };

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, run(_metadata, 0, &r));
	check(_metadata, &r);
}

TEST(ops_use_the_callers_pid_namespace_uid65534)
{
	long syspmcs = hwpmc_sysctl_get(SYSPMCS);
	struct result r = { 0 };
	int rc;

	if (geteuid())
		SKIP(return, "needs root (to become 65534)");
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSPMCS, 1));
	rc = run(_metadata, 1, &r);
	hwpmc_sysctl_set(SYSPMCS, syspmcs);
	if (rc == 11)
		SKIP(return, "unprivileged user namespaces are disabled");
	ASSERT_EQ(0, rc);
	check(_metadata, &r);
}

TEST_HARNESS_MAIN
