/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <machine/perfmon.h> for programs written for FreeBSD's perfmon(4): put
 * libhwpmc's compat/include directory on the include path and
 * /dev/perfmon's Linux header, <linux/perfmon.h>, is found under the BSD
 * name, with FreeBSD's field macros, _PATH_PERFMON and quad_t.
 */
#ifndef _HWPMC_COMPAT_MACHINE_PERFMON_H_
#define _HWPMC_COMPAT_MACHINE_PERFMON_H_

#include <linux/perfmon.h>
#include <sys/types.h>

#define pmc_event pmc_pmcu.pmcu_s.pmcus_event
#define pmc_unit pmc_pmcu.pmcu_s.pmcus_unit
#define pmc_flags pmc_pmcu.pmcu_s.pmcus_flags
#define pmc_mask pmc_pmcu.pmcu_s.pmcus_mask
#define pmc_val pmc_pmcu.pmcu_val

#define _PATH_PERFMON "/dev/" PERFMON_DEVICE_NAME

#endif /* _HWPMC_COMPAT_MACHINE_PERFMON_H_ */
