// SPDX-License-Identifier: GPL-2.0
// The pctr command's function words and output (tools/lib/pctr).
#include "lib/pctr.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace hwpmc_tools::pctr;

TEST(Pctr, FunctionWord) {
    uint32_t fn = 1;
    std::string why;
    request r;
    r.event = 0xc0;
    ASSERT_TRUE(function_word(r, &fn, &why));
    EXPECT_EQ(0xc0u | PCTR_U | PCTR_K | PCTR_EN, fn); // neither -U nor -K: both
    r.user = true;
    ASSERT_TRUE(function_word(r, &fn, &why));
    EXPECT_EQ(0xc0u | PCTR_U | PCTR_EN, fn);
    r.user = false;
    r.kernel = true;
    r.edge = r.invert = r.any = r.mesi = true;
    r.umask = 0x01;
    r.cmask = 2;
    ASSERT_TRUE(function_word(r, &fn, &why));
    EXPECT_EQ(0xc0u | 0x0100 | PCTR_UM_A | PCTR_UM_MESI | PCTR_K | PCTR_E | PCTR_I | PCTR_EN |
                  2u << PCTR_CM_SHIFT,
              fn);
    EXPECT_EQ(0u, fn & PCTR_FN_INVALID);
    r.disable = true;
    ASSERT_TRUE(function_word(r, &fn, &why));
    EXPECT_EQ(0u, fn);
}

TEST(Pctr, FunctionWordRefusesWideFields) {
    uint32_t fn = 0;
    std::string why;
    request r;
    r.event = 0x100;
    EXPECT_FALSE(function_word(r, &fn, &why));
    EXPECT_NE(std::string::npos, why.find("event"));
    r.event = 0;
    r.umask = 0x100;
    EXPECT_FALSE(function_word(r, &fn, &why));
    EXPECT_NE(std::string::npos, why.find("unit mask"));
    r.umask = 0;
    r.cmask = 0x100;
    EXPECT_FALSE(function_word(r, &fn, &why));
    EXPECT_NE(std::string::npos, why.find("counter mask"));
}

TEST(Pctr, DescribeAndStatus) {
    EXPECT_EQ("-", describe(0));
    EXPECT_EQ("usr,en event=0xc0 umask=0x00 cmask=0", describe(0xc0 | PCTR_U | PCTR_EN));
    struct pctrst st = {};
    st.pctr_tsc = 12345;
    st.pctr_fn[1] = 0x3c | PCTR_K | PCTR_EN;
    st.pctr_hwc[1] = 42;
    EXPECT_EQ("tsc = 12345\n"
              "  0  0x00000000                     0  -\n"
              "  1  0x0042003c                    42  os,en event=0x3c umask=0x00 cmask=0\n",
              format_status(st, 2));
}

} // namespace
