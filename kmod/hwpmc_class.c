// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the registry of counter classes and their rows.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/err.h>

#include "hwpmc.h"

static const struct hwpmc_mdep *hwpmc_md;
static struct hwpmc_class hwpmc_classes[PMC_CLASS_TABLE_SIZE];
static unsigned int hwpmc_nclass;
static unsigned int hwpmc_total_rows;

/*
 * What the scheduler and event hooks call, fixed at load: filled before
 * any hook can be attached and emptied after they are all detached and
 * every probe has returned (hwpmc_hooks_fini()), so the hooks read them
 * without a lock.  A switch costs a call per entry of hwpmc_switch_fns
 * (hwpmc_classes_switch(), inline in the probe): the classes' and the
 * machine's that have one (SOFT's; x86's only where there is a PMU).
 */
#define HWPMC_MAX_CALLBACKS	(PMC_CLASS_TABLE_SIZE + 1)
hwpmc_switch_fn hwpmc_switch_fns[HWPMC_MAX_CALLBACKS] __read_mostly;
unsigned int hwpmc_nswitch __read_mostly;
static const struct hwpmc_class_ops *hwpmc_exit_ops[PMC_CLASS_TABLE_SIZE];
static unsigned int hwpmc_nexit;
static const struct hwpmc_class_ops *hwpmc_event_ops[PMC_CLASS_TABLE_SIZE];
static unsigned int hwpmc_nevent;

/* The callbacks of class @ops, in row order. */
static void hwpmc_classes_callbacks(const struct hwpmc_class_ops *ops)
{
	if (ops->switch_task)
		hwpmc_switch_fns[hwpmc_nswitch++] = ops->switch_task;
	if (ops->task_exit)
		hwpmc_exit_ops[hwpmc_nexit++] = ops;
	if (ops->hook_event)
		hwpmc_event_ops[hwpmc_nevent++] = ops;
}

/*
 * Ask the machine what it has (hwpmc_md_init()) and register its classes,
 * CPU type and callbacks.  At load, before the hooks.
 */
int hwpmc_classes_init(void)
{
	const struct hwpmc_mdep *md;
	unsigned int i, n;

	md = hwpmc_md_init();
	if (IS_ERR(md))
		return PTR_ERR(md);
	hwpmc_md = md;
	hwpmc_nclass = 0;
	hwpmc_total_rows = 0;
	for (i = 0; i < md->nclasses && hwpmc_nclass < ARRAY_SIZE(hwpmc_classes);
	     i++) {
		const struct hwpmc_class_ops *ops = md->classes[i];
		struct hwpmc_class *cls = &hwpmc_classes[hwpmc_nclass];

		cls->ops = ops;
		n = ops->probe(cls);
		if (!n)
			continue;
		if (hwpmc_total_rows + n > HWPMC_MAX_ROWS) {
			pr_warn("%s: %u rows exceed the %u supported; ignored\n",
				ops->name, n, HWPMC_MAX_ROWS);
			continue;
		}
		cls->firstrow = hwpmc_total_rows;
		cls->nrows = n;
		hwpmc_classes_callbacks(ops);
		hwpmc_nclass++;
		hwpmc_total_rows += n;
	}
	if (md->switch_task)
		hwpmc_switch_fns[hwpmc_nswitch++] = md->switch_task;
	return 0;
}

/* At unload, once the hooks are detached. */
void hwpmc_classes_fini(void)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->unprobe)
			hwpmc_classes[i].ops->unprobe(&hwpmc_classes[i]);
	hwpmc_nswitch = 0;
	hwpmc_nexit = 0;
	hwpmc_nevent = 0;
	hwpmc_nclass = 0;
	hwpmc_total_rows = 0;
	if (hwpmc_md)
		hwpmc_md->fini();
	hwpmc_md = NULL;
}

/* The machine's PMC_CPU_* (GETCPUINFO, the log's INITIALIZE record). */
u32 hwpmc_cputype(void)
{
	return hwpmc_md->cputype;
}

/*
 * sched_process_fork, before @child first runs: tracepoint context (the
 * parent's process context, locks of fork held): no sleeping.
 */
void hwpmc_classes_fork(struct task_struct *parent, struct task_struct *child)
{
	if (hwpmc_md->fork_task)
		hwpmc_md->fork_task(parent, child);
}

/*
 * User-mode reads of the machine's counters in @mm (iface/pctr.c); the
 * machine may not offer them (-EOPNOTSUPP).  A grant holds the process
 * hooks, attached before it is given: the machine's fork callback keeps
 * it from a forked child.  Process context, no lock held.
 */
int hwpmc_classes_rdpmc_mm_get(struct mm_struct *mm)
{
	int err;

	if (!hwpmc_md->rdpmc_mm_get)
		return -EOPNOTSUPP;
	err = hwpmc_hook_get(HWPMC_HOOK_PROC);
	if (err)
		return err;
	err = hwpmc_md->rdpmc_mm_get(mm);
	if (err)
		hwpmc_hook_put(HWPMC_HOOK_PROC);
	return err;
}

void hwpmc_classes_rdpmc_mm_put(struct mm_struct *mm)
{
	if (!hwpmc_md->rdpmc_mm_put)
		return;
	hwpmc_md->rdpmc_mm_put(mm);
	hwpmc_hook_put(HWPMC_HOOK_PROC);
}

/*
 * A thread exits (sched_process_exit, the exiting task is current): any
 * thread but the last, or the last one of a monitored process before its
 * targets go.  No sleeping.
 */
void hwpmc_classes_task_exit(struct task_struct *task)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nexit; i++)
		hwpmc_exit_ops[i]->task_exit(task);
}

/*
 * A per-event hook fired (syscall entry, page fault: current, in its
 * context; migration: any task, from the scheduler, IRQs off).  Never
 * NMI; no locks.
 */
void hwpmc_classes_hook_event(enum hwpmc_kevent ev, struct task_struct *task,
			      struct pt_regs *regs)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nevent; i++)
		hwpmc_event_ops[i]->hook_event(ev, task, regs);
}

unsigned int hwpmc_nclasses(void)
{
	return hwpmc_nclass;
}

const struct hwpmc_class *hwpmc_class_at(unsigned int i)
{
	return i < hwpmc_nclass ? &hwpmc_classes[i] : NULL;
}

const struct hwpmc_class *hwpmc_class_find(u32 class)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->class == class)
			return &hwpmc_classes[i];
	return NULL;
}

const struct hwpmc_class *hwpmc_class_of_row(unsigned int row)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (row - hwpmc_classes[i].firstrow < hwpmc_classes[i].nrows)
			return &hwpmc_classes[i];
	return NULL;
}

/* CPU hotplug callbacks, run on @cpu itself. */
void hwpmc_classes_cpu_online(unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->cpu_online)
			hwpmc_classes[i].ops->cpu_online(cpu);
}

void hwpmc_classes_cpu_offline(unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < hwpmc_nclass; i++)
		if (hwpmc_classes[i].ops->cpu_offline)
			hwpmc_classes[i].ops->cpu_offline(cpu);
}

/* Any context, NMI included: no locks. */
unsigned int hwpmc_nrows(void)
{
	return hwpmc_total_rows;
}

/* The hwpmc(4) DIAGNOSTICS announcement: [class/npmc/capabilities]... */
void hwpmc_classes_announce(void)
{
	char buf[160];
	unsigned int i, len = 0;

	for (i = 0; i < hwpmc_nclass; i++) {
		const struct hwpmc_class *c = &hwpmc_classes[i];

		len += scnprintf(buf + len, sizeof(buf) - len, " %s/%u/0x%x",
				 c->ops->name, c->nrows, c->caps);
	}
	pr_info("%s\n", buf);
}
