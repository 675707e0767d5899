/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <machine/pctr.h> for programs written for OpenBSD's pctr(4): put
 * libhwpmc's compat/include directory on the include path (-I, or
 * pkg-config's hwpmc-compat) and /dev/pctr's Linux header,
 * <linux/pctr.h>, is found under the BSD name, with the BSD types and
 * the user-mode rdtsc() and rdpmc() of OpenBSD's header.
 */
#ifndef _HWPMC_COMPAT_MACHINE_PCTR_H_
#define _HWPMC_COMPAT_MACHINE_PCTR_H_

#include <linux/pctr.h>
#include <stdint.h>
#include <sys/types.h>

typedef uint64_t pctrval;

#ifndef _KERNEL
/* The time-stamp counter. */
#define rdtsc()                                                                                    \
    ({                                                                                             \
        uint32_t _lo, _hi;                                                                         \
        __asm__ volatile("rdtsc" : "=a"(_lo), "=d"(_hi));                                          \
        ((uint64_t)_hi << 32) | _lo;                                                               \
    })

/*
 * Counter @pmc (0-3) from user mode: its 48 bits (the counters' width
 * here).  Allowed to a process that opened /dev/pctr with the privilege
 * of system-scope counting, while that descriptor is open (pctr(4)).
 */
#define rdpmc(pmc)                                                                                 \
    ({                                                                                             \
        uint32_t _lo, _hi;                                                                         \
        __asm__ volatile("rdpmc" : "=a"(_lo), "=d"(_hi) : "c"(pmc));                               \
        ((uint64_t)(_hi & 0xffff) << 32) | _lo;                                                    \
    })
#endif

#endif /* _HWPMC_COMPAT_MACHINE_PCTR_H_ */
