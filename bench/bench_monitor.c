// SPDX-License-Identifier: GPL-2.0
/*
 * bench_monitor: N processes monitored somewhere else on the machine, for
 * make bench's "scale" part (what an unmonitored ping-pong pays while
 * they exist):
 *
 *   bench_monitor -n N -e EVENT
 *
 * Forks N processes, each of which opens /dev/hwpmc, allocates a
 * process-scope counting PMC of EVENT (a SOFT event name, e.g.
 * SCHED.SWITCH or CLOCK.PROF) on itself, starts it and sleeps (N owners,
 * as N profiled programs would be: a SOFT class has 16 rows per owner);
 * prints "ready N" once all are, and waits until its standard input
 * closes; then kills them and exits 0.  Exit 1 with a message if a step
 * fails.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <hwpmc/pmc.h>

#include "bench_kids.h"

static pid_t *kids;
static long nkids;

static void kill_kids(void)
{
	bench_kill_kids(kids, nkids);
}

static int fail(const char *what)
{
	fprintf(stderr, "bench_monitor: %s (process %ld): %s\n", what, nkids,
		strerror(errno));
	kill_kids();
	return 1;
}

int main(int argc, char **argv)
{
	const char *event = "SCHED.SWITCH";
	long n = 1, i;
	char buf[64];
	int opt, ready[2];

	while ((opt = getopt(argc, argv, "n:e:h")) != -1) {
		if (opt == 'n') {
			n = strtol(optarg, NULL, 0);
		} else if (opt == 'e') {
			event = optarg;
		} else {
			fprintf(stderr, "usage: bench_monitor -n N -e EVENT\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 1 || n > 100000) {
		fprintf(stderr, "bench_monitor: -n: 1 to 100000\n");
		return 2;
	}
	kids = calloc((size_t)n, sizeof(*kids));
	if (!kids || pipe(ready))
		return fail("calloc/pipe");
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return fail("fork");
		if (!pid) {
			pmc_id_t id;

			close(ready[0]);
			if (pmc_init() ||
			    pmc_allocate(event, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) ||
			    pmc_attach(id, 0) || pmc_start(id)) {
				fprintf(stderr, "bench_monitor: process %ld: %s: %s\n",
					i, event, strerror(errno));
				_exit(1);
			}
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		kids[nkids++] = pid;
	}
	close(ready[1]);
	for (i = 0; i < n; i++)
		if (read(ready[0], buf, 1) != 1)
			return fail("a monitored process did not start");
	printf("ready %ld\n", n);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	kill_kids();
	return 0;
}
