/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Written against FreeBSD's <pmc.h> and <sys/pmc.h> names (libhwpmc's
 * compat include directory): each function issues FreeBSD-layout
 * operations and reports what came back, for test_bsd_compat.cpp (which
 * cannot see these layouts: its <linux/hwpmc.h> has the same tags).
 */
#include <pmc.h>
#include <sys/pmc.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "freebsd_shim.h"

int fb_allocate(int cls, uint32_t ev, int mode, uint32_t flags, uint32_t cpu, uint64_t cfg,
                uint32_t sub, uint32_t *id) {
    struct pmc_op_pmcallocate a;

    memset(&a, 0, sizeof(a));
    a.pm_class = (enum pmc_class)cls;
    a.pm_ev = (enum pmc_event)ev;
    a.pm_mode = (enum pmc_mode)mode;
    a.pm_flags = flags;
    a.pm_cpu = cpu;
    if (cls == PMC_CLASS_K8) {
        a.pm_md.pm_amd.pm_amd_config = cfg;
        a.pm_md.pm_amd.pm_amd_sub_class = sub;
    } else if (cls == PMC_CLASS_IAP) {
        a.pm_md.pm_iap.pm_iap_config = cfg;
        a.pm_md.pm_iap.pm_iap_rsp = sub;
    } else if (cls == PMC_CLASS_IAF) {
        a.pm_md.pm_iaf.pm_iaf_flags = cfg;
    }
    if (PMC_CALL(PMCALLOCATE, &a) < 0)
        return errno;
    *id = a.pm_pmcid;
    return 0;
}

int fb_attach(uint32_t id, int pid) {
    struct pmc_op_pmcattach a = {.pm_pmc = id, .pm_pid = pid};

    return pmc_freebsd_op(PMC_OP_PMCATTACH, &a) < 0 ? errno : 0;
}

int fb_simple(int op, uint32_t id) {
    struct pmc_op_simple s = {.pm_pmcid = id};

    return pmc_freebsd_op(op, &s) < 0 ? errno : 0;
}

int fb_rw(uint32_t id, uint32_t flags, uint64_t *value) {
    struct pmc_op_pmcrw rw = {.pm_flags = flags, .pm_pmcid = id, .pm_value = *value};

    if (PMC_CALL(PMCRW, &rw) < 0)
        return errno;
    *value = rw.pm_value;
    return 0;
}

int fb_rows(int cpu, uint32_t *nrows, uint32_t *events, uint32_t *classes, uint32_t max) {
    struct pmc_pmcinfo *pi;
    const struct pmc_cpuinfo *ci;
    uint32_t i;

    if (pmc_cpuinfo(&ci) < 0 || pmc_pmcinfo(cpu, &pi) < 0)
        return errno;
    *nrows = ci->pm_npmc;
    for (i = 0; i < ci->pm_npmc && i < max; i++) {
        events[i] = (uint32_t)pi->pm_pmcs[i].pm_event;
        classes[i] = (uint32_t)pi->pm_pmcs[i].pm_class;
    }
    free(pi);
    return 0;
}

int fb_version(uint32_t *v) {
    return PMC_CALL(GETMODULEVERSION, v) < 0 ? errno : 0;
}

int fb_stats(unsigned *syscalls) {
    struct pmc_driverstats ds;

    if (pmc_get_driver_stats(&ds) < 0)
        return errno;
    *syscalls = ds.pm_syscalls;
    return 0;
}

const char *fb_name_of_event(uint32_t ev) {
    return pmc_name_of_event((enum pmc_event)ev);
}

int fb_constants_ok(void) {
    /* The names FreeBSD programs use exist, with the right shapes. */
    struct pmc_op_pmcallocate a;

    (void)a.pm_md.pm_ibs.ibs_ctl;
    return strcmp(PMC_MODULE_NAME, "hwpmc") == 0 && PMC_CLASS_IBS != PMC_CLASS_K8 &&
           PMC_AMD_SUB_CLASS_DATA_FABRIC == 2 && PMC_CPU_INTEL_PIV == 0x86 &&
           PMC_F_EV_PMU == 0x200 && PMC_OP_PMCX86GETMSR == PMC_OP_PMCGETMSR &&
           sizeof(((struct pmc_op_pmcattach *)0)->pm_pmc) == 4;
}
