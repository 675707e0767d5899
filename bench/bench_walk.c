// SPDX-License-Identifier: GPL-2.0
/*
 * bench_walk: what a PMC with many targets costs everyone else on its CPU
 * while its owner starts and stops it (the walks of its targets):
 *
 *   bench_walk [-n N] [-s SECONDS] [-p PERIOD_US]
 *
 * Forks a process with N sleeping children (default 10,000), attaches a
 * process-scope CLOCK.PROF PMC with PMC_F_DESCENDANTS to it (N + 1
 * targets), and runs a SCHED_FIFO thread on CPU 0 that sleeps PERIOD_US
 * (default 200) again and again and measures how late it wakes: first
 * for SECONDS (default 2) with nothing else to do on CPU 0, then for as
 * long while the owner, also on CPU 0, starts and stops the PMC in a loop.
 * A section with interrupts off delays the timer's interrupt; a section
 * without a reschedule delays the thread's switch-in.  Meanwhile a thread
 * on CPU 1 forks a child that exits at once, and waits for it, again and
 * again: while any process is monitored, every exit on the machine takes
 * hwpmc's global hwpmc_proc_lock, so a walk that holds it delays exits on
 * every CPU.  Prints, for each phase, the wake-ups and their lateness,
 * the forks and their round trip (median, 99th percentile, max) and, for
 * the second, the start-and-stop pairs and their mean time.
 * Root (SCHED_FIFO).  Exit 1 with a message if a step fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "hwpmc_util.h"

#define MAX_WAKES	200000

static long period_us = 200;
static volatile int phase_on = 1;
static long *late, *forks;
static long nlate, nforks;
static pid_t root;		/* leads the children's process group */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* On CPU 1: fork, the child exits, wait; each round trip into forks[]. */
static void *forker(void *arg)
{
	long long t;
	pid_t pid;

	(void)arg;
	if (pin(1)) {
		perror("bench_walk: CPU 1");
		exit(1);
	}
	while (phase_on && nforks < MAX_WAKES) {
		t = now_ns();
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
			perror("bench_walk: fork");
			exit(1);
		}
		forks[nforks++] = now_ns() - t;
	}
	return NULL;
}

/* The SCHED_FIFO sleeper: lateness of each wake-up, ns, into late[]. */
static void *sleeper(void *arg)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct timespec ts;
	long long want;

	(void)arg;
	if (pin(0) || sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("bench_walk: SCHED_FIFO on CPU 0");
		exit(1);
	}
	while (phase_on && nlate < MAX_WAKES) {
		want = now_ns() + period_us * 1000;
		ts.tv_sec = want / 1000000000ll;
		ts.tv_nsec = want % 1000000000ll;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		late[nlate++] = now_ns() - want;
	}
	return NULL;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static void report1(const char *what, const char *of, long *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_long);
	printf("%s: %ld %s, median %ld ns, p99 %ld ns, max %ld ns\n", what, n,
	       of, n ? v[n / 2] : 0, n ? v[n * 99 / 100] : 0,
	       n ? v[n - 1] : 0);
}

static void report(const char *what)
{
	report1(what, "wake-ups on CPU 0, late by", late, nlate);
	report1(what, "fork-exit-waits on CPU 1, each", forks, nforks);
	nlate = 0;
	nforks = 0;
}

/* Both threads, for one phase. */
static int threads_start(pthread_t th[2])
{
	phase_on = 1;
	return pthread_create(&th[0], NULL, sleeper, NULL) ||
	       pthread_create(&th[1], NULL, forker, NULL);
}

static void threads_stop(pthread_t th[2])
{
	phase_on = 0;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
}

static int fail(const char *what)
{
	fprintf(stderr, "bench_walk: %s: %s\n", what, strerror(errno));
	if (root > 0)
		kill(-root, SIGKILL);
	return 1;
}

int main(int argc, char **argv)
{
	long n = 10000, secs = 2, pairs = 0, i;
	long long t0, spent = 0;
	pthread_t th[2];
	int opt, fd, up[2];
	__u32 id;
	char c;

	while ((opt = getopt(argc, argv, "n:s:p:h")) != -1) {
		if (opt == 'n')
			n = atol(optarg);
		else if (opt == 's')
			secs = atol(optarg);
		else if (opt == 'p')
			period_us = atol(optarg);
		else {
			fprintf(stderr, "usage: bench_walk [-n N] [-s SECONDS] [-p PERIOD_US]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	late = calloc(MAX_WAKES, sizeof(*late));
	forks = calloc(MAX_WAKES, sizeof(*forks));
	if (!late || !forks || n < 1 || secs < 1 || period_us < 1)
		return fail("arguments");
	if (pipe(up))
		return fail("pipe");
	root = fork();
	if (root < 0)
		return fail("fork");
	if (!root) {
		setpgid(0, 0);
		for (i = 0; i < n; i++) {
			pid_t k = fork();

			if (k < 0)
				_exit(1);
			if (!k) {
				for (;;)
					pause();
			}
		}
		if (write(up[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (read(up[0], &c, 1) != 1)
		return fail("the children");
	fd = hwpmc_open();
	if (fd < 0 || pin(0))
		return fail("open, CPU 0");
	if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, PMC_F_DESCENDANTS, &id) ||
	    hwpmc_attach(fd, id, root))
		return fail("PMC on the children");
	printf("bench_walk: %ld targets, a %ld us sleeper on CPU 0\n", n + 1,
	       period_us);
	if (threads_start(th))
		return fail("threads");
	t0 = now_ns();
	while (now_ns() - t0 < secs * 1000000000ll)
		getppid();
	threads_stop(th);
	report("owner calling getppid()");
	if (threads_start(th))
		return fail("threads");
	t0 = now_ns();
	while (now_ns() - t0 < secs * 1000000000ll) {
		long long s = now_ns();

		if (hwpmc_start(fd, id) || hwpmc_stop(fd, id))
			return fail("start, stop");
		spent += now_ns() - s;
		pairs++;
	}
	threads_stop(th);
	report("owner starting and stopping");
	printf("start and stop: %ld pairs, %lld ns a pair\n", pairs,
	       pairs ? spent / pairs : 0);
	kill(-root, SIGKILL);
	waitpid(root, NULL, 0);
	return 0;
}
