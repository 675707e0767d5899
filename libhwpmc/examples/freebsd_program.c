/* SPDX-License-Identifier: BSD-2-Clause */
/* FreeBSD style(9), as the programs it stands for: */
/* clang-format off */
/*
 * A program written against FreeBSD's <pmc.h> and <sys/pmc.h> names and
 * layouts, built with libhwpmc's compat include directory (issue 18):
 * pmc_cpuinfo() and pmc_pmcinfo() with FreeBSD's structures, the raw
 * operations through PMC_CALL() with pm_ev and pm_pmc, the TSC with an
 * initial count and a write (FreeBSD's share/examples/hwpmc/overhead.c
 * does both), GETPMCINFO's pm_event named by pmc_name_of_event() (the
 * SOFT-CLOCK.HARD row FreeBSD's pmccontrol -l named "TSC"), and
 * PMCATTACH of a running PMC refused with EBUSY.  Exit 0, or 1 with a
 * message; 77 without /dev/hwpmc.
 */
#include <sys/types.h>
#include <sys/pmc.h>

#include <err.h>
#include <errno.h>
#include <pmc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "freebsd-program: line %d: %s (%s)\n",	\
		    __LINE__, #cond, strerror(errno));			\
		failures++;						\
	}								\
} while (0)

int
main(void)
{
	const struct pmc_cpuinfo *ci;
	struct pmc_pmcinfo *pi;
	struct pmc_op_pmcallocate pa;
	struct pmc_op_pmcattach at;
	struct pmc_op_simple sp;
	struct pmc_op_pmcrw rw;
	pmc_id_t tsc, sys;
	pmc_value_t v0, v1;
	uint32_t version, r;
	int found = 0;
	volatile long sink = 0;
	long i;

	if (access("/dev/hwpmc", F_OK) != 0)
		return (77);
	if (pmc_init() < 0)
		err(1, "pmc_init");
	CHECK(pmc_cpuinfo(&ci) == 0);
	printf("%s, %u CPUs, %u PMCs, %u classes, module %s\n",
	    pmc_name_of_cputype(ci->pm_cputype), ci->pm_ncpu, ci->pm_npmc,
	    ci->pm_nclass, PMC_MODULE_NAME);
	CHECK(PMC_CALL(GETMODULEVERSION, &version) == 0);
	CHECK((version >> 24) == PMC_VERSION_MAJOR);

	/* overhead.c: "TSC", system scope, an initial count, a write. */
	CHECK(pmc_allocate("TSC", PMC_MODE_SC, 0, 0, &tsc, 1000) == 0);
	CHECK(pmc_start(tsc) == 0);
	CHECK(pmc_read(tsc, &v0) == 0);
	CHECK(pmc_stop(tsc) == 0);
	CHECK(pmc_write(tsc, 0) == 0);
	CHECK(pmc_read(tsc, &v1) == 0 && v1 >= v0);

	/* A raw PMCALLOCATE with FreeBSD's layout: pm_ev, pm_md. */
	memset(&pa, 0, sizeof(pa));
	pa.pm_class = PMC_CLASS_SOFT;
	pa.pm_ev = PMC_EV_SOFT_SYSCALL_ENTER;
	pa.pm_mode = PMC_MODE_TC;
	pa.pm_cpu = PMC_CPU_ANY;
	CHECK(PMC_CALL(PMCALLOCATE, &pa) == 0);
	at.pm_pmc = pa.pm_pmcid;
	at.pm_pid = getpid();
	CHECK(PMC_CALL(PMCATTACH, &at) == 0);
	sp.pm_pmcid = pa.pm_pmcid;
	CHECK(PMC_CALL(PMCSTART, &sp) == 0);
	for (i = 0; i < 1000; i++)
		sink += getppid();
	/* FreeBSD: attached only while allocated or stopped. */
	at.pm_pid = getppid();
	CHECK(PMC_CALL(PMCATTACH, &at) < 0 && errno == EBUSY);
	/* FreeBSD: PMCRW needs NEWVALUE or OLDVALUE. */
	memset(&rw, 0, sizeof(rw));
	rw.pm_pmcid = pa.pm_pmcid;
	CHECK(PMC_CALL(PMCRW, &rw) < 0 && errno == EINVAL);
	rw.pm_flags = PMC_F_OLDVALUE;
	CHECK(PMC_CALL(PMCRW, &rw) == 0 && rw.pm_value >= 1000);

	/*
	 * GETPMCINFO: pm_event names the row's event (pmccontrol -l's
	 * pmc_name_of_event(pm_event)).  A system PMC of ours on CPU 0.
	 */
	CHECK(pmc_allocate("SOFT-CLOCK.HARD", PMC_MODE_SC, 0, 0, &sys, 0) == 0);
	CHECK(pmc_pmcinfo(0, &pi) == 0);
	for (r = 0; r < ci->pm_npmc; r++) {
		const char *ev;

		if (pi->pm_pmcs[r].pm_mode != PMC_MODE_SC ||
		    pi->pm_pmcs[r].pm_ownerpid != getpid())
			continue;
		ev = pmc_name_of_event(pi->pm_pmcs[r].pm_event);
		printf("row %u %s: %s\n", r, pi->pm_pmcs[r].pm_name,
		    ev ? ev : "(null)");
		CHECK(pi->pm_pmcs[r].pm_event == PMC_EV_SOFT_CLOCK_HARD);
		CHECK(ev != NULL && strcmp(ev, "CLOCK.HARD") == 0);
		found = 1;
	}
	free(pi);
	CHECK(found);
	CHECK(pmc_release(sys) == 0);
	CHECK(PMC_CALL(PMCSTOP, &sp) == 0);
	CHECK(PMC_CALL(PMCRELEASE, &sp) == 0);
	CHECK(pmc_release(tsc) == 0);
	printf("%s\n", failures ? "FAILED" : "ok");
	return (failures ? 1 : 0);
}
