// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the PMU model's self-test, for tests only (debugfs
 * hwpmc-model/selftest, see engine.c): it checks the register model of
 * regs.c and the engine against the vendor manuals, through the ops
 * table, on the reading CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": pmu model: " fmt

#include <linux/bits.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>

#include <asm/apic.h>
#include <asm/nmi.h>

#include "model.h"

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
	return HWPMC_MSR_IA32_A_PMC0 + i;
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
	c->ops->cpuid(HWPMC_CPUID_EXT_BASE, 0, r);
	st_eq(c, "cpuid 0x80000000 max", r[0] >= (model_amd_v2() ?
	      HWPMC_CPUID_AMD_PERFMON : HWPMC_CPUID_AMD_EXT_FEATURES), 1);
	c->ops->cpuid(HWPMC_CPUID_AMD_EXT_FEATURES, 0, r);
	st_eq(c, "cpuid 0x80000001 PerfCtrExtCore",
	      !!(r[2] & HWPMC_CPUID_AMD_PERFCTR_CORE), model_amd_ext());
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
	st_eq(c, "a_pmc0 alias", st_rd(c, HWPMC_MSR_IA32_A_PMC0),
	      0xffff80000000);
	st_eq(c, "rdpmc 0", c->ops->read_pmc(0), 0xffff80000000);
	st_wr(c, "wr pmc0 edx", pmc0, 0x100000005, 0);
	st_eq(c, "pmc0 edx ignored", st_rd(c, pmc0), 5);
	st_wr(c, "wr pmc0 -1", pmc0, -1ULL, 0);
	st_eq(c, "pmc0 -1", st_rd(c, pmc0), MODEL_MASK);
	st_wr(c, "wr a_pmc0", HWPMC_MSR_IA32_A_PMC0, 0x123456789abc, 0);
	st_eq(c, "a_pmc0 full width", st_rd(c, pmc0), 0x123456789abc);
	st_wr(c, "wr a_pmc0 bit 48", HWPMC_MSR_IA32_A_PMC0, BIT_ULL(48), -EIO);
	st_eq(c, "a_pmc0 kept", st_rd(c, pmc0), 0x123456789abc);
	st_wr(c, "wr a_pmc0 0", HWPMC_MSR_IA32_A_PMC0, 0, 0);
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
	st_eq(c, "perf_capabilities", st_rd(c, HWPMC_MSR_IA32_PERF_CAPABILITIES),
	      HWPMC_PERF_CAP_FW_WRITE);
	st_wr(c, "wr perf_capabilities", HWPMC_MSR_IA32_PERF_CAPABILITIES, 0, -EIO);
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
	unsigned int times;
	char in[28];
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
	st_eq(c, "parse \"12\"", model_parse_advance(in, &n, &os, &times) ||
	      n != 12 || os || times != 1, 0);
	strscpy(in, "usr 13", sizeof(in));
	st_eq(c, "parse \"usr 13\"", model_parse_advance(in, &n, &os, &times) ||
	      n != 13 || os, 0);
	strscpy(in, "os 140737488355327\n", sizeof(in));
	st_eq(c, "parse \"os 2^47-1\"", model_parse_advance(in, &n, &os, &times) ||
	      n != MODEL_ADVANCE_MAX - 1 || !os, 0);
	strscpy(in, "140737488355328", sizeof(in));
	st_eq(c, "parse \"2^47\"", model_parse_advance(in, &n, &os, &times), -EINVAL);
	strscpy(in, "0", sizeof(in));
	st_eq(c, "parse \"0\"", model_parse_advance(in, &n, &os, &times), -EINVAL);
	strscpy(in, "os 7 x3\n", sizeof(in));
	st_eq(c, "parse \"os 7 x3\"", model_parse_advance(in, &n, &os, &times) ||
	      n != 7 || !os || times != 3, 0);
	strscpy(in, "140737488355327 x8", sizeof(in));
	st_eq(c, "parse \"2^47-1 x8\"",
	      model_parse_advance(in, &n, &os, &times) ||
	      n != MODEL_ADVANCE_MAX - 1 || times != MODEL_ADVANCE_TIMES, 0);
	strscpy(in, "5 x9", sizeof(in));
	st_eq(c, "parse \"5 x9\"", model_parse_advance(in, &n, &os, &times),
	      -EINVAL);
	strscpy(in, "5 x0", sizeof(in));
	st_eq(c, "parse \"5 x0\"", model_parse_advance(in, &n, &os, &times),
	      -EINVAL);
	strscpy(in, "5x2", sizeof(in));
	st_eq(c, "parse \"5x2\"", model_parse_advance(in, &n, &os, &times),
	      -EINVAL);
	strscpy(in, "x2", sizeof(in));
	st_eq(c, "parse \"x2\"", model_parse_advance(in, &n, &os, &times),
	      -EINVAL);
	strscpy(in, "kernel 5", sizeof(in));
	st_eq(c, "parse \"kernel 5\"", model_parse_advance(in, &n, &os, &times),
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
		      st_rd(&c, HWPMC_MSR_IA32_PERF_CAPABILITIES), 0);
		st_eq(&c, "nofw rd a_pmc0",
		      c.ops->read_msr(HWPMC_MSR_IA32_A_PMC0, &v), -EIO);
		st_wr(&c, "nofw wr a_pmc0", HWPMC_MSR_IA32_A_PMC0, 1, -EIO);
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

const struct file_operations model_selftest_fops = {
	.owner		= THIS_MODULE,
	.open		= model_selftest_open,
	.read		= model_selftest_read,
	.release	= model_selftest_release,
	.llseek		= default_llseek,
};
