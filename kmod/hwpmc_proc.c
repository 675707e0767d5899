// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: process-scope targets.  Monitored processes live in a hash keyed
 * by their signal_struct, which all threads of a process share, so every
 * thread (also threads created after attach) finds the process's targets.
 * Readers (the hooks) walk it under RCU; writers hold hwpmc_proc_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/pid.h>
#include <linux/binfmts.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <linux/mount.h>
#include <linux/file.h>
#include <linux/proc_fs.h>
#include <linux/pid_namespace.h>

#include "hwpmc.h"

DEFINE_RAW_SPINLOCK(hwpmc_proc_lock);
/* The process hash (hwpmc_proc_find(), inline), set up once at load. */
struct hlist_head *hwpmc_proc_hash __read_mostly;
unsigned int hwpmc_proc_bits __read_mostly;
static atomic_t hwpmc_nprocs;		/* monitored processes */
/* Targets of PMC_F_LOG_PROCCSW PMCs: the switch hook looks only then. */
atomic_t hwpmc_ncsw_targets;

static void hwpmc_reserve_fill(struct work_struct *work);
static void hwpmc_reserve_free(void);

int hwpmc_proc_init(void)
{
	unsigned int i, n = roundup_pow_of_two(hwpmc_hashsize);

	hwpmc_proc_bits = ilog2(n);
	/* Attach asks the LSM through hwpmc_priv.c's procfs: none, no load. */
	if (!hwpmc_priv_procfs_ready()) {
		pr_err("cannot mount procfs for the LSM ptrace checks\n");
		return -ENOENT;
	}
	hwpmc_proc_hash = kvcalloc(n, sizeof(*hwpmc_proc_hash), GFP_KERNEL);
	if (!hwpmc_proc_hash) {
		hwpmc_proc_fini();
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&hwpmc_proc_hash[i]);
	hwpmc_reserve_fill(NULL);
	return 0;
}

/* Every PMC was released before this: the hash is empty. */
void hwpmc_proc_fini(void)
{
	hwpmc_reserve_free();
	kvfree(hwpmc_proc_hash);
	hwpmc_proc_hash = NULL;
}

static struct hlist_head *hwpmc_proc_bucket(struct signal_struct *sig)
{
	return &hwpmc_proc_hash[hash_ptr(sig, hwpmc_proc_bits)];
}

/* The pid reference goes here too: no freeing under the raw lock. */
static void hwpmc_proc_free_rcu(struct rcu_head *head)
{
	struct hwpmc_process *pp = container_of(head, struct hwpmc_process,
						rcu);

	put_pid(pp->pid);
	kfree(pp);
}

/*
 * Walks of a PMC's targets in batches.  A PMC can have as many targets as
 * its owner can make processes (PMC_F_DESCENDANTS), so no walk holds
 * hwpmc_proc_lock, a global lock taken by the fork and exit hooks, for
 * more than HWPMC_TARGETS_BATCH of them: between batches the lock is
 * dropped, and interrupts are on.  A walk in progress is on its PMC's
 * walks list, where an unlink moves it past the target that leaves, so
 * that it never stands on a freed target.  Targets are linked at the
 * tail: a walk bounded at its start (a start's or a stop's, under
 * hwpmc_sx) ends at the last target then, before those linked meanwhile,
 * so a fork storm cannot make it longer; an unbounded one (the owner's
 * detach) visits them too.
 */
#define HWPMC_TARGETS_BATCH	64

struct hwpmc_walk {
	struct list_head node;		/* in pm->walks */
	struct list_head *next;		/* in pm->targets; the head: done */
	struct list_head *last;		/* bounded: the last to visit */
	bool done;			/* bounded: last visited, or gone */
};

static void hwpmc_walk_begin(struct hwpmc_pmc *pm, struct hwpmc_walk *w,
			     bool bounded)
{
	lockdep_assert_held(&hwpmc_proc_lock);
	w->next = pm->targets.next;
	w->last = bounded ? pm->targets.prev : NULL;
	w->done = false;
	list_add(&w->node, &pm->walks);
}

static void hwpmc_walk_end(struct hwpmc_walk *w)
{
	lockdep_assert_held(&hwpmc_proc_lock);
	list_del(&w->node);
}

/* The walk's next target (NULL: the end), which it steps past. */
static struct hwpmc_target *hwpmc_walk_next(struct hwpmc_pmc *pm,
					    struct hwpmc_walk *w)
{
	struct list_head *pos = w->next;

	lockdep_assert_held(&hwpmc_proc_lock);
	if (w->done || pos == &pm->targets)
		return NULL;
	w->next = pos->next;
	w->done = pos == w->last;
	return list_entry(pos, struct hwpmc_target, pm_node);
}

static bool hwpmc_walk_done(struct hwpmc_pmc *pm, struct hwpmc_walk *w)
{
	lockdep_assert_held(&hwpmc_proc_lock);
	return w->done || w->next == &pm->targets;
}

/*
 * @pt was just linked at the tail: an unbounded walk that was done goes
 * on to it (a bounded one ends at its last).
 */
static void hwpmc_walks_extend(struct hwpmc_pmc *pm, struct hwpmc_target *pt)
{
	struct hwpmc_walk *w;

	lockdep_assert_held(&hwpmc_proc_lock);
	list_for_each_entry(w, &pm->walks, node)
		if (!w->last && w->next == &pm->targets)
			w->next = &pt->pm_node;
}

/*
 * @pt leaves @pm's list: the walks that would visit it next skip it, and
 * a bounded walk whose last it was ends at the one before it (which is
 * not behind its cursor), or now if it was next.
 */
static void hwpmc_walks_skip(struct hwpmc_pmc *pm, struct hwpmc_target *pt)
{
	struct list_head *node = &pt->pm_node;
	struct hwpmc_walk *w;

	lockdep_assert_held(&hwpmc_proc_lock);
	list_for_each_entry(w, &pm->walks, node) {
		if (w->last == node) {
			if (w->next == node)
				w->done = true;
			else
				w->last = node->prev;
		}
		if (w->next == node)
			w->next = node->next;
	}
}

/*
 * A counting by_clock target's pending time goes into its value and its
 * PMC's.  Inside a write section of the PMC's clock_seq, hwpmc_proc_lock
 * held.
 */
static inline void hwpmc_target_bank(struct hwpmc_target *pt)
{
	u64 now = atomic64_read(&pt->pp->clock);
	s64 d = now - pt->clock_base;

	lockdep_assert_held(&hwpmc_proc_lock);
	WRITE_ONCE(pt->clock_base, now);
	if (d <= 0)
		return;
	atomic64_add(d, &pt->value);
	atomic64_add(d, &pt->pm->value);
}

/*
 * A by_clock PMC starts (@on, class op start) or stops: each target counts
 * its process's clock from its base, set here (start), or its time so far
 * goes into the values, which hold the count from here on (stop); a batch
 * of targets at a time, each batch a write section of clock_seq, so that
 * readers see each target's value, base and clock_on as one. A stop
 * publishes STOPPED in its first section and a start RUNNING in its last:
 * readers add the in-flight time of a running thread
 * (soft_prof_credited()) only between the two, when every target counts. A
 * target's count starts or stops at its batch, inside the system call; one
 * linked during a start's walk counts from its link (clock_starting), one
 * linked during a stop's does not count (STOPPED). The walk holds
 * hwpmc_sx, a global mutex, so it does not reschedule between batches: a
 * reschedule is a wait its owner controls (a SCHED_IDLE caller on a busy
 * CPU may wait long for the CPU back), and there would be one every batch;
 * its length is bounded by the targets when it starts. (A kernel that
 * preempts anywhere may still preempt it between batches, as anywhere else
 * under hwpmc_sx.) Interrupts are off in every clock_seq write section:
 * the switch hook reads it (PROCCSW) under a runqueue lock, which an
 * interrupt on the writer's CPU could want (a wakeup), and the reader
 * would spin on a writer that waits for it. hwpmc_sx held (one start or
 * stop of a PMC at a time).
 */
static void hwpmc_targets_clock(struct hwpmc_pmc *pm, bool on)
{
	struct list_head *pos, *head = &pm->targets;
	struct hwpmc_target *pt;
	struct hwpmc_walk w;
	unsigned int n;
	bool last;

	lockdep_assert_held(&hwpmc_sx);
	raw_spin_lock_irq(&hwpmc_proc_lock);
	hwpmc_walk_begin(pm, &w, true);
	pm->clock_starting = on;
	write_seqcount_begin(&pm->clock_seq);
	if (!on) {
		WRITE_ONCE(pm->state, PMC_STATE_STOPPED);
		WRITE_ONCE(pm->clock_stopping, true);
	}
	for (;;) {
		/*
		 * The cursor in registers for the batch (no unlink meanwhile);
		 * a loop each way, for the walk's few instructions a target.
		 */
		pos = w.next;
		last = w.done;
		for (n = 0; on && n < HWPMC_TARGETS_BATCH && !last &&
		     pos != head; n++, pos = pos->next) {
			pt = list_entry(pos, struct hwpmc_target, pm_node);
			last = pos == w.last;
			WRITE_ONCE(pt->clock_base,
				   atomic64_read(&pt->pp->clock));
			WRITE_ONCE(pt->clock_on, true);
		}
		for (n = 0; !on && n < HWPMC_TARGETS_BATCH && !last &&
		     pos != head; n++, pos = pos->next) {
			pt = list_entry(pos, struct hwpmc_target, pm_node);
			last = pos == w.last;
			if (pt->clock_on)
				hwpmc_target_bank(pt);
			WRITE_ONCE(pt->clock_on, false);
		}
		w.next = pos;
		w.done = last;
		if (hwpmc_walk_done(pm, &w))
			break;
		write_seqcount_end(&pm->clock_seq);
		/* Interrupts and the hooks' waiters in; no reschedule: above. */
		raw_spin_unlock_irq(&hwpmc_proc_lock);
		raw_spin_lock_irq(&hwpmc_proc_lock);
		write_seqcount_begin(&pm->clock_seq);
	}
	if (on)
		WRITE_ONCE(pm->state, PMC_STATE_RUNNING);
	WRITE_ONCE(pm->clock_stopping, false);
	write_seqcount_end(&pm->clock_seq);
	pm->clock_starting = false;
	hwpmc_walk_end(&w);
	raw_spin_unlock_irq(&hwpmc_proc_lock);
}

void hwpmc_targets_start(struct hwpmc_pmc *pm)
{
	hwpmc_targets_clock(pm, true);
}

void hwpmc_targets_stop(struct hwpmc_pmc *pm)
{
	hwpmc_targets_clock(pm, false);
}

/*
 * @pt leaves its PMC's list.  A by_clock one's count stays in the PMC's
 * value: banked and gone from the list as one, for readers that sum the
 * targets.  hwpmc_proc_lock held.
 */
static void hwpmc_target_leave(struct hwpmc_target *pt)
{
	struct hwpmc_pmc *pm = pt->pm;
	unsigned long flags;

	lockdep_assert_held(&hwpmc_proc_lock);
	hwpmc_walks_skip(pm, pt);
	if (!pm->by_clock) {
		list_del_rcu(&pt->pm_node);
		return;
	}
	/* Interrupts off in the write section, see hwpmc_targets_clock(). */
	local_irq_save(flags);
	write_seqcount_begin(&pm->clock_seq);
	if (pt->clock_on)
		hwpmc_target_bank(pt);
	/* A reader that still holds it adds nothing more. */
	WRITE_ONCE(pt->clock_on, false);
	list_del_rcu(&pt->pm_node);
	write_seqcount_end(&pm->clock_seq);
	local_irq_restore(flags);
}

/* Unlink one target; drop the process when it has no targets left. */
static void hwpmc_unlink_target(struct hwpmc_target *pt)
{
	struct hwpmc_process *pp = pt->pp;

	lockdep_assert_held(&hwpmc_proc_lock);
	list_del_rcu(&pt->pp_node);
	hwpmc_target_leave(pt);
	pt->pm->ntargets--;
	hwpmc_readpage_sync(pt->pm);
	if (pt->pm->flags & PMC_F_LOG_PROCCSW) {
		atomic_dec(&hwpmc_ncsw_targets);
		hwpmc_switch_gate_put(HWPMC_GATE_PREV);
	}
	kfree_rcu(pt, rcu);
	if (list_empty(&pp->targets)) {
		atomic_dec(&hwpmc_nprocs);
		hlist_del_rcu(&pp->hnode);
		call_rcu(&pp->rcu, hwpmc_proc_free_rcu);
	}
}

/* The thread group is past the point of no return. */
static bool hwpmc_task_dying(struct task_struct *task)
{
	return !pid_alive(task) || (task->flags & PF_EXITING) ||
	       atomic_read(&task->signal->live) == 0;
}

/*
 * Link @pm to @task's process, with objects the caller allocated (any
 * that are used are set to NULL).  hwpmc_proc_lock held.
 */
static int hwpmc_link(struct hwpmc_pmc *pm, struct task_struct *task,
		      bool priv, struct hwpmc_process **newpp,
		      struct hwpmc_target **newpt)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;

	lockdep_assert_held(&hwpmc_proc_lock);
	/* Count the process before looking at whether it is dying... */
	atomic_inc(&hwpmc_nprocs);
	/*
	 * ...with a full barrier, paired with hwpmc_proc_exit(): the exit
	 * decrements signal->live (a full barrier too) before the hook reads
	 * hwpmc_nprocs, so either the hook sees this count and looks the
	 * process up under hwpmc_proc_lock, after this link, or this sees
	 * the process dying.
	 */
	smp_mb__after_atomic();
	if (hwpmc_task_dying(task))
		goto uncount;
	pp = hwpmc_proc_find(task->signal);
	if (pp) {
		atomic_dec(&hwpmc_nprocs);	/* counted already */
		list_for_each_entry(pt, &pp->targets, pp_node) {
			if (pt->pm == pm)
				return -EEXIST;
			if (pt->pm->row == pm->row)
				return -EBUSY;
		}
	} else {
		pp = *newpp;
		*newpp = NULL;
		pp->sig = task->signal;
		pp->pid = get_pid(task_tgid(task));
		INIT_LIST_HEAD(&pp->targets);
		atomic64_set(&pp->clock, 0);
		hlist_add_head_rcu(&pp->hnode, hwpmc_proc_bucket(pp->sig));
	}
	pt = *newpt;
	*newpt = NULL;
	pt->pp = pp;
	pt->pm = pm;
	pt->priv = priv;
	atomic64_set(&pt->value, 0);
	atomic64_set(&pt->csw_mark, 0);
	/*
	 * Counts the clock from here while its PMC runs, or is starting
	 * (its start's walk ends before it).
	 */
	pt->clock_base = atomic64_read(&pp->clock);
	pt->clock_on = pm->by_clock &&
		       (hwpmc_running(pm) || pm->clock_starting);
	/* PROCCSW records of the outgoing task's switches, from now. */
	if (pm->flags & PMC_F_LOG_PROCCSW)
		hwpmc_switch_gate_get(HWPMC_GATE_PREV);
	list_add_tail_rcu(&pt->pm_node, &pm->targets);
	hwpmc_walks_extend(pm, pt);
	list_add_tail_rcu(&pt->pp_node, &pp->targets);
	pm->ntargets++;
	hwpmc_readpage_sync(pm);
	if (pm->flags & PMC_F_LOG_PROCCSW)
		atomic_inc(&hwpmc_ncsw_targets);
	pm->pflags |= HWPMC_PF_ATTACHED_ONCE;
	pm->pflags &= ~HWPMC_PF_DETACHED_ALL;
	return 0;

uncount:
	atomic_dec(&hwpmc_nprocs);
	return -ESRCH;
}

/*
 * The fork hook links a new process to the PMCs it inherits in tracepoint
 * context (preemption off, hwpmc_proc_lock held), where PREEMPT_RT allows
 * no allocation at all.  It takes its objects from a reserve, filled in
 * process context at load and refilled by a work item when it runs low.
 * An empty reserve fails the link (counted in GETDRIVERSTATS'
 * pm_alloc_failed): a fork storm may outrun the refill, as GFP_ATOMIC
 * could fail before.
 */
#define HWPMC_RESERVE		128
static struct hwpmc_process *hwpmc_pp_reserve[HWPMC_RESERVE];
static struct hwpmc_target *hwpmc_pt_reserve[HWPMC_RESERVE];
static unsigned int hwpmc_npp, hwpmc_npt;	/* hwpmc_proc_lock */

static void hwpmc_reserve_fill(struct work_struct *work)
{
	for (;;) {
		struct hwpmc_process *pp = NULL;
		struct hwpmc_target *pt = NULL;
		bool need_pp, need_pt, failed;

		raw_spin_lock(&hwpmc_proc_lock);
		need_pp = hwpmc_npp < HWPMC_RESERVE;
		need_pt = hwpmc_npt < HWPMC_RESERVE;
		raw_spin_unlock(&hwpmc_proc_lock);
		if (!need_pp && !need_pt)
			return;
		if (need_pp)
			pp = kzalloc(sizeof(*pp), GFP_KERNEL);
		if (need_pt)
			pt = kzalloc(sizeof(*pt), GFP_KERNEL);
		failed = (need_pp && !pp) || (need_pt && !pt);
		raw_spin_lock(&hwpmc_proc_lock);
		if (pp && hwpmc_npp < HWPMC_RESERVE) {
			hwpmc_pp_reserve[hwpmc_npp++] = pp;
			pp = NULL;
		}
		if (pt && hwpmc_npt < HWPMC_RESERVE) {
			hwpmc_pt_reserve[hwpmc_npt++] = pt;
			pt = NULL;
		}
		raw_spin_unlock(&hwpmc_proc_lock);
		kfree(pp);
		kfree(pt);
		if (failed)
			return;		/* out of memory: again at the next use */
	}
}

static DECLARE_WORK(hwpmc_reserve_work, hwpmc_reserve_fill);

static void hwpmc_reserve_free(void)
{
	cancel_work_sync(&hwpmc_reserve_work);
	while (hwpmc_npp)
		kfree(hwpmc_pp_reserve[--hwpmc_npp]);
	while (hwpmc_npt)
		kfree(hwpmc_pt_reserve[--hwpmc_npt]);
}

/*
 * Link with objects of the reserve (hooks): no allocation.  Lock held;
 * any context but NMI.
 */
static int hwpmc_link_reserved(struct hwpmc_pmc *pm, struct task_struct *task,
			       bool priv)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;
	int err;

	lockdep_assert_held(&hwpmc_proc_lock);
	if (!hwpmc_npp || !hwpmc_npt) {
		hwpmc_stat_inc(alloc_failed);
		schedule_work(&hwpmc_reserve_work);
		return -ENOMEM;
	}
	pp = hwpmc_pp_reserve[--hwpmc_npp];
	pt = hwpmc_pt_reserve[--hwpmc_npt];
	err = hwpmc_link(pm, task, priv, &pp, &pt);
	/* What the link did not use goes back. */
	if (pp)
		hwpmc_pp_reserve[hwpmc_npp++] = pp;
	if (pt)
		hwpmc_pt_reserve[hwpmc_npt++] = pt;
	if (hwpmc_npp < HWPMC_RESERVE / 2 || hwpmc_npt < HWPMC_RESERVE / 2)
		schedule_work(&hwpmc_reserve_work);
	return err;
}

/* @task's process's target of @pm, or NULL.  RCU held; any context. */
struct hwpmc_target *hwpmc_target_find(struct task_struct *task,
				       struct hwpmc_pmc *pm)
{
	struct hwpmc_process *pp = hwpmc_proc_find(task->signal);
	struct hwpmc_target *pt;

	if (pp)
		list_for_each_entry_rcu(pt, &pp->targets, pp_node)
			if (pt->pm == pm)
				return pt;
	return NULL;
}

/*
 * PMC_F_LOG_PROCCSW records for @task (current), switching out: each
 * carries what its target counted since the previous record.  The mark
 * only moves forward, by compare-and-exchange, so concurrent threads never
 * count an event twice and the records of a target add up to its count.
 */
static void hwpmc_proc_csw_out(struct hwpmc_process *pp,
			       struct task_struct *task)
{
	struct hwpmc_target *pt;

	list_for_each_entry_rcu(pt, &pp->targets, pp_node) {
		struct hwpmc_pmc *pm = pt->pm;
		s64 mark, cur;

		if (!(pm->flags & PMC_F_LOG_PROCCSW))
			continue;
		do {
			mark = atomic64_read(&pt->csw_mark);
			cur = hwpmc_target_value(pt);
			if (cur <= mark) {
				cur = mark;
				break;
			}
		} while (atomic64_cmpxchg(&pt->csw_mark, mark, cur) != mark);
		if (hwpmc_running(pm) || cur != mark)
			hwpmc_log_proccsw(pm, task_tgid_nr(task),
					  task_pid_nr(task), cur - mark);
	}
}

/*
 * sched_switch, after the classes have credited @prev (IRQs off,
 * runqueue locked), while a PROCCSW target exists (hwpmc_proc_switch()):
 * PROCCSW records for @prev.
 */
void __hwpmc_proc_switch(struct task_struct *prev)
{
	struct hwpmc_process *pp;

	rcu_read_lock();
	pp = hwpmc_proc_find(prev->signal);
	if (pp)
		hwpmc_proc_csw_out(pp, prev);
	rcu_read_unlock();
}

/* Is @p a descendant of the thread group of @ancestor?  RCU held. */
static bool hwpmc_is_descendant(struct task_struct *p,
				struct task_struct *ancestor)
{
	struct task_struct *q = p;

	for (;;) {
		struct task_struct *parent = rcu_dereference(q->real_parent);

		if (!parent || parent == q || parent->pid == 0)
			return false;
		if (same_thread_group(parent, ancestor))
			return true;
		if (is_global_init(parent))
			return false;
		q = parent;
	}
}

/* Link @pm to @task's process alone (process context). */
static int hwpmc_attach_one(struct hwpmc_pmc *pm, struct task_struct *task,
			    bool priv)
{
	struct hwpmc_process *pp = kzalloc(sizeof(*pp), GFP_KERNEL_ACCOUNT);
	struct hwpmc_target *pt = kzalloc(sizeof(*pt), GFP_KERNEL_ACCOUNT);
	int err = -ENOMEM;

	if (pp && pt) {
		raw_spin_lock(&hwpmc_proc_lock);
		err = hwpmc_link(pm, task, priv, &pp, &pt);
		raw_spin_unlock(&hwpmc_proc_lock);
	}
	kfree(pp);
	kfree(pt);
	return err;
}

/*
 * Check that the caller may attach @pm to @task and link it, as
 * perf_event_open() does: the check and the link happen under @task's
 * exec_update_lock, which an exec holds for writing while it changes
 * credentials and dumpability (its hook runs afterwards).  So either the
 * exec comes first and the check sees the new process, or the link comes
 * first and the exec hook drops an unprivileged target.
 *
 * The LSM's answer is asked first, without the lock (procfs takes it
 * itself); if @task exec'd meanwhile (its self_exec_id moved, or, for an
 * exec by another thread, it is dying), the answer is asked again.
 * Owner lock held, nothing else: every wait here is killable and blocks
 * this owner only.
 */
static int hwpmc_attach_task(struct hwpmc_pmc *pm, struct task_struct *task)
{
	struct rw_semaphore *lock = &task->signal->exec_update_lock;
	bool lsm = hwpmc_priv_attach_asks_lsm(task);
	bool priv;
	u64 gen;
	int err;

	hwpmc_owner_assert_held(pm->po);
	for (;;) {
		gen = READ_ONCE(task->self_exec_id);
		if (lsm) {
			err = hwpmc_priv_lsm_may_read(task);
			if (err)
				return err;
		}
		err = down_read_killable(lock);
		if (err)
			return err;
		if (READ_ONCE(task->self_exec_id) == gen)
			break;
		up_read(lock);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	err = hwpmc_priv_may_attach(task, &priv);
	if (!err) {
		hwpmc_test_attach_window();	/* test flavor only */
		err = hwpmc_attach_one(pm, task, priv);
	}
	up_read(lock);
	return err;
}

/* Lock breaks of the process walk: every this many processes. */
#define HWPMC_WALK_BATCH	128
/* Walks of the descendants, while the last one found new ones. */
#define HWPMC_WALK_PASSES	8

struct hwpmc_pidvec {
	struct pid **pids;
	unsigned int n, max;
};

/* Room for at least one more; outside RCU.  false when out of memory. */
static bool hwpmc_pidvec_grow(struct hwpmc_pidvec *v)
{
	unsigned int max = v->max ? 2 * v->max : 64;
	struct pid **pids;

	if (v->n < v->max)
		return true;
	pids = kvmalloc_array(max, sizeof(*pids), GFP_KERNEL_ACCOUNT);
	if (!pids)
		return false;
	if (v->n)
		memcpy(pids, v->pids, v->n * sizeof(*pids));
	kvfree(v->pids);
	v->pids = pids;
	v->max = max;
	return true;
}

static void hwpmc_pidvec_free(struct hwpmc_pidvec *v)
{
	while (v->n)
		put_pid(v->pids[--v->n]);
	kvfree(v->pids);
	v->pids = NULL;
	v->max = 0;
}

/*
 * The descendants of @task's process that @pm is not attached to, into
 * @v.  The walk over every process drops RCU every HWPMC_WALK_BATCH
 * processes to reschedule (the process it stopped at is pinned; if that
 * one was reaped meanwhile the walk ends early).  Returns false if the
 * walk did not see every process.
 */
static bool hwpmc_collect_descendants(struct hwpmc_pmc *pm,
				      struct task_struct *task,
				      struct hwpmc_pidvec *v)
{
	unsigned int seen = 0;
	struct task_struct *p;
	bool complete = true;

	rcu_read_lock();
	for_each_process(p) {
		if (++seen % HWPMC_WALK_BATCH == 0 || v->n == v->max) {
			bool alive, room;

			get_task_struct(p);
			rcu_read_unlock();
			room = hwpmc_pidvec_grow(v);
			cond_resched();
			rcu_read_lock();
			alive = pid_alive(p);
			put_task_struct(p);
			if (!alive || !room || fatal_signal_pending(current)) {
				complete = false;
				break;
			}
		}
		if (same_thread_group(p, task) || !p->mm ||
		    (p->flags & PF_KTHREAD) || !hwpmc_is_descendant(p, task) ||
		    hwpmc_target_find(p, pm))
			continue;
		v->pids[v->n++] = get_pid(task_tgid(p));
	}
	rcu_read_unlock();
	return complete;
}

/*
 * Attach @pm to every current descendant of @task's process that the
 * caller could attach to directly (each one is checked as PMCATTACH
 * checks, LSM included): attaching to a process does not open its
 * children of other users (a set-uid program under a user's shell).
 * @task's process is linked already, so a process forked by a linked one
 * is caught by the fork hook; one forked by a descendant not yet linked
 * is found by the next walk, and walks go on while the last linked some.
 * Owner lock held, nothing else; killable; reschedules.
 */
static void hwpmc_attach_descendants(struct hwpmc_pmc *pm,
				     struct task_struct *task)
{
	struct hwpmc_pidvec v = { };
	unsigned int pass, i, linked;
	bool complete;

	for (pass = 0; pass < HWPMC_WALK_PASSES; pass++) {
		complete = hwpmc_collect_descendants(pm, task, &v);
		linked = 0;
		for (i = 0; i < v.n && !fatal_signal_pending(current); i++) {
			struct task_struct *t = get_pid_task(v.pids[i],
							     PIDTYPE_TGID);

			if (t) {
				if (!hwpmc_attach_task(pm, t))
					linked++;
				put_task_struct(t);
			}
			cond_resched();
		}
		hwpmc_pidvec_free(&v);
		if (fatal_signal_pending(current) || (complete && !linked))
			break;
	}
}

/*
 * PMCATTACH, and PMCSTART of a PMC never attached (@task is then the
 * owner): check that the caller may attach to @task (the LSM ptrace
 * policy, and hwpmc_priv_may_attach()) and attach, with PMC_F_DESCENDANTS to
 * every current descendant too.  Owner lock held, no other lock.
 * Lock order: owner lock, exec_update_lock, hwpmc_proc_lock.
 */
int hwpmc_attach_checked(struct hwpmc_pmc *pm, struct task_struct *task)
{
	int err;

	err = hwpmc_attach_task(pm, task);
	if (!err && (pm->flags & PMC_F_DESCENDANTS))
		hwpmc_attach_descendants(pm, task);
	if (!err && hwpmc_running(pm) && pm->cls->ops->sync)
		pm->cls->ops->sync(pm);
	return err;
}

static struct hwpmc_target *hwpmc_target_of(struct hwpmc_process *pp,
					    struct hwpmc_pmc *pm)
{
	struct hwpmc_target *pt;

	list_for_each_entry(pt, &pp->targets, pp_node)
		if (pt->pm == pm)
			return pt;
	return NULL;
}

/*
 * Unlink @pm's targets that descend from @task's process, a batch at a
 * time.  Called and returns with hwpmc_proc_lock held, which it drops
 * between batches; the owner's lock held.
 */
static void hwpmc_detach_descendants(struct hwpmc_pmc *pm,
				     struct task_struct *task)
{
	struct hwpmc_target *pt;
	struct task_struct *t;
	struct hwpmc_walk w;
	unsigned int n;

	lockdep_assert_held(&hwpmc_proc_lock);
	hwpmc_walk_begin(pm, &w, false);
	for (;;) {
		rcu_read_lock();
		for (n = 0; n < HWPMC_TARGETS_BATCH; n++) {
			pt = hwpmc_walk_next(pm, &w);
			if (!pt)
				break;
			t = pid_task(pt->pp->pid, PIDTYPE_TGID);
			if (t && hwpmc_is_descendant(t, task))
				hwpmc_unlink_target(pt);
		}
		rcu_read_unlock();
		if (hwpmc_walk_done(pm, &w))
			break;
		raw_spin_unlock(&hwpmc_proc_lock);
		cond_resched();
		raw_spin_lock(&hwpmc_proc_lock);
	}
	hwpmc_walk_end(&w);
}

/* Detach @pm from @task's process (and its descendants, if inherited). */
int hwpmc_detach(struct hwpmc_pmc *pm, struct task_struct *task)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;
	int err = 0;

	hwpmc_owner_assert_held(pm->po);
	raw_spin_lock(&hwpmc_proc_lock);
	pp = hwpmc_proc_find(task->signal);
	if (!pp) {
		err = -ESRCH;		/* not monitored by hwpmc at all */
	} else {
		pt = hwpmc_target_of(pp, pm);
		if (pt)
			hwpmc_unlink_target(pt);
		else
			err = -EINVAL;	/* monitored, but not by this PMC */
	}
	if (!err && (pm->flags & PMC_F_DESCENDANTS))
		hwpmc_detach_descendants(pm, task);
	if (!err && !pm->ntargets)
		pm->pflags |= HWPMC_PF_DETACHED_ALL;
	raw_spin_unlock(&hwpmc_proc_lock);
	return err;
}

/*
 * Unlink every target of @pm, a batch at a time (no fork links a new one:
 * the PMC is DELETED).  Owner's lock and hwpmc_sx held: no reschedule
 * between batches, as in hwpmc_targets_clock().
 */
void hwpmc_detach_all(struct hwpmc_pmc *pm)
{
	unsigned int n;
	bool more;

	hwpmc_owner_assert_held(pm->po);
	lockdep_assert_held(&hwpmc_sx);
	for (;;) {
		raw_spin_lock(&hwpmc_proc_lock);
		for (n = 0; n < HWPMC_TARGETS_BATCH && !list_empty(&pm->targets);
		     n++)
			hwpmc_unlink_target(list_first_entry(&pm->targets,
							     struct hwpmc_target,
							     pm_node));
		more = !list_empty(&pm->targets);
		raw_spin_unlock(&hwpmc_proc_lock);
		if (!more)
			break;
	}
}

/*
 * The pids of @pm's target processes, at most @max of them (references
 * the caller puts), a batch at a time; targets linked meanwhile may be
 * among them.  Owner's lock held; may sleep.
 */
unsigned int hwpmc_target_pids(struct hwpmc_pmc *pm, struct pid **pids,
			       unsigned int max)
{
	struct hwpmc_target *pt;
	struct hwpmc_walk w;
	unsigned int n = 0, b;

	hwpmc_owner_assert_held(pm->po);
	raw_spin_lock(&hwpmc_proc_lock);
	hwpmc_walk_begin(pm, &w, false);
	for (;;) {
		for (b = 0; b < HWPMC_TARGETS_BATCH && n < max; b++) {
			pt = hwpmc_walk_next(pm, &w);
			if (!pt)
				break;
			pids[n++] = get_pid(pt->pp->pid);
		}
		if (n == max || hwpmc_walk_done(pm, &w))
			break;
		raw_spin_unlock(&hwpmc_proc_lock);
		cond_resched();
		raw_spin_lock(&hwpmc_proc_lock);
	}
	hwpmc_walk_end(&w);
	raw_spin_unlock(&hwpmc_proc_lock);
	return n;
}

/* PMCGETMSR's rule: attached to its owner's process and nothing else. */
bool hwpmc_only_owner_attached(struct hwpmc_pmc *pm)
{
	struct hwpmc_target *pt;
	bool only;

	hwpmc_owner_assert_held(pm->po);
	raw_spin_lock(&hwpmc_proc_lock);
	pt = list_first_entry_or_null(&pm->targets, struct hwpmc_target,
				      pm_node);
	only = pm->ntargets == 1 && pt->pp->pid == pm->po->pid;
	raw_spin_unlock(&hwpmc_proc_lock);
	return only;
}

/*
 * One PROCFORK per owner of the new process @cpp's targets.  An owner is
 * logged at its first target in the list; the list is short (one target
 * per row), so the quadratic walk needs no storage.  The first
 * HWPMC_FORK_MAXLOGS owners logged go to @logged, for the system
 * samplers' fork hook to skip; their number is returned.
 * hwpmc_proc_lock held.
 */
static unsigned int hwpmc_log_fork(struct hwpmc_process *cpp,
				   struct task_struct *parent,
				   struct task_struct *child,
				   struct hwpmc_owner **logged)
{
	struct hwpmc_target *pt, *prev;
	unsigned int nlogged = 0;

	lockdep_assert_held(&hwpmc_proc_lock);
	list_for_each_entry(pt, &cpp->targets, pp_node) {
		bool seen = false;

		list_for_each_entry(prev, &cpp->targets, pp_node) {
			if (prev == pt)
				break;
			if (prev->pm->po == pt->pm->po) {
				seen = true;
				break;
			}
		}
		if (seen)
			continue;
		if (nlogged < HWPMC_FORK_MAXLOGS)
			logged[nlogged++] = pt->pm->po;
		hwpmc_log_procfork(pt->pm->po, task_tgid_nr(parent),
				   task_tgid_nr(child));
	}
	return nlogged;
}

/*
 * Fork hook (tracepoint context: preemption off, may not sleep).  A new
 * process inherits every PMC_F_DESCENDANTS target of its parent; its own
 * count starts from zero.  The owners whose logs got a PROCFORK go to
 * @logged (at most HWPMC_FORK_MAXLOGS, compared by address only); their
 * number is returned.
 */
unsigned int hwpmc_proc_fork(struct task_struct *parent,
			     struct task_struct *child,
			     struct hwpmc_owner **logged)
{
	struct hwpmc_process *pp, *cpp;
	struct hwpmc_target *pt;
	unsigned int nlogged = 0;

	if (child->signal == parent->signal)
		return 0;	/* a new thread: found through signal */
	rcu_read_lock();
	pp = hwpmc_proc_find(parent->signal);
	rcu_read_unlock();
	if (!pp)
		return 0;
	raw_spin_lock(&hwpmc_proc_lock);
	/* Re-find under the lock: the process may have gone meanwhile. */
	pp = hwpmc_proc_find(parent->signal);
	if (pp) {
		list_for_each_entry(pt, &pp->targets, pp_node) {
			if (!(pt->pm->flags & PMC_F_DESCENDANTS) ||
			    READ_ONCE(pt->pm->state) == PMC_STATE_DELETED)
				continue;
			hwpmc_link_reserved(pt->pm, child, pt->priv);
		}
		cpp = hwpmc_proc_find(child->signal);
		if (cpp)
			nlogged = hwpmc_log_fork(cpp, parent, child, logged);
	}
	raw_spin_unlock(&hwpmc_proc_lock);
	return nlogged;
}

/* Add @pid to the @n owners to signal, once; the new count. */
static unsigned int hwpmc_notify_add(struct pid **notify, unsigned int n,
				     struct pid *pid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (notify[i] == pid)
			return n;
	if (WARN_ON_ONCE(n >= HWPMC_MAX_ROWS))
		return n;
	notify[n] = get_pid(pid);
	return n + 1;
}

/*
 * Exit hook (tracepoint context), for the last thread of a process.  When
 * a monitored process exits, its targets are unlinked; the counts stay in the PMCs.
 * An owner whose PMC lost its last target this way gets SIGIO, as on
 * FreeBSD.
 */
void hwpmc_proc_exit(struct task_struct *task)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt, *tmp;
	/* One target per row: no more owners than rows to tell. */
	struct pid *notify[HWPMC_MAX_ROWS];
	unsigned int i, nnotify = 0;

	/*
	 * Pairs with hwpmc_link(): signal->live reached zero (a full
	 * barrier) before this reads the count, and a link that saw the
	 * process alive counted it first.  With any process monitored, look
	 * under the lock, so that a link that raced with this exit is
	 * either seen here or refused there (an unlocked look could miss a
	 * process about to be published, which would then outlive its
	 * signal_struct).
	 */
	smp_mb();
	if (!atomic_read(&hwpmc_nprocs))
		return;
	raw_spin_lock(&hwpmc_proc_lock);
	pp = hwpmc_proc_find(task->signal);
	raw_spin_unlock(&hwpmc_proc_lock);
	if (!pp)
		return;
	/* Count what the last thread did up to here. */
	hwpmc_classes_task_exit(task);
	raw_spin_lock(&hwpmc_proc_lock);
	pp = hwpmc_proc_find(task->signal);
	if (pp) {
		hwpmc_proc_csw_out(pp, task);
		list_for_each_entry_safe(pt, tmp, &pp->targets, pp_node) {
			struct hwpmc_pmc *pm = pt->pm;

			if (pm->flags & PMC_F_LOG_PROCEXIT)
				hwpmc_log_procexit(pm, task_tgid_nr(task),
						   hwpmc_target_value(pt));
			hwpmc_unlink_target(pt);
			if (!pm->ntargets && IS_ENABLED(CONFIG_PREEMPT_RT))
				/* siglock sleeps on RT: from a work item. */
				schedule_work(&pm->po->sigio_work);
			else if (!pm->ntargets)
				nnotify = hwpmc_notify_add(notify, nnotify,
							   pm->po->pid);
		}
	}
	raw_spin_unlock(&hwpmc_proc_lock);
	for (i = 0; i < nnotify; i++) {
		hwpmc_signal_pid(notify[i], SIGIO);
		put_pid(notify[i]);
	}
}

/*
 * Exec hook (tracepoint context).  A process that became non-dumpable by
 * exec'ing a set-id program may no longer be watched by owners that were
 * only allowed to watch it as its debugger: their targets are detached.
 * The PROCEXEC records come later, from hwpmc_proc_log_exec(): naming the
 * file needs process context.  Returns whether the process is still
 * monitored.
 */
bool hwpmc_proc_exec(struct task_struct *task)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt, *tmp;
	bool setid = task->mm && get_dumpable(task->mm) != SUID_DUMP_USER;

	rcu_read_lock();
	pp = hwpmc_proc_find(task->signal);
	rcu_read_unlock();
	if (!pp || !setid)
		return !!pp;
	raw_spin_lock(&hwpmc_proc_lock);
	pp = hwpmc_proc_find(task->signal);
	if (pp)
		list_for_each_entry_safe(pt, tmp, &pp->targets, pp_node)
			if (!pt->priv)
				hwpmc_unlink_target(pt);
	pp = hwpmc_proc_find(task->signal);
	raw_spin_unlock(&hwpmc_proc_lock);
	return !!pp;
}

/*
 * PROCEXEC records of @task's exec of @path (image at @base) for the PMCs
 * attached to its process.  Any context but NMI.
 */
void hwpmc_proc_log_exec(struct task_struct *task, u64 base, const char *path)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;

	raw_spin_lock(&hwpmc_proc_lock);
	pp = hwpmc_proc_find(task->signal);
	if (pp)
		list_for_each_entry(pt, &pp->targets, pp_node)
			hwpmc_log_procexec(pt->pm, task_tgid_nr(task), base,
					   path);
	raw_spin_unlock(&hwpmc_proc_lock);
}
