// SPDX-License-Identifier: GPL-2.0
/*
 * CLOCK.PROF counts a new task from zero even when it takes the memory
 * of a task that died on the same CPU while no SOFT PMC existed: the
 * module must not keep the dead task's runtime as the new one's base.
 *
 * Each round, on CPU 0: a child counts 60 ms of its own CPU time with
 * CLOCK.PROF, releases the PMC (no SOFT PMC is left, so switches are no
 * longer followed), burns a little more and exits; after a grace period
 * (its task_struct is freed, and the next fork likely reuses it) a second
 * child counts 10 ms of its CPU time.  The second count is bracketed by
 * its thread clock: at least 99% of the CPU time from the return of
 * PMCSTART to the call of PMCSTOP, at most 101% of that from the call of
 * PMCSTART to the return of PMCSTOP (the ioctls' own time, long on a
 * debug kernel, may or may not count).  Before the fix 33 rounds in 40
 * counted 0 (6.1, TCG).  As root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <sys/prctl.h>

#define NOBODY		65534
#define ROUNDS		8
#define FIRST_NS	60000000ull	/* the first child's counted CPU time */
#define SECOND_NS	10000000ull	/* the second's */

/*
 * In a child: count @ns of CPU time, release, burn 5 ms more, exit.
 * Writes the count and the thread's CPU time inside and around
 * start..stop to @out.
 */
static int count_child(int out, __u64 ns)
{
	__u64 v[3] = { 0, 0, 0 }, c0, c0i, c1i, c1;
	__u32 id;
	int fd = hwpmc_open();

	if (fd < 0)
		return 10;
	if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &id) ||
	    hwpmc_attach(fd, id, 0))
		return 11;
	c0 = hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (hwpmc_start(fd, id))
		return 12;
	c0i = hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	hwpmc_burn_cpu_ns(ns);
	c1i = hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (hwpmc_stop(fd, id))
		return 13;
	c1 = hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (hwpmc_read(fd, id, &v[0]) || hwpmc_release(fd, id))
		return 14;
	close(fd);
	v[1] = c1i - c0i;
	v[2] = c1 - c0;
	if (hwpmc_xwrite(out, v, sizeof(v)))
		return 15;
	hwpmc_burn_cpu_ns(5000000ull);
	return 0;
}

/* count_child() of *@arg ns, run by hwpmc_child_start(). */
static int count_child_fn(struct hwpmc_child *me, void *arg)
{
	return count_child(me->tx, *(__u64 *)arg);
}

/* Fork a child that runs count_child(); its three figures in @v. */
static int run_counter(__u64 ns, __u64 v[3])
{
	struct hwpmc_child c;

	if (hwpmc_child_start(&c, count_child_fn, &ns))
		return -1;
	if (hwpmc_xread(c.rx, v, 3 * sizeof(*v)))
		v[0] = v[1] = v[2] = 0;
	return hwpmc_child_wait(&c);
}

/* The rounds, in a child (as @nobody says).  Exit 0, or the failure. */
static int rounds(struct hwpmc_child *me, void *arg)
{
	bool nobody = *(bool *)arg;
	unsigned int i, bad = 0;
	__u64 v[3];
	int rc;

	if (nobody && (setresgid(NOBODY, NOBODY, NOBODY) ||
		       setresuid(NOBODY, NOBODY, NOBODY) ||
		       prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)))
		return 2;
	if (hwpmc_pin_cpu(0))
		return 3;
	for (i = 0; i < ROUNDS; i++) {
		rc = run_counter(FIRST_NS, v);
		if (rc)
			return 100 + rc;
		/* RCU frees the dead child's task_struct. */
		usleep(100000);
		rc = run_counter(SECOND_NS, v);
		if (rc)
			return 100 + rc;
		if (v[0] < v[1] - v[1] / 100 || v[0] > v[2] + v[2] / 100) {
			printf("# round %u as %s: CLOCK.PROF %llu ns, thread clock %llu ns inside the ioctls, %llu ns around them\n",
			       i, nobody ? "uid 65534" : "root",
			       (unsigned long long)v[0],
			       (unsigned long long)v[1],
			       (unsigned long long)v[2]);
			bad++;
		}
	}
	fflush(stdout);
	return bad ? 1 : 0;
}

static void check(struct __test_metadata *_metadata, bool nobody)
{
	struct hwpmc_child c = { .pid = -1, .tx = -1, .rx = -1 };
	int rc;

	ASSERT_EQ(0, hwpmc_child_start(&c, rounds, &nobody));
	rc = hwpmc_child_wait(&c);
	EXPECT_EQ(0, rc) TH_LOG("as %s: %s (%d)", nobody ? "uid 65534" : "root",
				rc == 1 ? "a new task's count was not its CPU time" :
				"a step failed (1xx: a counting child's step xx)",
				rc);
}

TEST(new_task_at_a_dead_ones_address_counts_from_zero_root)
{
	check(_metadata, false);
}

TEST(new_task_at_a_dead_ones_address_counts_from_zero_nobody)
{
	check(_metadata, true);
}

TEST_HARNESS_MAIN
