// SPDX-License-Identifier: GPL-2.0
/*
 * Operations that wait for an RCU grace period do so without holding the
 * module's global lock, so one user who repeats them stalls no other
 * user:
 *  - the release of a sampling PMC (its samplers finish, its samples are
 *    drained before it goes; once for all of a closing owner's PMCs);
 *  - PMCSETCOUNT of a PMC stopped just now (its value settles once the
 *    hooks that saw it running are done);
 *  - PMCALLOCATE of a PMC whose hook (a tracepoint) was detached just
 *    now: attaching it again waits for a grace period since the detach
 *    (the kernel's tracepoint code), so the hooks are attached before
 *    the global lock is taken.
 * With CPU 1 held with preemption off (the test flavor's debugfs
 * hwpmc-test/hold_gp), no grace period can end: the operation is then
 * seen waiting in RCU (its /proc wchan), and another process's open(),
 * PMCALLOCATE, PMCRELEASE and close() of /dev/hwpmc, all of which take
 * the global lock, return while CPU 1 is still held; once it is let go,
 * the operation returns.  As root and as uid 65534.  No timing.
 *
 * Interrupts stay on on CPU 1, so that the kernel's own IPIs (a TLB
 * flush of a freed vmalloc area, sent with preemption off) are answered:
 * with them off, such an IPI, sent now and then by the kernel whatever
 * hwpmc does, stopped CPU 0 too until CPU 1 was let go.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <sys/wait.h>

#define HOLD_MS		"15000"

enum wait_op {
	OP_RELEASE,		/* of a sampling PMC */
	OP_SETCOUNT,		/* of a counting PMC just stopped */
	OP_ATTACH,		/* PMCALLOCATE that attaches a hook */
};

struct wait_case {
	bool nobody;
	enum wait_op op;
};

/*
 * The waiter: a counting and a sampling PMC it keeps (so that the other
 * side's release is not the last SOFT PMC's and no hook loses its last
 * user: the test is about grace periods, not about IPIs) and the PMC of
 * its operation, which it runs on the parent's word, reporting when
 * done: the release of a sampling PMC, the stop and PMCSETCOUNT of a
 * running counting one, or the allocation of a SYSCALL.ENTER PMC (whose
 * hook it attached and let go before: detached 5 s later).
 */
static int waiter(struct hwpmc_child *me, void *arg)
{
	const struct wait_case *w = arg;
	__u32 keep, id = 0;
	__u64 v;
	int fd, err = 0;

	if (w->nobody && hwpmc_become_nobody())
		return 10;
	fd = hwpmc_open();
	if (fd < 0)
		return 11;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &keep) ||
	    hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF, PMC_MODE_TS,
			0, PMC_CPU_ANY, 10000000, &keep))
		return 12;
	switch (w->op) {
	case OP_RELEASE:
		err = hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				  PMC_MODE_TS, 0, PMC_CPU_ANY, 10000000, &id);
		break;
	case OP_SETCOUNT:
		err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id) ?:
		      hwpmc_start(fd, id);
		break;
	case OP_ATTACH:
		err = hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id) ?:
		      hwpmc_release(fd, id);
		break;
	}
	if (err)
		return 13;
	if (hwpmc_send_u64(me, 1) || hwpmc_recv_u64(me, &v))
		return 14;
	switch (w->op) {
	case OP_RELEASE:
		err = hwpmc_release(fd, id);
		break;
	case OP_SETCOUNT:
		err = hwpmc_stop(fd, id) ?: hwpmc_setcount(fd, id, 0);
		break;
	case OP_ATTACH:
		err = hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id);
		break;
	}
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

/* Where @pid sleeps (its /proc wchan), into @buf; "" if unknown. */
static void wchan_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* Is @pid asleep in RCU (waiting for a grace period)? */
static bool in_rcu_wait(pid_t pid)
{
	char buf[128];

	wchan_of(pid, buf, sizeof(buf));
	return strstr(buf, "rcu");
}

static void run(struct __test_metadata *_metadata, struct wait_case *w)
{
	const char *who = w->nobody ? "uid 65534" : "root";
	struct hwpmc_child r, o;
	int i, status, still, waiting;
	char wchan[128];
	__u64 v;
	pid_t h;

	ASSERT_EQ(0, hwpmc_child_start(&r, waiter, w));
	ASSERT_EQ(0, hwpmc_recv_u64(&r, &v)) TH_LOG("%s: the waiter failed: %d",
						    who, hwpmc_child_wait(&r));
	ASSERT_EQ(0, hwpmc_child_start(&o, other, w));
	h = hwpmc_hold_cpu_at(HWPMC_HOLD_GP, 1, HOLD_MS);
	ASSERT_LT(0, h);
	ASSERT_EQ(2, hwpmc_cpu_held_wait(1)) TH_LOG("CPU 1 was never held");
	/*
	 * The hook let go by the waiter is detached while CPU 1 is held,
	 * so that no grace period follows the detach before the attach.
	 */
	if (w->op == OP_ATTACH) {
		int hooks = open(HWPMC_HOOKS, O_RDONLY | O_CLOEXEC);

		ASSERT_LE(0, hooks);
		EXPECT_EQ(0, hwpmc_hooks_wait_off_how(hooks, HWPMC_HOOKBIT_SYS_ENTER, true));
		close(hooks);
		ASSERT_EQ(2, hwpmc_cpu_held()) TH_LOG("%s: the hook was not detached while CPU 1 was held",
						      who);
	}
	/* No grace period ends now: the operation waits in RCU. */
	ASSERT_EQ(0, hwpmc_send_u64(&r, 1));
	for (i = 0; i < 100000 && !in_rcu_wait(r.pid) && hwpmc_cpu_held() == 2; i++)
		usleep(1000);
	waiting = in_rcu_wait(r.pid);
	wchan_of(r.pid, wchan, sizeof(wchan));
	if (!waiting) {
		/* Where it is instead: its kernel stack, for the log. */
		char path[64], *stack;
		size_t len;

		snprintf(path, sizeof(path), "/proc/%d/stack", r.pid);
		stack = hwpmc_slurp(path, &len);
		if (stack) {
			stack[len] = 0;
			TH_LOG("%s: the waiter's stack:\n%s", who, stack);
			free(stack);
		}
	}
	/* Meanwhile another owner's operations under the global lock. */
	ASSERT_EQ(0, hwpmc_send_u64(&o, 1));
	ASSERT_EQ(0, hwpmc_recv_u64(&o, &v)) TH_LOG("%s: the other owner failed: %d",
						    who, hwpmc_child_wait(&o));
	still = hwpmc_cpu_held();
	EXPECT_EQ(0, hwpmc_hold_write_at(HWPMC_HOLD_GP, "0"));
	ASSERT_EQ(h, waitpid(h, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(0, hwpmc_send_u64(&o, 1));
	EXPECT_EQ(0, hwpmc_child_wait(&o));
	/* The grace period ends: the operation returns. */
	ASSERT_EQ(0, hwpmc_recv_u64(&r, &v)) TH_LOG("%s: the waiter failed: %d",
						    who, hwpmc_child_wait(&r));
	EXPECT_EQ(2, v);
	EXPECT_EQ(0, hwpmc_child_wait(&r));
	/* Anywhere else, it waited for CPU 1 some other way. */
	EXPECT_TRUE(waiting) TH_LOG("%s: the operation did not reach its grace-period wait while CPU 1 was held (wchan '%s')",
				    who, wchan);
	EXPECT_EQ(2, still) TH_LOG("%s: another owner's operations returned only after CPU 1 was let go",
				   who);
}

FIXTURE(hold) {
	int dummy;
};

FIXTURE_VARIANT(hold) {
	enum wait_op op;
};

FIXTURE_VARIANT_ADD(hold, release) { .op = OP_RELEASE };
FIXTURE_VARIANT_ADD(hold, setcount) { .op = OP_SETCOUNT };
FIXTURE_VARIANT_ADD(hold, attach) { .op = OP_ATTACH };

FIXTURE_SETUP(hold)
{
	int err;

	err = hwpmc_hold_setup();
	if (err == ENODEV)
		SKIP(return, "needs 2 CPUs");
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
