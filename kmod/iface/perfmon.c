// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: FreeBSD's perfmon(4), /dev/perfmon.
 *
 * Counter n is row n of the machine's programmable class (IAP or K8; at
 * most NPMC): PMIOSETUP allocates a system-scope counting PMC of the
 * kernel owner on that row on every online CPU, stopped and zero; the
 * other ioctls start, stop, reset and read them; PMIOREAD returns the sum
 * over the CPUs (the machine's count, 64 bits, not cut to the 40 bits of
 * the Pentium Pro).  As on FreeBSD there is one writer: a second open for
 * writing is EBUSY, and the writer's last close lets its counters go.
 *
 * Errors are FreeBSD's: PMIOSETUP, PMIOSTART, PMIOSTOP and PMIORESET need
 * a writable descriptor (EPERM); a counter number out of range is EINVAL;
 * a counter not set up is EBUSY; an unknown ioctl is ENOTTY.  Where FreeBSD
 * refuses the open of a CPU without counters (ENXIO), here the open
 * succeeds, so that PMIOTSTAMP works on any machine, and every counter
 * operation fails with ENXIO.
 *
 * Privilege is that of system-scope hwpmc PMCs, decided by the core with
 * the caller's credentials: PMIOSETUP of a hardware counter needs
 * CAP_PERFMON, or kernel.hwpmc.unprivileged_syspmcs and unprivileged_hw
 * (EPERM), and kernel mode the right to see it (EACCES); PMIOGET and
 * PMIOREAD need CAP_PERFMON or unprivileged_syspmcs (EPERM); PMIOTSTAMP
 * is anyone's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <asm/msr.h>
#include <asm/tsc.h>
#include <linux/perfmon.h>

#include "iface.h"

static struct hwpmc_owner *pm_po;
static const struct hwpmc_class *pm_cls;
static unsigned int pm_n;			/* counters of this machine */
/* The writer and the counters: pm_po->lock. */
static struct file *pm_writer;
static u32 pm_ctl[NPMC];			/* as set up, without SYS_FLAGS */
static struct hwpmc_kctr pm_ctr[NPMC];

static bool perfmon_may_read(void)
{
	return hwpmc_priv_system() || READ_ONCE(hwpmc_unprivileged_syspmcs);
}

static int perfmon_open(struct inode *inode, struct file *file)
{
	int err = 0;

	if (!(file->f_mode & FMODE_WRITE))
		return 0;
	mutex_lock(&pm_po->lock);
	if (pm_writer)
		err = -EBUSY;		/* one writer, as on FreeBSD */
	else
		pm_writer = file;
	mutex_unlock(&pm_po->lock);
	return err;
}

static int perfmon_release(struct inode *inode, struct file *file)
{
	unsigned int i;

	if (!(file->f_mode & FMODE_WRITE))
		return 0;
	mutex_lock(&pm_po->lock);
	for (i = 0; i < pm_n; i++) {
		if (pm_ctr[i].allocated)
			hwpmc_kctr_release(pm_po, &pm_ctr[i]);
		pm_ctl[i] = 0;
	}
	pm_writer = NULL;
	mutex_unlock(&pm_po->lock);
	return 0;
}

static int perfmon_setup(unsigned int n, u32 val)
{
	struct hwpmc_kctr *kc = &pm_ctr[n];
	u32 ctl = val & ~(PMCF_SYS_FLAGS << 16);
	int err;

	lockdep_assert_held(&pm_po->lock);
	if (kc->allocated)
		hwpmc_kctr_release(pm_po, kc);
	pm_ctl[n] = 0;
	err = hwpmc_kctr_alloc(pm_po, kc, pm_cls, n, ctl & 0xff,
			       ctl & ~0xffU, false, 0);
	if (!err)
		pm_ctl[n] = ctl;
	return err;
}

/* PMIORESET: zero, also while running (FreeBSD's wrmsr does). */
static void perfmon_reset(struct hwpmc_kctr *kc)
{
	bool running = kc->running;

	if (running)
		hwpmc_kctr_stop(pm_po, kc);
	hwpmc_kctr_write(pm_po, kc, 0);
	if (running)
		hwpmc_kctr_start(pm_po, kc);
}

static int perfmon_counter_op(struct file *file, unsigned int cmd,
			      void __user *uarg)
{
	bool write_op = cmd != PMIOGET && cmd != PMIOREAD;
	struct pmc_data data;
	struct pmc pmc;
	struct hwpmc_kctr *kc;
	s32 n;
	int err;

	if (!pm_n)
		return -ENXIO;
	if (write_op && !(file->f_mode & FMODE_WRITE))
		return -EPERM;
	if (!write_op && !perfmon_may_read())
		return -EPERM;
	if (cmd == PMIOSETUP || cmd == PMIOGET) {
		if (copy_from_user(&pmc, uarg, sizeof(pmc)))
			return -EFAULT;
		n = pmc.pmc_num;
	} else if (cmd == PMIOREAD) {
		if (copy_from_user(&data, uarg, sizeof(data)))
			return -EFAULT;
		n = data.pmcd_num;
	} else if (get_user(n, (int __user *)uarg)) {
		return -EFAULT;
	}
	if (n < 0 || n >= pm_n)
		return -EINVAL;
	kc = &pm_ctr[n];
	err = mutex_lock_killable(&pm_po->lock);
	if (err)
		return err;
	if (cmd == PMIOSETUP) {
		err = perfmon_setup(n, pmc.pmc_pmcu.pmcu_val);
		goto out;
	}
	if (!kc->allocated) {
		err = -EBUSY;	/* not set up: FreeBSD's "reversed sense" */
		goto out;
	}
	switch (cmd) {
	case PMIOGET:
		pmc.pmc_pmcu.pmcu_val = pm_ctl[n];
		break;
	case PMIOSTART:
		if (!kc->running)
			err = hwpmc_kctr_start(pm_po, kc);
		break;
	case PMIOSTOP:
		if (kc->running)
			hwpmc_kctr_stop(pm_po, kc);
		break;
	case PMIORESET:
		perfmon_reset(kc);
		break;
	case PMIOREAD:
		data.pmcd_value = hwpmc_kctr_read(pm_po, kc, -1);
		break;
	}
out:
	mutex_unlock(&pm_po->lock);
	if (err)
		return err;
	if (cmd == PMIOGET && copy_to_user(uarg, &pmc, sizeof(pmc)))
		return -EFAULT;
	if (cmd == PMIOREAD && copy_to_user(uarg, &data, sizeof(data)))
		return -EFAULT;
	return 0;
}

static long perfmon_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct pmc_tstamp ts = { };

	switch (cmd) {
	case PMIOTSTAMP:
		if (!tsc_khz)
			return -ENOTTY;		/* FreeBSD: no TSC rate */
		ts.pmct_rate = tsc_khz / 1000;
		ts.pmct_value = rdtsc_ordered();
		return copy_to_user(uarg, &ts, sizeof(ts)) ? -EFAULT : 0;
	case PMIOSETUP:
	case PMIOGET:
	case PMIOSTART:
	case PMIOSTOP:
	case PMIORESET:
	case PMIOREAD:
		return perfmon_counter_op(file, cmd, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations perfmon_fops = {
	.owner		= THIS_MODULE,
	.open		= perfmon_open,
	.release	= perfmon_release,
	.unlocked_ioctl	= perfmon_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice perfmon_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= PERFMON_DEVICE_NAME,
	.fops	= &perfmon_fops,
	.mode	= 0666,
};

static int perfmon_init(void)
{
	unsigned int i;
	int err;

	pm_cls = hwpmc_kctr_class();
	pm_n = pm_cls ? min_t(unsigned int, pm_cls->nrows, NPMC) : 0;
	pm_po = hwpmc_kowner_new();
	if (!pm_po)
		return -ENOMEM;
	for (i = 0; i < NPMC; i++) {
		err = hwpmc_kctr_init(&pm_ctr[i]);
		if (err)
			goto out;
	}
	err = misc_register(&perfmon_miscdev);
	if (!err)
		return 0;
out:
	while (i--)
		hwpmc_kctr_fini(&pm_ctr[i]);
	hwpmc_kowner_free(pm_po);
	pm_po = NULL;
	return err;
}

static void perfmon_exit(void)
{
	unsigned int i;

	misc_deregister(&perfmon_miscdev);
	hwpmc_kowner_free(pm_po);
	pm_po = NULL;
	for (i = 0; i < NPMC; i++)
		hwpmc_kctr_fini(&pm_ctr[i]);
}

const struct hwpmc_iface hwpmc_perfmon_iface = {
	.name	= "perfmon",
	.init	= perfmon_init,
	.exit	= perfmon_exit,
};
