/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: the x86 hardware backend's shared declarations.
 */
#ifndef _HWPMC_X86_H
#define _HWPMC_X86_H

#include <asm/local64.h>

#include "../hwpmc.h"
#include "pmu.h"

/* What CPUID says this machine's PMU is (filled by hwpmc_x86_detect()). */
struct hwpmc_x86_info {
	u32 cputype;			/* PMC_CPU_* */
	bool intel, amd;
	unsigned int version;		/* Intel arch PerfMon version */
	unsigned int ngp;		/* programmable counters */
	unsigned int nfixed;		/* Intel fixed counters */
	u32 fixed_mask;			/* fixed counters present (bitmap) */
	unsigned int width, fixed_width;
	u32 unavail;			/* Intel: CPUID.0AH:EBX, absent events */
	bool full_width;		/* Intel: IA32_A_PMCx (FW_WRITE) */
	bool anythread;			/* Intel: event-select AnyThread */
	bool has_global;		/* global ctrl/status MSRs */
	bool ext_core;			/* AMD PerfCtrExtCore */
	u32 global_ctrl, global_status, global_ovf;
};

extern struct hwpmc_x86_info hwpmc_x86;

/* The register layout of one hardware class (const, per vendor). */
struct hwpmc_x86_hw {
	/* Counter @i's MSR; NMI context too, like width(). */
	u32 (*ctr_msr)(unsigned int i);
	/* Program counter @i's control with @ctl (0: off).  IRQs off. */
	void (*control)(unsigned int i, u64 ctl);
	u32 rdpmc_base;			/* RDPMC index of counter 0 */
	unsigned int global_bit0;	/* global ctrl/status bit of counter 0 */
	unsigned int (*nctr)(void);
	unsigned int (*width)(void);
	/* Validate an allocation; the control value (without EN/INT). */
	int (*validate)(const struct pmc_op_pmcallocate *a, unsigned int idx,
			u64 *ctl);
	/* Can counter @idx count event @a at all? (fixed counters) */
	bool (*row_ok)(unsigned int idx, const struct pmc_op_pmcallocate *a);
	u64 en, intr;			/* control bits: enable, interrupt */
};

struct hwpmc_x86_class {
	struct hwpmc_class_ops ops;
	const struct hwpmc_x86_hw *hw;
	u32 caps;			/* PMC_CAP_* on any CPU */
	bool anythread;			/* PMC_CAP_ANYTHREAD where the CPU has it */
};

/* The layout of a hardware class.  Any context, NMI included: no locks. */
static inline const struct hwpmc_x86_hw *
hwpmc_x86_hw_of(const struct hwpmc_class_ops *ops)
{
	return container_of(ops, struct hwpmc_x86_class, ops)->hw;
}

int hwpmc_x86_detect(void);
void hwpmc_x86_switch(struct task_struct *prev, struct task_struct *next);
void hwpmc_x86_fork(struct task_struct *parent, struct task_struct *child);
int hwpmc_x86_rdpmc_mm_get(struct mm_struct *mm);
void hwpmc_x86_rdpmc_mm_put(struct mm_struct *mm);

#ifdef HWPMC_TESTING
/* test_hold.c: debugfs hwpmc-test/hold_perfctr (perf's part in tests). */
void hwpmc_x86_test_init(void);
void hwpmc_x86_test_fini(void);
#else
static inline void hwpmc_x86_test_init(void)
{
}

static inline void hwpmc_x86_test_fini(void)
{
}
#endif
extern const struct hwpmc_x86_hw hwpmc_iap_hw, hwpmc_iaf_hw, hwpmc_k8_hw;

/* core.c, for the classes and the NMI handler. */
int hwpmc_x86_allocate(struct hwpmc_pmc *pm,
		       const struct pmc_op_pmcallocate *a);
void hwpmc_x86_release(struct hwpmc_pmc *pm);
u64 hwpmc_x86_min_period(u32 event);
void hwpmc_x86_start(struct hwpmc_pmc *pm);
void hwpmc_x86_stop(struct hwpmc_pmc *pm);
u64 hwpmc_x86_read(struct hwpmc_pmc *pm);
void hwpmc_x86_write(struct hwpmc_pmc *pm, u64 value);
void hwpmc_x86_cpu_online(unsigned int cpu);
void hwpmc_x86_cpu_offline(unsigned int cpu);
bool hwpmc_x86_row_ok(const struct hwpmc_class *cls, unsigned int idx,
		      const struct pmc_op_pmcallocate *a);
bool hwpmc_x86_unavailable(const struct hwpmc_class *cls, unsigned int idx);
int hwpmc_x86_get_msr(struct hwpmc_pmc *pm, u32 *index);
void hwpmc_x86_rdpmc_revoke(struct hwpmc_pmc *pm);
void hwpmc_x86_rdpmc_init(void);
void hwpmc_x86_rdpmc_fini(void);
u32 hwpmc_x86_perfctr_msr(unsigned int i);
u32 hwpmc_x86_evsel_msr(unsigned int i);
int hwpmc_x86_nmi_init(void);
void hwpmc_x86_nmi_fini(void);
void hwpmc_x86_lvtpc_nmi(void);
bool hwpmc_x86_in_use(void);
extern atomic_t hwpmc_x86_nrunning;

/* The per-CPU hardware state the switch, IPIs and the NMI handler share. */
struct hwpmc_x86_cpu {
	struct hwpmc_pmc *loaded[HWPMC_MAX_ROWS];	/* on the counter now */
	local64_t base[HWPMC_MAX_ROWS];	/* counter value when last folded */
	local64_t pending[HWPMC_MAX_ROWS];	/* counted, set aside by the PMI */
	struct hwpmc_pmc *sys[HWPMC_MAX_ROWS];	/* system PMCs of this CPU */
	u64 gctl;			/* shadow of the global control */
	u64 fixed_ctl;			/* shadow of IA32_FIXED_CTR_CTRL */
	u64 reload;			/* counting rows the PMI sets back */
	unsigned long nmi_until;	/* no global status: late-NMI window */
	/* The PMI throttle (nmi.c): */
	unsigned long throttled;	/* sampling rows parked; bitops */
	unsigned long pmi_tick;		/* jiffies of pmi_n; NMI only */
	unsigned int pmi_n;		/* PMIs taken in that tick */
};

DECLARE_PER_CPU(struct hwpmc_x86_cpu, hwpmc_x86_cpu);

void hwpmc_x86_nmi_window_open(struct hwpmc_x86_cpu *xc);
bool hwpmc_x86_unthrottle_row(struct hwpmc_x86_cpu *xc, unsigned int row);

/* The counter's value bits.  Any context, NMI included: no locks. */
static inline u64 hwpmc_x86_mask(const struct hwpmc_x86_hw *hw)
{
	return GENMASK_ULL(hw->width() - 1, 0);
}

/*
 * The longest sampling period: a sampling counter starts at minus its
 * period, which must leave the top bit set (the overflow test of PMUs
 * without a global status), and, on Intel CPUs that cannot write all of a
 * counter's bits (no IA32_A_PMCx), fit the 32 bits that a write to
 * IA32_PMCx sign-extends.  Any context, NMI included: no locks.
 */
static inline u64 hwpmc_x86_max_period(const struct hwpmc_x86_hw *hw)
{
	if (hwpmc_x86.intel && !hwpmc_x86.full_width)
		return BIT_ULL(31) - 1;
	return hwpmc_x86_mask(hw) >> 1;
}

#endif /* _HWPMC_X86_H */
