// SPDX-License-Identifier: GPL-2.0
/*
 * hwmodel_sample_test: sampling on the PMU model: exactly one sample
 * per period in system and process scope, simultaneous and staggered
 * overflows, long periods, and the longest period a counter can hold
 * (hwmodel.h: the model, the fixture and its layouts).
 */
#define _GNU_SOURCE
#include "hwmodel.h"

/*
 * System-scope sampling: an overflow at each period, each one NMI and one
 * CALLCHAIN record with the PMC's id, the CPU and the interrupted process;
 * kernel-mode events count when the PMC asks for them; a stopped PMC
 * takes none.  GETDRIVERSTATS and the model's NMI counters agree.
 */
TEST_F_TIMEOUT(hw, system_sampling_exact, 120)
{
	struct pmc_op_getdriverstats s0, s1;
	struct cc_count c = { 0 }, cu = { 0 };
	__u64 sent0, lost0, masked0;
	__u32 id, uid;
	struct pmc_info pi;
	int i, want, want_u;

	ASSERT_EQ(0, configure_log(self->fd, self->log));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SS, PMC_F_CALLCHAIN, self->cpu,
				     1000, &id));
	/* A user-mode-only twin with another period. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR,
				     PMC_X86_CONFIG_USR, PMC_MODE_SS, 0,
				     self->cpu, 500, &uid));
	ASSERT_EQ(0, row_info(self->fd, self->cpu, self->gp_first, &pi));
	EXPECT_EQ(PMC_MODE_SS, pi.pm_mode);
	EXPECT_EQ(1000, pi.pm_reloadcount);
	EXPECT_EQ(EINVAL, hwpmc_write(self->fd, id, 5));	/* sampling */
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ASSERT_EQ(0, hwpmc_start(self->fd, uid));
	/* Loaded at minus the period, with the interrupt enabled. */
	EXPECT_EQ(-1000ULL & MASK48, mget(self->cpu, "ctr0"));
	EXPECT_EQ(SEL_EN | SEL_INT | SEL_USR | SEL_OS | EV_INSTR,
		  mget(self->cpu, "sel0"));
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s0));
	sent0 = mget(self->cpu, "nmis_sent");
	lost0 = mget(self->cpu, "nmis_lost");
	masked0 = mget(self->cpu, "pmis_masked");
	/* Start pointed the model's LVTPC at NMI, unmasked. */
	EXPECT_EQ(LVTPC_NMI, mget(self->cpu, "lvtpc"));

	/*
	 * The model masks its LVTPC on each PMI, as a CPU does: every sample
	 * after the first shows that the handler unmasked it again.
	 */
	ADV("1000");
	EXPECT_EQ(LVTPC_NMI, mget(self->cpu, "lvtpc"));
	ADV("1000");
	for (i = 0; i < 20; i++)
		ADV("250");
	ADV("999");
	ADV("1");
	ADV("os 1000");
	want = expected_samples(1000, 1000, 2) +
	       expected_samples(1000, 250, 20) + 1 + 1;
	want_u = expected_samples(500, 1000, 2) +
		 expected_samples(500, 250, 20) + 1;	/* 999: once */
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ASSERT_EQ(0, hwpmc_stop(self->fd, uid));
	ADV("5000");
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));

	c.pmcid = id;
	c.cpu = self->cpu;
	c.pid = getpid();
	ASSERT_LE(0, count_samples(self->log, &c));
	cu.pmcid = uid;
	cu.cpu = self->cpu;
	ASSERT_LE(0, count_samples(self->log, &cu));
	EXPECT_EQ(9, want);
	EXPECT_EQ(want, c.n);
	EXPECT_EQ(want_u, cu.n);
	EXPECT_EQ(0, c.wrong_cpu);
	EXPECT_EQ(0, c.wrong_pid);
	/* The NMI interrupted the kernel (the write to "advance"). */
	EXPECT_EQ(c.n, c.kernel);
	EXPECT_EQ(want + want_u, s1.pm_samples_taken - s0.pm_samples_taken);
	EXPECT_EQ(0, s1.pm_samples_dropped - s0.pm_samples_dropped);
	EXPECT_EQ(0, s1.pm_intr_ignored - s0.pm_intr_ignored);
	/* One NMI per advance that overflowed something. */
	EXPECT_EQ(mget(self->cpu, "nmis_sent") - sent0,
		  s1.pm_intr_processed - s0.pm_intr_processed);
	EXPECT_EQ(lost0, mget(self->cpu, "nmis_lost"));
	EXPECT_EQ(masked0, mget(self->cpu, "pmis_masked"));
	EXPECT_EQ(LVTPC_NMI, mget(self->cpu, "lvtpc"));
	TH_LOG("%d + %d samples, %llu NMIs", c.n, cu.n,
	       (unsigned long long)(mget(self->cpu, "nmis_sent") - sent0));
}

/*
 * Every counter overflowing in one advance: one NMI, one sample each,
 * status cleared.  Intel: the 4 IAP and 3 IAF counters; AMD: the 6 K8.
 */
TEST_F_TIMEOUT(hw, simultaneous_overflows, 120)
{
	struct pmc_op_getdriverstats s0, s1;
	__u32 id[16], n = 0, i;
	__u64 sent0;
	int total = 0;

	ASSERT_EQ(0, configure_log(self->fd, self->log));
	for (i = 0; i < variant->ngp; i++)
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class,
					     EV_INSTR, 0, PMC_MODE_SS, 0,
					     self->cpu, 100, &id[n++]));
	for (i = 0; i < variant->nfixed; i++)
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, i, 0,
					     PMC_MODE_SS, 0, self->cpu, 100,
					     &id[n++]));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, hwpmc_start(self->fd, id[i]));
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s0));
	sent0 = mget(self->cpu, "nmis_sent");
	ADV("60");
	ADV("40");
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
	EXPECT_EQ(1, mget(self->cpu, "nmis_sent") - sent0);
	EXPECT_EQ(1, s1.pm_intr_processed - s0.pm_intr_processed);
	EXPECT_EQ(n, s1.pm_samples_taken - s0.pm_samples_taken);
	if (variant->global)
		EXPECT_EQ(0, mget(self->cpu, "global_status"));
	for (i = 0; i < variant->ngp; i++)
		EXPECT_EQ(-100ULL & MASK48, model_reg(self->cpu, "ctr%d", i));
	for (i = 0; i < variant->nfixed; i++)
		EXPECT_EQ(-100ULL & MASK48, model_reg(self->cpu, "fixed%d", i));
	ADV("100");
	EXPECT_EQ(2, mget(self->cpu, "nmis_sent") - sent0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, hwpmc_stop(self->fd, id[i]));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	for (i = 0; i < n; i++) {
		struct cc_count c = { .pmcid = id[i], .cpu = self->cpu };

		ASSERT_LE(0, count_samples(self->log, &c));
		EXPECT_EQ(2, c.n) TH_LOG("PMC %u (counter %u)", id[i], i);
		total += c.n;
	}
	EXPECT_EQ(2 * (int)n, total);
}

/*
 * Different periods overflowing on the same advances: PMC i has period
 * 100 * (i + 1); twelve advances of 100 give 12 / (i + 1) samples each,
 * twelve NMIs in all.
 */
TEST_F_TIMEOUT(hw, staggered_periods, 120)
{
	struct pmc_op_getdriverstats s0, s1;
	__u32 id[8], i;
	__u64 sent0;
	int k, want = 0;

	ASSERT_EQ(0, configure_log(self->fd, self->log));
	for (i = 0; i < variant->ngp; i++) {
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class,
					     EV_INSTR, 0, PMC_MODE_SS, 0,
					     self->cpu, 100 * (i + 1), &id[i]));
		ASSERT_EQ(0, hwpmc_start(self->fd, id[i]));
	}
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s0));
	sent0 = mget(self->cpu, "nmis_sent");
	for (k = 0; k < 12; k++)
		ADV("100");
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &s1));
	for (i = 0; i < variant->ngp; i++)
		ASSERT_EQ(0, hwpmc_stop(self->fd, id[i]));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	EXPECT_EQ(12, mget(self->cpu, "nmis_sent") - sent0);
	EXPECT_EQ(12, s1.pm_intr_processed - s0.pm_intr_processed);
	for (i = 0; i < variant->ngp; i++) {
		struct cc_count c = { .pmcid = id[i], .cpu = self->cpu };

		ASSERT_LE(0, count_samples(self->log, &c));
		EXPECT_EQ(12 / (i + 1), c.n) TH_LOG("period %u", 100 * (i + 1));
		want += 12 / (i + 1);
	}
	EXPECT_EQ(want, s1.pm_samples_taken - s0.pm_samples_taken);
}

/*
 * A sampling period of 2^31 or more on a programmable counter: the
 * counter must be loaded with minus the period over its full 48 bits
 * (Intel: through the full-width IA32_A_PMCx aliases; a write to
 * IA32_PMCx keeps only 32 sign-extended bits), so no sample comes before
 * the period is reached, and exactly one when it is.  Without full-width
 * writes the longest period, just below 2^31, loads through IA32_PMCx.
 */
TEST_F_TIMEOUT(hw, long_sampling_period, 120)
{
	/* Past 32 bits; without full-width writes, just below 2^31. */
	const __u64 period = variant->max_period > (1ULL << 33) ?
			     (1ULL << 33) + 12345 : variant->max_period - 12345;
	struct cc_count c = { 0 };
	__u32 id;

	ASSERT_EQ(0, configure_log(self->fd, self->log));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SS, 0, self->cpu, period, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	EXPECT_EQ(-period & MASK48, mget(self->cpu, "ctr0"));
	ADV("%llu", period - 1);
	ADV("1");
	ADV("%llu", period - 2);
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	c.pmcid = id;
	c.cpu = self->cpu;
	ASSERT_LE(0, count_samples(self->log, &c));
	EXPECT_EQ(1, c.n);
}

/*
 * A sampling period the counter cannot hold is refused (EINVAL), at
 * allocation and by SETCOUNT, rather than silently shortened: the
 * counter starts at minus the period, which must keep its top bit.
 */
TEST_F_TIMEOUT(hw, sampling_period_limit, 120)
{
	const __u64 max = variant->max_period;
	__u32 id;

	EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, variant->gp_class,
					  EV_INSTR, 0, PMC_MODE_SS, 0,
					  self->cpu, max + 1, &id));
	EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, variant->gp_class,
					  EV_INSTR, 0, PMC_MODE_TS, 0,
					  PMC_CPU_ANY, 1ULL << 60, &id));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SS, 0, self->cpu, max, &id));
	EXPECT_EQ(EINVAL, hwpmc_setcount(self->fd, id, max + 1));
	EXPECT_EQ(0, hwpmc_setcount(self->fd, id, max));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	/* Counting PMCs take any initial count. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SC, 0, self->cpu, 1ULL << 60,
				     &id));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
}

/*
 * Process-scope sampling on the test process: samples at the period, with
 * this pid; the events left to the next overflow survive a context switch
 * (another process advancing on the same CPU meanwhile counts nothing).
 */
TEST_F_TIMEOUT(hw, process_sampling, 120)
{
	struct cc_count c = { 0 }, cf = { 0 };
	__u32 id, fx = 0;
	int i, status;
	pid_t pid;

	ASSERT_EQ(0, configure_log(self->fd, self->log));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY,
				     500, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	if (variant->nfixed) {
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 0,
					     PMC_X86_CONFIG_USR, PMC_MODE_TS,
					     0, PMC_CPU_ANY, 50, &fx));
		ASSERT_EQ(0, hwpmc_start(self->fd, fx));
	}
	for (i = 0; i < 10; i++)
		ADV("100");			/* 2 samples; fx: 10 */
	ADV("300");				/* 200 left; fx: 1 */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(model_advance("1000") || model_advance("1000") ||
		      model_advance("os 1000"));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ADV("199");				/* fx: 1 */
	ADV("os 1");				/* the 3rd sample */
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	if (fx)
		ASSERT_EQ(0, hwpmc_stop(self->fd, fx));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	c.pmcid = id;
	c.cpu = PMC_CPU_ANY;
	c.pid = getpid();
	ASSERT_LE(0, count_samples(self->log, &c));
	EXPECT_EQ(3, c.n);
	EXPECT_EQ(0, c.wrong_pid);
	if (fx) {
		cf.pmcid = fx;
		cf.cpu = PMC_CPU_ANY;
		cf.pid = getpid();
		ASSERT_LE(0, count_samples(self->log, &cf));
		EXPECT_EQ(expected_samples(50, 100, 10) + 1 + 1, cf.n);
		EXPECT_EQ(0, cf.wrong_pid);
	}
}

TEST_HARNESS_MAIN
