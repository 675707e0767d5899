// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: NetBSD's pmc(9), an in-kernel API for other modules
 * (include/kernel/hwpmc_pmc9.h says what it promises).
 *
 * A task's counters are process-scope counting PMCs (PMC_F_DESCENDANTS)
 * of a kernel owner of its own (one context per configured process,
 * kept until hwpmc unloads), attached to its process: hwpmc's switch
 * hook loads them, its fork hook attaches children (counting from zero,
 * running if the parent's ran), and what an exited descendant counted
 * stays in the PMC.  Kernel counters are system-scope counting PMCs of
 * one kernel owner on every CPU (kctr.c).  Everything goes through the
 * core's operations, so rows, privileges and errors are hwpmc's.
 *
 * Locking: pmc9_lock guards the list of contexts only and is never held
 * across a wait; each context's operations hold its owner's lock (which
 * may wait for a target's exec_update_lock in PMCATTACH, as an ioctl of
 * /dev/hwpmc does), taken under pmc9_lock only to look a target up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "iface.h"
#include "../../include/kernel/hwpmc_pmc9.h"

struct pmc9_ctx {
	struct list_head node;		/* pmc9_ctxs, pmc9_lock */
	struct pid *pid;		/* the configured process */
	struct hwpmc_owner *po;
	u32 pmcid[HWPMC_MAX_ROWS];	/* per ctr; po->lock */
	u64 reset[HWPMC_MAX_ROWS];
	u64 extra[HWPMC_MAX_ROWS];	/* pmc_accumulate()d */
};

static DEFINE_MUTEX(pmc9_lock);
static LIST_HEAD(pmc9_ctxs);
static const struct hwpmc_class *pmc9_hw, *pmc9_soft;
static unsigned int pmc9_nhw, pmc9_nsoft;
/* Kernel counters: pmc9_kpo->lock. */
static struct hwpmc_owner *pmc9_kpo;
static struct hwpmc_kctr pmc9_kctr[HWPMC_MAX_ROWS];

int pmc_get_num_counters(void)
{
	return pmc9_nhw + pmc9_nsoft;
}
EXPORT_SYMBOL_GPL(pmc_get_num_counters);

/* The class and row index of @ctr, or NULL. */
static const struct hwpmc_class *pmc9_row(int ctr, unsigned int *idx)
{
	if (ctr < 0 || ctr >= pmc_get_num_counters())
		return NULL;
	if (ctr < pmc9_nhw) {
		*idx = ctr;
		return pmc9_hw;
	}
	*idx = ctr - pmc9_nhw;
	return pmc9_soft;
}

int pmc_get_counter_type(int ctr)
{
	const struct hwpmc_class *cls;
	unsigned int idx;

	if (ctr == -1)
		return hwpmc_cputype();
	cls = pmc9_row(ctr, &idx);
	return cls ? cls->ops->class : -EINVAL;
}
EXPORT_SYMBOL_GPL(pmc_get_counter_type);

/* hwpmc's scheduler hook saves and restores the counters itself. */
void pmc_save_context(struct task_struct *l)
{
}
EXPORT_SYMBOL_GPL(pmc_save_context);

void pmc_restore_context(struct task_struct *l)
{
}
EXPORT_SYMBOL_GPL(pmc_restore_context);

/* The context configured for @l's process, made if @create. */
static struct pmc9_ctx *pmc9_ctx_of(struct task_struct *l, bool create)
{
	struct pid *pid = task_tgid(l);
	struct pmc9_ctx *ctx;

	mutex_lock(&pmc9_lock);
	list_for_each_entry(ctx, &pmc9_ctxs, node)
		if (ctx->pid == pid)
			goto out;
	ctx = NULL;
	if (!create)
		goto out;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		goto out;
	ctx->po = hwpmc_kowner_new();
	if (!ctx->po) {
		kfree(ctx);
		ctx = NULL;
		goto out;
	}
	ctx->pid = get_pid(pid);
	list_add_tail(&ctx->node, &pmc9_ctxs);
out:
	mutex_unlock(&pmc9_lock);
	return ctx;
}

/*
 * The context whose counter @ctr counts @l's process (configured for it
 * or for an ancestor), with its owner's lock held, and that PMC; NULL if
 * none.  The lookup takes no owner's lock (the PMC ids under RCU: the
 * PMCs are freed through RCU, the contexts only at unload), so pmc9_lock
 * is never held while an owner's lock is waited for.
 */
static struct pmc9_ctx *pmc9_ctx_counting(struct task_struct *l, int ctr,
					  struct hwpmc_pmc **pmp)
{
	struct pmc9_ctx *ctx;
	struct hwpmc_pmc *pm;
	bool found;
	u32 id;

again:
	found = false;
	mutex_lock(&pmc9_lock);
	list_for_each_entry(ctx, &pmc9_ctxs, node) {
		id = READ_ONCE(ctx->pmcid[ctr]);
		rcu_read_lock();
		pm = id ? idr_find(&ctx->po->pmcs, id) : NULL;
		found = pm && hwpmc_target_find(l, pm);
		rcu_read_unlock();
		if (found)
			break;
	}
	mutex_unlock(&pmc9_lock);
	if (!found)
		return NULL;
	mutex_lock(&ctx->po->lock);
	if (ctx->pmcid[ctr] != id) {	/* configured again meanwhile */
		mutex_unlock(&ctx->po->lock);
		goto again;
	}
	*pmp = idr_find(&ctx->po->pmcs, id);
	return ctx;
}

static void pmc9_release(struct pmc9_ctx *ctx, int ctr)
{
	struct pmc_op_simple s = { .pm_pmcid = ctx->pmcid[ctr] };

	hwpmc_owner_assert_held(ctx->po);
	if (!s.pm_pmcid)
		return;
	mutex_lock(&hwpmc_sx);
	hwpmc_op_pmcrelease(ctx->po, &s);
	mutex_unlock(&hwpmc_sx);
	WRITE_ONCE(ctx->pmcid[ctr], 0);
}

int pmc_configure_counter(struct task_struct *l, int ctr,
			  struct pmc_counter_cfg *cfg)
{
	const struct hwpmc_class *cls;
	struct pmc_op_pmcallocate a = { };
	struct pmc_op_pmcattach at = { };
	struct pmc9_ctx *ctx;
	unsigned int idx;
	int err;

	cls = pmc9_row(ctr, &idx);
	if (!l || !cls || !cfg || cfg->flags)
		return -EINVAL;
	ctx = pmc9_ctx_of(l, true);
	if (!ctx)
		return -ENOMEM;
	err = mutex_lock_killable(&ctx->po->lock);
	if (err)
		return err;
	pmc9_release(ctx, ctr);
	a.pm_cpu = PMC_CPU_ANY;
	a.pm_class = cls->ops->class;
	a.pm_event = (u32)cfg->event_id;
	a.pm_config = cfg->event_id >> 32;
	a.pm_mode = PMC_MODE_TC;
	a.pm_flags = PMC_F_DESCENDANTS;
	a.pm_count = cfg->reset_value;
	mutex_lock(&hwpmc_sx);
	err = hwpmc_pmc_allocate_at(ctx->po, &a, idx);
	mutex_unlock(&hwpmc_sx);
	if (!err) {
		at.pm_pmcid = a.pm_pmcid;
		at.pm_pid = task_tgid_vnr(l);
		WRITE_ONCE(ctx->pmcid[ctr], a.pm_pmcid);
		err = hwpmc_op_pmcattach(ctx->po, &at);
		if (err)
			pmc9_release(ctx, ctr);
	}
	if (!err) {
		ctx->reset[ctr] = cfg->reset_value;
		ctx->extra[ctr] = 0;
	}
	mutex_unlock(&ctx->po->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_configure_counter);

int pmc_enable_counter(struct task_struct *l, int ctr)
{
	struct pmc_op_simple s = { };
	struct hwpmc_pmc *pm;
	struct pmc9_ctx *ctx;
	unsigned int idx;
	int err;

	if (!l || !pmc9_row(ctr, &idx))
		return -EINVAL;
	ctx = pmc9_ctx_counting(l, ctr, &pm);
	if (!ctx)
		return -ENOENT;
	s.pm_pmcid = pm->id;
	err = hwpmc_op_pmcstart(ctx->po, &s);
	mutex_unlock(&ctx->po->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_enable_counter);

int pmc_disable_counter(struct task_struct *l, int ctr)
{
	struct pmc_op_simple s = { };
	struct hwpmc_pmc *pm;
	struct pmc9_ctx *ctx;
	unsigned int idx;
	int err;

	if (!l || !pmc9_row(ctr, &idx))
		return -EINVAL;
	ctx = pmc9_ctx_counting(l, ctr, &pm);
	if (!ctx)
		return -ENOENT;
	s.pm_pmcid = pm->id;
	mutex_lock(&hwpmc_sx);
	err = hwpmc_op_pmcstop(ctx->po, &s);
	mutex_unlock(&hwpmc_sx);
	mutex_unlock(&ctx->po->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_disable_counter);

/* Kernel counter @ctr: 1 allocated (2 running), 0 not. */
static int pmc9_kernel_state(int ctr)
{
	int st;

	mutex_lock(&pmc9_kpo->lock);
	st = pmc9_kctr[ctr].allocated ? 1 + pmc9_kctr[ctr].running : 0;
	mutex_unlock(&pmc9_kpo->lock);
	return st;
}

int pmc_counter_isrunning(struct task_struct *l, int ctr)
{
	struct hwpmc_pmc *pm;
	struct pmc9_ctx *ctx;
	unsigned int idx;
	int running;

	if (!pmc9_row(ctr, &idx))
		return 0;
	if (pmc9_kernel_state(ctr) == 2)
		return 1;
	ctx = l ? pmc9_ctx_counting(l, ctr, &pm) : NULL;
	if (!ctx)
		return 0;
	running = pm->state == PMC_STATE_RUNNING;
	mutex_unlock(&ctx->po->lock);
	return running;
}
EXPORT_SYMBOL_GPL(pmc_counter_isrunning);

int pmc_counter_isconfigured(struct task_struct *l, int ctr)
{
	struct hwpmc_pmc *pm;
	struct pmc9_ctx *ctx;
	unsigned int idx;

	if (!pmc9_row(ctr, &idx))
		return 0;
	if (pmc9_kernel_state(ctr))
		return 1;
	ctx = l ? pmc9_ctx_counting(l, ctr, &pm) : NULL;
	if (!ctx)
		return 0;
	mutex_unlock(&ctx->po->lock);
	return 1;
}
EXPORT_SYMBOL_GPL(pmc_counter_isconfigured);

/* What the live processes other than @own's counted of @pm. */
static u64 pmc9_live_others(struct hwpmc_pmc *pm, struct hwpmc_process *own)
{
	struct hwpmc_target *pt;
	unsigned long flags;
	u64 sum = 0;

	raw_spin_lock_irqsave(&hwpmc_proc_lock, flags);
	list_for_each_entry(pt, &pm->targets, pm_node)
		if (pt->pp != own)
			sum += atomic64_read(&pt->value);
	raw_spin_unlock_irqrestore(&hwpmc_proc_lock, flags);
	return sum;
}

int pmc_get_counter_value(struct task_struct *l, int ctr, int flags,
			  u64 *pval)
{
	struct pmc_op_pmcrw rw = { .pm_flags = PMC_F_OLDVALUE };
	struct hwpmc_target *pt;
	struct hwpmc_pmc *pm;
	struct pmc9_ctx *ctx;
	unsigned int idx;
	bool configured_here;
	u64 v = 0;
	int err = 0;

	if (!pmc9_row(ctr, &idx) || !pval || (flags & ~PMC_VALUE_FLAGS_CHILDREN))
		return -EINVAL;
	if (!l) {
		mutex_lock(&pmc9_kpo->lock);
		if (pmc9_kctr[ctr].allocated)
			*pval = hwpmc_kctr_read(pmc9_kpo, &pmc9_kctr[ctr], -1);
		else
			err = -ENOENT;
		mutex_unlock(&pmc9_kpo->lock);
		return err;
	}
	ctx = pmc9_ctx_counting(l, ctr, &pm);
	if (!ctx)
		return -ENOENT;
	/* Fold what the running counters counted so far. */
	rw.pm_pmcid = pm->id;
	hwpmc_op_pmcrw(ctx->po, &rw);
	configured_here = ctx->pid == task_tgid(l);
	rcu_read_lock();
	pt = hwpmc_target_find(l, pm);
	if (pt && configured_here && (flags & PMC_VALUE_FLAGS_CHILDREN))
		v = atomic64_read(&pm->value) - pmc9_live_others(pm, pt->pp) +
		    ctx->extra[ctr];
	else if (pt)
		v = atomic64_read(&pt->value) +
		    (configured_here ? ctx->reset[ctr] : 0);
	rcu_read_unlock();
	mutex_unlock(&ctx->po->lock);
	*pval = v;
	return 0;
}
EXPORT_SYMBOL_GPL(pmc_get_counter_value);

/*
 * A child whose own counters were configured separately: its counts go
 * to its parent's counters of the same ctr.  A descendant of a configured
 * process needs nothing: its count stays in the PMC.
 */
int pmc_accumulate(struct task_struct *l_parent, struct task_struct *l_exiting)
{
	struct pmc9_ctx *child, *parent;
	struct hwpmc_pmc *pm;
	int ctr, err;
	u64 v;

	if (!l_parent || !l_exiting)
		return -EINVAL;
	child = pmc9_ctx_of(l_exiting, false);
	if (!child)
		return 0;
	for (ctr = 0; ctr < pmc_get_num_counters(); ctr++) {
		if (!READ_ONCE(child->pmcid[ctr]))
			continue;
		err = pmc_get_counter_value(l_exiting, ctr, 0, &v);
		if (err)
			continue;
		parent = pmc9_ctx_counting(l_parent, ctr, &pm);
		if (!parent)
			continue;
		if (parent != child)
			parent->extra[ctr] += v;
		mutex_unlock(&parent->po->lock);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(pmc_accumulate);

int pmc_alloc_kernel_counter(int ctr, struct pmc_counter_cfg *cfg)
{
	struct hwpmc_kctr *kc = &pmc9_kctr[ctr];
	const struct hwpmc_class *cls;
	unsigned int idx;
	int err;

	cls = pmc9_row(ctr, &idx);
	if (!cls || !cfg || cfg->flags)
		return -EINVAL;
	err = mutex_lock_killable(&pmc9_kpo->lock);
	if (err)
		return err;
	if (kc->allocated) {
		err = -EBUSY;
		goto out;
	}
	err = hwpmc_kctr_alloc(pmc9_kpo, kc, cls, idx, (u32)cfg->event_id,
			       cfg->event_id >> 32, false);
	if (err)
		goto out;
	if (cfg->reset_value)
		hwpmc_kctr_write(pmc9_kpo, kc, cfg->reset_value);
	err = hwpmc_kctr_start(pmc9_kpo, kc);
	if (err)
		hwpmc_kctr_release(pmc9_kpo, kc);
out:
	mutex_unlock(&pmc9_kpo->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_alloc_kernel_counter);

int pmc_free_kernel_counter(int ctr)
{
	unsigned int idx;
	int err = 0;

	if (!pmc9_row(ctr, &idx))
		return -EINVAL;
	mutex_lock(&pmc9_kpo->lock);
	if (pmc9_kctr[ctr].allocated)
		hwpmc_kctr_release(pmc9_kpo, &pmc9_kctr[ctr]);
	else
		err = -ENOENT;
	mutex_unlock(&pmc9_kpo->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_free_kernel_counter);

/* Not implemented yet: see README "pmc(9)". */
int pmc_start_profiling(int ctr, struct pmc_counter_cfg *cfg)
{
	return -EOPNOTSUPP;
}
EXPORT_SYMBOL_GPL(pmc_start_profiling);

int pmc_stop_profiling(int ctr)
{
	return -EOPNOTSUPP;
}
EXPORT_SYMBOL_GPL(pmc_stop_profiling);

int pmc_enabled(struct task_struct *l)
{
	int ctr;

	for (ctr = 0; ctr < pmc_get_num_counters(); ctr++)
		if (pmc9_kernel_state(ctr) || (l && pmc_counter_isrunning(l, ctr)))
			return 1;
	return 0;
}
EXPORT_SYMBOL_GPL(pmc_enabled);

static int pmc9_init(void)
{
	unsigned int i;
	int err;

	pmc9_hw = hwpmc_kctr_class();
	pmc9_nhw = pmc9_hw ? pmc9_hw->nrows : 0;
	pmc9_soft = hwpmc_class_find(PMC_CLASS_SOFT);
	pmc9_nsoft = pmc9_soft ? pmc9_soft->nrows : 0;
	pmc9_kpo = hwpmc_kowner_new();
	if (!pmc9_kpo)
		return -ENOMEM;
	for (i = 0; i < HWPMC_MAX_ROWS; i++) {
		err = hwpmc_kctr_init(&pmc9_kctr[i]);
		if (err) {
			while (i--)
				hwpmc_kctr_fini(&pmc9_kctr[i]);
			hwpmc_kowner_free(pmc9_kpo);
			return err;
		}
	}
	return 0;
}

static void pmc9_exit(void)
{
	struct pmc9_ctx *ctx, *tmp;
	unsigned int i;

	/* Client modules that use these symbols are gone (module refs). */
	list_for_each_entry_safe(ctx, tmp, &pmc9_ctxs, node) {
		list_del(&ctx->node);
		hwpmc_kowner_free(ctx->po);
		put_pid(ctx->pid);
		kfree(ctx);
	}
	hwpmc_kowner_free(pmc9_kpo);
	pmc9_kpo = NULL;
	for (i = 0; i < HWPMC_MAX_ROWS; i++)
		hwpmc_kctr_fini(&pmc9_kctr[i]);
}

const struct hwpmc_iface hwpmc_pmc9_iface = {
	.name	= "pmc9",
	.init	= pmc9_init,
	.exit	= pmc9_exit,
};
