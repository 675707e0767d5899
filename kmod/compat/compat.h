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
#include <linux/mm_types.h>
#include <linux/rcupdate.h>

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

#endif /* _HWPMC_COMPAT_H */
