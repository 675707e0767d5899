// SPDX-License-Identifier: GPL-2.0
/*
 * hwmodel_count_test: counting on the PMU model: the classes and rows
 * it offers, the event select hwpmc writes, exact counts in system and
 * process scope, fixed counters by event, PMCRW writes, counters that
 * wrap (read or not), and context switches that keep two tasks' counts
 * apart (hwmodel.h: the model, the fixture and its layouts).
 */
#define _GNU_SOURCE
#include "hwmodel.h"

/* GETCPUINFO and GETPMCINFO: the classes, rows, widths and caps. */
TEST_F_TIMEOUT(hw, cpuinfo_classes_and_rows, 120)
{
	struct pmc_op_getcpuinfo ci;
	const struct pmc_classinfo *gp, *iaf;
	struct pmc_info info[256];
	__u32 n, i, c, total = 0;
	char name[PMC_NAME_MAX];

	ASSERT_EQ(0, hwpmc_cpuinfo(self->fd, &ci));
	EXPECT_EQ(variant->cputype, ci.pm_cputype);
	gp = hwpmc_classinfo(&ci, variant->gp_class);
	ASSERT_TRUE(gp != NULL);
	EXPECT_EQ(variant->ngp, gp->pm_num);
	EXPECT_EQ(WIDTH, gp->pm_width);
	EXPECT_EQ(variant->gp_caps, gp->pm_caps);
	iaf = hwpmc_classinfo(&ci, PMC_CLASS_IAF);
	if (variant->nfixed) {
		ASSERT_TRUE(iaf != NULL);
		EXPECT_EQ(variant->nfixed, iaf->pm_num);
		EXPECT_EQ(WIDTH, iaf->pm_width);
		EXPECT_EQ(CAPS_BASE | PMC_CAP_ANYTHREAD, iaf->pm_caps);
		EXPECT_TRUE(hwpmc_classinfo(&ci, PMC_CLASS_K8) == NULL);
	} else {
		EXPECT_TRUE(iaf == NULL);
		EXPECT_TRUE(hwpmc_classinfo(&ci, PMC_CLASS_IAP) == NULL);
	}
	EXPECT_TRUE(hwpmc_classinfo(&ci, PMC_CLASS_TSC) != NULL);
	EXPECT_TRUE(hwpmc_classinfo(&ci, PMC_CLASS_SOFT) != NULL);
	for (i = 0; i < ci.pm_nclass; i++)
		total += ci.pm_classes[i].pm_num;
	EXPECT_EQ(total, ci.pm_npmc);

	for (c = 0; c < ci.pm_ncpu; c++) {
		n = 256;
		if (hwpmc_pmcinfo(self->fd, c, info, &n) == ENXIO)
			continue;	/* offline */
		ASSERT_EQ(ci.pm_npmc, n);
		for (i = 0; i < gp->pm_num + (iaf ? iaf->pm_num : 0); i++) {
			const struct pmc_classinfo *k = i < gp->pm_num ? gp : iaf;
			__u32 j = i < gp->pm_num ? i : i - gp->pm_num;
			struct pmc_info *pi = &info[k->pm_firstrow + j];

			snprintf(name, sizeof(name), "%s-%u",
				 k == gp ? variant->gp_name : "IAF", j);
			EXPECT_STREQ(name, pi->pm_name);
			EXPECT_EQ(k->pm_class, pi->pm_class);
			EXPECT_EQ(1, pi->pm_enabled);
			EXPECT_EQ(PMC_STATE_FREE, pi->pm_state);
			EXPECT_EQ(PMC_DISP_FREE, pi->pm_rowdisp);
			EXPECT_EQ(-1, pi->pm_ownerpid);
			EXPECT_EQ(0, pi->pm_unavailable);
		}
	}
	/* The other vendor's class is refused. */
	EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, variant->nfixed ?
					  PMC_CLASS_K8 : PMC_CLASS_IAP,
					  EV_INSTR, 0, PMC_MODE_SC, 0,
					  self->cpu, 0, NULL));
}

/*
 * System scope: three PMCs on the pinned CPU (user+kernel, user, kernel)
 * read exactly what was driven; one on another CPU sees only that CPU's
 * events; stop freezes, start resumes.  The event selects are checked in
 * the model's registers.
 */
TEST_F_TIMEOUT(hw, system_counts_exact, 120)
{
	__u32 all, usr, os, far = 0, idx;
	struct pmc_info pi;
	__u64 gctl;

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SC, 0, self->cpu, 0, &all));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR,
				     PMC_X86_CONFIG_USR, PMC_MODE_SC, 0,
				     self->cpu, 0, &usr));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR,
				     PMC_X86_CONFIG_OS, PMC_MODE_SC, 0,
				     self->cpu, 0, &os));
	for (idx = 0; idx < 3; idx++) {
		ASSERT_EQ(0, row_info(self->fd, self->cpu,
				      self->gp_first + idx, &pi));
		EXPECT_EQ(getpid(), pi.pm_ownerpid);
		EXPECT_EQ(PMC_MODE_SC, pi.pm_mode);
		EXPECT_EQ(PMC_STATE_ALLOCATED, pi.pm_state);
		EXPECT_EQ(PMC_DISP_STANDALONE, pi.pm_rowdisp);
		EXPECT_EQ(HWPMC_EV_GLOBAL(variant->gp_class, EV_INSTR), pi.pm_event);
	}
	if (self->other >= 0)
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class,
					     EV_INSTR, 0, PMC_MODE_SC, 0,
					     self->other, 0, &far));
	ASSERT_EQ(0, hwpmc_start(self->fd, all));
	ASSERT_EQ(0, hwpmc_start(self->fd, usr));
	ASSERT_EQ(0, hwpmc_start(self->fd, os));
	if (far)
		ASSERT_EQ(0, hwpmc_start(self->fd, far));

	/*
	 * The registers: rows 0..2 of this CPU, enabled, with the interrupt
	 * that keeps the count whole when the counter overflows.
	 */
	EXPECT_EQ(SEL_EN | SEL_INT | SEL_USR | SEL_OS | EV_INSTR,
		  mget(self->cpu, "sel0"));
	EXPECT_EQ(SEL_EN | SEL_INT | SEL_USR | EV_INSTR, mget(self->cpu, "sel1"));
	EXPECT_EQ(SEL_EN | SEL_INT | SEL_OS | EV_INSTR, mget(self->cpu, "sel2"));
	EXPECT_EQ(START, mget(self->cpu, "ctr0"));
	EXPECT_EQ(0, mget(self->cpu, "sel3"));
	if (variant->global) {
		gctl = mget(self->cpu, "global_ctrl");
		EXPECT_EQ(0x7, gctl & ((1ULL << variant->ngp) - 1));
	} else {
		/* No global control: the event select alone enables. */
		EXPECT_EQ(ENOENT, model_get(self->cpu, "global_ctrl", &gctl));
	}

	ADV("1000");
	ADV("usr 20");
	ADV("os 300");
	ADV("os 4");
	EXPECT_EQ(1324, rd(_metadata, self->fd, all));
	EXPECT_EQ(1020, rd(_metadata, self->fd, usr));
	EXPECT_EQ(304, rd(_metadata, self->fd, os));
	if (far) {
		EXPECT_EQ(0, rd(_metadata, self->fd, far));
		ASSERT_EQ(0, hwpmc_pin_cpu(self->other));
		ADV("9");
		ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
		EXPECT_EQ(9, rd(_metadata, self->fd, far));
		EXPECT_EQ(1324, rd(_metadata, self->fd, all));
	}

	ASSERT_EQ(0, hwpmc_stop(self->fd, all));
	ASSERT_EQ(0, hwpmc_stop(self->fd, usr));
	ASSERT_EQ(0, hwpmc_stop(self->fd, os));
	EXPECT_EQ(0, mget(self->cpu, "sel0"));
	ADV("5000");
	EXPECT_EQ(1324, rd(_metadata, self->fd, all));
	EXPECT_EQ(1020, rd(_metadata, self->fd, usr));
	EXPECT_EQ(304, rd(_metadata, self->fd, os));
	ASSERT_EQ(0, hwpmc_start(self->fd, all));
	ADV("os 7");
	EXPECT_EQ(1331, rd(_metadata, self->fd, all));
	EXPECT_EQ(1020, rd(_metadata, self->fd, usr));

	ASSERT_EQ(0, hwpmc_release(self->fd, all));
	ASSERT_EQ(0, hwpmc_release(self->fd, usr));
	ASSERT_EQ(0, hwpmc_release(self->fd, os));
	if (far)
		ASSERT_EQ(0, hwpmc_release(self->fd, far));
	EXPECT_EQ(0, mget(self->cpu, "sel0"));
	ASSERT_EQ(0, row_info(self->fd, self->cpu, self->gp_first, &pi));
	EXPECT_EQ(PMC_STATE_FREE, pi.pm_state);
	EXPECT_EQ(PMC_DISP_FREE, pi.pm_rowdisp);
}

/* PMCALLOCATE of a system counting PMC with both config words. */
static int alloc_cfg1(int fd, __u32 class, __u32 event, __u64 config,
		      __u64 config1, __u32 cpu)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = cpu, .pm_class = class, .pm_event = event,
		.pm_mode = PMC_MODE_SC, .pm_config = config,
		.pm_config1 = config1,
	};
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a);

	if (!err)
		hwpmc_release(fd, a.pm_pmcid);
	return err;
}

/*
 * Every settable event-select bit of pm_config lands in its hardware
 * position (unit mask, edge, inv, counter mask, usr or os alone), with EN
 * and INT set by hwpmc; the bits hwpmc owns or that are reserved are
 * EINVAL, and so is a non-zero pm_config1.  A nonzero unit mask counts.
 */
TEST_F_TIMEOUT(hw, event_select_bits, 120)
{
	const __u64 on = SEL_EN | SEL_INT, both = SEL_USR | SEL_OS;
	const __u32 gp = variant->gp_class;
	static const __u64 bad[] = {
		1ULL << 0, 1ULL << 7, 1ULL << 19, 1ULL << 20, 1ULL << 22,
		1ULL << 32, 1ULL << 40, 1ULL << 63,
	};
	__u32 i, id;

	/* LLC references (0x4f2e), unit mask and all. */
	EXPECT_EQ(on | both | 0x4f2e,
		  sel_of(_metadata, self->fd, self->cpu, gp, 0x2e, 0x4f00));
	EXPECT_EQ(on | SEL_USR | 0x013c,
		  sel_of(_metadata, self->fd, self->cpu, gp, 0x3c,
			 0x0100 | PMC_X86_CONFIG_USR));
	EXPECT_EQ(on | SEL_OS | 0x412e,
		  sel_of(_metadata, self->fd, self->cpu, gp, 0x2e,
			 0x4100 | PMC_X86_CONFIG_OS));
	EXPECT_EQ(on | both | PMC_X86_CONFIG_EDGE | 0x01c4,
		  sel_of(_metadata, self->fd, self->cpu, gp, 0xc4,
			 0x0100 | PMC_X86_CONFIG_EDGE));
	EXPECT_EQ(on | both | PMC_X86_CONFIG_INV | (2ULL << 24) | 0xa3c0,
		  sel_of(_metadata, self->fd, self->cpu, gp, 0xc0,
			 0xa300 | PMC_X86_CONFIG_INV | (2ULL << 24)));
	EXPECT_EQ(on | SEL_USR | (0xffULL << 24) | 0xff00 | EV_INSTR,
		  sel_of(_metadata, self->fd, self->cpu, gp, EV_INSTR,
			 0xff00 | PMC_X86_CONFIG_USR | (0xffULL << 24)));
	if (!variant->nfixed)	/* AMD: EventSelect[35:32] from bits 8-11 */
		EXPECT_EQ(on | both | (0x1ULL << 32) | 0x0320,
			  sel_of(_metadata, self->fd, self->cpu, gp, 0x120,
				 0x0300));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, gp, EV_INSTR,
						  bad[i], PMC_MODE_SC, 0,
						  self->cpu, 0, NULL))
			TH_LOG("config 0x%llx", (unsigned long long)bad[i]);
	/* Bit 21 is AnyThread on Intel, reserved on AMD. */
	if (!variant->nfixed)
		EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, gp, EV_INSTR,
						  PMC_X86_CONFIG_ANYTHREAD,
						  PMC_MODE_SC, 0, self->cpu, 0,
						  NULL));
	EXPECT_EQ(EINVAL, alloc_cfg1(self->fd, gp, EV_INSTR, 0, 1, self->cpu));
	EXPECT_EQ(0, alloc_cfg1(self->fd, gp, EV_INSTR, 0, 0, self->cpu));
	if (variant->nfixed) {
		EXPECT_EQ(EINVAL, alloc_cfg1(self->fd, PMC_CLASS_IAF, 0, 0, 1,
					     self->cpu));
		EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 0,
						  0x0100, PMC_MODE_SC, 0,
						  self->cpu, 0, NULL));
	}

	/* A unit-masked event counts what it is driven. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, gp, 0x2e, 0x4100, PMC_MODE_SC,
				     0, self->cpu, 0, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ADV("usr 77");
	ADV("os 3");
	EXPECT_EQ(80, rd(_metadata, self->fd, id));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
}

static void *adv_thread(void *arg)
{
	return (void *)(long)model_advance("%s", (const char *)arg);
}

/*
 * Process scope on the test process: exact counts with qualifiers; a
 * thread of the process counts, another process on the same CPU does not.
 */
TEST_F_TIMEOUT(hw, process_counts_exact, 120)
{
	__u32 all, usr, os, r;
	struct pmc_info pi;
	pthread_t t;
	void *ret;
	int status;
	pid_t pid;

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &all));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR,
				     PMC_X86_CONFIG_USR, PMC_MODE_TC, 0,
				     PMC_CPU_ANY, 0, &usr));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR,
				     PMC_X86_CONFIG_OS, PMC_MODE_TC, 0,
				     PMC_CPU_ANY, 0, &os));
	for (r = 0; r < 3; r++) {
		ASSERT_EQ(0, row_info(self->fd, self->cpu, self->gp_first + r,
				      &pi));
		EXPECT_EQ(PMC_DISP_THREAD, pi.pm_rowdisp);
	}
	/* Started: attached to the owner, this process. */
	ASSERT_EQ(0, hwpmc_start(self->fd, all));
	ASSERT_EQ(0, hwpmc_start(self->fd, usr));
	ASSERT_EQ(0, hwpmc_start(self->fd, os));
	ADV("1000");
	ADV("os 30");

	/* Another process on this CPU: not a target, counts nothing. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(model_advance("500") || model_advance("os 500"));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);

	/* A thread of this process (same CPU, inherited affinity): counts. */
	ASSERT_EQ(0, pthread_create(&t, NULL, adv_thread, "usr 11"));
	ASSERT_EQ(0, pthread_join(t, &ret));
	ASSERT_EQ(0, (long)ret);

	EXPECT_EQ(1041, rd(_metadata, self->fd, all));
	EXPECT_EQ(1011, rd(_metadata, self->fd, usr));
	EXPECT_EQ(30, rd(_metadata, self->fd, os));
	ASSERT_EQ(0, hwpmc_stop(self->fd, all));
	ADV("100");
	EXPECT_EQ(1041, rd(_metadata, self->fd, all));
	EXPECT_EQ(1111, rd(_metadata, self->fd, usr));
}

/*
 * Intel's fixed counters: IAF-n is the row of event n (0 instructions,
 * 1 core cycles, 2 reference cycles), with its nibble of
 * IA32_FIXED_CTR_CTRL and global control bit 32+n.  AMD has none.
 */
TEST_F_TIMEOUT(hw, fixed_counters_by_event, 120)
{
	__u32 id[3], pid_id, ev;
	struct pmc_info pi;
	char name[16];

	if (!variant->nfixed) {
		EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 0, 0,
						  PMC_MODE_SC, 0, self->cpu, 0,
						  NULL));
		return;
	}
	/* Allocated in reverse order: the row still follows the event. */
	for (ev = 3; ev-- > 0;) {
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, ev,
					     PMC_X86_CONFIG_USR, PMC_MODE_SC,
					     0, self->cpu, 0, &id[ev]));
		ASSERT_EQ(0, row_info(self->fd, self->cpu,
				      self->fixed_first + ev, &pi));
		snprintf(name, sizeof(name), "IAF-%u", ev);
		EXPECT_STREQ(name, pi.pm_name);
		EXPECT_EQ(getpid(), pi.pm_ownerpid);
		EXPECT_EQ(HWPMC_EV_GLOBAL(PMC_CLASS_IAF, ev), pi.pm_event);
	}
	EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 3, 0,
					  PMC_MODE_SC, 0, self->cpu, 0, NULL));
	/* Its only row is taken. */
	EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 1, 0,
					  PMC_MODE_SC, 0, self->cpu, 0, NULL));
	/* Not an IAF qualifier. */
	EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 1,
					  PMC_X86_CONFIG_EDGE, PMC_MODE_SC, 0,
					  self->other >= 0 ? self->other : 0,
					  0, NULL));
	for (ev = 0; ev < 3; ev++)
		ASSERT_EQ(0, hwpmc_start(self->fd, id[ev]));
	/* A nibble each: USR (0x2) and PMI (0x8). */
	EXPECT_EQ(0xaaa, mget(self->cpu, "fixed_ctrl"));
	EXPECT_EQ(0x7ULL << 32, mget(self->cpu, "global_ctrl") & (0x7ULL << 32));
	ADV("usr 100");
	ADV("os 5");
	ADV("usr 20");
	for (ev = 0; ev < 3; ev++) {
		EXPECT_EQ(START + 120, model_reg(self->cpu, "fixed%d", ev));
		EXPECT_EQ(120, rd(_metadata, self->fd, id[ev]));
	}
	/* Stopping one clears its nibble only. */
	ASSERT_EQ(0, hwpmc_stop(self->fd, id[1]));
	EXPECT_EQ(0xa0a, mget(self->cpu, "fixed_ctrl"));
	ADV("usr 1");
	EXPECT_EQ(121, rd(_metadata, self->fd, id[0]));
	EXPECT_EQ(120, rd(_metadata, self->fd, id[1]));
	for (ev = 0; ev < 3; ev++)
		ASSERT_EQ(0, hwpmc_release(self->fd, id[ev]));
	EXPECT_EQ(0, mget(self->cpu, "fixed_ctrl"));

	/* Process scope, kernel mode only: row IAF-1, nibble 1 = OS. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 1,
				     PMC_X86_CONFIG_OS, PMC_MODE_TC, 0,
				     PMC_CPU_ANY, 0, &pid_id));
	ASSERT_EQ(0, row_info(self->fd, self->cpu, self->fixed_first + 1, &pi));
	EXPECT_EQ(PMC_DISP_THREAD, pi.pm_rowdisp);
	ASSERT_EQ(0, hwpmc_start(self->fd, pid_id));
	EXPECT_EQ(0x090, mget(self->cpu, "fixed_ctrl"));
	ADV("os 42");
	ADV("usr 1000");
	EXPECT_EQ(42, rd(_metadata, self->fd, pid_id));
}

/*
 * PMCRW: a value written while stopped is where counting resumes; not
 * while running (EBUSY); the 64-bit value goes past 2^48 (the counter
 * width) and keeps counting; the allocation's initial count too.
 */
TEST_F_TIMEOUT(hw, pmcrw_write_then_count, 120)
{
	__u32 sc, tc, init;

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SC, 0, self->cpu, 0, &sc));
	ASSERT_EQ(0, hwpmc_write(self->fd, sc, 1000000));
	EXPECT_EQ(1000000, rd(_metadata, self->fd, sc));
	ASSERT_EQ(0, hwpmc_start(self->fd, sc));
	EXPECT_EQ(EBUSY, hwpmc_write(self->fd, sc, 5));
	ADV("77");
	EXPECT_EQ(1000077, rd(_metadata, self->fd, sc));
	ASSERT_EQ(0, hwpmc_stop(self->fd, sc));
	ASSERT_EQ(0, hwpmc_write(self->fd, sc, (1ULL << 48) - 5));
	ASSERT_EQ(0, hwpmc_start(self->fd, sc));
	ADV("10");
	EXPECT_EQ((1ULL << 48) + 5, rd(_metadata, self->fd, sc));
	ADV("os 2");
	EXPECT_EQ((1ULL << 48) + 7, rd(_metadata, self->fd, sc));
	/* Near 2^64 too: the value is 64 bits, wrapping only there. */
	ASSERT_EQ(0, hwpmc_stop(self->fd, sc));
	ASSERT_EQ(0, hwpmc_write(self->fd, sc, ~0ULL - 2));
	ASSERT_EQ(0, hwpmc_start(self->fd, sc));
	ADV("5");
	EXPECT_EQ(2, rd(_metadata, self->fd, sc));

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &tc));
	ASSERT_EQ(0, hwpmc_write(self->fd, tc, 1ULL << 40));
	ASSERT_EQ(0, hwpmc_start(self->fd, tc));
	ADV("3");
	EXPECT_EQ((1ULL << 40) + 3, rd(_metadata, self->fd, tc));

	/* PMCALLOCATE's pm_count is the initial value of a counting PMC. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SC, 0, self->cpu, 500, &init));
	ASSERT_EQ(0, hwpmc_start(self->fd, init));
	ADV("25");
	EXPECT_EQ(525, rd(_metadata, self->fd, init));
}

/*
 * Started on this CPU: a system-scope counting PMC of instructions with
 * @config on the programmable class (*@sc) and, on a layout with fixed
 * counters, one on the fixed class (*@fx, left alone otherwise).
 */
static void start_sc_pair(struct __test_metadata *_metadata,
			  FIXTURE_DATA(hw) *self,
			  const FIXTURE_VARIANT(hw) *variant, __u64 config,
			  __u32 *sc, __u32 *fx)
{
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR,
				     config, PMC_MODE_SC, 0, self->cpu, 0, sc));
	ASSERT_EQ(0, hwpmc_start(self->fd, *sc));
	if (variant->nfixed) {
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 0, 0,
					     PMC_MODE_SC, 0, self->cpu, 0, fx));
		ASSERT_EQ(0, hwpmc_start(self->fd, *fx));
	}
}

/*
 * start_sc_pair()'s PMCs (@fx 0: none) released; a started process-scope
 * counting PMC of instructions, on this process, in *@tc.
 */
static void sc_pair_to_tc(struct __test_metadata *_metadata,
			  FIXTURE_DATA(hw) *self,
			  const FIXTURE_VARIANT(hw) *variant, __u32 sc, __u32 fx,
			  __u32 *tc)
{
	ASSERT_EQ(0, hwpmc_release(self->fd, sc));
	if (fx)
		ASSERT_EQ(0, hwpmc_release(self->fd, fx));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, tc));
	ASSERT_EQ(0, hwpmc_start(self->fd, *tc));
}

/*
 * Width wrap-around.  A counting PMC's counter starts at minus the longest
 * period (START) and overflows after 2^47 - 1 events; the PMI puts the
 * count aside and sets the counter back to START.  Counts stay exact
 * across overflows, in system and process scope, on programmable and
 * fixed counters.
 */
TEST_F_TIMEOUT(hw, width_wrap_around, 120)
{
	struct pmc_op_getdriverstats d0, d1;
	__u32 sc, fx = 0, tc;
	const __u64 P = variant->max_period;
	__u64 before;

	start_sc_pair(_metadata, self, variant, PMC_X86_CONFIG_USR, &sc, &fx);
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &d0));
	EXPECT_EQ(START, mget(self->cpu, "ctr0"));
	ADV("%llu", P - 1);
	EXPECT_EQ(P - 1, rd(_metadata, self->fd, sc));
	/* One event short of the overflow: all ones, no PMI yet. */
	EXPECT_EQ(MASK48, mget(self->cpu, "ctr0"));
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &d1));
	EXPECT_EQ(d0.pm_intr_processed, d1.pm_intr_processed);
	ADV("1");
	EXPECT_EQ(P, rd(_metadata, self->fd, sc));
	if (fx)
		EXPECT_EQ(P, rd(_metadata, self->fd, fx));
	/* It wrapped; the PMI set it back and took the status bit. */
	EXPECT_EQ(START, mget(self->cpu, "ctr0"));
	if (variant->global)
		EXPECT_EQ(0, mget(self->cpu, "global_status") & 1);
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &d1));
	EXPECT_EQ(d0.pm_intr_processed + 1, d1.pm_intr_processed);
	ADV("10");
	EXPECT_EQ(START + 10, mget(self->cpu, "ctr0"));
	/* Past the overflow within one advance: the rest is kept too. */
	ADV("%llu", P);
	EXPECT_EQ(START, mget(self->cpu, "ctr0"));
	EXPECT_EQ(2 * P + 10, rd(_metadata, self->fd, sc));
	if (fx)
		EXPECT_EQ(2 * P + 10, rd(_metadata, self->fd, fx));
	ADV("os %llu", P);	/* sc counts user mode only */
	EXPECT_EQ(2 * P + 10, rd(_metadata, self->fd, sc));
	if (fx)
		EXPECT_EQ(3 * P + 10, rd(_metadata, self->fd, fx));

	/* Process scope: the same, switched out and in meanwhile or not. */
	sc_pair_to_tc(_metadata, self, variant, sc, fx, &tc);
	before = rd(_metadata, self->fd, tc);
	ADV("%llu", HALF);
	ADV("%llu", HALF);
	ADV("10");
	EXPECT_EQ(before + 2 * HALF + 10, rd(_metadata, self->fd, tc));
	ASSERT_EQ(0, hwpmc_release(self->fd, tc));
}

/*
 * Counting PMCs interrupt when their counter wraps, and the PMI has the
 * count credited: a count unread for several turns of the 48-bit counter
 * is still exact (a difference of two reads cannot see whole turns).
 * Each wrap is one interrupt, processed, its status bit taken.
 */
TEST_F_TIMEOUT(hw, counting_wraps_unread, 120)
{
	struct pmc_op_getdriverstats before, after;
	const int steps = 7;	/* 7 * (2^47 - 1): three turns of 2^48 */
	__u32 sc, fx = 0, tc;
	int i;

	start_sc_pair(_metadata, self, variant, 0, &sc, &fx);
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &before));
	for (i = 0; i < steps; i++)
		ADV("%llu", HALF);
	ASSERT_EQ(0, hwpmc_driverstats(self->fd, &after));
	EXPECT_EQ(steps * HALF, rd(_metadata, self->fd, sc));
	if (fx)
		EXPECT_EQ(steps * HALF, rd(_metadata, self->fd, fx));
	/* Each advance of the longest period overflows: one PMI each. */
	EXPECT_EQ(steps, after.pm_intr_processed - before.pm_intr_processed);
	EXPECT_EQ(0, after.pm_intr_ignored - before.pm_intr_ignored);
	if (variant->global)
		EXPECT_EQ(0, mget(self->cpu, "global_status"));

	/* Process scope, on this process: the same, however it switches. */
	sc_pair_to_tc(_metadata, self, variant, sc, fx, &tc);
	for (i = 0; i < steps; i++)
		ADV("%llu", HALF);
	EXPECT_EQ(steps * HALF, rd(_metadata, self->fd, tc));
	ASSERT_EQ(0, hwpmc_release(self->fd, tc));
}

/*
 * Two processes pinned to one CPU, each with its own process-scope PMC,
 * advance alternately (a handshake makes each run while the other
 * sleeps): each PMC reads exactly its own process's total.  With
 * @same_row, the other rows of the class are disabled (PMCADMIN) so both
 * PMCs, of two owners, share one counter, saved and restored at every
 * switch.
 */
static void two_tasks(struct __test_metadata *_metadata,
		      FIXTURE_DATA(hw) *self,
		      const FIXTURE_VARIANT(hw) *variant, bool same_row)
{
	struct hwpmc_child a, b;
	__u64 sa = 0, sb = 0, ack;
	long long swa, swb, gate[4];
	char path[64];
	__u32 pa, pb, r, c;
	int fd2 = self->fd, round, sfa, sfb;
	struct pmc_info pi;

	if (same_row) {
		fd2 = hwpmc_open();
		ASSERT_LE(0, fd2);
		for (c = 0; c < (__u32)self->ncpu; c++)
			for (r = 1; r < variant->ngp; r++) {
				int err = hwpmc_admin(self->fd, c,
						      self->gp_first + r,
						      PMC_STATE_DISABLED);

				if (err != ENXIO)	/* offline */
					ASSERT_EQ(0, err);
			}
	}
	ASSERT_EQ(0, hwpmc_child_start(&a, adv_worker, NULL));
	ASSERT_EQ(0, hwpmc_child_start(&b, adv_worker, NULL));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &pa));
	ASSERT_EQ(0, hwpmc_alloc_cfg(fd2, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &pb));
	ASSERT_EQ(0, hwpmc_attach(self->fd, pa, a.pid));
	ASSERT_EQ(0, hwpmc_attach(fd2, pb, b.pid));
	ASSERT_EQ(0, hwpmc_start(self->fd, pa));
	ASSERT_EQ(0, hwpmc_start(fd2, pb));
	if (same_row) {
		/* Both on the first row: the only one left. */
		ASSERT_EQ(0, row_info(self->fd, self->cpu, self->gp_first,
				      &pi));
		EXPECT_EQ(PMC_DISP_THREAD, pi.pm_rowdisp);
		ASSERT_EQ(0, row_info(self->fd, self->cpu, self->gp_first + 1,
				      &pi));
		EXPECT_EQ(PMC_STATE_DISABLED, pi.pm_state);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", a.pid);
	sfa = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/status", b.pid);
	sfb = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, sfa);
	ASSERT_LE(0, sfb);
	swa = hwpmc_status_switches(sfa);
	swb = hwpmc_status_switches(sfb);

	for (round = 0; round < 40; round++) {
		__u64 ua = 1000 + round, oa = round % 3, ub = 7 * round + 3,
		      ob = 2;

		ASSERT_EQ(0, hwpmc_send_u64(&a, ua));
		ASSERT_EQ(0, hwpmc_send_u64(&a, oa));
		ASSERT_EQ(0, hwpmc_recv_u64(&a, &ack));
		ASSERT_EQ(0, ack);
		ASSERT_EQ(0, hwpmc_send_u64(&b, ub));
		ASSERT_EQ(0, hwpmc_send_u64(&b, ob));
		ASSERT_EQ(0, hwpmc_recv_u64(&b, &ack));
		ASSERT_EQ(0, ack);
		sa += ua + oa;
		sb += ub + ob;
		/* The parent is no target: nobody counts this. */
		ADV("50");
	}
	EXPECT_EQ(sa, rd(_metadata, self->fd, pa));
	EXPECT_EQ(sb, rd(_metadata, fd2, pb));
	swa = hwpmc_status_switches(sfa) - swa;
	swb = hwpmc_status_switches(sfb) - swb;
	TH_LOG("%s: A %llu (%lld switches), B %llu (%lld switches)",
	       same_row ? "one shared counter" : "own counters",
	       (unsigned long long)sa, swa, (unsigned long long)sb, swb);
	EXPECT_LE(40, swa);
	EXPECT_LE(40, swb);
	close(sfa);
	close(sfb);
	/* Two running process-scope hardware PMCs: every switch is seen. */
	ASSERT_EQ(0, hwpmc_switch_gate_now(gate));
	EXPECT_EQ(2, gate[0]);
	ASSERT_EQ(0, hwpmc_send_u64(&a, 0));
	ASSERT_EQ(0, hwpmc_send_u64(&b, 0));
	EXPECT_EQ(0, hwpmc_child_wait(&a));
	EXPECT_EQ(0, hwpmc_child_wait(&b));
	/* Exited: the values stay. */
	EXPECT_EQ(sa, rd(_metadata, self->fd, pa));
	EXPECT_EQ(sb, rd(_metadata, fd2, pb));
	/* Released, they stop: the gate no longer passes every switch. */
	EXPECT_EQ(0, hwpmc_release(self->fd, pa));
	EXPECT_EQ(0, hwpmc_release(fd2, pb));
	ASSERT_EQ(0, hwpmc_switch_gate_now(gate));
	EXPECT_EQ(0, gate[0]);
	if (same_row) {
		close(fd2);
		for (c = 0; c < (__u32)self->ncpu; c++)
			for (r = 1; r < variant->ngp; r++)
				hwpmc_admin(self->fd, c, self->gp_first + r,
					    PMC_STATE_FREE);
	}
}

TEST_F_TIMEOUT(hw, context_switch_keeps_counts_apart, 120)
{
	two_tasks(_metadata, self, variant, false);
}

TEST_F_TIMEOUT(hw, context_switch_one_counter_two_owners, 120)
{
	two_tasks(_metadata, self, variant, true);
}

TEST_HARNESS_MAIN
