/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc: kernel-version shims.  The only place that tests
 * LINUX_VERSION_CODE; logic files call these instead.
 */
#ifndef _HWPMC_COMPAT_H
#define _HWPMC_COMPAT_H

#include <linux/version.h>
#include <linux/sysctl.h>

/*
 * Sysctl tables: up to 6.5 a table ends with an empty sentinel entry; from
 * 6.6 the size is passed and sentinels are gone.  Callers keep a sentinel
 * at table[n] and pass n, the number of real entries.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define hwpmc_register_sysctl(path, table, n) register_sysctl_sz(path, table, n)
#else
#define hwpmc_register_sysctl(path, table, n) register_sysctl(path, table)
#endif

#endif /* _HWPMC_COMPAT_H */
