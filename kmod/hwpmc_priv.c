// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: privilege.  FreeBSD's "non-jailed super-user" is a capability in
 * the initial user namespace: capable() checks exactly that, so root in a
 * container (a non-initial user namespace) is treated as jailed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/module.h>

#include "hwpmc.h"
#include "compat/compat.h"

/* System-wide PMCs, attaching anywhere: CAP_PERFMON (or CAP_SYS_ADMIN). */
bool hwpmc_priv_system(void)
{
	return perfmon_capable();
}

/* PMCADMIN (FreeBSD's PRIV_PMC_MANAGE). */
bool hwpmc_priv_admin(void)
{
	return capable(CAP_SYS_ADMIN);
}

/*
 * A private procfs mount, made at load by the loading (privileged)
 * process, to read the sysctls the kernel does not export
 * (kernel.kptr_restrict, and kernel.perf_event_paranoid before 6.12).
 * Never the caller's /proc: in a user and mount namespace of its own an
 * unprivileged caller can mount anything over /proc/sys.
 */
static struct vfsmount *hwpmc_procfs;

void hwpmc_priv_init(void)
{
	struct file_system_type *fst = get_fs_type("proc");
	struct vfsmount *mnt;

	if (!fst) {
		pr_warn("no procfs: unprivileged kernel-mode access stays denied\n");
		return;
	}
	mnt = kern_mount(fst);
	module_put(fst->owner);
	if (IS_ERR(mnt)) {
		pr_warn("procfs mount failed (%ld): unprivileged kernel-mode access stays denied\n",
			PTR_ERR(mnt));
		return;
	}
	hwpmc_procfs = mnt;
}

void hwpmc_priv_fini(void)
{
	if (hwpmc_procfs)
		kern_unmount(hwpmc_procfs);
	hwpmc_procfs = NULL;
}

/*
 * Read the integer sysctl at @name (relative to /proc) from the private
 * mount.  Process context.  Any failure is an error: callers deny.
 */
int hwpmc_read_sysctl_int(const char *name, int *val)
{
	struct path root;
	struct file *f;
	loff_t pos = 0;
	char buf[24];
	ssize_t n;

	if (!hwpmc_procfs)
		return -ENOENT;
	root.mnt = hwpmc_procfs;
	root.dentry = hwpmc_procfs->mnt_root;
	f = file_open_root(&root, name, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	fput(f);
	if (n <= 0)
		return n < 0 ? (int)n : -EIO;
	buf[n] = '\0';
	return kstrtoint(strim(buf), 10, val);
}

/*
 * May the current caller see kernel mode (count it, sample it, and see
 * kernel addresses in its log)?  Process context only (it may read
 * sysctls through procfs): evaluated once at PMC allocation and cached in
 * pm->priv_kernel, never evaluated from a hook, timer or NMI.
 *
 * CAP_PERFMON (or CAP_SYS_ADMIN) may.  Anyone else only when root set
 * kernel.hwpmc.unprivileged_kernel to 1 and perf would let them too
 * (perf_event_paranoid <= 1 and the LSM's perf_event hook, where the
 * kernel exports it) and kptr_restrict is 0.  Fails closed: a sysctl that
 * cannot be read denies.
 */
bool hwpmc_priv_kernel(void)
{
	int kptr;

	if (perfmon_capable())
		return true;
	if (!READ_ONCE(hwpmc_unprivileged_kernel))
		return false;
	if (!hwpmc_perf_allow_kernel())
		return false;
	if (hwpmc_read_sysctl_int("sys/kernel/kptr_restrict", &kptr))
		return false;
	return kptr == 0;
}
