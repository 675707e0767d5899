// SPDX-License-Identifier: GPL-2.0
/*
 * The module skeleton: /dev/hwpmc, the version handshake, GETCPUINFO, and
 * the dispatcher's treatment of unknown and malformed requests.
 */
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s (is the module loaded?)",
				       HWPMC_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(device_node_is_misc_char_device)
{
	struct stat st;

	ASSERT_EQ(0, stat(HWPMC_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(10, major(st.st_rdev));	/* MISC_MAJOR */
	EXPECT_EQ(0666, st.st_mode & 0777);
}

TEST_F(dev, version_matches_header)
{
	struct pmc_op_getmoduleversion v = { .pm_version = HWPMC_VERSION };

	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION, &v));
	EXPECT_EQ(HWPMC_VERSION_MAJOR, HWPMC_VERSION_TO_MAJOR(v.pm_version));
	EXPECT_EQ(HWPMC_VERSION_MINOR, HWPMC_VERSION_TO_MINOR(v.pm_version));
}

TEST_F(dev, version_zero_skips_check)
{
	struct pmc_op_getmoduleversion v = { 0 };

	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION, &v));
	EXPECT_EQ(HWPMC_VERSION, v.pm_version);
}

TEST_F(dev, version_major_mismatch_is_eproto)
{
	struct pmc_op_getmoduleversion v = {
		.pm_version = HWPMC_VERSION_MAKE(HWPMC_VERSION_MAJOR + 1, 0, 0),
	};

	EXPECT_EQ(EPROTO,
		  hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION, &v));
	/* The module's version still comes back, for the error message. */
	EXPECT_EQ(HWPMC_VERSION, v.pm_version);
}

TEST_F(dev, version_newer_minor_is_accepted)
{
	struct pmc_op_getmoduleversion v = {
		.pm_version = HWPMC_VERSION_MAKE(HWPMC_VERSION_MAJOR,
						 HWPMC_VERSION_MINOR + 1, 0),
	};

	EXPECT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION, &v));
}

TEST_F(dev, version_reserved_must_be_zero)
{
	struct pmc_op_getmoduleversion v = { .pm_reserved = 1 };

	EXPECT_EQ(EINVAL,
		  hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETMODULEVERSION, &v));
}

TEST_F(dev, cpuinfo_lists_tsc_and_soft)
{
	struct pmc_op_getcpuinfo ci;
	unsigned int i, rows = 0, next_row = 0;
	int have_tsc = 0, have_soft = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	memset(&ci, 0xa5, sizeof(ci));
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCPUINFO, &ci));
	EXPECT_GE(ci.pm_ncpu, (unsigned int)ncpu);
	ASSERT_GE(ci.pm_nclass, 2u);
	ASSERT_LE(ci.pm_nclass, PMC_CLASS_TABLE_SIZE);
	for (i = 0; i < ci.pm_nclass; i++) {
		struct pmc_classinfo *c = &ci.pm_classes[i];

		EXPECT_GT(c->pm_num, 0u);
		EXPECT_EQ(next_row, c->pm_firstrow);
		EXPECT_TRUE(c->pm_caps & PMC_CAP_READ);
		EXPECT_EQ(0u, c->pm_caps & ~PMC_CAP_MASK);
		next_row += c->pm_num;
		rows += c->pm_num;
		if (c->pm_class == PMC_CLASS_TSC) {
			have_tsc = 1;
			EXPECT_EQ(1u, c->pm_num);
			EXPECT_EQ(64u, c->pm_width);
		}
		if (c->pm_class == PMC_CLASS_SOFT) {
			have_soft = 1;
			EXPECT_TRUE(c->pm_caps & PMC_CAP_INTERRUPT);
			EXPECT_TRUE(c->pm_caps & PMC_CAP_WRITE);
		}
	}
	EXPECT_EQ(rows, ci.pm_npmc);
	EXPECT_TRUE(have_tsc);
	EXPECT_TRUE(have_soft);
	/* Unused table entries come back zeroed, not as stale memory. */
	for (; i < PMC_CLASS_TABLE_SIZE; i++)
		EXPECT_EQ(0u, ci.pm_classes[i].pm_num);
	EXPECT_EQ(0u, ci.pm_reserved[0]);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	struct pmc_op_simple s = { 0 };

	/* Past the last op, a foreign magic, and a known op with a wrong size. */
	EXPECT_EQ(ENOTTY, hwpmc_ioctl_err(self->fd,
		  _IOW(HWPMC_IOC_MAGIC, PMC_OP_MAX + 1, struct pmc_op_simple), &s));
	EXPECT_EQ(ENOTTY, hwpmc_ioctl_err(self->fd,
		  _IOW('x', PMC_OP_PMCSTART, struct pmc_op_simple), &s));
	EXPECT_EQ(ENOTTY, hwpmc_ioctl_err(self->fd,
		  _IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCSTART, __u32), &s));
	EXPECT_EQ(ENOTTY, hwpmc_ioctl_err(self->fd, TCGETS, &s));
}

TEST_F(dev, bad_user_pointer_is_efault)
{
	EXPECT_EQ(EFAULT, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCPUINFO,
					  (void *)8));
	EXPECT_EQ(EFAULT, hwpmc_ioctl_err(self->fd,
					  HWPMC_IOC_GETMODULEVERSION, NULL));
}

TEST_HARNESS_MAIN
