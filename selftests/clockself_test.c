// SPDX-License-Identifier: GPL-2.0
/*
 * A program that reads its own CLOCK.PROF counting PMC (pmc(3)'s usual
 * way: attached to itself, its only thread the reader) gets its CPU time
 * up to the read, in-flight time included (the module reads the caller's
 * own CPU with interrupts off, issue 21).  The truth is the process's
 * own CPU clock, clock_gettime(CLOCK_PROCESS_CPUTIME_ID), read just
 * before and just after each read: every read lies between the two
 * (less the clock at PMCSTART), within SLACK_NS; no read is below the
 * one before; after PMCSTOP the PMC equals the CPU time up to the stop.
 * The reader spins between reads and is pinned to one CPU, so a read
 * that left out the time since the last switch would lag by the whole
 * run.  As root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <sys/prctl.h>

#define NREADS		2000
#define SPIN_NS		20000ull	/* CPU time between two reads */
#define SLACK_NS	20000ull

/* Spin until this process's CPU clock moved by @ns. */
static void burn(__u64 ns)
{
	__u64 end = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID) + ns;

	while (hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		;
}

/*
 * As root or nobody: 0, a step that failed (1..9), or 20 (a read below
 * the CPU time before it), 21 (a read above the CPU time after it), 22 (a
 * read went down), 23 (the stopped value is off).
 */
static int run(void *arg)
{
	__u64 c0, c1, before, after, v, prev = 0, s0, s1;
	int fd, i, rc = 0, below = 0, above = 0, down = 0;
	__u64 worst_below = 0, worst_above = 0;
	bool nobody = arg != NULL;
	__u32 id;

	if (nobody && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	if (hwpmc_pin_cpu(0))
		return 1;
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &id) ||
	    hwpmc_attach(fd, id, 0))
		return 2;
	c0 = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (hwpmc_start(fd, id))
		return 3;
	c1 = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (i = 0; i < NREADS; i++) {
		burn(SPIN_NS);
		before = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		if (hwpmc_read(fd, id, &v))
			return 4;
		after = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		if (v + SLACK_NS < before - c1) {
			below++;
			if (before - c1 - v > worst_below)
				worst_below = before - c1 - v;
		}
		if (v > after - c0 + SLACK_NS) {
			above++;
			if (v - (after - c0) > worst_above)
				worst_above = v - (after - c0);
		}
		if (v < prev)
			down++;
		prev = v;
	}
	s0 = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (hwpmc_stop(fd, id))
		return 5;
	s1 = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (hwpmc_read(fd, id, &v))
		return 6;
	fprintf(stderr, "#   %s: %d reads, %d below the CPU time before them by more than %llu ns (worst %llu), %d above the CPU time after them (worst %llu), %d went down; stopped: PMC %llu ns, CPU time %llu-%llu ns\n",
		nobody ? "uid 65534" : "root", NREADS, below, SLACK_NS,
		(unsigned long long)worst_below, above,
		(unsigned long long)worst_above, down,
		(unsigned long long)v, (unsigned long long)(s0 - c1),
		(unsigned long long)(s1 - c0));
	if (below)
		rc = 20;
	else if (above)
		rc = 21;
	else if (down)
		rc = 22;
	else if (v + SLACK_NS < s0 - c1 || v > s1 - c0 + SLACK_NS)
		rc = 23;
	close(fd);
	return rc;
}

FIXTURE(self) {
	int unused;
};

FIXTURE_SETUP(self)
{
}

FIXTURE_TEARDOWN(self)
{
}

TEST_F_TIMEOUT(self, own_reads_hold_the_time_in_flight, 300)
{
	static int tag;
	int rc;

	rc = hwpmc_as_nobody(run, &tag);
	EXPECT_EQ(0, rc) TH_LOG("uid 65534: step %d failed (20: a read below the CPU time before it; 21: above the CPU time after it; 22: a read went down; 23: the stopped value is off)",
				rc);
	rc = hwpmc_run_in_child(run, NULL);	/* pinning and PMC go with it */
	EXPECT_EQ(0, rc) TH_LOG("root: step %d failed (see above)", rc);
}

TEST_HARNESS_MAIN
