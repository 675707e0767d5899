// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the TSC class.  One shareable row, system-scope counting only;
 * a read is RDTSC.
 */
#include <asm/cpufeature.h>

#include "../hwpmc.h"

static unsigned int tsc_probe(void)
{
	return boot_cpu_has(X86_FEATURE_TSC) ? 1 : 0;
}

const struct hwpmc_class_ops hwpmc_tsc_ops = {
	.name	= "TSC",
	.class	= PMC_CLASS_TSC,
	.caps	= PMC_CAP_READ,
	.width	= 64,
	.probe	= tsc_probe,
};
