// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the PMI.  Counter overflows arrive as NMIs through the local
 * APIC's LVTPC entry (set to NMI delivery; the CPU masks it on delivery,
 * so it is unmasked again after each PMI).  The handler is registered
 * with register_nmi_handler(NMI_LOCAL) and returns NMI_DONE for NMIs that
 * are not hwpmc's, so other NMI users keep working.
 *
 * The handler and everything it calls run in NMI context: no locks, no
 * allocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/jiffies.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include "x86.h"

/* Point LVTPC at NMI delivery, unmasked.  NMI context too. */
void hwpmc_x86_lvtpc_nmi(void)
{
	hwpmc_pmu->write_lvtpc(APIC_DM_NMI);
}

/*
 * Without a global status (AMD before PerfMonV2), did the counter of @pm,
 * loaded on row @r, overflow?  A counter that raises PMIs was started at
 * minus a period, so its top bit cleared.  NMI context.
 */
static bool hwpmc_x86_wrapped(struct hwpmc_x86_cpu *xc, unsigned int r,
			      struct hwpmc_pmc *pm)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	u64 v = 0, mask = hwpmc_x86_mask(hw);

	if (!hwpmc_is_sampling(pm) && !(READ_ONCE(xc->reload) & BIT_ULL(r)))
		return false;		/* holds its count: no PMI */
	hwpmc_pmu->read_msr(hw->ctr_msr(pm->row - pm->cls->firstrow), &v);
	return !(v & (mask ^ (mask >> 1)));
}

/* The global status bits of the counters (not of PEBS, LBR, ...).  NMI context. */
static u64 hwpmc_x86_counter_bits(void)
{
	u64 bits = GENMASK_ULL(hwpmc_x86.ngp - 1, 0);

	if (hwpmc_x86.intel)
		bits |= (u64)hwpmc_x86.fixed_mask << hwpmc_iaf_hw.global_bit0;
	return bits;
}

/* The overflow status of this CPU, in global status bits.  NMI context. */
static u64 hwpmc_x86_status(struct hwpmc_x86_cpu *xc)
{
	unsigned int r, n = hwpmc_nrows();
	u64 status = 0;

	if (hwpmc_x86.has_global) {
		hwpmc_pmu->read_msr(hwpmc_x86.global_status, &status);
		return status;
	}
	for (r = 0; r < n; r++) {
		struct hwpmc_pmc *pm = READ_ONCE(xc->loaded[r]);

		if (pm && hwpmc_x86_wrapped(xc, r, pm))
			status |= BIT_ULL(hwpmc_x86_hw_of(pm->cls->ops)->global_bit0 +
					  pm->row - pm->cls->firstrow);
	}
	return status;
}

/*
 * Without a global status (AMD before PerfMonV2) an overflow's NMI may
 * arrive after its counter was unloaded or after an earlier NMI already
 * took its overflow; like perf, hwpmc claims an NMI that finds no overflow
 * for a short while after it handled one or unloaded a counter (the
 * window, per CPU).  No locks.
 */
#define HWPMC_X86_NMI_WINDOW_MS	100

/* Open this CPU's window.  NMI context, or IRQs off (x86_unload()). */
void hwpmc_x86_nmi_window_open(struct hwpmc_x86_cpu *xc)
{
	if (!hwpmc_x86.has_global)
		WRITE_ONCE(xc->nmi_until, jiffies +
			   msecs_to_jiffies(HWPMC_X86_NMI_WINDOW_MS));
}

/* NMI context.  (jiffies starts far from 0 on 64-bit: 0 is no window.) */
static bool hwpmc_x86_nmi_window(struct hwpmc_x86_cpu *xc)
{
	return !hwpmc_x86.has_global &&
	       time_before(jiffies, READ_ONCE(xc->nmi_until));
}

/*
 * No hardware PMC runs, but the overflow of one that just stopped may
 * still be on its way.  With a global status it shows there: it is
 * hwpmc's while hwpmc holds the counters (any hardware PMC allocated;
 * otherwise perf may own them).  Without one, the window decides.  NMI
 * context: no locks.
 */
static int hwpmc_x86_nmi_late(struct hwpmc_x86_cpu *xc)
{
	u64 status = 0;

	if (hwpmc_x86.has_global) {
		if (!hwpmc_x86_in_use())
			return NMI_DONE;
		hwpmc_pmu->read_msr(hwpmc_x86.global_status, &status);
		status &= hwpmc_x86_counter_bits();
		if (!status)
			return NMI_DONE;
		hwpmc_pmu->write_msr(hwpmc_x86.global_ovf, status);
	} else if (!hwpmc_x86_nmi_window(xc)) {
		return NMI_DONE;
	}
	hwpmc_x86_lvtpc_nmi();
	return NMI_HANDLED;
}

/*
 * The PMI.  A sampling PMC that overflowed takes its sample and starts
 * its next period; a counting PMC puts what its counter counted aside for
 * the next fold and starts its counter over (see x86/core.c).  NMI
 * context: no locks, no allocation.
 */
static int hwpmc_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int r, n = hwpmc_nrows(), handled = 0;
	u64 status, acked = 0, held = 0;

	if (!atomic_read(&hwpmc_x86_nrunning))
		return hwpmc_x86_nmi_late(xc);
	status = hwpmc_x86_status(xc);
	for (r = 0; r < n && status; r++) {
		struct hwpmc_pmc *pm = READ_ONCE(xc->loaded[r]);
		const struct hwpmc_x86_hw *hw;
		unsigned int idx;
		u64 bit, start, mask;

		if (!pm)
			continue;
		hw = hwpmc_x86_hw_of(pm->cls->ops);
		idx = pm->row - pm->cls->firstrow;
		bit = BIT_ULL(hw->global_bit0 + idx);
		if (!(status & bit))
			continue;
		mask = hwpmc_x86_mask(hw);
		if (hwpmc_is_sampling(pm)) {
			hwpmc_sample_take(pm, current, regs);
			/* The next period: minus the reload. */
			start = (-(u64)pm->reload) & mask;
		} else if (xc->reload & BIT_ULL(r)) {
			u64 v = 0;

			hwpmc_pmu->read_msr(hw->ctr_msr(idx), &v);
			local64_add(((v & mask) - local64_read(&xc->base[r])) &
				    mask, &xc->pending[r]);
			start = (-hwpmc_x86_max_period(hw)) & mask;
		} else {
			/*
			 * Holds its count (user RDPMC): it just wrapped, with
			 * its interrupt off, so this NMI is not its.
			 */
			held |= bit;
			continue;
		}
		acked |= bit;
		handled++;
		hwpmc_pmu->write_msr(hw->ctr_msr(idx), start);
		local64_set(&xc->base[r], start);
	}
	if (hwpmc_x86.has_global) {
		/*
		 * A counter that overflowed as it was being unloaded: hwpmc
		 * holds every counter, so its PMI is hwpmc's all the same.
		 */
		u64 late = status & hwpmc_x86_counter_bits() & ~acked & ~held;

		if (late && !handled)
			handled = 1;
		/* A held counter's bit is cleared too, but claims nothing. */
		acked |= late | held;
		if (acked)
			hwpmc_pmu->write_msr(hwpmc_x86.global_ovf, acked);
	}
	if (!handled && hwpmc_x86_nmi_window(xc)) {
		hwpmc_x86_lvtpc_nmi();
		return NMI_HANDLED;	/* a late one: see the window */
	}
	if (!handled) {
		atomic64_inc(&hwpmc_stats.intr_ignored);
		return NMI_DONE;
	}
	hwpmc_x86_nmi_window_open(xc);
	/* Interrupts, as FreeBSD counts them, not the counters in each. */
	atomic64_inc(&hwpmc_stats.intr_processed);
	hwpmc_x86_lvtpc_nmi();
	return NMI_HANDLED;
}

int hwpmc_x86_nmi_init(void)
{
	return register_nmi_handler(NMI_LOCAL, hwpmc_x86_nmi, 0, "hwpmc");
}

void hwpmc_x86_nmi_fini(void)
{
	unregister_nmi_handler(NMI_LOCAL, "hwpmc");
}
