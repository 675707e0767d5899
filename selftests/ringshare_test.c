// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU sample rings are shared fairly: while two owners sample,
 * each holds at most half of a CPU's ring, so one that floods (SYSCALL.ENTER
 * at period 1 with callchains, as fast as a process can make system calls)
 * does not make the other's samples on the same CPU find the ring full.
 * Both owners sample the same process (every system call is a sample of
 * one, every OTHER_PERIOD-th one of the other too).  Drops stay counted
 * per owner (DROPNOTIFY) and taken = logged + dropped + throttled still
 * holds.  The other's period is long enough that its own half of the
 * ring (128 slots) fills only if the drain stalls for 128 * OTHER_PERIOD
 * system calls: a guest starved by its host once stalled it for 50 * 128
 * (24 of 6,000 samples dropped).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <sched.h>
#include <sys/wait.h>

#define LOG_A		"/tmp/hwpmc-ringshare-a.log"
#define LOG_B		"/tmp/hwpmc-ringshare-b.log"
#define SYSCTL_RATE	"/proc/sys/kernel/hwpmc/max_sample_rate"
#define NSYSCALLS	300000
#define OTHER_PERIOD	1000

struct tally {
	__u64 logged, dropped, throttled;
};

static int tally_fn(const struct pmclog_header *h, void *arg)
{
	struct tally *t = arg;

	if (h->pl_type == PMCLOG_TYPE_CALLCHAIN) {
		t->logged++;
	} else {
		hwpmc_add_drops(h, &t->dropped, &t->throttled);
	}
	return 0;
}

static int read_tally(const char *path, struct tally *t)
{
	size_t len;
	char *buf = hwpmc_slurp(path, &len);
	int n;

	if (!buf)
		return -1;
	n = hwpmc_for_each_record(buf, len, tally_fn, t);
	free(buf);
	return n;
}

/* An owner sampling SYSCALL.ENTER of a process. */
struct owner {
	int fd, logfd;
	__u32 id;
};

static int owner_start(struct owner *o, const char *log, __u64 period,
		       __u32 flags, pid_t pid)
{
	o->fd = hwpmc_open();
	if (o->fd < 0)
		return -1;
	o->logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (o->logfd < 0 || hwpmc_configure_log(o->fd, o->logfd))
		return -1;
	if (hwpmc_alloc(o->fd, PMC_CLASS_SOFT, PMC_SOFT_SYSCALL_ENTER,
			PMC_MODE_TS, flags, PMC_CPU_ANY, period, &o->id))
		return -2;
	if (hwpmc_attach(o->fd, o->id, pid))
		return -3;
	if (hwpmc_start(o->fd, o->id))
		return -4;
	return 0;
}

static int owner_finish(struct owner *o)
{
	if (hwpmc_stop(o->fd, o->id) || hwpmc_closelog(o->fd))
		return -1;
	close(o->fd);
	close(o->logfd);
	return 0;
}

FIXTURE(share) {
	long rate;
};

FIXTURE_SETUP(share)
{
	self->rate = hwpmc_sysctl_get(SYSCTL_RATE);
}

FIXTURE_TEARDOWN(share)
{
	if (self->rate > 0)
		hwpmc_sysctl_set(SYSCTL_RATE, self->rate);
	unlink(LOG_A);
	unlink(LOG_B);
}

TEST_F(share, flooding_owner_does_not_starve_another)
{
	struct pmc_op_getdriverstats s0, s1;
	struct tally a = { 0 }, b = { 0 };
	struct owner oa, ob;
	cpu_set_t set;
	int fd, go, status;
	pid_t pid;

	/* No throttling in the way: only the ring is contended. */
	if (self->rate > 0)
		ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_RATE, 1000000));
	/* One process on CPU 0: one ring, both owners' samples in it. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	pid = hwpmc_fork_gated(&go);
	ASSERT_LE(0, pid);
	if (!pid) {
		hwpmc_burn_syscalls(NSYSCALLS);
		_exit(0);
	}
	ASSERT_EQ(0, owner_start(&oa, LOG_A, 1, PMC_F_CALLCHAIN, pid));
	ASSERT_EQ(0, owner_start(&ob, LOG_B, OTHER_PERIOD, 0, pid));
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s0));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	close(go);
	ASSERT_EQ(0, owner_finish(&ob));
	ASSERT_EQ(0, owner_finish(&oa));
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s1));
	close(fd);
	ASSERT_LT(0, read_tally(LOG_A, &a));
	ASSERT_LT(0, read_tally(LOG_B, &b));
	TH_LOG("flooder: %llu logged, %llu dropped, %llu throttled; other: %llu logged, %llu dropped, %llu throttled",
	       (unsigned long long)a.logged, (unsigned long long)a.dropped,
	       (unsigned long long)a.throttled, (unsigned long long)b.logged,
	       (unsigned long long)b.dropped, (unsigned long long)b.throttled);
	/* The flood was real: the flooder lost samples to its full share. */
	ASSERT_LT(0, a.dropped);
	EXPECT_EQ(0, b.dropped);
	EXPECT_LE(NSYSCALLS / OTHER_PERIOD, b.logged + b.throttled);
	/* Per owner, and together: taken = logged + dropped + throttled. */
	EXPECT_EQ(s1.pm_samples_taken - s0.pm_samples_taken,
		  a.logged + a.dropped + a.throttled +
		  b.logged + b.dropped + b.throttled);
	EXPECT_EQ(s1.pm_samples_dropped - s0.pm_samples_dropped,
		  a.dropped + b.dropped);
}

TEST_HARNESS_MAIN
