// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 18's FreeBSD parity on the hardware classes, on the PMU model of
 * the test flavor (pmu_model=intel: IAP; pmu_model=amd: K8): GETPMCINFO's
 * pm_event of an IAP or K8 row is the global event number
 * (HWPMC_EV_GLOBAL(class, event select)), and PMCATTACH of a running
 * hardware PMC is EBUSY, as root and as uid 65534 (with
 * kernel.hwpmc.unprivileged_hw 1, user mode only).  The release module is
 * loaded again at the end.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_model_util.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#define UNPRIV_HW	"/proc/sys/kernel/hwpmc/unprivileged_hw"
#define EV_RETIRED	0xc0	/* instructions retired, Intel and AMD */

FIXTURE(model) {
	int unused;
};

FIXTURE_VARIANT(model) {
	const char *model;
	__u32 cls;
};

FIXTURE_VARIANT_ADD(model, intel) { .model = "intel", .cls = PMC_CLASS_IAP };
FIXTURE_VARIANT_ADD(model, amd) { .model = "amd", .cls = PMC_CLASS_K8 };

FIXTURE_SETUP(model)
{
	char why[256] = "";

	if (geteuid())
		SKIP(return, "needs root: it loads the test flavor of the module");
	ASSERT_EQ(0, model_use(variant->model, why, sizeof(why)))
		TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(model)
{
	if (!geteuid())
		model_restore_release();
}

static int hw_alloc(int fd, __u32 cls, __u32 mode, __u32 cpu, __u64 config,
		    __u32 *id)
{
	return hwpmc_alloc_cfg(fd, cls, EV_RETIRED, config, mode, 0, cpu, 0,
			       id);
}

TEST_F(model, pmcinfo_event_is_global)
{
	struct pmc_info info[64];
	__u32 n = 64, r, id;
	int fd = hwpmc_open(), seen = 0;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hw_alloc(fd, variant->cls, PMC_MODE_SC, 0,
			      PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS, &id));
	ASSERT_EQ(0, hwpmc_pmcinfo(fd, 0, info, &n));
	for (r = 0; r < n; r++) {
		if (info[r].pm_ownerpid != getpid())
			continue;
		EXPECT_EQ(variant->cls, info[r].pm_class);
		EXPECT_EQ(HWPMC_EV_GLOBAL(variant->cls, EV_RETIRED),
			  info[r].pm_event);
		seen++;
	}
	EXPECT_EQ(1, seen);
	close(fd);
}

/* The failed step's line, or 0. */
static int attach_running(__u32 cls)
{
	pid_t t = fork();
	int fd, line = 0;
	__u32 id;

	if (!t) {
		pause();
		_exit(0);
	}
	fd = hwpmc_open();
	if (t < 0 || fd < 0)
		line = __LINE__;
	else if (hw_alloc(fd, cls, PMC_MODE_TC, PMC_CPU_ANY,
			  PMC_X86_CONFIG_USR, &id) ||
		 hwpmc_attach(fd, id, PMC_PID_SELF) || hwpmc_start(fd, id))
		line = __LINE__;
	else if (hwpmc_attach(fd, id, t) != EBUSY)
		line = __LINE__;
	else if (hwpmc_stop(fd, id) || hwpmc_attach(fd, id, t))
		line = __LINE__;
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	if (fd >= 0)
		close(fd);
	return line;
}

TEST_F(model, attach_running_is_ebusy)
{
	long old = hwpmc_sysctl_get(UNPRIV_HW);
	int status = -1, who;

	for (who = 0; who < 2; who++) {
		pid_t p;

		if (who)
			ASSERT_EQ(0, hwpmc_sysctl_set(UNPRIV_HW, 1));
		p = fork();
		ASSERT_LE(0, p);
		if (!p) {
			if (who && (setresgid(65534, 65534, 65534) ||
				    setresuid(65534, 65534, 65534) ||
				    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)))
				_exit(1);
			_exit(attach_running(variant->cls) & 0xff);
		}
		ASSERT_EQ(p, waitpid(p, &status, 0));
		if (who)
			hwpmc_sysctl_set(UNPRIV_HW, old);
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("%s: failed at line %d (mod 256)",
			       who ? "uid 65534" : "root", WEXITSTATUS(status));
	}
}

TEST_HARNESS_MAIN
