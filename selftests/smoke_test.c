// SPDX-License-Identifier: GPL-2.0
/* Quick end-to-end: a SOFT process PMC on self counts context switches. */
#include "kselftest_harness.h"
#include "hwpmc_util.h"

TEST(sched_switch_self)
{
	int fd = hwpmc_open();
	__u32 id;
	__u64 v = 0;
	long long before, after;
	int i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(fd, id, 0));
	before = hwpmc_proc_ctxt_switches("/proc/self/status");
	ASSERT_EQ(0, hwpmc_start(fd, id));
	for (i = 0; i < 20; i++)
		usleep(1000);
	ASSERT_EQ(0, hwpmc_stop(fd, id));
	after = hwpmc_proc_ctxt_switches("/proc/self/status");
	ASSERT_EQ(0, hwpmc_read(fd, id, &v));
	TH_LOG("pmc %llu, /proc delta %lld", (unsigned long long)v, after - before);
	/* About one switch per sleep; exactness is proc_test's job. */
	EXPECT_GE(v, 15);
	EXPECT_LE(v, after - before);
	ASSERT_EQ(0, hwpmc_release(fd, id));
	close(fd);
}

TEST_HARNESS_MAIN
