// SPDX-License-Identifier: GPL-2.0
/*
 * hwmodel_module_test: the test flavor and its PMU model as a whole:
 * the model's self-test of its register semantics, no reservation
 * conflict with perf, and the release module back after the test flavor
 * (hwmodel.h: the model, the fixture and its layouts).
 */
#define _GNU_SOURCE
#include "hwmodel.h"

/*
 * The model checks its own register semantics against the manuals (its
 * debugfs file "selftest", on this CPU, with no PMC allocated): every
 * check passes, and there are checks.
 */
TEST_F_TIMEOUT(hw, model_selftest, 120)
{
	char buf[8192], *last;
	ssize_t n, len = 0;
	int fd = open(MODEL_DIR "/selftest", O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	ASSERT_LT(0, len);
	buf[len] = 0;
	while (len > 0 && buf[len - 1] == '\n')
		buf[--len] = 0;
	last = strrchr(buf, '\n');
	last = last ? last + 1 : buf;
	TH_LOG("%s", last);
	EXPECT_EQ(0, strncmp(last, "ok ", 3)) TH_LOG("%s", buf);
	EXPECT_EQ(NULL, strstr(buf, "FAIL"));
	EXPECT_LT(50, atoi(last + 3));
}

/*
 * Reservation with perf.  In this guest perf has no PMU, so nobody else
 * holds a counter: no hardware row is unavailable, all of them can be
 * allocated, and they can be again after release (hwpmc returned its
 * reservations; a leak would make the second round fail with EBUSY).
 */
TEST_F_TIMEOUT(hw, reservation_no_conflict_here, 120)
{
	struct pmc_info pi;
	__u32 id[8], i, round, c;
	long wd = hwpmc_sysctl_get("/proc/sys/kernel/nmi_watchdog");

	for (c = 0; c < (__u32)self->ncpu; c++)
		for (i = 0; i < variant->ngp; i++)
			if (!row_info(self->fd, c, self->gp_first + i, &pi))
				EXPECT_EQ(0, pi.pm_unavailable);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < variant->ngp; i++)
			ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class,
						     EV_INSTR, 0, PMC_MODE_SC,
						     0, self->cpu, 0, &id[i]));
		/* No row left on this CPU. */
		EXPECT_EQ(EINVAL, hwpmc_alloc_cfg(self->fd, variant->gp_class,
						  EV_INSTR, 0, PMC_MODE_SC, 0,
						  self->cpu, 0, NULL));
		ASSERT_EQ(0, row_info(self->fd, self->cpu, self->gp_first, &pi));
		EXPECT_EQ(0, pi.pm_unavailable);	/* ours */
		for (i = 0; i < variant->ngp; i++)
			ASSERT_EQ(0, hwpmc_release(self->fd, id[i]));
	}
	TH_LOG("perf holds no counter in this guest (no PMU for perf, nmi_watchdog=%ld); hwreserve_test covers EBUSY",
	       wd);
}

/*
 * The test flavor unloads cleanly (vm-run then checks the kernel log for
 * WARN/BUG) and the release module is loaded again with its defaults.
 */
FIXTURE(restore) {
	int unused;
};

FIXTURE_SETUP(restore)
{
	if (geteuid())
		SKIP(return, "needs root");
}

FIXTURE_TEARDOWN(restore)
{
}

TEST_F_TIMEOUT(restore, release_module_back, 120)
{
	struct pmc_op_getcpuinfo ci;
	char cur[32], why[256] = "";
	int fd;

	/* From the test flavor (loaded here, whatever ran before). */
	ASSERT_EQ(0, model_use("intel", why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, model_restore_release());
	EXPECT_EQ(ENOENT, model_loaded(cur, sizeof(cur)));
	EXPECT_NE(0, access(MODEL_DIR, F_OK));
	EXPECT_EQ(256, hwpmc_sysctl_get("/sys/module/hwpmc/parameters/nsamples"));
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hwpmc_cpuinfo(fd, &ci));
	TH_LOG("release module back: cputype %u, %u classes", ci.pm_cputype,
	       ci.pm_nclass);
	close(fd);
}

TEST_HARNESS_MAIN
