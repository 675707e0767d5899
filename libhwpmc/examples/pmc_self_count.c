/* SPDX-License-Identifier: BSD-2-Clause */
/* FreeBSD style(9), as the programs it stands for: */
/* clang-format off */
/*
 * A program written only against FreeBSD's documented pmc(3) API: count
 * SOFT-CLOCK.PROF (CPU time) of the process itself while it works.  It
 * builds unchanged on FreeBSD and against libhwpmc on Linux.
 */
#include <sys/types.h>

#include <err.h>
#include <pmc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

int
main(void)
{
	pmc_id_t pmcid;
	pmc_value_t value;
	volatile unsigned long sink = 0;
	unsigned long i;

	if (pmc_init() < 0)
		err(EX_UNAVAILABLE, "pmc_init");
	if (pmc_allocate("SOFT-CLOCK.PROF", PMC_MODE_TC, 0, PMC_CPU_ANY, &pmcid, 0) < 0)
		err(EX_SOFTWARE, "pmc_allocate");
	if (pmc_attach(pmcid, getpid()) < 0)
		err(EX_SOFTWARE, "pmc_attach");
	if (pmc_start(pmcid) < 0)
		err(EX_SOFTWARE, "pmc_start");
	for (i = 0; i < 100000000UL; i++)
		sink += i;
	if (pmc_stop(pmcid) < 0)
		err(EX_SOFTWARE, "pmc_stop");
	if (pmc_read(pmcid, &value) < 0)
		err(EX_SOFTWARE, "pmc_read");
	if (pmc_release(pmcid) < 0)
		err(EX_SOFTWARE, "pmc_release");
	printf("SOFT-CLOCK.PROF: %ju ns (work %lu)\n", (uintmax_t)value, sink);
	return (value > 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
