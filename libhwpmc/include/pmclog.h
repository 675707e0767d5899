/* SPDX-License-Identifier: BSD-2-Clause */
/* <pmclog.h>: FreeBSD's spelling of <hwpmc/pmclog.h>. */
#ifndef HWPMC_PMCLOG_SHIM_H
#define HWPMC_PMCLOG_SHIM_H
#include <hwpmc/pmclog.h>
#endif
