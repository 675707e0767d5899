// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the PMI.  Counter overflows arrive as NMIs through the local
 * APIC's LVTPC entry (set to NMI delivery; the CPU masks it on delivery,
 * so it is unmasked again after each PMI).  The handler is registered
 * with register_nmi_handler(NMI_LOCAL) and returns NMI_DONE for NMIs that
 * are not hwpmc's, so other NMI users keep working.
 *
 * Everything here runs in NMI context: no locks, no allocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include "x86.h"

extern atomic_t hwpmc_x86_nsampling;

/* Point LVTPC at NMI delivery, unmasked.  NMI context too. */
void hwpmc_x86_lvtpc_nmi(void)
{
	/* apic->write, not apic_write(): a static call modules cannot use. */
	if (boot_cpu_has(X86_FEATURE_APIC) && apic)
		apic->write(APIC_LVTPC, APIC_DM_NMI);
}

/*
 * The overflow status of this CPU: the global status where the PMU has
 * one, else the loaded sampling counters that wrapped past zero (they
 * were started at minus their period, so their top bit cleared).
 * NMI context.
 */
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
		const struct hwpmc_x86_hw *hw;
		unsigned int idx;
		u64 v = 0, mask;

		if (!pm || !hwpmc_is_sampling(pm))
			continue;
		hw = hwpmc_x86_hw_of(pm->cls->ops);
		idx = pm->row - pm->cls->firstrow;
		mask = hwpmc_x86_mask(hw);
		hwpmc_pmu->read_msr(hw->ctr_msr(idx), &v);
		if (!(v & (mask ^ (mask >> 1))))
			status |= BIT_ULL(hw->global_bit0 + idx);
	}
	return status;
}

/* The PMI.  NMI context: no locks, no allocation. */
static int hwpmc_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int r, n = hwpmc_nrows(), handled = 0;
	u64 status, acked = 0;

	if (!atomic_read(&hwpmc_x86_nsampling))
		return NMI_DONE;
	status = hwpmc_x86_status(xc);
	for (r = 0; r < n && status; r++) {
		struct hwpmc_pmc *pm = READ_ONCE(xc->loaded[r]);
		const struct hwpmc_x86_hw *hw;
		unsigned int idx;
		u64 bit, start;

		if (!pm)
			continue;
		hw = hwpmc_x86_hw_of(pm->cls->ops);
		idx = pm->row - pm->cls->firstrow;
		bit = BIT_ULL(hw->global_bit0 + idx);
		if (!(status & bit))
			continue;
		acked |= bit;
		if (!hwpmc_is_sampling(pm))
			continue;
		handled++;
		hwpmc_sample_take(pm, current, regs);
		/* The next period: minus the reload, sign-extended. */
		start = (-(u64)pm->reload) & hwpmc_x86_mask(hw);
		hwpmc_pmu->write_msr(hw->ctr_msr(idx), start);
		xc->base[r] = start;
	}
	if (acked && hwpmc_x86.has_global)
		hwpmc_pmu->write_msr(hwpmc_x86.global_ovf, acked);
	if (!handled) {
		atomic64_inc(&hwpmc_stats.intr_ignored);
		return NMI_DONE;
	}
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
