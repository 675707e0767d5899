// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: what PMU this machine has, from CPUID (through the PMU ops, so
 * that the test model can stand in for the CPU).
 *  Intel: architectural PerfMon, CPUID leaf 0AH, versions 1 to 5.
 *  AMD:   4 legacy counters; 6 with PerfCtrExtCore (CPUID 8000_0001H
 *         ECX[23]); PerfMonV2 (CPUID 8000_0022H) adds global control,
 *         status and status-clear MSRs and reports the counter count.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/string.h>
#include <linux/bits.h>
#include <linux/preempt.h>
#include <asm/nmi.h>

#include "x86.h"

struct hwpmc_x86_info hwpmc_x86;

static void hwpmc_cpuid(u32 leaf, u32 *r)
{
	hwpmc_pmu->cpuid(leaf, 0, r);
}

static void hwpmc_detect_intel(void)
{
	u32 r[4], len;
	u64 cap;

	hwpmc_cpuid(0, r);
	if (r[0] < HWPMC_CPUID_ARCH_PERFMON)
		return;
	hwpmc_cpuid(HWPMC_CPUID_ARCH_PERFMON, r);
	hwpmc_x86.version = r[0] & 0xff;
	if (!hwpmc_x86.version)
		return;			/* no architectural PerfMon */
	hwpmc_x86.ngp = (r[0] >> 8) & 0xff;
	hwpmc_x86.width = (r[0] >> 16) & 0xff;
	/* EBX bit i set: architectural event i is not available. */
	len = (r[0] >> 24) & 0x1f;
	hwpmc_x86.unavail = len ? r[1] & GENMASK(len - 1, 0) : 0;
	if (hwpmc_x86.version >= 2) {
		hwpmc_x86.nfixed = r[3] & 0x1f;
		hwpmc_x86.fixed_width = (r[3] >> 5) & 0xff;
		hwpmc_x86.fixed_mask = hwpmc_x86.nfixed ?
			GENMASK(hwpmc_x86.nfixed - 1, 0) : 0;
		/* Version 5: ECX is a bitmap of the fixed counters too. */
		if (hwpmc_x86.version >= 5)
			hwpmc_x86.fixed_mask |= r[2];
		hwpmc_x86.nfixed = fls(hwpmc_x86.fixed_mask);
		hwpmc_x86.has_global = true;
		hwpmc_x86.global_ctrl = HWPMC_MSR_IA32_GLOBAL_CTRL;
		hwpmc_x86.global_status = HWPMC_MSR_IA32_GLOBAL_STATUS;
		hwpmc_x86.global_ovf = HWPMC_MSR_IA32_GLOBAL_OVF_CTRL;
	}
	/*
	 * AnyThread (event-select bit 21, fixed nibble bit 2): versions 3
	 * and 4; in version 5 unless CPUID.0AH:EDX[15] deprecates it.
	 */
	hwpmc_x86.anythread = hwpmc_x86.version == 3 ||
			      hwpmc_x86.version == 4 ||
			      (hwpmc_x86.version >= 5 && !(r[3] & BIT(15)));
	/*
	 * IA32_PMCx keeps only bits 31:0 of a write, sign-extended; with
	 * IA32_PERF_CAPABILITIES.FW_WRITE the IA32_A_PMCx aliases write the
	 * full width, so that minus a period of 2^31 or more fits.
	 */
	hwpmc_cpuid(1, r);
	if ((r[2] & HWPMC_CPUID1_ECX_PDCM) &&
	    !hwpmc_pmu->read_msr(HWPMC_MSR_IA32_PERF_CAPABILITIES, &cap))
		hwpmc_x86.full_width = cap & HWPMC_PERF_CAP_FW_WRITE;
	hwpmc_x86.intel = hwpmc_x86.ngp > 0 && hwpmc_x86.width >= 32;
	hwpmc_x86.cputype = PMC_CPU_INTEL_ARCH;
}

static void hwpmc_detect_amd(void)
{
	u32 r[4], max;

	hwpmc_cpuid(HWPMC_CPUID_EXT_BASE, r);
	max = r[0];
	if (max < HWPMC_CPUID_AMD_EXT_FEATURES)
		return;
	hwpmc_cpuid(HWPMC_CPUID_AMD_EXT_FEATURES, r);
	hwpmc_x86.ext_core = r[2] & HWPMC_CPUID_AMD_PERFCTR_CORE;
	hwpmc_x86.ngp = hwpmc_x86.ext_core ? 6 : 4;
	hwpmc_x86.width = 48;
	hwpmc_x86.cputype = hwpmc_x86.ext_core ? PMC_CPU_AMD_EXT :
			    PMC_CPU_AMD_K8;
	if (max >= HWPMC_CPUID_AMD_PERFMON) {
		hwpmc_cpuid(HWPMC_CPUID_AMD_PERFMON, r);
		if (r[0] & BIT(0)) {
			hwpmc_x86.ngp = r[1] & 0xf;
			hwpmc_x86.has_global = true;
			hwpmc_x86.global_ctrl = HWPMC_MSR_AMD_GLOBAL_CTL;
			hwpmc_x86.global_status = HWPMC_MSR_AMD_GLOBAL_STATUS;
			hwpmc_x86.global_ovf = HWPMC_MSR_AMD_GLOBAL_STATUS_CLR;
			hwpmc_x86.cputype = PMC_CPU_AMD_V2;
		}
	}
	hwpmc_x86.amd = hwpmc_x86.ngp > 0;
}

/*
 * A counter that does not keep what is written to it is no counter: a
 * virtual machine without a PMU may accept the MSRs and read zero.  The
 * counter is probed only once reserved (@ctr_res, @sel_res: the keys of
 * the kernel's reservation protocol), so that one perf holds (the NMI
 * watchdog) is never clobbered; one that perf holds is proof enough that
 * the PMU exists.  Its value is put back after the probe.
 */
static bool hwpmc_counter_works(u32 msr, u32 ctr_res, u32 sel_res)
{
	u64 v = 0, old = 0;
	bool ok;

	if (!reserve_perfctr_nmi(ctr_res))
		return true;		/* perf's: perf found a PMU */
	if (!reserve_evntsel_nmi(sel_res)) {
		release_perfctr_nmi(ctr_res);
		return true;
	}
	ok = !hwpmc_pmu->read_msr(msr, &old) &&
	     !hwpmc_pmu->write_msr(msr, 0x5a5a5a) &&
	     !hwpmc_pmu->read_msr(msr, &v) && v == 0x5a5a5a;
	if (ok)
		hwpmc_pmu->write_msr(msr, old & GENMASK_ULL(hwpmc_x86.width - 1, 0));
	release_evntsel_nmi(sel_res);
	release_perfctr_nmi(ctr_res);
	return ok;
}

/* hwpmc_x86_detect() on the calling CPU, with preemption disabled. */
static int hwpmc_x86_detect_here(void)
{
	u32 r[4];
	char vendor[13];

	memset(&hwpmc_x86, 0, sizeof(hwpmc_x86));
	hwpmc_cpuid(0, r);
	memcpy(vendor, &r[1], 4);
	memcpy(vendor + 4, &r[3], 4);
	memcpy(vendor + 8, &r[2], 4);
	vendor[12] = 0;
	if (!strcmp(vendor, "GenuineIntel"))
		hwpmc_detect_intel();
	else if (!strcmp(vendor, "AuthenticAMD") ||
		 !strcmp(vendor, "HygonGenuine"))
		hwpmc_detect_amd();
	if ((hwpmc_x86.intel || hwpmc_x86.amd) &&
	    !hwpmc_counter_works(hwpmc_x86.intel ? hwpmc_iap_hw.ctr_msr(0) :
				 hwpmc_k8_hw.ctr_msr(0),
				 hwpmc_x86_perfctr_msr(0),
				 hwpmc_x86_evsel_msr(0))) {
		hwpmc_x86.intel = false;
		hwpmc_x86.amd = false;
	}
	if (!hwpmc_x86.intel && !hwpmc_x86.amd) {
		memset(&hwpmc_x86, 0, sizeof(hwpmc_x86));
		hwpmc_x86.cputype = PMC_CPU_GENERIC;
		return -ENODEV;
	}
	return 0;
}

/*
 * Fill hwpmc_x86; returns 0 when a usable PMU is there, -ENODEV if not.
 * The ops act on the calling CPU: detection reads (and the counter probe
 * writes and reads back) one CPU's registers, so it runs pinned.  Found
 * by the debug kernel (DEBUG_PREEMPT: the model's per-CPU registers read
 * from preemptible context at load); on hardware a migration between the
 * probe's write and its read-back could fail the probe, or put one CPU's
 * counter value back into another's.
 */
int hwpmc_x86_detect(void)
{
	int err;

	preempt_disable();
	err = hwpmc_x86_detect_here();
	preempt_enable();
	return err;
}
