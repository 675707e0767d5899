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

#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
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
	err = hwpmc_pmc_allocate(ctx->po, &a, idx);
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

/* Start (@start) or stop the counting PMC @ctr of @l's process. */
static int pmc9_start_stop(struct task_struct *l, int ctr, bool start)
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
	if (start)
		err = hwpmc_op_pmcstart(ctx->po, &s);
	else
		err = hwpmc_op_pmcstop(ctx->po, &s);
	mutex_unlock(&ctx->po->lock);
	return err;
}

int pmc_enable_counter(struct task_struct *l, int ctr)
{
	return pmc9_start_stop(l, ctr, true);
}
EXPORT_SYMBOL_GPL(pmc_enable_counter);

int pmc_disable_counter(struct task_struct *l, int ctr)
{
	return pmc9_start_stop(l, ctr, false);
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

/*
 * What @pm counted but for the live processes other than @own's (@own's
 * target of @pm): its value with @own's pending share, less the others'
 * banked shares (pm->value holds no pending one), read without a lock
 * (the targets may be as many as the process made children) as one
 * snapshot of clock_seq, which every writer of a by_clock PMC's shares
 * writes; the value is loaded after the others, so that a try that a bank
 * overlapped errs high, never below zero.  After PMC9_SUM_TRIES such
 * tries (exits, stops) the last one's sum.  RCU held.
 */
#define PMC9_SUM_TRIES	16

static u64 pmc9_own_and_gone(struct hwpmc_pmc *pm, struct hwpmc_target *own)
{
	struct hwpmc_target *pt;
	unsigned int seq, tries = 0;
	u64 others, sum;

	do {
		seq = read_seqcount_begin(&pm->clock_seq);
		others = 0;
		list_for_each_entry_rcu(pt, &pm->targets, pm_node)
			if (pt->pp != own->pp)
				others += atomic64_read(&pt->value);
		/* Banks add to a target's value first, then to the PMC's. */
		smp_rmb();
		sum = atomic64_read(&pm->value) + hwpmc_target_pending(own);
	} while (read_seqcount_retry(&pm->clock_seq, seq) &&
		 ++tries < PMC9_SUM_TRIES);
	return sum > others ? sum - others : 0;
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
		v = pmc9_own_and_gone(pm, pt) + ctx->extra[ctr];
	else if (pt)
		v = hwpmc_target_value(pt) +
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
			       cfg->event_id >> 32, false, 0);
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

/*
 * Kernel profiling: a system-scope sampling PMC on every CPU whose samples
 * (kernel-mode PCs only) count in a histogram of the kernel's text, read
 * as /sys/kernel/debug/hwpmc-profile in /proc/profile's format (what
 * util-linux's readprofile reads: the bucket size in bytes, then one
 * unsigned int per bucket from _stext; writing to it zeroes it).  The
 * histogram lives until hwpmc unloads and adds up over profiling runs,
 * as /proc/profile does.
 */
#define PMC9_PROF_SHIFT		4	/* 16-byte buckets */

static struct hwpmc_owner *pmc9_ppo;
static struct hwpmc_kctr pmc9_prof;	/* pmc9_ppo->lock */
static atomic_t *pmc9_prof_buf;		/* published once, freed at unload */
static unsigned long pmc9_text, pmc9_text_len;
static size_t pmc9_prof_len;		/* buckets */
static struct dentry *pmc9_prof_file;

/* A sample (any context, NMI included: no locks). */
static void pmc9_prof_sample(struct hwpmc_pmc *pm, struct pt_regs *regs)
{
	/* Pairs with the release in pmc_start_profiling(): the bounds first. */
	atomic_t *buf = smp_load_acquire(&pmc9_prof_buf);
	unsigned long off;

	if (!buf || !regs || user_mode(regs))
		return;
	off = instruction_pointer(regs) - pmc9_text;
	if (off < pmc9_text_len)
		atomic_inc(&buf[off >> PMC9_PROF_SHIFT]);
}

/*
 * The symbol kallsyms names at @addr is @name, at offset 0 if @start
 * (sprint_symbol(): "name+0xOFF/0xSIZE").
 */
static bool pmc9_symbol_is(unsigned long addr, const char *name, bool start)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t n = strlen(name);

	sprint_symbol(buf, addr);
	if (strncmp(buf, name, n) || buf[n] != '+')
		return false;
	return !start || !strncmp(buf + n, "+0x0/", 5);
}

/*
 * _stext and _etext, which the kernel does not export.  _stext is the
 * 2 MiB-aligned start of the kernel's text (x86-64) at or below a text
 * address we know, named _stext or by one of its aliases (_text,
 * startup_64, at the same address where the image has no text before
 * .text); the text ends in the page where kallsyms names _etext.  -ENOENT
 * where that does not hold.
 */
static int pmc9_text_bounds(unsigned long *start, unsigned long *end)
{
	static const char *const names[] = { "_stext", "_text", "startup_64" };
	unsigned long a = (unsigned long)sprint_symbol & ~(SZ_2M - 1);
	unsigned int i, k;

	*start = *end = 0;
	for (i = 0; i < 64 && !*start; i++, a -= SZ_2M)
		for (k = 0; k < ARRAY_SIZE(names) && !*start; k++)
			if (pmc9_symbol_is(a, names[k], true))
				*start = a;
	for (a = *start; *start && a < *start + SZ_1G && !*end; a += PAGE_SIZE)
		if (pmc9_symbol_is(a, "_etext", false) ||
		    pmc9_symbol_is(a + PAGE_SIZE - 1, "_etext", false))
			*end = a + PAGE_SIZE;
	if (*start && *end)
		return 0;
	pr_info_ratelimited("pmc(9) profiling: the kernel's text bounds not found\n");
	return -ENOENT;
}

int pmc_start_profiling(int ctr, struct pmc_counter_cfg *cfg)
{
	const struct hwpmc_class *cls;
	unsigned long start, end;
	unsigned int idx;
	atomic_t *buf;
	int err;

	cls = pmc9_row(ctr, &idx);
	if (!cls || !cfg || cfg->flags || !cfg->reset_value)
		return -EINVAL;
	err = mutex_lock_killable(&pmc9_ppo->lock);
	if (err)
		return err;
	if (pmc9_prof.allocated) {
		err = -EBUSY;
		goto out;
	}
	if (!pmc9_prof_buf) {
		err = pmc9_text_bounds(&start, &end);
		if (err)
			goto out;
		pmc9_prof_len = ((end - start) >> PMC9_PROF_SHIFT) + 1;
		buf = vzalloc(array_size(pmc9_prof_len, sizeof(*buf)));
		if (!buf) {
			err = -ENOMEM;
			goto out;
		}
		pmc9_text = start;
		pmc9_text_len = end - start;
		/* The bounds before the buffer (pmc9_prof_sample()). */
		smp_store_release(&pmc9_prof_buf, buf);
		/* readprofile reads as much as the file's size says. */
		if (!IS_ERR_OR_NULL(pmc9_prof_file)) {
			struct inode *inode = d_inode(pmc9_prof_file);

			inode_lock(inode);
			i_size_write(inode, (pmc9_prof_len + 1) * sizeof(u32));
			inode_unlock(inode);
		}
	}
	err = hwpmc_kctr_alloc(pmc9_ppo, &pmc9_prof, cls, idx,
			       (u32)cfg->event_id, cfg->event_id >> 32, false,
			       cfg->reset_value);
	if (!err)
		err = hwpmc_kctr_start(pmc9_ppo, &pmc9_prof);
	if (err)
		hwpmc_kctr_release(pmc9_ppo, &pmc9_prof);
out:
	mutex_unlock(&pmc9_ppo->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_start_profiling);

int pmc_stop_profiling(int ctr)
{
	unsigned int idx;
	int err = 0;

	if (!pmc9_row(ctr, &idx))
		return -EINVAL;
	mutex_lock(&pmc9_ppo->lock);
	if (pmc9_prof.allocated)
		hwpmc_kctr_release(pmc9_ppo, &pmc9_prof);
	else
		err = -ENOENT;
	mutex_unlock(&pmc9_ppo->lock);
	return err;
}
EXPORT_SYMBOL_GPL(pmc_stop_profiling);

/* /proc/profile's layout: the bucket size, then the buckets. */
static ssize_t pmc9_prof_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	unsigned int step = 1U << PMC9_PROF_SHIFT;
	/* The length is published with the buffer. */
	atomic_t *buf = smp_load_acquire(&pmc9_prof_buf);
	size_t total = (buf ? pmc9_prof_len + 1 : 1) * sizeof(unsigned int);
	loff_t p = *ppos;
	ssize_t done = 0;

	if (p < 0)
		return -EINVAL;
	if (p >= total)
		return 0;
	count = min_t(size_t, count, total - p);
	if (p < sizeof(step)) {
		size_t k = min_t(size_t, count, sizeof(step) - p);

		if (copy_to_user(ubuf, (char *)&step + p, k))
			return -EFAULT;
		done = k;
	}
	if (count > done &&
	    copy_to_user(ubuf + done, (char *)buf + p + done - sizeof(step),
			 count - done))
		return -EFAULT;
	*ppos = p + count;
	return count;
}

/* Any write zeroes the histogram (readprofile -r). */
static ssize_t pmc9_prof_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	/* The length is published with the buffer. */
	atomic_t *buf = smp_load_acquire(&pmc9_prof_buf);
	size_t i;

	for (i = 0; buf && i < pmc9_prof_len; i++)
		atomic_set(&buf[i], 0);
	return count;
}

static const struct file_operations pmc9_prof_fops = {
	.owner	= THIS_MODULE,
	.read	= pmc9_prof_read,
	.write	= pmc9_prof_write,
	.llseek	= default_llseek,
};

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
	pmc9_ppo = hwpmc_kowner_new();
	err = pmc9_kpo && pmc9_ppo ? hwpmc_kctr_init(&pmc9_prof) : -ENOMEM;
	if (err)
		goto out;
	pmc9_ppo->ksample = pmc9_prof_sample;
	for (i = 0; i < HWPMC_MAX_ROWS; i++) {
		err = hwpmc_kctr_init(&pmc9_kctr[i]);
		if (err) {
			while (i--)
				hwpmc_kctr_fini(&pmc9_kctr[i]);
			hwpmc_kctr_fini(&pmc9_prof);
			goto out;
		}
	}
	/* Root only, as kernel profiles are hot paths of the kernel. */
	pmc9_prof_file = debugfs_create_file("hwpmc-profile", 0600, NULL,
					     NULL, &pmc9_prof_fops);
	return 0;
out:
	hwpmc_kowner_free(pmc9_ppo);
	hwpmc_kowner_free(pmc9_kpo);
	return err;
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
	debugfs_remove(pmc9_prof_file);
	/* Its PMCs stopped and released: no sample is in flight after. */
	hwpmc_kowner_free(pmc9_ppo);
	pmc9_ppo = NULL;
	vfree(pmc9_prof_buf);
	pmc9_prof_buf = NULL;
	hwpmc_kctr_fini(&pmc9_prof);
	for (i = 0; i < HWPMC_MAX_ROWS; i++)
		hwpmc_kctr_fini(&pmc9_kctr[i]);
}

const struct hwpmc_iface hwpmc_pmc9_iface = {
	.name	= "pmc9",
	.init	= pmc9_init,
	.exit	= pmc9_exit,
};
