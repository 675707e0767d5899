// SPDX-License-Identifier: BSD-2-Clause
#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

extern "C" int hwpmc_c_compat_check(void);

TEST(CCompat, HeaderWorksFromC) {
    EXPECT_GT(hwpmc_c_compat_check(), 0);
}
