/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: kernel-version shims.  The only place that tests
 * LINUX_VERSION_CODE; logic files call these instead.
 */
#ifndef _HWPMC_COMPAT_H
#define _HWPMC_COMPAT_H

#include <linux/version.h>
#include <linux/sysctl.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/perf_event.h>

/*
 * Sysctl tables: up to 6.5 a table ends with an empty sentinel entry; from
 * 6.6 the size is passed and sentinels are gone.  Callers keep a sentinel
 * at table[n] and pass n, the number of real entries.
 */
static inline struct ctl_table_header *
hwpmc_register_sysctl(const char *path, struct ctl_table *table, size_t n)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	return register_sysctl_sz(path, table, n);
#else
	return register_sysctl(path, table);
#endif
}

/*
 * A reference to the executable file of @mm, or NULL.  get_file_rcu()
 * takes the RCU-protected pointer's address from 6.7 on.
 */
static inline struct file *hwpmc_get_mm_exe_file(struct mm_struct *mm)
{
	struct file *f;

	rcu_read_lock();
#if KERNEL_VERSION(6, 7, 0) <= LINUX_VERSION_CODE
	f = get_file_rcu(&mm->exe_file);
#else
	f = rcu_dereference(mm->exe_file);
	if (f && !get_file_rcu(f))
		f = NULL;
#endif
	rcu_read_unlock();
	return f;
}

/*
 * Would perf let the current task see kernel mode (exclude_kernel = 0)?
 * From 6.12 perf_allow_kernel() is exported: perf_event_paranoid <= 1 or
 * CAP_PERFMON, then the LSM's perf_event hook (SELinux, ...).  Before, it
 * is an inline over the unexported sysctl_perf_event_paranoid and the
 * unexported LSM hook: read the sysctl through hwpmc's private procfs
 * (hwpmc_read_sysctl_int(), hwpmc.h); unreadable denies.  The LSM hook
 * cannot be consulted there.
 */
static inline bool hwpmc_perf_allow_kernel(void)
{
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
	return perf_allow_kernel() == 0;
#else
	int paranoid;

	if (perfmon_capable())
		return true;
	if (hwpmc_read_sysctl_int("sys/kernel/perf_event_paranoid", &paranoid))
		return false;
	return paranoid <= 1;
#endif
}

/* Set and clear flags of a VMA being mapped (vm_flags_mod() from 6.3). */
static inline void hwpmc_vm_flags_mod(struct vm_area_struct *vma,
				      vm_flags_t set, vm_flags_t clear)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

#endif /* _HWPMC_COMPAT_H */
