// SPDX-License-Identifier: GPL-2.0
/*
 * Coexistence with perf: a counter held through the kernel's reservation
 * protocol (as perf or the NMI watchdog hold them) makes the hardware rows
 * show as unavailable and allocation fail with EBUSY; while hwpmc holds the
 * counters, the protocol refuses others.  Runs on the test flavor's PMU
 * model (both vendors); the test flavor's debugfs file
 * hwpmc-test/hold_perfctr plays the part of perf.  An unprivileged user
 * (uid 65534) cannot take the counters unless root sets
 * kernel.hwpmc.unprivileged_hw.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <grp.h>
#include <sys/wait.h>


#define HOLD "/sys/kernel/debug/hwpmc-test/hold_perfctr"
#define UNPRIV_HW "/proc/sys/kernel/hwpmc/unprivileged_hw"

/* Write "1"/"0" to the hold file; 0 or the errno. */
static int hold(int on)
{
	int fd = open(HOLD, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

FIXTURE(model) {
	int fd;
	__u32 class;
};

FIXTURE_VARIANT(model) {
	const char *params;
	__u32 class;
};

FIXTURE_VARIANT_ADD(model, intel) {
	.params = "pmu_model=intel",
	.class = PMC_CLASS_IAP,
};

FIXTURE_VARIANT_ADD(model, amd) {
	.params = "pmu_model=amd",
	.class = PMC_CLASS_K8,
};

/* Reserved by PERF_CTR0..5 (C001_0201H + 2n), as perf keys them there. */
FIXTURE_VARIANT_ADD(model, amd_ext) {
	.params = "pmu_model=amd-ext",
	.class = PMC_CLASS_K8,
};

/* Reserved by the K7 PERFCTR0..3 (C001_0004H + n). */
FIXTURE_VARIANT_ADD(model, amd_legacy) {
	.params = "pmu_model=amd-legacy",
	.class = PMC_CLASS_K8,
};

FIXTURE_SETUP(model)
{
	ASSERT_EQ(0, hwpmc_module_unload_wait()) TH_LOG("is /dev/hwpmc held open?");
	ASSERT_EQ(0, hwpmc_module_load("test/", variant->params));
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->class = variant->class;
}

FIXTURE_TEARDOWN(model)
{
	close(self->fd);
	hold(0);
	hwpmc_module_unload_wait();
	hwpmc_module_load("", "");	/* back to the release module, as the rig loaded it */
}

static int alloc_hw(int fd, __u32 class, __u32 *id)
{
	return hwpmc_alloc(fd, class, 0xc0, PMC_MODE_TC, 0, PMC_CPU_ANY, 0,
			   id);
}

TEST_F(model, held_counters_are_ebusy_and_unavailable)
{
	struct pmc_info info[64];
	__u32 n = 64, id;
	int first = hwpmc_class_firstrow(self->fd, self->class, NULL);

	ASSERT_LE(0, first);
	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	EXPECT_EQ(0, info[first].pm_unavailable);
	ASSERT_EQ(0, hold(1));
	n = 64;
	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	if (!info[first].pm_unavailable)
		SKIP(return, "this CPU vendor's reservation bits do not cover the model's counters");
	EXPECT_EQ(EBUSY, alloc_hw(self->fd, self->class, &id));
	/* Given back: available and allocatable again. */
	ASSERT_EQ(0, hold(0));
	n = 64;
	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	EXPECT_EQ(0, info[first].pm_unavailable);
	ASSERT_EQ(0, alloc_hw(self->fd, self->class, &id));
	/* While hwpmc holds the counters, the other user cannot. */
	EXPECT_EQ(EBUSY, hold(1));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(0, hold(1));
}

struct hw_req {
	int fd;
	__u32 class;
};

/* alloc_hw() on @arg's fd (kept), run by hwpmc_as_nobody(): its errno. */
static int alloc_hw_fn(void *arg)
{
	const struct hw_req *r = arg;
	__u32 id;

	return alloc_hw(r->fd, r->class, &id);
}

/* In a child that became uid 65534: alloc_hw() on @fd (kept); its errno. */
static int alloc_hw_as_nobody(int fd, __u32 class)
{
	struct hw_req r = { .fd = fd, .class = class };

	return hwpmc_as_nobody(alloc_hw_fn, &r);
}

/*
 * An unprivileged user cannot lock perf (its hardware events, KVM's
 * virtual PMU, the NMI watchdog) out of the PMU: while
 * kernel.hwpmc.unprivileged_hw is 0 (the default) its hardware PMC is
 * EPERM and perf still gets the counters; root may, as before, and so
 * may anyone once root sets the sysctl to 1.
 */
TEST_F(model, unprivileged_cannot_lock_perf_out)
{
	struct pmc_info info[64];
	__u32 n = 64, id;
	int first = hwpmc_class_firstrow(self->fd, self->class, NULL);

	ASSERT_LE(0, first);
	ASSERT_EQ(0, hold(1));
	ASSERT_EQ(0, hwpmc_pmcinfo(self->fd, 0, info, &n));
	ASSERT_EQ(0, hold(0));
	if (!info[first].pm_unavailable)
		SKIP(return, "this CPU vendor's reservation bits do not cover the model's counters");
	EXPECT_EQ(0, hwpmc_sysctl_get(UNPRIV_HW));
	EXPECT_EQ(EPERM, alloc_hw_as_nobody(self->fd, self->class));
	EXPECT_EQ(0, hold(1));		/* perf is not locked out */
	ASSERT_EQ(0, hold(0));

	ASSERT_EQ(0, hwpmc_sysctl_set(UNPRIV_HW, 1));
	EXPECT_EQ(0, alloc_hw_as_nobody(self->fd, self->class));
	EXPECT_EQ(EBUSY, hold(1));	/* root's choice */
	ASSERT_EQ(0, hwpmc_sysctl_set(UNPRIV_HW, 0));
	close(self->fd);		/* releases it */
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, hold(1));

	/* Root: as before. */
	ASSERT_EQ(0, hold(0));
	ASSERT_EQ(0, alloc_hw(self->fd, self->class, &id));
	EXPECT_EQ(EBUSY, hold(1));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
}

TEST_HARNESS_MAIN
