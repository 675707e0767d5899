// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling on both CPUs while processes fork, exec and exit in a loop:
 * system-scope CLOCK.PROF with callchains on CPU 0 and CPU 1 and a
 * process-scope sampler that follows descendants, all of one owner and
 * one log.  The log must parse, hold samples from both CPUs, account for
 * every sample taken (taken = logged + dropped) and name every fork and
 * exec of the descendants.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <sched.h>
#include <time.h>
#include <sys/wait.h>

#define LOGPATH "/tmp/hwpmc-forkexec-test.log"
#define TRUE_BIN "/bin/true"
#define LOOP_SECS 3
#define MIN_ROUNDS 6	/* per loop, however slow the guest (PREEMPT_RT, TCG) */

struct tally {
	__u32 sys[2], desc;	/* PMC ids */
	pid_t runner;		/* the descendant sampler's target */
	int sys_cpu[2];		/* samples of sys[i] taken on CPU i */
	int sys_wrong_cpu;
	int desc_samples, callchains;
	int forks, execs, execs_wrong_path;
	__u64 dropped, throttled;
};

static int tally_fn(const struct pmclog_header *h, void *arg)
{
	struct tally *t = arg;
	const struct pmclog_callchain *cc = (const void *)h;
	const struct pmclog_procexec *ex = (const void *)h;
	const struct pmclog_procfork *fk = (const void *)h;
	int i;

	switch (h->pl_type) {
	case PMCLOG_TYPE_CALLCHAIN:
		t->callchains++;
		for (i = 0; i < 2; i++) {
			if (cc->pl_pmcid != t->sys[i])
				continue;
			if (cc->pl_cpu == (__u32)i)
				t->sys_cpu[i]++;
			else
				t->sys_wrong_cpu++;
		}
		if (cc->pl_pmcid == t->desc)
			t->desc_samples++;
		break;
	case PMCLOG_TYPE_DROPNOTIFY:
		hwpmc_add_drops(h, &t->dropped, &t->throttled);
		break;
	case PMCLOG_TYPE_PROCFORK:
		if (fk->pl_ppid == (__u32)t->runner)
			t->forks++;
		break;
	case PMCLOG_TYPE_PROCEXEC:
		if (ex->pl_pmcid != t->desc)
			break;
		t->execs++;
		if (!strstr(ex->pl_path, "true"))
			t->execs_wrong_path++;
		break;
	}
	return 0;
}

/*
 * Pinned to @cpu, fork a child that execs /bin/true and wait for it, for
 * LOOP_SECS after "go" and at least MIN_ROUNDS times; then report the
 * number of rounds on @out.
 */
static pid_t spawn_loop(int cpu, int *go, int out)
{
	pid_t pid = hwpmc_fork_gated(go);
	struct timespec t0, t;
	int n = 0, status;

	if (pid)
		return pid;
	if (hwpmc_pin_cpu(cpu))
		_exit(10);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pid_t c = fork();

		if (c < 0)
			_exit(11);
		if (!c) {
			execl(TRUE_BIN, "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(c, &status, 0) != c || status)
			_exit(12);
		n++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < LOOP_SECS || n < MIN_ROUNDS);
	if (write(out, &n, sizeof(n)) != sizeof(n))
		_exit(13);
	_exit(0);
}

TEST(sampling_both_cpus_while_fork_exec_exit)
{
	struct pmc_op_getdriverstats a, b;
	struct tally t = { 0 };
	int fd, logfd, go[2], rounds[2], p[2][2], status, i;
	pid_t pid[2];
	size_t len;
	char *buf;
	__u64 taken;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs CPUs 0 and 1 online");
	if (access(TRUE_BIN, X_OK))
		SKIP(return, "no %s", TRUE_BIN);
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(fd, logfd));
	/* A loop on each CPU; the one on CPU 0 is followed by t.desc. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pipe(p[i]));
		pid[i] = spawn_loop(i, &go[i], p[i][1]);
		ASSERT_LT(0, pid[i]);
		close(p[i][1]);
		ASSERT_EQ(0, hwpmc_alloc(fd, PMC_CLASS_SOFT,
					 PMC_SOFT_CLOCK_PROF, PMC_MODE_SS,
					 PMC_F_CALLCHAIN, i, 1000000,
					 &t.sys[i]));
	}
	t.runner = pid[0];
	ASSERT_EQ(0, hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_TS, PMC_F_CALLCHAIN | PMC_F_DESCENDANTS,
				 PMC_CPU_ANY, 1000000, &t.desc));
	ASSERT_EQ(0, hwpmc_attach(fd, t.desc, t.runner));
	ASSERT_EQ(0, hwpmc_driverstats(fd, &a));
	ASSERT_EQ(0, hwpmc_start(fd, t.sys[0]));
	ASSERT_EQ(0, hwpmc_start(fd, t.sys[1]));
	ASSERT_EQ(0, hwpmc_start(fd, t.desc));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(1, write(go[i], "g", 1));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		ASSERT_EQ(0, status) TH_LOG("loop %d failed: %#x", i, status);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(sizeof(int), read(p[i][0], &rounds[i], sizeof(int)));
		close(p[i][0]);
	}
	ASSERT_EQ(0, hwpmc_stop(fd, t.sys[0]));
	ASSERT_EQ(0, hwpmc_stop(fd, t.sys[1]));
	ASSERT_EQ(0, hwpmc_closelog(fd));
	ASSERT_EQ(0, hwpmc_driverstats(fd, &b));

	buf = hwpmc_slurp(LOGPATH, &len);
	ASSERT_NE(NULL, buf);
	ASSERT_LT(0, hwpmc_for_each_record(buf, len, tally_fn, &t))
		TH_LOG("the log does not parse");
	free(buf);
	taken = b.pm_samples_taken - a.pm_samples_taken;
	TH_LOG("rounds %d+%d; samples: CPU0 %d, CPU1 %d, descendants %d; forks %d, execs %d; taken %llu, logged %d, dropped %llu",
	       rounds[0], rounds[1], t.sys_cpu[0], t.sys_cpu[1],
	       t.desc_samples, t.forks, t.execs, (unsigned long long)taken,
	       t.callchains, (unsigned long long)t.dropped);
	EXPECT_LT(10, rounds[0] + rounds[1]);
	EXPECT_LT(0, t.sys_cpu[0]);
	EXPECT_LT(0, t.sys_cpu[1]);
	EXPECT_EQ(0, t.sys_wrong_cpu);
	EXPECT_LT(0, t.desc_samples);
	EXPECT_EQ(taken, (__u64)t.callchains + t.dropped + t.throttled);
	EXPECT_EQ(b.pm_samples_dropped - a.pm_samples_dropped, t.dropped);
	EXPECT_EQ(b.pm_samples_throttled - a.pm_samples_throttled,
		  t.throttled);
	/* Every fork and exec of the followed loop, each once. */
	EXPECT_EQ(rounds[0], t.execs);
	EXPECT_EQ(rounds[0], t.forks);
	EXPECT_EQ(0, t.execs_wrong_path);
	close(go[0]);
	close(go[1]);
	close(fd);
	close(logfd);
	unlink(LOGPATH);
}

TEST_HARNESS_MAIN
