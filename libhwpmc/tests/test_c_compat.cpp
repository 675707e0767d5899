// SPDX-License-Identifier: BSD-2-Clause
#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>
#include <hwpmc/pmclog.h>

#include <gtest/gtest.h>

extern "C" int hwpmc_c_compat_check(void);
extern "C" size_t hwpmc_c_pmclog_layout(size_t *offset_of_union, size_t *size_of_cc);

TEST(CCompat, HeaderWorksFromC) {
    EXPECT_GT(hwpmc_c_compat_check(), 0);
}

TEST(CCompat, PmclogLayoutIsTheSameInC) {
    size_t off = 0, cc = 0;
    EXPECT_EQ(hwpmc_c_pmclog_layout(&off, &cc), sizeof(struct pmclog_ev));
    EXPECT_EQ(off, offsetof(struct pmclog_ev, pl_u));
    EXPECT_EQ(cc, sizeof(pmclog_ev_callchain));
}
