// SPDX-License-Identifier: GPL-2.0
/*
 * One test per entry of hwpmc(4)'s ERRORS section that concerns the
 * operations implemented so far, each asserting the exact errno.  The
 * mapping of every entry to its test (or to why it cannot apply on Linux)
 * is selftests/ERRORS.md.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

static int ncpus(int fd)
{
	struct pmc_op_getcpuinfo ci;

	if (hwpmc_ioctl_err(fd, HWPMC_IOC_GETCPUINFO, &ci))
		return -1;
	return (int)ci.pm_ncpu;
}

FIXTURE(owner) {
	int fd;
	__u32 id;	/* a process-scope SOFT counting PMC, not attached */
};

FIXTURE_SETUP(owner)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SYSCALL_ENTER, 0,
				   &self->id));
}

FIXTURE_TEARDOWN(owner)
{
	close(self->fd);
	/* A test that failed with CPU 1 offline leaves it online again. */
	if (!access("/sys/devices/system/cpu/cpu1/online", F_OK))
		hwpmc_cpu_set_online(1, 1);
}

/* [EBUSY] PMCADMIN DISABLE of a row in use by process-private PMCs. */
TEST_F(owner, ebusy_admin_disable_thread_row)
{
	struct pmc_info info[64];
	__u32 n = 64, r;
	int found = 0;

	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	for (r = 0; r < n; r++) {
		if (info[r].pm_rowdisp != PMC_DISP_THREAD)
			continue;
		found = 1;
		EXPECT_EQ(EBUSY, hwpmc_admin(self->fd, 0, r, PMC_STATE_DISABLED));
	}
	EXPECT_TRUE(found);
}

/* [EBUSY] PMCADMIN on an active system-mode PMC. */
TEST_F(owner, ebusy_admin_on_system_pmc)
{
	struct pmc_info info[64];
	__u32 n = 64, r, sys;

	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SYSCALL_ENTER, 0, &sys));
	ASSERT_EQ(0, hwpmc_start(self->fd, sys));
	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	for (r = 0; r < n; r++)
		if (info[r].pm_ownerpid == getpid())
			break;
	ASSERT_LT(r, n);
	EXPECT_EQ(EBUSY, hwpmc_admin(self->fd, 0, r, PMC_STATE_DISABLED));
	EXPECT_EQ(EBUSY, hwpmc_admin(self->fd, 0, r, PMC_STATE_FREE));
}

/*
 * [EBUSY] PMCATTACH to a target that already has another PMC on the same
 * hardware resources (row).  A second owner with a PMC on every SOFT row
 * must collide on exactly the row the first owner's PMC uses.
 */
TEST_F(owner, ebusy_attach_same_row)
{
	__u32 nrows = 0, i, ids[64];
	int other = hwpmc_open(), nbusy = 0, nok = 0, err;

	ASSERT_LE(0, other);
	ASSERT_LE(0, hwpmc_class_firstrow(self->fd, PMC_CLASS_SOFT, &nrows));
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	for (i = 0; i < nrows; i++)
		ASSERT_EQ(0, hwpmc_soft_tc(other, PMC_SOFT_SYSCALL_ENTER, 0,
					   &ids[i]));
	for (i = 0; i < nrows; i++) {
		err = hwpmc_attach(other, ids[i], 0);
		if (err == EBUSY)
			nbusy++;
		else if (!err)
			nok++;
	}
	EXPECT_EQ(1, nbusy);
	EXPECT_EQ((int)nrows - 1, nok);
	close(other);
}

/* [EBUSY] PMCRW writing a new value on an active PMC. */
TEST_F(owner, ebusy_write_running)
{
	ASSERT_EQ(0, hwpmc_start(self->fd, self->id));
	EXPECT_EQ(EBUSY, hwpmc_write(self->fd, self->id, 5));
	ASSERT_EQ(0, hwpmc_stop(self->fd, self->id));
	EXPECT_EQ(0, hwpmc_write(self->fd, self->id, 5));
}

/* [EBUSY] PMCSETCOUNT on an active PMC. */
TEST_F(owner, ebusy_setcount_running)
{
	__u64 v;

	ASSERT_EQ(0, hwpmc_start(self->fd, self->id));
	EXPECT_EQ(EBUSY, hwpmc_setcount(self->fd, self->id, 7));
	ASSERT_EQ(0, hwpmc_stop(self->fd, self->id));
	ASSERT_EQ(0, hwpmc_setcount(self->fd, self->id, 7));
	ASSERT_EQ(0, hwpmc_read(self->fd, self->id, &v));
	EXPECT_EQ(7, v);
}

/* [EDOOFUS] PMCSTART of a LOG_PROCCSW / LOG_PROCEXIT PMC without a log. */
TEST_F(owner, edoofus_start_logging_pmc_without_log)
{
	__u32 a, b;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH,
				   PMC_F_LOG_PROCCSW, &a));
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_CLOCK_PROF,
				   PMC_F_LOG_PROCEXIT, &b));
	EXPECT_EQ(HWPMC_EDOOFUS, hwpmc_start(self->fd, a));
	EXPECT_EQ(HWPMC_EDOOFUS, hwpmc_start(self->fd, b));
	EXPECT_EQ(EBADFD, HWPMC_EDOOFUS);
}

/* [EDOOFUS] PMCSTART of a system-wide sampling PMC without a log. */
TEST_F(owner, edoofus_start_system_sampling_without_log)
{
	__u32 id;

	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_SS, 0, 0, 1000000, &id));
	EXPECT_EQ(HWPMC_EDOOFUS, hwpmc_start(self->fd, id));
}

/* [EEXIST] PMCATTACH reissued for a target that already is one. */
TEST_F(owner, eexist_reattach)
{
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	EXPECT_EQ(EEXIST, hwpmc_attach(self->fd, self->id, 0));
	EXPECT_EQ(EEXIST, hwpmc_attach(self->fd, self->id, getpid()));
}

/* [EFAULT] A bad address passed to the driver. */
TEST_F(owner, efault_bad_address)
{
	struct pmc_op_getpmcinfo g = { .pm_cpu = 0, .pm_npmc = 64,
				       .pm_info = 16 };
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(EFAULT, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCRW, (void *)1));
	EXPECT_EQ(EFAULT, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETPMCINFO, &g));
	/* Readable but not writable: the result cannot be copied out. */
	EXPECT_EQ(EFAULT, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCPUINFO, ro));
	munmap(ro, 4096);
}

/* [EINVAL] An invalid PMC handle. */
TEST_F(owner, einval_bad_handle)
{
	__u64 v;

	EXPECT_EQ(EINVAL, hwpmc_start(self->fd, self->id + 1000));
	EXPECT_EQ(EINVAL, hwpmc_stop(self->fd, PMC_ID_INVALID));
	EXPECT_EQ(EINVAL, hwpmc_read(self->fd, 0, &v));
	EXPECT_EQ(EINVAL, hwpmc_release(self->fd, self->id + 1));
	ASSERT_EQ(0, hwpmc_release(self->fd, self->id));
	/* A released handle is invalid (and now the owner has none: ESRCH). */
	EXPECT_EQ(ESRCH, hwpmc_start(self->fd, self->id));
}

/*
 * [EINVAL] Every reserved field (and reserved flag word) of an operation's
 * argument must be zero: each op fails with it set, and the same call
 * with it clear succeeds (or fails for its own documented reason).
 */
TEST_F(owner, einval_reserved_fields)
{
	struct pmc_op_simple sm = { .pm_pmcid = self->id, .pm_reserved = 1 };
	struct pmc_op_pmcattach at = { .pm_pmcid = self->id };
	struct pmc_op_pmcsetcount sc = { .pm_pmcid = self->id,
					 .pm_reserved = 1, .pm_count = 5 };
	struct pmc_op_getmsr gm = { .pm_pmcid = self->id };
	struct pmc_info info[64];
	struct pmc_op_getpmcinfo gi = { .pm_npmc = 64,
					.pm_info = (uintptr_t)info };
	struct pmc_op_getdyneventinfo de = { .pm_class = PMC_CLASS_SOFT };
	struct pmc_op_getmoduleversion mv = { .pm_reserved = 1 };
	struct pmc_op_pmcadmin ad = { .pm_state = PMC_STATE_FREE,
				      .pm_flags = 1 };
	struct pmc_op_configurelog cl = { .pm_flags = 1 };
	struct pmc_op_writelog wl = { .pm_userdata = 1, .pm_reserved = 1 };
	unsigned int i;
	int logfd;

	/* PMCATTACH and PMCDETACH: both words of pm_reserved. */
	for (i = 0; i < 2; i++) {
		memset(at.pm_reserved, 0, sizeof(at.pm_reserved));
		at.pm_reserved[i] = 1;
		EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCATTACH,
						  &at));
	}
	memset(at.pm_reserved, 0, sizeof(at.pm_reserved));
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCATTACH, &at));

	/* PMCSETCOUNT. */
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCSETCOUNT, &sc));
	sc.pm_reserved = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCSETCOUNT, &sc));

	/* pmc_op_simple: PMCSTART, PMCSTOP. */
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCSTART, &sm));
	sm.pm_reserved = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCSTART, &sm));
	sm.pm_reserved = 1;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCSTOP, &sm));
	sm.pm_reserved = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCSTOP, &sm));

	/* PMCGETMSR: SOFT has no RDPMC, which is told only when clear. */
	for (i = 0; i < 2; i++) {
		memset(gm.pm_reserved, 0, sizeof(gm.pm_reserved));
		gm.pm_reserved[i] = 1;
		EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCGETMSR,
						  &gm));
	}
	memset(gm.pm_reserved, 0, sizeof(gm.pm_reserved));
	EXPECT_EQ(EOPNOTSUPP, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCGETMSR,
					      &gm));

	/* GETPMCINFO and GETDYNEVENTINFO: each word of pm_reserved. */
	for (i = 0; i < 4; i++) {
		memset(gi.pm_reserved, 0, sizeof(gi.pm_reserved));
		gi.pm_reserved[i] = 1;
		EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd,
						  HWPMC_IOC_GETPMCINFO, &gi));
		memset(de.pm_reserved, 0, sizeof(de.pm_reserved));
		de.pm_reserved[i] = 1;
		EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd,
						  HWPMC_IOC_GETDYNEVENTINFO,
						  &de));
	}
	memset(gi.pm_reserved, 0, sizeof(gi.pm_reserved));
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETPMCINFO, &gi));
	memset(de.pm_reserved, 0, sizeof(de.pm_reserved));
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDYNEVENTINFO, &de));
	EXPECT_LT(0, de.pm_nevent);

	/* GETMODULEVERSION. */
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION,
					  &mv));
	mv.pm_reserved = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION, &mv));

	/* PMCADMIN's pm_flags (enabling an enabled row changes nothing). */
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCADMIN, &ad));
	ad.pm_flags = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCADMIN, &ad));

	/*
	 * CONFIGURELOG's pm_flags and pm_reserved, then WRITELOG's; into an
	 * unnamed file (/dev/null is refused: the kernel cannot write it).
	 */
	logfd = open("/tmp", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	cl.pm_logfd = logfd;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_CONFIGURELOG,
					  &cl));
	cl.pm_flags = 0;
	for (i = 0; i < 2; i++) {
		memset(cl.pm_reserved, 0, sizeof(cl.pm_reserved));
		cl.pm_reserved[i] = 1;
		EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd,
						  HWPMC_IOC_CONFIGURELOG, &cl));
	}
	memset(cl.pm_reserved, 0, sizeof(cl.pm_reserved));
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_CONFIGURELOG, &cl));
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_WRITELOG, &wl));
	wl.pm_reserved = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_WRITELOG, &wl));
	close(logfd);

	/* PMCDETACH, then PMCRELEASE (pmc_op_simple). */
	at.pm_reserved[1] = 1;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCDETACH, &at));
	at.pm_reserved[1] = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCDETACH, &at));
	sm.pm_reserved = 1;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCRELEASE, &sm));
	sm.pm_reserved = 0;
	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCRELEASE, &sm));
}

/* GETCAPS: the capabilities of SOFT counting and sampling PMCs; EINVAL
 * for a handle the owner does not have.
 */
TEST_F(owner, getcaps_soft_and_bad_handle)
{
	const __u32 soft = PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_INTERRUPT |
			   PMC_CAP_USER | PMC_CAP_SYSTEM;
	struct pmc_op_caps c = { .pm_pmcid = self->id };
	struct pmc_op_pmcallocate a = {
		.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
		.pm_event = PMC_SOFT_CLOCK_PROF, .pm_mode = PMC_MODE_TS,
		.pm_caps = PMC_CAP_INTERRUPT | PMC_CAP_READ, .pm_count = 1000,
	};
	__u32 ts;

	/* Allocated without pm_caps: everything the class can do. */
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &c));
	EXPECT_EQ(soft, c.pm_caps);
	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_TS, 0, PMC_CPU_ANY, 1000, &ts));
	c.pm_pmcid = ts;
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &c));
	EXPECT_EQ(soft, c.pm_caps);
	/* Allocated with pm_caps: what was asked for. */
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCALLOCATE, &a));
	c.pm_pmcid = a.pm_pmcid;
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &c));
	EXPECT_EQ(PMC_CAP_INTERRUPT | PMC_CAP_READ, c.pm_caps);
	/* Handles the owner does not have. */
	c.pm_pmcid = a.pm_pmcid + 100;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &c));
	c.pm_pmcid = PMC_ID_INVALID;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &c));
	ASSERT_EQ(0, hwpmc_release(self->fd, ts));
	c.pm_pmcid = ts;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &c));
}

/* [EINVAL] An invalid CPU number for GETPMCINFO. */
TEST_F(owner, einval_pmcinfo_bad_cpu)
{
	struct pmc_info info[64];
	__u32 n = 64;

	EXPECT_EQ(EINVAL, hwpmc_pmcinfo(self->fd, ncpus(self->fd), info, &n));
	n = 64;
	EXPECT_EQ(EINVAL, hwpmc_pmcinfo(self->fd, PMC_CPU_ANY, info, &n));
}

/* [EINVAL] CONFIGURELOG de-configure without a log file. */
TEST_F(owner, einval_deconfigure_without_log)
{
	struct pmc_op_configurelog c = { .pm_logfd = -1 };

	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_CONFIGURELOG, &c));
}

/* [EINVAL] FLUSHLOG without a log file. */
TEST_F(owner, einval_flushlog_without_log)
{
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_FLUSHLOG, NULL));
}

/* [EINVAL] PMCADMIN: invalid CPU, invalid operation, invalid PMC ID. */
TEST_F(owner, einval_admin_bad_cpu)
{
	EXPECT_EQ(EINVAL, hwpmc_admin(self->fd, ncpus(self->fd), 0,
				      PMC_STATE_DISABLED));
}

TEST_F(owner, einval_admin_bad_operation)
{
	EXPECT_EQ(EINVAL, hwpmc_admin(self->fd, 0, 0, PMC_STATE_RUNNING));
	EXPECT_EQ(EINVAL, hwpmc_admin(self->fd, 0, 0, 77));
}

TEST_F(owner, einval_admin_bad_row)
{
	struct pmc_op_getcpuinfo ci;

	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCPUINFO, &ci));
	EXPECT_EQ(EINVAL, hwpmc_admin(self->fd, 0, ci.pm_npmc,
				      PMC_STATE_DISABLED));
}

/* [EINVAL] No suitable PMC could be allocated. */
TEST_F(owner, einval_no_suitable_pmc)
{
	__u32 nrows = 0, i, id;

	/* TSC has no process-scope row; SOFT has no event 1000. */
	EXPECT_EQ(EINVAL, hwpmc_alloc(self->fd, PMC_CLASS_TSC, 0, PMC_MODE_TC,
				      0, PMC_CPU_ANY, 0, &id));
	EXPECT_EQ(EINVAL, hwpmc_soft_tc(self->fd, 1000, 0, &id));
	EXPECT_EQ(EINVAL, hwpmc_alloc(self->fd, 0x55, 0, PMC_MODE_TC, 0,
				      PMC_CPU_ANY, 0, &id));
	/* Every SOFT row of CPU 0 taken by a system PMC: none left. */
	ASSERT_LE(0, hwpmc_class_firstrow(self->fd, PMC_CLASS_SOFT, &nrows));
	for (i = 0; i < nrows; i++) {
		if (hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &id) == EINVAL)
			break;	/* the fixture's process PMC holds one row */
	}
	EXPECT_EQ(EINVAL, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &id));
}

/*
 * [EINVAL] No free row for a process-scope PMC: an owner's process PMCs
 * each take a row of their own.  Releasing one frees exactly its row, and
 * another owner's rows are its own.
 */
TEST_F(owner, einval_no_free_process_row)
{
	__u32 nrows = 0, i, n = 0, id, ids[64];
	int other;

	ASSERT_LE(0, hwpmc_class_firstrow(self->fd, PMC_CLASS_SOFT, &nrows));
	ASSERT_GE(64, nrows);
	/* The fixture's PMC holds one row. */
	for (i = 0; i + 1 < nrows; i++, n++)
		ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0,
					   &ids[i]));
	EXPECT_EQ(EINVAL, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0,
					&id));
	for (i = 0; i < 3 && n; i++) {
		ASSERT_EQ(0, hwpmc_release(self->fd, ids[--n]));
		ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0,
					   &ids[n++]));
		EXPECT_EQ(EINVAL, hwpmc_soft_tc(self->fd,
						PMC_SOFT_SCHED_SWITCH, 0, &id));
	}
	other = hwpmc_open();
	ASSERT_LE(0, other);
	EXPECT_EQ(0, hwpmc_soft_tc(other, PMC_SOFT_SCHED_SWITCH, 0, &id));
	close(other);
}

/* [EINVAL] An invalid PMC mode. */
TEST_F(owner, einval_bad_mode)
{
	__u32 id;

	EXPECT_EQ(EINVAL, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, 0,
				      PMC_MODE_MAX + 1, 0, PMC_CPU_ANY, 0, &id));
}

/* [EINVAL] An invalid CPU number for PMCALLOCATE. */
TEST_F(owner, einval_allocate_bad_cpu)
{
	__u32 id;

	EXPECT_EQ(EINVAL, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD,
					ncpus(self->fd), &id));
}

/* [EINVAL] A CPU other than PMC_CPU_ANY for a process-private PMC. */
TEST_F(owner, einval_process_pmc_with_cpu)
{
	__u32 id;

	EXPECT_EQ(EINVAL, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, 0, PMC_MODE_TC,
				      0, 0, 0, &id));
}

/* [EINVAL] PMC_CPU_ANY for a system-wide PMC. */
TEST_F(owner, einval_system_pmc_cpu_any)
{
	__u32 id;

	EXPECT_EQ(EINVAL, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD,
					PMC_CPU_ANY, &id));
}

/* [EINVAL] Unknown pm_flags; reserved fields set. */
TEST_F(owner, einval_unknown_flags)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
		.pm_mode = PMC_MODE_TC,
	};
	__u32 id;

	EXPECT_EQ(EINVAL, hwpmc_soft_tc(self->fd, 0, 0x100000, &id));
	EXPECT_EQ(EINVAL, hwpmc_soft_tc(self->fd, 0, PMC_F_CALLCHAIN, &id));
	/* Modifiers valid only for process-private PMCs. */
	EXPECT_EQ(EINVAL, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, 0, PMC_MODE_SC,
				      PMC_F_DESCENDANTS, 0, 0, &id));
	a.pm_reserved[5] = 1;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCALLOCATE, &a));
}

/* [EINVAL] PMCATTACH or PMCDETACH on a system-wide PMC. */
TEST_F(owner, einval_attach_system_pmc)
{
	__u32 id;

	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &id));
	EXPECT_EQ(EINVAL, hwpmc_attach(self->fd, id, 0));
	EXPECT_EQ(EINVAL, hwpmc_detach(self->fd, id, 0));
}

/* [EINVAL] An illegal process ID for PMCATTACH or PMCDETACH. */
TEST_F(owner, einval_attach_illegal_pid)
{
	EXPECT_EQ(EINVAL, hwpmc_attach(self->fd, self->id, -1));
	EXPECT_EQ(EINVAL, hwpmc_detach(self->fd, self->id, -5));
}

/* [EINVAL] PMCDETACH for a PMC not attached to the (monitored) target. */
TEST_F(owner, einval_detach_not_attached)
{
	__u32 other;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &other));
	ASSERT_EQ(0, hwpmc_attach(self->fd, other, 0));
	EXPECT_EQ(EINVAL, hwpmc_detach(self->fd, self->id, 0));
}

/* [EINVAL] Illegal pm_flags for PMCRW; PMCRW on a sampling PMC. */
TEST_F(owner, einval_rw_bad_flags)
{
	struct pmc_op_pmcrw rw = { .pm_pmcid = self->id, .pm_flags = 0x1 };
	__u32 ts;
	__u64 v;

	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCRW, &rw));
	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_TS, 0, PMC_CPU_ANY, 1000, &ts));
	EXPECT_EQ(EINVAL, hwpmc_read(self->fd, ts, &v));
}

/* [EINVAL] PMCGETMSR on a PMC not process-private, not solely attached to
 * its owner, or allocated with PMC_F_DESCENDANTS.
 */
TEST_F(owner, einval_getmsr_rules)
{
	struct pmc_op_getmsr m = { 0 };
	__u32 sys, desc;

	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &sys));
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_CLOCK_HARD,
				   PMC_F_DESCENDANTS, &desc));
	ASSERT_EQ(0, hwpmc_attach(self->fd, desc, 0));
	m.pm_pmcid = sys;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCGETMSR, &m));
	m.pm_pmcid = desc;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCGETMSR, &m));
	m.pm_pmcid = self->id;	/* not attached at all */
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCGETMSR, &m));
}

/* [ENOSYS on FreeBSD] PMCGETMSR for a class without RDPMC: EOPNOTSUPP. */
TEST_F(owner, eopnotsupp_getmsr_without_rdpmc)
{
	struct pmc_op_getmsr m = { .pm_pmcid = self->id };

	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	EXPECT_EQ(EOPNOTSUPP, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCGETMSR, &m));
}

/* [EINVAL] WRITELOG without a log file. */
TEST_F(owner, einval_writelog_without_log)
{
	struct pmc_op_writelog w = { .pm_userdata = 42 };

	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_WRITELOG, &w));
}

/* [ENXIO] GETPMCINFO, system PMCALLOCATE, PMCSTART/STOP on an offline CPU. */
TEST_F(owner, enxio_offline_cpu)
{
	struct pmc_info info[64];
	__u32 n = 64, id, before;
	int err;

	if (ncpus(self->fd) < 2)
		SKIP(return, "needs two CPUs (vm-run --smp 2)");
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 1, &before));
	ASSERT_EQ(0, hwpmc_start(self->fd, before));
	/* Two CPUs as root (the rig): CPU 1 can be taken offline. */
	err = hwpmc_cpu_set_online(1, 0);
	ASSERT_EQ(0, err) TH_LOG("offlining CPU 1: %s", strerror(err));
	EXPECT_EQ(ENXIO, hwpmc_pmcinfo(self->fd, 1, info, &n));
	EXPECT_EQ(ENXIO, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 1, &id));
	EXPECT_EQ(ENXIO, hwpmc_stop(self->fd, before));
	EXPECT_EQ(ENXIO, hwpmc_start(self->fd, before));
	ASSERT_EQ(0, hwpmc_cpu_set_online(1, 1));
	EXPECT_EQ(0, hwpmc_stop(self->fd, before));
	n = 64;
	EXPECT_EQ(0, hwpmc_pmcinfo(self->fd, 1, info, &n));
}

/* [EOPNOTSUPP] Capabilities the class does not support. */
TEST_F(owner, eopnotsupp_caps)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = 0, .pm_class = PMC_CLASS_TSC, .pm_mode = PMC_MODE_SC,
		.pm_caps = PMC_CAP_INTERRUPT,
	};

	EXPECT_EQ(EOPNOTSUPP, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCALLOCATE,
					      &a));
	/* The TSC is written as FreeBSD writes it: accepted, ignored
	 * (bsdcompat_test: tsc_count_and_write_ignored).
	 */
	a.pm_caps = 0;
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_PMCALLOCATE, &a));
	EXPECT_EQ(0, hwpmc_write(self->fd, a.pm_pmcid, 1));
	EXPECT_EQ(0, hwpmc_setcount(self->fd, a.pm_pmcid, 1));
}

/* [EPERM] PMCADMIN without super-user privilege; [EPERM] PMCATTACH to a
 * process the caller may not debug.  (security_test covers the matrix.)
 */
TEST_F(owner, eperm_admin_and_attach_unprivileged)
{
	pid_t child = fork();
	int status;

	ASSERT_LE(0, child);
	if (!child) {
		int fd;
		__u32 id;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = hwpmc_open();
		if (fd < 0)
			_exit(11);
		if (hwpmc_admin(fd, 0, 0, PMC_STATE_DISABLED) != EPERM)
			_exit(12);
		if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_HARD, 0, &id))
			_exit(13);
		if (hwpmc_attach(fd, id, 1) != EPERM)	/* init, root's */
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* [ESRCH] An operation without having allocated any PMCs. */
TEST(esrch_no_pmcs)
{
	int fd = hwpmc_open();
	__u64 v;

	ASSERT_LE(0, fd);
	EXPECT_EQ(ESRCH, hwpmc_start(fd, 1));
	EXPECT_EQ(ESRCH, hwpmc_read(fd, 1, &v));
	EXPECT_EQ(ESRCH, hwpmc_attach(fd, 1, 0));
	EXPECT_EQ(ESRCH, hwpmc_release(fd, 1));
	close(fd);
}

/* [ESRCH] An operation after the PMC was detached from all its targets. */
TEST_F(owner, esrch_after_detach_all)
{
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	ASSERT_EQ(0, hwpmc_detach(self->fd, self->id, 0));
	EXPECT_EQ(ESRCH, hwpmc_start(self->fd, self->id));
	/* Attaching again makes it usable again. */
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	EXPECT_EQ(0, hwpmc_start(self->fd, self->id));
}

/* [ESRCH] An operation after every target of the PMC exited. */
TEST_F(owner, esrch_after_targets_exited)
{
	int go, status;
	pid_t child = hwpmc_fork_gated(&go);
	__u64 v;

	ASSERT_LE(0, child);
	if (!child) {
		hwpmc_burn_syscalls(100);
		_exit(0);
	}
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, child));
	ASSERT_EQ(0, hwpmc_start(self->fd, self->id));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	close(go);
	EXPECT_EQ(ESRCH, hwpmc_start(self->fd, self->id));
	/* Its count stays readable. */
	ASSERT_EQ(0, hwpmc_read(self->fd, self->id, &v));
	EXPECT_LE(100, v);
	/* A new target makes it usable again. */
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->id, 0));
	EXPECT_EQ(0, hwpmc_start(self->fd, self->id));
}

/* [ESRCH] PMCATTACH/PMCDETACH naming a non-existent process. */
TEST_F(owner, esrch_no_such_process)
{
	pid_t child = fork();

	ASSERT_LE(0, child);
	if (!child)
		_exit(0);
	ASSERT_EQ(child, waitpid(child, NULL, 0));
	EXPECT_EQ(ESRCH, hwpmc_attach(self->fd, self->id, child));
	EXPECT_EQ(ESRCH, hwpmc_detach(self->fd, self->id, child));
}

/* [ESRCH] PMCDETACH of a target not monitored by hwpmc at all. */
TEST_F(owner, esrch_detach_unmonitored)
{
	EXPECT_EQ(ESRCH, hwpmc_detach(self->fd, self->id, 0));
}

TEST_HARNESS_MAIN
