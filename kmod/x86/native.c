// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the native PMU ops: the CPU's own CPUID, MSRs and RDPMC.
 * Reachable from NMI context: no locks, no allocation.
 */
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "pmu.h"

/* NMI context. */
static void hwpmc_native_cpuid(u32 leaf, u32 subleaf, u32 regs[4])
{
	cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3]);
}

/* NMI context. */
static int hwpmc_native_rdmsr(u32 msr, u64 *val)
{
	return rdmsrl_safe(msr, val) ? -EIO : 0;
}

/* NMI context. */
static int hwpmc_native_wrmsr(u32 msr, u64 val)
{
	return wrmsrl_safe(msr, val) ? -EIO : 0;
}

/* NMI context. */
static u64 hwpmc_native_rdpmc(u32 index)
{
	u32 lo, hi;

	asm volatile("rdpmc" : "=a" (lo), "=d" (hi) : "c" (index));
	return ((u64)hi << 32) | lo;
}

/* NMI context.  apic->write, not apic_write(): a static call modules cannot use. */
static void hwpmc_native_write_lvtpc(u32 val)
{
	if (boot_cpu_has(X86_FEATURE_APIC) && apic)
		apic->write(APIC_LVTPC, val);
}

const struct hwpmc_pmu_ops hwpmc_pmu_native = {
	.name	= "native",
	.cpuid	= hwpmc_native_cpuid,
	.read_msr	= hwpmc_native_rdmsr,
	.write_msr	= hwpmc_native_wrmsr,
	.read_pmc	= hwpmc_native_rdpmc,
	.write_lvtpc	= hwpmc_native_write_lvtpc,
};

const struct hwpmc_pmu_ops *hwpmc_pmu = &hwpmc_pmu_native;
