/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/pctr: OpenBSD's pctr(4) over hwpmc's rows (kmod/iface/pctr.c).
 *
 * The names, values and layout are those of OpenBSD's amd64 <machine/pctr.h>
 * (struct pctrst: four functions, the TSC, four counters; the function
 * word is the event select's low 32 bits), with Linux's ioctl encoding.
 * A BSD program includes it as <machine/pctr.h> through libhwpmc's compat
 * include directory (libhwpmc/compat/include), which adds the BSD types.
 *
 * Counter n is row n of the machine's programmable class (IAP or K8),
 * counting system-wide: PCIOCRD returns the counters of the CPU that ran
 * the ioctl, as RDPMC does.  See README "pctr(4)" and pctr.4.
 */
#ifndef _UAPI_LINUX_PCTR_H
#define _UAPI_LINUX_PCTR_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PCTR_DEVICE_NAME	"pctr"	/* /dev/pctr */

#define PCTR_NUM	4

struct pctrst {
	__u32	pctr_fn[PCTR_NUM];	/* the functions set by PCIOCSx */
	__u64	pctr_tsc;		/* the time-stamp counter */
	__u64	pctr_hwc[PCTR_NUM];	/* the counters (this CPU's) */
};

/* The function word: event select bits 0-31. */
#define PCTR_U		0x010000	/* count user mode */
#define PCTR_K		0x020000	/* count kernel mode */
#define PCTR_E		0x040000	/* edge detect */
#define PCTR_EN		0x400000	/* enable the counter */
#define PCTR_I		0x800000	/* invert the counter mask */

/* Unit mask bits (event-specific). */
#define PCTR_UM_M	0x0800		/* modified cache lines */
#define PCTR_UM_E	0x0400		/* exclusive cache lines */
#define PCTR_UM_S	0x0200		/* shared cache lines */
#define PCTR_UM_I	0x0100		/* invalid cache lines */
#define PCTR_UM_MESI	(PCTR_UM_M | PCTR_UM_E | PCTR_UM_S | PCTR_UM_I)
#define PCTR_UM_A	0x2000		/* any initiator */

#define PCTR_UM_SHIFT	8		/* left shift of the unit mask */
#define PCTR_CM_SHIFT	24		/* left shift of the counter mask */

/*
 * Bits a function may not have (EINVAL): pin control (19), APIC interrupt
 * (20), AnyThread (21), as on OpenBSD.
 */
#define PCTR_FN_INVALID	0x380000

#define PCIOCRD	_IOR('c', 1, struct pctrst)	/* read the counters */
#define PCIOCS0	_IOW('c', 8, unsigned int)	/* set counter 0's function */
#define PCIOCS1	_IOW('c', 9, unsigned int)	/* set counter 1's function */
#define PCIOCS2	_IOW('c', 10, unsigned int)	/* set counter 2's function */
#define PCIOCS3	_IOW('c', 11, unsigned int)	/* set counter 3's function */

#endif /* _UAPI_LINUX_PCTR_H */
