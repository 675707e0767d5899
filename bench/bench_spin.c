// SPDX-License-Identifier: GPL-2.0
/*
 * bench_spin: a CPU-bound job of a fixed amount of work, in NPROC
 * processes at once; prints the wall time of the work in guest nanoseconds
 * (measured inside, so a profiler's start-up and write-out do not count):
 *
 *   bench_spin [-n LOOPS] [-j NPROC]     -> "spin NS", then "cpu NS" (the
 *   CPU time of its processes, user and system)
 *
 * The work is pure user mode (no system calls between the two clock
 * reads), split into hot() called from mid() called from main's loop, so
 * a profile of it has a known shape.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* User and system CPU time of @who (getrusage()), in ns. */
static uint64_t cpu_ns(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
	       1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) *
	       1000ull;
}

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t hot(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static uint64_t mid(uint64_t x)
{
	return hot(x) ^ (x >> 7);
}

static void work(long loops)
{
	uint64_t x = 1;

	for (long i = 0; i < loops; i++)
		x = mid(x);
	sink = x;
}

int main(int argc, char **argv)
{
	long loops = 200000, nproc = 1;
	int opt, status, rc = 0;
	uint64_t t0, t1;

	while ((opt = getopt(argc, argv, "n:j:h")) != -1) {
		switch (opt) {
		case 'n':
			loops = strtol(optarg, NULL, 0);
			break;
		case 'j':
			nproc = strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: bench_spin [-n LOOPS] [-j NPROC]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (loops < 1 || nproc < 1 || nproc > 256) {
		fprintf(stderr, "bench_spin: -n >= 1, 1 <= -j <= 256\n");
		return 2;
	}
	t0 = now_ns();
	for (long p = 1; p < nproc; p++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("bench_spin: fork");
			return 1;
		}
		if (pid == 0) {
			work(loops);
			_exit(0);
		}
	}
	work(loops);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	t1 = now_ns();
	printf("spin %llu\n", (unsigned long long)(t1 - t0));
	/* The job's own CPU time (its processes'), for a recorder's cost. */
	printf("cpu %llu\n", (unsigned long long)(cpu_ns(RUSAGE_SELF) +
						  cpu_ns(RUSAGE_CHILDREN)));
	return rc;
}
