// SPDX-License-Identifier: GPL-2.0
/*
 * A CLOCK.PROF sample is taken in hard interrupt context (the sampling
 * timer) and logged there when the log's lock is free at once; when
 * another CPU holds it, the sampler never waits for that CPU: the sample
 * goes to its CPU's ring and the drainer logs it (kmod/hwpmc_sample.c).
 * The test flavor's test_log_busy=1 makes every such try fail, so every
 * sample takes the ring, and the drops the timer saw are reported by the
 * drainer.  None is lost: taken = logged + dropped + throttled
 * (GETDRIVERSTATS against the log's records), both records of a sample
 * go together, and the ring logs nearly all of them (the log is read as
 * it is written), as root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <pthread.h>
#include <stdio.h>

#define PERIOD_NS	100000		/* 10 kHz of CPU time */
#define CPU_NS		300000000ull	/* about 3,000 samples */

/* Sample this process into a pipe read as it fills; 0 or the failed step. */
static int sample_busy_log(void *arg)
{
	struct hwpmc_sample_tally *out = arg;
	struct pmc_op_pmcallocate a = {
		.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
		.pm_event = PMC_SOFT_CLOCK_PROF, .pm_mode = PMC_MODE_TS,
		.pm_flags = PMC_F_CALLCHAIN | PMC_F_USERSTACK,
		.pm_count = PERIOD_NS, .pm_ustack_size = PMC_USTACK_SMALL,
	};
	struct pmc_op_getdriverstats s0, s1;
	struct hwpmc_log_reader r = { 0 };
	struct hwpmc_sample_tally t = { 0 };
	__u64 taken;
	pthread_t thr;
	int fd, p[2];

	fd = hwpmc_open();
	if (fd < 0 || pipe2(p, O_CLOEXEC))
		return 1;
	r.fd = p[0];
	if (pthread_create(&thr, NULL, hwpmc_log_read_all, &r))
		return 2;
	if (hwpmc_configure_log(fd, p[1]))
		return 3;
	if (hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a))
		return 4;
	if (hwpmc_attach(fd, a.pm_pmcid, 0) || hwpmc_driverstats(fd, &s0))
		return 5;
	if (hwpmc_start(fd, a.pm_pmcid))
		return 6;
	hwpmc_burn_cpu_ns(CPU_NS);
	if (hwpmc_stop(fd, a.pm_pmcid))
		return 7;
	if (hwpmc_flushlog(fd) || hwpmc_closelog(fd) ||
	    hwpmc_driverstats(fd, &s1))
		return 8;
	close(p[1]);
	pthread_join(thr, NULL);
	if (r.err || hwpmc_for_each_record(r.buf, r.len, hwpmc_tally_samples,
					   &t) <= 0)
		return 9;
	free(r.buf);
	close(fd);
	taken = s1.pm_samples_taken - s0.pm_samples_taken;
	printf("# uid %u: taken %llu: logged %llu (%llu USERSTACK), dropped %llu, throttled %llu\n",
	       getuid(), (unsigned long long)taken,
	       (unsigned long long)t.logged, (unsigned long long)t.userstacks,
	       (unsigned long long)t.dropped, (unsigned long long)t.throttled);
	if (taken != t.logged + t.dropped + t.throttled)
		return 10;
	if (t.userstacks != t.logged)
		return 11;
	/* The ring took them: at least 9 in 10 logged, not dropped. */
	if (taken < CPU_NS / PERIOD_NS / 2 || t.logged * 10 < taken * 9)
		return 12;
	*out = t;
	return 0;
}

FIXTURE(busy) {
	int dummy;
};

FIXTURE_SETUP(busy)
{
	int err;

	ASSERT_EQ(0, hwpmc_module_unload_wait()) TH_LOG("is /dev/hwpmc held open?");
	err = hwpmc_module_load("test/", "test_log_busy=1");
	if (err == ENOENT) {
		hwpmc_module_load("", "");
		SKIP(return, "the test flavor (build/<release>/test/hwpmc.ko) is not built");
	}
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(busy)
{
	hwpmc_module_unload_wait();
	hwpmc_module_load("", "");	/* back to the release module */
}

TEST_F(busy, root_samples_take_the_ring)
{
	struct hwpmc_sample_tally t;

	EXPECT_EQ(0, hwpmc_run_in_child(sample_busy_log, &t));
}

TEST_F(busy, nobody_samples_take_the_ring)
{
	struct hwpmc_sample_tally t;

	EXPECT_EQ(0, hwpmc_as_nobody(sample_busy_log, &t));
}

TEST_HARNESS_MAIN
