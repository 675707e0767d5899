// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: module entry, /dev/hwpmc, tunables.
 *
 * Lock order (outermost first):
 *   (the interfaces of kmod/iface/ take only their kernel owners' po->lock,
 *   below, as an ioctl of /dev/hwpmc does; pmc(9)'s pmc9_lock, which
 *   guards its list of contexts, is taken before a context's po->lock
 *   only to look it up, and never held across a wait)
 *   po->log_lock     mutex: one owner's log operations (CONFIGURELOG,
 *                    FLUSHLOG, CLOSELOG, WRITELOG), taken killably, which
 *                    may wait for the log writer and so never hold
 *                    hwpmc_sx while waiting; CONFIGURELOG takes po->lock
 *                    (killably) under it to publish the log with the
 *                    records of what exists.  The owner's exit work only
 *                    tries this lock and po->lock (hwpmc_owner_exit_fn())
 *   po->lock         mutex: one owner's PMC operations (hwpmc_ioctl.c),
 *                    taken killably; may be held across waits the caller
 *                    controls, which then block that owner only
 *   exec_update_lock rw_semaphore of the target's signal_struct, read,
 *                    killable: PMCATTACH checks permission and links under
 *                    it (with po->lock, never with hwpmc_sx), so that the
 *                    target cannot exec a set-id program in between; exec
 *                    holds it for writing but never takes hwpmc_sx.  One
 *                    at a time; the LSM check (a procfs lookup) takes it
 *                    itself, so it runs before, not under it.
 *   mmap_lock        of a target, read, killable: MAP_IN records, with
 *                    po->lock (and log_lock) at most, never hwpmc_sx.
 *                    mmap() of /dev/hwpmc (the read page) runs under the
 *                    caller's, for writing, and takes no hwpmc lock
 *   hwpmc_hooks_lock mutex: attaching and detaching the tracepoints
 *                    (hwpmc_hooks.c; the kernel's tracepoint, jump-label
 *                    and text-patching locks, cpus_read_lock, under it):
 *                    waits for the kernel (IPIs, a grace period), so it
 *                    is never taken under hwpmc_sx: who needs a hook
 *                    under it takes it before (hwpmc_alloc_hooks())
 *   hwpmc_sx         mutex: configuration; held (killably) by the ioctls
 *                    that change rows, PMCs' states or the owner's PMC
 *                    list, and never across a wait a user controls (nor
 *                    a grace period: the release of sampling PMCs drops
 *                    it while it waits for one, hwpmc_pmcs_quiesce();
 *                    an allocation takes its hooks before it; PMCSTART
 *                    and PMCSTOP run the class's sync, which waits for
 *                    every CPU, before it).  The start, stop and release
 *                    of a process-scope PMC walk its targets under it,
 *                    in batches that do not reschedule (that would be a
 *                    wait the caller controls, once a batch): work in
 *                    proportion to the targets it had when it began,
 *                    which the owner's process limit bounds
 *   cpus_read_lock   CPU hotplug (CLOCK.HARD timers); SOFT's sync takes it
 *                    under po->lock alone
 *   hwpmc_drain_lock mutex: draining the per-CPU sample rings; also
 *                    held (under hwpmc_sx) to free their user-stack
 *                    areas with the last PMC_F_USERSTACK PMC
 *   hwpmc_proc_lock  raw spinlock: the process hash and target lists,
 *                    and the read-page slots' control words;
 *                    also taken by the fork and exit hooks (tracepoint
 *                    context, so raw for PREEMPT_RT); nothing is allocated
 *                    or freed under it.  No walk of a PMC's targets,
 *                    which its owner may have made as many of as
 *                    processes, holds it for more than a batch of 64
 *                    (hwpmc_proc.c, struct hwpmc_walk).  Each
 *                    process-scope CLOCK.PROF PMC's clock_seq (a
 *                    seqcount, not a lock) is written only under it with
 *                    IRQs off (a batch of a start or stop, a target's
 *                    unlink)
 *   log->lock        raw spinlock, irq-safe: one log's buffers; taken in
 *                    any context but NMI, including under the runqueue
 *                    lock (PROCCSW records from sched_switch)
 *   hwpmc_pool_lock  raw spinlock, irq-safe: the free log buffers and
 *                    each log's count of buffers held
 *   hwpmc_runq_lock  raw spinlock, irq-safe: the logs waiting for a
 *                    writer of the pool, and which writer writes which
 *                    log; never held with another of these locks
 *   hwpmc_owners_lock raw spinlock: the owners by opening process; taken
 *                    in process context only (also by the exit hook,
 *                    preemption off); never held with another lock
 *   hwpmc_maps_reserve_lock, hwpmc_users_lock
 *                    leaf spinlocks (the first raw): the MAP_IN works the
 *                    hooks take, the per-user counts
 *
 * The scheduler hooks and timers only read, under RCU, and take no lock.
 * SOFT's per-CPU CLOCK.PROF state (prof_seq, a seqcount, not a lock) is
 * written only by its own CPU with IRQs off (switch hook, timer, IPI) and
 * read without waiting for that CPU by PMCRW, which holds po->lock only:
 * no read waits for another CPU or takes hwpmc_sx.  A PMC's clock_seq is
 * read by PMCRW and by the switch hook's PROCCSW records (under the
 * runqueue lock); its writers cannot be interrupted, so a reader waits at
 * most for one batch of that PMC's targets.  The driver statistics
 * are per-CPU counters, summed by GETDRIVERSTATS.  No lock is ever taken
 * from NMI context.  A signal is never sent with hwpmc_proc_lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/sched.h>

#include <linux/cpuhotplug.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/hash.h>
#include <linux/cred.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>

#include "hwpmc.h"
#include "compat/compat.h"
#include "iface/iface.h"

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
int hwpmc_max_user_stack = PMC_USTACK_DEFAULT;	/* bytes */
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
module_param_named(max_user_stack, hwpmc_max_user_stack, int, 0444);
MODULE_PARM_DESC(max_user_stack, "Largest PMC_F_USERSTACK copy per sample in bytes (0-65536, multiple of 8, 0 disables, default 8192)");
module_param_named(debugflags, hwpmc_debugflags, charp, 0444);
MODULE_PARM_DESC(debugflags, "Debug flags (accepted for FreeBSD compatibility)");

DEFINE_PER_CPU(struct hwpmc_stats, hwpmc_stats);
DEFINE_MUTEX(hwpmc_sx);	/* configuration lock, see above */

/* security.bsd.* on FreeBSD; kernel.hwpmc.* here.  Defaults as hwpmc(4). */
int hwpmc_unprivileged_syspmcs;
int hwpmc_unprivileged_proc_debug = 1;
static int hwpmc_limit_ceiling = HWPMC_LIMIT_CEILING;

/* Limits of the logs, see hwpmc_log.c and the README's threat model. */
int hwpmc_max_logs_per_user = 16;
int hwpmc_log_writers = 4;
int hwpmc_log_buffer_share = 25;	/* % of the pool, per unprivileged log */
int hwpmc_log_buffer_reserve = 25;	/* % of the pool, privileged logs only */
static int hwpmc_max_logs_limit = 1 << 20;
static int hwpmc_log_writers_max = 64;
static int hwpmc_pct_max = 100;
static int hwpmc_reserve_max = 90;

/* Kernel mode, hardware PMCs and sampling rates; see the threat model. */
int hwpmc_unprivileged_kernel;	/* see hwpmc_priv_kernel() */
int hwpmc_unprivileged_hw;	/* see x86/core.c, hwpmc_x86_allocate() */
int hwpmc_min_hw_period = 10000;	/* see x86/core.c, x86_min_period() */
int hwpmc_max_sample_rate = 100000;	/* see x86/nmi.c, the throttle */
static int hwpmc_period_max = INT_MAX;
static int hwpmc_rate_max = 1000000;

static struct ctl_table hwpmc_sysctls[] = {
	{
		.procname	= "unprivileged_syspmcs",
		.data		= &hwpmc_unprivileged_syspmcs,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "unprivileged_proc_debug",
		.data		= &hwpmc_unprivileged_proc_debug,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "max_logs_per_user",
		.data		= &hwpmc_max_logs_per_user,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &hwpmc_max_logs_limit,
	},
	{
		.procname	= "log_writers",
		.data		= &hwpmc_log_writers,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &hwpmc_log_writers_max,
	},
	{
		.procname	= "log_buffer_share",
		.data		= &hwpmc_log_buffer_share,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &hwpmc_pct_max,
	},
	{
		.procname	= "log_buffer_reserve",
		.data		= &hwpmc_log_buffer_reserve,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &hwpmc_reserve_max,
	},
	{
		.procname	= "max_owners_per_user",
		.data		= &hwpmc_max_owners_per_user,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &hwpmc_limit_ceiling,
	},
	{
		.procname	= "max_pmcs_per_user",
		.data		= &hwpmc_max_pmcs_per_user,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &hwpmc_limit_ceiling,
	},
	{
		.procname	= "unprivileged_kernel",
		.data		= &hwpmc_unprivileged_kernel,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "unprivileged_hw",
		.data		= &hwpmc_unprivileged_hw,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "min_hw_period",
		.data		= &hwpmc_min_hw_period,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &hwpmc_period_max,
	},
	{
		.procname	= "max_sample_rate",
		.data		= &hwpmc_max_sample_rate,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &hwpmc_rate_max,
	},
	{ }	/* sentinel, for kernels before 6.6 */
};

static struct ctl_table_header *hwpmc_sysctl_header;
static int hwpmc_cpuhp_state;

/* Validate tunables with the hwpmc(4) DIAGNOSTICS messages. */
static int hwpmc_check_tunables(void)
{
	if (hwpmc_hashsize <= 0) {
		pr_err("tunable hashsize=%d must be greater than zero.\n",
		       hwpmc_hashsize);
		return -EINVAL;
	}
	if (hwpmc_logbuffersize <= 0) {
		pr_err("tunable logbuffersize=%d must be greater than zero.\n",
		       hwpmc_logbuffersize);
		return -EINVAL;
	}
	if (hwpmc_logbuffersize > HWPMC_LOGBUFFERSIZE_MAX) {
		pr_err("tunable logbuffersize=%d out of range.\n",
		       hwpmc_logbuffersize);
		return -EINVAL;
	}
	if (hwpmc_nbuffers <= 0) {
		pr_err("tunable nlogbuffers=%d must be greater than zero.\n",
		       hwpmc_nbuffers);
		return -EINVAL;
	}
	if (hwpmc_nbuffers > HWPMC_NBUFFERS_MAX) {
		pr_err("tunable nlogbuffers=%d out of range.\n",
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
	if (hwpmc_max_user_stack < 0 ||
	    hwpmc_max_user_stack > PMC_USTACK_MAX ||
	    hwpmc_max_user_stack % 8) {
		pr_err("tunable max_user_stack=%d out of range.\n",
		       hwpmc_max_user_stack);
		return -EINVAL;
	}
	if (hwpmc_mtxpoolsize <= 0) {
		pr_err("tunable mtxpoolsize=%d must be greater than zero.\n",
		       hwpmc_mtxpoolsize);
		return -EINVAL;
	}
	return 0;
}

/*
 * Owners by opening process, so that the exit of that process shuts them
 * down (hwpmc_owner_exit()).  A raw spinlock: the exit hook runs in
 * tracepoint context.
 */
#define HWPMC_OWNER_BITS	8
static struct hlist_head hwpmc_owners[1 << HWPMC_OWNER_BITS];
static DEFINE_RAW_SPINLOCK(hwpmc_owners_lock);
static atomic_t hwpmc_nowners;

/* Module-wide work: owner shutdowns after their opener's exit. */
struct workqueue_struct *hwpmc_wq;

static struct hlist_head *hwpmc_owner_bucket(struct pid *pid)
{
	return &hwpmc_owners[hash_ptr(pid, HWPMC_OWNER_BITS)];
}

static void hwpmc_owner_put(struct hwpmc_owner *po)
{
	if (!refcount_dec_and_test(&po->ref))
		return;
	idr_destroy(&po->pmcs);
	put_pid(po->pid);
	put_pid_ns(po->pid_ns);
	put_cred(po->cred);
	/* Its PMCs were drained as they went: no ring slot is its own. */
	free_percpu(po->ring_used);
	hwpmc_readpage_owner_free(po);
	kfree_rcu(po, rcu);
}

/*
 * Release everything the owner has: its PMCs (their targets detached)
 * and its log (flushed for a bounded time, then its file let go).  From
 * then on the owner can get neither PMCs nor a log (ESRCH).  Idempotent:
 * the last close and the exit of the opener may both come.  At the last
 * close no ioctl runs on the file, so this waits only for an exit work
 * of the same owner, which holds a lock only for bounded times (at most
 * the log's HWPMC_LOG_SHUTDOWN_WAIT).
 */
static void hwpmc_owner_shutdown(struct hwpmc_owner *po)
{
	hwpmc_log_owner_abort(po);
	hwpmc_owner_kill(po);
	/* Samples and records of the released PMCs are in the log: flush. */
	mutex_lock(&po->log_lock);
	hwpmc_log_owner_release(po);
	mutex_unlock(&po->log_lock);
}

/*
 * After the opener's exit an ioctl may still run on the owner's file (an
 * inherited or passed open) and hold its locks across a wait its user
 * controls (a log reader that does not read, a target's mmap lock stalled
 * by a userfaultfd).  A worker must not sleep behind that: it would be a
 * hung task, and a user could tie up the work queue.  So the worker only
 * tries the locks; a log drain in the way is told to stop
 * (hwpmc_log_owner_abort(): FLUSHLOG gets ESRCH), anything else is tried
 * again later, at 100 ms doubling up to 2 s.  Returns false when it must
 * be tried again.
 */
#define HWPMC_OWNER_RETRY	(HZ / 10)
#define HWPMC_OWNER_RETRY_MAX	(2 * HZ)

static bool hwpmc_owner_try_shutdown(struct hwpmc_owner *po)
{
	hwpmc_log_owner_abort(po);
	if (!mutex_trylock(&po->lock))
		return false;
	hwpmc_owner_kill_locked(po);
	mutex_unlock(&po->lock);
	if (!mutex_trylock(&po->log_lock))
		return false;
	hwpmc_log_owner_release(po);
	mutex_unlock(&po->log_lock);
	return true;
}

static void hwpmc_owner_exit_fn(struct work_struct *w)
{
	struct hwpmc_owner *po = container_of(to_delayed_work(w),
					      struct hwpmc_owner, exit_work);

	if (!hwpmc_owner_try_shutdown(po)) {
		po->exit_retry = clamp(po->exit_retry * 2,
				       (unsigned long)HWPMC_OWNER_RETRY,
				       (unsigned long)HWPMC_OWNER_RETRY_MAX);
		/*
		 * Keeps its reference, unless it cannot be queued: the last
		 * close is cancelling it (and puts only what it took off the
		 * queue), or another exit hook queued it with a reference of
		 * its own.
		 */
		if (queue_delayed_work(hwpmc_wq, &po->exit_work,
				       po->exit_retry))
			return;
	}
	hwpmc_owner_put(po);
}

/*
 * Exit hook (tracepoint context), for the last thread of @task's process:
 * the owners that process opened are shut down, in process context.  An
 * open of /dev/hwpmc that outlives its opener (inherited by a child,
 * passed over a socket, or queued in a socket that its own log holds) is
 * then an empty owner, and nothing it held keeps anything alive.
 */
void hwpmc_owner_exit(struct task_struct *task)
{
	struct pid *pid = task_tgid(task);
	struct hwpmc_owner *po;

	if (!atomic_read(&hwpmc_nowners) || !pid)
		return;
	raw_spin_lock(&hwpmc_owners_lock);
	hlist_for_each_entry(po, hwpmc_owner_bucket(pid), onode) {
		if (po->pid != pid)
			continue;
		refcount_inc(&po->ref);
		if (!queue_delayed_work(hwpmc_wq, &po->exit_work, 0))
			refcount_dec(&po->ref);	/* queued already */
	}
	raw_spin_unlock(&hwpmc_owners_lock);
}

/*
 * May an owner opened by @pid signal @task (that process) with SIGIO?  As
 * for fcntl(F_SETOWN)'s SIGIO, the credentials are those the opener had
 * when it opened (hwpmc_priv_may_signal()): an opener that became another
 * user since (a set-uid exec) is not signalled.  RCU held.
 */
bool hwpmc_owner_may_signal(struct pid *pid, struct task_struct *task)
{
	struct hwpmc_owner *po;
	bool ok = false;

	raw_spin_lock(&hwpmc_owners_lock);
	hlist_for_each_entry(po, hwpmc_owner_bucket(pid), onode) {
		if (po->pid != pid)
			continue;
		if (hwpmc_priv_may_signal(po->cred, task)) {
			ok = true;
			break;
		}
	}
	raw_spin_unlock(&hwpmc_owners_lock);
	return ok;
}

static int hwpmc_open(struct inode *inode, struct file *file)
{
	struct hwpmc_owner *po;
	int err;

	po = kzalloc(sizeof(*po), GFP_KERNEL_ACCOUNT);
	if (!po)
		return -ENOMEM;
	po->ring_used = alloc_percpu(atomic_t);
	if (!po->ring_used) {
		kfree(po);
		return -ENOMEM;
	}
	po->tgid = task_tgid_nr(current);
	po->pid = get_pid(task_tgid(current));
	po->pid_ns = get_pid_ns(task_active_pid_ns(current));
	po->cred = get_current_cred();
	refcount_set(&po->ref, 1);
	INIT_DELAYED_WORK(&po->exit_work, hwpmc_owner_exit_fn);
	mutex_init(&po->lock);
	INIT_WORK(&po->sigio_work, hwpmc_owner_sigio_fn);
	idr_init(&po->pmcs);
	mutex_init(&po->log_lock);
	err = hwpmc_owner_charge(po);
	/* The exit hook ends the owner with its opener: before it is seen. */
	if (!err) {
		err = hwpmc_hook_get(HWPMC_HOOK_PROC);
		if (err)
			hwpmc_owner_uncharge(po);
	}
	if (err) {
		put_pid(po->pid);
		put_pid_ns(po->pid_ns);
		put_cred(po->cred);
		free_percpu(po->ring_used);
		kfree(po);
		return err;
	}
	raw_spin_lock(&hwpmc_owners_lock);
	hlist_add_head(&po->onode, hwpmc_owner_bucket(po->pid));
	atomic_inc(&hwpmc_nowners);
	raw_spin_unlock(&hwpmc_owners_lock);
	file->private_data = po;
	return 0;
}

/* Last close: every PMC of the owner is released, its targets detached. */
static int hwpmc_release(struct inode *inode, struct file *file)
{
	struct hwpmc_owner *po = file->private_data;

	raw_spin_lock(&hwpmc_owners_lock);
	hlist_del(&po->onode);
	atomic_dec(&hwpmc_nowners);
	raw_spin_unlock(&hwpmc_owners_lock);
	hwpmc_owner_shutdown(po);
	/* An exit work waiting to try again has nothing left to do. */
	if (cancel_delayed_work_sync(&po->exit_work))
		hwpmc_owner_put(po);
	hwpmc_owner_uncharge(po);
	hwpmc_hook_put(HWPMC_HOOK_PROC);
	hwpmc_owner_put(po);
	return 0;
}

/* The owner's read page (hwpmc_readpage.c). */
static int hwpmc_mmap(struct file *file, struct vm_area_struct *vma)
{
	return hwpmc_readpage_mmap(file->private_data, vma);
}

static int hwpmc_cpu_online(unsigned int cpu)
{
	hwpmc_classes_cpu_online(cpu);
	return 0;
}

static int hwpmc_cpu_offline(unsigned int cpu)
{
	hwpmc_classes_cpu_offline(cpu);
	return 0;
}

static const struct file_operations hwpmc_fops = {
	.owner		= THIS_MODULE,
	.open		= hwpmc_open,
	.release	= hwpmc_release,
	.unlocked_ioctl	= hwpmc_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= hwpmc_mmap,
	.llseek		= noop_llseek,
};

/* Is @file an open of /dev/hwpmc (which must never hold a log)? */
bool hwpmc_is_device_file(const struct file *file)
{
	return file->f_op == &hwpmc_fops;
}

static struct miscdevice hwpmc_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= HWPMC_DEVICE_NAME,
	.fops	= &hwpmc_fops,
	.mode	= 0666,
};

/* The other interfaces of the specification (kmod/iface/), in order. */
static const struct hwpmc_iface *const hwpmc_ifaces[] = {
	&hwpmc_pctr_iface,
	&hwpmc_perfmon_iface,
	&hwpmc_pmc9_iface,
};

static void hwpmc_ifaces_exit(unsigned int n)
{
	while (n--)
		hwpmc_ifaces[n]->exit();
}

static int hwpmc_ifaces_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(hwpmc_ifaces); i++) {
		err = hwpmc_ifaces[i]->init();
		if (err) {
			pr_err("%s: %d\n", hwpmc_ifaces[i]->name, err);
			hwpmc_ifaces_exit(i);
			return err;
		}
	}
	return 0;
}

static int __init hwpmc_init(void)
{
	int err;

	err = hwpmc_check_tunables();
	if (err)
		return err;
	hwpmc_wq = alloc_workqueue("hwpmc", WQ_UNBOUND, 0);
	if (!hwpmc_wq)
		return -ENOMEM;
	err = hwpmc_testing_init();
	if (err)
		goto out_wq;
	hwpmc_priv_init();
	err = hwpmc_classes_init();
	if (err)
		goto out_testing;
	err = hwpmc_rows_init();
	if (err)
		goto out_classes;
	err = hwpmc_proc_init();
	if (err)
		goto out_rows;
	err = hwpmc_samples_init();
	if (err)
		goto out_proc;
	err = hwpmc_hooks_init();
	if (err)
		goto out_samples;
	err = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "hwpmc:online",
				hwpmc_cpu_online, hwpmc_cpu_offline);
	if (err < 0)
		goto out_hooks;
	hwpmc_cpuhp_state = err;
	hwpmc_sysctl_header = hwpmc_register_sysctl("kernel/hwpmc",
						    hwpmc_sysctls,
						    ARRAY_SIZE(hwpmc_sysctls) - 1);
	if (!hwpmc_sysctl_header) {
		err = -ENOMEM;
		goto out_cpuhp;
	}
	err = misc_register(&hwpmc_miscdev);
	if (err)
		goto out_sysctl;
	err = hwpmc_ifaces_init();
	if (err)
		goto out_misc;
	hwpmc_classes_announce();
	pr_info("version %u.%u.%u loaded\n", HWPMC_VERSION_MAJOR,
		HWPMC_VERSION_MINOR, HWPMC_VERSION_PATCH);
	return 0;

out_misc:
	misc_deregister(&hwpmc_miscdev);
out_sysctl:
	unregister_sysctl_table(hwpmc_sysctl_header);
out_cpuhp:
	cpuhp_remove_state(hwpmc_cpuhp_state);
out_hooks:
	hwpmc_hooks_fini();
out_samples:
	hwpmc_samples_fini();
out_proc:
	hwpmc_proc_fini();
out_rows:
	hwpmc_rows_fini();
out_classes:
	hwpmc_classes_fini();
out_testing:
	hwpmc_priv_fini();
	hwpmc_testing_fini();
out_wq:
	destroy_workqueue(hwpmc_wq);
	return err;
}

/*
 * The module cannot be unloaded while /dev/hwpmc is open (the file holds a
 * module reference), so there are no owners left to signal here.
 */
static void __exit hwpmc_exit(void)
{
	hwpmc_ifaces_exit(ARRAY_SIZE(hwpmc_ifaces));
	misc_deregister(&hwpmc_miscdev);
	unregister_sysctl_table(hwpmc_sysctl_header);
	cpuhp_remove_state(hwpmc_cpuhp_state);
	hwpmc_hooks_fini();
	/* No exit work is left: the last close cancels or waits for it. */
	destroy_workqueue(hwpmc_wq);
	hwpmc_maps_fini();
	hwpmc_samples_fini();
	/* Processes, PMCs and logs freed through RCU must be gone. */
	rcu_barrier();
	hwpmc_proc_fini();
	hwpmc_rows_fini();
	hwpmc_classes_fini();
	hwpmc_priv_fini();
	hwpmc_testing_fini();
}

module_init(hwpmc_init);
module_exit(hwpmc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("FreeBSD hwpmc(4) hardware performance-monitoring counters");
MODULE_VERSION(__stringify(HWPMC_VERSION_MAJOR) "." __stringify(HWPMC_VERSION_MINOR));
