// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel memory of owners, PMCs and their targets is charged to the
 * memory cgroup of the process that creates them (GFP_KERNEL_ACCOUNT), so
 * that a container's limit bounds what its users make hwpmc allocate.  A
 * process of uid 65534 in a cgroup of its own opens 200 owners with 16
 * PMCs each: the cgroup's slab grows by at least half of what those PMC
 * objects take.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#define CGROOT	"/sys/fs/cgroup"
#define CG	CGROOT "/hwpmc-memcg-test"
#define NOWNERS	200
#define NPMCS	16
/* Least a PMC costs: its object (kmalloc-192 or more) and idr slot. */
#define PMC_BYTES	192

static long slab_of(const char *cg)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	return (long)hwpmc_file_key(path, "slab_unreclaimable");
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* In the cgroup, as 65534: the owners and PMCs; then wait to be killed. */
static int alloc_main(struct hwpmc_child *me, void *arg)
{
	int i, j, fd;
	__u32 id;
	__u64 v;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534) || prctl(PR_SET_DUMPABLE, 1))
		return 1;
	if (hwpmc_send_u64(me, 0) || hwpmc_recv_u64(me, &v))
		return 2;
	for (i = 0; i < NOWNERS; i++) {
		fd = hwpmc_open();
		if (fd < 0)
			return 3;
		for (j = 0; j < NPMCS; j++)
			if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id))
				return 4;
	}
	if (hwpmc_send_u64(me, 1))
		return 5;
	hwpmc_recv_u64(me, &v);
	return 0;
}

TEST(objects_are_charged_to_the_callers_memcg)
{
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	long before, after;
	char pid[32];
	__u64 v;

	if (geteuid())
		SKIP(return, "needs root (to make a cgroup)");
	if (access(CGROOT "/cgroup.controllers", R_OK))
		mount("none", CGROOT, "cgroup2", 0, NULL);
	if (access(CGROOT "/cgroup.controllers", R_OK))
		SKIP(return, "no cgroup2 file system");
	write_str(CGROOT "/cgroup.subtree_control", "+memory");
	rmdir(CG);
	ASSERT_EQ(0, mkdir(CG, 0755));
	if (access(CG "/memory.stat", R_OK)) {
		rmdir(CG);
		SKIP(return, "no memory controller");
	}
	ASSERT_EQ(0, hwpmc_child_start(&c, alloc_main, NULL));
	snprintf(pid, sizeof(pid), "%d\n", c.pid);
	ASSERT_EQ(0, write_str(CG "/cgroup.procs", pid));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	before = slab_of(CG);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	after = slab_of(CG);
	TH_LOG("slab_unreclaimable of the cgroup: %ld -> %ld (+%ld bytes for %d PMCs)",
	       before, after, after - before, NOWNERS * NPMCS);
	EXPECT_LE((long)NOWNERS * NPMCS * PMC_BYTES / 2, after - before);
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	/* Empty once the child is gone (its memory is reparented). */
	usleep(100000);
	EXPECT_EQ(0, rmdir(CG));
}

TEST_HARNESS_MAIN
