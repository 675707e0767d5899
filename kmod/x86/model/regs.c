// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: a software model of the x86 PMU registers, for tests only: the
 * register file and the ops tables (x86/pmu.h) that read and write it.
 * The counting and NMI engine and the debugfs files are engine.c's, the
 * model's self-test selftest.c's.
 *
 *
 * Built into the test flavor of the module (HWPMC_TESTING) and never into
 * a release module.  It implements struct hwpmc_pmu_ops (x86/pmu.h) after
 * the vendor manuals: Intel SDM vol. 3, "Performance Monitoring",
 * architectural performance monitoring version 4; AMD APM vol. 2 §13.2,
 * "Performance Monitoring Counters", with PerfCtrExtCore and PerfMonV2.
 * Counters never move by themselves: a test advances them (see "debugfs").
 *
 * Every register is per CPU and is only ever touched by its own CPU: the
 * ops act on the calling CPU's register file, as RDMSR/WRMSR/RDPMC do.
 * Writing a counter never changes its overflow status.
 *
 * Intel model ("model-intel"): Skylake-like, CPUID family 6 model 0x5e.
 *   CPUID 0:     max basic leaf at least 0xa, "GenuineIntel".
 *   CPUID 1:     EAX = 0x000506e3; ECX.PDCM (bit 15) set.
 *   CPUID 0xa:   EAX = 0x07300404 (version 4, 4 counters, 48 bits, 7
 *                events), EBX = 0 (all available), ECX = 0, EDX = 0x603 (3
 *                fixed counters, 48 bits, AnyThread not deprecated).
 *   CPUID 0x80000001: ECX PerfCtrExt bits 23, 24, 28 cleared.
 *   CPUID 0x80000022: all zero.
 *   IA32_PMC0..3 (0xc1..0xc4): read the 48-bit count.  A write stores bits
 *     31:0 sign-extended to 48 bits and ignores bits 63:32, as on hardware
 *     (so -period works for periods below 2^31, and nothing else does).
 *   IA32_A_PMC0..3 (0x4c1..0x4c4): full-width aliases of the same
 *     counters: a write stores all 48 bits; bits 63:48 set: -EIO.  This is
 *     what IA32_PERF_CAPABILITIES.FW_WRITE advertises; use these to
 *     restore a saved count or to load -period for any period.
 *   IA32_PERFEVTSEL0..3 (0x186..0x189): bits 31:0 (event, umask, USR, OS,
 *     E, PC, INT, ANY, EN, INV, CMASK); bits 63:32 set: -EIO.
 *   IA32_FIXED_CTR0..2 (0x309..0x30b): 48 bits; bits 63:48 set: -EIO
 *     (reserved beyond the width, must be written as zero).
 *   IA32_FIXED_CTR_CTRL (0x38d): bits 11:0 (a nibble per counter: OS 0x1,
 *     USR 0x2, ANY 0x4, PMI 0x8); any other bit set: -EIO.
 *   IA32_PERF_GLOBAL_STATUS (0x38e): read-only (a write: -EIO).  Bit i:
 *     PMCi overflowed; bit 32+i: fixed counter i overflowed.
 *   IA32_PERF_GLOBAL_CTRL (0x38f): bits 3:0 and 34:32; others: -EIO.
 *     Power-on value 0xf (the PMC enables set, as the SDM says).
 *   IA32_PERF_GLOBAL_OVF_CTRL (0x390): a write clears the status bits
 *     that are 1 in the value; reads 0.  Bits other than the counters'
 *     and the SDM's 55 and 63:58 set: -EIO.
 *   IA32_PERF_GLOBAL_STATUS_SET (0x391): a write sets the status bits that
 *     are 1 in the value (same valid bits), without raising an NMI; reads
 *     0.
 *   IA32_PERF_CAPABILITIES (0x345): read-only, FW_WRITE (bit 13) only.
 *
 * Intel model without full-width writes ("intel-nofw"), as CPUs before
 * Sandy Bridge: the same, but IA32_PERF_CAPABILITIES reads 0 and the
 * IA32_A_PMCx aliases do not exist (-EIO), so a counter can only be
 * written through IA32_PMCx, 32 bits sign-extended.
 *   RDPMC: ECX bit 30 set: fixed counter ECX & 0x3fffffff, else PMC ECX;
 *     an index out of range reads 0 (hardware would #GP).
 *
 * AMD model ("model-amd"): Zen 4-like, CPUID family 0x19 model 0x61.
 *   CPUID 0:     "AuthenticAMD".
 *   CPUID 1:     EAX = 0x00a60f12 (family 0xf + extended family 0xa); ECX
 *                PDCM cleared.
 *   CPUID 0xa:   all zero (reserved on AMD).
 *   CPUID 0x80000000: max extended leaf at least 0x80000022,
 *                "AuthenticAMD".
 *   CPUID 0x80000001: ECX bit 23 (PerfCtrExtCore) set.
 *   CPUID 0x80000022: EAX = 1 (PerfMonV2), EBX = 6 core counters (no LBR,
 *                no northbridge counters), ECX = EDX = 0.
 *   PERF_CTL0..5 / PERF_CTR0..5 (0xc0010200 + 2i / 0xc0010201 + 2i), and
 *     the legacy K7 EVNTSEL0..3 / PERFCTR0..3 (0xc0010000..3 / ..4..7) as
 *     aliases of counters 0..3.  As AMD does, reserved bits of a write are
 *     ignored: an event select keeps 0x0000030fffd7ffff (event 11:0,
 *     umask, USR, OS, E, INT, EN, INV, CNTMASK, HostOnly, GuestOnly), a
 *     counter keeps bits 47:0 (so a 64-bit -period is fine).
 *   PerfCntrGlobalStatus (0xc0000300): read-only; a write is ignored (0).
 *     Bit i: counter i overflowed.
 *   PerfCntrGlobalCtl (0xc0000301): bits 5:0, the rest ignored.  Power-on
 *     value 0x3f, so legacy software counts without touching it.
 *   PerfCntrGlobalStatusClr (0xc0000302): clears the status bits that are 1
 *     in the value; reads 0.
 *   PerfCntrGlobalStatusSet (0xc0000303): sets status bits, raises no NMI;
 *     reads 0.
 *   RDPMC: ECX 0..5 reads counter ECX; anything else reads 0.
 *
 * AMD model with PerfCtrExtCore but no PerfMonV2 ("amd-ext", "model-amd-ext"),
 * as family 15h to Zen 3: CPUID 1 EAX = 0x00600f12 (family 0x15); CPUID
 * 0x80000001 ECX bit 23 set; CPUID 0x80000022 all zero.  The 6
 * interleaved PERF_CTL/PERF_CTR and the K7 aliases of counters 0..3 as
 * above; no global MSR (PerfCntrGlobal*: -EIO), so every counter whose
 * event select enables it counts, and there is no overflow status: a
 * counter that wraps with INT set raises its NMI every time, and software
 * finds it by its bit 47, clear after the wrap.
 *
 * AMD legacy model ("amd-legacy", "model-amd-legacy"), as K8 and family
 * 10h: CPUID 1 EAX = 0x00100f42 (family 0x10); CPUID 0x80000001 ECX bit 23
 * clear; CPUID 0x80000022 all zero.  Only the 4 K7 EVNTSEL0..3 /
 * PERFCTR0..3; PERF_CTL/PERF_CTR and the global MSRs: -EIO.  No global
 * control or status, as "amd-ext".  RDPMC: ECX 0..3.
 *
 * Any other MSR, read or written: -EIO, as a #GP would be.  The model
 * never touches a real MSR.  CPUID leaves the model does not define are
 * the real CPU's (cpuid_count()), so family, features and topology stay
 * those of the machine; a basic or extended leaf above the real maximum
 * of its range reads as zeros.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": pmu model: " fmt

#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/percpu.h>
#include <linux/string.h>

#include <asm/apic.h>
#include <asm/processor.h>

#include "model.h"

DEFINE_PER_CPU(struct model_regs, model_regs);
enum model_kind model_kind;
bool model_fw = true;
enum model_amd_layout model_amd;

static const struct hwpmc_pmu_ops model_intel_ops;
static const struct hwpmc_pmu_ops model_amd_ops[3];

const struct hwpmc_pmu_ops *model_ops_of(enum model_kind kind)
{
	switch (kind) {
	case MODEL_INTEL:
		return &model_intel_ops;
	case MODEL_AMD:
		return &model_amd_ops[READ_ONCE(model_amd)];
	default:
		return NULL;
	}
}

void model_reset(struct model_regs *r, enum model_kind kind)
{
	memset(r, 0, sizeof(*r));
	/* AMD without PerfMonV2: no global control, every counter enabled. */
	r->global_ctrl = kind == MODEL_AMD ? AMD_GLOBAL_VALID : INTEL_GLOBAL_GP;
	r->lvtpc = APIC_LVT_MASKED;	/* LVT entries come up masked */
}

/* NMI context: no locks, no allocation.  This CPU's model LVTPC. */
static void model_write_lvtpc(u32 val)
{
	WRITE_ONCE(this_cpu_ptr(&model_regs)->lvtpc, val);
}

/*
 * CPUID.
 */

/*
 * NMI context: no locks, no allocation.  The real CPUID, or zeros for a
 * basic or extended leaf above the real maximum of its range.
 */
static void model_real_cpuid(u32 leaf, u32 subleaf, u32 regs[4])
{
	u32 base = leaf & 0xffff0000, max, unused;

	if (base == 0 || base == HWPMC_CPUID_EXT_BASE) {
		cpuid_count(base, 0, &max, &unused, &unused, &unused);
		if (leaf > max) {
			memset(regs, 0, 4 * sizeof(regs[0]));
			return;
		}
	}
	cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3]);
}

/* NMI context: no locks, no allocation.  EBX, EDX, ECX = @v[0..11]. */
static void model_vendor(u32 regs[4], const char *v)
{
	memcpy(&regs[1], v, 4);
	memcpy(&regs[3], v + 4, 4);
	memcpy(&regs[2], v + 8, 4);
}

/* NMI context: no locks, no allocation. */
static void intel_cpuid(u32 leaf, u32 subleaf, u32 regs[4])
{
	switch (leaf) {
	case 0:
		model_real_cpuid(0, 0, regs);
		regs[0] = max_t(u32, regs[0], HWPMC_CPUID_ARCH_PERFMON);
		model_vendor(regs, "GenuineIntel");
		break;
	case 1:
		model_real_cpuid(1, 0, regs);
		regs[0] = INTEL_SIGNATURE;
		regs[2] |= HWPMC_CPUID1_ECX_PDCM;
		break;
	case HWPMC_CPUID_ARCH_PERFMON:
		regs[0] = INTEL_CPUID_A_EAX;
		regs[1] = 0;
		regs[2] = 0;
		regs[3] = INTEL_CPUID_A_EDX;
		break;
	case HWPMC_CPUID_EXT_BASE:
		model_real_cpuid(leaf, subleaf, regs);
		regs[1] = 0;
		regs[2] = 0;
		regs[3] = 0;
		break;
	case HWPMC_CPUID_AMD_EXT_FEATURES:
		model_real_cpuid(leaf, subleaf, regs);
		regs[2] &= ~(HWPMC_CPUID_AMD_PERFCTR_CORE | AMD_CPUID_PERFCTR_NB |
			     AMD_CPUID_PERFCTR_LLC);
		break;
	case HWPMC_CPUID_AMD_PERFMON:
		memset(regs, 0, 4 * sizeof(regs[0]));
		break;
	default:
		model_real_cpuid(leaf, subleaf, regs);
		break;
	}
}

/* NMI context: no locks, no allocation. */
static void amd_cpuid(u32 leaf, u32 subleaf, u32 regs[4])
{
	switch (leaf) {
	case 0:
		model_real_cpuid(0, 0, regs);
		model_vendor(regs, "AuthenticAMD");
		break;
	case 1:
		model_real_cpuid(1, 0, regs);
		regs[0] = model_amd_v2() ? AMD_SIGNATURE : model_amd_ext() ?
			  AMD_EXT_SIGNATURE : AMD_LEGACY_SIGNATURE;
		regs[2] &= ~HWPMC_CPUID1_ECX_PDCM;
		break;
	case HWPMC_CPUID_ARCH_PERFMON:
		memset(regs, 0, 4 * sizeof(regs[0]));
		break;
	case HWPMC_CPUID_EXT_BASE:
		model_real_cpuid(leaf, subleaf, regs);
		regs[0] = max_t(u32, regs[0], model_amd_v2() ?
				HWPMC_CPUID_AMD_PERFMON :
				HWPMC_CPUID_AMD_EXT_FEATURES);
		model_vendor(regs, "AuthenticAMD");
		break;
	case HWPMC_CPUID_AMD_EXT_FEATURES:
		model_real_cpuid(leaf, subleaf, regs);
		regs[2] &= ~(HWPMC_CPUID_AMD_PERFCTR_CORE | AMD_CPUID_PERFCTR_NB |
			     AMD_CPUID_PERFCTR_LLC);
		if (model_amd_ext())
			regs[2] |= HWPMC_CPUID_AMD_PERFCTR_CORE;
		break;
	case HWPMC_CPUID_AMD_PERFMON:
		if (!model_amd_v2()) {
			memset(regs, 0, 4 * sizeof(regs[0]));
			break;
		}
		regs[0] = BIT(0);	/* PerfMonV2 */
		regs[1] = AMD_NGP;	/* NumPerfCtrCore; no LBR, no NB */
		regs[2] = 0;
		regs[3] = 0;
		break;
	default:
		model_real_cpuid(leaf, subleaf, regs);
		break;
	}
}

/*
 * Intel MSRs and RDPMC.
 */

/* NMI context: no locks, no allocation. */
static int intel_rdmsr(u32 msr, u64 *val)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);

	switch (msr) {
	case HWPMC_MSR_IA32_PMC0 ... HWPMC_MSR_IA32_PMC0 + INTEL_NGP - 1:
		*val = r->ctr[msr - HWPMC_MSR_IA32_PMC0];
		break;
	case HWPMC_MSR_IA32_A_PMC0 ... HWPMC_MSR_IA32_A_PMC0 + INTEL_NGP - 1:
		if (!READ_ONCE(model_fw))
			return -EIO;
		*val = r->ctr[msr - HWPMC_MSR_IA32_A_PMC0];
		break;
	case HWPMC_MSR_IA32_PERFEVTSEL0 ...
	     HWPMC_MSR_IA32_PERFEVTSEL0 + INTEL_NGP - 1:
		*val = r->sel[msr - HWPMC_MSR_IA32_PERFEVTSEL0];
		break;
	case HWPMC_MSR_IA32_FIXED_CTR0 ...
	     HWPMC_MSR_IA32_FIXED_CTR0 + INTEL_NFIXED - 1:
		*val = r->fixed[msr - HWPMC_MSR_IA32_FIXED_CTR0];
		break;
	case HWPMC_MSR_IA32_FIXED_CTR_CTRL:
		*val = r->fixed_ctrl;
		break;
	case HWPMC_MSR_IA32_GLOBAL_STATUS:
		*val = r->global_status;
		break;
	case HWPMC_MSR_IA32_GLOBAL_CTRL:
		*val = r->global_ctrl;
		break;
	case HWPMC_MSR_IA32_GLOBAL_OVF_CTRL:
	case MODEL_MSR_IA32_STATUS_SET:
		*val = 0;
		break;
	case HWPMC_MSR_IA32_PERF_CAPABILITIES:
		*val = READ_ONCE(model_fw) ? HWPMC_PERF_CAP_FW_WRITE : 0;
		break;
	default:
		return -EIO;
	}
	return 0;
}

/* NMI context: no locks, no allocation. */
static int intel_wrmsr(u32 msr, u64 val)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);

	switch (msr) {
	case HWPMC_MSR_IA32_PMC0 ... HWPMC_MSR_IA32_PMC0 + INTEL_NGP - 1:
		/* Bits 31:0, sign-extended to the width. */
		r->ctr[msr - HWPMC_MSR_IA32_PMC0] = (u64)(s64)(s32)val & MODEL_MASK;
		break;
	case HWPMC_MSR_IA32_A_PMC0 ... HWPMC_MSR_IA32_A_PMC0 + INTEL_NGP - 1:
		if (!READ_ONCE(model_fw) || (val & ~MODEL_MASK))
			return -EIO;
		r->ctr[msr - HWPMC_MSR_IA32_A_PMC0] = val;
		break;
	case HWPMC_MSR_IA32_PERFEVTSEL0 ...
	     HWPMC_MSR_IA32_PERFEVTSEL0 + INTEL_NGP - 1:
		if (val & ~INTEL_EVSEL_VALID)
			return -EIO;
		r->sel[msr - HWPMC_MSR_IA32_PERFEVTSEL0] = val;
		break;
	case HWPMC_MSR_IA32_FIXED_CTR0 ...
	     HWPMC_MSR_IA32_FIXED_CTR0 + INTEL_NFIXED - 1:
		if (val & ~MODEL_MASK)
			return -EIO;
		r->fixed[msr - HWPMC_MSR_IA32_FIXED_CTR0] = val;
		break;
	case HWPMC_MSR_IA32_FIXED_CTR_CTRL:
		if (val & ~INTEL_FIXED_CTRL_VALID)
			return -EIO;
		r->fixed_ctrl = val;
		break;
	case HWPMC_MSR_IA32_GLOBAL_CTRL:
		if (val & ~INTEL_GLOBAL_VALID)
			return -EIO;
		r->global_ctrl = val;
		break;
	case HWPMC_MSR_IA32_GLOBAL_OVF_CTRL:
		if (val & ~INTEL_STATUS_VALID)
			return -EIO;
		r->global_status &= ~val;
		break;
	case MODEL_MSR_IA32_STATUS_SET:
		if (val & ~INTEL_STATUS_VALID)
			return -EIO;
		r->global_status |= val;
		break;
	default:
		/* Read-only (GLOBAL_STATUS, PERF_CAPABILITIES) or absent. */
		return -EIO;
	}
	return 0;
}

/* NMI context: no locks, no allocation. */
static u64 intel_rdpmc(u32 index)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);
	u32 i = index & ~BIT(30);

	if (index & BIT(30))
		return i < INTEL_NFIXED ? r->fixed[i] : 0;
	return i < INTEL_NGP ? r->ctr[i] : 0;
}

/*
 * AMD MSRs and RDPMC.
 */

/*
 * NMI context: no locks, no allocation.  The counter an MSR names and
 * whether it is the event select (else the count); false if none.
 */
static bool amd_msr_counter(u32 msr, unsigned int *idx, bool *is_sel)
{
	if (msr >= HWPMC_MSR_K7_EVNTSEL0 &&
	    msr < HWPMC_MSR_K7_EVNTSEL0 + AMD_NK7) {
		*idx = msr - HWPMC_MSR_K7_EVNTSEL0;
		*is_sel = true;
		return true;
	}
	if (msr >= HWPMC_MSR_K7_PERFCTR0 &&
	    msr < HWPMC_MSR_K7_PERFCTR0 + AMD_NK7) {
		*idx = msr - HWPMC_MSR_K7_PERFCTR0;
		*is_sel = false;
		return true;
	}
	if (model_amd_ext() && msr >= HWPMC_MSR_F15H_PERF_CTL0 &&
	    msr < HWPMC_MSR_F15H_PERF_CTL0 + 2 * AMD_NGP) {
		*idx = (msr - HWPMC_MSR_F15H_PERF_CTL0) / 2;
		*is_sel = !((msr - HWPMC_MSR_F15H_PERF_CTL0) & 1);
		return true;
	}
	return false;
}

/* NMI context: no locks, no allocation. */
static int amd_rdmsr(u32 msr, u64 *val)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);
	unsigned int i;
	bool is_sel;

	if (amd_msr_counter(msr, &i, &is_sel)) {
		*val = is_sel ? r->sel[i] : r->ctr[i];
		return 0;
	}
	if (!model_amd_v2())
		return -EIO;		/* no global MSR before PerfMonV2 */
	switch (msr) {
	case HWPMC_MSR_AMD_GLOBAL_STATUS:
		*val = r->global_status;
		break;
	case HWPMC_MSR_AMD_GLOBAL_CTL:
		*val = r->global_ctrl;
		break;
	case HWPMC_MSR_AMD_GLOBAL_STATUS_CLR:
	case MODEL_MSR_AMD_STATUS_SET:
		*val = 0;
		break;
	default:
		return -EIO;
	}
	return 0;
}

/* NMI context: no locks, no allocation.  Reserved bits are ignored. */
static int amd_wrmsr(u32 msr, u64 val)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);
	unsigned int i;
	bool is_sel;

	if (amd_msr_counter(msr, &i, &is_sel)) {
		if (is_sel)
			r->sel[i] = val & AMD_EVSEL_VALID;
		else
			r->ctr[i] = val & MODEL_MASK;
		return 0;
	}
	if (!model_amd_v2())
		return -EIO;		/* no global MSR before PerfMonV2 */
	switch (msr) {
	case HWPMC_MSR_AMD_GLOBAL_STATUS:
		break;			/* read-only: the write is ignored */
	case HWPMC_MSR_AMD_GLOBAL_CTL:
		r->global_ctrl = val & AMD_GLOBAL_VALID;
		break;
	case HWPMC_MSR_AMD_GLOBAL_STATUS_CLR:
		r->global_status &= ~val;
		break;
	case MODEL_MSR_AMD_STATUS_SET:
		r->global_status |= val & AMD_GLOBAL_VALID;
		break;
	default:
		return -EIO;
	}
	return 0;
}

/* NMI context: no locks, no allocation. */
static u64 amd_rdpmc(u32 index)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);

	return index < model_amd_ngp() ? r->ctr[index] : 0;
}

static const struct hwpmc_pmu_ops model_intel_ops = {
	.name		= "model-intel",
	.cpuid		= intel_cpuid,
	.read_msr	= intel_rdmsr,
	.write_msr	= intel_wrmsr,
	.read_pmc	= intel_rdpmc,
	.write_lvtpc	= model_write_lvtpc,
};

#define MODEL_AMD_OPS(n) {				\
	.name		= n,				\
	.cpuid		= amd_cpuid,			\
	.read_msr	= amd_rdmsr,			\
	.write_msr	= amd_wrmsr,			\
	.read_pmc	= amd_rdpmc,			\
	.write_lvtpc	= model_write_lvtpc,		\
}

static const struct hwpmc_pmu_ops model_amd_ops[3] = {
	[AMD_V2]	= MODEL_AMD_OPS("model-amd"),
	[AMD_EXT]	= MODEL_AMD_OPS("model-amd-ext"),
	[AMD_LEGACY]	= MODEL_AMD_OPS("model-amd-legacy"),
};
