// SPDX-License-Identifier: GPL-2.0
/*
 * scripts/icount-workload.c - the guest workload of scripts/icount-repro
 * (issue 22).  Built by icount-repro (static, into build/icount/) and run
 * inside a guest; it needs nothing of hwpmc.
 *
 *   icount-workload ITERS [SECONDS]
 *
 * Four phases, each ITERS iterations (and at most SECONDS of guest wall
 * time each, default 60):
 *   exec-static  fork + exec + wait of a tiny static binary whose first
 *                instruction is "mov $60,%eax" (build/icount/exit0, passed
 *                in $ICOUNT_EXIT0) and of /bin/busybox (static) "true";
 *   exec-true    fork + exec + wait of /bin/true (dynamic: ld.so, mmap);
 *   pipe         a one-byte ping-pong between parent and child over pipes;
 *   open         open + read + close of files of the 9p root (/etc, /usr).
 * With ICOUNT_TIMER_HZ=N in the environment, a POSIX timer (an hrtimer in
 * the kernel) interrupts the guest N times a second throughout, with a
 * SIGALRM to this process each time: the interrupt load of hwpmc's
 * CLOCK.PROF sampling without hwpmc (a control).
 * Every child must exit 0: a child killed by a signal or exiting non-zero
 * is printed as "icount-workload: FAIL ..." and counted.  The last line is
 *   icount-workload: done N iterations, F failures
 * and the exit status is 0 only without failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long failures;
static volatile long ticks;

static void on_alarm(int sig)
{
	ticks++;
}

/* The control's timer: ICOUNT_TIMER_HZ interrupts a second. */
static void start_timer(long hz)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM };
	struct itimerspec its = { 0 };
	timer_t t;

	sigaction(SIGALRM, &sa, NULL);
	its.it_interval.tv_nsec = 1000000000L / hz;
	its.it_value = its.it_interval;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) || timer_settime(t, 0, &its, NULL)) {
		printf("icount-workload: timer: %s\n", strerror(errno));
		exit(1);
	}
}
static long done;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *phase, long i, const char *what, int st)
{
	failures++;
	if (WIFSIGNALED(st))
		printf("icount-workload: FAIL %s iteration %ld: %s killed by signal %d (%s)\n",
		       phase, i, what, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		printf("icount-workload: FAIL %s iteration %ld: %s status 0x%x\n",
		       phase, i, what, st);
	fflush(stdout);
}

static void run_exec(const char *phase, long i, char *const argv[])
{
	int st;
	pid_t pid = fork();

	if (pid < 0) {
		printf("icount-workload: fork: %s\n", strerror(errno));
		failures++;
		return;
	}
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid) {
		fail(phase, i, argv[0], -1);
		return;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail(phase, i, argv[0], st);
}

static void pingpong(long iters, double limit)
{
	int a[2], b[2], st;
	char c = 'x';
	long i;
	pid_t pid;
	double t0 = now();

	if (pipe(a) || pipe(b)) {
		failures++;
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1)
			if (write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	for (i = 0; i < iters && now() - t0 < limit; i++) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) {
			printf("icount-workload: FAIL pipe iteration %ld: %s\n", i,
			       strerror(errno));
			failures++;
			break;
		}
		done++;
	}
	close(a[1]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("pipe", i, "echo child", st);
	close(b[0]);
	printf("icount-workload: pipe %ld round trips in %.1f s\n", i, now() - t0);
}

int main(int argc, char **argv)
{
	static const char *const files[] = {
		"/etc/passwd", "/etc/hostname", "/etc/os-release",
		"/usr/share/common-licenses/GPL-2", "/etc/group",
	};
	long iters, i;
	double limit = 60, t0;
	const char *exit0 = getenv("ICOUNT_EXIT0");
	char buf[4096];

	if (argc < 2 || (iters = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: icount-workload ITERS [SECONDS]\n");
		return 2;
	}
	if (argc > 2)
		limit = atof(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (getenv("ICOUNT_TIMER_HZ") && atol(getenv("ICOUNT_TIMER_HZ")) > 0)
		start_timer(atol(getenv("ICOUNT_TIMER_HZ")));

	t0 = now();
	for (i = 0; i < iters && now() - t0 < limit; i++, done++) {
		char *tiny[] = { (char *)exit0, NULL };
		char *bb[] = { "/bin/busybox", "true", NULL };

		if (exit0)
			run_exec("exec-static", i, tiny);
		run_exec("exec-static", i, bb);
	}
	printf("icount-workload: exec-static %ld iterations in %.1f s\n", i, now() - t0);

	t0 = now();
	for (i = 0; i < iters && now() - t0 < limit; i++, done++) {
		char *tr[] = { "/bin/true", NULL };

		run_exec("exec-true", i, tr);
	}
	printf("icount-workload: exec-true %ld iterations in %.1f s\n", i, now() - t0);

	pingpong(iters * 10, limit);

	t0 = now();
	for (i = 0; i < iters * 4 && now() - t0 < limit; i++, done++) {
		const char *f = files[i % (sizeof(files) / sizeof(files[0]))];
		int fd = open(f, O_RDONLY);

		if (fd < 0) {
			if (errno != ENOENT) {
				printf("icount-workload: FAIL open %s: %s\n", f, strerror(errno));
				failures++;
			}
			continue;
		}
		if (read(fd, buf, sizeof(buf)) < 0) {
			printf("icount-workload: FAIL read %s: %s\n", f, strerror(errno));
			failures++;
		}
		close(fd);
	}
	printf("icount-workload: open %ld opens in %.1f s\n", i, now() - t0);

	if (ticks)
		printf("icount-workload: %ld timer signals\n", ticks);
	printf("icount-workload: done %ld iterations, %ld failures\n", done, failures);
	return failures ? 1 : 0;
}
