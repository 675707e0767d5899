// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: PMC objects, rows and their dispositions, and the handlers of the
 * operations on PMCs.  Everything here runs in process context with the
 * owner's lock held, and with hwpmc_sx too unless the handler says it
 * takes hwpmc_sx itself (see hwpmc_ioctl.c): those wait for things a user
 * controls (a target's exec_update_lock or mmap lock) without it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/string.h>

#include <linux/file.h>
#include <linux/sched/mm.h>
#include <linux/hash.h>
#include <linux/cred.h>
#include <linux/nospec.h>

#include "hwpmc.h"
#include "compat/compat.h"

/*
 * A row: the counters at one hardware address on every CPU.  disp > 0
 * counts the process-scope PMCs using it (PMC_DISP_THREAD); disp < 0
 * counts system-scope PMCs plus administratively disabled CPUs
 * (PMC_DISP_STANDALONE); 0 is PMC_DISP_FREE.
 */
struct hwpmc_row {
	int disp;
	unsigned long *disabled;	/* CPUs where PMCADMIN disabled it */
	struct hwpmc_pmc **sys;		/* system PMC per CPU (unshared) */
	unsigned int *nshared;		/* system PMCs per CPU (shared) */
};

static struct hwpmc_row *hwpmc_rows;
static unsigned int hwpmc_rows_n;

int hwpmc_rows_init(void)
{
	unsigned int i;

	hwpmc_rows_n = hwpmc_nrows();
	hwpmc_rows = kcalloc(hwpmc_rows_n, sizeof(*hwpmc_rows), GFP_KERNEL);
	if (!hwpmc_rows)
		return -ENOMEM;
	for (i = 0; i < hwpmc_rows_n; i++) {
		struct hwpmc_row *row = &hwpmc_rows[i];

		row->disabled = bitmap_zalloc(nr_cpu_ids, GFP_KERNEL);
		row->sys = kcalloc(nr_cpu_ids, sizeof(*row->sys), GFP_KERNEL);
		row->nshared = kcalloc(nr_cpu_ids, sizeof(*row->nshared),
				       GFP_KERNEL);
		if (!row->disabled || !row->sys || !row->nshared) {
			hwpmc_rows_fini();
			return -ENOMEM;
		}
	}
	return 0;
}

void hwpmc_rows_fini(void)
{
	unsigned int i;

	for (i = 0; hwpmc_rows && i < hwpmc_rows_n; i++) {
		bitmap_free(hwpmc_rows[i].disabled);
		kfree(hwpmc_rows[i].sys);
		kfree(hwpmc_rows[i].nshared);
	}
	kfree(hwpmc_rows);
	hwpmc_rows = NULL;
}

/*
 * Signal a process the way FreeBSD's hwpmc does.  SIGIO is discarded by
 * default on FreeBSD but kills by default on Linux, so SIGIO is only sent
 * to a process that has a handler for it.  Whoever makes it happen (any
 * holder of the owner's descriptor), SIGIO is sent with the credentials
 * the opener had when it opened, under fcntl(F_SETOWN)'s rule (see
 * hwpmc_owner_may_signal()).
 */
void hwpmc_signal_pid(struct pid *pid, int sig)
{
	struct task_struct *task;
	bool ok = true;

	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_TGID);
	if (task && sig == SIGIO) {
		struct sighand_struct *sh = rcu_dereference(task->sighand);
		__sighandler_t h = sh ? READ_ONCE(sh->action[sig - 1].sa.sa_handler)
				      : SIG_DFL;

		ok = h != SIG_DFL && h != SIG_IGN &&
		     hwpmc_owner_may_signal(pid, task);
	}
	rcu_read_unlock();
	if (task && ok)
		kill_pid(pid, sig, 1);
}

/* SIGIO queued by the exit hook (PREEMPT_RT: it may not signal there). */
void hwpmc_owner_sigio_fn(struct work_struct *work)
{
	struct hwpmc_owner *po = container_of(work, struct hwpmc_owner,
					      sigio_work);

	hwpmc_signal_pid(po->pid, SIGIO);
}

/* Whether a process-scope PMC of @po uses @row.  Lock and hwpmc_sx held. */
static bool hwpmc_owner_uses_row(struct hwpmc_owner *po, unsigned int row)
{
	lockdep_assert_held(&hwpmc_sx);
	hwpmc_owner_assert_held(po);
	return test_bit(row, po->proc_rows);
}

/*
 * Choose a row of @cls for a new PMC, as hwpmc(4) "PMC ROW DISPOSITIONS"
 * says.  A process-scope PMC takes the least-used row that is not
 * standalone and that no other process PMC of the same owner uses.
 */
static int hwpmc_pick_row(const struct hwpmc_class *cls,
			  const struct pmc_op_pmcallocate *a,
			  struct hwpmc_owner *po, int want)
{
	u32 mode = a->pm_mode, cpu = a->pm_cpu;
	bool sys = hwpmc_mode_system(mode);
	int best = -EINVAL;
	unsigned int r;

	for (r = cls->firstrow; r < cls->firstrow + cls->nrows; r++) {
		struct hwpmc_row *row = &hwpmc_rows[r];

		if (want >= 0 && r != want)
			continue;
		if (cls->ops->row_ok &&
		    !cls->ops->row_ok(cls, r - cls->firstrow, a))
			continue;
		if (sys) {
			if (row->disp > 0 || test_bit(cpu, row->disabled))
				continue;
			if (!cls->ops->shared_row && row->sys[cpu])
				continue;
			return r;
		}
		if (row->disp < 0 || hwpmc_owner_uses_row(po, r))
			continue;
		if (best < 0 || row->disp < hwpmc_rows[best].disp)
			best = r;
	}
	return best;
}

static void hwpmc_row_claim(struct hwpmc_pmc *pm)
{
	struct hwpmc_row *row = &hwpmc_rows[pm->row];

	if (!hwpmc_is_system(pm)) {
		row->disp++;
		__set_bit(pm->row, pm->po->proc_rows);
		return;
	}
	row->disp--;
	if (pm->cls->ops->shared_row)
		row->nshared[pm->cpu]++;
	else
		row->sys[pm->cpu] = pm;
}

static void hwpmc_row_unclaim(struct hwpmc_pmc *pm)
{
	struct hwpmc_row *row = &hwpmc_rows[pm->row];

	if (!hwpmc_is_system(pm)) {
		row->disp--;
		__clear_bit(pm->row, pm->po->proc_rows);
		return;
	}
	row->disp++;
	if (pm->cls->ops->shared_row)
		row->nshared[pm->cpu]--;
	else
		row->sys[pm->cpu] = NULL;
}

/*
 * Per-user limits.  Owners (opens of /dev/hwpmc) and PMCs are counted per
 * real uid of the process that opened /dev/hwpmc, in a small hash of the
 * uids that have an owner; a caller with CAP_PERFMON is counted but not
 * limited.  Beyond kernel.hwpmc.max_owners_per_user an open fails with
 * EMFILE, beyond kernel.hwpmc.max_pmcs_per_user PMCALLOCATE with ENOSPC
 * (inotify's errnos for its per-user instances and watches).
 */
int hwpmc_max_owners_per_user = 256;
int hwpmc_max_pmcs_per_user = 4096;

struct hwpmc_user {
	struct hlist_node node;
	kuid_t uid;
	int owners;			/* hwpmc_users_lock */
	atomic_t pmcs;
};

#define HWPMC_USERS_BITS	6
static struct hlist_head hwpmc_users[1 << HWPMC_USERS_BITS];
static DEFINE_SPINLOCK(hwpmc_users_lock);

static struct hlist_head *hwpmc_user_bucket(kuid_t uid)
{
	return &hwpmc_users[hash_32(__kuid_val(uid), HWPMC_USERS_BITS)];
}

/* At open: count the new owner against its real uid, or EMFILE. */
int hwpmc_owner_charge(struct hwpmc_owner *po)
{
	struct hwpmc_user *u, *fresh;
	kuid_t uid = current_uid();
	bool exempt = hwpmc_priv_system();
	int err = 0;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&hwpmc_users_lock);
	hlist_for_each_entry(u, hwpmc_user_bucket(uid), node)
		if (uid_eq(u->uid, uid))
			break;
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hlist_add_head(&u->node, hwpmc_user_bucket(uid));
	}
	if (!exempt && u->owners >= READ_ONCE(hwpmc_max_owners_per_user)) {
		err = -EMFILE;
		if (!u->owners) {	/* the limit is at least 1: never */
			hlist_del(&u->node);
			fresh = u;
		}
	} else {
		u->owners++;
		po->user = u;
	}
	spin_unlock(&hwpmc_users_lock);
	kfree(fresh);
	return err;
}

/* At the last close, after every PMC of @po is gone. */
void hwpmc_owner_uncharge(struct hwpmc_owner *po)
{
	struct hwpmc_user *u = po->user, *gone = NULL;

	if (!u)
		return;
	spin_lock(&hwpmc_users_lock);
	if (!--u->owners) {
		WARN_ON_ONCE(atomic_read(&u->pmcs));
		hlist_del(&u->node);
		gone = u;
	}
	spin_unlock(&hwpmc_users_lock);
	kfree(gone);
	po->user = NULL;
}

/* Would @n PMCs put the calling user over its limit (root has none)? */
static bool hwpmc_pmcs_over_limit(int n)
{
	return n > READ_ONCE(hwpmc_max_pmcs_per_user) && !hwpmc_priv_system();
}

/* One more PMC for @po's user, or ENOSPC. */
static int hwpmc_pmc_charge(struct hwpmc_owner *po)
{
	struct hwpmc_user *u = po->user;

	if (hwpmc_pmcs_over_limit(atomic_inc_return(&u->pmcs))) {
		atomic_dec(&u->pmcs);
		return -ENOSPC;
	}
	return 0;
}

/*
 * A new PMC's handle: the lowest free from 1 (FreeBSD's are never 0), in
 * the owner's idr and, for the first handles, its direct index.  hwpmc_sx
 * and the owner's lock held, as for hwpmc_pmc_unindex().
 */
static int hwpmc_pmc_index(struct hwpmc_owner *po, struct hwpmc_pmc *pm)
{
	int id;

	lockdep_assert_held(&hwpmc_sx);
	hwpmc_owner_assert_held(po);
	id = idr_alloc(&po->pmcs, pm, 1, INT_MAX, GFP_KERNEL_ACCOUNT);
	if (id >= 0 && id < HWPMC_FIRST_IDS)
		po->pmc_first[id] = pm;
	return id;
}

static void hwpmc_pmc_unindex(struct hwpmc_owner *po, int id)
{
	lockdep_assert_held(&hwpmc_sx);
	hwpmc_owner_assert_held(po);
	idr_remove(&po->pmcs, id);
	if (id < HWPMC_FIRST_IDS)
		po->pmc_first[id] = NULL;
}

/* Look a PMC up by handle: ESRCH if the owner has none, EINVAL if bad. */
static struct hwpmc_pmc *hwpmc_find(struct hwpmc_owner *po, u32 id, int *err)
{
	struct hwpmc_pmc *pm;

	hwpmc_owner_assert_held(po);
	if (!po->npmcs) {
		*err = -ESRCH;
		return NULL;
	}
	if (id < HWPMC_FIRST_IDS)	/* @id is the user's: no speculation */
		pm = po->pmc_first[array_index_nospec(id, HWPMC_FIRST_IDS)];
	else
		pm = id <= INT_MAX ? idr_find(&po->pmcs, id) : NULL;
	*err = pm ? 0 : -EINVAL;
	return pm;
}

/* hwpmc_find() for an operation whose reserved fields are @reserved_zero. */
static struct hwpmc_pmc *hwpmc_find_op(struct hwpmc_owner *po, u32 id,
				       bool reserved_zero, int *err)
{
	if (!reserved_zero) {
		*err = -EINVAL;
		return NULL;
	}
	return hwpmc_find(po, id, err);
}

static bool hwpmc_needs_log(const struct hwpmc_pmc *pm)
{
	return hwpmc_is_sampling(pm) ||
	       (pm->flags & (PMC_F_LOG_PROCCSW | PMC_F_LOG_PROCEXIT));
}

/*
 * Can a counter of @cls hold a sampling period of @period events of
 * @event, and may the caller sample that often?
 */
static bool hwpmc_period_ok(const struct hwpmc_class *cls, u32 event,
			    u64 period)
{
	if (cls->ops->min_period && period < cls->ops->min_period(event))
		return false;
	return !cls->ops->max_period || period <= cls->ops->max_period(cls);
}

/* Validate a PMCALLOCATE request before anything is claimed. */
static int hwpmc_check_allocate(const struct pmc_op_pmcallocate *a,
				const struct hwpmc_class **clsp)
{
	bool sys = hwpmc_mode_system(a->pm_mode);
	bool sampling = hwpmc_mode_sampling(a->pm_mode);
	const struct hwpmc_class *cls;

	if (!HWPMC_RESERVED_ZERO(a->pm_reserved))
		return -EINVAL;
	if (a->pm_mode > PMC_MODE_MAX)
		return -EINVAL;
	if (a->pm_flags & ~PMC_F_ALLOCATE_MASK)
		return -EINVAL;
	if (sys) {
		if (a->pm_flags & (PMC_F_DESCENDANTS | PMC_F_LOG_PROCCSW |
				   PMC_F_LOG_PROCEXIT))
			return -EINVAL;
		if (a->pm_cpu == PMC_CPU_ANY || a->pm_cpu >= nr_cpu_ids)
			return -EINVAL;
		if (!cpu_online(a->pm_cpu))
			return -ENXIO;
	} else if (a->pm_cpu != PMC_CPU_ANY) {
		return -EINVAL;
	}
	if (a->pm_flags & PMC_F_KGMON)	/* unimplemented, as on FreeBSD */
		return a->pm_mode == PMC_MODE_SS ? -EOPNOTSUPP : -EINVAL;
	if ((a->pm_flags & PMC_F_CALLCHAIN) && !sampling)
		return -EINVAL;
	if (!(a->pm_flags & PMC_F_USERSTACK) && a->pm_ustack_size)
		return -EINVAL;
	if (a->pm_flags & PMC_F_USERSTACK) {
		if (!sampling || a->pm_ustack_size % 8 ||
		    a->pm_ustack_size > PMC_USTACK_MAX)
			return -EINVAL;
		if (!hwpmc_max_user_stack)
			return -EOPNOTSUPP;
		if (a->pm_ustack_size > hwpmc_max_user_stack)
			return -EINVAL;
		/* A sample's two records must fit in one log buffer. */
		if (sizeof(struct pmclog_callchain) +
		    hwpmc_callchaindepth * sizeof(u64) +
		    sizeof(struct pmclog_userstack) +
		    (a->pm_ustack_size ? a->pm_ustack_size :
		     min(PMC_USTACK_DEFAULT, hwpmc_max_user_stack)) >
		    (size_t)hwpmc_logbuffersize * 1024)
			return -EINVAL;
	}
	if (sampling && !a->pm_count)
		return -EINVAL;
	cls = hwpmc_class_find(a->pm_class);
	if (!cls || !(cls->ops->modes & BIT(a->pm_mode)))
		return -EINVAL;
	if (sampling && !hwpmc_period_ok(cls, a->pm_event, a->pm_count))
		return -EINVAL;
	if (a->pm_caps & ~cls->caps)
		return -EOPNOTSUPP;
	if (sys && !hwpmc_priv_system_pmc(a->pm_mode))
		return -EPERM;
	*clsp = cls;
	return 0;
}

/* What every allocation checks first: a live owner, a valid request. */
static int hwpmc_allocate_ok(struct hwpmc_owner *po,
			     const struct pmc_op_pmcallocate *a,
			     const struct hwpmc_class **clsp)
{
	hwpmc_owner_assert_held(po);
	if (po->dead)
		return -ESRCH;	/* its opener exited */
	return hwpmc_check_allocate(a, clsp);
}

/*
 * Every PMC holds the scheduler and process hooks, from before it can run
 * until it is gone (hwpmc_hooks.c): its class's switch callbacks, its
 * targets' forks, exits and execs, its PROCCSW records.  hwpmc_sx held.
 */
static int hwpmc_pmc_hooks_get(void)
{
	int err = hwpmc_hook_get(HWPMC_HOOK_SWITCH);

	if (err)
		return err;
	err = hwpmc_hook_get(HWPMC_HOOK_PROC);
	if (err)
		hwpmc_hook_put(HWPMC_HOOK_SWITCH);
	return err;
}

static void hwpmc_pmc_hooks_put(void)
{
	hwpmc_hook_put(HWPMC_HOOK_PROC);
	hwpmc_hook_put(HWPMC_HOOK_SWITCH);
}

/*
 * The hooks that an allocation of @a takes (hwpmc_pmc_allocate_at()),
 * whatever @a's validity: every PMC's, a sampler's, its class's.  Its
 * caller holds them before it takes hwpmc_sx (hwpmc_hooks_get()), so
 * that attaching one, which waits for the kernel (text patching, maybe
 * a grace period), never holds up other users under the global lock.
 */
u32 hwpmc_alloc_hooks(const struct pmc_op_pmcallocate *a)
{
	const struct hwpmc_class *cls = hwpmc_class_find(a->pm_class);
	u32 mask = BIT(HWPMC_HOOK_SWITCH) | BIT(HWPMC_HOOK_PROC);

	if (hwpmc_mode_sampling(a->pm_mode))
		mask |= BIT(HWPMC_HOOK_MAPS);
	if (cls && cls->ops->hooks_needed)
		mask |= cls->ops->hooks_needed(a);
	return mask;
}

/*
 * The frame of every allocation (PMCALLOCATE, pmc(9), kctr): @hooks
 * (hwpmc_alloc_hooks()) attached first, outside the global lock, then
 * hwpmc_sx, killably.  0: both held, to be dropped by hwpmc_alloc_end().
 */
int hwpmc_alloc_begin(u32 hooks)
{
	int err = hwpmc_hooks_get(hooks);

	if (err)
		return err;
	err = mutex_lock_killable(&hwpmc_sx);
	if (err)
		hwpmc_hooks_put(hooks);
	return err;
}

void hwpmc_alloc_end(u32 hooks)
{
	mutex_unlock(&hwpmc_sx);
	hwpmc_hooks_put(hooks);
}

/*
 * A PMC of @a on row @want (hwpmc_pmc_allocate_at()), with the owner's
 * lock held and not hwpmc_sx, which this takes after the hooks.  A
 * request that is bound to fail (bad arguments, no privilege, a dead
 * owner, the user's PMCs at their limit) fails first, attaching nothing;
 * hwpmc_pmc_allocate_at() checks it all again under hwpmc_sx.
 */
int hwpmc_pmc_allocate(struct hwpmc_owner *po, struct pmc_op_pmcallocate *a,
		       int want)
{
	const struct hwpmc_class *cls;
	u32 hooks;
	int err;

	err = hwpmc_allocate_ok(po, a, &cls);
	if (err)
		return err;
	if (hwpmc_pmcs_over_limit(atomic_read(&po->user->pmcs) + 1))
		return -ENOSPC;
	hooks = hwpmc_alloc_hooks(a);
	err = hwpmc_alloc_begin(hooks);
	if (err)
		return err;
	err = hwpmc_pmc_allocate_at(po, a, want);
	hwpmc_alloc_end(hooks);
	return err;
}

int hwpmc_op_pmcallocate(struct hwpmc_owner *po, struct pmc_op_pmcallocate *a)
{
	return hwpmc_pmc_allocate(po, a, -1);
}

/* The PMC's memory, once no hook can see it (a grace period). */
static void hwpmc_pmc_free_rcu_cb(struct rcu_head *head)
{
	struct hwpmc_pmc *pm = container_of(head, struct hwpmc_pmc, rcu);

	free_percpu(pm->cls_pcpu);
	kfree(pm);
}

static void hwpmc_pmc_free_rcu(struct hwpmc_pmc *pm)
{
	call_rcu(&pm->rcu, hwpmc_pmc_free_rcu_cb);
}

/*
 * PMCALLOCATE on row @want of the class (its index in the class), or on
 * the row hwpmc(4)'s dispositions choose when @want is negative.  The
 * other interfaces (kmod/iface/) name their counter: that row taken is
 * EBUSY.  hwpmc_sx and the owner's lock held, and the hooks of
 * hwpmc_alloc_hooks(@a), so that they are only counted under hwpmc_sx.
 */
int hwpmc_pmc_allocate_at(struct hwpmc_owner *po,
			  struct pmc_op_pmcallocate *a, int want)
{
	const struct hwpmc_class *cls = NULL;
	struct hwpmc_pmc *pm;
	int err, row, id;
	u32 ustack = 0;

	lockdep_assert_held(&hwpmc_sx);
	err = hwpmc_allocate_ok(po, a, &cls);
	if (err)
		return err;
	if (want >= (int)cls->nrows)
		return -EINVAL;
	row = hwpmc_pick_row(cls, a, po, want < 0 ? -1 : cls->firstrow + want);
	if (row < 0)
		return want < 0 ? row : -EBUSY;
	err = hwpmc_pmc_charge(po);
	if (err)
		return err;
	/*
	 * The sample rings' stack areas of the copy's tier: allocated by
	 * the first such PMC (charged to the caller), freed with the last
	 * (hwpmc_pmc_finish()).
	 */
	if (a->pm_flags & PMC_F_USERSTACK) {
		ustack = a->pm_ustack_size ? a->pm_ustack_size :
			 min(PMC_USTACK_DEFAULT, hwpmc_max_user_stack);
		err = hwpmc_samples_ustack_get(ustack);
		if (err)
			goto uncharge;
	}
	pm = kzalloc(sizeof(*pm), GFP_KERNEL_ACCOUNT);
	if (!pm) {
		err = -ENOMEM;
		goto ustack_put;
	}
	pm->po = po;
	pm->rslot = -1;		/* no read-page slot (yet) */
	pm->cls = cls;
	pm->row = row;
	pm->mode = a->pm_mode;
	pm->flags = a->pm_flags;
	pm->event = a->pm_event;
	pm->caps = a->pm_caps ? a->pm_caps : cls->caps;
	pm->cpu = a->pm_cpu;
	pm->config = a->pm_config;
	pm->config1 = a->pm_config1;
	pm->ustack_size = ustack;
	/* Decided once, here, in process context: hooks and NMIs read it. */
	pm->priv_kernel = hwpmc_priv_kernel();
	pm->state = PMC_STATE_ALLOCATED;
	INIT_LIST_HEAD(&pm->targets);
	INIT_LIST_HEAD(&pm->walks);
	seqcount_raw_spinlock_init(&pm->clock_seq, &hwpmc_proc_lock);
	INIT_LIST_HEAD(&pm->cls_node);
	if (hwpmc_is_sampling(pm))
		pm->reload = a->pm_count;
	else
		atomic64_set(&pm->value, a->pm_count);

	id = hwpmc_pmc_index(po, pm);
	if (id < 0) {
		kfree(pm);
		err = id;
		goto ustack_put;
	}
	pm->id = id;
	/* The scheduler and process hooks, before the PMC can run. */
	err = hwpmc_pmc_hooks_get();
	if (!err) {
		err = cls->ops->allocate(pm, a);
		if (err)
			hwpmc_pmc_hooks_put();
	}
	/* The exec hook's works (PROCEXEC records, mappings) come from it. */
	if (!err)
		hwpmc_maps_reserve_fill();
	if (!err && hwpmc_is_sampling(pm)) {
		/* Samplers need the mappings of what they sample. */
		err = hwpmc_hook_get(HWPMC_HOOK_MAPS);
		if (err) {
			cls->ops->release(pm);
			hwpmc_pmc_hooks_put();
		}
	}
	if (err) {
		hwpmc_pmc_unindex(po, id);
		/*
		 * The class may have published pm to its hooks (a system SOFT
		 * sampler is in an RCU-read array until release): free it
		 * only after the readers that may have seen it are gone.
		 */
		hwpmc_pmc_free_rcu(pm);
		goto ustack_put;
	}
	if (pm->mode == PMC_MODE_SS)
		hwpmc_maps_sys_sampler_add(pm);
	if (hwpmc_is_sampling(pm))
		hwpmc_sample_owner_add(po);
	hwpmc_readpage_pmc_alloc(pm);
	hwpmc_row_claim(pm);
	po->npmcs++;
	a->pm_pmcid = id;
	hwpmc_log_pmcallocate(pm);
	return 0;

ustack_put:
	/* pm never ran: no sample of it can be in an area. */
	if (ustack)
		hwpmc_samples_ustack_put(ustack);
uncharge:
	atomic_dec(&po->user->pmcs);
	return err;
}

/* A log was just configured: tell it about the PMCs that exist. */
static void hwpmc_log_attach(struct hwpmc_pmc *pm, struct task_struct *task);

/* PMCATTACH and MAP_IN for the targets @pm already has. */
static void hwpmc_log_existing_targets(struct hwpmc_pmc *pm)
{
	struct pid **pids;
	unsigned int i, n, max;

	raw_spin_lock(&hwpmc_proc_lock);
	max = pm->ntargets;
	raw_spin_unlock(&hwpmc_proc_lock);
	pids = kvcalloc(max, sizeof(*pids), GFP_KERNEL);
	if (!pids)
		return;
	/* Targets linked meanwhile (PMCATTACH of another thread) are left. */
	n = hwpmc_target_pids(pm, pids, max);
	for (i = 0; i < n; i++) {
		struct task_struct *task = get_pid_task(pids[i], PIDTYPE_TGID);

		if (task) {
			hwpmc_log_attach(pm, task);
			put_task_struct(task);
		}
		put_pid(pids[i]);
		cond_resched();
	}
	kvfree(pids);
}

/*
 * CONFIGURELOG: publish @log and tell it about the PMCs that exist and the
 * processes they are attached to, with their code mappings.  The owner's
 * lock keeps PMCs from coming or going meanwhile (so none is logged
 * twice); hwpmc_sx is only held to publish, because MAP_IN takes each
 * target's mmap lock, which a target's user can stall.  Called with the
 * owner's log_lock and then its lock (taken killably by CONFIGURELOG).
 */
void hwpmc_log_publish(struct hwpmc_owner *po, struct hwpmc_log *log)
{
	struct hwpmc_pmc *pm;
	int id;

	lockdep_assert_held(&po->log_lock);
	lockdep_assert_held(&po->lock);
	mutex_lock(&hwpmc_sx);
	rcu_assign_pointer(po->log, log);
	mutex_unlock(&hwpmc_sx);
	idr_for_each_entry(&po->pmcs, pm, id) {
		hwpmc_log_pmcallocate(pm);
		if (!hwpmc_is_system(pm) && pm->ntargets)
			hwpmc_log_existing_targets(pm);
	}
}

static void hwpmc_pmc_stop(struct hwpmc_pmc *pm);

/* The log goes away: PMCs that cannot run without it stop. */
void hwpmc_stop_log_pmcs(struct hwpmc_owner *po)
{
	struct hwpmc_pmc *pm;
	int id;

	lockdep_assert_held(&hwpmc_sx);
	idr_for_each_entry(&po->pmcs, pm, id)
		if (hwpmc_needs_log(pm))
			hwpmc_pmc_stop(pm);
}

static void hwpmc_pmc_stop(struct hwpmc_pmc *pm)
{
	if (pm->state != PMC_STATE_RUNNING)
		return;
	/* The class may have published STOPPED already (see its ops). */
	pm->cls->ops->stop(pm);
	WRITE_ONCE(pm->state, PMC_STATE_STOPPED);
	hwpmc_readpage_state(pm);
	pm->stop_gp = get_state_synchronize_rcu();
}

/*
 * Before a stopped PMC's value is read or written: the hooks that saw it
 * RUNNING before the stop credit it inside an RCU read side, so once a
 * grace period has passed since the stop (usually long before a reader
 * comes) nothing more is added and the value is final.  Process context,
 * the owner's lock held, no global lock: the wait delays only this owner.
 */
static void hwpmc_pmc_settle(struct hwpmc_pmc *pm)
{
	if (READ_ONCE(pm->state) == PMC_STATE_STOPPED)
		cond_synchronize_rcu(pm->stop_gp);
}

/*
 * Releasing a PMC, first half: its class, targets, read page and hooks
 * let go of it, so that nothing counts or samples for it from here on,
 * though samplers that started before may still hold it (it stays in its
 * owner's list and on its row, DELETED, until hwpmc_pmc_finish()).  True
 * if it samples: then hwpmc_pmcs_quiesce() must run before
 * hwpmc_pmc_finish().  hwpmc_sx and the owner's lock held.
 */
static bool hwpmc_pmc_unlink(struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	hwpmc_pmc_stop(pm);
	WRITE_ONCE(pm->state, PMC_STATE_DELETED);
	if (!hwpmc_is_system(pm))
		hwpmc_detach_all(pm);
	pm->cls->ops->release(pm);
	hwpmc_readpage_pmc_free(pm);
	if (pm->mode == PMC_MODE_SS)
		hwpmc_maps_sys_sampler_del(pm);
	if (!hwpmc_is_sampling(pm))
		return false;
	hwpmc_hook_put(HWPMC_HOOK_MAPS);
	return true;
}

/*
 * Between the halves of releasing sampling PMCs: the grace period waits
 * for every sampler (NMI, interrupt, hook) that could still see them, the
 * drain logs what they left in the rings, so that samples taken until the
 * release go to the log before the PMCs go.  One wait for any number of
 * PMCs, and without hwpmc_sx (held on entry and on return, dropped
 * meanwhile): a user who releases many sampling PMCs, or closes an owner
 * that has them, stalls no one else's operations for a grace period each.
 * The owner's lock, held throughout, keeps the PMCs its own; they stay
 * DELETED, in its list and on their rows meanwhile, which every walk
 * under hwpmc_sx leaves alone (hwpmc_pmc_stop() of a PMC not running does
 * nothing, and a row stays claimed).
 */
static void hwpmc_pmcs_quiesce(void)
{
	lockdep_assert_held(&hwpmc_sx);
	mutex_unlock(&hwpmc_sx);
	synchronize_rcu();
	hwpmc_samples_drain();
	mutex_lock(&hwpmc_sx);
}

/*
 * Releasing a PMC, second half: its row, handle and charges go, and the
 * PMC itself after a grace period (hooks may still be looking at it).
 * hwpmc_sx and the owner's lock held.
 */
static void hwpmc_pmc_finish(struct hwpmc_owner *po, struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	if (hwpmc_is_sampling(pm)) {
		/* Its samples are logged: its stack areas may go. */
		hwpmc_sample_owner_del(po);
		if (pm->flags & PMC_F_USERSTACK)
			hwpmc_samples_ustack_put(pm->ustack_size);
	}
	hwpmc_row_unclaim(pm);
	hwpmc_pmc_unindex(po, pm->id);
	po->npmcs--;
	atomic_dec(&po->user->pmcs);
	hwpmc_pmc_hooks_put();
	hwpmc_pmc_free_rcu(pm);
}

/*
 * The end of a release of PMCs just unlinked (DELETED): one grace period
 * for them all if any of them samples, then each one finished.  The PMCs
 * are those of @ids[0..@n) (0 and handles that name none skipped), or
 * every PMC of @po when @ids is NULL.  Whatever of @po is DELETED was
 * unlinked by its caller: the owner's lock, held by every release from
 * its unlink to its finish, lets no other in between.  hwpmc_sx and the
 * owner's lock held.
 */
static void hwpmc_pmcs_finish(struct hwpmc_owner *po, bool sampling,
			      const u32 *ids, unsigned int n)
{
	struct hwpmc_pmc *pm;
	unsigned int i;
	int id;

	hwpmc_owner_assert_held(po);
	if (sampling)
		hwpmc_pmcs_quiesce();
	if (!ids) {
		idr_for_each_entry(&po->pmcs, pm, id)
			hwpmc_pmc_finish(po, pm);
		return;
	}
	for (i = 0; i < n; i++) {
		pm = ids[i] && ids[i] <= INT_MAX ?
		     idr_find(&po->pmcs, ids[i]) : NULL;
		if (pm && pm->state == PMC_STATE_DELETED)
			hwpmc_pmc_finish(po, pm);
	}
}

/* Owner gone (close of /dev/hwpmc): release everything it had. */
static void hwpmc_owner_release_all(struct hwpmc_owner *po)
{
	struct hwpmc_pmc *pm;
	bool sampling = false;
	int id;

	lockdep_assert_held(&hwpmc_sx);
	idr_for_each_entry(&po->pmcs, pm, id)
		sampling |= hwpmc_pmc_unlink(pm);
	hwpmc_pmcs_finish(po, sampling, NULL, 0);
	/* No target left to queue one (hwpmc_proc_exit()): none pending. */
	cancel_work_sync(&po->sigio_work);
}

/*
 * Owner gone (close of /dev/hwpmc, a kernel owner freed): dead from now on
 * (no new PMC: ESRCH), everything it had released.  Takes po->lock (or
 * its caller holds it: _locked), then hwpmc_sx.
 */
void hwpmc_owner_kill_locked(struct hwpmc_owner *po)
{
	lockdep_assert_held(&po->lock);
	mutex_lock(&hwpmc_sx);
	po->dead = true;
	hwpmc_owner_release_all(po);
	mutex_unlock(&hwpmc_sx);
	hwpmc_readpage_owner_dead(po);
}

void hwpmc_owner_kill(struct hwpmc_owner *po)
{
	mutex_lock(&po->lock);
	hwpmc_owner_kill_locked(po);
	mutex_unlock(&po->lock);
}

int hwpmc_op_pmcrelease(struct hwpmc_owner *po, struct pmc_op_simple *a)
{
	if (a->pm_reserved)
		return -EINVAL;
	return hwpmc_pmcs_release(po, &a->pm_pmcid, 1);
}

/*
 * Release the PMCs of @po whose handles are @ids[0..@n) (0: none), with
 * one grace period for them all.  0, or the error of the first handle
 * that names no PMC (the others are released).  hwpmc_sx and the owner's
 * lock held (hwpmc_sx dropped meanwhile: hwpmc_pmcs_quiesce()).
 */
int hwpmc_pmcs_release(struct hwpmc_owner *po, const u32 *ids,
		       unsigned int n)
{
	struct hwpmc_pmc *pm;
	bool sampling = false;
	unsigned int i;
	int err, ret = 0;

	for (i = 0; i < n; i++) {
		if (!ids[i])
			continue;
		pm = hwpmc_find(po, ids[i], &err);
		if (!pm) {
			ret = ret ?: err;
			continue;
		}
		/* A handle given twice: unlinked once. */
		if (pm->state != PMC_STATE_DELETED)
			sampling |= hwpmc_pmc_unlink(pm);
	}
	hwpmc_pmcs_finish(po, sampling, ids, n);
	return ret;
}

/* May @pm start now?  hwpmc_sx held. */
static int hwpmc_start_check(struct hwpmc_owner *po, struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	if (hwpmc_is_system(pm) && !cpu_online(pm->cpu))
		return -ENXIO;
	/* No log file configured, or it is being closed (a kernel owner
	 * that consumes its samples itself needs none).
	 */
	if (hwpmc_needs_log(pm) && !po->ksample && !hwpmc_log_usable(po))
		return -HWPMC_EDOOFUS;
	return 0;
}

/* A task reference to the owner process, or NULL if it is gone. */
static struct task_struct *hwpmc_owner_task(struct hwpmc_owner *po)
{
	return get_pid_task(po->pid, PIDTYPE_TGID);
}

/* PMCATTACH record, with the path of the target's executable. */
static void hwpmc_log_attach(struct hwpmc_pmc *pm, struct task_struct *task)
{
	struct mm_struct *mm;
	struct file *exe = NULL;
	char *buf, *path = NULL;

	if (!hwpmc_has_log(pm->po))
		return;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	mm = get_task_mm(task);
	if (mm) {
		exe = hwpmc_get_mm_exe_file(mm);
		mmput(mm);
	}
	if (buf && exe) {
		path = d_path(&exe->f_path, buf, PATH_MAX);
		if (IS_ERR(path))
			path = NULL;
	}
	hwpmc_log_pmcattach(pm, task_tgid_nr(task), path);
	if (exe)
		fput(exe);
	kfree(buf);
	hwpmc_maps_log_task(pm->po, task);
}

/*
 * PMCSTART runs with the owner's lock only and takes hwpmc_sx itself: a
 * PMC never attached attaches first, which may wait for its owner's
 * exec_update_lock and mmap lock, a system sampler's MAP_IN records
 * take every process's mmap lock, and the class's sync waits for every
 * CPU (a stalled one stalls this owner only).
 */
int hwpmc_op_pmcstart(struct hwpmc_owner *po, struct pmc_op_simple *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, !a->pm_reserved, &err);
	if (!pm)
		return err;
	err = mutex_lock_killable(&hwpmc_sx);
	if (err)
		return err;
	err = hwpmc_start_check(po, pm);
	mutex_unlock(&hwpmc_sx);
	if (err)
		return err;
	if (!hwpmc_is_system(pm) && !pm->ntargets) {
		struct task_struct *task;

		/*
		 * Detached from all its targets, explicitly or because they
		 * exited: nothing to count (FreeBSD: PMC_F_ATTACH_DONE).
		 */
		if (pm->pflags & (HWPMC_PF_ATTACHED_ONCE | HWPMC_PF_DETACHED_ALL))
			return -ESRCH;
		/*
		 * Never attached: attach to the owner, as hwpmc(4) says.  The
		 * caller may be another process holding the owner's open
		 * (inherited, or passed over a socket), and the owner may have
		 * exec'd a set-id program since it opened: the caller must be
		 * allowed to attach to the owner as to any process.
		 */
		task = hwpmc_owner_task(po);
		if (!task)
			return -ESRCH;
		err = hwpmc_attach_checked(pm, task);
		if (!err)
			hwpmc_log_attach(pm, task);
		put_task_struct(task);
		if (err)
			return err;
	}
	if (pm->state != PMC_STATE_RUNNING && pm->cls->ops->sync)
		pm->cls->ops->sync(pm);
	err = mutex_lock_killable(&hwpmc_sx);
	if (err)
		return err;
	/* The log may have gone or the CPU offline while attaching. */
	err = hwpmc_start_check(po, pm);
	if (!err && pm->state != PMC_STATE_RUNNING) {
		/* The class may have published RUNNING already (its ops). */
		pm->cls->ops->start(pm);
		WRITE_ONCE(pm->state, PMC_STATE_RUNNING);
		hwpmc_readpage_state(pm);
	} else {
		a = NULL;	/* running already, or failed: no MAP_IN */
	}
	mutex_unlock(&hwpmc_sx);
	/* A sampler's timers where its targets run now. */
	if (a && hwpmc_is_sampling(pm) && pm->cls->ops->sync)
		pm->cls->ops->sync(pm);
	/* System sampling can hit any process: log all their mappings. */
	if (a && pm->mode == PMC_MODE_SS)
		hwpmc_maps_log_all(po);
	return err;
}

/* PMCSTOP's stop of @pm: hwpmc_sx and the owner's lock held. */
static int hwpmc_pmc_stop_online(struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	if (hwpmc_is_system(pm) && !cpu_online(pm->cpu))
		return -ENXIO;
	hwpmc_pmc_stop(pm);
	return 0;
}

/* Stop @a's PMC: hwpmc_sx and the owner's lock held (kctr). */
int hwpmc_pmc_stop_locked(struct hwpmc_owner *po, struct pmc_op_simple *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, !a->pm_reserved, &err);
	return pm ? hwpmc_pmc_stop_online(pm) : err;
}

/*
 * PMCSTOP runs with the owner's lock only: the class's sync, which waits
 * for every CPU, comes first, then hwpmc_sx for the stop itself.
 */
int hwpmc_op_pmcstop(struct hwpmc_owner *po, struct pmc_op_simple *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, !a->pm_reserved, &err);
	if (!pm)
		return err;
	if (hwpmc_running(pm) && pm->cls->ops->sync)
		pm->cls->ops->sync(pm);
	err = mutex_lock_killable(&hwpmc_sx);
	if (err)
		return err;
	err = hwpmc_pmc_stop_online(pm);
	mutex_unlock(&hwpmc_sx);
	return err;
}

/*
 * PMCRW runs with the owner's lock only (no hwpmc_sx): a PMC's value is
 * the owner's, and the class's read and write need no global lock.
 */
int hwpmc_op_pmcrw(struct hwpmc_owner *po, struct pmc_op_pmcrw *a)
{
	struct hwpmc_pmc *pm;
	u64 old;
	int err;

	/* hwpmc(4): neither NEWVALUE nor OLDVALUE is EINVAL too. */
	if (!a->pm_flags || (a->pm_flags & ~PMC_F_RW_MASK))
		return -EINVAL;
	pm = hwpmc_find(po, a->pm_pmcid, &err);
	if (!pm)
		return err;
	if (hwpmc_is_sampling(pm))
		return -EINVAL;		/* counting modes only */
	if (a->pm_flags & PMC_F_NEWVALUE) {
		/* Or still stopping: a log's removal stops without po->lock. */
		if (pm->state == PMC_STATE_RUNNING ||
		    READ_ONCE(pm->clock_stopping))
			return -EBUSY;
		if (!pm->cls->ops->write)
			return -EOPNOTSUPP;
	}
	/* hwpmc(4) Signals: a process PMC without targets raises SIGIO. */
	if (!hwpmc_is_system(pm) && !READ_ONCE(pm->ntargets))
		hwpmc_signal_pid(po->pid, SIGIO);
	hwpmc_pmc_settle(pm);
	old = pm->cls->ops->read(pm);
	if (a->pm_flags & PMC_F_NEWVALUE) {
		pm->cls->ops->write(pm, a->pm_value);
		hwpmc_readpage_wrote(pm);
	}
	if (a->pm_flags & PMC_F_OLDVALUE)
		a->pm_value = old;
	return 0;
}

/*
 * PMCSETCOUNT, with the owner's lock only, as PMCRW: the PMC is the
 * owner's, and hwpmc_pmc_settle() may wait for a grace period.
 */
int hwpmc_op_pmcsetcount(struct hwpmc_owner *po, struct pmc_op_pmcsetcount *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, !a->pm_reserved, &err);
	if (!pm)
		return err;
	if (pm->state == PMC_STATE_RUNNING || READ_ONCE(pm->clock_stopping))
		return -EBUSY;
	if (hwpmc_is_sampling(pm)) {
		if (!a->pm_count ||
		    !hwpmc_period_ok(pm->cls, pm->event, a->pm_count))
			return -EINVAL;
		WRITE_ONCE(pm->reload, a->pm_count);
		return 0;
	}
	if (!pm->cls->ops->write)
		return -EOPNOTSUPP;
	hwpmc_pmc_settle(pm);
	pm->cls->ops->write(pm, a->pm_count);
	hwpmc_readpage_wrote(pm);
	return 0;
}

/* GETREADSLOT: the PMC's read-page slot (hwpmc_readpage.c). */
int hwpmc_op_getreadslot(struct hwpmc_owner *po, struct pmc_op_getreadslot *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, !a->pm_reserved, &err);
	if (!pm)
		return err;
	return hwpmc_readpage_getslot(pm, a);
}

/* The task a PMCATTACH/PMCDETACH names, with a reference. */
static int hwpmc_target_task(s32 pid, struct task_struct **taskp)
{
	struct pid *p;

	if (pid < 0)
		return -EINVAL;
	if (pid == PMC_PID_SELF) {
		get_task_struct(current);
		*taskp = current;
		return 0;
	}
	p = find_get_pid(pid);
	*taskp = p ? get_pid_task(p, PIDTYPE_PID) : NULL;
	put_pid(p);
	return *taskp ? 0 : -ESRCH;
}

/*
 * PMCATTACH runs with the owner's lock only: it waits for the target's
 * exec_update_lock and mmap lock (killably), which its owner controls.
 */
int hwpmc_op_pmcattach(struct hwpmc_owner *po, struct pmc_op_pmcattach *a)
{
	struct task_struct *task;
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, HWPMC_RESERVED_ZERO(a->pm_reserved),
			   &err);
	if (!pm)
		return err;
	if (hwpmc_is_system(pm))
		return -EINVAL;
	/*
	 * As FreeBSD: attached only while allocated or stopped.  A running
	 * PMC whose targets all exited counts nothing and may be attached
	 * again (hwpmc(4) ESRCH: "after the PMC was detached from all of its
	 * target processes").
	 */
	if (hwpmc_running(pm) && READ_ONCE(pm->ntargets))
		return -EBUSY;
	/* hwpmc(4): its MSR was handed out, so it stays with its owner. */
	if (pm->pflags & HWPMC_PF_MSR_TAKEN)
		return -EPERM;
	err = hwpmc_target_task(a->pm_pid, &task);
	if (err)
		return err;
	err = hwpmc_attach_checked(pm, task);
	if (!err)
		hwpmc_log_attach(pm, task);
	put_task_struct(task);
	return err;
}

int hwpmc_op_pmcdetach(struct hwpmc_owner *po, struct pmc_op_pmcattach *a)
{
	struct task_struct *task;
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, HWPMC_RESERVED_ZERO(a->pm_reserved),
			   &err);
	if (!pm)
		return err;
	if (hwpmc_is_system(pm))
		return -EINVAL;
	err = hwpmc_target_task(a->pm_pid, &task);
	if (err)
		return err;
	err = hwpmc_detach(pm, task);
	if (!err)
		hwpmc_log_pmcdetach(pm, task_tgid_nr(task));
	/* Detached from its owner: user RDPMC no longer applies. */
	if (!err && pm->cls->ops->revoke_msr)
		pm->cls->ops->revoke_msr(pm);
	put_task_struct(task);
	return err;
}

int hwpmc_op_getcaps(struct hwpmc_owner *po, struct pmc_op_caps *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find(po, a->pm_pmcid, &err);
	if (pm)
		a->pm_caps = pm->caps;
	return err;
}

int hwpmc_op_getmsr(struct hwpmc_owner *po, struct pmc_op_getmsr *a)
{
	struct hwpmc_pmc *pm;
	int err;

	pm = hwpmc_find_op(po, a->pm_pmcid, HWPMC_RESERVED_ZERO(a->pm_reserved),
			   &err);
	if (!pm)
		return err;
	if (hwpmc_is_system(pm) || (pm->flags & PMC_F_DESCENDANTS) ||
	    !hwpmc_only_owner_attached(pm))
		return -EINVAL;
	/* A class without RDPMC: ENOSYS on FreeBSD. */
	if (!pm->cls->ops->get_msr)
		return -EOPNOTSUPP;
	err = pm->cls->ops->get_msr(pm, &a->pm_msr);
	if (!err)
		pm->pflags |= HWPMC_PF_MSR_TAKEN;
	return err;
}

static void hwpmc_fill_info(struct hwpmc_owner *po, struct pmc_info *pi,
			    unsigned int r, unsigned int cpu)
{
	const struct hwpmc_class *cls = hwpmc_class_of_row(r);
	struct hwpmc_row *row = &hwpmc_rows[r];
	struct hwpmc_pmc *pm = row->sys[cpu];

	lockdep_assert_held(&hwpmc_sx);
	snprintf(pi->pm_name, sizeof(pi->pm_name), "%s-%u", cls->ops->name,
		 r - cls->firstrow);
	pi->pm_class = cls->ops->class;
	pi->pm_enabled = !test_bit(cpu, row->disabled);
	pi->pm_rowdisp = row->disp > 0 ? PMC_DISP_THREAD :
			 row->disp < 0 ? PMC_DISP_STANDALONE : PMC_DISP_FREE;
	/* As the caller's owner sees it: 0 if it cannot see that process. */
	pi->pm_ownerpid = pm ? pid_nr_ns(pm->po->pid, po->pid_ns) : -1;
	pi->pm_mode = pm ? pm->mode : PMC_MODE_INVALID;
	/* FreeBSD's global event number, as pmc_name_of_event() takes it. */
	pi->pm_event = pm ? HWPMC_EV_GLOBAL(cls->ops->class, pm->event) : 0;
	pi->pm_flags = pm ? pm->flags : 0;
	pi->pm_reloadcount = pm ? READ_ONCE(pm->reload) : 0;
	if (cls->ops->unavailable &&
	    cls->ops->unavailable(cls, r - cls->firstrow))
		pi->pm_unavailable = 1;
	if (pm)
		pi->pm_state = pm->state;
	else if (!pi->pm_enabled)
		pi->pm_state = PMC_STATE_DISABLED;
	else if (row->nshared[cpu])
		pi->pm_state = PMC_STATE_ALLOCATED;
	else
		pi->pm_state = PMC_STATE_FREE;
}

/*
 * GETPMCINFO runs without hwpmc_sx (see hwpmc_ioctl.c): the rows are read
 * into a kernel buffer under it, and copied out after it is dropped, so a
 * user buffer that faults slowly (userfaultfd, FUSE) stalls nobody else.
 */
int hwpmc_op_getpmcinfo(struct hwpmc_owner *po, struct pmc_op_getpmcinfo *a)
{
	struct pmc_info *info;
	unsigned int r, n = hwpmc_rows_n;
	int err = 0;

	if (!HWPMC_RESERVED_ZERO(a->pm_reserved))
		return -EINVAL;
	if (a->pm_cpu >= nr_cpu_ids)
		return -EINVAL;
	if (!a->pm_info || a->pm_npmc < n) {
		mutex_lock(&hwpmc_sx);
		err = cpu_online(a->pm_cpu) ? 0 : -ENXIO;
		mutex_unlock(&hwpmc_sx);
		if (err)
			return err;
		err = a->pm_info ? -E2BIG : 0;
		a->pm_npmc = n;
		return err;
	}
	info = kvcalloc(n, sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	mutex_lock(&hwpmc_sx);
	if (cpu_online(a->pm_cpu)) {
		for (r = 0; r < n; r++)
			hwpmc_fill_info(po, &info[r], r, a->pm_cpu);
	} else {
		err = -ENXIO;
	}
	mutex_unlock(&hwpmc_sx);
	if (!err && copy_to_user(u64_to_user_ptr(a->pm_info), info,
				 n * sizeof(*info)))
		err = -EFAULT;
	kvfree(info);
	a->pm_npmc = n;
	return err;
}

int hwpmc_op_pmcadmin(struct hwpmc_owner *po, struct pmc_op_pmcadmin *a)
{
	struct hwpmc_row *row;
	bool disabled;

	if (!hwpmc_priv_admin())
		return -EPERM;
	if (a->pm_flags)
		return -EINVAL;
	if (a->pm_cpu >= nr_cpu_ids)
		return -EINVAL;
	if (a->pm_pmcid >= hwpmc_rows_n)
		return -EINVAL;
	if (a->pm_state != PMC_STATE_DISABLED && a->pm_state != PMC_STATE_FREE)
		return -EINVAL;
	if (!cpu_online(a->pm_cpu))
		return -ENXIO;
	row = &hwpmc_rows[a->pm_pmcid];
	/* A system PMC is allocated here: leave it alone. */
	if (row->sys[a->pm_cpu] || row->nshared[a->pm_cpu])
		return -EBUSY;
	disabled = test_bit(a->pm_cpu, row->disabled);
	if (a->pm_state == PMC_STATE_DISABLED) {
		if (row->disp > 0)
			return -EBUSY;	/* process-scope PMCs use the row */
		if (!disabled) {
			set_bit(a->pm_cpu, row->disabled);
			row->disp--;
		}
	} else if (disabled) {
		clear_bit(a->pm_cpu, row->disabled);
		row->disp++;
	}
	return 0;
}
