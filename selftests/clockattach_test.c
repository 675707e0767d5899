// SPDX-License-Identifier: GPL-2.0
/*
 * A running CLOCK.PROF counting PMC whose target exited may be attached
 * again (hwpmc(4)); attached to a process that is running at that moment
 * (a busy loop pinned to CPU 1), it counts that process's CPU time from
 * the attach, although the process was switched in before it: the switch
 * hook follows only targets from their switch-in (issue 21), and the
 * attach folds every CPU's current task.  The truth is the process's CPU
 * clock (clock_getcpuclockid(), exact for a remote task): after the
 * process is stopped, the PMC's growth since before the attach lies
 * between the process's CPU time from just after the attach and from
 * just before it.  As root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define SLACK_NS	100000ull	/* clocks read on two CPUs */
/*
 * Below, a tick more (4 ms at HZ=250): the process clock of another
 * process is its threads' se.sum_exec_runtime, which leaves out the time
 * since the running thread's last tick or switch (seen: 2.7-3.9 ms); the
 * test takes the target's CPU time at its first change after the attach,
 * which is later than the attach, so the margin is for the clocks of two
 * CPUs.  A stint lost whole (no fold at the attach) is the target's run
 * up to its next switch.
 */
#define BELOW_NS	5000000ull
#define RUN_US		300000		/* the target's run after the attach */


/*
 * As root or nobody: 0, a step that failed (1..9), or 20 (the PMC below
 * the CPU time since the attach), 21 (above it).
 */
static int run(void *arg)
{
	volatile int *ready = mmap(NULL, sizeof(*ready), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long long c0, c1, total, again;
	int fd, go, st, i, rc = 0;
	pid_t first, busy = -1;
	__u64 v, v0;
	__u32 id;

	if (ready == MAP_FAILED)
		return 1;
	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	if (hwpmc_pin_cpu(0))
		return 1;
	/* A first target, which exits once the PMC runs. */
	first = hwpmc_fork_gated(&go);
	if (first < 0)
		return 2;
	if (!first)
		_exit(0);
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &id) ||
	    hwpmc_attach(fd, id, first) || hwpmc_start(fd, id) ||
	    write(go, "g", 1) != 1 || waitpid(first, &st, 0) != first) {
		rc = 3;
		goto out;
	}
	/* The second, running on CPU 1 when the PMC is attached to it. */
	busy = fork();
	if (busy < 0) {
		rc = 4;
		goto out;
	}
	if (!busy) {
		if (hwpmc_pin_cpu(1))
			_exit(1);
		*ready = 1;
		for (;;)
			__asm__ volatile("" ::: "memory");
	}
	while (!*ready)
		usleep(1000);
	usleep(20000);
	/*
	 * The PMC holds the first target's CPU time too: its value before
	 * the attach is taken off (a read of a PMC with no target raises
	 * SIGIO, hwpmc(4), ignored here).
	 */
	signal(SIGIO, SIG_IGN);
	if (hwpmc_read(fd, id, &v0)) {
		rc = 5;
		goto out;
	}
	c0 = hwpmc_proc_cputime(busy);
	if (hwpmc_attach(fd, id, busy)) {
		rc = 5;
		goto out;
	}
	/*
	 * Its CPU time from the first tick or switch after the attach: a
	 * value read right after it may lag the attach by a tick, or more
	 * when the host is slow to run the target's vCPU.
	 */
	c1 = hwpmc_proc_cputime(busy);
	for (i = 0; i < 2000 && c1 >= 0 && hwpmc_proc_cputime(busy) == c1; i++)
		usleep(1000);
	c1 = hwpmc_proc_cputime(busy);
	usleep(RUN_US);
	if (kill(busy, SIGSTOP) || waitpid(busy, &st, WUNTRACED) != busy) {
		rc = 6;
		goto out;
	}
	/* Until its runtime stops moving: the scheduler's final word. */
	total = hwpmc_proc_cputime(busy);
	for (i = 0; i < 100; i++) {
		usleep(20000);
		again = hwpmc_proc_cputime(busy);
		if (again == total)
			break;
		total = again;
	}
	if (c0 < 0 || c1 < 0 || total < 0 || i == 100 ||
	    hwpmc_read(fd, id, &v)) {
		rc = 7;
		goto out;
	}
	v -= v0;
	fprintf(stderr, "#   %s: PMC %llu ns since the attach; the target's CPU time since then %lld-%lld ns\n",
		arg ? "uid 65534" : "root", (unsigned long long)v,
		total - c1, total - c0);
	if (v + BELOW_NS < (__u64)(total - c1))
		rc = 20;
	else if (v > (__u64)(total - c0) + SLACK_NS)
		rc = 21;
out:
	if (busy > 0) {
		kill(busy, SIGKILL);
		waitpid(busy, &st, 0);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

FIXTURE(attach) {
	int unused;
};

FIXTURE_SETUP(attach)
{
}

FIXTURE_TEARDOWN(attach)
{
}

TEST_F_TIMEOUT(attach, running_target_counts_from_the_attach, 300)
{
	static int tag;
	int rc;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 online CPUs (the target runs beside the caller)");
	rc = hwpmc_as_nobody(run, &tag);
	EXPECT_EQ(0, rc) TH_LOG("uid 65534: step %d failed (20: the PMC below the target's CPU time since the attach; 21: above it)",
				rc);
	rc = hwpmc_run_in_child(run, NULL);	/* pinning and PMC go with it */
	EXPECT_EQ(0, rc) TH_LOG("root: step %d failed (see above)", rc);
}

TEST_HARNESS_MAIN
