// SPDX-License-Identifier: GPL-2.0
/*
 * hwmodel_priv_test: unprivileged owners of hardware PMCs on the PMU
 * model: AnyThread needs privilege, kernel.hwpmc.unprivileged_hw, user
 * mode only, and kernel.hwpmc.min_hw_period (hwmodel.h: the model, the
 * fixture and its layouts).
 */
#define _GNU_SOURCE
#include "hwmodel.h"

/*
 * In a child that became "nobody" (no capability left): what allocating
 * a thread-scope counting PMC of @class with @config returns (an errno).
 */
static int alloc_as_nobody(int fd, __u32 class, __u32 event, __u64 config)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		__u32 id;
		int err;

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(255);
		err = hwpmc_alloc_cfg(fd, class, event, config, PMC_MODE_TC, 0,
				      PMC_CPU_ANY, 0, &id);
		if (!err)
			hwpmc_release(fd, id);
		_exit(err);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * AnyThread (Intel PerfMon v3-4, the model's v4; reserved on AMD) sets
 * event-select bit 21 and the fixed nibble's bit 2, and, since it counts
 * what the other hyperthread runs, needs system privilege: EPERM for an
 * unprivileged caller, who may still allocate without it.
 */
TEST_F_TIMEOUT(hw, anythread_needs_privilege, 120)
{
	const __u64 any = PMC_X86_CONFIG_ANYTHREAD;
	struct pmc_op_pmcallocate a = {
		.pm_class = variant->gp_class, .pm_event = EV_INSTR,
		.pm_mode = PMC_MODE_TC, .pm_cpu = PMC_CPU_ANY,
		.pm_caps = PMC_CAP_ANYTHREAD,
	};
	__u32 id;

	if (!variant->nfixed) {
		EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, variant->gp_class,
						  EV_INSTR, any, PMC_MODE_TC,
						  0, PMC_CPU_ANY, 0, NULL));
		/* The class does not offer it. */
		EXPECT_EQ(EOPNOTSUPP,
			  hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCALLOCATE, &a));
		return;
	}
	EXPECT_EQ(SEL_EN | SEL_INT | SEL_USR | SEL_OS | any | EV_INSTR,
		  sel_of(_metadata, self->fd, self->cpu, variant->gp_class,
			 EV_INSTR, any));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 0,
				     any | PMC_X86_CONFIG_USR, PMC_MODE_SC, 0,
				     self->cpu, 0, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	/* USR (0x2), ANY (0x4) and PMI (0x8). */
	EXPECT_EQ(0xe, mget(self->cpu, "fixed_ctrl"));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));

	/* Hardware PMCs open to unprivileged users (unprivileged_hw). */
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 1));
	EXPECT_EQ(EPERM, alloc_as_nobody(self->fd, variant->gp_class,
					 EV_INSTR, any));
	EXPECT_EQ(EPERM, alloc_as_nobody(self->fd, PMC_CLASS_IAF, 0, any));
	EXPECT_EQ(0, alloc_as_nobody(self->fd, variant->gp_class, EV_INSTR,
				     0));
	EXPECT_EQ(0, alloc_as_nobody(self->fd, PMC_CLASS_IAF, 0, 0));
	EXPECT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 0));
}

struct alloc_req {
	int fd;
	struct pmc_op_pmcallocate *a;
	int keep;
};

/* alloc_req_as_nobody()'s child, run by hwpmc_as_nobody(). */
static int alloc_req_fn(void *arg)
{
	const struct alloc_req *r = arg;
	int err = hwpmc_ioctl_err(r->fd, HWPMC_IOC_PMCALLOCATE, r->a);

	if (err || r->a->pm_pmcid >= 100)
		return err ? err : 254;
	if (!r->keep)
		return hwpmc_release(r->fd, r->a->pm_pmcid);
	return 100 + r->a->pm_pmcid;
}

/*
 * In a child that became "nobody": PMCALLOCATE @a on @fd (the test's own
 * open, inherited: the caller's credentials decide).  Returns the errno,
 * or, with @keep, 100 + the PMC's id (kept for the test to use).
 */
static int alloc_req_as_nobody(int fd, struct pmc_op_pmcallocate *a, int keep)
{
	struct alloc_req r = { .fd = fd, .a = a, .keep = keep };

	return hwpmc_as_nobody(alloc_req_fn, &r);
}

/*
 * kernel.hwpmc.unprivileged_hw (default 0, a boolean): a caller without
 * CAP_PERFMON cannot allocate a hardware PMC (EPERM) unless it is 1, since
 * any hardware PMC takes every counter from perf, KVM's virtual PMU and
 * the NMI watchdog for as long as it lives; SOFT PMCs stay open to it,
 * and root is unaffected.
 */
TEST_F_TIMEOUT(hw, unprivileged_hw_needs_sysctl, 120)
{
	struct stat st;
	__u32 id;

	EXPECT_EQ(0, hwpmc_sysctl_get(SYSCTL_UNPRIV_HW));
	ASSERT_EQ(0, stat(SYSCTL_UNPRIV_HW, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 2));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, -1));
	EXPECT_EQ(0, hwpmc_sysctl_get(SYSCTL_UNPRIV_HW));

	EXPECT_EQ(EPERM, alloc_as_nobody(self->fd, variant->gp_class,
					 EV_INSTR, PMC_X86_CONFIG_USR));
	if (variant->nfixed)
		EXPECT_EQ(EPERM, alloc_as_nobody(self->fd, PMC_CLASS_IAF, 0,
						 PMC_X86_CONFIG_USR));
	EXPECT_EQ(0, alloc_as_nobody(self->fd, PMC_CLASS_SOFT,
				     PMC_SOFT_SCHED_SWITCH, 0));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 1));
	EXPECT_EQ(0, alloc_as_nobody(self->fd, variant->gp_class, EV_INSTR,
				     PMC_X86_CONFIG_USR));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 0));
	EXPECT_EQ(EPERM, alloc_as_nobody(self->fd, variant->gp_class,
					 EV_INSTR, PMC_X86_CONFIG_USR));
}

/*
 * Unprivileged owners count and sample user mode only (with
 * unprivileged_hw=1): asking for kernel mode (the os bit, or
 * PMC_CAP_SYSTEM) is EACCES, as perf_event_open() answers; asking for
 * neither mode gives user mode alone (the event select has USR, not OS),
 * and kernel-mode events are not counted.  With
 * kernel.hwpmc.unprivileged_kernel=1 inside perf_event_paranoid <= 1 and
 * kptr_restrict = 0, kernel mode opens to them (hwpmc_priv_kernel()).
 */
TEST_F_TIMEOUT(hw, unprivileged_user_mode_only, 120)
{
	const char *kptr = "/proc/sys/kernel/kptr_restrict";
	const char *paranoid = "/proc/sys/kernel/perf_event_paranoid";
	const char *ukern = "/proc/sys/kernel/hwpmc/unprivileged_kernel";
	struct pmc_op_pmcallocate a = {
		.pm_class = variant->gp_class, .pm_event = EV_INSTR,
		.pm_mode = PMC_MODE_TC, .pm_cpu = PMC_CPU_ANY,
	};
	long old_kptr = hwpmc_sysctl_get(kptr);
	long old_paranoid = hwpmc_sysctl_get(paranoid);
	int rc;
	__u32 id;

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 1));
	a.pm_config = PMC_X86_CONFIG_OS;
	EXPECT_EQ(EACCES, alloc_req_as_nobody(self->fd, &a, 0));
	a.pm_config = PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS;
	EXPECT_EQ(EACCES, alloc_req_as_nobody(self->fd, &a, 0));
	a.pm_config = PMC_X86_CONFIG_USR;
	a.pm_caps = PMC_CAP_SYSTEM;
	EXPECT_EQ(EACCES, alloc_req_as_nobody(self->fd, &a, 0));
	a.pm_caps = PMC_CAP_USER;
	EXPECT_EQ(0, alloc_req_as_nobody(self->fd, &a, 0));

	/* Neither mode: user mode only. */
	a.pm_config = 0;
	a.pm_caps = 0;
	rc = alloc_req_as_nobody(self->fd, &a, 1);
	ASSERT_LE(100, rc) TH_LOG("allocation as nobody: %d", rc);
	id = rc - 100;
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	EXPECT_EQ(SEL_EN | SEL_INT | SEL_USR | EV_INSTR,
		  mget(self->cpu, "sel0"));
	ADV("os 100");
	ADV("usr 7");
	EXPECT_EQ(7, rd(_metadata, self->fd, id));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	if (variant->nfixed) {
		a.pm_class = PMC_CLASS_IAF;
		a.pm_event = 1;
		a.pm_config = PMC_X86_CONFIG_OS;
		EXPECT_EQ(EACCES, alloc_req_as_nobody(self->fd, &a, 0));
		a.pm_config = 0;
		rc = alloc_req_as_nobody(self->fd, &a, 1);
		ASSERT_LE(100, rc) TH_LOG("allocation as nobody: %d", rc);
		id = rc - 100;
		ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
		ASSERT_EQ(0, hwpmc_start(self->fd, id));
		/* Fixed counter 1: USR (0x2) and PMI (0x8), no OS (0x1). */
		EXPECT_EQ(0xa, (mget(self->cpu, "fixed_ctrl") >> 4) & 0xf);
		ASSERT_EQ(0, hwpmc_release(self->fd, id));
		a.pm_class = variant->gp_class;
		a.pm_event = EV_INSTR;
	}

	/* Root let them see kernel mode, within perf's and kptr's limits. */
	if (old_kptr < 0 || old_paranoid < 0 || hwpmc_sysctl_get(ukern) < 0) {
		TH_LOG("kernel.hwpmc.unprivileged_kernel case not run: sysctls missing");
	} else {
		a.pm_config = PMC_X86_CONFIG_OS;
		ASSERT_EQ(0, hwpmc_sysctl_set(ukern, 1));
		ASSERT_EQ(0, hwpmc_sysctl_set(paranoid, 2));
		ASSERT_EQ(0, hwpmc_sysctl_set(kptr, 0));
		EXPECT_EQ(EACCES, alloc_req_as_nobody(self->fd, &a, 0));
		ASSERT_EQ(0, hwpmc_sysctl_set(paranoid, 1));
		EXPECT_EQ(0, alloc_req_as_nobody(self->fd, &a, 0));
		ASSERT_EQ(0, hwpmc_sysctl_set(kptr, 1));
		EXPECT_EQ(EACCES, alloc_req_as_nobody(self->fd, &a, 0));
		EXPECT_EQ(0, hwpmc_sysctl_set(ukern, 0));
		EXPECT_EQ(0, hwpmc_sysctl_set(paranoid, old_paranoid));
		EXPECT_EQ(0, hwpmc_sysctl_set(kptr, old_kptr));
	}
	EXPECT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 0));
}

/*
 * kernel.hwpmc.min_hw_period (default 10000): an unprivileged caller's
 * hardware sampling period (PMCALLOCATE, PMCSETCOUNT) is at least that
 * (EINVAL); root may ask for any.
 */
TEST_F_TIMEOUT(hw, unprivileged_min_period, 120)
{
	struct pmc_op_pmcallocate a = {
		.pm_class = variant->gp_class, .pm_event = EV_INSTR,
		.pm_mode = PMC_MODE_TS, .pm_cpu = PMC_CPU_ANY,
		.pm_config = PMC_X86_CONFIG_USR,
	};
	__u32 id;

	EXPECT_EQ(10000, hwpmc_sysctl_get(SYSCTL_MIN_PERIOD));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_MIN_PERIOD, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 1));
	a.pm_count = 9999;
	EXPECT_EQ(EINVAL, alloc_req_as_nobody(self->fd, &a, 0));
	a.pm_count = 10000;
	EXPECT_EQ(0, alloc_req_as_nobody(self->fd, &a, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_MIN_PERIOD, 100));
	a.pm_count = 100;
	EXPECT_EQ(0, alloc_req_as_nobody(self->fd, &a, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_MIN_PERIOD, 10000));
	/* Root: any period. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TS, 0, PMC_CPU_ANY, 1, &id));
	ASSERT_EQ(0, hwpmc_setcount(self->fd, id, 2));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 0));
}

TEST_HARNESS_MAIN
