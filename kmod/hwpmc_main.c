// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: module entry, /dev/hwpmc, tunables.
 *
 * Lock order (outermost first):
 *   hwpmc_sx (mutex: configuration; every ioctl that changes state)
 *
 * No lock is ever taken from NMI context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/sched.h>

#include "hwpmc.h"

/*
 * Tunables.  Defaults follow what FreeBSD ships today rather than the
 * 2008 manual page: the old values (8 frames, 4 KB buffers, 16 samples)
 * drop samples on modern machines.
 */
int hwpmc_callchaindepth = 128;
int hwpmc_hashsize = 1024;
int hwpmc_logbuffersize = 256;	/* KB */
int hwpmc_mtxpoolsize = 2048;
int hwpmc_nbuffers = 32;	/* per CPU */
int hwpmc_nsamples = 256;	/* per CPU */
static char *hwpmc_debugflags = "";

#define HWPMC_CALLCHAIN_DEPTH_MAX	512
#define HWPMC_NSAMPLES_MAX		65535
#define HWPMC_LOGBUFFERSIZE_MAX		(16 * 1024)	/* KB */
#define HWPMC_NBUFFERS_MAX		4096

module_param_named(callchaindepth, hwpmc_callchaindepth, int, 0444);
MODULE_PARM_DESC(callchaindepth, "Maximum callchain frames per sample (1-512, default 128)");
module_param_named(hashsize, hwpmc_hashsize, int, 0444);
MODULE_PARM_DESC(hashsize, "Rows of the owner/target hash tables (default 1024)");
module_param_named(logbuffersize, hwpmc_logbuffersize, int, 0444);
MODULE_PARM_DESC(logbuffersize, "Size of each log buffer in KB (default 256)");
module_param_named(mtxpoolsize, hwpmc_mtxpoolsize, int, 0444);
MODULE_PARM_DESC(mtxpoolsize, "Size of the lock pool (default 2048)");
module_param_named(nbuffers, hwpmc_nbuffers, int, 0444);
MODULE_PARM_DESC(nbuffers, "Log buffers per CPU (default 32)");
module_param_named(nsamples, hwpmc_nsamples, int, 0444);
MODULE_PARM_DESC(nsamples, "Entries of each per-CPU sample ring (1-65535, default 256)");
module_param_named(debugflags, hwpmc_debugflags, charp, 0444);
MODULE_PARM_DESC(debugflags, "Debug flags (accepted for FreeBSD compatibility)");

struct hwpmc_stats hwpmc_stats;

/* Validate tunables with the hwpmc(4) DIAGNOSTICS messages. */
static int hwpmc_check_tunables(void)
{
	if (hwpmc_hashsize <= 0) {
		pr_err("tunable hashsize=%d must be greater than zero.\n",
		       hwpmc_hashsize);
		return -EINVAL;
	}
	if (hwpmc_logbuffersize <= 0 ||
	    hwpmc_logbuffersize > HWPMC_LOGBUFFERSIZE_MAX) {
		pr_err("tunable logbuffersize=%d must be greater than zero.\n",
		       hwpmc_logbuffersize);
		return -EINVAL;
	}
	if (hwpmc_nbuffers <= 0 || hwpmc_nbuffers > HWPMC_NBUFFERS_MAX) {
		pr_err("tunable nlogbuffers=%d must be greater than zero.\n",
		       hwpmc_nbuffers);
		return -EINVAL;
	}
	if (hwpmc_nsamples <= 0 || hwpmc_nsamples > HWPMC_NSAMPLES_MAX) {
		pr_err("tunable nsamples=%d out of range.\n", hwpmc_nsamples);
		return -EINVAL;
	}
	if (hwpmc_callchaindepth <= 0 ||
	    hwpmc_callchaindepth > HWPMC_CALLCHAIN_DEPTH_MAX) {
		pr_err("tunable callchaindepth=%d out of range.\n",
		       hwpmc_callchaindepth);
		return -EINVAL;
	}
	if (hwpmc_mtxpoolsize <= 0) {
		pr_err("tunable mtxpoolsize=%d must be greater than zero.\n",
		       hwpmc_mtxpoolsize);
		return -EINVAL;
	}
	return 0;
}

static int hwpmc_open(struct inode *inode, struct file *file)
{
	struct hwpmc_owner *po;

	po = kzalloc(sizeof(*po), GFP_KERNEL);
	if (!po)
		return -ENOMEM;
	po->tgid = task_tgid_nr(current);
	file->private_data = po;
	return 0;
}

static int hwpmc_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static const struct file_operations hwpmc_fops = {
	.owner		= THIS_MODULE,
	.open		= hwpmc_open,
	.release	= hwpmc_release,
	.unlocked_ioctl	= hwpmc_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice hwpmc_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= HWPMC_DEVICE_NAME,
	.fops	= &hwpmc_fops,
	.mode	= 0666,
};

static int __init hwpmc_init(void)
{
	int err;

	err = hwpmc_check_tunables();
	if (err)
		return err;
	err = hwpmc_testing_init();
	if (err)
		return err;
	err = hwpmc_classes_init();
	if (err)
		return err;
	err = misc_register(&hwpmc_miscdev);
	if (err) {
		hwpmc_classes_fini();
		return err;
	}
	hwpmc_classes_announce();
	pr_info("version %u.%u.%u loaded\n", HWPMC_VERSION_MAJOR,
		HWPMC_VERSION_MINOR, HWPMC_VERSION_PATCH);
	return 0;
}

/*
 * The module cannot be unloaded while /dev/hwpmc is open (the file holds a
 * module reference), so there are no owners left to signal here.
 */
static void __exit hwpmc_exit(void)
{
	misc_deregister(&hwpmc_miscdev);
	hwpmc_classes_fini();
}

module_init(hwpmc_init);
module_exit(hwpmc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("FreeBSD hwpmc(4) hardware performance-monitoring counters");
MODULE_VERSION(__stringify(HWPMC_VERSION_MAJOR) "." __stringify(HWPMC_VERSION_MINOR));
