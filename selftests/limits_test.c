// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits: kernel.hwpmc.max_owners_per_user bounds the opens of
 * /dev/hwpmc of one real uid (EMFILE beyond it), max_pmcs_per_user its
 * PMCs (ENOSPC), counted across all its owners and processes; CAP_PERFMON
 * is not limited.  Probes run as uid 65534 (and as root, exempt).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/stat.h>

#define OWNERS	"/proc/sys/kernel/hwpmc/max_owners_per_user"
#define PMCS	"/proc/sys/kernel/hwpmc/max_pmcs_per_user"

FIXTURE(lim) {
	long owners, pmcs;
};

FIXTURE_SETUP(lim)
{
	if (geteuid() != 0)
		SKIP(return, "needs root (to set the sysctls)");
	self->owners = hwpmc_sysctl_get(OWNERS);
	self->pmcs = hwpmc_sysctl_get(PMCS);
	ASSERT_LT(0, self->owners) TH_LOG("%s missing", OWNERS);
	ASSERT_LT(0, self->pmcs) TH_LOG("%s missing", PMCS);
}

FIXTURE_TEARDOWN(lim)
{
	if (geteuid() != 0)
		return;
	EXPECT_EQ(0, hwpmc_sysctl_set(OWNERS, self->owners));
	EXPECT_EQ(0, hwpmc_sysctl_set(PMCS, self->pmcs));
}

TEST_F(lim, defaults_and_range)
{
	struct stat st;

	EXPECT_EQ(256, self->owners);
	EXPECT_EQ(4096, self->pmcs);
	ASSERT_EQ(0, stat(OWNERS, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(OWNERS, 0));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(PMCS, 0));
	EXPECT_EQ(EINVAL, hwpmc_sysctl_set(PMCS, (1 << 20) + 1));
	EXPECT_EQ(self->owners, hwpmc_sysctl_get(OWNERS));
	EXPECT_EQ(self->pmcs, hwpmc_sysctl_get(PMCS));
}

/*
 * As nobody, with max_owners_per_user 3: three opens (in two processes)
 * work, the fourth gets EMFILE; after a close one more works.  Exit code:
 * the failing step.
 */
static int owners_probe(struct hwpmc_child *me, void *arg)
{
	int fd[4], err, i;
	__u64 v;
	pid_t kid;

	if (hwpmc_become_nobody())
		return 100;
	fd[0] = hwpmc_open();
	/* Another process of the same user holds one. */
	kid = fork();
	if (!kid) {
		int k = hwpmc_open();

		if (k < 0 || hwpmc_send_u64(me, 0))
			_exit(1);
		pause();
		_exit(0);
	}
	if (hwpmc_recv_u64(me, &v))	/* the parent relays the kid's word */
		return 101;
	fd[1] = hwpmc_open();
	if (fd[0] < 0 || fd[1] < 0)
		return 1;
	fd[2] = hwpmc_open();
	err = fd[2] < 0 ? errno : 0;
	if (err != EMFILE)
		return 2;
	close(fd[1]);
	fd[3] = hwpmc_open();
	if (fd[3] < 0)
		return 3;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	/* The kid's open is released with it. */
	fd[1] = hwpmc_open();
	if (fd[1] < 0)
		return 4;
	for (i = 0; i < 2; i++)
		close(fd[i]);
	close(fd[3]);
	return 0;
}

TEST_F(lim, owners_per_user)
{
	struct hwpmc_child c;
	__u64 v = 0;
	int fd[5], i, n = 0;

	ASSERT_EQ(0, hwpmc_sysctl_set(OWNERS, 3));
	ASSERT_EQ(0, hwpmc_child_start(&c, owners_probe, NULL));
	/* The kid's and the probe's pipes are the same: relay. */
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	ASSERT_EQ(0, hwpmc_send_u64(&c, v));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	/* Root (CAP_PERFMON) is not limited. */
	for (i = 0; i < 5; i++) {
		fd[i] = hwpmc_open();
		n += fd[i] >= 0;
	}
	EXPECT_EQ(5, n);
	for (i = 0; i < 5; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* As nobody, max_pmcs_per_user 5, across two owners: ENOSPC at the 6th. */
static int pmcs_probe(struct hwpmc_child *me, void *arg)
{
	int a, b, i, err;
	__u32 id[6];

	if (hwpmc_become_nobody())
		return 100;
	a = hwpmc_open();
	b = hwpmc_open();
	if (a < 0 || b < 0)
		return 1;
	for (i = 0; i < 5; i++)
		if (hwpmc_soft_tc(i < 3 ? a : b, PMC_SOFT_SCHED_SWITCH, 0,
				  &id[i]))
			return 2;
	err = hwpmc_soft_tc(b, PMC_SOFT_SYSCALL_ENTER, 0, &id[5]);
	if (err != ENOSPC)
		return 3;
	if (hwpmc_release(a, id[0]))
		return 4;
	if (hwpmc_soft_tc(b, PMC_SOFT_SYSCALL_ENTER, 0, &id[5]))
		return 5;
	/* Closing an owner returns all of its PMCs. */
	close(a);
	for (i = 0; i < 2; i++)
		if (hwpmc_soft_tc(b, PMC_SOFT_PAGE_FAULT_ALL, 0, &id[i]))
			return 6;
	close(b);
	return 0;
}

TEST_F(lim, pmcs_per_user)
{
	struct hwpmc_child c;
	__u32 id;
	int fd, i, err = 0;

	ASSERT_EQ(0, hwpmc_sysctl_set(PMCS, 5));
	ASSERT_EQ(0, hwpmc_child_start(&c, pmcs_probe, NULL));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	/* Root is not limited. */
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	for (i = 0; i < 8 && !err; i++)
		err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id);
	EXPECT_EQ(0, err);
	close(fd);
}

TEST_HARNESS_MAIN
