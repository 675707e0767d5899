// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: a software model of the x86 PMU registers, for tests only.
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
 *
 * Counting.  Events are abstract: event code, umask, EDGE, INV, CMASK,
 * ANY, HostOnly/GuestOnly are stored but ignored.  An event is either a
 * user-mode event or a kernel-mode one.  A programmable counter counts an
 * event when its event select has EN and USR (user-mode event) or OS
 * (kernel-mode event) and its GLOBAL_CTRL bit is set; an Intel fixed
 * counter when its nibble has USR or OS and GLOBAL_CTRL bit 32+i is set.
 *
 * Overflow.  A counter that crosses 2^48 wraps to the low 48 bits and sets
 * its GLOBAL_STATUS bit (Intel: i for PMCi, 32+i for fixed i; AMD: i).  If
 * a status bit became set by this advance (it was clear before) and the
 * counter's interrupt is enabled (event select INT, bit 20; fixed nibble
 * PMI, 0x8), the model raises one real NMI on this CPU through the local
 * APIC once all counters have moved: several overflows in one advance give
 * one NMI with several status bits.  A counter that wraps while its status
 * bit is still set raises no NMI.  The model has its own LVTPC per CPU
 * (the write_lvtpc op; the real one is left alone), masked at power-on:
 * an overflow raises its NMI only while the LVTPC says NMI, unmasked, and
 * delivery masks it (as the CPU does), so that the PMI handler must
 * unmask it for the next one; an interrupt refused counts in
 * "pmis_masked".  The NMI is a fixed-destination NMI IPI to this CPU (apic->send_IPI_mask(); not
 * send_IPI_self(), whose x2APIC form, the SELF IPI register, cannot carry
 * NMI delivery).  The advance waits (up to 100 ms) until the NMI has been
 * taken, so when a write to "advance" returns, every NMI handler has run.
 * A user of the model must have an NMI_LOCAL handler that claims these
 * NMIs, or the kernel reports "NMI received for unknown reason".
 *
 * debugfs: /sys/kernel/debug/hwpmc-model/, present while a model is
 * active.
 *   advance   (write) "N", "usr N" or "os N", N decimal, 0 < N < 2^47:
 *             every counter enabled on the writing CPU for user-mode
 *             ("N", "usr N") or kernel-mode ("os N") events advances by N,
 *             with interrupts disabled on that CPU.  Pin the writer
 *             (taskset) to choose the CPU.  "status 0xBITS" instead sets
 *             those global status bits of the writing CPU, as a write to
 *             the STATUS_SET MSR does (no NMI): an overflow that hwpmc did
 *             not see.  "nmi" sends this CPU an NMI that is no PMI (as
 *             another NMI user would), which the model claims itself and
 *             counts in "nmis_foreign".  Bad input: -EINVAL.
 *   state     (read) a line "model model-intel" (or model-amd), then for
 *             each online CPU a line "cpu N" and one line per register,
 *             "name 0x%016llx" (ctr0..ctrN,
 *             sel0..selN, Intel also fixed0..2 and fixed_ctrl,
 *             global_ctrl, global_status (not "amd-ext", "amd-legacy"),
 *             lvtpc), "cr4_pce N" (the CPU's real CR4.PCE, 0 or 1, when
 *             the state was read: whether user RDPMC is allowed on it),
 *             then "advances N",
 *             "overflows N", "nmis_sent N", "nmis_seen N",
 *             "nmis_lost N" (an NMI that did not arrive in 100 ms) and
 *             "pmis_masked N" (an overflow's interrupt that the LVTPC
 *             refused) and "nmis_foreign N".
 *   perf_rdpmc (read, write) what hwpmc reads as perf's user-RDPMC
 *             setting (/sys/devices/cpu/rdpmc) while the model is active:
 *             "real" (the default: the real attribute), "0", "1", "2",
 *             or "fail" (reading it fails with EIO).  Bad input: -EINVAL.
 *   selftest  (read) checks the model on the reading CPU through its ops
 *             table, with that CPU's register file saved and restored and
 *             a temporary NMI handler of its own (registered first, it
 *             claims and clears the selftest's overflows), and prints one
 *             "FAIL what: got X want Y" line per failed check, then
 *             "ok N checks (model-intel, cpu C)" or "FAIL F of N checks
 *             (...)".  Run it while no hardware PMC is allocated.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": pmu model: " fmt

#include <linux/bits.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>
#include <asm/processor.h>

#include "pmu.h"

#define MODEL_WIDTH		48
#define MODEL_MASK		GENMASK_ULL(MODEL_WIDTH - 1, 0)
#define MODEL_MAX_GP		6
#define MODEL_ADVANCE_MAX	BIT_ULL(47)	/* exclusive: one wrap at most */
#define MODEL_NMI_WAIT_US	100000

#define INTEL_NGP		4
#define INTEL_NFIXED		3
#define INTEL_SIGNATURE		0x000506e3	/* family 6, model 0x5e */
#define INTEL_CPUID_A_EAX	(4 | INTEL_NGP << 8 | MODEL_WIDTH << 16 | 7 << 24)
#define INTEL_CPUID_A_EDX	(INTEL_NFIXED | MODEL_WIDTH << 5)
#define INTEL_CPUID1_PDCM	BIT(15)
#define INTEL_EVSEL_VALID	GENMASK_ULL(31, 0)
#define INTEL_FIXED_CTRL_VALID	GENMASK_ULL(4 * INTEL_NFIXED - 1, 0)
#define INTEL_GLOBAL_GP		GENMASK_ULL(INTEL_NGP - 1, 0)
#define INTEL_GLOBAL_VALID	(INTEL_GLOBAL_GP | \
				 GENMASK_ULL(32 + INTEL_NFIXED - 1, 32))
/* Status bits a write to OVF_CTRL or STATUS_SET may name (SDM, v4). */
#define INTEL_STATUS_VALID	(INTEL_GLOBAL_VALID | BIT_ULL(55) | \
				 GENMASK_ULL(63, 58))
#define INTEL_PERF_CAP_FW_WRITE	BIT_ULL(13)

#define MODEL_MSR_IA32_A_PMC0		0x4c1
#define MODEL_MSR_IA32_PERF_CAP		0x345
#define MODEL_MSR_IA32_STATUS_SET	0x391
#define MODEL_MSR_AMD_STATUS_SET	0xc0000303

#define AMD_NGP			6
#define AMD_NK7			4
#define AMD_SIGNATURE		0x00a60f12	/* family 0x19, model 0x61 */
#define AMD_EVSEL_VALID		0x0000030fffd7ffffULL
#define AMD_GLOBAL_VALID	GENMASK_ULL(AMD_NGP - 1, 0)
#define AMD_CPUID_PERFCTR_CORE	BIT(23)
#define AMD_CPUID_PERFCTR_NB	BIT(24)
#define AMD_CPUID_PERFCTR_LLC	BIT(28)
#define AMD_EXT_SIGNATURE	0x00600f12	/* family 0x15 */
#define AMD_LEGACY_SIGNATURE	0x00100f42	/* family 0x10 */

#define CPUID_EXT_BASE		0x80000000

enum model_kind {
	MODEL_NONE,
	MODEL_INTEL,
	MODEL_AMD,
};

/* The AMD layouts: PerfMonV2 ("amd"), PerfCtrExtCore only, legacy K7. */
enum model_amd_layout {
	AMD_V2,
	AMD_EXT,
	AMD_LEGACY,
};

/* One CPU's PMU registers. */
struct model_regs {
	u64 ctr[MODEL_MAX_GP];
	u64 sel[MODEL_MAX_GP];
	u64 fixed[INTEL_NFIXED];
	u64 fixed_ctrl;
	u64 global_ctrl;
	u64 global_status;
	u32 lvtpc;			/* the local APIC's LVTPC entry */
};

/* One CPU's model statistics (not registers: a selftest leaves them). */
struct model_stats {
	unsigned long advances;
	unsigned long overflows;
	unsigned long nmis_sent;
	unsigned long nmis_seen;	/* written in NMI context */
	unsigned long nmis_lost;
	unsigned long pmis_masked;	/* refused by a masked LVTPC */
	unsigned long nmis_foreign;	/* "nmi": NMIs that are no PMI */
	bool foreign_pending;		/* the model claims the next NMI */
};

static DEFINE_PER_CPU(struct model_regs, model_regs);
static DEFINE_PER_CPU(struct model_stats, model_stats);

/* The active model; changes only under model_mutex. */
static enum model_kind model_kind;
/* Intel: IA32_A_PMCx and PERF_CAPABILITIES.FW_WRITE exist (not "-nofw"). */
static bool model_fw = true;
/* AMD: which layout ("amd", "amd-ext" or "amd-legacy"). */
static enum model_amd_layout model_amd;
/* Serializes hwpmc_pmu_model_init() and hwpmc_pmu_model_fini(). */
static DEFINE_MUTEX(model_mutex);
static struct dentry *model_dir;

static const struct hwpmc_pmu_ops model_intel_ops;
static const struct hwpmc_pmu_ops model_amd_ops[3];

/* NMI context: no locks, no allocation.  AMD: PerfMonV2's global MSRs. */
static bool model_amd_v2(void)
{
	return READ_ONCE(model_amd) == AMD_V2;
}

/* NMI context: no locks, no allocation.  AMD: the interleaved MSRs. */
static bool model_amd_ext(void)
{
	return READ_ONCE(model_amd) != AMD_LEGACY;
}

/* NMI context: no locks, no allocation.  AMD: the number of counters. */
static int model_amd_ngp(void)
{
	return model_amd_ext() ? AMD_NGP : AMD_NK7;
}

/* NMI context: no locks, no allocation. */
static int model_ngp(enum model_kind kind)
{
	return kind == MODEL_AMD ? model_amd_ngp() : INTEL_NGP;
}

/* NMI context: no locks, no allocation. */
static const struct hwpmc_pmu_ops *model_ops_of(enum model_kind kind)
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

static void model_reset(struct model_regs *r, enum model_kind kind)
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

	if (base == 0 || base == CPUID_EXT_BASE) {
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
		regs[2] |= INTEL_CPUID1_PDCM;
		break;
	case HWPMC_CPUID_ARCH_PERFMON:
		regs[0] = INTEL_CPUID_A_EAX;
		regs[1] = 0;
		regs[2] = 0;
		regs[3] = INTEL_CPUID_A_EDX;
		break;
	case CPUID_EXT_BASE:
		model_real_cpuid(leaf, subleaf, regs);
		regs[1] = 0;
		regs[2] = 0;
		regs[3] = 0;
		break;
	case HWPMC_CPUID_AMD_EXT_FEATURES:
		model_real_cpuid(leaf, subleaf, regs);
		regs[2] &= ~(AMD_CPUID_PERFCTR_CORE | AMD_CPUID_PERFCTR_NB |
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
		regs[2] &= ~INTEL_CPUID1_PDCM;
		break;
	case HWPMC_CPUID_ARCH_PERFMON:
		memset(regs, 0, 4 * sizeof(regs[0]));
		break;
	case CPUID_EXT_BASE:
		model_real_cpuid(leaf, subleaf, regs);
		regs[0] = max_t(u32, regs[0], model_amd_v2() ?
				HWPMC_CPUID_AMD_PERFMON :
				HWPMC_CPUID_AMD_EXT_FEATURES);
		model_vendor(regs, "AuthenticAMD");
		break;
	case HWPMC_CPUID_AMD_EXT_FEATURES:
		model_real_cpuid(leaf, subleaf, regs);
		regs[2] &= ~(AMD_CPUID_PERFCTR_CORE | AMD_CPUID_PERFCTR_NB |
			     AMD_CPUID_PERFCTR_LLC);
		if (model_amd_ext())
			regs[2] |= AMD_CPUID_PERFCTR_CORE;
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
	case MODEL_MSR_IA32_A_PMC0 ... MODEL_MSR_IA32_A_PMC0 + INTEL_NGP - 1:
		if (!READ_ONCE(model_fw))
			return -EIO;
		*val = r->ctr[msr - MODEL_MSR_IA32_A_PMC0];
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
	case MODEL_MSR_IA32_PERF_CAP:
		*val = READ_ONCE(model_fw) ? INTEL_PERF_CAP_FW_WRITE : 0;
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
	case MODEL_MSR_IA32_A_PMC0 ... MODEL_MSR_IA32_A_PMC0 + INTEL_NGP - 1:
		if (!READ_ONCE(model_fw) || (val & ~MODEL_MASK))
			return -EIO;
		r->ctr[msr - MODEL_MSR_IA32_A_PMC0] = val;
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

/*
 * Counting.
 */

/*
 * Add @n to *@ctr.  Returns the counter's status bit if it wrapped and
 * that bit newly became set (the caller sets the bits), else 0.
 */
static u64 model_add(u64 *ctr, u64 n, u64 status, u64 bit)
{
	u64 old = *ctr;

	*ctr = (old + n) & MODEL_MASK;
	if (*ctr >= old)
		return 0;
	this_cpu_inc(model_stats.overflows);
	return status & bit ? 0 : bit;
}

/*
 * Advance the counters of this CPU that count @os (kernel-mode) or user
 * events by @n.  Sets the status bits of the counters that wrapped and
 * returns those that newly became set with their interrupt enabled.
 * Interrupts are disabled; n < 2^47, so a counter wraps once at most.
 */
static u64 model_count(struct model_regs *r, enum model_kind kind, u64 n,
		       bool os)
{
	u64 mode = os ? HWPMC_EVSEL_OS : HWPMC_EVSEL_USR;
	u8 fmode = os ? HWPMC_FIXED_OS : HWPMC_FIXED_USR;
	int ngp = model_ngp(kind);
	u64 newly = 0, pmi = 0, bit;
	int i;

	for (i = 0; i < ngp; i++) {
		bit = BIT_ULL(i);
		if (!(r->sel[i] & HWPMC_EVSEL_EN) || !(r->sel[i] & mode) ||
		    !(r->global_ctrl & bit))
			continue;
		bit = model_add(&r->ctr[i], n, r->global_status, bit);
		newly |= bit;
		if (r->sel[i] & HWPMC_EVSEL_INT)
			pmi |= bit;
	}
	for (i = 0; kind == MODEL_INTEL && i < INTEL_NFIXED; i++) {
		u8 nib = (r->fixed_ctrl >> (4 * i)) & 0xf;

		bit = BIT_ULL(32 + i);
		if (!(nib & fmode) || !(r->global_ctrl & bit))
			continue;
		bit = model_add(&r->fixed[i], n, r->global_status, bit);
		newly |= bit;
		if (nib & HWPMC_FIXED_PMI)
			pmi |= bit;
	}
	/* AMD before PerfMonV2 keeps no status: every wrap interrupts. */
	if (kind != MODEL_AMD || model_amd_v2())
		r->global_status |= newly;
	return pmi;
}

/*
 * NMI context: no locks, no allocation.  Counts the NMIs this CPU takes,
 * so that an advance can wait for its own; never claims one.
 */
static int model_nmi(unsigned int type, struct pt_regs *regs)
{
	struct model_stats *s = this_cpu_ptr(&model_stats);

	WRITE_ONCE(s->nmis_seen, s->nmis_seen + 1);
	if (READ_ONCE(s->foreign_pending)) {
		/* Another NMI user's: claimed here, so none is unknown. */
		WRITE_ONCE(s->foreign_pending, false);
		return NMI_HANDLED;
	}
	return NMI_DONE;
}

/* IRQs off: wait until the NMI sent after nmis_seen was @seen arrives. */
static void model_wait_nmi(struct model_stats *s, unsigned long seen)
{
	int i;

	for (i = 0; i < MODEL_NMI_WAIT_US; i++) {
		if (READ_ONCE(s->nmis_seen) != seen)
			return;
		udelay(1);
	}
	s->nmis_lost++;
}

/*
 * An NMI that is not a PMI, as another NMI user (a watchdog, an IPI) sends
 * one: the model claims it itself; the PMU's registers do not change.
 */
static void model_foreign_nmi_local(void)
{
	struct model_stats *s;
	unsigned long flags, seen;

	local_irq_save(flags);
	s = this_cpu_ptr(&model_stats);
	seen = READ_ONCE(s->nmis_seen);
	s->nmis_foreign++;
	WRITE_ONCE(s->foreign_pending, true);
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	model_wait_nmi(s, seen);
	local_irq_restore(flags);
}

/*
 * Advance this CPU's counters (see model_count()) and raise the NMI that
 * any new overflow with interrupt enabled calls for, then wait until it
 * has been taken.  Any context but NMI.
 */
static void model_advance_local(u64 n, bool os)
{
	struct model_regs *r;
	struct model_stats *s;
	unsigned long flags, seen;

	local_irq_save(flags);
	s = this_cpu_ptr(&model_stats);
	r = this_cpu_ptr(&model_regs);
	s->advances++;
	if (model_count(r, READ_ONCE(model_kind), n, os)) {
		if (READ_ONCE(r->lvtpc) != APIC_DM_NMI) {
			/* Masked, or not NMI delivery: the PMI is lost. */
			s->pmis_masked++;
			local_irq_restore(flags);
			return;
		}
		/* Delivery masks the entry; the handler unmasks it. */
		WRITE_ONCE(r->lvtpc, APIC_DM_NMI | APIC_LVT_MASKED);
		seen = READ_ONCE(s->nmis_seen);
		s->nmis_sent++;
		apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
		model_wait_nmi(s, seen);
	}
	local_irq_restore(flags);
}

/* "N", "usr N" or "os N" with 0 < N < 2^47; 0 or -EINVAL. */
static int model_parse_advance(char *buf, u64 *n, bool *os)
{
	char *p = strim(buf);

	*os = false;
	if (!strncmp(p, "os ", 3)) {
		*os = true;
		p += 3;
	} else if (!strncmp(p, "usr ", 4)) {
		p += 4;
	}
	if (kstrtou64(skip_spaces(p), 10, n) || !*n || *n >= MODEL_ADVANCE_MAX)
		return -EINVAL;
	return 0;
}

/*
 * debugfs: advance.
 */

static ssize_t model_advance_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	char buf[32];
	bool os;
	u64 n;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (!strncmp(buf, "status ", 7)) {
		const struct hwpmc_pmu_ops *ops = model_ops_of(READ_ONCE(model_kind));
		u32 msr = READ_ONCE(model_kind) == MODEL_AMD ?
			  MODEL_MSR_AMD_STATUS_SET : MODEL_MSR_IA32_STATUS_SET;
		unsigned long flags;
		int err;

		if (kstrtou64(strim(buf + 7), 16, &n))
			return -EINVAL;
		local_irq_save(flags);
		err = ops->write_msr(msr, n);
		local_irq_restore(flags);
		return err ? err : len;
	}
	if (!strcmp(strim(buf), "nmi")) {
		model_foreign_nmi_local();
		return len;
	}
	if (model_parse_advance(buf, &n, &os))
		return -EINVAL;
	model_advance_local(n, os);
	return len;
}

static const struct file_operations model_advance_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= model_advance_write,
	.llseek	= noop_llseek,
};

/*
 * debugfs: perf_rdpmc.
 */

/* -ENOENT: the real attribute; else -errno or the setting; model_mutex. */
static int model_perf_rdpmc = -ENOENT;

int hwpmc_pmu_model_perf_rdpmc(int *val)
{
	int v;

	mutex_lock(&model_mutex);
	v = model_perf_rdpmc;
	mutex_unlock(&model_mutex);
	if (v < 0)
		return v;
	*val = v;
	return 0;
}

static ssize_t model_perf_rdpmc_write(struct file *file,
				      const char __user *ubuf, size_t len,
				      loff_t *ppos)
{
	char buf[8], *p;
	int v;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	p = strim(buf);
	if (!strcmp(p, "real"))
		v = -ENOENT;
	else if (!strcmp(p, "fail"))
		v = -EIO;
	else if (kstrtoint(p, 10, &v) || v < 0 || v > 2)
		return -EINVAL;
	mutex_lock(&model_mutex);
	model_perf_rdpmc = v;
	mutex_unlock(&model_mutex);
	return len;
}

static ssize_t model_perf_rdpmc_read(struct file *file, char __user *ubuf,
				     size_t len, loff_t *ppos)
{
	char buf[8];
	int v, n;

	mutex_lock(&model_mutex);
	v = model_perf_rdpmc;
	mutex_unlock(&model_mutex);
	if (v == -ENOENT)
		n = scnprintf(buf, sizeof(buf), "real\n");
	else if (v < 0)
		n = scnprintf(buf, sizeof(buf), "fail\n");
	else
		n = scnprintf(buf, sizeof(buf), "%d\n", v);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations model_perf_rdpmc_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= model_perf_rdpmc_read,
	.write	= model_perf_rdpmc_write,
	.llseek	= default_llseek,
};

/*
 * debugfs: state.
 */

struct model_snapshot {
	struct model_regs regs;
	struct model_stats stats;
	bool pce;
};

/* IPI: copy this CPU's registers and statistics, and its CR4.PCE. */
static void model_snapshot_local(void *arg)
{
	struct model_snapshot *snap = arg;

	snap->regs = *this_cpu_ptr(&model_regs);
	snap->stats = *this_cpu_ptr(&model_stats);
	snap->pce = !!(__read_cr4() & X86_CR4_PCE);
}

static int model_state_show(struct seq_file *m, void *unused)
{
	enum model_kind kind = READ_ONCE(model_kind);
	int ngp = model_ngp(kind);
	struct model_snapshot snap;
	int cpu, i;

	seq_printf(m, "model %s\n", model_ops_of(kind)->name);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (smp_call_function_single(cpu, model_snapshot_local, &snap,
					     1))
			continue;
		seq_printf(m, "cpu %d\n", cpu);
		for (i = 0; i < ngp; i++)
			seq_printf(m, "ctr%d 0x%016llx\n", i, snap.regs.ctr[i]);
		for (i = 0; i < ngp; i++)
			seq_printf(m, "sel%d 0x%016llx\n", i, snap.regs.sel[i]);
		for (i = 0; kind == MODEL_INTEL && i < INTEL_NFIXED; i++)
			seq_printf(m, "fixed%d 0x%016llx\n", i,
				   snap.regs.fixed[i]);
		if (kind == MODEL_INTEL)
			seq_printf(m, "fixed_ctrl 0x%016llx\n",
				   snap.regs.fixed_ctrl);
		if (kind != MODEL_AMD || model_amd_v2()) {
			seq_printf(m, "global_ctrl 0x%016llx\n",
				   snap.regs.global_ctrl);
			seq_printf(m, "global_status 0x%016llx\n",
				   snap.regs.global_status);
		}
		seq_printf(m, "lvtpc 0x%016x\n", snap.regs.lvtpc);
		seq_printf(m, "cr4_pce %d\n", snap.pce);
		seq_printf(m, "advances %lu\noverflows %lu\n",
			   snap.stats.advances, snap.stats.overflows);
		seq_printf(m, "nmis_sent %lu\nnmis_seen %lu\nnmis_lost %lu\n",
			   snap.stats.nmis_sent, snap.stats.nmis_seen,
			   snap.stats.nmis_lost);
		seq_printf(m, "pmis_masked %lu\nnmis_foreign %lu\n",
			   snap.stats.pmis_masked, snap.stats.nmis_foreign);
	}
	cpus_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(model_state);

/*
 * debugfs: selftest.  Runs on the reading CPU with interrupts disabled,
 * through the ops table, on a fresh register file; the CPU's own is saved
 * and restored around it.
 */

/* What the selftest's NMI handler saw on one CPU. */
struct st_nmi {
	bool armed;		/* a selftest runs on this CPU */
	bool clear;		/* clear the status bits it finds */
	bool unmask;		/* unmask the LVTPC, as a PMI handler does */
	unsigned int count;	/* NMIs claimed */
	u64 status;		/* status bits seen, accumulated */
};

static DEFINE_PER_CPU(struct st_nmi, st_nmi);
/* One selftest at a time: its NMI handler is registered once. */
static DEFINE_MUTEX(st_mutex);

struct st_ctx {
	const struct hwpmc_pmu_ops *ops;
	enum model_kind kind;
	char *buf;
	size_t len;
	size_t size;
	unsigned int checks;
	unsigned int failed;
};

/* NMI context: no locks, no allocation. */
static u32 st_status_msr(enum model_kind kind)
{
	return kind == MODEL_AMD ? HWPMC_MSR_AMD_GLOBAL_STATUS :
				   HWPMC_MSR_IA32_GLOBAL_STATUS;
}

/* NMI context: no locks, no allocation. */
static u32 st_clear_msr(enum model_kind kind)
{
	return kind == MODEL_AMD ? HWPMC_MSR_AMD_GLOBAL_STATUS_CLR :
				   HWPMC_MSR_IA32_GLOBAL_OVF_CTRL;
}

/*
 * NMI context: no locks, no allocation.  AMD without a global status: the
 * counters with INT whose bit 47 is clear (wrapped), as software finds
 * them.
 */
static u64 st_wrapped(void)
{
	struct model_regs *r = this_cpu_ptr(&model_regs);
	u64 bits = 0;
	int i;

	for (i = 0; i < model_amd_ngp(); i++)
		if ((r->sel[i] & HWPMC_EVSEL_INT) &&
		    (r->sel[i] & HWPMC_EVSEL_EN) &&
		    !(r->ctr[i] & BIT_ULL(MODEL_WIDTH - 1)))
			bits |= BIT_ULL(i);
	return bits;
}

/*
 * NMI context: no locks, no allocation.  While a selftest runs on this
 * CPU, claims the NMIs that find overflow status set, as a driver would.
 */
static int st_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct st_nmi *t = this_cpu_ptr(&st_nmi);
	enum model_kind kind = READ_ONCE(model_kind);
	const struct hwpmc_pmu_ops *ops = model_ops_of(kind);
	u64 status;

	if (!READ_ONCE(t->armed) || !ops)
		return NMI_DONE;
	if (kind == MODEL_AMD && !model_amd_v2())
		status = st_wrapped();
	else if (ops->read_msr(st_status_msr(kind), &status))
		status = 0;
	if (!status)
		return NMI_DONE;
	t->count++;
	t->status |= status;
	if (t->clear)
		ops->write_msr(st_clear_msr(kind), status);
	if (t->unmask)
		ops->write_lvtpc(APIC_DM_NMI);
	return NMI_HANDLED;
}

static __printf(2, 3) void st_fail(struct st_ctx *c, const char *fmt, ...)
{
	va_list args;

	c->failed++;
	va_start(args, fmt);
	c->len += vscnprintf(c->buf + c->len, c->size - c->len, fmt, args);
	va_end(args);
}

static void st_eq(struct st_ctx *c, const char *what, u64 got, u64 want)
{
	c->checks++;
	if (got != want)
		st_fail(c, "FAIL %s: got %#llx want %#llx\n", what, got, want);
}

/* The value of @msr; a failed read counts as a failure and reads ~0. */
static u64 st_rd(struct st_ctx *c, u32 msr)
{
	u64 val;
	int err = c->ops->read_msr(msr, &val);

	c->checks++;
	if (err) {
		st_fail(c, "FAIL rdmsr %#x: %d\n", msr, err);
		return ~0ULL;
	}
	return val;
}

/* Write @val to @msr and check that the write returned @want_err. */
static void st_wr(struct st_ctx *c, const char *what, u32 msr, u64 val,
		  int want_err)
{
	st_eq(c, what, c->ops->write_msr(msr, val), want_err);
}

static u32 st_sel(struct st_ctx *c, int i)
{
	if (c->kind == MODEL_AMD)
		return hwpmc_amd_ctl_msr(model_amd_ext(), i);
	return HWPMC_MSR_IA32_PERFEVTSEL0 + i;
}

/* The full-width counter MSR. */
static u32 st_ctr(struct st_ctx *c, int i)
{
	if (c->kind == MODEL_AMD)
		return hwpmc_amd_ctr_msr(model_amd_ext(), i);
	return MODEL_MSR_IA32_A_PMC0 + i;
}

static u32 st_ctrl(struct st_ctx *c)
{
	return c->kind == MODEL_AMD ? HWPMC_MSR_AMD_GLOBAL_CTL :
				      HWPMC_MSR_IA32_GLOBAL_CTRL;
}

static u32 st_status_set(struct st_ctx *c)
{
	return c->kind == MODEL_AMD ? MODEL_MSR_AMD_STATUS_SET :
				      MODEL_MSR_IA32_STATUS_SET;
}

/*
 * Advance by @n (user-mode events) and check that exactly @nmis NMIs
 * arrived with status bits @bits between them.
 */
static void st_advance(struct st_ctx *c, const char *what, u64 n,
		       unsigned int nmis, u64 bits)
{
	struct st_nmi *t = this_cpu_ptr(&st_nmi);
	unsigned int before = t->count;

	t->status = 0;
	model_advance_local(n, false);
	if (!nmis)
		mdelay(1);	/* time for a stray NMI to show */
	st_eq(c, what, t->count - before, nmis);
	st_eq(c, what, t->status, bits);
}

/*
 * Who counts what, by the event select (@en: enabled, event 0xc0): counter
 * 0 user mode only, 1 kernel mode only, 2 not enabled, the last both.
 * Advances 100 user-mode and 5 kernel-mode events; the counters keep them.
 */
static void st_who_counts(struct st_ctx *c, u64 en, int ngp)
{
	st_wr(c, "wr sel0", st_sel(c, 0), en | HWPMC_EVSEL_USR, 0);
	st_wr(c, "wr sel1", st_sel(c, 1), en | HWPMC_EVSEL_OS, 0);
	st_wr(c, "wr sel2", st_sel(c, 2), HWPMC_EVSEL_USR | 0xc0, 0);
	st_wr(c, "wr sel last", st_sel(c, ngp - 1),
	      en | HWPMC_EVSEL_USR | HWPMC_EVSEL_OS, 0);
	st_advance(c, "advance usr 100", 100, 0, 0);
	model_advance_local(5, true);
	st_eq(c, "usr counter", st_rd(c, st_ctr(c, 0)), 100);
	st_eq(c, "os counter", st_rd(c, st_ctr(c, 1)), 5);
	st_eq(c, "disabled counter", st_rd(c, st_ctr(c, 2)), 0);
	st_eq(c, "usr+os counter", st_rd(c, st_ctr(c, ngp - 1)), 105);
}

static void st_cpuid(struct st_ctx *c)
{
	u32 r[4];

	if (c->kind == MODEL_INTEL) {
		c->ops->cpuid(0, 0, r);
		st_eq(c, "cpuid 0 max >= 0xa", r[0] >= 0xa, 1);
		st_eq(c, "cpuid 0 vendor", !memcmp(&r[1], "Genu", 4) &&
		      !memcmp(&r[3], "ineI", 4) && !memcmp(&r[2], "ntel", 4), 1);
		c->ops->cpuid(1, 0, r);
		st_eq(c, "cpuid 1 eax", r[0], INTEL_SIGNATURE);
		c->ops->cpuid(HWPMC_CPUID_ARCH_PERFMON, 0, r);
		st_eq(c, "cpuid 0xa eax", r[0], 0x07300404);
		st_eq(c, "cpuid 0xa ebx", r[1], 0);
		st_eq(c, "cpuid 0xa edx", r[3], 0x603);
		c->ops->cpuid(HWPMC_CPUID_AMD_PERFMON, 0, r);
		st_eq(c, "cpuid 0x80000022 eax", r[0], 0);
		return;
	}
	c->ops->cpuid(0, 0, r);
	st_eq(c, "cpuid 0 vendor", !memcmp(&r[1], "Auth", 4) &&
	      !memcmp(&r[3], "enti", 4) && !memcmp(&r[2], "cAMD", 4), 1);
	c->ops->cpuid(1, 0, r);
	st_eq(c, "cpuid 1 family", ((r[0] >> 8) & 0xf) + ((r[0] >> 20) & 0xff),
	      model_amd_v2() ? 0x19 : model_amd_ext() ? 0x15 : 0x10);
	c->ops->cpuid(HWPMC_CPUID_ARCH_PERFMON, 0, r);
	st_eq(c, "cpuid 0xa eax", r[0], 0);
	c->ops->cpuid(CPUID_EXT_BASE, 0, r);
	st_eq(c, "cpuid 0x80000000 max", r[0] >= (model_amd_v2() ?
	      HWPMC_CPUID_AMD_PERFMON : HWPMC_CPUID_AMD_EXT_FEATURES), 1);
	c->ops->cpuid(HWPMC_CPUID_AMD_EXT_FEATURES, 0, r);
	st_eq(c, "cpuid 0x80000001 PerfCtrExtCore",
	      !!(r[2] & AMD_CPUID_PERFCTR_CORE), model_amd_ext());
	c->ops->cpuid(HWPMC_CPUID_AMD_PERFMON, 0, r);
	st_eq(c, "cpuid 0x80000022 eax", r[0], model_amd_v2());
	st_eq(c, "cpuid 0x80000022 ebx", r[1] & 0xf,
	      model_amd_v2() ? AMD_NGP : 0);
}

/* Register semantics particular to the Intel model. */
static void st_intel_regs(struct st_ctx *c)
{
	u32 pmc0 = HWPMC_MSR_IA32_PMC0, fix0 = HWPMC_MSR_IA32_FIXED_CTR0;

	st_wr(c, "wr pmc0", pmc0, 0x80000000, 0);
	st_eq(c, "pmc0 sign-extended", st_rd(c, pmc0), 0xffff80000000);
	st_eq(c, "a_pmc0 alias", st_rd(c, MODEL_MSR_IA32_A_PMC0),
	      0xffff80000000);
	st_eq(c, "rdpmc 0", c->ops->read_pmc(0), 0xffff80000000);
	st_wr(c, "wr pmc0 edx", pmc0, 0x100000005, 0);
	st_eq(c, "pmc0 edx ignored", st_rd(c, pmc0), 5);
	st_wr(c, "wr pmc0 -1", pmc0, -1ULL, 0);
	st_eq(c, "pmc0 -1", st_rd(c, pmc0), MODEL_MASK);
	st_wr(c, "wr a_pmc0", MODEL_MSR_IA32_A_PMC0, 0x123456789abc, 0);
	st_eq(c, "a_pmc0 full width", st_rd(c, pmc0), 0x123456789abc);
	st_wr(c, "wr a_pmc0 bit 48", MODEL_MSR_IA32_A_PMC0, BIT_ULL(48), -EIO);
	st_eq(c, "a_pmc0 kept", st_rd(c, pmc0), 0x123456789abc);
	st_wr(c, "wr a_pmc0 0", MODEL_MSR_IA32_A_PMC0, 0, 0);
	st_wr(c, "wr fixed1", fix0 + 1, 0xfffffffffff0, 0);
	st_eq(c, "fixed1", st_rd(c, fix0 + 1), 0xfffffffffff0);
	st_eq(c, "rdpmc fixed1", c->ops->read_pmc(BIT(30) | 1), 0xfffffffffff0);
	st_eq(c, "rdpmc fixed3", c->ops->read_pmc(BIT(30) | 3), 0);
	st_eq(c, "rdpmc 4", c->ops->read_pmc(4), 0);
	st_wr(c, "wr fixed1 bit 48", fix0 + 1, BIT_ULL(48), -EIO);
	st_wr(c, "wr fixed1 0", fix0 + 1, 0, 0);
	st_wr(c, "wr sel bit 32", HWPMC_MSR_IA32_PERFEVTSEL0, BIT_ULL(32),
	      -EIO);
	st_wr(c, "wr fixed_ctrl bit 12", HWPMC_MSR_IA32_FIXED_CTR_CTRL,
	      BIT(12), -EIO);
	st_wr(c, "wr global_ctrl bit 4", HWPMC_MSR_IA32_GLOBAL_CTRL, BIT(4),
	      -EIO);
	st_wr(c, "wr global_ctrl bit 35", HWPMC_MSR_IA32_GLOBAL_CTRL,
	      BIT_ULL(35), -EIO);
	st_wr(c, "wr global_status", HWPMC_MSR_IA32_GLOBAL_STATUS, 0, -EIO);
	st_wr(c, "wr ovf_ctrl bit 4", HWPMC_MSR_IA32_GLOBAL_OVF_CTRL, BIT(4),
	      -EIO);
	st_eq(c, "perf_capabilities", st_rd(c, MODEL_MSR_IA32_PERF_CAP),
	      INTEL_PERF_CAP_FW_WRITE);
	st_wr(c, "wr perf_capabilities", MODEL_MSR_IA32_PERF_CAP, 0, -EIO);
	st_wr(c, "wr pmc4", HWPMC_MSR_IA32_PMC0 + 4, 0, -EIO);
	st_wr(c, "wr fixed3", fix0 + 3, 0, -EIO);
}

/* Register semantics particular to the AMD model. */
static void st_amd_regs(struct st_ctx *c)
{
	st_wr(c, "wr ctr0 -1", st_ctr(c, 0), -1ULL, 0);
	st_eq(c, "ctr0 masked", st_rd(c, st_ctr(c, 0)), MODEL_MASK);
	st_wr(c, "wr k7 perfctr3", HWPMC_MSR_K7_PERFCTR0 + 3, 42, 0);
	st_eq(c, "k7 perfctr3 alias", st_rd(c, st_ctr(c, 3)), 42);
	st_eq(c, "rdpmc 3", c->ops->read_pmc(3), 42);
	st_wr(c, "wr k7 evntsel2", HWPMC_MSR_K7_EVNTSEL0 + 2,
	      HWPMC_EVSEL_USR | 0x76, 0);
	st_eq(c, "k7 evntsel2 alias", st_rd(c, st_sel(c, 2)),
	      HWPMC_EVSEL_USR | 0x76);
	st_wr(c, "wr sel5 reserved", st_sel(c, 5), ~0ULL, 0);
	st_eq(c, "sel5 reserved ignored", st_rd(c, st_sel(c, 5)),
	      AMD_EVSEL_VALID);
	st_wr(c, "wr ctr5", st_ctr(c, 5), 7, 0);
	st_eq(c, "rdpmc 5", c->ops->read_pmc(5), 7);
	st_eq(c, "rdpmc 6", c->ops->read_pmc(6), 0);
	st_wr(c, "wr global_ctl", HWPMC_MSR_AMD_GLOBAL_CTL, 0xff, 0);
	st_eq(c, "global_ctl masked", st_rd(c, HWPMC_MSR_AMD_GLOBAL_CTL),
	      AMD_GLOBAL_VALID);
	st_wr(c, "wr global_status", HWPMC_MSR_AMD_GLOBAL_STATUS, 1, 0);
	st_eq(c, "global_status ignored",
	      st_rd(c, HWPMC_MSR_AMD_GLOBAL_STATUS), 0);
	st_wr(c, "wr ctl6", HWPMC_MSR_F15H_PERF_CTL0 + 2 * AMD_NGP, 0, -EIO);
	st_wr(c, "wr k7 perfctr4", HWPMC_MSR_K7_PERFCTR0 + AMD_NK7, 0, -EIO);
}

/*
 * AMD without PerfMonV2 ("amd-ext", "amd-legacy"): which MSRs exist, and
 * overflow without a global status (an NMI for every wrap with INT).
 */
static void st_run_amd_nov2(struct st_ctx *c)
{
	struct st_nmi *t = this_cpu_ptr(&st_nmi);
	struct model_stats *s = this_cpu_ptr(&model_stats);
	struct model_regs *r = this_cpu_ptr(&model_regs);
	int ngp = model_amd_ngp();
	u64 en = HWPMC_EVSEL_EN | 0xc0, intr = en | HWPMC_EVSEL_USR |
		 HWPMC_EVSEL_INT, last = BIT_ULL(ngp - 1), n;
	unsigned long masked;
	int i;

	st_cpuid(c);
	st_eq(c, "rdmsr unknown", c->ops->read_msr(0x10, &n), -EIO);
	st_eq(c, "rdmsr global_status",
	      c->ops->read_msr(HWPMC_MSR_AMD_GLOBAL_STATUS, &n), -EIO);
	st_eq(c, "rdmsr global_ctl",
	      c->ops->read_msr(HWPMC_MSR_AMD_GLOBAL_CTL, &n), -EIO);
	st_wr(c, "wr global_ctl", HWPMC_MSR_AMD_GLOBAL_CTL, 0, -EIO);
	st_wr(c, "wr global_status_clr", HWPMC_MSR_AMD_GLOBAL_STATUS_CLR, 1,
	      -EIO);
	st_wr(c, "wr status_set", MODEL_MSR_AMD_STATUS_SET, 1, -EIO);
	st_wr(c, "wr k7 perfctr4", HWPMC_MSR_K7_PERFCTR0 + AMD_NK7, 0, -EIO);
	if (model_amd_ext()) {
		st_wr(c, "wr ctl6", HWPMC_MSR_F15H_PERF_CTL0 + 2 * AMD_NGP, 0,
		      -EIO);
		st_wr(c, "wr k7 perfctr3", HWPMC_MSR_K7_PERFCTR0 + 3, 42, 0);
		st_eq(c, "k7 perfctr3 alias", st_rd(c, st_ctr(c, 3)), 42);
		st_wr(c, "wr ctr3 0", st_ctr(c, 3), 0, 0);
	} else {
		st_eq(c, "rdmsr perf_ctl0",
		      c->ops->read_msr(HWPMC_MSR_F15H_PERF_CTL0, &n), -EIO);
		st_wr(c, "wr perf_ctr0", HWPMC_MSR_F15H_PERF_CTR0, 0, -EIO);
	}
	for (i = 0; i < ngp; i++)
		st_eq(c, "counter power-on", st_rd(c, st_ctr(c, i)), 0);
	st_wr(c, "wr ctr0 -1", st_ctr(c, 0), -1ULL, 0);
	st_eq(c, "ctr0 masked", st_rd(c, st_ctr(c, 0)), MODEL_MASK);
	st_eq(c, "rdpmc 0", c->ops->read_pmc(0), MODEL_MASK);
	st_eq(c, "rdpmc ngp", c->ops->read_pmc(ngp), 0);
	st_wr(c, "wr ctr0 0", st_ctr(c, 0), 0, 0);
	st_wr(c, "wr sel last reserved", st_sel(c, ngp - 1), ~0ULL, 0);
	st_eq(c, "sel last reserved ignored", st_rd(c, st_sel(c, ngp - 1)),
	      AMD_EVSEL_VALID);

	/* Who counts what: the event select alone. */
	st_who_counts(c, en, ngp);
	for (i = 1; i < ngp; i++)
		st_wr(c, "wr sel off", st_sel(c, i), 0, 0);

	/* A wrap without INT: no NMI, no status anywhere. */
	st_wr(c, "wr ctr0 near wrap", st_ctr(c, 0), MODEL_MASK - 9, 0);
	st_advance(c, "wrap without INT", 15, 0, 0);
	st_eq(c, "ctr0 wrapped", st_rd(c, st_ctr(c, 0)), 5);
	st_eq(c, "no status kept", r->global_status, 0);

	/* LVTPC, as in st_run(). */
	st_wr(c, "wr sel1 INT", st_sel(c, 1), intr, 0);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	masked = s->pmis_masked;
	st_advance(c, "no NMI while lvtpc masked", 1, 0, 0);
	st_eq(c, "pmi refused", s->pmis_masked - masked, 1);
	s->pmis_masked = masked;
	c->ops->write_lvtpc(APIC_DM_NMI);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "NMI once lvtpc unmasked", 1, 1, BIT_ULL(1));
	st_eq(c, "lvtpc masked by delivery", READ_ONCE(r->lvtpc),
	      APIC_DM_NMI | APIC_LVT_MASKED);
	WRITE_ONCE(t->unmask, true);
	c->ops->write_lvtpc(APIC_DM_NMI);

	/* Every wrap interrupts: there is no status bit to hold it back. */
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "NMI for a second wrap", 1, 1, BIT_ULL(1));
	/* Several overflows, one NMI; bit 47 tells which. */
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK - 2, 0);
	st_wr(c, "wr sel last INT", st_sel(c, ngp - 1), intr, 0);
	st_wr(c, "wr ctr last", st_ctr(c, ngp - 1), MODEL_MASK, 0);
	st_wr(c, "wr sel2 INT", st_sel(c, 2), intr, 0);
	st_wr(c, "wr ctr2", st_ctr(c, 2), MODEL_MASK - 10, 0);
	st_advance(c, "one NMI for two overflows", 3, 1, BIT_ULL(1) | last);
	st_eq(c, "ctr1 wrapped", st_rd(c, st_ctr(c, 1)), 0);
	st_eq(c, "ctr last wrapped", st_rd(c, st_ctr(c, ngp - 1)), 2);
	st_eq(c, "ctr2 not wrapped", st_rd(c, st_ctr(c, 2)), MODEL_MASK - 7);
	st_eq(c, "lvtpc unmasked by handler", READ_ONCE(r->lvtpc), APIC_DM_NMI);
	st_eq(c, "ctr0 counted on", st_rd(c, st_ctr(c, 0)), 11);
	st_eq(c, "rdpmc 1", c->ops->read_pmc(1), 0);
	for (i = 0; i < ngp; i++)
		st_wr(c, "wr sel off", st_sel(c, i), 0, 0);
	st_advance(c, "nothing counts", 100, 0, 0);
	st_eq(c, "ctr0 stopped", st_rd(c, st_ctr(c, 0)), 11);
}

static void st_run(struct st_ctx *c)
{
	struct st_nmi *t = this_cpu_ptr(&st_nmi);
	struct model_stats *s = this_cpu_ptr(&model_stats);
	struct model_regs *r = this_cpu_ptr(&model_regs);
	unsigned long masked;
	int ngp = model_ngp(c->kind);
	u64 en = HWPMC_EVSEL_EN | 0xc0, gp = BIT_ULL(ngp - 1);
	u64 ctrl, n;
	u32 status = st_status_msr(c->kind), clear = st_clear_msr(c->kind);
	char in[24];
	bool os;
	int i;

	st_cpuid(c);

	st_eq(c, "rdmsr unknown", c->ops->read_msr(0x10, &n), -EIO);
	st_wr(c, "wrmsr unknown", 0x10, 0, -EIO);
	ctrl = st_rd(c, st_ctrl(c));
	st_eq(c, "global_ctrl power-on", ctrl,
	      c->kind == MODEL_AMD ? AMD_GLOBAL_VALID : INTEL_GLOBAL_GP);
	for (i = 0; i < ngp; i++)
		st_eq(c, "counter power-on", st_rd(c, st_ctr(c, i)), 0);

	/* Who counts what. */
	st_who_counts(c, en, ngp);
	st_wr(c, "wr global_ctrl", st_ctrl(c), ctrl & ~1ULL, 0);
	st_advance(c, "advance global off", 10, 0, 0);
	st_eq(c, "globally disabled counter", st_rd(c, st_ctr(c, 0)), 100);
	st_eq(c, "globally enabled counter", st_rd(c, st_ctr(c, ngp - 1)),
	      115);
	st_wr(c, "wr global_ctrl", st_ctrl(c), ctrl, 0);
	if (c->kind == MODEL_INTEL) {
		/* Fixed 0 counts user, fixed 2 kernel; fixed 1 is off. */
		st_wr(c, "wr fixed_ctrl", HWPMC_MSR_IA32_FIXED_CTR_CTRL,
		      HWPMC_FIXED_USR | HWPMC_FIXED_OS << 8, 0);
		st_advance(c, "advance fixed not global", 3, 0, 0);
		st_eq(c, "fixed0 not global",
		      st_rd(c, HWPMC_MSR_IA32_FIXED_CTR0), 0);
		st_wr(c, "wr global_ctrl fixed", st_ctrl(c),
		      ctrl | GENMASK_ULL(34, 32), 0);
		st_advance(c, "advance fixed", 3, 0, 0);
		model_advance_local(4, true);
		st_eq(c, "fixed0 usr", st_rd(c, HWPMC_MSR_IA32_FIXED_CTR0), 3);
		st_eq(c, "fixed1 off",
		      st_rd(c, HWPMC_MSR_IA32_FIXED_CTR0 + 1), 0);
		st_eq(c, "fixed2 os",
		      st_rd(c, HWPMC_MSR_IA32_FIXED_CTR0 + 2), 4);
		st_intel_regs(c);
	} else {
		st_amd_regs(c);
	}

	/* Wrap without interrupt; clear; set. */
	for (i = 1; i < ngp; i++)
		st_wr(c, "wr sel off", st_sel(c, i), 0, 0);
	st_wr(c, "wr fixed_ctrl off", HWPMC_MSR_IA32_FIXED_CTR_CTRL, 0,
	      c->kind == MODEL_AMD ? -EIO : 0);
	st_wr(c, "wr global_ctrl", st_ctrl(c), c->kind == MODEL_AMD ?
	      AMD_GLOBAL_VALID : INTEL_GLOBAL_VALID, 0);
	st_wr(c, "wr ctr0 near wrap", st_ctr(c, 0), MODEL_MASK - 9, 0);
	st_advance(c, "wrap without INT", 15, 0, 0);
	st_eq(c, "ctr0 wrapped", st_rd(c, st_ctr(c, 0)), 5);
	st_eq(c, "status after wrap", st_rd(c, status), 1);
	st_wr(c, "wr clear", clear, 1, 0);
	st_eq(c, "status cleared", st_rd(c, status), 0);
	st_wr(c, "wr status_set", st_status_set(c), 2, 0);
	st_eq(c, "status set", st_rd(c, status), 2);
	st_eq(c, "status_set raised no NMI", t->count, 0);
	st_wr(c, "wr clear", clear, 2, 0);

	/*
	 * LVTPC: masked at power-on, it refuses an overflow's PMI (which is
	 * lost, counted in pmis_masked: put back, a selftest leaves the
	 * statistics); NMI delivery, unmasked, takes it and masks itself.
	 */
	st_eq(c, "lvtpc power-on", READ_ONCE(r->lvtpc), APIC_LVT_MASKED);
	st_wr(c, "wr sel1 INT", st_sel(c, 1),
	      en | HWPMC_EVSEL_USR | HWPMC_EVSEL_INT, 0);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	masked = s->pmis_masked;
	st_advance(c, "no NMI while lvtpc masked", 1, 0, 0);
	st_eq(c, "pmi refused", s->pmis_masked - masked, 1);
	s->pmis_masked = masked;
	st_wr(c, "wr clear", clear, BIT_ULL(1), 0);
	c->ops->write_lvtpc(APIC_DM_NMI | 2);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "no NMI while lvtpc is not NMI", 1, 0, 0);
	s->pmis_masked = masked;
	st_wr(c, "wr clear", clear, BIT_ULL(1), 0);
	c->ops->write_lvtpc(APIC_DM_NMI);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "NMI once lvtpc unmasked", 1, 1, BIT_ULL(1));
	st_eq(c, "lvtpc masked by delivery", READ_ONCE(r->lvtpc),
	      APIC_DM_NMI | APIC_LVT_MASKED);
	st_wr(c, "wr clear", clear, BIT_ULL(1), 0);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "no NMI until unmasked again", 1, 0, 0);
	s->pmis_masked = masked;
	st_wr(c, "wr clear", clear, BIT_ULL(1), 0);
	st_wr(c, "wr sel1 off", st_sel(c, 1), 0, 0);
	st_eq(c, "ctr0 counted the 4", st_rd(c, st_ctr(c, 0)), 9);
	st_wr(c, "wr ctr0 back", st_ctr(c, 0), 5, 0);
	/* From here the handler unmasks it, as a PMI handler does. */
	WRITE_ONCE(t->unmask, true);
	c->ops->write_lvtpc(APIC_DM_NMI);

	/* Several overflows, one NMI; the handler clears the status. */
	WRITE_ONCE(t->clear, true);
	st_wr(c, "wr sel1 INT", st_sel(c, 1),
	      en | HWPMC_EVSEL_USR | HWPMC_EVSEL_INT, 0);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK - 2, 0);
	st_wr(c, "wr sel last", st_sel(c, ngp - 1), en | HWPMC_EVSEL_USR, 0);
	st_wr(c, "wr ctr last", st_ctr(c, ngp - 1), MODEL_MASK, 0);
	if (c->kind == MODEL_INTEL) {
		st_wr(c, "wr fixed_ctrl PMI", HWPMC_MSR_IA32_FIXED_CTR_CTRL,
		      (HWPMC_FIXED_USR | HWPMC_FIXED_PMI) << 4, 0);
		st_wr(c, "wr fixed1", HWPMC_MSR_IA32_FIXED_CTR0 + 1,
		      MODEL_MASK - 1, 0);
		st_advance(c, "one NMI for three overflows", 3, 1,
			   BIT_ULL(1) | gp | BIT_ULL(33));
		st_eq(c, "fixed1 wrapped",
		      st_rd(c, HWPMC_MSR_IA32_FIXED_CTR0 + 1), 1);
		st_eq(c, "rdpmc fixed1", c->ops->read_pmc(BIT(30) | 1), 1);
	} else {
		st_wr(c, "wr sel2 INT", st_sel(c, 2),
		      en | HWPMC_EVSEL_USR | HWPMC_EVSEL_INT, 0);
		st_wr(c, "wr ctr2", st_ctr(c, 2), MODEL_MASK - 1, 0);
		st_advance(c, "one NMI for three overflows", 3, 1,
			   BIT_ULL(1) | BIT_ULL(2) | gp);
		st_eq(c, "ctr2 wrapped", st_rd(c, st_ctr(c, 2)), 1);
	}
	st_eq(c, "ctr1 wrapped", st_rd(c, st_ctr(c, 1)), 0);
	st_eq(c, "ctr last wrapped", st_rd(c, st_ctr(c, ngp - 1)), 2);
	st_eq(c, "status cleared by handler", st_rd(c, status), 0);
	st_eq(c, "lvtpc unmasked by handler", READ_ONCE(r->lvtpc), APIC_DM_NMI);
	st_eq(c, "ctr0 counted on", st_rd(c, st_ctr(c, 0)), 8);
	st_eq(c, "rdpmc 1", c->ops->read_pmc(1), 0);

	/* A status bit still set: its counter wrapping again raises none. */
	WRITE_ONCE(t->clear, false);
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "NMI, status left set", 1, 1, BIT_ULL(1));
	st_wr(c, "wr ctr1", st_ctr(c, 1), MODEL_MASK, 0);
	st_advance(c, "no NMI while status set", 1, 0, 0);
	st_eq(c, "status still set", st_rd(c, status), BIT_ULL(1));
	st_wr(c, "wr sel0 INT", st_sel(c, 0),
	      en | HWPMC_EVSEL_USR | HWPMC_EVSEL_INT, 0);
	st_wr(c, "wr ctr0", st_ctr(c, 0), MODEL_MASK, 0);
	st_advance(c, "NMI for a new bit", 1, 1, BIT_ULL(0) | BIT_ULL(1));
	st_wr(c, "wr clear", clear, BIT_ULL(0) | BIT_ULL(1), 0);
	/* A wrap of a globally disabled counter raises nothing. */
	st_wr(c, "wr global_ctrl", st_ctrl(c), 0, 0);
	st_wr(c, "wr ctr0", st_ctr(c, 0), MODEL_MASK, 0);
	st_advance(c, "no NMI when globally disabled", 1, 0, 0);
	st_eq(c, "status clear", st_rd(c, status), 0);
	st_eq(c, "ctr0 not counted", st_rd(c, st_ctr(c, 0)), MODEL_MASK);

	/* The advance file's syntax. */
	strscpy(in, "12\n", sizeof(in));
	st_eq(c, "parse \"12\"", model_parse_advance(in, &n, &os) ||
	      n != 12 || os, 0);
	strscpy(in, "usr 13", sizeof(in));
	st_eq(c, "parse \"usr 13\"", model_parse_advance(in, &n, &os) ||
	      n != 13 || os, 0);
	strscpy(in, "os 140737488355327\n", sizeof(in));
	st_eq(c, "parse \"os 2^47-1\"", model_parse_advance(in, &n, &os) ||
	      n != MODEL_ADVANCE_MAX - 1 || !os, 0);
	strscpy(in, "140737488355328", sizeof(in));
	st_eq(c, "parse \"2^47\"", model_parse_advance(in, &n, &os), -EINVAL);
	strscpy(in, "0", sizeof(in));
	st_eq(c, "parse \"0\"", model_parse_advance(in, &n, &os), -EINVAL);
	strscpy(in, "kernel 5", sizeof(in));
	st_eq(c, "parse \"kernel 5\"", model_parse_advance(in, &n, &os),
	      -EINVAL);
}

static int model_selftest_open(struct inode *inode, struct file *file)
{
	enum model_kind kind = READ_ONCE(model_kind);
	struct model_regs *saved;
	struct st_ctx c = {
		.ops = model_ops_of(kind),
		.kind = kind,
		.size = PAGE_SIZE,
	};
	struct st_nmi *t;
	unsigned long flags;
	int cpu, err;
	bool fw;

	if (!c.ops)
		return -ENODEV;
	c.buf = kzalloc(c.size, GFP_KERNEL);
	saved = kmalloc(sizeof(*saved), GFP_KERNEL);
	if (!c.buf || !saved) {
		kfree(c.buf);
		kfree(saved);
		return -ENOMEM;
	}

	mutex_lock(&st_mutex);
	err = register_nmi_handler(NMI_LOCAL, st_nmi_handler, NMI_FLAG_FIRST,
				   "hwpmc_model_selftest");
	if (err) {
		mutex_unlock(&st_mutex);
		kfree(c.buf);
		kfree(saved);
		return err;
	}

	local_irq_save(flags);
	cpu = smp_processor_id();
	*saved = *this_cpu_ptr(&model_regs);
	model_reset(this_cpu_ptr(&model_regs), kind);
	t = this_cpu_ptr(&st_nmi);
	memset(t, 0, sizeof(*t));
	WRITE_ONCE(t->armed, true);

	/*
	 * "intel-nofw": no full-width aliases; the other checks then run on
	 * the full-width register file, which they write through them.
	 */
	fw = READ_ONCE(model_fw);
	if (kind == MODEL_INTEL && !fw) {
		u64 v = 0;

		st_eq(&c, "nofw perf_capabilities",
		      st_rd(&c, MODEL_MSR_IA32_PERF_CAP), 0);
		st_eq(&c, "nofw rd a_pmc0",
		      c.ops->read_msr(MODEL_MSR_IA32_A_PMC0, &v), -EIO);
		st_wr(&c, "nofw wr a_pmc0", MODEL_MSR_IA32_A_PMC0, 1, -EIO);
		WRITE_ONCE(model_fw, true);
	}
	if (kind == MODEL_AMD && !model_amd_v2())
		st_run_amd_nov2(&c);
	else
		st_run(&c);
	WRITE_ONCE(model_fw, fw);

	WRITE_ONCE(t->armed, false);
	*this_cpu_ptr(&model_regs) = *saved;
	local_irq_restore(flags);

	unregister_nmi_handler(NMI_LOCAL, "hwpmc_model_selftest");
	mutex_unlock(&st_mutex);
	kfree(saved);

	if (c.failed)
		c.len += scnprintf(c.buf + c.len, c.size - c.len,
				   "FAIL %u of %u checks (%s, cpu %d)\n",
				   c.failed, c.checks, c.ops->name, cpu);
	else
		c.len += scnprintf(c.buf + c.len, c.size - c.len,
				   "ok %u checks (%s, cpu %d)\n", c.checks,
				   c.ops->name, cpu);
	file->private_data = c.buf;
	return 0;
}

static ssize_t model_selftest_read(struct file *file, char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	const char *buf = file->private_data;

	return simple_read_from_buffer(ubuf, len, ppos, buf, strlen(buf));
}

static int model_selftest_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static const struct file_operations model_selftest_fops = {
	.owner		= THIS_MODULE,
	.open		= model_selftest_open,
	.read		= model_selftest_read,
	.release	= model_selftest_release,
	.llseek		= default_llseek,
};

/*
 * Setting up and tearing down.
 */

/*
 * The model @which ("intel", "intel-nofw", "amd", "amd-ext" or
 * "amd-legacy"), with every CPU's registers at their
 * power-on values; NULL for another name, or if another model is active.
 * Calling it again for the active model returns the same table and
 * changes nothing.  Process context.
 */
const struct hwpmc_pmu_ops *hwpmc_pmu_model_init(const char *which)
{
	const struct hwpmc_pmu_ops *ops = NULL;
	enum model_amd_layout amd = AMD_V2;
	enum model_kind kind;
	int cpu;

	if (!which)
		return NULL;
	if (!strcmp(which, "intel") || !strcmp(which, "intel-nofw")) {
		kind = MODEL_INTEL;
	} else if (!strcmp(which, "amd")) {
		kind = MODEL_AMD;
	} else if (!strcmp(which, "amd-ext")) {
		kind = MODEL_AMD;
		amd = AMD_EXT;
	} else if (!strcmp(which, "amd-legacy")) {
		kind = MODEL_AMD;
		amd = AMD_LEGACY;
	} else {
		return NULL;
	}

	mutex_lock(&model_mutex);
	if (model_kind != MODEL_NONE) {
		if (model_kind == kind &&
		    (kind != MODEL_AMD || READ_ONCE(model_amd) == amd))
			ops = model_ops_of(kind);
		else
			pr_err("%s is active, cannot start model-%s\n",
			       model_ops_of(model_kind)->name, which);
		goto out;
	}
	model_perf_rdpmc = -ENOENT;
	/* Nobody uses the registers before model_kind is set. */
	WRITE_ONCE(model_fw, strcmp(which, "intel-nofw") != 0);
	WRITE_ONCE(model_amd, amd);
	for_each_possible_cpu(cpu) {
		model_reset(per_cpu_ptr(&model_regs, cpu), kind);
		memset(per_cpu_ptr(&model_stats, cpu), 0,
		       sizeof(struct model_stats));
	}
	if (register_nmi_handler(NMI_LOCAL, model_nmi, 0, "hwpmc_model"))
		goto out;
	WRITE_ONCE(model_kind, kind);
	ops = model_ops_of(kind);

	model_dir = debugfs_create_dir("hwpmc-model", NULL);
	debugfs_create_file("advance", 0200, model_dir, NULL,
			    &model_advance_fops);
	debugfs_create_file("state", 0444, model_dir, NULL, &model_state_fops);
	debugfs_create_file("perf_rdpmc", 0600, model_dir, NULL,
			    &model_perf_rdpmc_fops);
	debugfs_create_file("selftest", 0444, model_dir, NULL,
			    &model_selftest_fops);
	pr_info("%s active\n", ops->name);
out:
	mutex_unlock(&model_mutex);
	return ops;
}

/*
 * Remove the debugfs files and the NMI handler; the model must no longer
 * be in use.  Does nothing if no model is active.  Process context.
 */
void hwpmc_pmu_model_fini(void)
{
	mutex_lock(&model_mutex);
	if (model_kind != MODEL_NONE) {
		debugfs_remove_recursive(model_dir);
		model_dir = NULL;
		unregister_nmi_handler(NMI_LOCAL, "hwpmc_model");
		WRITE_ONCE(model_kind, MODEL_NONE);
	}
	mutex_unlock(&model_mutex);
}
