// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: privilege.  FreeBSD's "non-jailed super-user" is a capability in
 * the initial user namespace: capable() checks exactly that, so root in a
 * container (a non-initial user namespace) is treated as jailed.
 */
#include <linux/capability.h>

#include "hwpmc.h"

/* System-wide PMCs, attaching anywhere: CAP_PERFMON (or CAP_SYS_ADMIN). */
bool hwpmc_priv_system(void)
{
	return perfmon_capable();
}

/* PMCADMIN (FreeBSD's PRIV_PMC_MANAGE). */
bool hwpmc_priv_admin(void)
{
	return capable(CAP_SYS_ADMIN);
}
