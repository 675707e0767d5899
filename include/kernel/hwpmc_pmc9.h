/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetBSD's pmc(9) for other kernel modules, over hwpmc (kmod/iface/pmc9.c;
 * the functions are exported GPL from hwpmc.ko: build a client module in
 * the same Kbuild tree or give modpost hwpmc's Module.symvers).
 *
 * A task (struct task_struct *) plays NetBSD's lwp; as in hwpmc, counts
 * belong to its process (all of its threads).
 *
 * Counters (ctr, 0 to pmc_get_num_counters() - 1): first the rows of the
 * machine's programmable class (IAP on Intel, K8 on AMD; none in a VM
 * without a PMU), then the rows of the SOFT class (software events, any
 * machine).  pmc_get_counter_type(ctr) says which (PMC_CLASS_IAP,
 * PMC_CLASS_K8 or PMC_CLASS_SOFT of <linux/hwpmc.h>); -1 gives the CPU's
 * counter family (hwpmc's PMC_CPU_*).
 *
 * An event id is PMC9_EVID(event, config): hwpmc's pm_event and pm_config
 * for that class (x86: the event select, and its bits 8-31 in place: unit
 * mask, PMC_X86_CONFIG_USR/OS/EDGE/INV, counter mask; SOFT: a
 * PMC_EV_SOFT_* code).
 *
 * Errors are negative errnos (NetBSD returns positive ones): -EINVAL for
 * a bad ctr or event, -EBUSY when the row is held (by a kernel counter, by
 * another task's counter of the same ctr in another owner's system-scope
 * use, by hwpmc, pctr, perfmon or perf), -ENOENT when the task's counter
 * is not configured, -EPERM / -EACCES as hwpmc decides for the current
 * credentials, -EOPNOTSUPP for what is not implemented.
 *
 * Semantics: pmc_configure_counter() sets the counter up for the task's
 * process and every process it forks from then on; a forked child's
 * counter starts at zero and runs if the parent's was enabled (it is the
 * same hwpmc PMC, attached with PMC_F_DESCENDANTS).  A descendant that
 * exits leaves its count to the counter, so pmc_get_counter_value() with
 * PMC_VALUE_FLAGS_CHILDREN returns the task's own count plus every exited
 * descendant's (pmc_accumulate() is only needed for a child whose counter
 * was configured separately).  A kernel counter (pmc_alloc_kernel_counter)
 * counts on every CPU and takes the row away from processes (EBUSY);
 * hwpmc-control -l shows it owned by pid 0.  pmc_save_context() and
 * pmc_restore_context() do nothing: hwpmc's scheduler hook switches
 * counters itself.  pmc_start_profiling(): cfg->reset_value is the sampling
 * period; kernel-mode PCs of every CPU go to the /proc/profile-format
 * histogram /sys/kernel/debug/hwpmc-profile (README "pmc(9)").
 */
#ifndef _HWPMC_PMC9_H
#define _HWPMC_PMC9_H

#include <linux/types.h>

struct task_struct;

typedef u64 pmc_evid_t;
typedef u64 pmc_ctr_t;

#define PMC9_EVID(event, config)	(((u64)(config) << 32) | (u32)(event))

struct pmc_counter_cfg {
	pmc_evid_t	event_id;
	pmc_ctr_t	reset_value;	/* the count it starts from */
	u32		flags;		/* unused, 0 */
};

#define PMC_VALUE_FLAGS_CHILDREN	0x1

int pmc_get_num_counters(void);
int pmc_get_counter_type(int ctr);
void pmc_save_context(struct task_struct *l);
void pmc_restore_context(struct task_struct *l);
int pmc_enable_counter(struct task_struct *l, int ctr);
int pmc_disable_counter(struct task_struct *l, int ctr);
int pmc_counter_isrunning(struct task_struct *l, int ctr);
int pmc_counter_isconfigured(struct task_struct *l, int ctr);
int pmc_configure_counter(struct task_struct *l, int ctr,
			  struct pmc_counter_cfg *cfg);
/* @l NULL: the kernel counter @ctr (the sum over the CPUs). */
int pmc_get_counter_value(struct task_struct *l, int ctr, int flags,
			  u64 *pval);
int pmc_accumulate(struct task_struct *l_parent,
		   struct task_struct *l_exiting);
int pmc_alloc_kernel_counter(int ctr, struct pmc_counter_cfg *cfg);
int pmc_free_kernel_counter(int ctr);
int pmc_start_profiling(int ctr, struct pmc_counter_cfg *cfg);
int pmc_stop_profiling(int ctr);
int pmc_enabled(struct task_struct *l);

#define PMC_ENABLED(l)	pmc_enabled(l)

#endif /* _HWPMC_PMC9_H */
