// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: per-CPU sample rings (filled in interrupt/NMI context without
 * locks, drained outside it into the owners' logs).
 */
#include "hwpmc.h"

void hwpmc_samples_drain(void)
{
}
