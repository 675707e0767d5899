// SPDX-License-Identifier: GPL-2.0
/*
 * bench_pingpong: a parent and a child bounce one byte over two pipes;
 * prints the mean round trip in nanoseconds of guest time:
 *
 *   bench_pingpong [-n ROUND_TRIPS] [-c CPU]  -> "pingpong NS_PER_ROUND_TRIP"
 *
 * Every round trip is two context switches, so this is the cost a context
 * switch hook adds to every task of the machine.  -c pins both processes
 * to one CPU (make bench does: which CPUs the two would otherwise land on
 * changes the figure more than any hook does).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/wait.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = 50000;
	int ab[2], ba[2], opt, status, cpu = -1;
	uint64_t t0, t1;
	char c = 0;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:c:h")) != -1) {
		if (opt == 'c') {
			cpu = (int)strtol(optarg, NULL, 0);
			continue;
		}
		if (opt != 'n') {
			fprintf(stderr, "usage: bench_pingpong [-n ROUND_TRIPS] [-c CPU]\n");
			return opt == 'h' ? 0 : 2;
		}
		n = strtol(optarg, NULL, 0);
		if (n < 1) {
			fprintf(stderr, "bench_pingpong: -n: at least 1\n");
			return 2;
		}
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("bench_pingpong: -c");
			return 1;
		}
	}
	if (pipe(ab) || pipe(ba)) {
		perror("bench_pingpong: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("bench_pingpong: fork");
		return 1;
	}
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
			perror("bench_pingpong: pipe i/o");
			return 1;
		}
	t1 = now_ns();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "bench_pingpong: child failed\n");
		return 1;
	}
	printf("pingpong %.1f\n", (double)(t1 - t0) / (double)n);
	return 0;
}
