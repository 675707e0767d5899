// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: OpenBSD's pctr(4), /dev/pctr.
 *
 * PCIOCSn programs counter n, which is row n of the machine's programmable
 * class (IAP or K8; at most PCTR_NUM): a function with PCTR_EN and PCTR_U
 * or PCTR_K allocates a system-scope counting PMC of the kernel owner on
 * that row on every online CPU and starts it; any other function lets the
 * row go (the counter cleared on every CPU).  As on OpenBSD the functions
 * outlive the descriptor that set them: pctr(1) sets a counter and exits,
 * and a later pctr reads it.  The counters hold their counts (no PMI), so
 * that user-mode RDPMC reads what PCIOCRD returns for its CPU.
 *
 * Privilege is that of system-scope hwpmc PMCs, checked by the core with
 * the caller's credentials: setting a function needs a writable descriptor
 * (EPERM, the page's error) and what a system-scope hardware counting PMC
 * needs (CAP_PERFMON, or kernel.hwpmc.unprivileged_syspmcs and
 * unprivileged_hw: EPERM; PCTR_K without the right to see kernel mode:
 * EACCES).  PCIOCRD returns the TSC to anyone, and the counters only to
 * callers who may count system-wide (zeros to others).  An open by such a
 * caller grants its process (its mm, not a child's, not after exec) user
 * RDPMC until that descriptor's last close, unless perf's
 * /sys/devices/cpu/rdpmc is 0; a counter is cleared on every CPU whenever
 * it is let go, so RDPMC never reads a count another context left.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/msr.h>
#include <linux/pctr.h>

#include "iface.h"

static struct hwpmc_owner *pctr_po;
static const struct hwpmc_class *pctr_cls;
static unsigned int pctr_n;			/* counters of this machine */
/* The functions and counters: pctr_po->lock. */
static u32 pctr_fn[PCTR_NUM];
static struct hwpmc_kctr pctr_ctr[PCTR_NUM];

/* May the caller see system-wide counts (system-scope counting PMCs)? */
static bool pctr_may_read(void)
{
	return hwpmc_priv_system() || READ_ONCE(hwpmc_unprivileged_syspmcs);
}

/* ... and have user RDPMC of them (a hardware PMC of its own too)? */
static bool pctr_may_rdpmc(void)
{
	return hwpmc_priv_system() ||
	       (READ_ONCE(hwpmc_unprivileged_syspmcs) &&
		READ_ONCE(hwpmc_unprivileged_hw));
}

static int pctr_open(struct inode *inode, struct file *file)
{
	struct mm_struct *mm = current->mm;

	file->private_data = NULL;
	if (!pctr_n || !mm || !pctr_may_rdpmc())
		return 0;
	mmgrab(mm);
	if (hwpmc_classes_rdpmc_mm_get(mm)) {
		mmdrop(mm);	/* perf's rdpmc setting is 0: no RDPMC */
		return 0;
	}
	file->private_data = mm;
	return 0;
}

static int pctr_release(struct inode *inode, struct file *file)
{
	struct mm_struct *mm = file->private_data;

	if (mm) {
		hwpmc_classes_rdpmc_mm_put(mm);
		mmdrop(mm);
	}
	return 0;
}

static int pctr_read(struct pctrst *st)
{
	bool may = pctr_may_read();
	unsigned int i;
	int cpu, err;

	memset(st, 0, sizeof(*st));
	if (pctr_n) {
		err = mutex_lock_killable(&pctr_po->lock);
		if (err)
			return err;
		cpu = raw_smp_processor_id();
		for (i = 0; i < pctr_n; i++) {
			st->pctr_fn[i] = pctr_fn[i];
			if (may && pctr_ctr[i].allocated)
				st->pctr_hwc[i] = hwpmc_kctr_read(pctr_po,
								  &pctr_ctr[i],
								  cpu);
		}
		mutex_unlock(&pctr_po->lock);
	}
	st->pctr_tsc = rdtsc_ordered();
	return 0;
}

/* Does function @fn count anything (enabled, in some mode)? */
static bool pctr_fn_counts(u32 fn)
{
	return (fn & PCTR_EN) && (fn & (PCTR_U | PCTR_K));
}

static int pctr_set(struct file *file, unsigned int n, u32 fn)
{
	struct hwpmc_kctr *kc = &pctr_ctr[n];
	int err;

	/* The page's order: no counters, bad counter, read-only, bad bits. */
	if (!pctr_n)
		return -ENODEV;
	if (n >= pctr_n)
		return -EINVAL;
	if (!(file->f_mode & FMODE_WRITE))
		return -EPERM;
	if (fn & PCTR_FN_INVALID)
		return -EINVAL;
	err = mutex_lock_killable(&pctr_po->lock);
	if (err)
		return err;
	if (kc->allocated)
		hwpmc_kctr_release(pctr_po, kc);
	pctr_fn[n] = 0;
	if (pctr_fn_counts(fn)) {
		err = hwpmc_kctr_alloc(pctr_po, kc, pctr_cls, n, fn & 0xff,
				       fn & PMC_X86_CONFIG_MASK, true, 0);
		if (!err)
			err = hwpmc_kctr_start(pctr_po, kc);
		if (err)
			hwpmc_kctr_release(pctr_po, kc);
	}
	if (!err)
		pctr_fn[n] = fn;
	mutex_unlock(&pctr_po->lock);
	return err;
}

static long pctr_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct pctrst st;
	unsigned int fn;
	int err;

	switch (cmd) {
	case PCIOCRD:
		err = pctr_read(&st);
		if (!err && copy_to_user(uarg, &st, sizeof(st)))
			err = -EFAULT;
		return err;
	case PCIOCS0:
	case PCIOCS1:
	case PCIOCS2:
	case PCIOCS3:
		if (get_user(fn, (unsigned int __user *)uarg))
			return -EFAULT;
		return pctr_set(file, _IOC_NR(cmd) - _IOC_NR(PCIOCS0), fn);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pctr_fops = {
	.owner		= THIS_MODULE,
	.open		= pctr_open,
	.release	= pctr_release,
	.unlocked_ioctl	= pctr_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice pctr_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= PCTR_DEVICE_NAME,
	.fops	= &pctr_fops,
	.mode	= 0666,
};

static int pctr_init(void)
{
	unsigned int i;
	int err;

	pctr_cls = hwpmc_kctr_class();
	pctr_n = pctr_cls ? min_t(unsigned int, pctr_cls->nrows, PCTR_NUM) : 0;
	pctr_po = hwpmc_kowner_new();
	if (!pctr_po)
		return -ENOMEM;
	for (i = 0; i < PCTR_NUM; i++) {
		err = hwpmc_kctr_init(&pctr_ctr[i]);
		if (err)
			goto out;
	}
	err = misc_register(&pctr_miscdev);
	if (!err)
		return 0;
out:
	while (i--)
		hwpmc_kctr_fini(&pctr_ctr[i]);
	hwpmc_kowner_free(pctr_po);
	pctr_po = NULL;
	return err;
}

static void pctr_exit(void)
{
	unsigned int i;

	misc_deregister(&pctr_miscdev);
	/* No descriptor is left (each holds the module): release the rows. */
	hwpmc_kowner_free(pctr_po);
	pctr_po = NULL;
	for (i = 0; i < PCTR_NUM; i++) {
		hwpmc_kctr_fini(&pctr_ctr[i]);
		pctr_fn[i] = 0;
	}
}

const struct hwpmc_iface hwpmc_pctr_iface = {
	.name	= "pctr",
	.init	= pctr_init,
	.exit	= pctr_exit,
};
