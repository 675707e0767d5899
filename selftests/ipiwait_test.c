// SPDX-License-Identifier: GPL-2.0
/*
 * PMCSTART and PMCSTOP of a CLOCK.PROF PMC wait for every CPU (each folds
 * the CPU time its task ran so far, by IPI) without holding the module's
 * global lock, so one CPU that answers late (a vCPU its hypervisor
 * descheduled) stalls that owner only (issue 21): with CPU 1 held with
 * interrupts off (the test flavor's debugfs hwpmc-test/hold_cpu), the
 * operation, on CPU 2, is seen spinning in the kernel (its system time
 * grows, and it cannot return before CPU 1 answers), and another
 * process's open(), PMCALLOCATE, PMCRELEASE and close() of /dev/hwpmc,
 * all of which take the global lock, return on CPU 0 while CPU 1 is still
 * held; once it is let go, the operation returns.  As root and as uid
 * 65534.  No timing.
 *
 * Needs 3 CPUs: the waiting CPU spins with preemption off, so with 2 the
 * other owner has nowhere to run.  make check runs it in a guest of its
 * own with 3 vCPUs; in the 2-vCPU guests it is a SKIP.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/wait.h>

#define HOLD_MS		"15000"
#define SPIN_TICKS	20		/* USER_HZ ticks of system time */

enum wait_op {
	OP_START,
	OP_STOP,
};

struct wait_case {
	bool nobody;
	enum wait_op op;
};

/*
 * The waiter, on CPU 2: a SCHED.SWITCH PMC it keeps (so that the other
 * owner's release is not the last SOFT PMC's, which folds every CPU too)
 * and a CLOCK.PROF counting PMC on itself, stopped (OP_START) or running
 * (OP_STOP); on the parent's word it starts or stops it and reports.
 */
static int waiter(struct hwpmc_child *me, void *arg)
{
	const struct wait_case *w = arg;
	__u32 keep, id;
	__u64 v;
	int fd, err;

	if (hwpmc_pin_cpu(2))
		return 9;
	if (w->nobody && hwpmc_become_nobody())
		return 10;
	fd = hwpmc_open();
	if (fd < 0)
		return 11;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &keep) ||
	    hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &id) ||
	    hwpmc_attach(fd, id, getpid()))
		return 12;
	if (w->op == OP_STOP && hwpmc_start(fd, id))
		return 13;
	if (hwpmc_send_u64(me, 1) || hwpmc_recv_u64(me, &v))
		return 14;
	err = w->op == OP_START ? hwpmc_start(fd, id) : hwpmc_stop(fd, id);
	if (err)
		return 15;
	if (hwpmc_send_u64(me, 2))
		return 16;
	close(fd);
	return 0;
}

/* Another owner's operations under the global lock, on CPU 0. */
static int other(struct hwpmc_child *me, void *arg)
{
	return hwpmc_other_owner(me, ((const struct wait_case *)arg)->nobody);
}

/* @pid's system time (USER_HZ ticks, /proc/PID/stat field 15), or -1. */
static long long stime_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (hwpmc_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');		/* after the command name */
	for (field = 2; p && field < 15; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &st) != 1)
		return -1;
	return st;
}

static void run(struct __test_metadata *_metadata, struct wait_case *w)
{
	const char *who = w->nobody ? "uid 65534" : "root";
	const char *op = w->op == OP_START ? "PMCSTART" : "PMCSTOP";
	long long st0, st = -1;
	struct hwpmc_child r, o;
	int i, status, still;
	__u64 v;
	pid_t h;

	ASSERT_EQ(0, hwpmc_child_start(&r, waiter, w));
	ASSERT_EQ(0, hwpmc_recv_u64(&r, &v)) TH_LOG("%s: the waiter failed: %d",
						    who, hwpmc_child_wait(&r));
	ASSERT_EQ(0, hwpmc_child_start(&o, other, w));
	st0 = stime_of(r.pid);
	ASSERT_LE(0, st0);
	h = hwpmc_hold_cpu(1, HOLD_MS);
	ASSERT_LT(0, h);
	ASSERT_EQ(2, hwpmc_cpu_held_wait(1)) TH_LOG("CPU 1 was never held");
	/* The operation waits for CPU 1, spinning on CPU 2. */
	ASSERT_EQ(0, hwpmc_send_u64(&r, 1));
	for (i = 0; i < 100000 && hwpmc_cpu_held() == 2; i++) {
		st = stime_of(r.pid);
		if (st < 0 || st >= st0 + SPIN_TICKS)
			break;
		usleep(1000);
	}
	/* Meanwhile another owner's operations under the global lock. */
	ASSERT_EQ(0, hwpmc_send_u64(&o, 1));
	ASSERT_EQ(0, hwpmc_recv_u64(&o, &v)) TH_LOG("%s: the other owner failed: %d",
						    who, hwpmc_child_wait(&o));
	still = hwpmc_cpu_held();
	EXPECT_EQ(0, hwpmc_hold_write("0"));
	ASSERT_EQ(h, waitpid(h, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, hwpmc_send_u64(&o, 1));
	EXPECT_EQ(0, hwpmc_child_wait(&o));
	/* CPU 1 answers: the operation returns. */
	ASSERT_EQ(0, hwpmc_recv_u64(&r, &v)) TH_LOG("%s: the waiter failed: %d",
						    who, hwpmc_child_wait(&r));
	EXPECT_EQ(2, v);
	EXPECT_EQ(0, hwpmc_child_wait(&r));
	EXPECT_LE(st0 + SPIN_TICKS, st) TH_LOG("%s: %s was not seen waiting in the kernel while CPU 1 was held (system time %lld -> %lld ticks)",
					       who, op, st0, st);
	EXPECT_EQ(2, still) TH_LOG("%s: another owner's operations returned only after CPU 1 was let go: %s waited under the global lock",
				   who, op);
}

FIXTURE(hold) {
	int dummy;
};

FIXTURE_VARIANT(hold) {
	enum wait_op op;
};

FIXTURE_VARIANT_ADD(hold, start) { .op = OP_START };
FIXTURE_VARIANT_ADD(hold, stop) { .op = OP_STOP };

FIXTURE_SETUP(hold)
{
	int err;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 3)
		SKIP(return, "needs 3 CPUs: the waiting CPU spins with preemption off, so with 2 the other owner has nowhere to run (make check runs this test in a 3-vCPU guest)");
	err = hwpmc_hold_setup();
	if (err == ENOENT)
		SKIP(return, HWPMC_NO_TEST_FLAVOR);
	ASSERT_EQ(0, err) TH_LOG("pinning, loading the test flavor: %s", strerror(err));
}

FIXTURE_TEARDOWN(hold)
{
	hwpmc_release_flavor_load();
}

TEST_F_TIMEOUT(hold, root_stalls_no_one, 300)
{
	struct wait_case w = { .nobody = false, .op = variant->op };

	run(_metadata, &w);
}

TEST_F_TIMEOUT(hold, nobody_stalls_no_one, 300)
{
	struct wait_case w = { .nobody = true, .op = variant->op };

	run(_metadata, &w);
}

TEST_HARNESS_MAIN
