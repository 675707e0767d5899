/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: the PMU model's shared declarations (test flavor only): the
 * register file (regs.c), the counting and NMI engine with its debugfs
 * files (engine.c) and the model's self-test (selftest.c).  The
 * architectural MSRs, CPUID leaves and control bits are x86/pmu.h's, as
 * the backend uses them; what is here only the model needs.
 */
#ifndef _HWPMC_X86_MODEL_H
#define _HWPMC_X86_MODEL_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/fs.h>
#include <linux/percpu.h>
#include <linux/types.h>

#include "../pmu.h"

#define MODEL_WIDTH		48
#define MODEL_MASK		GENMASK_ULL(MODEL_WIDTH - 1, 0)
#define MODEL_MAX_GP		6
#define MODEL_ADVANCE_MAX	BIT_ULL(47)	/* exclusive: one wrap at most */
#define MODEL_ADVANCE_TIMES	8		/* "N xK": K at most */
#define MODEL_NMI_WAIT_US	100000

#define INTEL_NGP		4
#define INTEL_NFIXED		3
#define INTEL_SIGNATURE		0x000506e3	/* family 6, model 0x5e */
#define INTEL_CPUID_A_EAX	(4 | INTEL_NGP << 8 | MODEL_WIDTH << 16 | 7 << 24)
#define INTEL_CPUID_A_EDX	(INTEL_NFIXED | MODEL_WIDTH << 5)
#define INTEL_EVSEL_VALID	GENMASK_ULL(31, 0)
#define INTEL_FIXED_CTRL_VALID	GENMASK_ULL(4 * INTEL_NFIXED - 1, 0)
#define INTEL_GLOBAL_GP		GENMASK_ULL(INTEL_NGP - 1, 0)
#define INTEL_GLOBAL_VALID	(INTEL_GLOBAL_GP | \
				 GENMASK_ULL(32 + INTEL_NFIXED - 1, 32))
/* Status bits a write to OVF_CTRL or STATUS_SET may name (SDM, v4). */
#define INTEL_STATUS_VALID	(INTEL_GLOBAL_VALID | BIT_ULL(55) | \
				 GENMASK_ULL(63, 58))

/* The status-set MSRs: the backend never writes them, tests do. */
#define MODEL_MSR_IA32_STATUS_SET	0x391
#define MODEL_MSR_AMD_STATUS_SET	0xc0000303

#define AMD_NGP			6
#define AMD_NK7			4
#define AMD_SIGNATURE		0x00a60f12	/* family 0x19, model 0x61 */
#define AMD_EVSEL_VALID		0x0000030fffd7ffffULL
#define AMD_GLOBAL_VALID	GENMASK_ULL(AMD_NGP - 1, 0)
#define AMD_CPUID_PERFCTR_NB	BIT(24)
#define AMD_CPUID_PERFCTR_LLC	BIT(28)
#define AMD_EXT_SIGNATURE	0x00600f12	/* family 0x15 */
#define AMD_LEGACY_SIGNATURE	0x00100f42	/* family 0x10 */

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

/* regs.c: the register file and the ops tables. */
DECLARE_PER_CPU(struct model_regs, model_regs);
/* The active model; changes only under the engine's model_mutex. */
extern enum model_kind model_kind;
/* Intel: IA32_A_PMCx and PERF_CAPABILITIES.FW_WRITE exist (not "-nofw"). */
extern bool model_fw;
/* AMD: which layout ("amd", "amd-ext" or "amd-legacy"). */
extern enum model_amd_layout model_amd;
const struct hwpmc_pmu_ops *model_ops_of(enum model_kind kind);
void model_reset(struct model_regs *r, enum model_kind kind);

/* NMI context: no locks, no allocation.  AMD: PerfMonV2's global MSRs. */
static inline bool model_amd_v2(void)
{
	return READ_ONCE(model_amd) == AMD_V2;
}

/* NMI context: no locks, no allocation.  AMD: the interleaved MSRs. */
static inline bool model_amd_ext(void)
{
	return READ_ONCE(model_amd) != AMD_LEGACY;
}

/* NMI context: no locks, no allocation.  AMD: the number of counters. */
static inline int model_amd_ngp(void)
{
	return model_amd_ext() ? AMD_NGP : AMD_NK7;
}

/* NMI context: no locks, no allocation. */
static inline int model_ngp(enum model_kind kind)
{
	return kind == MODEL_AMD ? model_amd_ngp() : INTEL_NGP;
}

/* engine.c: counting, NMIs, debugfs. */
DECLARE_PER_CPU(struct model_stats, model_stats);
void model_advance_local(u64 n, bool os);
int model_parse_advance(char *buf, u64 *n, bool *os, unsigned int *times);

/* selftest.c: debugfs hwpmc-model/selftest. */
extern const struct file_operations model_selftest_fops;

#endif /* _HWPMC_X86_MODEL_H */
