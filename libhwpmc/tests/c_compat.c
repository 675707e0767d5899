/* SPDX-License-Identifier: BSD-2-Clause */
/* <pmc.h> is a C header: this file is compiled as C11 with the warnings. */
#include <pmc.h>

#include <stddef.h>

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
