// SPDX-License-Identifier: GPL-2.0
/*
 * hwmodel_nmi_test: the PMI handler on the PMU model: a stale overflow
 * status, the PMI throttle, and NMIs that are no PMI (never claimed by
 * hwpmc, never lost); every test of the fixture also checks that no NMI
 * was lost or unknown (hwmodel.h: the model, the fixture and its
 * layouts).
 */
#define _GNU_SOURCE
#include "hwmodel.h"

/*
 * An overflow bit that nobody took (a counter that wrapped as it was
 * unloaded; here set directly, as STATUS_SET does) must not be inherited
 * by a sampling PMC loaded on that counter later: no sample before its
 * period (when another counter's PMI comes), and its own overflow is an
 * NMI.
 */
TEST_F_TIMEOUT(hw, stale_overflow_status, 120)
{
	struct cc_count c0 = { 0 }, c1 = { 0 };
	__u32 s0, s1;
	int i;

	ASSERT_EQ(0, configure_log(self->fd, self->log));
	if (!variant->global) {
		/* No status to go stale: the model has no STATUS_SET. */
		EXPECT_EQ(EIO, model_advance("status 0x1"));
		return;
	}
	ADV("status 0x1");
	EXPECT_EQ(1, mget(self->cpu, "global_status") & 1);

	/* s0 on counter 0 (period 1000), s1 on counter 1 (period 100). */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SS, 0, self->cpu, 1000, &s0));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SS, 0, self->cpu, 100, &s1));
	ASSERT_EQ(0, hwpmc_start(self->fd, s0));
	ASSERT_EQ(0, hwpmc_start(self->fd, s1));
	EXPECT_EQ(0, mget(self->cpu, "global_status") & 1);
	ADV("100");
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	c0.pmcid = s0;
	c0.cpu = self->cpu;
	ASSERT_LE(0, count_samples(self->log, &c0));
	EXPECT_EQ(0, c0.n) TH_LOG("a sample before the period");
	for (i = 0; i < 9; i++)
		ADV("100");
	ASSERT_EQ(0, hwpmc_stop(self->fd, s0));
	ASSERT_EQ(0, hwpmc_stop(self->fd, s1));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	c0.n = 0;
	ASSERT_LE(0, count_samples(self->log, &c0));
	c1.pmcid = s1;
	c1.cpu = self->cpu;
	ASSERT_LE(0, count_samples(self->log, &c1));
	EXPECT_EQ(1, c0.n);
	EXPECT_EQ(10, c1.n);
}

static int drop_fn(const struct pmclog_header *h, void *arg)
{
	const struct pmclog_dropnotify *d = (const void *)h;

	if (h->pl_type == PMCLOG_TYPE_DROPNOTIFY)
		*(__u64 *)arg += d->pl_samples + d->pl_throttled;
	return 0;
}

/* Samples DROPNOTIFY records of the log at @path report (dropped and throttled); -1 if malformed. */
static long long count_drops(const char *path)
{
	size_t len;
	char *buf = hwpmc_slurp(path, &len);
	__u64 n = 0;
	int rc;

	if (!buf)
		return -1;
	rc = hwpmc_for_each_record(buf, len, drop_fn, &n);
	free(buf);
	return rc < 0 ? -1 : (long long)n;
}

/*
 * A PMI storm cannot livelock a CPU: with kernel.hwpmc.max_sample_rate
 * (default 100000 PMIs per second per CPU; here 1, one PMI per tick) a
 * sampling PMC that overflows past the tick's budget takes no sample and
 * is parked (its counter at minus the longest period) until the next
 * tick, when it starts a fresh period.  Every overflow is accounted for:
 * taken = logged + dropped + throttled (GETDRIVERSTATS), and the log's
 * DROPNOTIFY records count the throttled samples.
 */
TEST_F_TIMEOUT(hw, pmi_storm_is_throttled, 120)
{
	const char *rate = "/proc/sys/kernel/hwpmc/max_sample_rate";
	struct pmc_op_getdriverstats s0, s1;
	struct cc_count c = { 0 };
	long long drops;
	__u64 parked = 0, thr;
	int i, n;
	__u32 id;

	EXPECT_EQ(100000, hwpmc_sysctl_get(rate));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(rate, 0));
	ASSERT_EQ(0, configure_log(self->fd, self->log));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SS, 0, self->cpu, 10, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s0));
	ASSERT_EQ(0, hwpmc_sysctl_set(rate, 1));
	/* Overflows until two fall into one tick: the second is throttled. */
	for (n = 0; n < 400; n++) {
		ADV("10");
		ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
		if (s1.pm_samples_throttled != s0.pm_samples_throttled) {
			parked = mget(self->cpu, "ctr0");
			break;
		}
	}
	ASSERT_LT(n, 400) TH_LOG("no two PMIs in one tick");
	/*
	 * Parked at minus the longest period, far from its next overflow
	 * (unless the next tick came already and started a period again).
	 */
	EXPECT_TRUE(parked == START || parked == (-10ULL & MASK48))
		TH_LOG("ctr0 %#llx", (unsigned long long)parked);
	/* The next tick unparks it (4 ms at HZ=250; 2 s at most here). */
	for (i = 0; i < 200 && mget(self->cpu, "ctr0") != (-10ULL & MASK48); i++)
		usleep(10 * 1000);
	EXPECT_EQ(-10ULL & MASK48, mget(self->cpu, "ctr0"));
	for (i = 0; i < 3; i++) {
		usleep(20 * 1000);	/* each in a tick of its own */
		ADV("10");
	}
	ASSERT_EQ(0, hwpmc_sysctl_set(rate, 100000));
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	c.pmcid = id;
	c.cpu = PMC_CPU_ANY;
	ASSERT_LE(0, count_samples(self->log, &c));
	drops = count_drops(self->log);
	ASSERT_LE(0, drops);
	thr = s1.pm_samples_throttled - s0.pm_samples_throttled;
	EXPECT_LE(1, thr);
	EXPECT_EQ(n + 1 + 3, (int)(s1.pm_samples_taken - s0.pm_samples_taken));
	EXPECT_EQ(s1.pm_samples_taken - s0.pm_samples_taken,
		  c.n + (s1.pm_samples_dropped - s0.pm_samples_dropped) + thr);
	EXPECT_EQ((long long)thr + (long long)(s1.pm_samples_dropped -
					       s0.pm_samples_dropped), drops);
	EXPECT_LE(3 + 1, c.n);		/* sampling again after the tick */
	TH_LOG("%d overflows: %d logged, %llu throttled", n + 1 + 3, c.n,
	       (unsigned long long)thr);
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * AMD without a global status: an NMI that finds no counter wrapped is
 * hwpmc's only within 100 ms of the last PMI it took (or of a counter
 * unloaded), where the NMI of an overflow hwpmc already took may still
 * arrive; later it is ignored.  A system-scope counting PMC on @cpu (its
 * counter at @start, bit 47 set) is never unloaded, so the window is
 * only the PMI's.
 */
static void late_nmi_window(struct __test_metadata *_metadata, int fd,
			    int cpu, __u64 start)
{
	struct pmc_op_getdriverstats s0, s1;
	__u64 t0;
	__u32 id;

	ASSERT_EQ(0, hwpmc_alloc_cfg(fd, PMC_CLASS_K8, EV_INSTR, 0,
				     PMC_MODE_SC, 0, cpu, 0, &id));
	ASSERT_EQ(0, hwpmc_start(fd, id));
	EXPECT_EQ(start, mget(cpu, "ctr0"));
	usleep(300 * 1000);	/* past any window */
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s0));
	ADV("nmi");
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s1));
	EXPECT_EQ(s0.pm_intr_processed, s1.pm_intr_processed);
	EXPECT_EQ(s0.pm_intr_ignored + 1, s1.pm_intr_ignored);

	/* The counter wraps: a PMI, which opens the window. */
	ADV("%llu", HALF);
	t0 = now_ms();
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s0));
	EXPECT_EQ(s1.pm_intr_processed + 1, s0.pm_intr_processed);
	EXPECT_EQ(start, mget(cpu, "ctr0"));
	ADV("nmi");
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s1));
	EXPECT_EQ(s0.pm_intr_processed, s1.pm_intr_processed);
	if (now_ms() - t0 < 80) {
		EXPECT_EQ(s0.pm_intr_ignored, s1.pm_intr_ignored)
			TH_LOG("an NMI in the window after a PMI is claimed");
	} else {
		TH_LOG("window check not made: %llu ms between the NMIs",
		       now_ms() - t0);
	}
	usleep(300 * 1000);
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s0));
	ADV("nmi");
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s1));
	EXPECT_EQ(s0.pm_intr_ignored + 1, s1.pm_intr_ignored);
	EXPECT_EQ(HALF, rd(_metadata, fd, id));
	ASSERT_EQ(0, hwpmc_release(fd, id));
}

/* Last of each variant: no NMI was lost or went unclaimed. */
/*
 * NMIs that are not hwpmc's: one that arrives while the counter a PMC
 * reads with RDPMC has just wrapped (its status bit set, its interrupt
 * off) is not claimed (counted as ignored).  A PMI that arrives after the
 * last stop is claimed, its status bit cleared, while hwpmc holds the
 * counters, and left alone once it holds none.  (The model's "nmi" is an
 * NMI that the model claims itself, as another NMI user would.)  AMD
 * without a global status: see late_nmi_window().
 */
TEST_F_TIMEOUT(hw, foreign_nmis_not_claimed, 120)
{
	struct pmc_op_getdriverstats s0, s1;
	__u32 id, idx = ~0U;
	int tries;
	__u64 bit;
	long sw;

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	ASSERT_EQ(0, idx);
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	/*
	 * Three advances with no switch between them ("x3"), so hwpmc folds
	 * the counter only at the read: the count is 3 * HALF modulo 2^48.
	 * (Three writes would let the test be switched out in between: that
	 * fold makes the count exact, 2^48 more; see
	 * hwmodel_rdpmc_test's held_count_folds_modulo_width.)
	 */
	sw = thread_switches();
	ADV("%llu x3", HALF);
	if (!variant->global) {
		/*
		 * It wrapped, bit 47 clear, but a counter that holds its count
		 * raises no PMI: the NMI is no overflow of it.  (Whether it is
		 * claimed depends on the late-NMI window; see below.)
		 */
		ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s0));
		ADV("nmi");
		ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
		EXPECT_EQ(s0.pm_intr_processed, s1.pm_intr_processed);
		EXPECT_EQ((3 * HALF) & MASK48, rd(_metadata, self->fd, id));
		ASSERT_EQ(0, hwpmc_release(self->fd, id));
		late_nmi_window(_metadata, self->fd, self->cpu, START);
		return;
	}
	/*
	 * It wrapped, with no PMI: its status bit is all there is.  Loading
	 * the counter clears that bit (x86_load()), and so does a switch-out
	 * of this thread and its return before the NMI: then the NMI is
	 * tried again, after setting the bit again (STATUS_SET, as the wrap
	 * did).
	 */
	for (tries = 0; ; tries++) {
		bit = mget(self->cpu, "global_status") & 1;
		ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s0));
		ADV("nmi");
		ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
		if (thread_switches() == sw)
			break;
		ASSERT_LT(tries, 500) TH_LOG("switched out every time");
		sw = thread_switches();
		ADV("status 0x1");
	}
	if (tries)
		TH_LOG("switched out before the NMI %d times", tries);
	EXPECT_EQ(1, bit);
	EXPECT_EQ(s0.pm_intr_processed, s1.pm_intr_processed);
	EXPECT_EQ(s0.pm_intr_ignored + 1, s1.pm_intr_ignored);
	EXPECT_EQ((3 * HALF) & MASK48, rd(_metadata, self->fd, id));

	/* Stopped, still allocated: a late overflow bit is hwpmc's. */
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ADV("status 0x1");
	EXPECT_EQ(1, mget(self->cpu, "global_status") & 1);
	ADV("nmi");
	EXPECT_EQ(0, mget(self->cpu, "global_status") & 1);
	/* Released: no longer. */
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	ADV("status 0x1");
	ADV("nmi");
	EXPECT_EQ(1, mget(self->cpu, "global_status") & 1);
	/* Loading a counter clears its stale bit. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SC, 0, self->cpu, 0, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	EXPECT_EQ(0, mget(self->cpu, "global_status") & 1);
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
}

TEST_HARNESS_MAIN
