/* SPDX-License-Identifier: BSD-2-Clause */
/* <pmc.h> is a C header: this file is compiled as C11 with the warnings. */
#include <pmc.h>
#include <pmclog.h>

#include <stddef.h>
#include <string.h>

#ifndef PMC_CLASS_SOFT
#error "the enumerators stay visible to #ifdef"
#endif

int hwpmc_c_compat_check(void);

int hwpmc_c_compat_check(void) {
    enum pmc_mode mode = PMC_MODE_TC;
    enum pmc_class cls = PMC_CLASS_SOFT;
    const char *n = pmc_name_of_class(cls);
    pmc_id_t id = PMC_ID_INVALID;
    pmc_value_t v = 0;
    struct pmc_driverstats ds;
    (void)ds;
    (void)v;
    if (!PMC_IS_COUNTING_MODE(mode) || n == NULL || id != PMC_ID_INVALID)
        return -1;
    return (int)sizeof(struct pmc_pmcinfo);
}

/* <pmclog.h> from C: FreeBSD's usage compiles; the layout is C++'s. */
size_t hwpmc_c_pmclog_layout(size_t *offset_of_union, size_t *size_of_cc);

size_t hwpmc_c_pmclog_layout(size_t *offset_of_union, size_t *size_of_cc) {
    struct pmclog_ev ev;
    void *p = pmclog_open(PMCLOG_FD_NONE);
    memset(&ev, 0, sizeof(ev));
    int rc = -1;
    if (p != NULL) {
        rc = pmclog_read(p, &ev);
        pmclog_close(p);
    }
    if (rc != -1 || ev.pl_state != PMCLOG_REQUIRE_DATA)
        return 0;
    switch (ev.pl_type) {
    case PMCLOG_TYPE_CALLCHAIN:
        (void)PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(ev.pl_u.pl_cc.pl_cpuflags);
        break;
    default:
        break;
    }
    *offset_of_union = offsetof(struct pmclog_ev, pl_u);
    *size_of_cc = sizeof(ev.pl_u.pl_cc);
    return sizeof(struct pmclog_ev);
}
