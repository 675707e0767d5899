/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OS-level shim for BSD programs built on Linux (selftests/compat): the
 * BSDs' <machine/cpu.h> is included by pctr(4) and perfmon(4) programs for
 * nothing they use; their <sys/cdefs.h> gives __dead and __dead2.
 */
#ifndef HWPMC_SHIM_MACHINE_CPU_H
#define HWPMC_SHIM_MACHINE_CPU_H

#include <sys/cdefs.h>

#ifndef __dead
#define __dead		__attribute__((__noreturn__))
#endif
#ifndef __dead2
#define __dead2		__attribute__((__noreturn__))
#endif

#endif
