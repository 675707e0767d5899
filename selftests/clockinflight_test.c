// SPDX-License-Identifier: GPL-2.0
/*
 * A read of a running process's CLOCK.PROF counting PMC includes the CPU
 * time the process has run since its threads' last switch or tick (issue
 * 21: the in-flight time, read from the CPU each thread runs on, without
 * a cross-call).  The truth is the target's own CPU clock: it publishes
 * clock_gettime(CLOCK_PROCESS_CPUTIME_ID), which the scheduler brings up
 * to date for the caller, in a shared page as it spins.  Every read is at
 * least the value published before it (the switches and ticks alone lag
 * by up to a tick, 4 ms at HZ=250); no read is below the one before;
 * once the target is stopped, the PMC equals its scheduler runtime since
 * PMCSTART (exactly, in every run so far) and no read exceeded it.  A
 * one-thread target (its thread is looked for on its CPU) and one with
 * more threads than CPUs (every CPU is looked at); as root and as uid
 * 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define NREADS		300
#define SLACK_NS	100000ull	/* clocks read on two CPUs */
#define FINAL_SLACK_NS	100000ull

struct shared {
	volatile __u64 self_ns;		/* the target's CPU time, published */
	volatile int ready;
};

struct job {
	int nthreads;			/* of the target */
	bool nobody;
};

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

/* The target: its threads spin, the first publishes its CPU time. */
static void target(struct shared *sh, int nthreads)
{
	pthread_t t;
	int i;

	for (i = 1; i < nthreads; i++)
		if (pthread_create(&t, NULL, spin, NULL))
			_exit(1);
	sh->ready = 1;
	for (;;)
		sh->self_ns = hwpmc_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* Is @pid asleep ('S' in /proc/PID/stat)? */
static bool sleeping(pid_t pid)
{
	char path[64], comm[64], state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%*d (%63[^)]) %c", comm, &state) != 2)
		state = 0;
	fclose(f);
	return state == 'S';
}

/*
 * The PMC's side, as root or nobody: 0, a step that failed (1..9), or 20
 * (a read below the published CPU time), 21 (the stopped total is off),
 * 22 (a read above the stopped total), 23 (a read went down).
 */
static int run(struct job *j)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	__u64 v, prev = 0, pub, vf, maxv = 0, worst = 0;
	long long c0, total;
	int fd = -1, go, rc = 0, below = 0, down = 0, i, st;
	pid_t pid;
	__u32 id;

	if (sh == MAP_FAILED)
		return 1;
	if (hwpmc_pin_cpu(0))
		return 2;
	pid = hwpmc_fork_gated(&go);
	if (pid < 0)
		return 3;
	if (!pid) {
		/* One thread: on CPU 1, away from the reader. */
		if (j->nthreads == 1 && hwpmc_pin_cpu(1))
			_exit(1);
		if (j->nthreads > 1) {
			cpu_set_t all;

			CPU_ZERO(&all);
			for (i = 0; i < CPU_SETSIZE; i++)
				CPU_SET(i, &all);
			sched_setaffinity(0, sizeof(all), &all);
		}
		target(sh, j->nthreads);
	}
	/*
	 * Its runtime before the PMC starts, once it sleeps on its gate
	 * (switched out: exact; it sleeps nowhere else).  Taken after
	 * PMCSTART instead, it would hold time the PMC rightly counts when
	 * the child first runs after the start.
	 */
	for (i = 0; i < 500 && !sleeping(pid); i++)
		usleep(10000);
	c0 = hwpmc_proc_cputime(pid);
	fd = hwpmc_open();
	if (i == 500 || c0 < 0) {
		rc = 4;
		goto out;
	}
	if (fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &id) ||
	    hwpmc_attach(fd, id, pid) || hwpmc_start(fd, id) ||
	    write(go, "g", 1) != 1) {
		rc = 5;
		goto out;
	}
	while (!sh->ready || !sh->self_ns)
		sched_yield();
	usleep(20000);
	for (i = 0; i < NREADS; i++) {
		pub = sh->self_ns - c0;
		if (hwpmc_read(fd, id, &v)) {
			rc = 6;
			goto out;
		}
		if (v + SLACK_NS < pub) {
			below++;
			if (pub - v > worst)
				worst = pub - v;
		}
		if (v < prev)
			down++;
		prev = v;
		if (v > maxv)
			maxv = v;
	}
	if (kill(pid, SIGSTOP) || waitpid(pid, &st, WUNTRACED) != pid ||
	    !WIFSTOPPED(st)) {
		rc = 7;
		goto out;
	}
	/*
	 * The stopped target tells its parent before it leaves the CPU:
	 * wait until its runtime stops moving (a running task's moves at
	 * every tick), so that it is the scheduler's final word.
	 */
	total = hwpmc_proc_cputime(pid);
	for (i = 0; i < 100; i++) {
		long long again;

		usleep(20000);
		again = hwpmc_proc_cputime(pid);
		if (again == total)
			break;
		total = again;
	}
	if (total < 0 || i == 100 || hwpmc_read(fd, id, &vf)) {
		rc = 8;
		goto out;
	}
	fprintf(stderr, "#   %d thread(s)%s: %d reads, %d below the published CPU time by more than %llu ns (worst %llu ns); %d went down; highest read %llu ns; stopped: PMC %llu ns, scheduler %lld ns\n",
		j->nthreads, j->nobody ? " as uid 65534" : "", NREADS, below,
		SLACK_NS, (unsigned long long)worst, down,
		(unsigned long long)maxv, (unsigned long long)vf, total - c0);
	if (below)
		rc = 20;
	else if (vf > (__u64)(total - c0) + FINAL_SLACK_NS ||
		 vf + FINAL_SLACK_NS < (__u64)(total - c0))
		rc = 21;
	else if (maxv > vf)
		rc = 22;
	else if (down)
		rc = 23;
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int run_nobody(void *arg)
{
	/* A set*id() call made this process undumpable: attach needs it. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	((struct job *)arg)->nobody = true;
	return run(arg);
}

static void check(struct __test_metadata *_metadata, int nthreads)
{
	struct job j = { .nthreads = nthreads };
	int rc;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 online CPUs (the target runs beside the reader)");
	if (nthreads == 0)
		j.nthreads = nthreads = sysconf(_SC_NPROCESSORS_ONLN) + 1;
	rc = hwpmc_as_nobody(run_nobody, &j);
	EXPECT_EQ(0, rc) TH_LOG("uid 65534, %d thread(s): step %d failed (20: a read lagged the target's own CPU clock; 21: the total is off; 22: a read above the total; 23: a read went down)",
				nthreads, rc);
	j.nobody = false;
	rc = run(&j);
	EXPECT_EQ(0, rc) TH_LOG("root, %d thread(s): step %d failed (see above)",
				nthreads, rc);
}

FIXTURE(inflight) {
	int unused;
};

FIXTURE_SETUP(inflight)
{
}

FIXTURE_TEARDOWN(inflight)
{
}

TEST_F_TIMEOUT(inflight, one_thread_reads_are_current, 300)
{
	check(_metadata, 1);
}

/* More threads than CPUs: every CPU is looked at instead. */
TEST_F_TIMEOUT(inflight, many_threads_reads_are_current, 300)
{
	check(_metadata, 0);
}

TEST_HARNESS_MAIN
