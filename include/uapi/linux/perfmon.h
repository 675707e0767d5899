/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/perfmon: FreeBSD's perfmon(4) over hwpmc's rows
 * (kmod/iface/perfmon.c).
 *
 * The names, values and layouts are those of FreeBSD's <machine/perfmon.h>
 * (struct pmc, struct pmc_data, struct pmc_tstamp, the PMCF_* flags),
 * with Linux's ioctl encoding.  A FreeBSD program includes it as
 * <machine/perfmon.h> through libhwpmc's compat include directory
 * (libhwpmc/compat/include), which adds the field macros (pmc_event,
 * pmc_unit, pmc_flags, pmc_mask, pmc_val), _PATH_PERFMON and the BSD
 * types; this header defines no macro with such a generic name.
 *
 * Counter n is row n of the machine's programmable class (IAP or K8),
 * counting system-wide: PMIOREAD returns the sum over the CPUs, 64 bits.
 * See README "perfmon(4)" and perfmon.4.
 */
#ifndef _UAPI_LINUX_PERFMON_H
#define _UAPI_LINUX_PERFMON_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PERFMON_DEVICE_NAME	"perfmon"	/* /dev/perfmon */

/* Counters at most; fewer where the class has fewer (EINVAL beyond). */
#define NPMC		4

/*
 * PMIOSETUP, PMIOGET.  pmcu_val is the event select's low 32 bits with
 * the flags in bits 16-23: event, unit mask, PMCF_*, counter mask.
 */
struct pmc {
	__s32	pmc_num;
	union {
		struct {
			__u8	pmcus_event;
			__u8	pmcus_unit;
			__u8	pmcus_flags;
			__u8	pmcus_mask;
		} pmcu_s;
		__u32	pmcu_val;
	} pmc_pmcu;
};

#define PMC_ALL		(-1)

#define PMCF_USR	0x01	/* count events in user mode */
#define PMCF_OS		0x02	/* count events in kernel mode */
#define PMCF_E		0x04	/* edge detect */
#define PMCF_PC		0x08	/* pin control: refused (EINVAL) */
#define PMCF_INT	0x10	/* APIC interrupt: ignored (the driver's) */
#define PMCF_EN		0x40	/* enable: ignored (PMIOSTART's) */
#define PMCF_INV	0x80	/* invert the counter mask */

#define PMCF_SYS_FLAGS	(PMCF_INT | PMCF_EN)	/* the user cannot set */

/*
 * PMIOREAD.  __pmcd_pad is the padding of FreeBSD's layout (an int before
 * a quad_t): ignored, since FreeBSD programs leave it uninitialized.
 */
struct pmc_data {
	__s32	pmcd_num;
	__s32	__pmcd_pad;
	__s64	pmcd_value;
};

/* PMIOTSTAMP: the TSC and its rate in MHz (a hint: rounded down). */
struct pmc_tstamp {
	__s32	pmct_rate;
	__s32	__pmct_pad;
	__s64	pmct_value;
};

#define PMIOSETUP	_IOW('5', 1, struct pmc)
#define PMIOSTART	_IOW('5', 2, int)
#define PMIOSTOP	_IOW('5', 3, int)
#define PMIOREAD	_IOWR('5', 4, struct pmc_data)
#define PMIORESET	_IOW('5', 5, int)
#define PMIOTSTAMP	_IOR('5', 6, struct pmc_tstamp)
#define PMIOGET		_IOWR('5', 7, struct pmc)

#endif /* _UAPI_LINUX_PERFMON_H */
