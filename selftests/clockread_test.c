// SPDX-License-Identifier: GPL-2.0
/*
 * Reads do not wait for other CPUs (issue 21): with CPU 1 held busy with
 * interrupts off (the test flavor's debugfs hwpmc-test/hold_cpu, as a
 * vCPU its hypervisor descheduled), PMCRW reads of running SCHED.SWITCH
 * and CLOCK.PROF PMCs whose target runs on CPU 0 return while CPU 1 is
 * still held, as root and as uid 65534.  No timing: the hold is released
 * by the test, after the reads.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <sys/wait.h>

#define HOLD_MS		"15000"
#define NREADS		50

/*
 * The PMCs' side (root or nobody): two counting PMCs on a busy target
 * pinned to CPU 0, started; tells the parent, waits for its word (CPU 1
 * is held), reads each NREADS times, sends the last CLOCK.PROF value.
 */
static int reader(struct hwpmc_child *me, void *arg)
{
	bool nobody = *(bool *)arg;
	__u64 v, sw = 0, prof = 0, last = 0;
	__u32 sid, cid;
	int fd, go, i;
	pid_t pid;

	if (nobody && hwpmc_become_nobody())
		return 10;
	fd = hwpmc_open();
	if (fd < 0)
		return 11;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &sid) ||
	    hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &cid))
		return 12;
	pid = hwpmc_fork_gated(&go);
	if (pid < 0)
		return 13;
	if (!pid) {
		volatile unsigned long spin = 0;

		for (;;) {		/* CPU 0 (inherited), until killed */
			for (i = 0; i < 100000; i++)
				spin++;
			sched_yield();
		}
	}
	if (hwpmc_attach(fd, sid, pid) || hwpmc_attach(fd, cid, pid) ||
	    hwpmc_start(fd, sid) || hwpmc_start(fd, cid))
		return 14;
	if (write(go, "g", 1) != 1)
		return 15;
	usleep(100000);
	if (hwpmc_send_u64(me, 1) || hwpmc_recv_u64(me, &v))
		return 16;
	for (i = 0; i < NREADS; i++) {
		if (hwpmc_read(fd, sid, &sw) || hwpmc_read(fd, cid, &prof))
			return 17;
		if (prof < last)
			return 18;	/* CLOCK.PROF went backwards */
		last = prof;
	}
	if (hwpmc_send_u64(me, prof) || hwpmc_send_u64(me, sw))
		return 19;
	/*
	 * Stopping or releasing a CLOCK.PROF PMC does fold every CPU (an
	 * IPI, waited for with preemption off): only once CPU 1 is free.
	 */
	if (hwpmc_recv_u64(me, &v))
		return 20;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	return 0;
}

static void run(struct __test_metadata *_metadata, bool nobody)
{
	const char *who = nobody ? "uid 65534" : "root";
	struct hwpmc_child c;
	__u64 v, prof = 0, sw = 0;
	int status, still;
	pid_t h;

	ASSERT_EQ(0, hwpmc_child_start(&c, reader, &nobody));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v)) TH_LOG("%s: the reader failed: %d",
						    who, hwpmc_child_wait(&c));
	h = hwpmc_hold_cpu(1, HOLD_MS);
	ASSERT_LT(0, h);
	ASSERT_EQ(2, hwpmc_cpu_held_wait(1)) TH_LOG("CPU 1 was never held");
	/* CPU 1 answers nothing now: the reads must not need it. */
	ASSERT_EQ(0, hwpmc_send_u64(&c, 1));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &prof))
		TH_LOG("%s: the reader failed: %d", who, hwpmc_child_wait(&c));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &sw));
	still = hwpmc_cpu_held();
	EXPECT_EQ(0, hwpmc_hold_write("0"));
	ASSERT_EQ(h, waitpid(h, &status, 0));
	ASSERT_EQ(0, hwpmc_send_u64(&c, 1));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	EXPECT_EQ(2, still) TH_LOG("%s: %d reads returned only after CPU 1 was let go",
				   who, 2 * NREADS);
	EXPECT_LT(0, prof) TH_LOG("%s: CLOCK.PROF counted nothing", who);
	EXPECT_LT(0, sw) TH_LOG("%s: SCHED.SWITCH counted nothing", who);
	TH_LOG("%s: %d reads while CPU 1 was held: CLOCK.PROF %llu ns, SCHED.SWITCH %llu",
	       who, 2 * NREADS, (unsigned long long)prof,
	       (unsigned long long)sw);
}

FIXTURE(hold) {
	int dummy;
};

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

TEST_F_TIMEOUT(hold, reads_do_not_wait_for_a_held_cpu, 300)
{
	run(_metadata, false);
	run(_metadata, true);
}

TEST_HARNESS_MAIN
