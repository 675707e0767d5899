// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the x86 hardware classes IAP, IAF (Intel) and K8 (AMD).
 *
 * A system-scope PMC lives on its CPU's counter from start to stop.  A
 * process-scope PMC is loaded on a CPU's counter when a thread of a
 * target process is switched in and unloaded (its count credited) when
 * it is switched out, so only tasks that have PMCs pay for them.  Counting
 * Sampling PMCs start their counter at minus the events left in their
 * period, so that the counter overflows (and the NMI handler takes a
 * sample) exactly at the period.  Counting PMCs keep their count in
 * software: their counter starts at minus the longest period and the PMI
 * that its overflow raises sets it back there, putting what it counted
 * aside (pending) for the next fold; so no count ever misses a turn of the
 * counter, however long it goes unread.  The exception is a counting PMC
 * whose owner reads it with RDPMC (PMCGETMSR): its counter holds its count,
 * modulo the width, as on FreeBSD, and raises no PMI.
 *
 * Before any counter is touched, hwpmc reserves all of them with the
 * kernel's reservation protocol, which perf honours: perf cannot start
 * hardware events while hwpmc holds them, and hwpmc cannot allocate (EBUSY)
 * while perf (or the NMI watchdog, which is a perf event) holds them.
 * Fixed counters, the global control and LVTPC are not covered by that
 * protocol; they are guarded by holding the general counters too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <asm/nmi.h>
#include <asm/tlbflush.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/string.h>
#include <linux/module.h>

#include "x86.h"

DEFINE_PER_CPU(struct hwpmc_x86_cpu, hwpmc_x86_cpu);

static atomic_t x86_nproc;		/* running process-scope PMCs */
atomic_t hwpmc_x86_nrunning;		/* running hardware PMCs */
static unsigned int x86_nhw;		/* allocated hardware PMCs, sx */

static unsigned int x86_idx(const struct hwpmc_pmc *pm)
{
	return pm->row - pm->cls->firstrow;
}

static u64 x86_gbit(const struct hwpmc_x86_hw *hw, unsigned int idx)
{
	return BIT_ULL(hw->global_bit0 + idx);
}

/* Does @pm's counter hold its count (user RDPMC), with no PMI? */
static bool x86_holds_count(const struct hwpmc_pmc *pm)
{
	return !hwpmc_is_sampling(pm) &&
	       (READ_ONCE(pm->rdpmc_mm) || (pm->pflags & HWPMC_PF_HOLDS_COUNT));
}

/*
 * Program @pm's counter on this CPU to @start and enable it.  IRQs off;
 * may be interrupted by the NMI handler, which ignores the row until it
 * is published as loaded.  No locks.
 */
static void x86_load(struct hwpmc_pmc *pm, u64 start)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int idx = x86_idx(pm);
	u64 mask = hwpmc_x86_mask(hw), v = 0;
	bool holds = x86_holds_count(pm);

	hwpmc_pmu->write_msr(hw->ctr_msr(idx), start & mask);
	/* What it holds: a legacy IA32_PMCx keeps bits 31:0 sign-extended. */
	hwpmc_pmu->read_msr(hw->ctr_msr(idx), &v);
	local64_set(&xc->base[pm->row], v & mask);
	local64_set(&xc->pending[pm->row], 0);
	hwpmc_x86_unthrottle_row(xc, pm->row);	/* a fresh period */
	/* Whether the PMI sets a counting PMC's counter back (a bitmap). */
	if (hwpmc_is_sampling(pm) || holds)
		WRITE_ONCE(xc->reload, xc->reload & ~BIT_ULL(pm->row));
	else
		WRITE_ONCE(xc->reload, xc->reload | BIT_ULL(pm->row));
	/*
	 * An overflow bit left behind (a counter that wrapped as it was
	 * unloaded) would make the next PMI sample this PMC early, or hide
	 * its own overflow.
	 */
	if (hwpmc_x86.has_global)
		hwpmc_pmu->write_msr(hwpmc_x86.global_ovf, x86_gbit(hw, idx));
	hw->control(idx, pm->hwctl | hw->en | (holds ? 0 : hw->intr));
	if (hwpmc_x86.has_global) {
		xc->gctl |= x86_gbit(hw, idx);
		hwpmc_pmu->write_msr(hwpmc_x86.global_ctrl, xc->gctl);
	}
	barrier();
	WRITE_ONCE(xc->loaded[pm->row], pm);
}

/*
 * Disable @pm's counter on this CPU and clear it; returns its value.  IRQs
 * off, so nothing else runs on this CPU before the counter is zero: the
 * next context that may use RDPMC here (any process granted it, now or
 * later) reads 0, never what @pm counted for its owner.
 */
static u64 x86_unload(struct hwpmc_pmc *pm)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int idx = x86_idx(pm);
	bool parked;
	u64 v = 0;

	WRITE_ONCE(xc->loaded[pm->row], NULL);
	barrier();
	parked = hwpmc_x86_unthrottle_row(xc, pm->row);
	hw->control(idx, 0);
	if (hwpmc_x86.has_global) {
		xc->gctl &= ~x86_gbit(hw, idx);
		hwpmc_pmu->write_msr(hwpmc_x86.global_ctrl, xc->gctl);
	}
	hwpmc_pmu->read_msr(hw->ctr_msr(idx), &v);
	hwpmc_pmu->write_msr(hw->ctr_msr(idx), 0);
	/* Parked by the throttle (nmi.c): its next load starts a period. */
	if (parked && hwpmc_is_sampling(pm))
		v = -pm->reload;
	/* An overflow it raised may not have arrived yet (no global status). */
	if (!x86_holds_count(pm))
		hwpmc_x86_nmi_window_open(xc);
	return v & hwpmc_x86_mask(hw);
}

/*
 * Credit what @pm's counter counted from @prev, the base of the last fold,
 * to @v, its value now, plus what the PMI put aside, to @pm and to @task's
 * target; for sampling, remember the events left to the next overflow.
 * The caller has moved the base to @v.  IRQs off, no locks.
 */
static void x86_credit_from(struct hwpmc_pmc *pm, struct task_struct *task,
			    u64 prev, u64 v)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	u64 mask = hwpmc_x86_mask(hw), delta;
	struct hwpmc_target *pt;

	delta = ((v - prev) & mask) + local64_xchg(&xc->pending[pm->row], 0);
	if (hwpmc_is_sampling(pm)) {
		if (v & (mask ^ (mask >> 1)))
			atomic64_set(&pm->remaining, (-v) & mask);
		return;
	}
	if (hwpmc_is_system(pm) || !task) {
		atomic64_add(delta, &pm->value);
		return;
	}
	rcu_read_lock();
	pt = hwpmc_target_find(task, pm);
	if (pt)
		hwpmc_target_add(pt, task, delta);
	else
		atomic64_add(delta, &pm->value);	/* detached meanwhile */
	rcu_read_unlock();
}

/* Credit @pm, unloaded here, with @v its counter's last value.  IRQs off. */
static void x86_credit(struct hwpmc_pmc *pm, struct task_struct *task, u64 v)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);

	x86_credit_from(pm, task, local64_xchg(&xc->base[pm->row], v), v);
}

/*
 * Counting: minus the longest period; with user RDPMC, the PMC's count
 * (modulo the width), which is what RDPMC then reads, as on FreeBSD.
 * Sampling: minus the events left to the next overflow.
 */
static u64 x86_start_value(struct hwpmc_pmc *pm)
{
	s64 left;

	if (x86_holds_count(pm))
		return atomic64_read(&pm->value);
	if (!hwpmc_is_sampling(pm))
		return -hwpmc_x86_max_period(hwpmc_x86_hw_of(pm->cls->ops));
	left = atomic64_read(&pm->remaining);
	if (left <= 0)
		left = pm->reload;
	return (u64)-left;
}

static bool x86_is_hw(const struct hwpmc_pmc *pm)
{
	return pm->cls->ops->cpu_online == hwpmc_x86_cpu_online;
}

/*
 * sched_switch (IRQs off, runqueue locked): unload @prev's process-scope
 * counters, crediting them, and load @next's.  No locks, no allocation.
 */
void hwpmc_x86_switch(struct task_struct *prev, struct task_struct *next)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;
	unsigned int r, n = hwpmc_nrows();

	if (!atomic_read(&x86_nproc))
		return;
	for (r = 0; r < n; r++) {
		struct hwpmc_pmc *pm = xc->loaded[r];

		if (pm && !hwpmc_is_system(pm))
			x86_credit(pm, prev, x86_unload(pm));
	}
	rcu_read_lock();
	pp = hwpmc_proc_find(next->signal);
	if (pp) {
		list_for_each_entry_rcu(pt, &pp->targets, pp_node) {
			struct hwpmc_pmc *pm = pt->pm;

			if (x86_is_hw(pm) && hwpmc_running(pm) &&
			    !xc->loaded[pm->row])
				x86_load(pm, x86_start_value(pm));
		}
	}
	rcu_read_unlock();
}

/* Is current (on this CPU) in a process that @pm is attached to? */
static bool x86_current_targeted(struct hwpmc_pmc *pm)
{
	bool found;

	rcu_read_lock();
	found = !!hwpmc_target_find(current, pm);
	rcu_read_unlock();
	return found;
}

/* IPI: start @pm on this CPU if it belongs here. */
static void x86_start_ipi(void *arg)
{
	struct hwpmc_pmc *pm = arg;
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);

	hwpmc_x86_lvtpc_nmi();
	if (xc->loaded[pm->row])
		return;
	if (hwpmc_is_system(pm) || x86_current_targeted(pm))
		x86_load(pm, x86_start_value(pm));
}

/* IPI: stop @pm on this CPU, crediting what it counted. */
static void x86_stop_ipi(void *arg)
{
	struct hwpmc_pmc *pm = arg;
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);

	if (xc->loaded[pm->row] == pm)
		x86_credit(pm, current, x86_unload(pm));
}

/*
 * Credit what @pm, loaded here, counted so far; it goes on.  IRQs off; the
 * PMI may move the base meanwhile (it sets a counting PMC's counter back),
 * so the base moves only if it is still the one the counter was read
 * against.
 */
static void x86_fold(struct hwpmc_pmc *pm)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	local64_t *base = &this_cpu_ptr(&hwpmc_x86_cpu)->base[pm->row];
	u64 prev, v;

	do {
		prev = local64_read(base);
		v = 0;
		hwpmc_pmu->read_msr(hw->ctr_msr(x86_idx(pm)), &v);
		v &= hwpmc_x86_mask(hw);
	} while (local64_cmpxchg(base, prev, v) != prev);
	x86_credit_from(pm, current, prev, v);
}

/* IPI: credit what @pm counted so far on this CPU, leaving it running. */
static void x86_fold_ipi(void *arg)
{
	struct hwpmc_pmc *pm = arg;

	if (this_cpu_ptr(&hwpmc_x86_cpu)->loaded[pm->row] == pm)
		x86_fold(pm);
}

/* Run @fn where @pm lives: its CPU, or every CPU for process scope. */
static void x86_on_pmc_cpus(struct hwpmc_pmc *pm, smp_call_func_t fn)
{
	if (!hwpmc_is_system(pm)) {
		on_each_cpu(fn, pm, 1);
		return;
	}
	cpus_read_lock();
	if (cpu_online(pm->cpu))
		smp_call_function_single(pm->cpu, fn, pm, 1);
	cpus_read_unlock();
}

/*
 * Start and stop publish pm->state themselves, before their IPIs (the core
 * writes the same state again after): the switch hook decides from it
 * whether to load a process-scope PMC, and it and the IPIs run with IRQs
 * off on their CPU.  So at start a target switched in on a CPU before that
 * CPU's IPI is loaded by the switch (the IPI then finds it loaded), and
 * one switched in after it is loaded by the switch; at stop, a switch
 * after the state write loads nothing more and the IPI unloads what an
 * earlier one loaded: when stop returns, no CPU has @pm loaded, which
 * release relies on before it frees @pm.  The IPIs order the state write
 * before their handlers; the counters are published first, so that a
 * switch that sees RUNNING also sees the switch hook enabled.
 */
void hwpmc_x86_start(struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	atomic64_set(&pm->remaining, pm->reload);
	atomic_inc(&hwpmc_x86_nrunning);
	if (!hwpmc_is_system(pm)) {
		/* Every switch unloads what ran (hwpmc_x86_switch()). */
		hwpmc_switch_gate_get(HWPMC_GATE_EVERY);
		atomic_inc(&x86_nproc);
	}
	/* The counts before the state: a switch that sees RUNNING loads. */
	smp_mb__after_atomic();
	WRITE_ONCE(pm->state, PMC_STATE_RUNNING);
	x86_on_pmc_cpus(pm, x86_start_ipi);
}

void hwpmc_x86_stop(struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	WRITE_ONCE(pm->state, PMC_STATE_STOPPED);
	x86_on_pmc_cpus(pm, x86_stop_ipi);
	if (!hwpmc_is_system(pm)) {
		atomic_dec(&x86_nproc);
		hwpmc_switch_gate_put(HWPMC_GATE_EVERY);
	}
	atomic_dec(&hwpmc_x86_nrunning);
}

u64 hwpmc_x86_read(struct hwpmc_pmc *pm)
{
	if (hwpmc_running(pm))
		x86_on_pmc_cpus(pm, x86_fold_ipi);
	return atomic64_read(&pm->value);
}

void hwpmc_x86_write(struct hwpmc_pmc *pm, u64 value)
{
	atomic64_set(&pm->value, value);
}

/* --- reservation with perf ------------------------------------------- */

u32 hwpmc_x86_evsel_msr(unsigned int i)
{
	if (hwpmc_x86.intel)
		return HWPMC_MSR_IA32_PERFEVTSEL0 + i;
	return hwpmc_amd_ctl_msr(hwpmc_x86.ext_core, i);
}

/* The reservation is keyed on IA32_PMCx, not its full-width alias. */
u32 hwpmc_x86_perfctr_msr(unsigned int i)
{
	return hwpmc_x86.intel ? HWPMC_MSR_IA32_PMC0 + i :
				 hwpmc_k8_hw.ctr_msr(i);
}

static void x86_release_counters(unsigned int n)
{
	while (n--) {
		release_evntsel_nmi(hwpmc_x86_evsel_msr(n));
		release_perfctr_nmi(hwpmc_x86_perfctr_msr(n));
	}
}

/* Take every general counter from perf, or none.  hwpmc_sx held. */
static int x86_reserve_counters(void)
{
	unsigned int i;

	for (i = 0; i < hwpmc_x86.ngp; i++) {
		if (!reserve_perfctr_nmi(hwpmc_x86_perfctr_msr(i)))
			break;
		if (!reserve_evntsel_nmi(hwpmc_x86_evsel_msr(i))) {
			release_perfctr_nmi(hwpmc_x86_perfctr_msr(i));
			break;
		}
	}
	if (i == hwpmc_x86.ngp)
		return 0;
	x86_release_counters(i);
	return -EBUSY;
}

/* Does hwpmc hold the counters?  Any context, NMI included: no locks. */
bool hwpmc_x86_in_use(void)
{
	return READ_ONCE(x86_nhw);
}

/* GETPMCINFO: does someone else (perf) hold this machine's counters? */
bool hwpmc_x86_unavailable(const struct hwpmc_class *cls, unsigned int idx)
{
	lockdep_assert_held(&hwpmc_sx);
	if (x86_nhw)
		return false;		/* we hold them */
	if (x86_reserve_counters())
		return true;
	x86_release_counters(hwpmc_x86.ngp);
	return false;
}

bool hwpmc_x86_row_ok(const struct hwpmc_class *cls, unsigned int idx,
		      const struct pmc_op_pmcallocate *a)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(cls->ops);

	return !hw->row_ok || hw->row_ok(idx, a);
}

/*
 * Who may use the hardware counters, and in which modes (process context,
 * the caller's credentials):
 *  - Allocating any hardware PMC reserves every counter of the PMU from
 *    perf (its hardware events, KVM's virtual PMU, the NMI watchdog) for
 *    as long as it lives, so a caller without CAP_PERFMON may only when
 *    kernel.hwpmc.unprivileged_hw is 1 (default 0): EPERM otherwise.
 *  - A PMC whose caller may not see kernel mode (pm->priv_kernel, from
 *    hwpmc_priv_kernel()) counts and samples user mode only: asking for
 *    kernel mode (the os bit, or PMC_CAP_SYSTEM) is EACCES, as
 *    perf_event_open() answers exclude_kernel=0; asking for neither mode
 *    means user mode (not both, as for a privileged caller).
 * Also rewrites @u, a copy of @a, to what the caller may have.
 */
static int x86_allowed(struct hwpmc_pmc *pm, const struct pmc_op_pmcallocate *a,
		       struct pmc_op_pmcallocate *u)
{
	*u = *a;
	if (!hwpmc_priv_hw())
		return -EPERM;
	if (pm->priv_kernel)
		return 0;
	if ((a->pm_config & PMC_X86_CONFIG_OS) || (a->pm_caps & PMC_CAP_SYSTEM))
		return -EACCES;
	u->pm_config |= PMC_X86_CONFIG_USR;
	pm->caps &= ~PMC_CAP_SYSTEM;
	return 0;
}

/*
 * The shortest sampling period the caller may ask for: any for
 * CAP_PERFMON, kernel.hwpmc.min_hw_period (default 10000) for others
 * (EINVAL below it).  Every owner's PMIs are throttled anyway (nmi.c).
 * Process context.
 */
u64 hwpmc_x86_min_period(u32 event)
{
	return hwpmc_priv_hw_min_period();
}

int hwpmc_x86_allocate(struct hwpmc_pmc *pm,
		       const struct pmc_op_pmcallocate *req)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	struct pmc_op_pmcallocate a;
	int err;

	lockdep_assert_held(&hwpmc_sx);
	err = x86_allowed(pm, req, &a);
	if (err)
		return err;
	err = hw->validate(&a, x86_idx(pm), &pm->hwctl);
	if (err)
		return err;
	if (!x86_nhw && x86_reserve_counters()) {
		pr_info_ratelimited("the PMU's counters are in use by perf (the NMI watchdog holds one: 'sysctl kernel.nmi_watchdog=0' frees it)\n");
		return -EBUSY;
	}
	WRITE_ONCE(x86_nhw, x86_nhw + 1);
	if (hwpmc_is_system(pm))
		per_cpu(hwpmc_x86_cpu, pm->cpu).sys[pm->row] = pm;
	return 0;
}

void hwpmc_x86_release(struct hwpmc_pmc *pm)
{
	lockdep_assert_held(&hwpmc_sx);
	hwpmc_x86_rdpmc_revoke(pm);
	if (hwpmc_is_system(pm))
		per_cpu(hwpmc_x86_cpu, pm->cpu).sys[pm->row] = NULL;
	WRITE_ONCE(x86_nhw, x86_nhw - 1);
	if (!x86_nhw)
		x86_release_counters(hwpmc_x86.ngp);
}

/*
 * User-mode RDPMC.  The kernel lets a process use RDPMC while its mm's
 * perf_rdpmc_allowed is non-zero: switch_mm() sets CR4.PCE from it when a
 * CPU changes mm (and clears it for the next mm), unless perf's
 * /sys/devices/cpu/rdpmc is 0 (never) or 2 (always).  hwpmc holds one
 * count on the owner's mm per PMC whose index it handed out, and:
 *  - PMCGETMSR fails with EPERM while perf's setting is 0, or cannot be
 *    read (x86_perf_rdpmc());
 *  - a grant, or the revocation of the last one, updates CR4.PCE at once
 *    on every CPU where that mm is loaded: run by one of its threads, or
 *    held lazily by a kernel thread (current->active_mm), since a CPU that
 *    goes back from a lazy kernel thread to the same mm skips
 *    switch_mm()'s update and would keep a stale PCE;
 *  - a forked child's copy of the count is reset (hwpmc_x86_fork()): the
 *    grant is the process's, not inherited;
 *  - a counter is cleared whenever hwpmc unloads it (x86_unload()), so
 *    RDPMC never reads what a PMC counted for someone else.
 * While a granted process runs, RDPMC reads every counter of its CPU,
 * including a system-scope PMC's live count there, as with perf.
 */

/* IPI: @mm was granted user RDPMC: CR4.PCE where it is loaded. */
static void x86_pce_grant_ipi(void *arg)
{
	if (current->active_mm == arg)
		cr4_update_irqsoff(X86_CR4_PCE, 0);
}

/* IPI: @mm lost its last grant: no CR4.PCE where it is loaded. */
static void x86_pce_revoke_ipi(void *arg)
{
	struct mm_struct *mm = arg;

	if (current->active_mm == mm &&
	    !atomic_read(&mm->context.perf_rdpmc_allowed))
		cr4_update_irqsoff(0, X86_CR4_PCE);
}

/*
 * A private sysfs mount (made at load, by the loading process) to read
 * perf's rdpmc attribute: never the caller's /sys, which an unprivileged
 * user can mount over in user and mount namespaces of its own.
 */
static struct vfsmount *x86_sysfs;

void hwpmc_x86_rdpmc_init(void)
{
	x86_sysfs = hwpmc_private_mount("sysfs");
	if (!x86_sysfs)
		pr_warn("no private sysfs: PMCGETMSR (user RDPMC) stays refused\n");
}

void hwpmc_x86_rdpmc_fini(void)
{
	if (x86_sysfs)
		kern_unmount(x86_sysfs);
	x86_sysfs = NULL;
}

/* The integer in sysfs file @name (relative to /sys), or -errno. */
static int x86_sysfs_int(const char *name, int *val)
{
	return hwpmc_private_read_int(x86_sysfs, name, val);
}

/*
 * perf's user-RDPMC setting (/sys/devices/cpu/rdpmc; cpu_core/rdpmc on
 * hybrid CPUs, which shares it): 0 never, 1 to processes granted it, 2
 * always.  The kernel keeps it in x86_pmu.attr_rdpmc and two static keys,
 * none exported to modules, so it is read from sysfs.  1 when perf has no
 * x86 PMU at all (no attribute: switch_mm() then follows
 * perf_rdpmc_allowed, as for 1); a negative errno when the attribute
 * cannot be read, and callers then refuse (fail closed).  Process context.
 */
static int x86_perf_rdpmc(void)
{
	int val, err;

#ifdef HWPMC_TESTING
	/* The model may stand in for perf's setting (x86/pmu.h). */
	if (hwpmc_pmu != &hwpmc_pmu_native) {
		err = hwpmc_pmu_model_perf_rdpmc(&val);
		if (err != -ENOENT)
			return err ? err : val;
	}
#endif
	err = x86_sysfs_int("devices/cpu/rdpmc", &val);
	if (err == -ENOENT)
		err = x86_sysfs_int("devices/cpu_core/rdpmc", &val);
	if (err == -ENOENT && x86_sysfs)
		return 1;
	return err ? err : val;
}

/* IPI: load @pm again where it is loaded, in its new mode (x86_load()). */
static void x86_reload_ipi(void *arg)
{
	struct hwpmc_pmc *pm = arg;

	if (this_cpu_ptr(&hwpmc_x86_cpu)->loaded[pm->row] != pm)
		return;
	x86_credit(pm, current, x86_unload(pm));
	x86_load(pm, x86_start_value(pm));
}

/*
 * A counting PMC's counter holds its count while its owner may read it
 * with RDPMC, and a period otherwise: a running one changes at once.
 */
static void x86_set_rdpmc_mm(struct hwpmc_pmc *pm, struct mm_struct *mm)
{
	WRITE_ONCE(pm->rdpmc_mm, mm);
	if (!hwpmc_is_sampling(pm) && hwpmc_running(pm))
		x86_on_pmc_cpus(pm, x86_reload_ipi);
}

/*
 * PMCGETMSR: the RDPMC index of @pm's counter, usable by its owner
 * process (its mm): EPERM while perf's rdpmc setting is 0 or unreadable.
 */
int hwpmc_x86_get_msr(struct hwpmc_pmc *pm, u32 *index)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	struct task_struct *task;
	struct mm_struct *mm;
	int setting;

	lockdep_assert_held(&hwpmc_sx);
	setting = x86_perf_rdpmc();
	if (setting <= 0) {
		if (setting)
			pr_info_ratelimited("PMCGETMSR refused: perf's rdpmc setting (/sys/devices/cpu/rdpmc) cannot be read (%d)\n",
					    setting);
		else
			pr_info_ratelimited("PMCGETMSR refused: user RDPMC is disabled (/sys/devices/cpu/rdpmc is 0)\n");
		return -EPERM;
	}
	*index = hw->rdpmc_base + x86_idx(pm);
	if (pm->rdpmc_mm)
		return 0;
	task = get_pid_task(pm->po->pid, PIDTYPE_TGID);
	mm = task ? get_task_mm(task) : NULL;
	if (task)
		put_task_struct(task);
	if (!mm)
		return -ESRCH;
	mmgrab(mm);
	mmput(mm);
	x86_set_rdpmc_mm(pm, mm);
	atomic_inc(&mm->context.perf_rdpmc_allowed);
	on_each_cpu(x86_pce_grant_ipi, mm, 1);
	return 0;
}

/*
 * User RDPMC for @mm without a PMC of its own: pctr(4)'s promise to a
 * process that may count system-wide (kmod/iface/pctr.c).  EPERM while
 * perf's setting is 0 or unreadable, as PMCGETMSR.  The caller keeps @mm
 * (mmgrab()) until hwpmc_x86_rdpmc_mm_put().  Process context.
 */
int hwpmc_x86_rdpmc_mm_get(struct mm_struct *mm)
{
	if (x86_perf_rdpmc() <= 0)
		return -EPERM;
	atomic_inc(&mm->context.perf_rdpmc_allowed);
	on_each_cpu(x86_pce_grant_ipi, mm, 1);
	return 0;
}

void hwpmc_x86_rdpmc_mm_put(struct mm_struct *mm)
{
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed) &&
	    x86_perf_rdpmc() != 2)
		on_each_cpu(x86_pce_revoke_ipi, mm, 1);
}

/*
 * @pm no longer qualifies for user RDPMC (detached, released).  Its
 * counter goes back to a period first (x86_set_rdpmc_mm()), so it no
 * longer holds the count; with the mm's last grant gone, CR4.PCE goes
 * too, unless perf's setting is 2 (always).
 */
void hwpmc_x86_rdpmc_revoke(struct hwpmc_pmc *pm)
{
	struct mm_struct *mm = pm->rdpmc_mm;

	lockdep_assert_held(&hwpmc_sx);
	if (!mm)
		return;
	x86_set_rdpmc_mm(pm, NULL);
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed) &&
	    x86_perf_rdpmc() != 2)
		on_each_cpu(x86_pce_revoke_ipi, mm, 1);
	mmdrop(mm);
}

/*
 * sched_process_fork, before the child first runs: dup_mm() copied the
 * parent's mm whole, perf_rdpmc_allowed with it, but the child holds none
 * of the grants counted there (hwpmc's belong to the parent's PMCs,
 * perf's to mappings of perf events, which fork does not copy), and its
 * first switch_mm() would set CR4.PCE from the copy.  A CLONE_VM child
 * shares the mm, and its grant, as a thread does.  Tracepoint context:
 * no locks, no allocation.
 */
void hwpmc_x86_fork(struct task_struct *parent, struct task_struct *child)
{
	struct mm_struct *mm = child->mm;

	if (mm && mm != parent->mm &&
	    atomic_read(&mm->context.perf_rdpmc_allowed))
		atomic_set(&mm->context.perf_rdpmc_allowed, 0);
}

/*
 * CPU hotplug, on the CPU itself: system PMCs follow their CPU.  IRQs off,
 * as everywhere else the per-CPU state changes: the switch hook (a
 * process-scope PMC loaded on a target switched in) and the NMI handler
 * must not see it half written.  LVTPC goes to NMI delivery whenever
 * hwpmc holds the counters, for the process-scope PMCs' PMIs too.
 */
void hwpmc_x86_cpu_online(unsigned int cpu)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int r, n = hwpmc_nrows();
	unsigned long flags;

	local_irq_save(flags);
	if (READ_ONCE(x86_nhw))
		hwpmc_x86_lvtpc_nmi();
	xc->gctl = 0;
	xc->fixed_ctl = 0;
	for (r = 0; r < n; r++) {
		struct hwpmc_pmc *pm = xc->sys[r];

		if (pm && hwpmc_running(pm))
			x86_load(pm, x86_start_value(pm));
	}
	local_irq_restore(flags);
}

void hwpmc_x86_cpu_offline(unsigned int cpu)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int r, n = hwpmc_nrows();
	unsigned long flags;

	local_irq_save(flags);
	for (r = 0; r < n; r++) {
		struct hwpmc_pmc *pm = xc->loaded[r];

		if (pm)
			x86_credit(pm, NULL, x86_unload(pm));
	}
	local_irq_restore(flags);
}
