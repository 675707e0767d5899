// SPDX-License-Identifier: GPL-2.0
/*
 * FreeBSD parity of the operations (issue 18), each as root and as uid/gid
 * 65534: PMCATTACH of a running PMC is EBUSY, PMCRW with neither
 * PMC_F_NEWVALUE nor PMC_F_OLDVALUE is EINVAL, the TSC takes an initial
 * count and a write and ignores them, and GETPMCINFO's pm_event is the
 * global event number (class << 24 | code).  selftests/ERRORS.md maps the
 * errors here.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#define SYSPMCS "/proc/sys/kernel/hwpmc/unprivileged_syspmcs"

/* A child that sleeps until killed: a target of the caller's uid. */
static pid_t sleeper(void)
{
	pid_t p = fork();

	if (!p) {
		pause();
		_exit(0);
	}
	return p;
}

static void reap(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* Each check returns 0, or the line it failed at. */
#define CHECK(cond) do { if (!(cond)) return __LINE__; } while (0)

static int attach_running(int fd)
{
	pid_t t = sleeper(), t2 = sleeper();
	__u32 id, self_id;
	int line = 0;

	if (t < 0 || t2 < 0)
		return __LINE__;
	/* Attached, started: another attach is EBUSY; stopped, it works. */
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id) ||
	    hwpmc_attach(fd, id, t) || hwpmc_start(fd, id))
		line = __LINE__;
	else if (hwpmc_attach(fd, id, t2) != EBUSY)
		line = __LINE__;
	else if (hwpmc_attach(fd, id, PMC_PID_SELF) != EBUSY)
		line = __LINE__;
	else if (hwpmc_stop(fd, id) || hwpmc_attach(fd, id, t2))
		line = __LINE__;
	/* Started without a target (attached to its owner), then running. */
	else if (hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &self_id) ||
		 hwpmc_start(fd, self_id))
		line = __LINE__;
	else if (hwpmc_attach(fd, self_id, t) != EBUSY)
		line = __LINE__;
	/* A stopped PMC may be attached again (FreeBSD: ALLOCATED/STOPPED). */
	else if (hwpmc_stop(fd, self_id) || hwpmc_attach(fd, self_id, t))
		line = __LINE__;
	/* A detach of a running PMC stays allowed, as on FreeBSD. */
	else if (hwpmc_start(fd, self_id) || hwpmc_detach(fd, self_id, t))
		line = __LINE__;
	reap(t);
	reap(t2);
	return line;
}

static int rw_no_flags(int fd)
{
	struct pmc_op_pmcrw rw = { 0 };
	__u32 id;
	__u64 v;

	CHECK(!hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id));
	rw.pm_pmcid = id;
	CHECK(hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw) == EINVAL);
	CHECK(!hwpmc_start(fd, id));
	CHECK(hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw) == EINVAL);
	/* Either flag alone, or both, is fine. */
	CHECK(!hwpmc_read(fd, id, &v));
	CHECK(!hwpmc_stop(fd, id));
	CHECK(!hwpmc_write(fd, id, 3));
	rw.pm_flags = PMC_F_NEWVALUE | PMC_F_OLDVALUE;
	rw.pm_value = 9;
	CHECK(!hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw));
	CHECK(rw.pm_value == 3);
	CHECK(!hwpmc_read(fd, id, &v) && v == 9);
	/* A handle the owner does not have stays EINVAL before the flags. */
	rw.pm_pmcid = id + 1000;
	rw.pm_flags = 0;
	CHECK(hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw) == EINVAL);
	return 0;
}

/*
 * FreeBSD's share/examples/hwpmc/overhead.c allocates "TSC" with an
 * initial count and writes it: both are accepted and ignored.
 */
static int tsc_ignored(int fd)
{
	__u64 a, b, c;
	__u32 id;

	CHECK(!hwpmc_alloc(fd, PMC_CLASS_TSC, 0, PMC_MODE_SC, 0, 0, 12345,
			   &id));
	CHECK(!hwpmc_start(fd, id));
	CHECK(!hwpmc_read(fd, id, &a));
	CHECK(a > 12345);		/* the TSC, not the initial count */
	CHECK(!hwpmc_stop(fd, id));
	CHECK(!hwpmc_write(fd, id, 0));
	CHECK(!hwpmc_setcount(fd, id, 1));
	CHECK(!hwpmc_read(fd, id, &b));
	CHECK(b >= a);			/* not reset by the write */
	CHECK(!hwpmc_start(fd, id));
	CHECK(!hwpmc_read(fd, id, &c));
	CHECK(c >= b);
	CHECK(!hwpmc_release(fd, id));
	return 0;
}

/* GETPMCINFO pm_event: HWPMC_EV_GLOBAL(class, code) of the row's PMC. */
static int pmcinfo_global_event(int fd)
{
	struct pmc_info info[64];
	__u32 n = 64, r, id, hard, tsc;
	int seen = 0;

	CHECK(!hwpmc_soft_sc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	CHECK(!hwpmc_soft_sc(fd, PMC_SOFT_CLOCK_HARD, 0, &hard));
	CHECK(!hwpmc_alloc(fd, PMC_CLASS_TSC, 0, PMC_MODE_SC, 0, 0, 0, &tsc));
	CHECK(!hwpmc_pmcinfo(fd, 0, info, &n));
	for (r = 0; r < n; r++) {
		if (info[r].pm_mode > PMC_MODE_MAX) {
			CHECK(info[r].pm_event == 0);
			continue;
		}
		if (info[r].pm_ownerpid != getpid())
			continue;
		CHECK(HWPMC_EV_CLASS(info[r].pm_event) == info[r].pm_class);
		if (info[r].pm_class == PMC_CLASS_SOFT &&
		    info[r].pm_event == HWPMC_EV_GLOBAL(PMC_CLASS_SOFT,
						PMC_SOFT_SCHED_SWITCH))
			seen |= 1;
		if (info[r].pm_class == PMC_CLASS_SOFT &&
		    info[r].pm_event == HWPMC_EV_GLOBAL(PMC_CLASS_SOFT,
						PMC_SOFT_CLOCK_HARD))
			seen |= 2;
	}
	CHECK(seen == 3);
	CHECK(info[0].pm_class == PMC_CLASS_TSC && info[0].pm_event == 0);
	return 0;
}

/*
 * Run @fn on a fresh owner in a child, as root or as uid/gid 65534 (then
 * with kernel.hwpmc.unprivileged_syspmcs 1, which system-scope counting
 * needs); the child's exit status is the failed line, or 0.
 */
static int run_as(int nobody, int (*fn)(int))
{
	long old = hwpmc_sysctl_get(SYSPMCS);
	int status = -1;
	pid_t p;

	if (nobody && hwpmc_sysctl_set(SYSPMCS, 1))
		return -2;
	p = fork();
	if (!p) {
		int fd;

		if (nobody && (setresgid(65534, 65534, 65534) ||
			       setresuid(65534, 65534, 65534)))
			_exit(1);
		/* The uid change cleared it: our own children stay ours. */
		if (nobody && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(3);
		fd = hwpmc_open();
		if (fd < 0)
			_exit(2);
		_exit(fn(fd) & 0xff);
	}
	if (p > 0)
		waitpid(p, &status, 0);
	if (nobody)
		hwpmc_sysctl_set(SYSPMCS, old);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

FIXTURE(user) {
	int unused;
};

FIXTURE_VARIANT(user) {
	int nobody;
};

FIXTURE_VARIANT_ADD(user, root) { .nobody = 0 };
FIXTURE_VARIANT_ADD(user, nobody) { .nobody = 1 };

FIXTURE_SETUP(user)
{
	if (geteuid())
		SKIP(return, "needs root (it drops to uid 65534 itself)");
}

FIXTURE_TEARDOWN(user)
{
}

/* [EBUSY] PMCATTACH of a running PMC (FreeBSD: allocated or stopped only). */
TEST_F(user, attach_running_is_ebusy)
{
	int line = run_as(variant->nobody, attach_running);

	EXPECT_EQ(0, line) TH_LOG("failed at line %d (mod 256)", line);
}

/* [EINVAL] PMCRW with neither PMC_F_NEWVALUE nor PMC_F_OLDVALUE. */
TEST_F(user, rw_without_flags_is_einval)
{
	int line = run_as(variant->nobody, rw_no_flags);

	EXPECT_EQ(0, line) TH_LOG("failed at line %d (mod 256)", line);
}

TEST_F(user, tsc_count_and_write_ignored)
{
	int line = run_as(variant->nobody, tsc_ignored);

	EXPECT_EQ(0, line) TH_LOG("failed at line %d (mod 256)", line);
}

TEST_F(user, pmcinfo_event_is_global)
{
	int line = run_as(variant->nobody, pmcinfo_global_event);

	EXPECT_EQ(0, line) TH_LOG("failed at line %d (mod 256)", line);
}

TEST_HARNESS_MAIN
