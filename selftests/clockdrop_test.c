// SPDX-License-Identifier: GPL-2.0
/*
 * CLOCK.PROF samples are logged by the sampling timer itself (hard
 * interrupt context: no ring, no drainer; kmod/hwpmc_sample.c).  When the
 * log has no room for them (its reader does not read: a pipe nobody
 * drains, so every buffer the log may hold fills up), each sample is
 * dropped and counted, never lost silently: taken = logged + dropped +
 * throttled, in GETDRIVERSTATS and in the log's DROPNOTIFY records, as
 * root (whose log may take the whole buffer pool) and as uid 65534 (its
 * share of it).  The samples carry callchains and a small user-stack copy
 * (hwpmc-record -g's), so that both records of a sample are logged or
 * dropped together.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define PERIOD_NS	10000		/* the least an unprivileged owner gets */
#define MAX_CPU_NS	(30 * 1000000000ull)

/*
 * Sample this process at 100 kHz of CPU time into a pipe nobody reads
 * until samples are dropped (GETDRIVERSTATS), then read it all and
 * tally.  0, or the step that failed.
 */
static int overflow_log(void *arg)
{
	struct hwpmc_sample_tally *out = arg;
	struct pmc_op_pmcallocate a = {
		.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
		.pm_event = PMC_SOFT_CLOCK_PROF, .pm_mode = PMC_MODE_TS,
		.pm_flags = PMC_F_CALLCHAIN | PMC_F_USERSTACK,
		.pm_count = PERIOD_NS, .pm_ustack_size = PMC_USTACK_SMALL,
	};
	struct pmc_op_getdriverstats s0, s1, s;
	struct hwpmc_log_reader r = { 0 };
	struct hwpmc_sample_tally t = { 0 };
	pthread_t thr;
	__u64 spent = 0;
	int fd, p[2];
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 1;
	fd = hwpmc_open();
	if (fd < 0 || pipe2(p, O_CLOEXEC))
		return 2;
	if (hwpmc_configure_log(fd, p[1]))
		return 3;
	if (hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a))
		return 4;
	if (hwpmc_attach(fd, a.pm_pmcid, 0) || hwpmc_driverstats(fd, &s0))
		return 5;
	if (hwpmc_start(fd, a.pm_pmcid))
		return 6;
	/* Until the log has dropped some, and 100 ms more. */
	do {
		hwpmc_burn_cpu_ns(20000000);
		spent += 20000000;
		if (hwpmc_driverstats(fd, &s))
			return 7;
	} while (s.pm_samples_dropped == s0.pm_samples_dropped &&
		 spent < MAX_CPU_NS);
	if (s.pm_samples_dropped == s0.pm_samples_dropped) {
		printf("# no sample dropped in %llu ms of CPU time\n",
		       (unsigned long long)(spent / 1000000));
		return 8;
	}
	hwpmc_burn_cpu_ns(100000000);
	if (hwpmc_stop(fd, a.pm_pmcid))
		return 9;
	/* Now read: the flush writes it all out, CLOSELOG its drops. */
	r.fd = p[0];
	if (pthread_create(&thr, NULL, hwpmc_log_read_all, &r))
		return 10;
	if (hwpmc_flushlog(fd) || hwpmc_closelog(fd) ||
	    hwpmc_driverstats(fd, &s1))
		return 11;
	close(p[1]);
	pthread_join(thr, NULL);
	if (r.err || hwpmc_for_each_record(r.buf, r.len, hwpmc_tally_samples, &t) <= 0)
		return 12;
	free(r.buf);
	close(fd);
	printf("# uid %u: taken %llu: logged %llu (%llu USERSTACK), dropped %llu, throttled %llu (log); dropped %llu, throttled %llu (stats)\n",
	       getuid(),
	       (unsigned long long)(s1.pm_samples_taken - s0.pm_samples_taken),
	       (unsigned long long)t.logged, (unsigned long long)t.userstacks,
	       (unsigned long long)t.dropped, (unsigned long long)t.throttled,
	       (unsigned long long)(s1.pm_samples_dropped - s0.pm_samples_dropped),
	       (unsigned long long)(s1.pm_samples_throttled - s0.pm_samples_throttled));
	if (s1.pm_samples_taken - s0.pm_samples_taken !=
	    t.logged + t.dropped + t.throttled)
		return 13;
	if (s1.pm_samples_dropped - s0.pm_samples_dropped != t.dropped ||
	    s1.pm_samples_throttled - s0.pm_samples_throttled != t.throttled)
		return 14;
	/* A sample's two records go together. */
	if (!t.dropped || t.userstacks != t.logged)
		return 15;
	*out = t;
	return 0;
}

TEST(root_log_full_counts_every_sample)
{
	struct hwpmc_sample_tally t;

	EXPECT_EQ(0, hwpmc_run_in_child(overflow_log, &t));
}

TEST(nobody_log_full_counts_every_sample)
{
	struct hwpmc_sample_tally t;

	EXPECT_EQ(0, hwpmc_as_nobody(overflow_log, &t));
}

TEST_HARNESS_MAIN
