/* SPDX-License-Identifier: BSD-2-Clause */
/* <pmc.h>: FreeBSD's spelling of <hwpmc/pmc.h>. */
#ifndef HWPMC_PMC_SHIM_H
#define HWPMC_PMC_SHIM_H
#include <hwpmc/pmc.h>
#endif
