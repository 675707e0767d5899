// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the SOFT class.  Software events backed by Linux mechanisms, so
 * that hwpmc counts and samples on machines without a PMU.
 */
#include "../hwpmc.h"

#define SOFT_NROWS	16

static unsigned int soft_probe(void)
{
	return SOFT_NROWS;
}

const struct hwpmc_class_ops hwpmc_soft_ops = {
	.name	= "SOFT",
	.class	= PMC_CLASS_SOFT,
	.caps	= PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_INTERRUPT |
		  PMC_CAP_USER | PMC_CAP_SYSTEM,
	.width	= 64,
	.probe	= soft_probe,
};
