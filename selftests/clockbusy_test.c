// SPDX-License-Identifier: GPL-2.0
/*
 * A CLOCK.PROF sample is taken in hard interrupt context (the sampling
 * timer) and logged there when the log's lock is free at once; when
 * another CPU holds it, the sampler never waits for that CPU
 * (kmod/hwpmc_sample.c).  The test flavor's test_log_busy makes every
 * such try fail:
 *  - samples (1): every sample goes to its CPU's ring and the drainer logs
 *    it; nearly all are logged (the log is read as it is written);
 *  - drop reports (2), with the sampling rate throttled (a low
 *    kernel.hwpmc.max_sample_rate): the timer never reports its throttled
 *    samples itself but gives the counts back, and the flush reports
 *    them.
 * Either way none is lost: taken = logged + dropped + throttled
 * (GETDRIVERSTATS against the log's records), and both records of a
 * sample go together, as root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <pthread.h>
#include <stdio.h>

#define CPU_NS		300000000ull	/* the job: 0.3 s of CPU time */
#define SYSCTL_RATE	"/proc/sys/kernel/hwpmc/max_sample_rate"
#define MAX_PMCS	4

struct busy_run {
	unsigned int npmcs;	/* samplers of the process, each at... */
	__u64 period;		/* ...this period (ns of CPU time) */
	bool throttled;		/* expect throttled samples */
};

static int start_samplers(int fd, const struct busy_run *b, __u32 *ids)
{
	for (unsigned int i = 0; i < b->npmcs; i++) {
		struct pmc_op_pmcallocate a = {
			.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
			.pm_event = PMC_SOFT_CLOCK_PROF,
			.pm_mode = PMC_MODE_TS,
			.pm_flags = PMC_F_CALLCHAIN | PMC_F_USERSTACK,
			.pm_count = b->period,
			.pm_ustack_size = PMC_USTACK_SMALL,
		};

		if (hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a) ||
		    hwpmc_attach(fd, a.pm_pmcid, 0))
			return -1;
		ids[i] = a.pm_pmcid;
	}
	for (unsigned int i = 0; i < b->npmcs; i++)
		if (hwpmc_start(fd, ids[i]))
			return -1;
	return 0;
}

/* Sample this process into a pipe read as it fills; 0 or the failed step. */
static int sample_busy_log(void *arg)
{
	const struct busy_run *b = arg;
	struct pmc_op_getdriverstats s0, s1;
	struct hwpmc_log_reader r = { 0 };
	struct hwpmc_sample_tally t = { 0 };
	__u32 ids[MAX_PMCS];
	__u64 taken, asked = CPU_NS / b->period * b->npmcs;
	pthread_t thr;
	int fd, p[2];

	fd = hwpmc_open();
	if (fd < 0 || pipe2(p, O_CLOEXEC))
		return 1;
	r.fd = p[0];
	if (pthread_create(&thr, NULL, hwpmc_log_read_all, &r))
		return 2;
	if (hwpmc_configure_log(fd, p[1]) || hwpmc_driverstats(fd, &s0))
		return 3;
	if (start_samplers(fd, b, ids))
		return 4;
	hwpmc_burn_cpu_ns(CPU_NS);
	for (unsigned int i = 0; i < b->npmcs; i++)
		if (hwpmc_stop(fd, ids[i]))
			return 5;
	if (hwpmc_flushlog(fd) || hwpmc_closelog(fd) ||
	    hwpmc_driverstats(fd, &s1))
		return 6;
	close(p[1]);
	pthread_join(thr, NULL);
	if (r.err || hwpmc_for_each_record(r.buf, r.len, hwpmc_tally_samples,
					   &t) <= 0)
		return 7;
	free(r.buf);
	close(fd);
	taken = s1.pm_samples_taken - s0.pm_samples_taken;
	printf("# uid %u, %u PMC(s) every %llu ns: taken %llu (asked %llu): logged %llu (%llu USERSTACK), dropped %llu, throttled %llu\n",
	       getuid(), b->npmcs, (unsigned long long)b->period,
	       (unsigned long long)taken, (unsigned long long)asked,
	       (unsigned long long)t.logged, (unsigned long long)t.userstacks,
	       (unsigned long long)t.dropped, (unsigned long long)t.throttled);
	if (taken != t.logged + t.dropped + t.throttled)
		return 10;
	if (t.userstacks != t.logged || !t.logged || taken < asked / 2)
		return 11;
	/* The ring took them: at least 9 in 10 logged, not dropped. */
	if (!b->throttled && t.logged * 10 < taken * 9)
		return 12;
	/* The timer's throttled samples, reported by the flush. */
	if (b->throttled && t.throttled * 4 < taken)
		return 13;
	return 0;
}

FIXTURE(busy) {
	long rate;
};

FIXTURE_VARIANT(busy) {
	unsigned int mask;	/* test_log_busy */
	long rate;		/* kernel.hwpmc.max_sample_rate, 0: as is */
	struct busy_run root, nobody;
};

FIXTURE_VARIANT_ADD(busy, samples) {
	.mask = 1,
	.root = { .npmcs = 1, .period = 100000 },
	.nobody = { .npmcs = 1, .period = 100000 },
};

/*
 * 2,000 samples a second per CPU at most: root's 10 kHz and uid 65534's
 * three samplers at its least period (500 us) are mostly throttled.
 */
FIXTURE_VARIANT_ADD(busy, drop_reports) {
	.mask = 2,
	.rate = 2000,
	.root = { .npmcs = 1, .period = 100000, .throttled = true },
	.nobody = { .npmcs = 3, .period = 500000, .throttled = true },
};

FIXTURE_SETUP(busy)
{
	char params[64];
	int err;

	self->rate = 0;
	snprintf(params, sizeof(params), "test_log_busy=%u", variant->mask);
	err = hwpmc_test_flavor_load(params);
	if (err == ENOENT)
		SKIP(return, HWPMC_NO_TEST_FLAVOR);
	ASSERT_EQ(0, err) TH_LOG("loading the test flavor: %s", strerror(err));
	if (variant->rate) {
		self->rate = hwpmc_sysctl_get(SYSCTL_RATE);
		ASSERT_LT(0, self->rate);
		ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_RATE, variant->rate));
	}
}

FIXTURE_TEARDOWN(busy)
{
	if (self->rate > 0)
		hwpmc_sysctl_set(SYSCTL_RATE, self->rate);
	hwpmc_release_flavor_load();
}

TEST_F(busy, root_loses_no_sample)
{
	struct busy_run b = variant->root;

	EXPECT_EQ(0, hwpmc_run_in_child(sample_busy_log, &b));
}

TEST_F(busy, nobody_loses_no_sample)
{
	struct busy_run b = variant->nobody;

	EXPECT_EQ(0, hwpmc_as_nobody(sample_busy_log, &b));
}

TEST_HARNESS_MAIN
