// SPDX-License-Identifier: GPL-2.0
/*
 * CLOCK.PROF counts the CPU time the scheduler accounts to its targets:
 * within 0.5% of the job's CPU clocks (the sum of its threads'
 * se.sum_exec_runtime, what /proc/PID/schedstat and
 * CLOCK_PROCESS_CPUTIME_ID show) on a switch-heavy job (a parent and a child
 * bouncing a byte over two pipes) and on a multi-threaded job whose
 * threads migrate between CPUs, as root and as uid 65534.
 *
 * The job blocks before and after its work, and the PMC and the job's
 * processes' CPU clocks (clock_getcpuclockid()) are read meanwhile, so
 * that both sides cover the same window: the PMC is read between two
 * reads of the clocks that agree (quiet_read()).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>

#define ROUNDS		10000		/* ping-pong round trips */
#define NTHREADS	4
#define THREAD_NS	150000000ull	/* CPU time per thread */

/*
 * A job, run in the gated child: tells its CPU time so far on @out and
 * waits for a byte on @in (the PMC is read meanwhile), does its work,
 * writes the CPU time the work took (ns) to @out and waits for @in to
 * close before it exits.  The PMC's count over the same window is
 * compared: a guest that its host starves charges whatever runs with the
 * lost time, so neither side may count a moment the other does not.
 */
typedef int (*job_fn)(int out, int in);

/* The start of a job's window: tell, and wait for the word.  0: error. */
static __u64 job_begin(int out, int in)
{
	__u64 ns = 0;
	char c;

	if (hwpmc_xwrite(out, &ns, sizeof(ns)) || read(in, &c, 1) != 1)
		return 0;
	return 1;
}

/*
 * Process @pid's CPU time as the scheduler accounts it (the sum of its
 * threads' se.sum_exec_runtime, those gone included), ns; 0 on error.
 */
static __u64 cpu_clock_of(pid_t pid)
{
	long long ns = hwpmc_proc_cputime(pid);

	return ns < 0 ? 0 : (__u64)ns;
}

/*
 * The PMC (@pmc) and the scheduler's CPU time of @pid and @other (0: none)
 * at one moment when none of their threads runs.  A job that wrote its word
 * is not blocked yet: it still runs into its read(), and a starved virtual
 * CPU can stretch that to milliseconds; and a process's CPU clock read from
 * another process leaves out the time of a stint still running.  So the
 * read waits until every thread is blocked, and is taken only if the
 * clocks did not move across it.  0 on success.
 */
static int quiet_read(int fd, __u32 id, pid_t pid, pid_t other,
		      __u64 *pmc, __u64 *sched)
{
	__u64 before, after;
	int tries, b;

	for (tries = 0; tries < 5000; tries++) {
		b = hwpmc_job_blocked(pid);
		if (b == 1 && other)
			b = hwpmc_job_blocked(other);
		if (b < 0)
			return -1;
		if (!b) {
			usleep(1000);
			continue;
		}
		before = cpu_clock_of(pid) + (other ? cpu_clock_of(other) : 0);
		if (hwpmc_read(fd, id, pmc))
			return -1;
		after = cpu_clock_of(pid) + (other ? cpu_clock_of(other) : 0);
		if (before == after) {
			*sched = after;
			return 0;
		}
	}
	return -1;
}

/* Parent and child: ROUNDS round trips of a byte over two pipes. */
static int job_pingpong(int out, int in)
{
	int ab[2], ba[2], back[2];
	__u64 mine, theirs = 0;
	pid_t pid;
	char c = 0;
	long i;

	__u64 start;

	if (pipe(ab) || pipe(ba) || pipe(back))
		return 30;
	start = job_begin(out, in);
	if (!start)
		return 37;
	pid = fork();
	if (pid < 0)
		return 31;
	if (!pid) {
		close(ab[1]);
		close(ba[0]);
		close(back[0]);
		for (i = 0; i < ROUNDS; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		mine = getpid();
		if (write(back[1], &mine, sizeof(mine)) != sizeof(mine))
			_exit(2);
		/* Blocked until the parent's job is over (EOF). */
		if (read(ab[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	close(back[1]);
	for (i = 0; i < ROUNDS; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 32;
	if (hwpmc_xread(back[0], &theirs, sizeof(theirs)))
		return 33;
	/* Done: the child's pid, for its CPU clock (it is blocked too). */
	if (!theirs || hwpmc_xwrite(out, &theirs, sizeof(theirs)))
		return 34;
	/* The PMC is read while both wait here. */
	if (read(in, &c, 1) < 0)
		return 35;
	close(ab[1]);
	return waitpid(pid, NULL, 0) == pid ? 0 : 36;
}

/*
 * Threads burning THREAD_NS of CPU time each, moving themselves between
 * the CPUs as they go (and yielding), so that they migrate and share
 * CPUs with each other.
 */
static int burner_done[2], burner_hold[2];

static void *burner(void *arg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), k = (long)arg;
	volatile unsigned long spin = 0;
	unsigned int i;
	char c = 0;

	while (hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID) < THREAD_NS) {
		if (ncpu > 1)
			hwpmc_pin_cpu(k++ % ncpu);
		for (i = 0; i < 200000; i++)
			spin++;
		sched_yield();
	}
	/*
	 * Block, alive, until the clocks were read: an exited thread's
	 * time goes to its process's clock before its last switch, which
	 * the scheduler still charges to it (and CLOCK.PROF counts).
	 */
	if (write(burner_done[1], &c, 1) != 1 || read(burner_hold[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static int job_threads(int out, int in)
{
	pthread_t t[NTHREADS];
	cpu_set_t all;
	__u64 ns, start;
	long i;
	char c;

	CPU_ZERO(&all);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
	if (pipe(burner_done) || pipe(burner_hold))
		return 44;
	start = job_begin(out, in);
	if (!start)
		return 43;
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, burner, (void *)i))
			return 40;
	for (i = 0; i < NTHREADS; i++)
		if (read(burner_done[0], &c, 1) != 1)
			return 45;
	/* Every thread's time, the exited ones' too. */
	ns = 0;		/* done, no other process */
	if (hwpmc_xwrite(out, &ns, sizeof(ns)))
		return 41;
	if (read(in, &c, 1) < 0)
		return 42;
	close(burner_hold[1]);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

struct run {
	job_fn job;
	bool nobody;
	const char *name;
};

/*
 * In a child (as @r->nobody says): a process-scope counting CLOCK.PROF
 * with PMC_F_DESCENDANTS attached to the gated job; its count against the
 * job's own clocks.  Exit 0 when within 0.5%.
 */
static int run_job(struct hwpmc_child *me, void *arg)
{
	const struct run *r = arg;
	int fd, go, res[2], rel[2], status = 0;
	__u64 sched_ns = 0, pmc_ns = 0, pmc_start = 0, sched_start, other;
	double err;
	__u32 id;
	pid_t pid;

	if (r->nobody && hwpmc_become_nobody())
		return 10;
	if (pipe(res) || pipe(rel))
		return 11;
	fd = hwpmc_open();
	if (fd < 0)
		return 12;
	if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, PMC_F_DESCENDANTS, &id))
		return 13;
	pid = hwpmc_fork_gated_job(&go, res, rel, r->job);
	if (pid < 0)
		return 14;
	if (hwpmc_attach(fd, id, pid) || hwpmc_start(fd, id))
		return 15;
	if (write(go, "g", 1) != 1)
		return 16;
	/*
	 * The job is blocked at each read: nothing of it is running, and
	 * the scheduler's accounting of it (its processes' CPU clocks,
	 * read from here) stands still, so both sides cover one window.
	 */
	if (hwpmc_xread(res[0], &other, sizeof(other)) ||
	    quiet_read(fd, id, pid, 0, &pmc_start, &sched_start))
		return 17;
	if (!sched_start || write(rel[1], "g", 1) != 1)
		return 17;
	if (hwpmc_xread(res[0], &other, sizeof(other))) {
		/* The job failed: its status says where. */
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			return 100 + WEXITSTATUS(status);
		return WIFSIGNALED(status) ? 200 + WTERMSIG(status) : 17;
	}
	/* @other was forked in the window: all of its time is in it. */
	if (quiet_read(fd, id, pid, other, &pmc_ns, &sched_ns))
		return 18;
	sched_ns -= sched_start;
	pmc_ns -= pmc_start;
	close(rel[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 19;
	if (WEXITSTATUS(status))
		return 100 + WEXITSTATUS(status);
	err = ((double)pmc_ns - (double)sched_ns) / (double)sched_ns;
	printf("# %s as %s: CLOCK.PROF %llu ns, scheduler %llu ns, %+.3f%%\n",
	       r->name, r->nobody ? "uid 65534" : "root",
	       (unsigned long long)pmc_ns, (unsigned long long)sched_ns,
	       100 * err);
	fflush(stdout);
	close(fd);
	return err < -0.005 || err > 0.005 ? 20 : 0;
}

static void check(struct __test_metadata *_metadata, job_fn job,
		  const char *name)
{
	struct run r = { job, false, name };
	struct hwpmc_child c;
	int rc;

	ASSERT_EQ(0, hwpmc_child_start(&c, run_job, &r));
	rc = hwpmc_child_wait(&c);
	EXPECT_EQ(0, rc) TH_LOG("%s as root: step %d failed (20: off by more than 0.5%%; 1xx: the job's step xx, 2xx: killed by signal xx)",
				name, rc);
	r.nobody = true;
	ASSERT_EQ(0, hwpmc_child_start(&c, run_job, &r));
	rc = hwpmc_child_wait(&c);
	EXPECT_EQ(0, rc) TH_LOG("%s as uid 65534: step %d failed (20: off by more than 0.5%%; 1xx: the job's step xx)",
				name, rc);
}

/* Slow under TCG: a fixture for the timeouts. */
FIXTURE(clk) {
	int unused;
};

FIXTURE_SETUP(clk)
{
}

FIXTURE_TEARDOWN(clk)
{
}

/* Two processes switching 4 * ROUNDS times: nothing lost per switch. */
TEST_F_TIMEOUT(clk, pingpong_matches_schedstat, 600)
{
	check(_metadata, job_pingpong, "pipe ping-pong, 2 processes");
}

/* NTHREADS threads migrating between the CPUs. */
TEST_F_TIMEOUT(clk, threads_match_process_cputime, 600)
{
	check(_metadata, job_threads, "4 migrating threads");
}

TEST_HARNESS_MAIN
