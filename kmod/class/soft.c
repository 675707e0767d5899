// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the SOFT class.  Software events backed by Linux mechanisms, so
 * that hwpmc counts (and samples) on machines without a PMU:
 *
 *   CLOCK.HARD        scheduler ticks: a per-CPU timer at HZ
 *   CLOCK.PROF        CPU time in nanoseconds, exactly as the scheduler
 *                     accounts it: the growth of each task's
 *                     se.sum_exec_runtime (what /proc/PID/schedstat and
 *                     CLOCK_THREAD_CPUTIME_ID show) between its switch-in
 *                     and its switch-out, so the switch hook reads no
 *                     clock and loses nothing, added once to the process
 *                     whatever its number of CLOCK.PROF PMCs, each of
 *                     which takes its share from its own start (by_clock,
 *                     hwpmc.h); sampling PMCs run a timer at
 *                     their period, so any rate from 1 Hz to tens of kHz
 *                     works: a system-scope one on its CPU, a process-scope
 *                     one only on the CPUs where a thread of a target runs
 *                     (armed when it is switched in, stopped when no target
 *                     runs there)
 *   PAGE_FAULT.*      the x86 page-fault tracepoints
 *   SCHED.SWITCH      sched_switch: one per switch away from a task
 *   SCHED.MIGRATE     sched_migrate_task
 *   SYSCALL.ENTER     raw_syscalls:sys_enter
 *
 * Sampling is throttled per CPU as perf's perf_event_max_sample_rate: at
 * most kernel.hwpmc.max_sample_rate / HZ SOFT samples per CPU per tick;
 * beyond that the samples due are counted as throttled (GETDRIVERSTATS,
 * the owner's DROPNOTIFY) until the next tick.  An unprivileged owner's
 * CLOCK.PROF period must be at least 10^9 / max_sample_rate ns (EINVAL).
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/tick.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/seqlock.h>
#include <asm/irq_regs.h>

#include "../hwpmc.h"

#define SOFT_NROWS	16

static const char *const soft_event_names[PMC_SOFT_NEVENTS] = {
	[PMC_SOFT_CLOCK_HARD]		= "CLOCK.HARD",
	[PMC_SOFT_CLOCK_PROF]		= "CLOCK.PROF",
	[PMC_SOFT_PAGE_FAULT_ALL]	= "PAGE_FAULT.ALL",
	[PMC_SOFT_PAGE_FAULT_READ]	= "PAGE_FAULT.READ",
	[PMC_SOFT_PAGE_FAULT_WRITE]	= "PAGE_FAULT.WRITE",
	[PMC_SOFT_SCHED_SWITCH]		= "SCHED.SWITCH",
	[PMC_SOFT_SCHED_MIGRATE]	= "SCHED.MIGRATE",
	[PMC_SOFT_SYSCALL_ENTER]	= "SYSCALL.ENTER",
};

/* The hook each event needs beyond the scheduler hooks every PMC holds. */
static const int soft_event_hook[PMC_SOFT_NEVENTS] = {
	[PMC_SOFT_CLOCK_HARD]		= -1,
	[PMC_SOFT_CLOCK_PROF]		= -1,
	[PMC_SOFT_PAGE_FAULT_ALL]	= HWPMC_HOOK_PAGE_FAULT,
	[PMC_SOFT_PAGE_FAULT_READ]	= HWPMC_HOOK_PAGE_FAULT,
	[PMC_SOFT_PAGE_FAULT_WRITE]	= HWPMC_HOOK_PAGE_FAULT,
	[PMC_SOFT_SCHED_SWITCH]		= -1,
	[PMC_SOFT_SCHED_MIGRATE]	= HWPMC_HOOK_MIGRATE,
	[PMC_SOFT_SYSCALL_ENTER]	= HWPMC_HOOK_SYS_ENTER,
};

/* Per CPU: the system-scope SOFT PMCs, one slot per row. */
struct soft_cpu {
	struct hwpmc_pmc __rcu *sys[SOFT_NROWS];
	u32 sys_events;			/* BIT(event) of sys[]'s PMCs, hwpmc_sx */
	bool sys_prof;			/* a running CLOCK.PROF sampler in sys[] */
	/*
	 * CLOCK.PROF: the task on this CPU whose CPU time is followed (from
	 * its switch-in, see soft_prof_follows(), or from a fold; NULL
	 * otherwise, so never a task that is not current) and its scheduler
	 * runtime (se.sum_exec_runtime) already credited.  Written
	 * by this CPU only, IRQs off (switch, timer, IPI, exit); read by
	 * soft_read() on any CPU under prof_seq.
	 */
	seqcount_t prof_seq;
	struct task_struct *prof_task;
	u64 prof_base;
	u64 prof_sbase;			/* ... and passed to the samplers */
	struct hrtimer tick;		/* CLOCK.HARD */
	bool tick_on;
	struct hrtimer prof;		/* CLOCK.PROF sampling */
	bool prof_on;
	/* Throttling: samples taken in the tick thr_jiffies. */
	unsigned long thr_jiffies;
	unsigned int thr_count;
};

static DEFINE_PER_CPU(struct soft_cpu, soft_cpu);
static atomic_t soft_npmcs;		/* allocated SOFT PMCs */
/* Allocated process-scope SOFT PMCs per event: may a task have any? */
static atomic_t soft_nproc[PMC_SOFT_NEVENTS];
static unsigned int soft_nhard;		/* running CLOCK.HARD PMCs, hwpmc_sx */
static LIST_HEAD(soft_prof_samplers);	/* running CLOCK.PROF sampling PMCs */
static atomic_t soft_prof_nts;		/* ... of them process-scope */

/* The longest SOFT sampling period: the sampler's debt stays in an s64. */
#define SOFT_MAX_PERIOD		BIT_ULL(62)
/* The shortest timer period; the longest is the scheduler tick. */
#define SOFT_PROF_MIN_NS	(10 * NSEC_PER_USEC)
/* CPU time after a target's switch-in (at most) to take a period due. */
#define SOFT_PROF_DUE_NS	(100 * NSEC_PER_USEC)
/* Samples taken at once when several periods are due; the rest throttled. */
#define SOFT_BURST		64

static bool soft_is(const struct hwpmc_pmc *pm, u32 event)
{
	return pm->cls->ops == &hwpmc_soft_ops && pm->event == event &&
	       hwpmc_running(pm);
}

/*
 * May this CPU take one more sample in this tick?  At most
 * max_sample_rate / HZ (at least 1) per tick.  Any context but NMI, no
 * lock: a nested caller (a tracepoint interrupted by the timer) may make
 * the count inexact by one.
 */
static bool soft_sample_budget(void)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	unsigned int max = max_t(unsigned int,
				 READ_ONCE(hwpmc_max_sample_rate) / HZ, 1);
	unsigned long now = jiffies;

	/* Another tick (any other value: the counter wraps). */
	if (READ_ONCE(sc->thr_jiffies) != now) {
		WRITE_ONCE(sc->thr_jiffies, now);
		WRITE_ONCE(sc->thr_count, 0);
	}
	if (sc->thr_count >= max)
		return false;
	WRITE_ONCE(sc->thr_count, sc->thr_count + 1);
	return true;
}

/*
 * Does @pm count its periods per CPU?  A process-scope CLOCK.PROF
 * sampler does: each CPU that runs its targets keeps the CPU time left to
 * its next sample there (pm->cls_pcpu), so that its timer fires once per
 * sample and the sample falls where that CPU used the period, not where
 * another CPU's use ended a shared one.  When a CPU stops running a
 * target (a switch, an exit) or folds outside its timer (start, stop,
 * attach), what it used of its period goes to the PMC's pool
 * (pm->remaining, in ns for such a PMC), and the next CPU that arms its
 * timer for a target takes the pool into its own period
 * (soft_prof_pull()): so no CPU time is lost between CPUs, the samples
 * stay CPU time x rate, and a thread that moves keeps its phase.  Any
 * context but NMI.
 */
static bool soft_prof_per_cpu(const struct hwpmc_pmc *pm)
{
	return pm->cls_pcpu;
}

static s64 *soft_prof_left(struct hwpmc_pmc *pm)
{
	return this_cpu_ptr((s64 __percpu *)pm->cls_pcpu);
}

/* This CPU takes @pm's pool into its period.  IRQs off. */
static void soft_prof_pull(struct hwpmc_pmc *pm)
{
	if (atomic64_read(&pm->remaining))
		*soft_prof_left(pm) -= atomic64_xchg(&pm->remaining, 0);
}

/*
 * How many of @pm's periods ended with @n more events, the debt settled;
 * 0 while none did, or while no sample can be taken (@can_sample false:
 * the periods stay due).  Shared periods (every other sampler) are
 * settled by one compare-and-exchange, so that CPUs crediting the same
 * PMC at once never take a period twice.  Per-CPU ones by this CPU alone,
 * IRQs off (every CLOCK.PROF credit is a fold); a fold that cannot sample
 * hands what this CPU used of its period to the pool (see
 * soft_prof_per_cpu()).  No locks; any context but NMI.
 */
static u64 soft_sample_due(struct hwpmc_pmc *pm, u64 n, bool can_sample)
{
	s64 left, *mine;
	u64 due;

	if (soft_prof_per_cpu(pm)) {
		lockdep_assert_irqs_disabled();
		mine = soft_prof_left(pm);
		left = *mine - (s64)n;
		if (!can_sample) {
			atomic64_add((s64)pm->reload - left, &pm->remaining);
			*mine = pm->reload;
			return 0;
		}
		due = left > 0 ? 0 : 1 + (u64)-left / pm->reload;
		*mine = left + due * pm->reload;
		return due;
	}
	left = atomic64_sub_return(n, &pm->remaining);
	do {
		if (left > 0 || !can_sample)
			return 0;
		/* reload <= SOFT_MAX_PERIOD: neither side overflows. */
		due = 1 + (u64)-left / pm->reload;
	} while (!atomic64_try_cmpxchg(&pm->remaining, &left,
				       left + due * pm->reload));
	return due;
}

/*
 * A sampling PMC saw @n events: one sample per period that elapsed.  The
 * policy when several elapsed at once (a CLOCK.PROF timer that fired
 * late, IRQs having been off; a SOFT event's burst): every period due is
 * credited to the context that was interrupted, each one a sample of
 * @regs, so that a profile's counts stay proportional to the events; at
 * most SOFT_BURST are taken at once, and the others are counted as
 * throttled (DROPNOTIFY pl_throttled), never forgiven unseen.  Where no
 * sample can be taken (!@can_sample: inside the scheduler, where the
 * registers would be the scheduler's), the periods stay due and the next
 * call that can sample takes them.  No locks; any context but NMI.
 */
static void soft_sample(struct hwpmc_pmc *pm, struct task_struct *task,
			u64 n, struct pt_regs *regs, bool can_sample)
{
	u64 due = soft_sample_due(pm, n, can_sample), k;

	if (!due)
		return;
	for (k = 0; k < due && k < SOFT_BURST; k++) {
		if (soft_sample_budget())
			hwpmc_sample_take(pm, task, regs);
		else
			hwpmc_sample_throttled(pm);
	}
	if (due > SOFT_BURST)
		hwpmc_sample_throttled_n(pm, due - SOFT_BURST);
}

/*
 * Credit @n events of @event to @task's process-scope PMCs and to the
 * system-scope PMCs of this CPU, and @ns to the samplers' periods
 * (CLOCK.PROF counts and samples from different points, see
 * soft_prof_fold_at()); sampling PMCs take their samples.  CLOCK.PROF's
 * @n goes to the process's clock, one add for all its PMCs (by_clock,
 * hwpmc_target_pending()), and its list is walked only while a
 * process-scope sampler runs somewhere, for the samplers.  The
 * process hash is only looked at while a process-scope PMC of @event
 * exists, the CPU's slots only while one of its system-scope PMCs counts
 * @event.  Called from tracepoints, timers and IRQs-off sections (any
 * context but NMI), never preemptible: that is the RCU read side the
 * lists and slots are read under, with no rcu_read_lock() call on the
 * switch path.  No locks.
 */
static void soft_credit_split(struct task_struct *task, u32 event, u64 n,
			      u64 ns, struct pt_regs *regs, bool can_sample)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;
	unsigned int i;

	lockdep_assert_preemption_disabled();
	pp = atomic_read(&soft_nproc[event]) ? hwpmc_proc_find(task->signal)
					       : NULL;
	if (pp && event == PMC_SOFT_CLOCK_PROF) {
		/*
		 * Counted once for all the process's CLOCK.PROF PMCs (they
		 * are by_clock); the list only for the samplers' periods.
		 */
		if (n)
			atomic64_add(n, &pp->clock);
		n = 0;
		if (!ns || !atomic_read(&soft_prof_nts))
			pp = NULL;
	}
	if (pp) {
		list_for_each_entry_rcu(pt, &pp->targets, pp_node) {
			if (!soft_is(pt->pm, event))
				continue;
			if (n)
				hwpmc_target_add(pt, task, n);
			if (ns && hwpmc_is_sampling(pt->pm))
				soft_sample(pt->pm, task, ns, regs, can_sample);
		}
	}
	if (!(READ_ONCE(sc->sys_events) & BIT(event)))
		i = SOFT_NROWS;		/* no system-scope PMC of @event here */
	else
		i = 0;
	for (; i < SOFT_NROWS; i++) {
		struct hwpmc_pmc *pm = rcu_dereference_sched(sc->sys[i]);

		if (!pm || !soft_is(pm, event))
			continue;
		if (n)
			atomic64_add(n, &pm->value);
		if (ns && hwpmc_is_sampling(pm))
			soft_sample(pm, task, ns, regs, can_sample);
	}
}

/* @n events, counted and sampled. */
static void soft_credit(struct task_struct *task, u32 event, u64 n,
			struct pt_regs *regs, bool can_sample)
{
	soft_credit_split(task, event, n, n, regs, can_sample);
}

/*
 * The CPU time @t has had, as the scheduler accounts it: its
 * se.sum_exec_runtime, which the scheduler brings up to date at every
 * switch and tick.  With @running (@t is current on @cpu), extended to
 * now by the time since se.exec_start, which the scheduler adds at its
 * next update: exec_start is on the runqueue's task clock, which is
 * sched_clock_cpu() unless IRQ or steal time is taken out of it (then the
 * extension is left to the next tick).  The two fields are read without
 * the runqueue lock: read until the runtime did not move in between.
 * Any context but NMI.
 */
static u64 soft_runtime(struct task_struct *t, bool running, int cpu)
{
	u64 sum = READ_ONCE(t->se.sum_exec_runtime);
#if !IS_ENABLED(CONFIG_IRQ_TIME_ACCOUNTING) && \
	!IS_ENABLED(CONFIG_PARAVIRT_TIME_ACCOUNTING)
	unsigned int tries;
	u64 start, again;
	s64 d;

	for (tries = 0; running && tries < 4; tries++) {
		start = READ_ONCE(t->se.exec_start);
		d = sched_clock_cpu(cpu) - start;
		/* exec_start before the second look at the runtime. */
		smp_rmb();
		again = READ_ONCE(t->se.sum_exec_runtime);
		if (again == sum)
			return d > 0 ? sum + d : sum;
		sum = again;
	}
#endif
	return sum;
}

/* @ns back to @pm's period (this CPU's, if per CPU).  IRQs off. */
static void soft_prof_give_back(struct hwpmc_pmc *pm, u64 ns)
{
	if (soft_prof_per_cpu(pm))
		*soft_prof_left(pm) += ns;
	else
		atomic64_add(ns, &pm->remaining);
}

/*
 * Give @ns back to the CLOCK.PROF samplers counting @task here: they
 * counted that much CPU time the scheduler did not charge.  No locks;
 * IRQs off (a fold).
 */
static void soft_prof_refund(struct task_struct *task, u64 ns)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;
	unsigned int i;

	rcu_read_lock();
	pp = atomic_read(&soft_prof_nts) ? hwpmc_proc_find(task->signal) : NULL;
	if (pp)
		list_for_each_entry_rcu(pt, &pp->targets, pp_node)
			if (soft_is(pt->pm, PMC_SOFT_CLOCK_PROF) &&
			    hwpmc_is_sampling(pt->pm))
				soft_prof_give_back(pt->pm, ns);
	for (i = 0; READ_ONCE(sc->sys_prof) && i < SOFT_NROWS; i++) {
		struct hwpmc_pmc *pm = rcu_dereference(sc->sys[i]);

		if (pm && soft_is(pm, PMC_SOFT_CLOCK_PROF) &&
		    hwpmc_is_sampling(pm))
			atomic64_add(ns, &pm->remaining);
	}
	rcu_read_unlock();
}

/*
 * The task this CPU follows (NULL: none), and what the switch hook's gate
 * knows of it.  On the CPU itself, IRQs off; in a prof_seq write section
 * when readers may look.
 */
static void soft_follow(struct soft_cpu *sc, struct task_struct *task)
{
	WRITE_ONCE(sc->prof_task, task);
	hwpmc_switch_here_set(smp_processor_id(), HWPMC_HERE_TASK, !!task);
}

/* The CLOCK.PROF timer runs here (or not), for the gate too.  IRQs off. */
static void soft_prof_set_on(struct soft_cpu *sc, unsigned int cpu, bool on)
{
	sc->prof_on = on;
	hwpmc_switch_here_set(cpu, HWPMC_HERE_TIMER, on);
}

/*
 * Credit the CPU time @task (current) had since the last fold.  IRQs off,
 * on this CPU, inside prof_seq's write section.  Counts move only by the
 * scheduler's runtime as it stands (@runtime: at a switch, and at start,
 * stop and exit, extended to now, after which nothing more is counted
 * from this stint), so that no estimate ever enters a count; the
 * samplers' periods move by @sruntime, which the timer extends to now
 * (prof_sbase), so that a sample falls when its period of CPU time ends.
 * @regs: the interrupted registers when called from the sampling timer,
 * the only place samples are taken; elsewhere (switch, exit) a period
 * that ends stays due until the timer next finds a target running.
 */
static void soft_prof_fold_at(struct soft_cpu *sc, struct task_struct *task,
			      u64 runtime, u64 sruntime, struct pt_regs *regs)
{
	u64 n = 0, ns = 0;

	if (sc->prof_task == task && !is_idle_task(task)) {
		if (runtime > sc->prof_base)
			n = runtime - sc->prof_base;
		if (sruntime > sc->prof_sbase)
			ns = sruntime - sc->prof_sbase;
		if (n || ns)
			soft_credit_split(task, PMC_SOFT_CLOCK_PROF, n, ns,
					  regs, !!regs);
		/*
		 * The timer's extension ran ahead of what the scheduler
		 * finally charged (its clock update was skipped at a
		 * yield or a wakeup preemption): the samplers give the
		 * excess back, so that their periods add up to the
		 * scheduler's time.
		 */
		if (sruntime < sc->prof_sbase && !regs)
			soft_prof_refund(task, sc->prof_sbase - sruntime);
	}
	if (sc->prof_task != task || runtime > sc->prof_base)
		sc->prof_base = runtime;
	if (sc->prof_task != task || sruntime > sc->prof_sbase)
		sc->prof_sbase = sruntime;
	soft_follow(sc, task);
}

/*
 * The same, up to now (start, stop, exit: @count; the timer: the
 * samplers only).  @task is current.  IRQs off.
 */
static void soft_prof_fold(struct soft_cpu *sc, struct task_struct *task,
			   bool count, struct pt_regs *regs)
{
	u64 now, counted;

	raw_write_seqcount_begin(&sc->prof_seq);
	now = soft_runtime(task, true, smp_processor_id());
	if (count)
		counted = now;
	else if (sc->prof_task == task)
		counted = sc->prof_base;
	else
		counted = READ_ONCE(task->se.sum_exec_runtime);
	soft_prof_fold_at(sc, task, counted, now, regs);
	raw_write_seqcount_end(&sc->prof_seq);
}

/*
 * The least of @ns and @pm's CPU time to its next sample on this CPU, if
 * sooner; a per-CPU sampler's pool is taken into this CPU's period here.
 * @spaced: the timer just sampled.  IRQs off, on this CPU (switch, timer,
 * IPI).
 */
static u64 soft_prof_sooner(u64 ns, struct hwpmc_pmc *pm, bool spaced)
{
	s64 left;
	u64 due;

	/* Per CPU: this CPU's, with what other CPUs handed over. */
	if (soft_prof_per_cpu(pm)) {
		soft_prof_pull(pm);
		left = *soft_prof_left(pm);
	} else {
		left = atomic64_read(&pm->remaining);
	}
	/*
	 * Periods already due (they ended in the scheduler or on another
	 * CPU) are taken SOFT_PROF_DUE_NS (or a period, if shorter) of CPU
	 * time from now, where the target runs, not at the first point
	 * after its switch-in where interrupts are on.  After a sample
	 * that fired late (interrupts were off, or the virtual CPU did not
	 * run), little is left of the next period: that one is taken half
	 * a period from now at the soonest, with the following one if it
	 * ended too, and not as soon as interrupts are on again on the way
	 * out of this one (the period ended in the last sample's own
	 * handling; its CPU time is credited to the context interrupted
	 * next).
	 */
	if (left <= 0)
		due = min_t(u64, pm->reload, SOFT_PROF_DUE_NS);
	else if (spaced)
		due = max_t(u64, left,
			    max_t(u64, SOFT_PROF_MIN_NS, pm->reload / 2));
	else
		due = max_t(u64, left, SOFT_PROF_MIN_NS);

	return !ns || due < ns ? due : ns;
}

/*
 * When this CPU's CLOCK.PROF timer must fire for @task (current or being
 * switched in): after the least CPU time any sampler counting @task here
 * (its process's, this CPU's system-scope ones) has left to its next
 * sample on this CPU (each counts its periods per CPU), at least
 * SOFT_PROF_MIN_NS (@spaced: the timer, after its sample, see
 * soft_prof_sooner()).  0: no timer, no sampler counts @task here.  RCU
 * read side, no lock; IRQs off, on this CPU.
 */
static u64 soft_prof_next(struct soft_cpu *sc, struct task_struct *task,
			  bool spaced)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;
	unsigned int i;
	u64 ns = 0;

	if (is_idle_task(task))
		return 0;
	rcu_read_lock();
	pp = atomic_read(&soft_prof_nts) && !(task->flags & PF_KTHREAD) ?
	     hwpmc_proc_find(task->signal) : NULL;
	if (pp)
		list_for_each_entry_rcu(pt, &pp->targets, pp_node)
			if (soft_is(pt->pm, PMC_SOFT_CLOCK_PROF) &&
			    hwpmc_is_sampling(pt->pm))
				ns = soft_prof_sooner(ns, pt->pm, spaced);
	for (i = 0; READ_ONCE(sc->sys_prof) && i < SOFT_NROWS; i++) {
		struct hwpmc_pmc *pm = rcu_dereference(sc->sys[i]);

		if (pm && soft_is(pm, PMC_SOFT_CLOCK_PROF) &&
		    hwpmc_is_sampling(pm))
			ns = soft_prof_sooner(ns, pm, spaced);
	}
	rcu_read_unlock();
	return ns;
}

/*
 * Run this CPU's CLOCK.PROF timer as @task (current, or being switched
 * in) needs it, or stop it: the timer runs only while a sampled target
 * runs here.  IRQs off, on the CPU itself: the timer's callback (hard
 * interrupt, pinned) cannot run meanwhile.
 */
static void soft_prof_arm(struct soft_cpu *sc, struct task_struct *task)
{
	u64 ns = soft_prof_next(sc, task, false);

	if (!ns) {
		if (sc->prof_on)
			hrtimer_try_to_cancel(&sc->prof);
		soft_prof_set_on(sc, smp_processor_id(), false);
		return;
	}
	soft_prof_set_on(sc, smp_processor_id(), true);
	hrtimer_start(&sc->prof, ns_to_ktime(ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Does this CPU follow @next's CPU time from its switch-in (switch hook)?
 * Every task, while a system-scope CLOCK.PROF PMC counts here; else a
 * task of a process that is a target of a process-scope one, in any
 * state: a PMC that starts, or one attached while running, folds every
 * CPU's current task (soft_sync()), so a stint that began before
 * is counted from there.  Everyone else's switches leave the CPU's
 * state alone.  IRQs off: the RCU read side of the hash and the lists.
 */
static bool soft_prof_follows(struct soft_cpu *sc, struct task_struct *next)
{
	struct hwpmc_process *pp;
	struct hwpmc_target *pt;

	if (READ_ONCE(sc->sys_events) & BIT(PMC_SOFT_CLOCK_PROF))
		return true;
	if (!atomic_read(&soft_nproc[PMC_SOFT_CLOCK_PROF]) ||
	    is_idle_task(next))
		return false;
	pp = hwpmc_proc_find(next->signal);
	if (!pp)
		return false;
	list_for_each_entry_rcu(pt, &pp->targets, pp_node)
		if (pt->pm->cls->ops == &hwpmc_soft_ops &&
		    pt->pm->event == PMC_SOFT_CLOCK_PROF)
			return true;
	return false;
}

/*
 * The switch hook's work beyond its first look (hwpmc_soft_switch()).
 * IRQs off, runqueue locked.
 */
static noinline void soft_switch_slow(struct soft_cpu *sc,
				      struct task_struct *prev,
				      struct task_struct *next)
{
	bool follow;

	if (!atomic_read(&soft_npmcs)) {
		/*
		 * Not followed from here on: forget the task, which may exit
		 * and whose memory a new task may take, which would then
		 * find a stranger's base (and readers a freed task).  So
		 * prof_task is always this CPU's current task or NULL.
		 */
		if (READ_ONCE(sc->prof_task)) {
			raw_write_seqcount_begin(&sc->prof_seq);
			soft_follow(sc, NULL);
			raw_write_seqcount_end(&sc->prof_seq);
		}
		return;
	}
	follow = soft_prof_follows(sc, next);
	if (sc->prof_task || follow) {
		/*
		 * prof_task is prev or NULL.  The scheduler updated prev's
		 * runtime in __schedule() just before this hook
		 * (put_prev_task(), or the dequeue of a task that blocks),
		 * and next's has not moved since its last switch-out: no
		 * time falls between two tasks.
		 */
		u64 rt = READ_ONCE(prev->se.sum_exec_runtime);

		raw_write_seqcount_begin(&sc->prof_seq);
		if (sc->prof_task)
			soft_prof_fold_at(sc, prev, rt, rt, NULL);
		soft_follow(sc, follow ? next : NULL);
		if (follow) {
			sc->prof_base = READ_ONCE(next->se.sum_exec_runtime);
			sc->prof_sbase = sc->prof_base;
		}
		raw_write_seqcount_end(&sc->prof_seq);
	}
	/* prev is current: its user state can be sampled. */
	if (atomic_read(&soft_nproc[PMC_SOFT_SCHED_SWITCH]) ||
	    (READ_ONCE(sc->sys_events) & BIT(PMC_SOFT_SCHED_SWITCH)))
		soft_credit(prev, PMC_SOFT_SCHED_SWITCH, 1, NULL, true);
	/* The timer runs only while a sampled target runs. */
	if (sc->prof_on || atomic_read(&soft_prof_nts) ||
	    READ_ONCE(sc->sys_prof))
		soft_prof_arm(sc, next);
}

/*
 * sched_switch (IRQs off, runqueue locked; class op switch_task):
 * CLOCK.PROF, SCHED.SWITCH.  The core's gate (hwpmc_switch_wanted()),
 * which this class keeps informed (soft_follow(), soft_prof_set_on(),
 * soft_gate() and the system-scope events), drops most switches of tasks
 * nobody monitors before the call; another class's PMC may let them
 * through.  Here a switch between tasks nobody monitors costs
 * one look at this CPU's state and at most one lookup per task in the
 * process hash (inline: an empty bucket or a short chain): @prev's while
 * a process-scope SCHED.SWITCH PMC exists (it would count @prev's
 * switch), @next's while a process-scope CLOCK.PROF one does (it would
 * follow @next's CPU time; every CLOCK.PROF sampler is one of them), and
 * nothing else: no call, clock read, seqcount write, slot scan or list
 * walk.  The look is enough: with no task followed here (prof_task), no
 * CLOCK.PROF timer running here, no system-scope PMC here that counts
 * switches or CPU time (sys_events; a system-scope sampler, sys_prof, is
 * one of them) and neither lookup finding a monitored process, the rest
 * (soft_switch_slow()) would do nothing.  Otherwise the hash is
 * searched only while a process-scope PMC of the event exists, a CPU's
 * slots only while it has a system-scope one, no clock is read
 * (CLOCK.PROF credits the scheduler's own runtime), and the CPU's
 * CLOCK.PROF state is written only when it follows @prev or @next.
 */
#define SOFT_SWITCH_SYS_EVENTS	(BIT(PMC_SOFT_SCHED_SWITCH) | \
				 BIT(PMC_SOFT_CLOCK_PROF))

static void hwpmc_soft_switch(struct task_struct *prev, struct task_struct *next)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	if (likely(!READ_ONCE(sc->prof_task) && !sc->prof_on) &&
	    (!atomic_read(&soft_npmcs) ||
	     (!(READ_ONCE(sc->sys_events) & SOFT_SWITCH_SYS_EVENTS) &&
	      !(atomic_read(&soft_nproc[PMC_SOFT_SCHED_SWITCH]) &&
		hwpmc_proc_find(prev->signal)) &&
	      !(atomic_read(&soft_nproc[PMC_SOFT_CLOCK_PROF]) &&
		hwpmc_proc_find(next->signal)))))
		return;
	soft_switch_slow(sc, prev, next);
}

/*
 * Page faults, syscalls, migrations: one event of @task, counted by the
 * system-scope PMCs of the CPU that saw it.
 */
static void hwpmc_soft_event(struct task_struct *task, u32 event,
			     struct pt_regs *regs)
{
	if (atomic_read(&soft_npmcs))
		soft_credit(task, event, 1, regs, true);
}

/* The hooks' events (class op hook_event): never NMI, no locks. */
static void soft_hook_event(enum hwpmc_kevent ev, struct task_struct *task,
			    struct pt_regs *regs)
{
	switch (ev) {
	case HWPMC_KEV_SYSCALL:
		hwpmc_soft_event(task, PMC_SOFT_SYSCALL_ENTER, regs);
		break;
	case HWPMC_KEV_FAULT_READ:
	case HWPMC_KEV_FAULT_WRITE:
		hwpmc_soft_event(task, PMC_SOFT_PAGE_FAULT_ALL, regs);
		hwpmc_soft_event(task, ev == HWPMC_KEV_FAULT_WRITE ?
				 PMC_SOFT_PAGE_FAULT_WRITE :
				 PMC_SOFT_PAGE_FAULT_READ, regs);
		break;
	case HWPMC_KEV_MIGRATE:
		hwpmc_soft_event(task, PMC_SOFT_SCHED_MIGRATE, regs);
		break;
	}
}

/*
 * Thread exit hook (class op task_exit): the CPU time of a thread that
 * exits, up to now.  A read looks for the in-flight time of a process's
 * threads among those it still lists, which an exiting thread leaves
 * (exit_notify()) well before its last switch-out; so what it ran is
 * credited here, and only its last steps wait for that switch.
 */
static void hwpmc_soft_exit(struct task_struct *task)
{
	struct soft_cpu *sc;
	unsigned long flags;

	if (!atomic_read(&soft_npmcs))
		return;
	local_irq_save(flags);
	sc = this_cpu_ptr(&soft_cpu);
	/*
	 * Only a task this CPU follows has CPU time to credit (every target
	 * is followed from its switch-in, or from the fold of a PMC's start
	 * or attach); anyone else's exit leaves the CPU's state alone.
	 */
	if (sc->prof_task == task)
		soft_prof_fold(sc, task, true, NULL);
	local_irq_restore(flags);
}

/*
 * IPI: bring CLOCK.PROF up to date on this CPU and follow its task from
 * now.  @arm (non-NULL: a sampler's sync): the sampling timer fires by
 * the time that task's samplers need, if sooner than it would; it is
 * never put off, so that no owner's syncs, however many, delay another
 * owner's samples.  IRQs off, on this CPU: takes no lock but the timer's.
 */
static void soft_prof_sync_ipi(void *arm)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	u64 ns;

	soft_prof_fold(sc, current, true, NULL);
	if (!arm)
		return;
	if (!sc->prof_on) {
		soft_prof_arm(sc, current);
		return;
	}
	ns = soft_prof_next(sc, current, false);
	if (ns && ktime_before(ns_to_ktime(ns),
			       hrtimer_get_remaining(&sc->prof)))
		hrtimer_start(&sc->prof, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * The CPU time @cpu has not credited yet to the task running there, if
 * @want says @pm counts that task (@t: the task, or NULL for any).  No
 * IPI, no lock: the CPU's prof_seq gives a consistent (task, base), and
 * the task's runtime is the scheduler's, read as soft_runtime() reads
 * it.  The task cannot be freed meanwhile: it was current at the
 * snapshot, and its last reference goes after a grace period that this
 * RCU read side holds off.  Process context, RCU held.
 */
/*
 * The CPU time @t, running on @cpu, has used since @base was credited
 * (0 if the scheduler's runtime is not past it).  Any context but NMI.
 */
static u64 soft_prof_since(struct task_struct *t, int cpu, u64 base)
{
	u64 rt = soft_runtime(t, true, cpu);

	return rt > base ? rt - base : 0;
}

static u64 soft_prof_inflight_on(struct hwpmc_pmc *pm, unsigned int cpu,
				 struct task_struct *want)
{
	struct soft_cpu *sc = per_cpu_ptr(&soft_cpu, cpu);
	struct task_struct *t;
	unsigned int seq;
	u64 base, in;

	do {
		in = 0;
		seq = read_seqcount_begin(&sc->prof_seq);
		t = READ_ONCE(sc->prof_task);
		base = READ_ONCE(sc->prof_base);
		if (t && !is_idle_task(t) &&
		    (want ? t == want :
		     hwpmc_is_system(pm) || hwpmc_target_find(t, pm)))
			in = soft_prof_since(t, cpu, base);
	} while (read_seqcount_retry(&sc->prof_seq, seq));
	return in;
}

/*
 * The in-flight time of a process-scope @pm, from its targets: each
 * thread is looked for on the one CPU it was last on (a thread that
 * moves meanwhile was switched out there, which changed the credited
 * value: the caller reads again).  So a read does not grow with the
 * machine and waits for no CPU.  Past as many threads as CPUs online,
 * looking at every CPU is cheaper: -EAGAIN, and the caller does that.
 * RCU held.
 */
static int soft_prof_inflight_targets(struct hwpmc_pmc *pm, u64 *in)
{
	unsigned int budget = num_online_cpus();
	struct hwpmc_target *pt;
	struct task_struct *p, *t;

	*in = 0;
	list_for_each_entry_rcu(pt, &pm->targets, pm_node) {
		if (!READ_ONCE(pt->clock_on))	/* not counting (yet) */
			continue;
		p = pid_task(pt->pp->pid, PIDTYPE_TGID);
		if (!p)
			continue;
		for_each_thread(p, t) {
			if (!budget--)
				return -EAGAIN;
			*in += soft_prof_inflight_on(pm, task_cpu(t), t);
		}
	}
	return 0;
}

/* The in-flight time of @pm's targets on every CPU.  RCU held. */
static u64 soft_prof_inflight(struct hwpmc_pmc *pm)
{
	unsigned int cpu;
	u64 in;

	if (hwpmc_is_system(pm))
		return soft_prof_inflight_on(pm, pm->cpu, NULL);
	if (!soft_prof_inflight_targets(pm, &in))
		return in;
	in = 0;
	for_each_online_cpu(cpu)
		in += soft_prof_inflight_on(pm, cpu, NULL);
	return in;
}

/*
 * What the switch, exit and fold paths credited to a running CLOCK.PROF
 * @pm: its value, and for a process-scope one each target's process clock
 * since the target's base (hwpmc_target_pending()), read as one with the
 * value and the state (clock_seq), so that a stop or an unlink banking
 * meanwhile is never counted twice; and in *@running, whether @pm was
 * still running then: a stop that raced with the read (a log's removal
 * stops PMCs without their owner's lock) leaves the stints in flight
 * uncounted, so the read must not add them either.  One try: false if a
 * write overlapped it.  RCU held.
 */
static bool soft_prof_credited_try(struct hwpmc_pmc *pm, bool *running,
				   u64 *v)
{
	struct hwpmc_target *pt;
	unsigned int seq;
	u64 sum;

	seq = read_seqcount_begin(&pm->clock_seq);
	*running = hwpmc_running(pm);
	sum = atomic64_read(&pm->value);
	list_for_each_entry_rcu(pt, &pm->targets, pm_node)
		sum += hwpmc_target_pending(pt);
	*v = sum;
	return !read_seqcount_retry(&pm->clock_seq, seq);
}

/* As above, with interrupts off (its caller's one target). */
static u64 soft_prof_credited(struct hwpmc_pmc *pm, bool *running)
{
	u64 v;

	while (!soft_prof_credited_try(pm, running, &v))
		;
	return v;
}

/*
 * As above for any number of targets, which a start, a stop and unlinks
 * change a batch at a time, each a write that sends the walk round again:
 * between tries, out of RCU, a reschedule, so that a PMC with many
 * targets that change often costs its reader time, not an RCU stall (and
 * a reader being killed takes the last try's sum, low if anything).
 * Process context, not in RCU.
 */
static u64 soft_prof_credited_sleep(struct hwpmc_pmc *pm, bool *running)
{
	bool ok;
	u64 v;

	for (;;) {
		rcu_read_lock();
		ok = soft_prof_credited_try(pm, running, &v);
		rcu_read_unlock();
		/* A spoiled try reads low (banks move after the value's load). */
		if (ok || fatal_signal_pending(current))
			return v;
		cond_resched();
	}
}

/*
 * A stopped by_clock @pm's value: its value, or while a stop's walk is
 * still banking (a log's removal stops PMCs without their owner's lock),
 * with the pending shares of the targets it has not reached.
 */
static u64 soft_prof_stopped(struct hwpmc_pmc *pm)
{
	unsigned int seq;
	bool stopping;
	u64 v;

	do {
		seq = read_seqcount_begin(&pm->clock_seq);
		stopping = READ_ONCE(pm->clock_stopping);
		v = atomic64_read(&pm->value);
	} while (read_seqcount_retry(&pm->clock_seq, seq));
	return stopping ? soft_prof_credited_sleep(pm, &stopping) : v;
}

/*
 * A running CLOCK.PROF PMC's value: what the switch, tick and timer paths
 * credited, plus the in-flight time of the targets running now, from
 * each CPU's own state (no IPI, no lock: a CPU that does not answer
 * delays no reader; a reader that is its PMC's only target thread reads
 * its own CPU alone, soft_prof_read_self()).  The credited value is
 * read before and after: if some CPU credited @pm in between (a target
 * switched out), the in-flight time may be in both, and the read is done
 * again.  After
 * SOFT_READ_TRIES such tries the credited value alone is returned (at
 * most the time since each running target's switch-in short).
 */
#define SOFT_READ_TRIES		16

static noinline u64 soft_prof_read(struct hwpmc_pmc *pm)
{
	unsigned int tries = 0;
	u64 before, after, in;
	bool running;

	do {
		before = soft_prof_credited_sleep(pm, &running);
		/* The value before the CPUs' state, and after it, below. */
		smp_rmb();
		rcu_read_lock();
		in = soft_prof_inflight(pm);
		rcu_read_unlock();
		/* Pairs with the first: after every CPU's state. */
		smp_rmb();
		after = soft_prof_credited_sleep(pm, &running);
	} while (before != after && ++tries < SOFT_READ_TRIES);
	return before == after && running ? after + in : after;
}

/*
 * The value of a running process-scope @pm whose one target is the
 * caller's own process, the caller being its only thread (a program that
 * reads its own PMC, pmc(3)'s usual way), into @v: that thread is the one
 * running here, so this CPU's state is read with interrupts off, which
 * keeps out everything that credits the thread or moves that state (the
 * switch hook, the timer, IPIs: all on this CPU, IRQs off) and is the RCU
 * read side of the lists.  No other CPU, process lookup, seqcount or
 * retry: the in-flight time is the caller's own, which nothing can
 * credit meanwhile.  The same value soft_prof_read() would give.  False,
 * @v untouched: not such a PMC.  Process context.
 */
static bool soft_prof_read_self(struct hwpmc_pmc *pm, u64 *v)
{
	struct task_struct *me = current;
	struct hwpmc_target *pt;
	struct soft_cpu *sc;
	unsigned long flags;
	u64 in = 0, v0;
	bool self, running;

	local_irq_save(flags);
	pt = list_first_or_null_rcu(&pm->targets, struct hwpmc_target,
				    pm_node);
	self = pt && READ_ONCE(pt->pm_node.next) == &pm->targets &&
	       pt->pp->sig == me->signal &&
	       READ_ONCE(me->signal->nr_threads) == 1;
	if (self) {
		sc = this_cpu_ptr(&soft_cpu);
		if (sc->prof_task == me)
			in = soft_prof_since(me, smp_processor_id(),
					     sc->prof_base);
		v0 = soft_prof_credited(pm, &running);
		*v = running ? v0 + in : v0;
	}
	local_irq_restore(flags);
	return self;
}

/*
 * CLOCK.HARD: a pinned per-CPU timer at the scheduler tick rate (hard
 * interrupt).  Like statclock(), a late expiry charges every tick period
 * that has elapsed to the task it interrupts, which is the one that ran
 * meanwhile: the CPU could not take the interrupt (interrupts off, or a
 * virtual CPU not scheduled on its host: 10-20 periods under a loaded
 * emulator, most on PREEMPT_RT, whose ticks wake more threads), and the
 * scheduler charged that time to the same task.
 */
static enum hrtimer_restart soft_tick_fn(struct hrtimer *t)
{
	u64 n = hrtimer_forward_now(t, ns_to_ktime(TICK_NSEC));

	soft_credit(current, PMC_SOFT_CLOCK_HARD, n ? n : 1, get_irq_regs(),
		    true);
	return HRTIMER_RESTART;
}

/*
 * IPI (and the timer): no SOFT PMC is left, this CPU's CLOCK.PROF task is
 * forgotten.  IRQs off, on the CPU itself.
 */
static void soft_prof_forget_ipi(void *unused)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	if (!sc->prof_task || atomic_read(&soft_npmcs))
		return;
	raw_write_seqcount_begin(&sc->prof_seq);
	soft_follow(sc, NULL);
	raw_write_seqcount_end(&sc->prof_seq);
}

/*
 * CLOCK.PROF sampling: this CPU's pinned timer, armed while a sampled
 * target runs here to fire when the first of its samplers' periods ends
 * (hard interrupt).  It credits the CPU time up to now, so the samples
 * due are taken with the registers of the context that was running: the
 * target's (its user PC when it ran in user mode).  It stops itself when
 * no sampler needs it any more.
 */
static enum hrtimer_restart soft_prof_fn(struct hrtimer *t)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	u64 ns;

	/*
	 * Armed on a CPU that went offline after its offline callback (a
	 * target switched in there meanwhile) and moved here when it died:
	 * this CPU's state is not its own.  That CPU re-arms as it needs
	 * when it comes back (soft_cpu_online()).
	 */
	if (container_of(t, struct soft_cpu, prof) != sc)
		return HRTIMER_NORESTART;
	/* Left over from the last SOFT PMC: nothing to follow any more. */
	if (!atomic_read(&soft_npmcs)) {
		soft_prof_forget_ipi(NULL);
		soft_prof_set_on(sc, smp_processor_id(), false);
		return HRTIMER_NORESTART;
	}
	soft_prof_fold(sc, current, false, get_irq_regs());
	ns = soft_prof_next(sc, current, true);
	if (!ns) {
		soft_prof_set_on(sc, smp_processor_id(), false);
		return HRTIMER_NORESTART;
	}
	/*
	 * @ns from now, when the fold above read the CPU time: not from
	 * the last expiry (hrtimer_forward_now()), which this callback ran
	 * late after, so the next expiry would come that much before the
	 * period's end and find no sample due, costing a second interrupt
	 * SOFT_PROF_MIN_NS later for every sample.
	 */
	hrtimer_set_expires(t, ktime_add_ns(hrtimer_cb_get_time(t), ns));
	return HRTIMER_RESTART;
}

/* IPI: the samplers changed; run the timer as this CPU now needs. */
static void soft_prof_rearm_ipi(void *unused)
{
	soft_prof_arm(this_cpu_ptr(&soft_cpu), current);
}

/*
 * CPU offline (on the CPU itself, from the hotplug thread): stop its
 * CLOCK.PROF timer.  With IRQs off, as every other writer of prof_on: a
 * switch cannot re-arm the timer between the cancel and the flag, and
 * the timer's callback (pinned, hard interrupt) cannot be running.
 */
static void soft_prof_stop_cpu(unsigned int cpu)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	unsigned long flags;

	local_irq_save(flags);
	if (sc->prof_on) {
		hrtimer_try_to_cancel(&sc->prof);
		soft_prof_set_on(sc, cpu, false);
	}
	local_irq_restore(flags);
}

/*
 * A CLOCK.PROF sampling PMC starts (@pm) or stops (@pm NULL: @old).  A
 * system-scope one changes the timer of its CPU only (and is published
 * RUNNING here).  A process-scope one that starts is published RUNNING
 * by soft_start() right after (hwpmc_targets_start()); every CPU looks
 * once whether it runs a target now in the sync after the start
 * (soft_sync(), outside hwpmc_sx; later ones arm at switch-in).  One that
 * stops leaves the timers, which stop at their next expiry if no longer
 * needed.
 */
static void soft_prof_samplers_update(struct hwpmc_pmc *pm,
				      struct hwpmc_pmc *old)
{
	struct hwpmc_pmc *p, *ch = pm ? pm : old;
	bool sys = false;

	lockdep_assert_held(&hwpmc_sx);
	if (pm)
		list_add(&pm->cls_node, &soft_prof_samplers);
	if (old)
		list_del_init(&old->cls_node);
	cpus_read_lock();
	if (hwpmc_is_system(ch)) {
		list_for_each_entry(p, &soft_prof_samplers, cls_node)
			sys |= hwpmc_is_system(p) && p->cpu == ch->cpu;
		if (pm)
			WRITE_ONCE(pm->state, PMC_STATE_RUNNING);
		WRITE_ONCE(per_cpu(soft_cpu, ch->cpu).sys_prof, sys);
		if (cpu_online(ch->cpu))
			smp_call_function_single(ch->cpu, soft_prof_rearm_ipi,
						 NULL, 1);
	} else if (pm) {
		/*
		 * Counted before it runs (soft_credit_split() walks the
		 * lists only while this is non-zero); soft_start() publishes
		 * it RUNNING after this (by_clock: hwpmc_targets_start()).
		 */
		atomic_inc(&soft_prof_nts);
	} else {
		atomic_dec(&soft_prof_nts);
	}
	cpus_read_unlock();
}

static void soft_tick_start_ipi(void *unused)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	if (sc->tick_on)
		return;
	sc->tick_on = true;
	hrtimer_start(&sc->tick, ns_to_ktime(TICK_NSEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void soft_tick_stop_cpu(unsigned int cpu)
{
	struct soft_cpu *sc = per_cpu_ptr(&soft_cpu, cpu);

	if (!sc->tick_on)
		return;
	hrtimer_cancel(&sc->tick);
	sc->tick_on = false;
}

static void soft_ticks_update(int delta)
{
	unsigned int cpu;

	lockdep_assert_held(&hwpmc_sx);
	cpus_read_lock();
	soft_nhard += delta;
	if (delta > 0 && soft_nhard == 1)
		on_each_cpu(soft_tick_start_ipi, NULL, 1);
	if (delta < 0 && soft_nhard == 0)
		for_each_online_cpu(cpu)
			soft_tick_stop_cpu(cpu);
	cpus_read_unlock();
}

/*
 * The switch hook's gate for a process-scope PMC of @event: SCHED.SWITCH
 * counts the outgoing task's switch, CLOCK.PROF follows the incoming
 * task's CPU time (hwpmc_soft_switch()).  Raised before the PMC is
 * counted in soft_nproc, dropped after.
 */
static void soft_gate(u32 event, bool get)
{
	enum hwpmc_gate g;

	if (event == PMC_SOFT_SCHED_SWITCH)
		g = HWPMC_GATE_PREV;
	else if (event == PMC_SOFT_CLOCK_PROF)
		g = HWPMC_GATE_NEXT;
	else
		return;
	if (get)
		hwpmc_switch_gate_get(g);
	else
		hwpmc_switch_gate_put(g);
}

/* The events @cpu's system-scope PMCs count, for the hooks (hwpmc_sx). */
static void soft_sys_events_update(unsigned int cpu)
{
	struct soft_cpu *sc = per_cpu_ptr(&soft_cpu, cpu);
	unsigned int i;
	u32 events = 0;

	lockdep_assert_held(&hwpmc_sx);
	for (i = 0; i < SOFT_NROWS; i++) {
		struct hwpmc_pmc *pm = rcu_dereference_protected(sc->sys[i],
					lockdep_is_held(&hwpmc_sx));

		if (pm)
			events |= BIT(pm->event);
	}
	WRITE_ONCE(sc->sys_events, events);
	hwpmc_switch_here_set(cpu, HWPMC_HERE_SYS,
			      events & SOFT_SWITCH_SYS_EVENTS);
}

static u32 soft_hooks_needed(const struct pmc_op_pmcallocate *a)
{
	if (a->pm_event >= PMC_SOFT_NEVENTS ||
	    soft_event_hook[a->pm_event] < 0)
		return 0;
	return BIT(soft_event_hook[a->pm_event]);
}

static int soft_allocate(struct hwpmc_pmc *pm,
			 const struct pmc_op_pmcallocate *a)
{
	int err;

	if (pm->event >= PMC_SOFT_NEVENTS || a->pm_config || a->pm_config1)
		return -EINVAL;
	/* One add per switch-out for all of a process's CLOCK.PROF PMCs. */
	pm->by_clock = pm->event == PMC_SOFT_CLOCK_PROF && !hwpmc_is_system(pm);
	/* Freed with pm by the core (after RCU), also if this fails. */
	if (pm->event == PMC_SOFT_CLOCK_PROF && hwpmc_is_sampling(pm) &&
	    !hwpmc_is_system(pm)) {
		pm->cls_pcpu = alloc_percpu_gfp(s64, GFP_KERNEL_ACCOUNT);
		if (!pm->cls_pcpu)
			return -ENOMEM;
	}
	if (soft_event_hook[pm->event] >= 0) {
		err = hwpmc_hook_get(soft_event_hook[pm->event]);
		if (err)
			return err;
	}
	if (hwpmc_is_system(pm)) {
		rcu_assign_pointer(per_cpu(soft_cpu, pm->cpu).sys[pm->row -
					pm->cls->firstrow], pm);
		soft_sys_events_update(pm->cpu);
	} else {
		soft_gate(pm->event, true);
		atomic_inc(&soft_nproc[pm->event]);
	}
	atomic_inc(&soft_npmcs);
	return 0;
}

static void soft_release(struct hwpmc_pmc *pm)
{
	if (hwpmc_is_system(pm)) {
		RCU_INIT_POINTER(per_cpu(soft_cpu, pm->cpu).sys[pm->row -
					pm->cls->firstrow], NULL);
		soft_sys_events_update(pm->cpu);
	} else {
		atomic_dec(&soft_nproc[pm->event]);
		soft_gate(pm->event, false);
	}
	if (soft_event_hook[pm->event] >= 0)
		hwpmc_hook_put(soft_event_hook[pm->event]);
	/*
	 * The last SOFT PMC: every CPU forgets its task now, not at its next
	 * switch, which the switch hook, detached once no PMC is left, may
	 * not see (prof_task is current or NULL, also while nobody looks).
	 */
	if (atomic_dec_and_test(&soft_npmcs))
		on_each_cpu(soft_prof_forget_ipi, NULL, 1);
}

/*
 * Start and stop under hwpmc_sx: no wait for other CPUs here.  CLOCK.PROF's
 * folds of every CPU run in soft_sync(), which the core calls outside the
 * global lock before PMCSTART and PMCSTOP publish the state: a PMC counts
 * from its start and up to its stop, give or take the moment between the
 * fold and the publication.  A stop for another reason (release, close,
 * the log gone) leaves a running target's current stint uncounted.
 * CLOCK.HARD runs the tick timers.
 */
static void soft_start(struct hwpmc_pmc *pm)
{
	unsigned int cpu;

	/* Not running: no CPU credits it (its start's sync waited for all). */
	if (soft_prof_per_cpu(pm)) {
		s64 __percpu *left = pm->cls_pcpu;

		for_each_possible_cpu(cpu)
			WRITE_ONCE(*per_cpu_ptr(left, cpu), pm->reload);
		atomic64_set(&pm->remaining, 0);	/* an empty pool */
	} else {
		atomic64_set(&pm->remaining, pm->reload);
	}
	if (pm->event == PMC_SOFT_CLOCK_PROF && hwpmc_is_sampling(pm))
		soft_prof_samplers_update(pm, NULL);
	/* Counts its targets' CPU time from here: published RUNNING. */
	if (pm->by_clock)
		hwpmc_targets_start(pm);
	if (pm->event == PMC_SOFT_CLOCK_HARD)
		soft_ticks_update(1);
}

static void soft_stop(struct hwpmc_pmc *pm)
{
	/*
	 * Published STOPPED, its value holds the count from here; before a
	 * sampler leaves soft_prof_nts (soft_credit_split()).
	 */
	if (pm->by_clock)
		hwpmc_targets_stop(pm);
	if (pm->event == PMC_SOFT_CLOCK_PROF && hwpmc_is_sampling(pm))
		soft_prof_samplers_update(NULL, pm);
	if (pm->event == PMC_SOFT_CLOCK_HARD)
		soft_ticks_update(-1);
}

/*
 * Class op sync: every CPU (a system-scope PMC's own) folds its current
 * task and follows it from now (the switch hook follows a task from its
 * switch-in only, so a target already running, or just attached, is
 * followed from here); for a sampler, its timer fires as that task needs.
 * Owner's lock only.  The first sync of a start also orders it after any
 * credit still in flight from before the last stop: each CPU credits with
 * interrupts off, and answers the IPI only after.
 */
static void soft_sync(struct hwpmc_pmc *pm)
{
	void *arm = hwpmc_is_sampling(pm) ? pm : NULL;

	if (pm->event != PMC_SOFT_CLOCK_PROF)
		return;
	/* No IPI lands on a CPU past its offline callback. */
	cpus_read_lock();
	if (!hwpmc_is_system(pm))
		on_each_cpu(soft_prof_sync_ipi, arm, 1);
	else if (cpu_online(pm->cpu))	/* it counts there only */
		smp_call_function_single(pm->cpu, soft_prof_sync_ipi, arm, 1);
	cpus_read_unlock();
}

/*
 * PMCRW, with the owner's lock only: never waits for another CPU.  A
 * running CLOCK.PROF read holds an estimate (the in-flight time), which
 * the scheduler may later charge a little short (a clock update skipped
 * at a wakeup preemption charges the rest to the next task), or which a
 * read that gave up on its retries leaves out: no read returns less than
 * one before it, so that a count never goes down.
 */
static noinline u64 soft_prof_read_value(struct hwpmc_pmc *pm)
{
	s64 floor;
	u64 v;

	if (!hwpmc_running(pm) && !pm->by_clock)
		v = atomic64_read(&pm->value);
	else if (!hwpmc_running(pm))
		v = soft_prof_stopped(pm);
	else if (!soft_prof_read_self(pm, &v))	/* system scope: no target */
		v = soft_prof_read(pm);
	floor = atomic64_read(&pm->read_floor);
	do {
		if (v <= (u64)floor)
			return floor;
	} while (!atomic64_try_cmpxchg(&pm->read_floor, &floor, v));
	return v;
}

/* The other events' read, a load, saves no registers (the above does). */
static u64 soft_read(struct hwpmc_pmc *pm)
{
	if (pm->event != PMC_SOFT_CLOCK_PROF)
		return atomic64_read(&pm->value);
	return soft_prof_read_value(pm);
}

static void soft_write(struct hwpmc_pmc *pm, u64 value)
{
	atomic64_set(&pm->value, value);
	atomic64_set(&pm->read_floor, 0);
}

static void soft_cpu_online(unsigned int cpu)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	unsigned long flags;

	local_irq_save(flags);
	raw_write_seqcount_begin(&sc->prof_seq);
	soft_follow(sc, NULL);
	raw_write_seqcount_end(&sc->prof_seq);
	local_irq_restore(flags);
	if (soft_nhard)
		soft_tick_start_ipi(NULL);
	local_irq_save(flags);
	soft_prof_rearm_ipi(NULL);
	local_irq_restore(flags);
}

static void soft_cpu_offline(unsigned int cpu)
{
	soft_tick_stop_cpu(cpu);
	soft_prof_stop_cpu(cpu);
}

static u64 soft_max_period(const struct hwpmc_class *cls)
{
	return SOFT_MAX_PERIOD;
}

/*
 * CLOCK.PROF is a rate: an unprivileged caller may not sample faster than
 * kernel.hwpmc.max_sample_rate (perf refuses a sample_freq above
 * perf_event_max_sample_rate).  Process context (PMCALLOCATE,
 * PMCSETCOUNT).  Other SOFT events come from the sampled task's own
 * activity: any period, throttled like the rest.
 */
static u64 soft_min_period(u32 event)
{
	u32 rate = max_t(u32, READ_ONCE(hwpmc_max_sample_rate), 1);

	if (event != PMC_SOFT_CLOCK_PROF || hwpmc_priv_system())
		return 1;
	return DIV_ROUND_UP(NSEC_PER_SEC, rate);
}

static const char *soft_event_name(u32 code)
{
	return code < PMC_SOFT_NEVENTS ? soft_event_names[code] : NULL;
}

/*
 * Timers are set up once, at load, before any PMC exists.  Both expire in
 * hard interrupt context (_HARD), PREEMPT_RT included, where a timer not
 * so marked runs in a softirq thread: its current and get_irq_regs() would
 * be that thread's, not the interrupted task's.
 */
static unsigned int soft_probe(struct hwpmc_class *cls)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct soft_cpu *sc = per_cpu_ptr(&soft_cpu, cpu);

		seqcount_init(&sc->prof_seq);
		hrtimer_init(&sc->tick, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		sc->tick.function = soft_tick_fn;
		hrtimer_init(&sc->prof, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		sc->prof.function = soft_prof_fn;
	}
	cls->width = 64;
	cls->caps = PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_INTERRUPT |
		    PMC_CAP_USER | PMC_CAP_SYSTEM;
	return SOFT_NROWS;
}

/*
 * Unload: no timer may outlive the module.  CPU offline stops those of
 * the CPUs online at unload (cpuhp_remove_state()), but a CLOCK.PROF
 * timer armed on a CPU after its offline callback moved to another CPU
 * when it died, and would fire there into freed code (it stops itself
 * at its next expiry, which may come after the unload).
 */
static void soft_unprobe(struct hwpmc_class *cls)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct soft_cpu *sc = per_cpu_ptr(&soft_cpu, cpu);

		hrtimer_cancel(&sc->tick);
		hrtimer_cancel(&sc->prof);
	}
}

const struct hwpmc_class_ops hwpmc_soft_ops = {
	.name		= "SOFT",
	.class		= PMC_CLASS_SOFT,
	.modes		= BIT(PMC_MODE_SS) | BIT(PMC_MODE_SC) |
			  BIT(PMC_MODE_TS) | BIT(PMC_MODE_TC),
	.probe		= soft_probe,
	.unprobe	= soft_unprobe,
	.allocate	= soft_allocate,
	.hooks_needed	= soft_hooks_needed,
	.release	= soft_release,
	.start		= soft_start,
	.stop		= soft_stop,
	.sync		= soft_sync,
	.read		= soft_read,
	.write		= soft_write,
	.cpu_online	= soft_cpu_online,
	.cpu_offline	= soft_cpu_offline,
	.event_name	= soft_event_name,
	.max_period	= soft_max_period,
	.min_period	= soft_min_period,
	.switch_task	= hwpmc_soft_switch,
	.task_exit	= hwpmc_soft_exit,
	.hook_event	= soft_hook_event,
};
