/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: the x86 backend's only door to the hardware.  Every CPUID leaf,
 * MSR and RDPMC the backend uses goes through one small ops table: the
 * native one by default, or, in the test flavor of the module only, a
 * software model of the Intel architectural PerfMon v4 and AMD PerfMonV2
 * registers (x86/model/).
 *
 * All ops act on the calling CPU, may be called in NMI context, take no
 * locks and allocate nothing.
 */
#ifndef _HWPMC_X86_PMU_H
#define _HWPMC_X86_PMU_H

#include <linux/bits.h>
#include <linux/types.h>

struct hwpmc_pmu_ops {
	const char *name;		/* "native", "model-intel", ... */
	/* CPUID leaf/subleaf: regs[0..3] = eax, ebx, ecx, edx. */
	void (*cpuid)(u32 leaf, u32 subleaf, u32 regs[4]);
	/* 0, or -EIO if the MSR does not exist. */
	int (*read_msr)(u32 msr, u64 *val);
	int (*write_msr)(u32 msr, u64 val);
	/* RDPMC with ECX = @index.  (Named so: rdmsr, wrmsr and rdpmc are macros.) */
	u64 (*read_pmc)(u32 index);
	/* Write the local APIC's LVTPC entry (APIC_DM_NMI: unmasked NMI). */
	void (*write_lvtpc)(u32 val);
};

/* The ops in use; set once at load, before any class probes. */
extern const struct hwpmc_pmu_ops *hwpmc_pmu;
extern const struct hwpmc_pmu_ops hwpmc_pmu_native;

#ifdef HWPMC_TESTING
/*
 * The model: "intel" (architectural PerfMon v4: 4 programmable and 3
 * fixed counters, 48 bits), "intel-nofw" (the same without full-width
 * counter writes), "amd" (PerfMonV2, 6 counters, 48 bits), "amd-ext"
 * (PerfCtrExtCore, 6 counters, no global MSRs) or "amd-legacy" (the 4 K7
 * counters, no global MSRs).
 * Counters advance when a test writes a count to the debugfs file
 * hwpmc-model/advance: every counter enabled on the writing CPU advances
 * by that many events; one that wraps sets its overflow status bit and,
 * if its interrupt is enabled, raises a real self-NMI through the local
 * APIC, unless the model's LVTPC (written with write_lvtpc; masked at
 * first) is masked or not set to NMI; delivery masks it, as the CPU
 * does, so the PMI handler must unmask it.  Returns NULL for an unknown
 * name.
 */
const struct hwpmc_pmu_ops *hwpmc_pmu_model_init(const char *which);
void hwpmc_pmu_model_fini(void);
/*
 * What perf's rdpmc setting reads as while the model is active (debugfs
 * hwpmc-model/perf_rdpmc): 0 and *@val, a -errno (a read that fails), or
 * -ENOENT for the real /sys/devices/cpu/rdpmc.  Process context.
 */
int hwpmc_pmu_model_perf_rdpmc(int *val);
#endif

/* Architectural MSRs and CPUID leaves the backend and the model share. */
#define HWPMC_CPUID_ARCH_PERFMON	0x0a
#define HWPMC_CPUID_EXT_BASE		0x80000000
#define HWPMC_CPUID_AMD_EXT_FEATURES	0x80000001
#define HWPMC_CPUID_AMD_PERFCTR_CORE	BIT(23)	/* ECX: PerfCtrExtCore */
#define HWPMC_CPUID_AMD_PERFMON		0x80000022

#define HWPMC_MSR_IA32_PMC0		0x0c1
#define HWPMC_MSR_IA32_A_PMC0		0x4c1	/* full-width aliases */
#define HWPMC_MSR_IA32_PERF_CAPABILITIES	0x345
#define HWPMC_PERF_CAP_FW_WRITE		BIT_ULL(13)
#define HWPMC_CPUID1_ECX_PDCM		BIT(15)
#define HWPMC_MSR_IA32_PERFEVTSEL0	0x186
#define HWPMC_MSR_IA32_FIXED_CTR0	0x309
#define HWPMC_MSR_IA32_FIXED_CTR_CTRL	0x38d
#define HWPMC_MSR_IA32_GLOBAL_STATUS	0x38e
#define HWPMC_MSR_IA32_GLOBAL_CTRL	0x38f
#define HWPMC_MSR_IA32_GLOBAL_OVF_CTRL	0x390

#define HWPMC_MSR_K7_EVNTSEL0		0xc0010000
#define HWPMC_MSR_K7_PERFCTR0		0xc0010004
#define HWPMC_MSR_F15H_PERF_CTL0	0xc0010200	/* CTL/CTR interleaved */
#define HWPMC_MSR_F15H_PERF_CTR0	0xc0010201
#define HWPMC_MSR_AMD_GLOBAL_STATUS	0xc0000300
#define HWPMC_MSR_AMD_GLOBAL_CTL	0xc0000301
#define HWPMC_MSR_AMD_GLOBAL_STATUS_CLR	0xc0000302

/*
 * AMD counter @i's control (PerfEvtSel, PERF_CTL) and count MSRs: with
 * PerfCtrExtCore the interleaved ones from C001_0200H, else the 4 legacy
 * K7 ones.  Any context, NMI included.
 */
static inline u32 hwpmc_amd_ctl_msr(bool ext_core, unsigned int i)
{
	return ext_core ? HWPMC_MSR_F15H_PERF_CTL0 + 2 * i :
			  HWPMC_MSR_K7_EVNTSEL0 + i;
}

static inline u32 hwpmc_amd_ctr_msr(bool ext_core, unsigned int i)
{
	return ext_core ? HWPMC_MSR_F15H_PERF_CTR0 + 2 * i :
			  HWPMC_MSR_K7_PERFCTR0 + i;
}

/* Event-select bits. */
#define HWPMC_EVSEL_USR			BIT_ULL(16)
#define HWPMC_EVSEL_OS			BIT_ULL(17)
#define HWPMC_EVSEL_EDGE		BIT_ULL(18)
#define HWPMC_EVSEL_INT			BIT_ULL(20)
#define HWPMC_EVSEL_ANY			BIT_ULL(21)
#define HWPMC_EVSEL_EN			BIT_ULL(22)
#define HWPMC_EVSEL_INV			BIT_ULL(23)

/* IA32_FIXED_CTR_CTRL: a nibble per fixed counter. */
#define HWPMC_FIXED_OS			0x1
#define HWPMC_FIXED_USR			0x2
#define HWPMC_FIXED_ANY			0x4
#define HWPMC_FIXED_PMI			0x8

#endif /* _HWPMC_X86_PMU_H */
