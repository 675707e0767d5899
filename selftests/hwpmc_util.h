/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the hwpmc kselftests.  The tests are C because the
 * kernel's kselftest_harness.h is C-only.  Every helper returns 0 or the
 * errno the operation failed with, so tests can assert exact errnos.
 */
#ifndef HWPMC_SELFTEST_UTIL_H
#define HWPMC_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static inline int hwpmc_alloc(int fd, __u32 class, __u32 event, __u32 mode,
			      __u32 flags, __u32 cpu, __u64 count, __u32 *id)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = cpu, .pm_class = class, .pm_event = event,
		.pm_mode = mode, .pm_flags = flags, .pm_count = count,
	};
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a);

	if (!err && id)
		*id = a.pm_pmcid;
	return err;
}

/* A process-scope counting SOFT PMC. */
static inline int hwpmc_soft_tc(int fd, __u32 event, __u32 flags, __u32 *id)
{
	return hwpmc_alloc(fd, PMC_CLASS_SOFT, event, PMC_MODE_TC, flags,
			   PMC_CPU_ANY, 0, id);
}

/* A system-scope counting SOFT PMC on @cpu. */
static inline int hwpmc_soft_sc(int fd, __u32 event, __u32 cpu, __u32 *id)
{
	return hwpmc_alloc(fd, PMC_CLASS_SOFT, event, PMC_MODE_SC, 0, cpu, 0,
			   id);
}

static inline int hwpmc_simple(int fd, unsigned long cmd, __u32 id)
{
	struct pmc_op_simple s = { .pm_pmcid = id };

	return hwpmc_ioctl_err(fd, cmd, &s);
}

static inline int hwpmc_start(int fd, __u32 id)
{
	return hwpmc_simple(fd, HWPMC_IOC_PMCSTART, id);
}

static inline int hwpmc_stop(int fd, __u32 id)
{
	return hwpmc_simple(fd, HWPMC_IOC_PMCSTOP, id);
}

static inline int hwpmc_release(int fd, __u32 id)
{
	return hwpmc_simple(fd, HWPMC_IOC_PMCRELEASE, id);
}

static inline int hwpmc_read(int fd, __u32 id, __u64 *value)
{
	struct pmc_op_pmcrw rw = { .pm_pmcid = id,
				   .pm_flags = PMC_F_OLDVALUE };
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw);

	if (!err)
		*value = rw.pm_value;
	return err;
}

static inline int hwpmc_write(int fd, __u32 id, __u64 value)
{
	struct pmc_op_pmcrw rw = { .pm_pmcid = id,
				   .pm_flags = PMC_F_NEWVALUE,
				   .pm_value = value };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw);
}

static inline int hwpmc_attach(int fd, __u32 id, pid_t pid)
{
	struct pmc_op_pmcattach a = { .pm_pmcid = id, .pm_pid = pid };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCATTACH, &a);
}

static inline int hwpmc_detach(int fd, __u32 id, pid_t pid)
{
	struct pmc_op_pmcattach a = { .pm_pmcid = id, .pm_pid = pid };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCDETACH, &a);
}

static inline int hwpmc_setcount(int fd, __u32 id, __u64 count)
{
	struct pmc_op_pmcsetcount s = { .pm_pmcid = id, .pm_count = count };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCSETCOUNT, &s);
}

/* Rows of @cpu into @info (capacity @n); returns errno. */
static inline int hwpmc_pmcinfo(int fd, __u32 cpu, struct pmc_info *info,
				__u32 *n)
{
	struct pmc_op_getpmcinfo g = { .pm_cpu = cpu, .pm_npmc = *n,
				       .pm_info = (__u64)(uintptr_t)info };
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_GETPMCINFO, &g);

	*n = g.pm_npmc;
	return err;
}

static inline int hwpmc_admin(int fd, __u32 cpu, __u32 row, __u32 state)
{
	struct pmc_op_pmcadmin a = { .pm_cpu = cpu, .pm_pmcid = row,
				     .pm_state = state };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCADMIN, &a);
}

/* First row of @class, or -1. */
static inline int hwpmc_class_firstrow(int fd, __u32 class, __u32 *nrows)
{
	struct pmc_op_getcpuinfo ci;
	__u32 i;

	if (hwpmc_ioctl_err(fd, HWPMC_IOC_GETCPUINFO, &ci))
		return -1;
	for (i = 0; i < ci.pm_nclass; i++) {
		if (ci.pm_classes[i].pm_class == class) {
			if (nrows)
				*nrows = ci.pm_classes[i].pm_num;
			return (int)ci.pm_classes[i].pm_firstrow;
		}
	}
	return -1;
}

/* "voluntary_ctxt_switches" + "nonvoluntary_ctxt_switches" of a task. */
static inline long long hwpmc_proc_ctxt_switches(const char *statuspath)
{
	char line[256];
	long long v, sum = 0;
	int found = 0;
	FILE *f = fopen(statuspath, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) {
			sum += v;
			found++;
		}
	}
	fclose(f);
	return found == 2 ? sum : -1;
}

#endif
