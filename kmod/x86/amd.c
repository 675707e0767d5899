// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: AMD core counter register layout (class K8): the 4 legacy
 * counters (PerfEvtSel/PerfCtr at C001_0000H/C001_0004H), or 6 with
 * PerfCtrExtCore (PERF_CTL/PERF_CTR interleaved from C001_0200H), and
 * PerfMonV2's global control.  The control function runs on the
 * counter's CPU with IRQs off (the switch hook, IPIs); the counter MSR and
 * width functions also in NMI context.  None takes a lock or allocates.
 */
#include "x86.h"

/* NMI context too. */
static u32 k8_ctr_msr(unsigned int i)
{
	return hwpmc_amd_ctr_msr(hwpmc_x86.ext_core, i);
}

/* IRQs off, on the counter's CPU. */
static void k8_control(unsigned int i, u64 ctl)
{
	hwpmc_pmu->write_msr(hwpmc_amd_ctl_msr(hwpmc_x86.ext_core, i), ctl);
}

static unsigned int k8_nctr(void)
{
	return hwpmc_x86.amd ? hwpmc_x86.ngp : 0;
}

/* NMI context too. */
static unsigned int k8_width(void)
{
	return hwpmc_x86.width;
}

/* Event select: 12 bits, bits 8-11 going to EventSelect[35:32]. */
static int k8_validate(const struct pmc_op_pmcallocate *a, unsigned int idx,
		       u64 *ctl)
{
	u64 cfg = a->pm_config;

	if (a->pm_event > 0xfff || a->pm_config1 ||
	    (cfg & ~(PMC_X86_CONFIG_MASK & ~PMC_X86_CONFIG_ANYTHREAD)))
		return -EINVAL;
	if (!(cfg & (PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS)))
		cfg |= PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS;
	*ctl = (a->pm_event & 0xff) | ((u64)(a->pm_event >> 8) << 32) | cfg;
	return 0;
}

const struct hwpmc_x86_hw hwpmc_k8_hw = {
	.ctr_msr	= k8_ctr_msr,
	.control	= k8_control,
	.rdpmc_base	= 0,
	.global_bit0	= 0,
	.nctr		= k8_nctr,
	.width		= k8_width,
	.validate	= k8_validate,
	.en		= HWPMC_EVSEL_EN,
	.intr		= HWPMC_EVSEL_INT,
};
