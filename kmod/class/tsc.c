// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the TSC class.  One row, shared by any number of system-scope
 * counting PMCs; a read is RDTSC, and the counter can be neither written
 * nor stopped.  As on FreeBSD, an initial count and a write (PMCRW,
 * PMCSETCOUNT) are accepted and ignored: the TSC is the kernel's clock.
 */
#include <asm/cpufeature.h>
#include <asm/msr.h>

#include "../hwpmc.h"

static unsigned int tsc_probe(struct hwpmc_class *cls)
{
	cls->width = 64;
	cls->caps = PMC_CAP_READ;
	return boot_cpu_has(X86_FEATURE_TSC) ? 1 : 0;
}

static int tsc_allocate(struct hwpmc_pmc *pm,
			const struct pmc_op_pmcallocate *a)
{
	/* One event (the TSC itself); an initial count is ignored. */
	if (pm->event || a->pm_config || a->pm_config1)
		return -EINVAL;
	return 0;
}

static void tsc_nop(struct hwpmc_pmc *pm)
{
}

static u64 tsc_read(struct hwpmc_pmc *pm)
{
	return rdtsc_ordered();
}

/* FreeBSD's tsc_write_pmc(): the TSC is not written, and that is no error. */
static void tsc_write(struct hwpmc_pmc *pm, u64 value)
{
}

const struct hwpmc_class_ops hwpmc_tsc_ops = {
	.name		= "TSC",
	.class		= PMC_CLASS_TSC,
	.modes		= BIT(PMC_MODE_SC),
	.shared_row	= true,
	.probe		= tsc_probe,
	.allocate	= tsc_allocate,
	.release	= tsc_nop,
	.start		= tsc_nop,
	.stop		= tsc_nop,
	.read		= tsc_read,
	.write		= tsc_write,
};
