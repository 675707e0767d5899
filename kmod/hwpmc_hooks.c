// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: FreeBSD's HWPMC_HOOKS on Linux.  The module may not patch the
 * kernel, so it observes processes and scheduling through tracepoints,
 * found by name and attached with tracepoint_probe_register().
 *
 * Every hook is attached only while something needs it, so that a loaded
 * module nobody uses costs the kernel nothing (no probe on any
 * tracepoint, their static keys off):
 *   sched_switch           while any PMC exists (HWPMC_HOOK_SWITCH)
 *   fork, exit, exec       while any PMC, any open of /dev/hwpmc (the exit
 *                          of its opener ends an owner) or any pctr(4)
 *                          RDPMC grant (fork resets a child's copy)
 *                          exists (HWPMC_HOOK_PROC)
 *   syscalls, page faults, migrations, sys_exit
 *                          while a PMC of that event, or a sampler (maps),
 *                          exists
 * One mechanism for all: a count of users per hook, taken before what
 * needs the hook becomes visible (so nothing it must see is missed) and
 * dropped after it is gone; the last user's drop leaves the hook attached
 * for a while (linger), then a work item detaches it.  Attaching and
 * detaching wait for the kernel (text patching with IPIs to every CPU;
 * re-attaching a tracepoint soon after its detach waits for a grace
 * period), so they happen under their own lock, not under hwpmc_sx: who
 * allocates a PMC takes its hooks before hwpmc_sx (hwpmc_hooks_get()),
 * and under hwpmc_sx a hook is then only counted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/tracepoint.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/binfmts.h>
#include <linux/workqueue.h>
#include <linux/uaccess.h>
#include <asm/trap_pf.h>

#include "hwpmc.h"

DEFINE_PER_CPU(union hwpmc_switch_here, hwpmc_switch_here);
atomic_t hwpmc_switch_gate[HWPMC_GATE_NR];

/*
 * Does this switch go on to the classes (see enum hwpmc_here, hwpmc.h)?
 * IRQs off, runqueue locked.  The lookups run under the scheduler's RCU
 * read side (IRQs off): a process record is freed after a grace period.
 */
static __always_inline bool hwpmc_switch_wanted(struct task_struct *prev,
						struct task_struct *next)
{
	return this_cpu_read(hwpmc_switch_here.any) ||
	       atomic_read(&hwpmc_switch_gate[HWPMC_GATE_EVERY]) ||
	       (atomic_read(&hwpmc_switch_gate[HWPMC_GATE_PREV]) &&
		hwpmc_proc_find(prev->signal)) ||
	       (atomic_read(&hwpmc_switch_gate[HWPMC_GATE_NEXT]) &&
		hwpmc_proc_find(next->signal));
}

/*
 * What a switch the gate passes does: the classes' and the machine's
 * callbacks (hwpmc_classes_switch()), then the process records.  Out of
 * line, so that the probe saves no register for the switches it drops.
 */
static noinline void hwpmc_switch_slow(struct task_struct *prev,
				       struct task_struct *next)
{
	hwpmc_classes_switch(prev, next);
	hwpmc_proc_switch(prev, next);
}

/*
 * sched_switch: IRQs off, runqueue locked.  No sleeping, no allocation.
 * Every switch of the machine comes through here while the hook is
 * attached: the gate first.
 */
static void hwpmc_probe_switch(void *data, bool preempt,
			       struct task_struct *prev,
			       struct task_struct *next,
			       unsigned int prev_state)
{
	if (hwpmc_switch_wanted(prev, next))
		hwpmc_switch_slow(prev, next);
}

static void hwpmc_probe_fork(void *data, struct task_struct *parent,
			     struct task_struct *child)
{
	struct hwpmc_owner *logged[HWPMC_FORK_MAXLOGS];
	unsigned int n;

	hwpmc_classes_fork(parent, child);	/* e.g. RDPMC is not inherited */
	n = hwpmc_proc_fork(parent, child, logged);

	/* One PROCFORK per log: system samplers skip those just written. */
	hwpmc_maps_sysfork(parent, child, logged, n);
}

static void hwpmc_probe_exit(void *data, struct task_struct *task)
{
	/*
	 * Not the last thread of its process: the classes count what it
	 * ran up to here, since a reader no longer finds it among its
	 * process's threads once exit_notify() unhashed it.
	 */
	if (atomic_read(&task->signal->live)) {
		hwpmc_classes_task_exit(task);
		return;
	}
	hwpmc_proc_exit(task);
	hwpmc_maps_sysexit(task);
	/* The owners it opened go too (in process context, later). */
	hwpmc_owner_exit(task);
}

static void hwpmc_probe_exec(void *data, struct task_struct *task,
			     pid_t old_pid, struct linux_binprm *bprm)
{
	hwpmc_maps_exec(task, bprm, hwpmc_proc_exec(task));
}

static void hwpmc_probe_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	hwpmc_maps_syscall_exit(regs, ret);
}

static void hwpmc_probe_sys_enter(void *data, struct pt_regs *regs, long id)
{
	hwpmc_classes_hook_event(HWPMC_KEV_SYSCALL, current, regs);
}

/*
 * Page faults: IRQs may be off, maybe in NMI context (a PMI's callchain).
 * A fault taken with page faults disabled is not one the process took:
 * copy_from_user_nofault() (hwpmc's own callchain walk among others)
 * fails it without handling it, and perf does not count it either.
 * Counting it would also recurse: a PAGE_FAULT sampler's callchain walk
 * faults on a bad user frame pointer, which samples again, until the
 * kernel stack overflows.
 */
static void hwpmc_probe_page_fault(void *data, unsigned long address,
				   struct pt_regs *regs,
				   unsigned long error_code)
{
	if (pagefault_disabled())
		return;
	hwpmc_classes_hook_event((error_code & X86_PF_WRITE) ?
				 HWPMC_KEV_FAULT_WRITE : HWPMC_KEV_FAULT_READ,
				 current, regs);
}

static void hwpmc_probe_migrate(void *data, struct task_struct *task,
				int dest_cpu)
{
	hwpmc_classes_hook_event(HWPMC_KEV_MIGRATE, task, NULL);
}

struct hwpmc_tp {
	const char *name;
	void *probe;
	int hook;			/* enum hwpmc_hook */
	struct tracepoint *tp;
	bool registered;
};

static struct hwpmc_tp hwpmc_tps[] = {
	{ "sched_switch", hwpmc_probe_switch, HWPMC_HOOK_SWITCH },
	{ "sched_process_fork", hwpmc_probe_fork, HWPMC_HOOK_PROC },
	{ "sched_process_exit", hwpmc_probe_exit, HWPMC_HOOK_PROC },
	{ "sched_process_exec", hwpmc_probe_exec, HWPMC_HOOK_PROC },
	{ "sys_enter", hwpmc_probe_sys_enter, HWPMC_HOOK_SYS_ENTER },
	{ "page_fault_user", hwpmc_probe_page_fault, HWPMC_HOOK_PAGE_FAULT },
	{ "page_fault_kernel", hwpmc_probe_page_fault, HWPMC_HOOK_PAGE_FAULT },
	{ "sched_migrate_task", hwpmc_probe_migrate, HWPMC_HOOK_MIGRATE },
	{ "sys_exit", hwpmc_probe_sys_exit, HWPMC_HOOK_MAPS },
};

/*
 * Users of each hook.  It leaves 0 only under hwpmc_hooks_lock, once the
 * hook is attached; from 1 up it is taken without a lock.
 */
static atomic_t hwpmc_hook_users[HWPMC_HOOK_NR];
/*
 * Attach and detach (the tracepoints' registered flags).  Never taken
 * under hwpmc_sx (see the lock order, hwpmc_main.c).
 */
static DEFINE_MUTEX(hwpmc_hooks_lock);

/*
 * Attaching or detaching a tracepoint patches kernel text, which is slow
 * and (under QEMU's multi-threaded TCG) not entirely safe.  A hook whose
 * last user went away stays attached for a few seconds, so that PMCs
 * allocated and released in quick succession (a tool run in a loop) do
 * not patch each time.
 */
#define HWPMC_HOOK_LINGER	(5 * HZ)
static void hwpmc_hooks_idle_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(hwpmc_hooks_idle, hwpmc_hooks_idle_fn);

static void hwpmc_tp_lookup(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++)
		if (!strcmp(tp->name, hwpmc_tps[i].name))
			hwpmc_tps[i].tp = tp;
}

static int hwpmc_tp_register(struct hwpmc_tp *t)
{
	int err = tracepoint_probe_register(t->tp, t->probe, NULL);

	if (err)
		pr_err_ratelimited("cannot attach to tracepoint %s: %d\n",
				   t->name, err);
	else
		t->registered = true;
	return err;
}

static void hwpmc_tp_unregister(struct hwpmc_tp *t)
{
	if (!t->registered)
		return;
	tracepoint_probe_unregister(t->tp, t->probe, NULL);
	t->registered = false;
}

/*
 * Attach hook @h (refcounted): when this returns 0 its probes are in
 * place, and every event from then on reaches them.  Any process
 * context; a caller under hwpmc_sx must already hold the hook (then it
 * is only counted): see hwpmc_hooks_get().
 */
int hwpmc_hook_get(enum hwpmc_hook h)
{
	unsigned int i;
	int err = 0;

	if (atomic_inc_not_zero(&hwpmc_hook_users[h]))
		return 0;
	/* An attach waits for the kernel: never under the global lock. */
	lockdep_assert_not_held(&hwpmc_sx);
	err = mutex_lock_killable(&hwpmc_hooks_lock);
	if (err)
		return err;
	if (atomic_inc_not_zero(&hwpmc_hook_users[h]))
		goto out;
	for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++) {
		if (hwpmc_tps[i].hook != h || hwpmc_tps[i].registered)
			continue;
		err = hwpmc_tp_register(&hwpmc_tps[i]);
		if (err) {
			/* Undo the half-attached hook. */
			for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++)
				if (hwpmc_tps[i].hook == h)
					hwpmc_tp_unregister(&hwpmc_tps[i]);
			goto out;
		}
	}
	/* Attached before anyone can count on it without the lock. */
	atomic_set_release(&hwpmc_hook_users[h], 1);
out:
	mutex_unlock(&hwpmc_hooks_lock);
	return err;
}

void hwpmc_hook_put(enum hwpmc_hook h)
{
	int left = atomic_dec_if_positive(&hwpmc_hook_users[h]);

	if (WARN_ON_ONCE(left < 0))
		return;
	/* Detached later, if nobody wants it meanwhile. */
	if (!left)
		mod_delayed_work(system_wq, &hwpmc_hooks_idle,
				 HWPMC_HOOK_LINGER);
}

/*
 * The hooks of @mask (BIT(enum hwpmc_hook)), attached if need be: 0, or
 * the error of one that could not be (none held then).  Without hwpmc_sx:
 * taken before it by what needs them under it (a PMC's allocation).
 */
int hwpmc_hooks_get(u32 mask)
{
	unsigned int h;
	int err;

	for (h = 0; h < HWPMC_HOOK_NR; h++) {
		if (!(mask & BIT(h)))
			continue;
		err = hwpmc_hook_get(h);
		if (err) {
			hwpmc_hooks_put(mask & (BIT(h) - 1));
			return err;
		}
	}
	return 0;
}

void hwpmc_hooks_put(u32 mask)
{
	unsigned int h;

	for (h = 0; h < HWPMC_HOOK_NR; h++)
		if (mask & BIT(h))
			hwpmc_hook_put(h);
}

/*
 * Detach the hooks that have had no user for a while.  A probe may still
 * run on another CPU after its unregistration; everything it touches is
 * the module's (alive until hwpmc_hooks_fini(), which waits for it) or
 * freed through RCU.  The per-CPU state that follows every switch is at
 * rest by then: the last PMC took it there (SOFT's CLOCK.PROF forgets
 * each CPU's task when its last PMC goes; x86 unloads every counter at
 * stop and revokes RDPMC at once).
 */
static void hwpmc_hooks_idle_fn(struct work_struct *w)
{
	unsigned int i;

	mutex_lock(&hwpmc_hooks_lock);
	for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++)
		if (!atomic_read(&hwpmc_hook_users[hwpmc_tps[i].hook]))
			hwpmc_tp_unregister(&hwpmc_tps[i]);
	mutex_unlock(&hwpmc_hooks_lock);
}

/*
 * Hooks whose probe the tracepoint itself holds now (BIT(enum
 * hwpmc_hook)), read from the tracepoints' own lists of probes, not from
 * this file's bookkeeping: the test flavor shows it in debugfs.
 */
u32 hwpmc_hooks_attached(void)
{
	struct tracepoint_func *f;
	unsigned int i;
	u32 mask = 0;

	rcu_read_lock_sched();
	for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++) {
		f = rcu_dereference_sched(hwpmc_tps[i].tp->funcs);
		for (; f && f->func; f++)
			if (f->func == hwpmc_tps[i].probe)
				mask |= BIT(hwpmc_tps[i].hook);
	}
	rcu_read_unlock_sched();
	return mask;
}

/* Find the tracepoints (none is attached before a user asks). */
int hwpmc_hooks_init(void)
{
	unsigned int i;

	for_each_kernel_tracepoint(hwpmc_tp_lookup, NULL);
	for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++) {
		if (!hwpmc_tps[i].tp) {
			pr_err("this kernel has no tracepoint %s, which hwpmc needs (FreeBSD: 'options HWPMC_HOOKS')\n",
			       hwpmc_tps[i].name);
			return -ENOENT;
		}
	}
	return 0;
}

void hwpmc_hooks_fini(void)
{
	unsigned int i;

	cancel_delayed_work_sync(&hwpmc_hooks_idle);
	for (i = 0; i < ARRAY_SIZE(hwpmc_tps); i++)
		hwpmc_tp_unregister(&hwpmc_tps[i]);
	/* No probe may still run when the module text goes away. */
	tracepoint_synchronize_unregister();
}
