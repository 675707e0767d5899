/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: internal declarations shared by the module's files.
 */
#ifndef _HWPMC_H
#define _HWPMC_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/list.h>
#include <linux/idr.h>
#include <linux/rcupdate.h>
#include <linux/rculist.h>
#include <linux/hash.h>
#include <linux/seqlock.h>
#include <linux/string.h>
#include <linux/hwpmc.h>

struct task_struct;
struct signal_struct;
struct pid;
struct hwpmc_pmc;
struct hwpmc_owner;
struct hwpmc_class;
struct linux_binprm;
struct mm_struct;
struct vfsmount;
struct pt_regs;

/* Module parameters (read-only tunables), validated at load. */
extern int hwpmc_callchaindepth;
extern int hwpmc_hashsize;
extern int hwpmc_logbuffersize;
extern int hwpmc_mtxpoolsize;
extern int hwpmc_nbuffers;
extern int hwpmc_nsamples;
extern int hwpmc_max_user_stack;	/* PMC_F_USERSTACK cap, bytes */

/* Sysctls kernel.hwpmc.* (security.bsd.* on FreeBSD). */
extern int hwpmc_unprivileged_syspmcs;
extern int hwpmc_unprivileged_proc_debug;
/* Logs (kernel.hwpmc.*): see hwpmc_log.c. */
extern int hwpmc_max_logs_per_user;
extern int hwpmc_log_writers;
extern int hwpmc_log_buffer_share;
extern int hwpmc_log_buffer_reserve;
/* Per-user limits (kernel.hwpmc.max_*_per_user); CAP_PERFMON is exempt. */
extern int hwpmc_max_owners_per_user;
extern int hwpmc_max_pmcs_per_user;
#define HWPMC_LIMIT_CEILING	BIT(20)
extern int hwpmc_unprivileged_kernel;
extern int hwpmc_unprivileged_hw;	/* hardware PMCs without CAP_PERFMON */
extern int hwpmc_min_hw_period;		/* unprivileged hardware sampling */
extern int hwpmc_max_sample_rate;	/* PMIs per second per CPU */

/*
 * The configuration lock: held across every ioctl that looks at or
 * changes owners, PMCs, rows or targets.  See the lock order in
 * hwpmc_main.c.
 */
extern struct mutex hwpmc_sx;

/*
 * What the per-event hooks (hwpmc_hooks.c) report to the classes that
 * asked for them with hwpmc_hook_get() (class op hook_event).
 */
enum hwpmc_kevent {
	HWPMC_KEV_SYSCALL,		/* sys_enter of current */
	HWPMC_KEV_FAULT_READ,		/* a page fault of current: a read */
	HWPMC_KEV_FAULT_WRITE,		/* ... a write */
	HWPMC_KEV_MIGRATE,		/* sched_migrate_task: @task, no regs */
};

/*
 * A class of counters: one const ops table each.  Rows of all classes are
 * numbered contiguously; a class owns [firstrow, firstrow + nrows).
 */
struct hwpmc_class_ops {
	const char *name;		/* "TSC", "SOFT", ... */
	u32 class;			/* PMC_CLASS_* */
	u32 modes;			/* BIT(PMC_MODE_*) it supports */
	bool shared_row;		/* many system PMCs may share a row */
	/*
	 * Load: the number of rows, 0 when the class is absent; sets
	 * @cls->width (counter bits) and @cls->caps (the PMC_CAP_* it offers
	 * on this machine).
	 */
	unsigned int (*probe)(struct hwpmc_class *cls);
	/*
	 * Optional: unload, after every hook is detached and every PMC is
	 * gone: stop what may still run of the class's own (timers).
	 */
	void (*unprobe)(struct hwpmc_class *cls);
	/* Validate the event of a new PMC (hwpmc_sx held). */
	int (*allocate)(struct hwpmc_pmc *pm,
			const struct pmc_op_pmcallocate *a);
	/*
	 * The hooks (BIT(enum hwpmc_hook)) that allocate() would take for
	 * @a, whatever @a's validity (optional; no lock): its caller holds
	 * them before hwpmc_sx, so that an attach is never waited for
	 * under it.
	 */
	u32 (*hooks_needed)(const struct pmc_op_pmcallocate *a);
	void (*release)(struct hwpmc_pmc *pm);
	/*
	 * State changes (hwpmc_sx held).  The core publishes pm->state after
	 * them; a class whose hooks decide from pm->state on other CPUs
	 * (x86: the switch hook) publishes it itself first.
	 */
	void (*start)(struct hwpmc_pmc *pm);
	void (*stop)(struct hwpmc_pmc *pm);
	/*
	 * Optional: bring what every CPU counted for @pm's targets up to now
	 * (SOFT's CLOCK.PROF folds the CPU time its tasks ran so far): before
	 * PMCSTART publishes RUNNING, so that a PMC counts from its start;
	 * after it, for a sampler, whose timers arm where a target runs now;
	 * before PMCSTOP publishes STOPPED, so that it counts up to its stop;
	 * and after a running PMC was attached to processes that may be
	 * running now.  Waits for every CPU, so never under hwpmc_sx: the
	 * owner's lock held, no other lock.
	 */
	void (*sync)(struct hwpmc_pmc *pm);
	/* The current value of a counting PMC. */
	u64 (*read)(struct hwpmc_pmc *pm);
	/* NULL: not writable (EOPNOTSUPP). */
	void (*write)(struct hwpmc_pmc *pm, u64 value);
	/* CPU hotplug, run on the CPU itself. */
	void (*cpu_online)(unsigned int cpu);
	void (*cpu_offline)(unsigned int cpu);
	/* GETDYNEVENTINFO: the name of event @code, NULL past the end. */
	const char *(*event_name)(u32 code);
	/* Optional: the name of @pm's event, for logs (else event_name). */
	void (*describe)(const struct hwpmc_pmc *pm, char *buf, size_t len);
	/* Optional: the longest sampling period the counter can hold. */
	u64 (*max_period)(const struct hwpmc_class *cls);
	/*
	 * Optional: the shortest sampling period of event @event the
	 * current caller may ask for (process context); shorter is EINVAL.
	 */
	u64 (*min_period)(u32 event);
	/* Optional: can row @idx (of the class) hold the PMC asked for? */
	bool (*row_ok)(const struct hwpmc_class *cls, unsigned int idx,
		       const struct pmc_op_pmcallocate *a);
	/* Optional: is row @idx held by another user of the PMU (perf)? */
	bool (*unavailable)(const struct hwpmc_class *cls, unsigned int idx);
	/* Optional: PMCGETMSR's RDPMC index (and user RDPMC granted). */
	int (*get_msr)(struct hwpmc_pmc *pm, u32 *index);
	/* With get_msr: the PMC no longer qualifies for user RDPMC. */
	void (*revoke_msr)(struct hwpmc_pmc *pm);
	/*
	 * Optional: the scheduler's and the kernel's events, called by the
	 * hooks (hwpmc_hooks.c) through hwpmc_class.c; see
	 * hwpmc_classes_switch() and the others for each one's context.
	 */
	void (*switch_task)(struct task_struct *prev,
			    struct task_struct *next);
	void (*task_exit)(struct task_struct *task);
	void (*hook_event)(enum hwpmc_kevent ev, struct task_struct *task,
			   struct pt_regs *regs);
};

struct hwpmc_class {
	const struct hwpmc_class_ops *ops;
	unsigned int firstrow;
	unsigned int nrows;
	u32 width;			/* counter bits (probe) */
	u32 caps;			/* PMC_CAP_* on this machine (probe) */
};

/* class/: classes any machine may list in its hwpmc_mdep. */
extern const struct hwpmc_class_ops hwpmc_tsc_ops;
extern const struct hwpmc_class_ops hwpmc_soft_ops;

/*
 * The machine-dependent part (FreeBSD's struct pmc_mdep, Linux's
 * x86_pmu): what the architecture's directory (x86/) hands the core at
 * load, in one call, hwpmc_md_init(): its classes in row order, the CPU
 * type, and the callbacks the scheduler hooks make for the machine as a
 * whole (not per class: its classes share one set of counters).
 */
struct hwpmc_mdep {
	const char *name;				/* "x86" */
	u32 cputype;					/* PMC_CPU_* */
	const struct hwpmc_class_ops *const *classes;	/* row order */
	unsigned int nclasses;
	/* Optional: sched_switch, after the classes' (same context). */
	void (*switch_task)(struct task_struct *prev,
			    struct task_struct *next);
	/* Optional: sched_process_fork, before the child first runs. */
	void (*fork_task)(struct task_struct *parent,
			  struct task_struct *child);
	/*
	 * Optional: let user space RDPMC in @mm (CR4.PCE where it runs), as
	 * perf's /sys/devices/cpu/rdpmc allows; 0 or an errno.  Put undoes a
	 * get.  For the interfaces that promise user-mode reads (iface/).
	 */
	int (*rdpmc_mm_get)(struct mm_struct *mm);
	void (*rdpmc_mm_put)(struct mm_struct *mm);
	/* Undo hwpmc_md_init(), after the classes are gone. */
	void (*fini)(void);
};

/*
 * The architecture's one entry point (x86/classes.c): detect the PMU and
 * describe the machine; an ERR_PTR if the module cannot load.  Called
 * once, by hwpmc_classes_init(), which calls its fini at the end.
 */
const struct hwpmc_mdep *hwpmc_md_init(void);

/* hwpmc_class.c: the registry of the machine's classes and callbacks. */
int hwpmc_classes_init(void);
void hwpmc_classes_fini(void);

/*
 * What the scheduler hook calls (the classes' and the machine's switch
 * callbacks that exist), filled at load before any hook can be attached
 * and emptied after they are all detached (hwpmc_class.c).
 */
typedef void (*hwpmc_switch_fn)(struct task_struct *prev,
				struct task_struct *next);
extern hwpmc_switch_fn hwpmc_switch_fns[] __read_mostly;
extern unsigned int hwpmc_nswitch __read_mostly;

/*
 * sched_switch: IRQs off, the runqueue locked, @prev is current.  Each
 * callback takes no lock that may be held around a switch, allocates
 * nothing and does not sleep; an NMI may interrupt it.  Inline in the
 * probe: every switch of the machine comes through here.
 */
static inline void hwpmc_classes_switch(struct task_struct *prev,
					struct task_struct *next)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nswitch; i++)
		hwpmc_switch_fns[i](prev, next);
}

void hwpmc_classes_fork(struct task_struct *parent, struct task_struct *child);
int hwpmc_classes_rdpmc_mm_get(struct mm_struct *mm);
void hwpmc_classes_rdpmc_mm_put(struct mm_struct *mm);
void hwpmc_classes_task_exit(struct task_struct *task);
void hwpmc_classes_hook_event(enum hwpmc_kevent ev, struct task_struct *task,
			      struct pt_regs *regs);
unsigned int hwpmc_nclasses(void);
const struct hwpmc_class *hwpmc_class_at(unsigned int i);
const struct hwpmc_class *hwpmc_class_find(u32 class);
const struct hwpmc_class *hwpmc_class_of_row(unsigned int row);
unsigned int hwpmc_nrows(void);
u32 hwpmc_cputype(void);
void hwpmc_classes_announce(void);
void hwpmc_classes_cpu_online(unsigned int cpu);
void hwpmc_classes_cpu_offline(unsigned int cpu);

/*
 * Driver statistics (GETDRIVERSTATS): per-CPU counters, as FreeBSD's
 * counter(9), summed when asked, so that no hot path shares a cache line.
 * hwpmc_stat_inc()/hwpmc_stat_add() are single this_cpu operations: any
 * context, NMI included.
 */
struct hwpmc_stats {
	u64 intr_ignored;
	u64 intr_processed;
	u64 intr_bufferfull;
	u64 syscalls;
	u64 syscall_errors;
	u64 buffer_requests;
	u64 buffer_requests_failed;
	u64 log_sweeps;
	u64 samples_taken;
	u64 samples_dropped;
	u64 samples_throttled;	/* in samples_taken, not logged */
	u64 log_bytes;
	u64 alloc_failed;
};

DECLARE_PER_CPU(struct hwpmc_stats, hwpmc_stats);
#define hwpmc_stat_add(field, n)	this_cpu_add(hwpmc_stats.field, (n))
#define hwpmc_stat_inc(field)		this_cpu_inc(hwpmc_stats.field)

struct hwpmc_log;
struct pid_namespace;
struct cred;
struct hwpmc_user;

/* Handles 0 (never one) to HWPMC_FIRST_IDS - 1 have a direct index. */
#define HWPMC_FIRST_IDS		8

/* The most rows of all classes together. */
#define HWPMC_MAX_ROWS		64

/*
 * One open of /dev/hwpmc: an owner.  It lives as long as its file, but is
 * shut down (its PMCs released, its log closed: po->dead) as soon as the
 * process that opened it exits, so that no log file can keep it, its
 * PMCs or the module alive after every process that could use it is gone.
 */
struct hwpmc_owner {
	pid_t tgid;			/* the opening process */
	struct pid *pid;		/* for signals */
	struct pid_namespace *pid_ns;	/* the opener's: pids it is shown */
	const struct cred *cred;	/* the opener's: SIGIO permission */
	refcount_t ref;			/* the file, a pending exit work */
	struct hlist_node onode;	/* hwpmc_owners, by pid */
	/* shutdown after the opener exits; retried while an op holds a lock */
	struct delayed_work exit_work;
	bool dead;			/* shut down; lock and hwpmc_sx */
	struct hwpmc_user *user;	/* its real uid's counts (limits) */
	/*
	 * The owner's own operations (PMCs, targets) serialize on it; it
	 * may be held across waits the caller controls (a target's
	 * exec_update_lock, its mmap lock), which then block this owner
	 * only.  Taken killably, before hwpmc_sx.
	 */
	struct mutex lock;
	/* SIGIO from the exit hook, on PREEMPT_RT (hwpmc_proc_exit()) */
	struct work_struct sigio_work;
	/* pmcid -> PMC: changed under lock and hwpmc_sx, read under either */
	struct idr pmcs;
	/*
	 * The PMCs of the first handles as pmcs has them (NULL where it has
	 * none), kept with it by hwpmc_pmc_index() and hwpmc_pmc_unindex():
	 * a read's lookup without the radix tree's walk.  Same locks.
	 */
	struct hwpmc_pmc *pmc_first[HWPMC_FIRST_IDS];
	unsigned int npmcs;
	/*
	 * The rows its process-scope PMCs use (one each, hwpmc(4)'s ROW
	 * DISPOSITIONS), so that choosing a row does not walk its PMCs;
	 * kept by hwpmc_row_claim() and hwpmc_row_unclaim(), under lock and
	 * hwpmc_sx.
	 */
	DECLARE_BITMAP(proc_rows, HWPMC_MAX_ROWS);
	struct mutex log_lock;		/* serializes the log operations */
	struct hwpmc_log __rcu *log;	/* set under log_lock + hwpmc_sx */
	bool log_closing;		/* log being removed; hwpmc_sx */
	bool log_abort;			/* shut down: log ops stop waiting */
	/* the log a log op waits to drain; freed after a grace period */
	struct hwpmc_log __rcu *log_waiting;
	unsigned long exit_retry;	/* jiffies to the exit work's next try */
	atomic64_t ring_drops;		/* samples lost to full rings */
	atomic64_t throttled;		/* samples not taken: CPU throttled */
	atomic_t __percpu *ring_used;	/* its slots in each CPU's ring */
	unsigned int nsamplers;		/* sampling PMCs; hwpmc_sx */
	/*
	 * A kernel owner's consumer of its samples instead of a log (pmc(9)
	 * profiling, kmod/iface/pmc9.c); set before its first PMC.  Called
	 * in any context, NMI included: no locks, no allocation.
	 */
	void (*ksample)(struct hwpmc_pmc *pm, struct pt_regs *regs);
	/* its read page (hwpmc_readpage.c): set once, by the first mmap() */
	struct hwpmc_rpage *rpage;
	struct rcu_head rcu;		/* hooks may see it via its PMCs */
};

/*
 * Is every byte of the reserved field @field zero?  The operations fail
 * with EINVAL when not (an ABI field reserved for later use).
 */
#define HWPMC_RESERVED_ZERO(field) (!memchr_inv(&(field), 0, sizeof(field)))

/* The owner's operations hold po->lock (hwpmc_ioctl.c). */
#define hwpmc_owner_assert_held(po)	lockdep_assert_held(&(po)->lock)

/* pm->pflags */
#define HWPMC_PF_ATTACHED_ONCE	0x1	/* has had a target */
#define HWPMC_PF_DETACHED_ALL	0x2	/* explicitly detached from all */
#define HWPMC_PF_MSR_TAKEN	0x4	/* PMCGETMSR handed out its index */
/* Counting: the counter holds the count, no PMI (pctr(4)'s RDPMC). */
#define HWPMC_PF_HOLDS_COUNT	0x8

/* A PMC.  Fields read by hooks are marked; the rest belong to hwpmc_sx. */
struct hwpmc_pmc {
	u32 id;
	struct hwpmc_owner *po;
	const struct hwpmc_class *cls;	/* hooks */
	unsigned int row;		/* global row index */
	u32 mode, flags, event, caps;	/* hooks: event */
	u32 cpu;			/* system scope */
	u64 config, config1;
	u64 hwctl;			/* hardware control value (x86) */
	struct mm_struct *rdpmc_mm;	/* user RDPMC granted to this mm */
	u64 reload;			/* sampling period */
	u32 ustack_size;		/* hooks: PMC_F_USERSTACK bytes */
	int state;			/* hooks: READ_ONCE() */
	unsigned int pflags;
	bool priv_kernel;		/* hooks: hwpmc_priv_kernel() at alloc */
	/*
	 * Counts by its processes' clocks (hwpmc_process.clock), set by the
	 * class at allocation: process-scope CLOCK.PROF.
	 */
	bool by_clock;
	/*
	 * A by_clock PMC's value, its targets' clock_base and clock_on and
	 * its state as one: written under hwpmc_proc_lock (the batches of
	 * hwpmc_targets_start() and hwpmc_targets_stop(), an unlink), read
	 * with no lock.
	 */
	seqcount_raw_spinlock_t clock_seq;
	atomic64_t value;		/* hooks: the count */
	/* Sampling: events to the next sample (or see the class). */
	atomic64_t remaining;
	atomic64_t read_floor;		/* CLOCK.PROF: the highest value read */
	/*
	 * Its read-page slot (hwpmc_readpage.c): -1 for none; the count in
	 * the page the hooks add to (NULL: none), set before the PMC runs.
	 */
	int rslot;
	u32 rgen;
	atomic64_t *rvalue;		/* hooks */
	unsigned long stop_gp;		/* RCU grace-period cookie at the last stop */
	struct list_head cls_node;	/* for the class's own lists */
	/* The class's per-CPU data, if any: freed with pm, after RCU. */
	void __percpu *cls_pcpu;
	struct list_head ss_node;	/* system sampling PMCs, RCU */
	struct list_head targets;	/* hwpmc_target.pm_node, RCU */
	unsigned int ntargets;		/* under hwpmc_proc_lock */
	/* Walks of targets in batches (struct hwpmc_walk), same lock. */
	struct list_head walks;
	bool clock_starting;		/* a start's walk is on, same lock */
	/* A stop's walk is on: written in its sections, read in clock_seq. */
	bool clock_stopping;
	struct rcu_head rcu;
};

/* PMC modes (enum pmc_mode): system scope, sampling.  Any context. */
static inline bool hwpmc_mode_system(u32 mode)
{
	return mode == PMC_MODE_SS || mode == PMC_MODE_SC;
}

static inline bool hwpmc_mode_sampling(u32 mode)
{
	return mode == PMC_MODE_SS || mode == PMC_MODE_TS;
}

static inline bool hwpmc_is_system(const struct hwpmc_pmc *pm)
{
	return hwpmc_mode_system(pm->mode);
}

/* Any context, NMI included. */
static inline bool hwpmc_is_sampling(const struct hwpmc_pmc *pm)
{
	return hwpmc_mode_sampling(pm->mode);
}

static inline bool hwpmc_running(const struct hwpmc_pmc *pm)
{
	return READ_ONCE(pm->state) == PMC_STATE_RUNNING;
}

/*
 * A process being monitored, keyed by its signal_struct (shared by all of
 * its threads, so every thread, also those created later, is found).
 */
struct hwpmc_process {
	struct hlist_node hnode;	/* hash, RCU */
	struct signal_struct *sig;
	struct pid *pid;		/* the thread group */
	struct list_head targets;	/* hwpmc_target.pp_node, RCU */
	/*
	 * The CPU time of its threads that the SOFT class followed (while
	 * any CLOCK.PROF PMC targets it), in ns: one add per switch-out,
	 * whatever the number of such PMCs.  Each by_clock target takes its
	 * share from it lazily (hwpmc_target_pending()).  Hooks, no lock.
	 */
	atomic64_t clock;
	struct rcu_head rcu;
};

/* One (process, PMC) attachment. */
struct hwpmc_target {
	struct list_head pp_node;	/* in process->targets, RCU */
	struct list_head pm_node;	/* in pmc->targets */
	struct hwpmc_process *pp;
	struct hwpmc_pmc *pm;
	atomic64_t value;		/* this process's share of the count */
	atomic64_t csw_mark;		/* PROCCSW: value at the last record */
	/*
	 * A by_clock PMC's target: pp->clock as far as value (and the PMC's
	 * value) holds it; hwpmc_proc_lock, read by anyone.
	 */
	u64 clock_base;
	/*
	 * Counting the clock from clock_base: set at link while the PMC
	 * runs and by its start's walk, cleared (after a bank) by its
	 * stop's walk; as clock_base.
	 */
	bool clock_on;
	bool priv;			/* attached by a privileged caller */
	struct rcu_head rcu;
};

/* hwpmc_proc.c: targets and the process hash. */
extern raw_spinlock_t hwpmc_proc_lock;
extern struct hlist_head *hwpmc_proc_hash __read_mostly;
extern unsigned int hwpmc_proc_bits __read_mostly;
int hwpmc_proc_init(void);
void hwpmc_proc_fini(void);

/*
 * Find the monitored process of a thread group.  Caller holds
 * rcu_read_lock() (or hwpmc_proc_lock), or has preemption or IRQs off
 * (the hooks).  Any context but NMI.  Inline: the switch hooks look up
 * every switched task, and for a task nobody monitors this is all they
 * do (an empty bucket, or a short chain).
 */
static inline struct hwpmc_process *hwpmc_proc_find(struct signal_struct *sig)
{
	struct hwpmc_process *pp;

	hlist_for_each_entry_rcu(pp,
				 &hwpmc_proc_hash[hash_ptr(sig, hwpmc_proc_bits)],
				 hnode, lockdep_is_held(&hwpmc_proc_lock))
		if (pp->sig == sig)
			return pp;
	return NULL;
}

int hwpmc_attach_checked(struct hwpmc_pmc *pm, struct task_struct *task);
int hwpmc_detach(struct hwpmc_pmc *pm, struct task_struct *task);
void hwpmc_detach_all(struct hwpmc_pmc *pm);
unsigned int hwpmc_target_pids(struct hwpmc_pmc *pm, struct pid **pids,
			       unsigned int max);
bool hwpmc_only_owner_attached(struct hwpmc_pmc *pm);
#define HWPMC_FORK_MAXLOGS	8
unsigned int hwpmc_proc_fork(struct task_struct *parent,
			     struct task_struct *child,
			     struct hwpmc_owner **logged);
void hwpmc_proc_exit(struct task_struct *task);
bool hwpmc_proc_exec(struct task_struct *task);
void hwpmc_proc_log_exec(struct task_struct *task, u64 base, const char *path);

/*
 * Credit @n events of @task's process to target @pt (any context but NMI;
 * no locks).  Inline: the switch hook credits one per switch.
 */
static inline void hwpmc_target_add(struct hwpmc_target *pt,
				    struct task_struct *task, u64 n)
{
	/*
	 * Its read-page slot first, then the value PMCRW reads (locked adds:
	 * ordered), so that a page read after a PMCRW is never below it
	 * (uapi header).
	 */
	if (pt->pm->rvalue)
		atomic64_add(n, pt->pm->rvalue);
	atomic64_add(n, &pt->value);
	atomic64_add(n, &pt->pm->value);
}

/*
 * What a by_clock PMC's target @pt counted that its value does not hold
 * yet: while it counts (clock_on), its process's clock since clock_base.
 * Inside a read section of the PMC's clock_seq (or under
 * hwpmc_proc_lock), with the values it is
 * added to.  Any context but NMI; RCU (or the hooks' IRQs-off or
 * preemption-off sections) keeps @pt.
 */
static inline u64 hwpmc_target_pending(const struct hwpmc_target *pt)
{
	s64 d;

	if (!pt->pm->by_clock || !READ_ONCE(pt->clock_on))
		return 0;
	d = atomic64_read(&pt->pp->clock) - READ_ONCE(pt->clock_base);
	return d > 0 ? d : 0;
}

/* The share of the count of @pt's process, up to date.  As above. */
static inline u64 hwpmc_target_value(const struct hwpmc_target *pt)
{
	unsigned int seq;
	u64 v;

	if (!pt->pm->by_clock)
		return atomic64_read(&pt->value);
	do {
		seq = read_seqcount_begin(&pt->pm->clock_seq);
		v = atomic64_read(&pt->value) + hwpmc_target_pending(pt);
	} while (read_seqcount_retry(&pt->pm->clock_seq, seq));
	return v;
}

void hwpmc_targets_start(struct hwpmc_pmc *pm);
void hwpmc_targets_stop(struct hwpmc_pmc *pm);
struct hwpmc_target *hwpmc_target_find(struct task_struct *task,
				       struct hwpmc_pmc *pm);
extern atomic_t hwpmc_ncsw_targets;
void __hwpmc_proc_switch(struct task_struct *prev);

/* sched_switch: PROCCSW records, only while a PROCCSW target exists. */
static inline void hwpmc_proc_switch(struct task_struct *prev,
				     struct task_struct *next)
{
	if (atomic_read(&hwpmc_ncsw_targets))
		__hwpmc_proc_switch(prev);
}

/* hwpmc_pmc.c: PMC objects, rows, the op handlers. */
int hwpmc_rows_init(void);
void hwpmc_rows_fini(void);
void hwpmc_owner_kill(struct hwpmc_owner *po);
void hwpmc_owner_kill_locked(struct hwpmc_owner *po);
int hwpmc_owner_charge(struct hwpmc_owner *po);
void hwpmc_owner_uncharge(struct hwpmc_owner *po);
int hwpmc_op_pmcallocate(struct hwpmc_owner *po, struct pmc_op_pmcallocate *a);
u32 hwpmc_alloc_hooks(const struct pmc_op_pmcallocate *a);
int hwpmc_alloc_begin(u32 hooks);
void hwpmc_alloc_end(u32 hooks);
int hwpmc_pmc_allocate(struct hwpmc_owner *po, struct pmc_op_pmcallocate *a,
		       int want);
int hwpmc_pmc_allocate_at(struct hwpmc_owner *po,
			  struct pmc_op_pmcallocate *a, int want);
int hwpmc_op_pmcrelease(struct hwpmc_owner *po, struct pmc_op_simple *a);
int hwpmc_pmcs_release(struct hwpmc_owner *po, const u32 *ids,
		       unsigned int n);
int hwpmc_op_pmcstart(struct hwpmc_owner *po, struct pmc_op_simple *a);
int hwpmc_op_pmcstop(struct hwpmc_owner *po, struct pmc_op_simple *a);
int hwpmc_pmc_stop_locked(struct hwpmc_owner *po, struct pmc_op_simple *a);
int hwpmc_op_pmcrw(struct hwpmc_owner *po, struct pmc_op_pmcrw *a);
int hwpmc_op_pmcsetcount(struct hwpmc_owner *po, struct pmc_op_pmcsetcount *a);
int hwpmc_op_pmcattach(struct hwpmc_owner *po, struct pmc_op_pmcattach *a);
int hwpmc_op_pmcdetach(struct hwpmc_owner *po, struct pmc_op_pmcattach *a);
int hwpmc_op_getcaps(struct hwpmc_owner *po, struct pmc_op_caps *a);
int hwpmc_op_getmsr(struct hwpmc_owner *po, struct pmc_op_getmsr *a);
int hwpmc_op_getpmcinfo(struct hwpmc_owner *po, struct pmc_op_getpmcinfo *a);
int hwpmc_op_pmcadmin(struct hwpmc_owner *po, struct pmc_op_pmcadmin *a);
void hwpmc_signal_pid(struct pid *pid, int sig);
void hwpmc_owner_sigio_fn(struct work_struct *work);

/* hwpmc_main.c: owners and the exit of their openers. */
void hwpmc_owner_exit(struct task_struct *task);
bool hwpmc_owner_may_signal(struct pid *pid, struct task_struct *task);
extern struct workqueue_struct *hwpmc_wq;

/* hwpmc_log.c: the log file. */
int hwpmc_op_configurelog(struct hwpmc_owner *po,
			  struct pmc_op_configurelog *a);
int hwpmc_op_closelog(struct hwpmc_owner *po, void *unused);
int hwpmc_op_flushlog(struct hwpmc_owner *po, void *unused);
int hwpmc_op_writelog(struct hwpmc_owner *po, struct pmc_op_writelog *a);
void hwpmc_log_owner_release(struct hwpmc_owner *po);
void hwpmc_log_owner_abort(struct hwpmc_owner *po);
/* How long an owner's shutdown lets its log drain (jiffies). */
#define HWPMC_LOG_SHUTDOWN_WAIT	(10 * HZ)
u32 hwpmc_log_pid(const struct hwpmc_log *log, pid_t nr);
bool hwpmc_is_device_file(const struct file *file);
void *hwpmc_log_reserve(struct hwpmc_log *log, u32 type, u32 len,
			unsigned long *flags);
void *hwpmc_log_reserve_filled(struct hwpmc_log *log, u32 type, u32 len,
			       unsigned long *flags);
void *hwpmc_log_try_reserve_filled(struct hwpmc_log *log, u32 type, u32 len,
				   unsigned long *flags);
void hwpmc_log_commit(struct hwpmc_log *log, unsigned long flags);
bool hwpmc_log_drops_pending(struct hwpmc_owner *po, struct hwpmc_log *log);
void hwpmc_log_dropnotify(struct hwpmc_owner *po, struct hwpmc_log *log);
void hwpmc_log_try_dropnotify(struct hwpmc_owner *po, struct hwpmc_log *log);
u32 hwpmc_log_strlen(size_t fixed, size_t slen);
void hwpmc_log_pmcallocate(struct hwpmc_pmc *pm);
void hwpmc_log_pmcattach(struct hwpmc_pmc *pm, pid_t pid, const char *path);
void hwpmc_log_pmcdetach(struct hwpmc_pmc *pm, pid_t pid);
void hwpmc_log_proccsw(struct hwpmc_pmc *pm, pid_t pid, pid_t tid, u64 value);
void hwpmc_log_procexit(struct hwpmc_pmc *pm, pid_t pid, u64 value);
void hwpmc_log_procfork(struct hwpmc_owner *po, pid_t ppid, pid_t pid);
void hwpmc_log_procexec(struct hwpmc_pmc *pm, pid_t pid, u64 base,
			const char *path);
void hwpmc_log_procexec_id(struct hwpmc_owner *po, u32 pmcid, pid_t pid,
			   u64 base, const char *path);

static inline bool hwpmc_has_log(struct hwpmc_owner *po)
{
	return !!rcu_access_pointer(po->log);
}

/* May a PMC that needs a log start?  hwpmc_sx held. */
static inline bool hwpmc_log_usable(struct hwpmc_owner *po)
{
	lockdep_assert_held(&hwpmc_sx);
	return hwpmc_has_log(po) && !po->log_closing;
}

/* hwpmc_pmc.c, for the log. */
void hwpmc_log_publish(struct hwpmc_owner *po, struct hwpmc_log *log);
void hwpmc_stop_log_pmcs(struct hwpmc_owner *po);

/* hwpmc_readpage.c: the read page (mmap() of /dev/hwpmc). */
struct vm_area_struct;
int hwpmc_readpage_mmap(struct hwpmc_owner *po, struct vm_area_struct *vma);
void hwpmc_readpage_owner_free(struct hwpmc_owner *po);
void hwpmc_readpage_owner_dead(struct hwpmc_owner *po);
void hwpmc_readpage_pmc_alloc(struct hwpmc_pmc *pm);
void hwpmc_readpage_pmc_free(struct hwpmc_pmc *pm);
void hwpmc_readpage_sync(struct hwpmc_pmc *pm);
void hwpmc_readpage_state(struct hwpmc_pmc *pm);
void hwpmc_readpage_wrote(struct hwpmc_pmc *pm);
int hwpmc_readpage_getslot(struct hwpmc_pmc *pm, struct pmc_op_getreadslot *a);
int hwpmc_op_getreadslot(struct hwpmc_owner *po, struct pmc_op_getreadslot *a);

/* hwpmc_sample.c: per-CPU sample rings. */
int hwpmc_samples_init(void);
void hwpmc_samples_fini(void);
int hwpmc_samples_ustack_get(u32 size);
void hwpmc_samples_ustack_put(u32 size);
void hwpmc_samples_drain(void);
void hwpmc_sample_take(struct hwpmc_pmc *pm, struct task_struct *task,
		       struct pt_regs *regs);
void hwpmc_sample_throttled(struct hwpmc_pmc *pm);
void hwpmc_sample_throttled_n(struct hwpmc_pmc *pm, u64 n);
void hwpmc_sample_owner_add(struct hwpmc_owner *po);
void hwpmc_sample_owner_del(struct hwpmc_owner *po);

/* hwpmc_maps.c: MAP_IN / MAP_OUT. */
void hwpmc_maps_sys_sampler_add(struct hwpmc_pmc *pm);
void hwpmc_maps_sys_sampler_del(struct hwpmc_pmc *pm);
void hwpmc_maps_log_task(struct hwpmc_owner *po, struct task_struct *task);
void hwpmc_maps_log_all(struct hwpmc_owner *po);
void hwpmc_maps_exec(struct task_struct *task, struct linux_binprm *bprm,
		     bool monitored);
void hwpmc_maps_sysexit(struct task_struct *task);
void hwpmc_maps_sysfork(struct task_struct *parent, struct task_struct *child,
			struct hwpmc_owner **logged, unsigned int nlogged);
void hwpmc_maps_syscall_exit(struct pt_regs *regs, long ret);
void hwpmc_maps_reserve_fill(void);
void hwpmc_maps_fini(void);

/* hwpmc_hooks.c: kernel tracepoints. */
int hwpmc_hooks_init(void);
void hwpmc_hooks_fini(void);
/* The hooks, each attached only while it has users (hwpmc_hooks.c). */
enum hwpmc_hook {
	HWPMC_HOOK_SYS_ENTER,
	HWPMC_HOOK_PAGE_FAULT,
	HWPMC_HOOK_MIGRATE,
	HWPMC_HOOK_MAPS,		/* sys_exit: mmap/munmap */
	HWPMC_HOOK_SWITCH,		/* sched_switch: every PMC */
	HWPMC_HOOK_PROC,		/* fork, exit, exec: PMCs, owners */
	HWPMC_HOOK_NR,
};

int hwpmc_hook_get(enum hwpmc_hook h);
void hwpmc_hook_put(enum hwpmc_hook h);

/*
 * The switch hook's gate (hwpmc_switch_wanted(), hwpmc_hooks.c): while the
 * hook is attached, a switch goes on to the classes and the process
 * records only if
 *   - this CPU has a reason of its own (hwpmc_switch_here): a task whose
 *     CPU time a class follows here, a class timer running for the
 *     current task, a system-scope PMC here that counts switches or CPU
 *     time; or
 *   - some PMC needs every switch of the machine (HWPMC_GATE_EVERY); or
 *   - the outgoing task's process is a target and some PMC needs to see
 *     such switches (HWPMC_GATE_PREV), or the incoming task's
 *     (HWPMC_GATE_NEXT).
 * Anything else is the switch of two tasks nobody monitors on a CPU with
 * nothing of hwpmc's, which costs the probe a few loads and at most two
 * hash lookups, with no call.  Whoever needs switches raises its reason
 * before the state that needs them takes effect (a PMC running, a target
 * attached, a task followed) and drops it after that state is gone, so
 * the gate never hides a switch that the classes would have acted on
 * (they make their own checks after it).
 */
enum hwpmc_here {
	HWPMC_HERE_TASK,	/* written by the CPU itself, IRQs off */
	HWPMC_HERE_TIMER,	/* the same */
	HWPMC_HERE_SYS,		/* any CPU, under hwpmc_sx */
	HWPMC_HERE_NR,
};

/* One byte a reason, each with one writer; the hook reads them at once. */
union hwpmc_switch_here {
	u8 why[4];
	u32 any;
};

static_assert(sizeof_field(union hwpmc_switch_here, why) >= HWPMC_HERE_NR);
static_assert(sizeof_field(union hwpmc_switch_here, why) ==
	      sizeof_field(union hwpmc_switch_here, any));
DECLARE_PER_CPU(union hwpmc_switch_here, hwpmc_switch_here);

static inline void hwpmc_switch_here_set(unsigned int cpu,
					 enum hwpmc_here why, bool on)
{
	WRITE_ONCE(per_cpu(hwpmc_switch_here, cpu).why[why], on);
}

enum hwpmc_gate {
	HWPMC_GATE_EVERY,
	HWPMC_GATE_PREV,
	HWPMC_GATE_NEXT,
	HWPMC_GATE_NR,
};

extern atomic_t hwpmc_switch_gate[HWPMC_GATE_NR];

static inline void hwpmc_switch_gate_get(enum hwpmc_gate g)
{
	atomic_inc(&hwpmc_switch_gate[g]);
	/* Raised before the state that needs it is published. */
	smp_mb__after_atomic();
}

static inline void hwpmc_switch_gate_put(enum hwpmc_gate g)
{
	/* Dropped after that state is gone. */
	smp_mb__before_atomic();
	atomic_dec(&hwpmc_switch_gate[g]);
}

int hwpmc_hooks_get(u32 mask);
void hwpmc_hooks_put(u32 mask);
u32 hwpmc_hooks_attached(void);

/* hwpmc_priv.c: privilege decisions (process context, the caller's). */
bool hwpmc_priv_system(void);		/* non-jailed super-user */
bool hwpmc_priv_admin(void);		/* PRIV_PMC_MANAGE */
bool hwpmc_priv_kernel(void);		/* may see kernel mode */
bool hwpmc_priv_system_pmc(u32 mode);	/* a system-scope PMC of @mode */
bool hwpmc_priv_hw(void);		/* a hardware PMC */
u64 hwpmc_priv_hw_min_period(void);	/* shortest hardware period */
bool hwpmc_priv_anythread(void);	/* count the sibling hyperthread */
int hwpmc_priv_may_attach(struct task_struct *task, bool *priv);
bool hwpmc_priv_attach_asks_lsm(struct task_struct *task);
bool hwpmc_priv_may_signal(const struct cred *c, struct task_struct *task);
void hwpmc_priv_init(void);
void hwpmc_priv_fini(void);
int hwpmc_read_sysctl_int(const char *name, int *val);
struct vfsmount *hwpmc_private_mount(const char *fstype);
int hwpmc_private_read_int(struct vfsmount *mnt, const char *name, int *val);
bool hwpmc_priv_procfs_ready(void);
int hwpmc_priv_lsm_may_read(struct task_struct *task);

long hwpmc_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* hwpmc_test_log_busy(): the test flavor's test_log_busy bits. */
#define HWPMC_TEST_BUSY_SAMPLE	1	/* test_log_busy: samples' reservations */
#define HWPMC_TEST_BUSY_DROPS	2	/* ... drop reports */

#ifdef HWPMC_TESTING
int hwpmc_testing_init(void);
void hwpmc_testing_fini(void);
void hwpmc_test_attach_window(void);
bool hwpmc_test_log_busy(unsigned int what);
struct dentry *hwpmc_testing_dir(void);
#else
static inline int hwpmc_testing_init(void)
{
	return 0;
}

static inline void hwpmc_test_attach_window(void)
{
}

static inline bool hwpmc_test_log_busy(unsigned int what)
{
	return false;
}

static inline void hwpmc_testing_fini(void)
{
}
#endif

#endif /* _HWPMC_H */
