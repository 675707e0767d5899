// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the PMI.  Counter overflows arrive as NMIs through the local
 * APIC's LVTPC entry (set to NMI delivery; the CPU masks it on delivery,
 * so it is unmasked again after each PMI).  The handler is registered
 * with register_nmi_handler(NMI_LOCAL) and returns NMI_DONE for NMIs that
 * are not hwpmc's, so other NMI users keep working.
 *
 * The handler and everything it calls run in NMI context: no locks, no
 * allocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/jiffies.h>
#include <linux/bitops.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/minmax.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include "x86.h"

/* Point LVTPC at NMI delivery, unmasked.  NMI context too. */
void hwpmc_x86_lvtpc_nmi(void)
{
	hwpmc_pmu->write_lvtpc(APIC_DM_NMI);
}

/*
 * Without a global status (AMD before PerfMonV2), did the counter of @pm,
 * loaded on row @r, overflow?  A counter that raises PMIs was started at
 * minus a period, so its top bit cleared.  NMI context.
 */
static bool hwpmc_x86_wrapped(struct hwpmc_x86_cpu *xc, unsigned int r,
			      struct hwpmc_pmc *pm)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	u64 v = 0, mask = hwpmc_x86_mask(hw);

	if (!hwpmc_is_sampling(pm) && !(READ_ONCE(xc->reload) & BIT_ULL(r)))
		return false;		/* holds its count: no PMI */
	hwpmc_pmu->read_msr(hw->ctr_msr(pm->row - pm->cls->firstrow), &v);
	return !(v & (mask ^ (mask >> 1)));
}

/* The global status bits of the counters (not of PEBS, LBR, ...).  NMI context. */
static u64 hwpmc_x86_counter_bits(void)
{
	u64 bits = GENMASK_ULL(hwpmc_x86.ngp - 1, 0);

	if (hwpmc_x86.intel)
		bits |= (u64)hwpmc_x86.fixed_mask << hwpmc_iaf_hw.global_bit0;
	return bits;
}

/* The overflow status of this CPU, in global status bits.  NMI context. */
static u64 hwpmc_x86_status(struct hwpmc_x86_cpu *xc)
{
	unsigned int r, n = hwpmc_nrows();
	u64 status = 0;

	if (hwpmc_x86.has_global) {
		hwpmc_pmu->read_msr(hwpmc_x86.global_status, &status);
		return status;
	}
	for (r = 0; r < n; r++) {
		struct hwpmc_pmc *pm = READ_ONCE(xc->loaded[r]);

		if (pm && hwpmc_x86_wrapped(xc, r, pm))
			status |= BIT_ULL(hwpmc_x86_hw_of(pm->cls->ops)->global_bit0 +
					  pm->row - pm->cls->firstrow);
	}
	return status;
}

/*
 * Without a global status (AMD before PerfMonV2) an overflow's NMI may
 * arrive after its counter was unloaded or after an earlier NMI already
 * took its overflow; like perf, hwpmc claims an NMI that finds no overflow
 * for a short while after it handled one or unloaded a counter (the
 * window, per CPU).  No locks.
 */
#define HWPMC_X86_NMI_WINDOW_MS	100

/* Open this CPU's window.  NMI context, or IRQs off (x86_unload()). */
void hwpmc_x86_nmi_window_open(struct hwpmc_x86_cpu *xc)
{
	if (!hwpmc_x86.has_global)
		WRITE_ONCE(xc->nmi_until, jiffies +
			   msecs_to_jiffies(HWPMC_X86_NMI_WINDOW_MS));
}

/* NMI context.  (jiffies starts far from 0 on 64-bit: 0 is no window.) */
static bool hwpmc_x86_nmi_window(struct hwpmc_x86_cpu *xc)
{
	return !hwpmc_x86.has_global &&
	       time_before(jiffies, READ_ONCE(xc->nmi_until));
}

/*
 * No hardware PMC runs, but the overflow of one that just stopped may
 * still be on its way.  With a global status it shows there: it is
 * hwpmc's while hwpmc holds the counters (any hardware PMC allocated;
 * otherwise perf may own them).  Without one, the window decides.  NMI
 * context: no locks.
 */
static int hwpmc_x86_nmi_late(struct hwpmc_x86_cpu *xc)
{
	u64 status = 0;

	if (hwpmc_x86.has_global) {
		if (!hwpmc_x86_in_use())
			return NMI_DONE;
		hwpmc_pmu->read_msr(hwpmc_x86.global_status, &status);
		status &= hwpmc_x86_counter_bits();
		if (!status)
			return NMI_DONE;
		hwpmc_pmu->write_msr(hwpmc_x86.global_ovf, status);
	} else if (!hwpmc_x86_nmi_window(xc)) {
		return NMI_DONE;
	}
	hwpmc_x86_lvtpc_nmi();
	return NMI_HANDLED;
}

/*
 * The throttle, like perf's perf_event_max_sample_rate: a CPU takes at
 * most kernel.hwpmc.max_sample_rate / HZ PMIs per tick (at least 1)
 * before its sampling PMCs stop: a sampling counter that overflows past
 * that budget takes no sample and is parked (started at minus the
 * longest period, so it overflows no more within the tick; bit 47 set,
 * so AMD without a global status does not see it as wrapped) until a
 * per-CPU timer armed for the next tick starts it on a fresh period.
 * Every such overflow is counted as a sample taken and throttled
 * (GETDRIVERSTATS pm_samples_throttled, and in its owner's DROPNOTIFY),
 * so that taken = logged + dropped + throttled stays exact.  A PMC
 * unloaded meanwhile (a context switch) is started afresh by its next
 * load, and parked again by its next PMI if the budget is still spent.
 */
struct hwpmc_x86_throttle {
	struct irq_work work;		/* from the NMI: arm the timer */
	struct hrtimer timer;		/* next tick: unpark */
};

static DEFINE_PER_CPU(struct hwpmc_x86_throttle, hwpmc_x86_throttle);
static bool hwpmc_x86_throttle_ready;

/*
 * Count one PMI of this CPU against the budget of the current tick; true
 * when it is over.  NMI context (NMIs do not nest): no locks.
 */
static bool hwpmc_x86_pmi_over(struct hwpmc_x86_cpu *xc)
{
	unsigned long now = jiffies;
	unsigned int max = max_t(unsigned int, 1,
				 READ_ONCE(hwpmc_max_sample_rate) / HZ);

	if (xc->pmi_tick != now) {
		xc->pmi_tick = now;
		xc->pmi_n = 0;
	}
	return ++xc->pmi_n > max;
}

/*
 * A throttled overflow of @pm on row @r: counted, not sampled; the
 * counter is parked.  NMI context: no locks, no allocation.
 */
static void hwpmc_x86_park(struct hwpmc_x86_cpu *xc, unsigned int r,
			   struct hwpmc_pmc *pm)
{
	const struct hwpmc_x86_hw *hw = hwpmc_x86_hw_of(pm->cls->ops);
	u64 park = (-hwpmc_x86_max_period(hw)) & hwpmc_x86_mask(hw);

	hwpmc_sample_throttled(pm);	/* counted, and in DROPNOTIFY */
	set_bit(r, &xc->throttled);
	hwpmc_pmu->write_msr(hw->ctr_msr(pm->row - pm->cls->firstrow), park);
	local64_set(&xc->base[r], park);
	if (READ_ONCE(hwpmc_x86_throttle_ready))
		irq_work_queue(this_cpu_ptr(&hwpmc_x86_throttle.work));
}

/*
 * Row @row starts afresh (x86_load(), x86_unload()): no longer parked;
 * returns whether it was.  IRQs off; the NMI may set other bits meanwhile
 * (atomic bitops).
 */
bool hwpmc_x86_unthrottle_row(struct hwpmc_x86_cpu *xc, unsigned int row)
{
	return test_and_clear_bit(row, &xc->throttled);
}

/* Hard IRQ, on the throttled CPU: the next tick unparks its rows. */
static void hwpmc_x86_throttle_work(struct irq_work *work)
{
	struct hwpmc_x86_throttle *t =
		container_of(work, struct hwpmc_x86_throttle, work);

	if (!hrtimer_active(&t->timer))
		hrtimer_start(&t->timer, ns_to_ktime(TICK_NSEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Hard IRQ (IRQs off), on the throttled CPU (pinned; a timer that a CPU
 * going offline passed on finds nothing there: the CPU unloaded its
 * rows): each parked sampling PMC still loaded starts a fresh period.
 * The row is unparked before its counter is written, so an NMI in
 * between sees a parked counter that has not overflowed.
 */
static enum hrtimer_restart hwpmc_x86_throttle_timer(struct hrtimer *timer)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int r;

	if (timer != this_cpu_ptr(&hwpmc_x86_throttle.timer))
		return HRTIMER_NORESTART;
	for_each_set_bit(r, &xc->throttled, BITS_PER_LONG) {
		struct hwpmc_pmc *pm = READ_ONCE(xc->loaded[r]);
		const struct hwpmc_x86_hw *hw;
		u64 start;

		clear_bit(r, &xc->throttled);
		if (!pm || !hwpmc_is_sampling(pm))
			continue;
		hw = hwpmc_x86_hw_of(pm->cls->ops);
		start = (-(u64)pm->reload) & hwpmc_x86_mask(hw);
		hwpmc_pmu->write_msr(hw->ctr_msr(r - pm->cls->firstrow), start);
		local64_set(&xc->base[r], start);
	}
	return HRTIMER_NORESTART;
}

/*
 * The PMI.  A sampling PMC that overflowed takes its sample and starts
 * its next period, unless the throttle holds it back; a counting PMC puts
 * what its counter counted aside for the next fold and starts its counter
 * over (see x86/core.c).  NMI context: no locks, no allocation.
 */
static int hwpmc_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct hwpmc_x86_cpu *xc = this_cpu_ptr(&hwpmc_x86_cpu);
	unsigned int r, n = hwpmc_nrows(), handled = 0;
	u64 status, acked = 0, held = 0;
	int over = -1;			/* the budget, once asked */

	if (!atomic_read(&hwpmc_x86_nrunning))
		return hwpmc_x86_nmi_late(xc);
	status = hwpmc_x86_status(xc);
	for (r = 0; r < n && status; r++) {
		struct hwpmc_pmc *pm = READ_ONCE(xc->loaded[r]);
		const struct hwpmc_x86_hw *hw;
		unsigned int idx;
		u64 bit, start, mask;

		if (!pm)
			continue;
		hw = hwpmc_x86_hw_of(pm->cls->ops);
		idx = pm->row - pm->cls->firstrow;
		bit = BIT_ULL(hw->global_bit0 + idx);
		if (!(status & bit))
			continue;
		mask = hwpmc_x86_mask(hw);
		if (hwpmc_is_sampling(pm)) {
			if (over < 0)
				over = hwpmc_x86_pmi_over(xc);
			if (over || test_bit(r, &xc->throttled)) {
				hwpmc_x86_park(xc, r, pm);
				acked |= bit;
				handled++;
				continue;
			}
			hwpmc_sample_take(pm, current, regs);
			/* The next period: minus the reload. */
			start = (-(u64)pm->reload) & mask;
		} else if (xc->reload & BIT_ULL(r)) {
			u64 v = 0;

			hwpmc_pmu->read_msr(hw->ctr_msr(idx), &v);
			local64_add(((v & mask) - local64_read(&xc->base[r])) &
				    mask, &xc->pending[r]);
			start = (-hwpmc_x86_max_period(hw)) & mask;
		} else {
			/*
			 * Holds its count (user RDPMC): it just wrapped, with
			 * its interrupt off, so this NMI is not its.
			 */
			held |= bit;
			continue;
		}
		acked |= bit;
		handled++;
		hwpmc_pmu->write_msr(hw->ctr_msr(idx), start);
		local64_set(&xc->base[r], start);
	}
	if (hwpmc_x86.has_global) {
		/*
		 * A counter that overflowed as it was being unloaded: hwpmc
		 * holds every counter, so its PMI is hwpmc's all the same.
		 */
		u64 late = status & hwpmc_x86_counter_bits() & ~acked & ~held;

		if (late && !handled)
			handled = 1;
		/* A held counter's bit is cleared too, but claims nothing. */
		acked |= late | held;
		if (acked)
			hwpmc_pmu->write_msr(hwpmc_x86.global_ovf, acked);
	}
	if (!handled && hwpmc_x86_nmi_window(xc)) {
		hwpmc_x86_lvtpc_nmi();
		return NMI_HANDLED;	/* a late one: see the window */
	}
	if (!handled) {
		hwpmc_stat_inc(intr_ignored);
		return NMI_DONE;
	}
	hwpmc_x86_nmi_window_open(xc);
	/* Interrupts, as FreeBSD counts them, not the counters in each. */
	hwpmc_stat_inc(intr_processed);
	hwpmc_x86_lvtpc_nmi();
	return NMI_HANDLED;
}

int hwpmc_x86_nmi_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct hwpmc_x86_throttle *t = per_cpu_ptr(&hwpmc_x86_throttle,
							   cpu);

		/* Hard IRQ on PREEMPT_RT too, as the timer it arms. */
		t->work = IRQ_WORK_INIT_HARD(hwpmc_x86_throttle_work);
		hrtimer_init(&t->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		t->timer.function = hwpmc_x86_throttle_timer;
	}
	WRITE_ONCE(hwpmc_x86_throttle_ready, true);
	return register_nmi_handler(NMI_LOCAL, hwpmc_x86_nmi, 0, "hwpmc");
}

/* After the NMI handler is gone: no work is queued any more. */
void hwpmc_x86_nmi_fini(void)
{
	int cpu;

	unregister_nmi_handler(NMI_LOCAL, "hwpmc");
	WRITE_ONCE(hwpmc_x86_throttle_ready, false);
	for_each_possible_cpu(cpu) {
		struct hwpmc_x86_throttle *t = per_cpu_ptr(&hwpmc_x86_throttle,
							   cpu);

		irq_work_sync(&t->work);
		hrtimer_cancel(&t->timer);
	}
}
