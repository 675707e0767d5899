// SPDX-License-Identifier: BSD-2-Clause
// The fixture of the C API tests (test_capi.cpp, test_bsd_compat.cpp): the
// fake kernel installed and the library's state reset around each test;
// init() is pmc_init(), which must succeed.
#pragma once

#include "capi_state.hpp"
#include "fake_kernel.hpp"

#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace hwpmc::testing {

class capi_test : public ::testing::Test {
protected:
    fake_kernel &k = fake_kernel::instance();

    void SetUp() override {
        hwpmc::detail::capi_reset();
        k.install();
    }
    void TearDown() override {
        hwpmc::detail::capi_reset();
        k.uninstall();
    }
    void init() { ASSERT_EQ(pmc_init(), 0) << std::strerror(errno); }
};

} // namespace hwpmc::testing
