// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the ioctl dispatcher.  One ioctl per PMC_OP_*; each case copies
 * its argument in, calls hwpmc_op_<name>(), and copies the result out.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/string.h>

#include "hwpmc.h"

/* Fail with EINVAL unless every byte of a reserved area is zero. */
#define HWPMC_RESERVED_ZERO(field) \
	(memchr_inv(&(field), 0, sizeof(field)) ? -EINVAL : 0)

static int hwpmc_op_getmoduleversion(struct hwpmc_owner *po,
				     struct pmc_op_getmoduleversion *a)
{
	u32 theirs = a->pm_version;

	if (HWPMC_RESERVED_ZERO(a->pm_reserved))
		return -EINVAL;
	a->pm_version = HWPMC_VERSION;
	if (theirs && HWPMC_VERSION_TO_MAJOR(theirs) != HWPMC_VERSION_MAJOR)
		return -EPROTO;
	return 0;
}

static int hwpmc_op_getcpuinfo(struct hwpmc_owner *po,
			       struct pmc_op_getcpuinfo *a)
{
	unsigned int i;

	memset(a, 0, sizeof(*a));
	a->pm_cputype = hwpmc_cputype();
	a->pm_ncpu = nr_cpu_ids;
	a->pm_npmc = hwpmc_nrows();
	a->pm_nclass = hwpmc_nclasses();
	for (i = 0; i < a->pm_nclass; i++) {
		const struct hwpmc_class *c = hwpmc_class_at(i);
		struct pmc_classinfo *ci = &a->pm_classes[i];

		ci->pm_class = c->ops->class;
		ci->pm_caps = c->ops->caps;
		ci->pm_width = c->ops->width;
		ci->pm_num = c->nrows;
		ci->pm_firstrow = c->firstrow;
	}
	return 0;
}

/* Handlers take the copied-in argument; 'size' is the ioctl's size. */
typedef int (*hwpmc_op_fn)(struct hwpmc_owner *po, void *arg);

struct hwpmc_op_desc {
	unsigned int cmd;
	hwpmc_op_fn fn;			/* NULL: not implemented yet */
	const char *name;
};

#define HWPMC_OP(op, handler) \
	[PMC_OP_##op] = { HWPMC_IOC_##op, (hwpmc_op_fn)(handler), #op }

static const struct hwpmc_op_desc hwpmc_ops[PMC_OP_MAX + 1] = {
	HWPMC_OP(CONFIGURELOG, NULL),
	HWPMC_OP(FLUSHLOG, NULL),
	HWPMC_OP(GETCPUINFO, hwpmc_op_getcpuinfo),
	HWPMC_OP(GETDRIVERSTATS, NULL),
	HWPMC_OP(GETMODULEVERSION, hwpmc_op_getmoduleversion),
	HWPMC_OP(GETPMCINFO, NULL),
	HWPMC_OP(PMCADMIN, NULL),
	HWPMC_OP(PMCALLOCATE, NULL),
	HWPMC_OP(PMCATTACH, NULL),
	HWPMC_OP(PMCDETACH, NULL),
	HWPMC_OP(PMCGETMSR, NULL),
	HWPMC_OP(PMCRELEASE, NULL),
	HWPMC_OP(PMCRW, NULL),
	HWPMC_OP(PMCSETCOUNT, NULL),
	HWPMC_OP(PMCSTART, NULL),
	HWPMC_OP(PMCSTOP, NULL),
	HWPMC_OP(WRITELOG, NULL),
	HWPMC_OP(CLOSELOG, NULL),
	HWPMC_OP(GETDYNEVENTINFO, NULL),
	HWPMC_OP(GETCAPS, NULL),
};

/* The largest argument structure of any op. */
union hwpmc_op_args {
	struct pmc_op_getmoduleversion version;
	struct pmc_op_getcpuinfo cpuinfo;
	struct pmc_op_getpmcinfo pmcinfo;
	struct pmc_op_pmcadmin admin;
	struct pmc_op_pmcallocate allocate;
	struct pmc_op_pmcattach attach;
	struct pmc_op_simple simple;
	struct pmc_op_pmcrw rw;
	struct pmc_op_pmcsetcount setcount;
	struct pmc_op_getmsr getmsr;
	struct pmc_op_caps caps;
	struct pmc_op_configurelog configurelog;
	struct pmc_op_writelog writelog;
	struct pmc_op_getdriverstats stats;
	struct pmc_op_getdyneventinfo dynevents;
};

long hwpmc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct hwpmc_owner *po = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct hwpmc_op_desc *op;
	unsigned int nr = _IOC_NR(cmd), size = _IOC_SIZE(cmd);
	union hwpmc_op_args a;
	int err;

	if (_IOC_TYPE(cmd) != HWPMC_IOC_MAGIC || nr > PMC_OP_MAX ||
	    hwpmc_ops[nr].cmd != cmd)
		return -ENOTTY;
	op = &hwpmc_ops[nr];
	atomic64_inc(&hwpmc_stats.syscalls);
	if (!op->fn) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (WARN_ON_ONCE(size > sizeof(a))) {
		err = -EINVAL;
		goto out;
	}
	memset(&a, 0, sizeof(a));
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(&a, uarg, size)) {
		err = -EFAULT;
		goto out;
	}
	err = op->fn(po, &a);
	/* Copy out on success, and on errors that carry a result. */
	if ((_IOC_DIR(cmd) & _IOC_READ) &&
	    (!err || err == -EPROTO || err == -E2BIG) &&
	    copy_to_user(uarg, &a, size))
		err = -EFAULT;
out:
	if (err)
		atomic64_inc(&hwpmc_stats.syscall_errors);
	return err;
}
