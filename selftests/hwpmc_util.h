/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the hwpmc kselftests.  The tests are C because the
 * kernel's kselftest_harness.h is C-only.
 */
#ifndef HWPMC_SELFTEST_UTIL_H
#define HWPMC_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/hwpmc.h>

#define HWPMC_DEV "/dev/hwpmc"

/* Open /dev/hwpmc; -1 with errno on failure. */
static inline int hwpmc_open(void)
{
	return open(HWPMC_DEV, O_RDWR | O_CLOEXEC);
}

/* ioctl returning 0 or the errno it failed with. */
static inline int hwpmc_ioctl_err(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

#endif
