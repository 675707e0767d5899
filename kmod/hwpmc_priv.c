// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: privilege, every decision of who may do what in one place (the
 * callers ask, the policy is here).  FreeBSD's "non-jailed super-user" is
 * a capability in the initial user namespace: capable() checks exactly
 * that, so root in a container (a non-initial user namespace) is treated
 * as jailed.
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
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>

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

/* May the caller attach to any process (CAP_SYS_PTRACE, CAP_PERFMON)? */
static bool hwpmc_priv_attach_any(void)
{
	return capable(CAP_SYS_PTRACE) || hwpmc_priv_system();
}

/*
 * The unprivileged rule for attaching to @task: itself, or, with
 * kernel.hwpmc.unprivileged_proc_debug, what the caller could debug: its
 * real uid and gid equal @task's real, effective and saved ids, and @task
 * is dumpable (kernel threads never are).  RCU held; does not sleep.
 */
static bool hwpmc_priv_may_debug(struct task_struct *task)
{
	const struct cred *me = current_cred(), *tc = __task_cred(task);
	bool ok;

	if (same_thread_group(task, current))
		return true;
	if (!READ_ONCE(hwpmc_unprivileged_proc_debug))
		return false;
	if (!uid_eq(me->uid, tc->euid) || !uid_eq(me->uid, tc->suid) ||
	    !uid_eq(me->uid, tc->uid) || !gid_eq(me->gid, tc->egid) ||
	    !gid_eq(me->gid, tc->sgid) || !gid_eq(me->gid, tc->gid))
		return false;
	task_lock(task);
	ok = task->mm && !(task->flags & PF_KTHREAD) &&
	     get_dumpable(task->mm) == SUID_DUMP_USER;
	task_unlock(task);
	return ok;
}

/*
 * May the caller attach a PMC to @task?  hwpmc(4): a non-jailed super-user
 * may attach to anything; others only to what they could debug, and only
 * to themselves when kernel.hwpmc.unprivileged_proc_debug is 0.  "Could
 * debug" is the ptrace credential rule: the caller's real uid and gid equal
 * the target's real, effective and saved ids, and the target is dumpable.
 * *priv tells whether the caller is privileged (and so keeps the target
 * across a set-id exec).  The LSM's word is asked separately
 * (hwpmc_priv_lsm_may_read()); both must allow.
 */
int hwpmc_priv_may_attach(struct task_struct *task, bool *priv)
{
	bool ok;

	*priv = false;
	if (same_thread_group(task, current))
		return 0;
	if (hwpmc_priv_attach_any()) {
		*priv = true;
		return 0;
	}
	rcu_read_lock();
	ok = hwpmc_priv_may_debug(task);
	rcu_read_unlock();
	return ok ? 0 : -EPERM;
}

/*
 * Must the LSM ptrace policy (hwpmc_priv_lsm_may_read()) be asked before
 * the caller attaches to @task?  Not for CAP_PERFMON (as perf), nor for
 * the caller's own process.
 */
bool hwpmc_priv_attach_asks_lsm(struct task_struct *task)
{
	return !hwpmc_priv_system() && !same_thread_group(task, current);
}

/*
 * May the caller allocate a system-scope PMC of @mode?  Counting: the
 * super-user, or anyone with kernel.hwpmc.unprivileged_syspmcs; sampling:
 * the super-user only.
 */
bool hwpmc_priv_system_pmc(u32 mode)
{
	return hwpmc_priv_system() ||
	       (mode == PMC_MODE_SC && READ_ONCE(hwpmc_unprivileged_syspmcs));
}

/*
 * May the caller allocate a hardware PMC (which reserves every counter
 * of the PMU from perf, KVM and the NMI watchdog while it lives)?
 * CAP_PERFMON, or anyone with kernel.hwpmc.unprivileged_hw.
 */
bool hwpmc_priv_hw(void)
{
	return hwpmc_priv_system() || READ_ONCE(hwpmc_unprivileged_hw);
}

/*
 * The shortest hardware sampling period the caller may ask for: any for
 * CAP_PERFMON, kernel.hwpmc.min_hw_period for others.  Process context.
 */
u64 hwpmc_priv_hw_min_period(void)
{
	return hwpmc_priv_system() ? 1 : READ_ONCE(hwpmc_min_hw_period);
}

/*
 * May the caller count the other hyperthread of the core too (Intel's
 * AnyThread), whoever runs there?  The privilege of system-scope PMCs.
 */
bool hwpmc_priv_anythread(void)
{
	return hwpmc_priv_system();
}

/*
 * May an owner whose opener had credentials @c signal @task with SIGIO?
 * As for fcntl(F_SETOWN)'s SIGIO (sigio_perm()): root, or its real or
 * effective uid equal to the real or saved uid of @task.  RCU held.
 */
bool hwpmc_priv_may_signal(const struct cred *c, struct task_struct *task)
{
	const struct cred *tc = __task_cred(task);

	return uid_eq(c->euid, GLOBAL_ROOT_UID) ||
	       uid_eq(c->euid, tc->suid) || uid_eq(c->euid, tc->uid) ||
	       uid_eq(c->uid, tc->suid) || uid_eq(c->uid, tc->uid);
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
