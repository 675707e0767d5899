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
#include <linux/proc_fs.h>
#include <linux/pid_namespace.h>
#include <linux/cred.h>
#include <linux/sched/signal.h>

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
static struct pid_namespace *hwpmc_procfs_ns;	/* the mount's pid namespace */

/*
 * A private mount of @fstype, in no mount namespace, made by the loading
 * (privileged) process; NULL if it cannot be made.  For the few settings
 * the kernel exports no accessor for.
 */
struct vfsmount *hwpmc_private_mount(const char *fstype)
{
	struct file_system_type *fst = get_fs_type(fstype);
	struct vfsmount *mnt;

	if (!fst)
		return NULL;
	mnt = kern_mount(fst);
	module_put(fst->owner);
	if (IS_ERR(mnt)) {
		pr_warn("%s mount failed (%ld)\n", fstype, PTR_ERR(mnt));
		return NULL;
	}
	return mnt;
}

/*
 * The integer in file @name (relative to the root of @mnt, a private
 * mount).  Process context.  Any failure is an error: callers deny.
 */
int hwpmc_private_read_int(struct vfsmount *mnt, const char *name, int *val)
{
	struct path root;
	struct file *f;
	loff_t pos = 0;
	char buf[24];
	ssize_t n;

	if (!mnt)
		return -ENOENT;
	root.mnt = mnt;
	root.dentry = mnt->mnt_root;
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

void hwpmc_priv_init(void)
{
	hwpmc_procfs = hwpmc_private_mount("proc");
	if (!hwpmc_procfs) {
		pr_warn("no private procfs: unprivileged kernel-mode access stays denied\n");
		return;
	}
	hwpmc_procfs_ns = proc_sb_info(hwpmc_procfs->mnt_sb)->pid_ns;
}

/* Is the private procfs there (the LSM check needs it)? */
bool hwpmc_priv_procfs_ready(void)
{
	return !!hwpmc_procfs;
}

void hwpmc_priv_fini(void)
{
	if (hwpmc_procfs)
		kern_unmount(hwpmc_procfs);
	hwpmc_procfs = NULL;
}

/* The integer sysctl at @name (relative to /proc); callers deny on error. */
int hwpmc_read_sysctl_int(const char *name, int *val)
{
	return hwpmc_private_read_int(hwpmc_procfs, name, val);
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

/*
 * The LSM ptrace policy.  perf_event_open() asks ptrace_may_access(task,
 * PTRACE_MODE_READ_REALCREDS), unless the caller has CAP_PERFMON; that
 * function (and security_ptrace_access_check()) is not exported to
 * modules.  procfs asks exactly it when a process follows the magic link
 * /proc/PID/cwd (proc_pid_get_link(): ptrace_may_access(task,
 * PTRACE_MODE_READ_FSCREDS), which runs the credential rule, the
 * dumpability rule and every LSM: Yama, SELinux, AppArmor, Landlock).  So
 * the module uses its private procfs mount (above, in no mount
 * namespace) and, in the caller's context, resolves "TID/cwd" under it:
 * EACCES there is the LSM's (or ptrace's) no.  For REALCREDS, the caller's
 * fsuid/fsgid are overridden with its real ids for the lookup.  The open
 * is O_PATH, so no file permission is involved: the link is mode 0777,
 * the directories 0555, and an O_PATH open reads nothing.
 *
 * Does the LSM ptrace policy let the caller read @task?  0; -EPERM if not;
 * -ESRCH if @task is gone; -EINTR if the caller is being killed.  Sleeps
 * (and may wait for @task's exec_update_lock, so never call it with that
 * held): hold no lock but the owner's.
 */
int hwpmc_priv_lsm_may_read(struct task_struct *task)
{
	const struct cred *saved = NULL;
	struct cred *real = NULL;
	struct file *file;
	char name[32];
	pid_t nr;
	int err;

	nr = task_pid_nr_ns(task, hwpmc_procfs_ns);
	if (!nr)
		return -ESRCH;
	snprintf(name, sizeof(name), "%d/cwd", nr);
	if (!uid_eq(current_fsuid(), current_uid()) ||
	    !gid_eq(current_fsgid(), current_gid())) {
		real = prepare_creds();
		if (!real)
			return -ENOMEM;
		real->fsuid = real->uid;
		real->fsgid = real->gid;
		saved = override_creds(real);
	}
	/* An O_PATH open: a lookup, no file permission, no I/O. */
	file = file_open_root_mnt(hwpmc_procfs, name, O_PATH, 0);
	if (real) {
		revert_creds(saved);
		put_cred(real);
	}
	if (!IS_ERR(file)) {
		fput(file);
		return 0;
	}
	err = PTR_ERR(file);
	if (err == -EACCES || err == -EPERM)
		return -EPERM;
	if (err == -ENOENT)
		return -ESRCH;		/* gone, or exiting (no fs) */
	return err == -EINTR || fatal_signal_pending(current) ? -EINTR : err;
}
