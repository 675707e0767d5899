// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the read page (include/uapi/linux/hwpmc.h, "the read page").
 *
 * One page per owner, made by the first mmap() of its /dev/hwpmc open,
 * zeroed, mapped read-only, in which the kernel keeps the values of the
 * owner's PMCs that have a slot, so that user space reads them without a
 * system call.
 *
 * Who writes what:
 *  - a slot's count (rs_value): the hooks that credit the PMC, through
 *    hwpmc_target_add() (hwpmc.h), one atomic add after the add to
 *    pm->value, on any CPU at once, no lock (never NMI: the SOFT credit
 *    paths are tracepoints, timers and IRQs-off sections); and PMCRW or
 *    PMCSETCOUNT writes (hwpmc_readpage_wrote()), which happen only while
 *    no credit can be in flight (the PMC not running, and settled);
 *  - a slot's control word (rs_ctl): under hwpmc_proc_lock only
 *    (hwpmc_readpage_sync()), where the PMC's targets change (attach,
 *    detach, a target's exit) and its state (start, stop), so that two
 *    writers never publish a stale answer;
 *  - the slot bitmap and generations: under the owner's lock (PMCALLOCATE,
 *    PMCRELEASE, the owner's shutdown).
 *
 * Lifetime: the page is referenced by its owner (until the owner is freed,
 * after a grace period that outlasts every hook that could still credit
 * one of its PMCs) and by each mapping (vm_ops open/close), so it goes
 * with the last of them.  A mapping's file is the open of /dev/hwpmc it
 * was made from: a mapping keeps that open, hence its owner and the
 * owner's place in its user's max_owners_per_user, so that a user cannot
 * pin more pages than owners (an open closed after its mmap() would
 * otherwise leave its page mapped while the user opened the next).  The
 * owner's shutdown (its opener exited) still releases its PMCs and log;
 * the page then says HWPMC_RP_F_GONE.  A slot freed by PMCRELEASE is reused only after
 * a grace period from its release (the hooks that saw the old PMC credit
 * it inside an RCU read side), with a new generation.
 */
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <asm/cpufeature.h>
#include <asm/tsc.h>

#include "hwpmc.h"
#include "compat/compat.h"

struct hwpmc_rpage {
	struct page *page;
	struct hwpmc_readpage *up;		/* page_address(page) */
	bool tsc;				/* TSC PMCs get slots */
	u32 next_gen;				/* owner lock */
	DECLARE_BITMAP(used, HWPMC_READPAGE_NSLOTS);	/* owner lock */
	unsigned long free_gp[HWPMC_READPAGE_NSLOTS];	/* owner lock */
	struct rcu_head rcu;
};

static_assert(sizeof(struct hwpmc_readpage) <= HWPMC_READPAGE_SIZE);
static_assert(sizeof(struct hwpmc_readslot) == 16);
static_assert(offsetof(struct hwpmc_readpage, rp_slots) == 64);
static_assert(sizeof(atomic64_t) == sizeof(__u64));

#ifdef HWPMC_TESTING
/*
 * Test flavor only: QEMU's TCG offers no invariant TSC, and a guest may
 * find its vCPUs' TSCs unsynchronized, so the tests (pinned to one CPU)
 * let the page answer for TSC PMCs there.
 */
static bool test_readpage_tsc;
module_param(test_readpage_tsc, bool, 0444);
#else
#define test_readpage_tsc false
#endif

/*
 * Does user RDTSC read what tsc_read() does, wherever either runs?  An
 * invariant TSC (constant rate, not stopped in idle) that the kernel did
 * not find unsynchronized.  A caller whose own RDTSC is disabled is told
 * at GETREADSLOT.
 */
static bool hwpmc_readpage_tsc_ok(void)
{
	if (!boot_cpu_has(X86_FEATURE_TSC))
		return false;
	return test_readpage_tsc ||
	       (boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
		boot_cpu_has(X86_FEATURE_NONSTOP_TSC) && !check_tsc_unstable());
}

/*
 * The owner's page, made at its first mmap().  Under the mmap lock, which
 * the owner's lock may be held across (PMCATTACH's MAP_IN): so no owner
 * lock here; two makers race with cmpxchg, the loser frees its own.
 */
static struct hwpmc_rpage *hwpmc_readpage_get(struct hwpmc_owner *po)
{
	/* Pairs with the cmpxchg_release() below: the page made. */
	struct hwpmc_rpage *rp = smp_load_acquire(&po->rpage), *old;
	unsigned int i;

	if (rp)
		return rp;
	rp = kzalloc(sizeof(*rp), GFP_KERNEL_ACCOUNT);
	if (!rp)
		return NULL;
	rp->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!rp->page) {
		kfree(rp);
		return NULL;
	}
	rp->up = page_address(rp->page);
	rp->tsc = hwpmc_readpage_tsc_ok();
	rp->next_gen = 1;
	for (i = 0; i < HWPMC_READPAGE_NSLOTS; i++)
		rp->free_gp[i] = get_completed_synchronize_rcu();
	rp->up->rp_version = HWPMC_READPAGE_VERSION;
	rp->up->rp_nslots = HWPMC_READPAGE_NSLOTS;
	rp->up->rp_slot_size = sizeof(struct hwpmc_readslot);
	rp->up->rp_flags = rp->tsc ? HWPMC_RP_F_TSC : 0;
	/* The page's contents before the pointer (pairs with the acquire). */
	old = cmpxchg_release(&po->rpage, NULL, rp);
	if (old) {
		__free_page(rp->page);
		kfree(rp);
		return old;
	}
	/* A shutdown that looked before the page was there: say so now. */
	if (READ_ONCE(po->dead))
		hwpmc_readpage_owner_dead(po);
	return rp;
}

static void hwpmc_readpage_free_rcu(struct rcu_head *head)
{
	struct hwpmc_rpage *rp = container_of(head, struct hwpmc_rpage, rcu);

	put_page(rp->page);	/* the mappings may hold it longer */
	kfree(rp);
}

/*
 * The owner is freed (its last reference, after its PMCs were released):
 * its reference to the page goes after a grace period, when no hook can
 * still be crediting one of its PMCs.
 */
void hwpmc_readpage_owner_free(struct hwpmc_owner *po)
{
	struct hwpmc_rpage *rp = po->rpage;

	if (rp)
		call_rcu(&rp->rcu, hwpmc_readpage_free_rcu);
}

/* The owner was shut down (dead, every PMC released): readers are told. */
void hwpmc_readpage_owner_dead(struct hwpmc_owner *po)
{
	/* Pairs with hwpmc_readpage_get()'s cmpxchg_release(). */
	struct hwpmc_rpage *rp = smp_load_acquire(&po->rpage);

	if (rp)
		WRITE_ONCE(rp->up->rp_flags, rp->up->rp_flags | HWPMC_RP_F_GONE);
}

static struct hwpmc_readslot *hwpmc_rslot(struct hwpmc_pmc *pm)
{
	return &pm->po->rpage->up->rp_slots[pm->rslot];
}

/* Can the page answer for @pm (see the uapi header)? */
static bool hwpmc_readpage_eligible(struct hwpmc_rpage *rp,
				    const struct hwpmc_pmc *pm)
{
	if (pm->cls->ops == &hwpmc_tsc_ops)
		return rp->tsc;
	return pm->cls->ops == &hwpmc_soft_ops && pm->mode == PMC_MODE_TC &&
	       pm->event != PMC_SOFT_CLOCK_PROF;
}

/*
 * PMCALLOCATE: a slot for the new @pm, if its owner has a page, @pm is of
 * a kind it answers for and a slot is free (its release a grace period
 * ago); else none (pm->rslot -1: PMCRW only).  Before @pm can be attached
 * or started, so no hook credits it yet.  Owner lock held.
 */
void hwpmc_readpage_pmc_alloc(struct hwpmc_pmc *pm)
{
	/* Pairs with hwpmc_readpage_get()'s cmpxchg_release(). */
	struct hwpmc_rpage *rp = smp_load_acquire(&pm->po->rpage);
	struct hwpmc_readslot *rs;
	unsigned int i;
	u64 ctl;

	hwpmc_owner_assert_held(pm->po);
	pm->rslot = -1;
	if (!rp || !hwpmc_readpage_eligible(rp, pm))
		return;
	for_each_clear_bit(i, rp->used, HWPMC_READPAGE_NSLOTS)
		if (poll_state_synchronize_rcu(rp->free_gp[i]))
			break;
	if (i >= HWPMC_READPAGE_NSLOTS)
		return;
	__set_bit(i, rp->used);
	pm->rslot = i;
	pm->rgen = rp->next_gen++;
	if (!rp->next_gen)
		rp->next_gen = 1;
	rs = &rp->up->rp_slots[i];
	ctl = (u64)pm->rgen << 32;
	if (pm->cls->ops == &hwpmc_soft_ops) {
		/* No credit in flight: the last one was a grace period ago. */
		WRITE_ONCE(rs->rs_value, atomic64_read(&pm->value));
		pm->rvalue = (atomic64_t *)&rs->rs_value;
	} else {
		WRITE_ONCE(rs->rs_value, 0);	/* TSC: no offset */
		ctl |= HWPMC_RS_TSC;
	}
	/* The value before the generation that vouches for it. */
	smp_store_release(&rs->rs_ctl, ctl);
}

/*
 * PMCRELEASE, the owner's shutdown (@pm detached from every target, its
 * state DELETED): the slot is free, readers of its generation go to PMCRW
 * (which says EINVAL), and nobody gets it before a grace period (started
 * now: one that waited for unrelated RCU activity could be long).  A hook
 * that still credits @pm through pm->rvalue meanwhile writes a slot nobody
 * reads.  Owner lock held.
 */
void hwpmc_readpage_pmc_free(struct hwpmc_pmc *pm)
{
	struct hwpmc_rpage *rp;

	hwpmc_owner_assert_held(pm->po);
	if (pm->rslot < 0)
		return;
	rp = READ_ONCE(pm->po->rpage);	/* set: the slot was given from it */
	rp->free_gp[pm->rslot] = start_poll_synchronize_rcu();
	__clear_bit(pm->rslot, rp->used);
	raw_spin_lock(&hwpmc_proc_lock);
	WRITE_ONCE(hwpmc_rslot(pm)->rs_ctl, 0);
	pm->rslot = -1;
	raw_spin_unlock(&hwpmc_proc_lock);
}

/*
 * What @pm's slot can answer now, published: a SOFT PMC's count while it
 * is allocated or running and has a target (see the uapi header); a TSC
 * PMC always.  hwpmc_proc_lock held (it serializes the writers of the
 * inputs: pm->ntargets under it, pm->state before its callers take it).
 * Process or tracepoint context (a target's exit); never NMI.
 */
void hwpmc_readpage_sync(struct hwpmc_pmc *pm)
{
	int state = READ_ONCE(pm->state);
	u64 ctl;

	lockdep_assert_held(&hwpmc_proc_lock);
	if (pm->rslot < 0 || pm->cls->ops != &hwpmc_soft_ops)
		return;
	ctl = (u64)pm->rgen << 32;
	if ((state == PMC_STATE_ALLOCATED || state == PMC_STATE_RUNNING) &&
	    pm->ntargets)
		ctl |= HWPMC_RS_VALUE;
	WRITE_ONCE(hwpmc_rslot(pm)->rs_ctl, ctl);
}

/* The same, for a state change (PMCSTART, PMCSTOP): process context. */
void hwpmc_readpage_state(struct hwpmc_pmc *pm)
{
	if (pm->rslot < 0)
		return;
	raw_spin_lock(&hwpmc_proc_lock);
	hwpmc_readpage_sync(pm);
	raw_spin_unlock(&hwpmc_proc_lock);
}

/*
 * PMCRW with a new value, PMCSETCOUNT: @pm is not running and settled (no
 * credit in flight), its class wrote pm->value; the slot follows.
 */
void hwpmc_readpage_wrote(struct hwpmc_pmc *pm)
{
	if (pm->rvalue)
		atomic64_set(pm->rvalue, atomic64_read(&pm->value));
}

/* GETREADSLOT.  Owner lock held. */
int hwpmc_readpage_getslot(struct hwpmc_pmc *pm, struct pmc_op_getreadslot *a)
{
	hwpmc_owner_assert_held(pm->po);
	if (pm->rslot < 0)
		return -ENOENT;
	/* This task's RDTSC faults (PR_SET_TSC): the page cannot serve it. */
	if (pm->cls->ops == &hwpmc_tsc_ops && test_thread_flag(TIF_NOTSC))
		return -ENOENT;
	a->pm_slot = pm->rslot;
	a->pm_gen = pm->rgen;
	return 0;
}

/* A mapping's reference to the page (mremap() copies one: open). */
static void hwpmc_readpage_vm_open(struct vm_area_struct *vma)
{
	get_page(vma->vm_private_data);
}

static void hwpmc_readpage_vm_close(struct vm_area_struct *vma)
{
	put_page(vma->vm_private_data);
}

/* No fault handler: the one page is mapped whole at mmap(). */
static const struct vm_operations_struct hwpmc_readpage_vm_ops = {
	.open	= hwpmc_readpage_vm_open,
	.close	= hwpmc_readpage_vm_close,
};

/*
 * mmap() of /dev/hwpmc: the owner's read page, read-only, whole, at
 * HWPMC_READPAGE_OFFSET; the mapping keeps the open (vma->vm_file).  The
 * mmap lock is held: no owner lock.
 */
int hwpmc_readpage_mmap(struct hwpmc_owner *po, struct vm_area_struct *vma)
{
	struct hwpmc_rpage *rp;
	int err;

	if (vma->vm_pgoff != HWPMC_READPAGE_OFFSET >> PAGE_SHIFT ||
	    vma->vm_end - vma->vm_start != HWPMC_READPAGE_SIZE ||
	    HWPMC_READPAGE_SIZE != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	if (READ_ONCE(po->dead))
		return -ESRCH;
	rp = hwpmc_readpage_get(po);
	if (!rp)
		return -ENOMEM;
	/* Never writable (mprotect: EACCES), not inherited, not dumped. */
	hwpmc_vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP,
			   VM_MAYWRITE | VM_MAYEXEC);
	err = remap_pfn_range(vma, vma->vm_start, page_to_pfn(rp->page),
			      PAGE_SIZE, vma->vm_page_prot);
	if (err)
		return err;
	get_page(rp->page);
	vma->vm_private_data = rp->page;
	vma->vm_ops = &hwpmc_readpage_vm_ops;
	return 0;
}
