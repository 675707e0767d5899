// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: Intel architectural PerfMon register layouts: IAP (programmable
 * counters, IA32_PMCx / IA32_PERFEVTSELx) and IAF (fixed counters,
 * IA32_FIXED_CTRx controlled by a nibble each of IA32_FIXED_CTR_CTRL).
 * The control functions run on the counter's CPU with IRQs off (the
 * switch hook, IPIs); the counter MSR and width functions also in NMI
 * context.  None takes a lock or allocates.
 */
#include <linux/percpu.h>

#include "x86.h"

/*
 * The full-width alias where there is one: it writes all 48 bits.  NMI
 * context too.
 */
static u32 iap_ctr_msr(unsigned int i)
{
	return (hwpmc_x86.full_width ? HWPMC_MSR_IA32_A_PMC0 :
		HWPMC_MSR_IA32_PMC0) + i;
}

/* IRQs off, on the counter's CPU. */
static void iap_control(unsigned int i, u64 ctl)
{
	hwpmc_pmu->write_msr(HWPMC_MSR_IA32_PERFEVTSEL0 + i, ctl);
}

static unsigned int iap_nctr(void)
{
	return hwpmc_x86.intel ? hwpmc_x86.ngp : 0;
}

/* NMI context too. */
static unsigned int iap_width(void)
{
	return hwpmc_x86.width;
}

/* The architectural events, in CPUID.0AH:EBX bit order. */
static const u16 iap_arch_events[] = {
	0x003c,		/* unhalted core cycles */
	0x00c0,		/* instructions retired */
	0x013c,		/* unhalted reference cycles */
	0x4f2e,		/* LLC references */
	0x412e,		/* LLC misses */
	0x00c4,		/* branch instructions retired */
	0x00c5,		/* branch mispredicts retired */
};

/*
 * AnyThread counts the events of the other hyperthread of the core too,
 * whoever runs there: the CPU must have it (EOPNOTSUPP), and the caller
 * the privilege of system-scope PMCs (EPERM).
 */
static int iap_anythread_check(u64 cfg)
{
	if (!(cfg & PMC_X86_CONFIG_ANYTHREAD))
		return 0;
	if (!hwpmc_x86.anythread)
		return -EOPNOTSUPP;
	return hwpmc_priv_anythread() ? 0 : -EPERM;
}

static int iap_validate(const struct pmc_op_pmcallocate *a, unsigned int idx,
			u64 *ctl)
{
	u64 cfg = a->pm_config;
	unsigned int i;
	u16 code;
	int err;

	if (a->pm_event > 0xff || (cfg & ~PMC_X86_CONFIG_MASK) ||
	    a->pm_config1)
		return -EINVAL;
	err = iap_anythread_check(cfg);
	if (err)
		return err;
	code = a->pm_event | (PMC_X86_CONFIG_UMASK(cfg) << 8);
	for (i = 0; i < ARRAY_SIZE(iap_arch_events); i++)
		if (code == iap_arch_events[i] && (hwpmc_x86.unavail & BIT(i)))
			return -EINVAL;
	if (!(cfg & (PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS)))
		cfg |= PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS;
	*ctl = a->pm_event | cfg;
	return 0;
}

const struct hwpmc_x86_hw hwpmc_iap_hw = {
	.ctr_msr	= iap_ctr_msr,
	.control	= iap_control,
	.rdpmc_base	= 0,
	.global_bit0	= 0,
	.nctr		= iap_nctr,
	.width		= iap_width,
	.validate	= iap_validate,
	.en		= HWPMC_EVSEL_EN,
	.intr		= HWPMC_EVSEL_INT,
};

/* NMI context too. */
static u32 iaf_ctr_msr(unsigned int i)
{
	return HWPMC_MSR_IA32_FIXED_CTR0 + i;
}

/* IRQs off, on the counter's CPU.  @ctl is the counter's nibble. */
static void iaf_control(unsigned int i, u64 ctl)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);

	xc->fixed_ctl &= ~(0xfULL << (4 * i));
	xc->fixed_ctl |= (ctl & 0xf) << (4 * i);
	hwpmc_pmu->write_msr(HWPMC_MSR_IA32_FIXED_CTR_CTRL, xc->fixed_ctl);
}

static unsigned int iaf_nctr(void)
{
	return hwpmc_x86.intel ? hwpmc_x86.nfixed : 0;
}

/* NMI context too. */
static unsigned int iaf_width(void)
{
	return hwpmc_x86.fixed_width;
}

/* Fixed counter i counts one event: the PMC's event is the counter. */
static bool iaf_row_ok(unsigned int idx, const struct pmc_op_pmcallocate *a)
{
	return idx == a->pm_event;
}

static int iaf_validate(const struct pmc_op_pmcallocate *a, unsigned int idx,
			u64 *ctl)
{
	u64 cfg = a->pm_config, allowed = PMC_X86_CONFIG_USR |
		  PMC_X86_CONFIG_OS | PMC_X86_CONFIG_ANYTHREAD;
	int err;

	if (a->pm_event >= 32 || !(hwpmc_x86.fixed_mask & BIT(a->pm_event)) ||
	    (cfg & ~allowed) || a->pm_config1)
		return -EINVAL;
	err = iap_anythread_check(cfg);
	if (err)
		return err;
	if (!(cfg & (PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS)))
		cfg |= PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS;
	*ctl = ((cfg & PMC_X86_CONFIG_OS) ? HWPMC_FIXED_OS : 0) |
	       ((cfg & PMC_X86_CONFIG_USR) ? HWPMC_FIXED_USR : 0) |
	       ((cfg & PMC_X86_CONFIG_ANYTHREAD) ? HWPMC_FIXED_ANY : 0);
	return 0;
}

const struct hwpmc_x86_hw hwpmc_iaf_hw = {
	.ctr_msr	= iaf_ctr_msr,
	.control	= iaf_control,
	.rdpmc_base	= 1U << 30,
	.global_bit0	= 32,
	.nctr		= iaf_nctr,
	.width		= iaf_width,
	.validate	= iaf_validate,
	.row_ok		= iaf_row_ok,
	.en		= 0,		/* the OS/USR bits enable it */
	.intr		= HWPMC_FIXED_PMI,
};
