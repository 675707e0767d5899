// SPDX-License-Identifier: BSD-2-Clause
// pmc_name_of_*(): FreeBSD's names, NULL + EINVAL outside the tables.
#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace {

template <typename F, typename E>
void expect_invalid(F f, E value) {
    errno = 0;
    EXPECT_EQ(f(value), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(Names, Classes) {
    EXPECT_STREQ(pmc_name_of_class(PMC_CLASS_TSC), "TSC");
    EXPECT_STREQ(pmc_name_of_class(PMC_CLASS_K8), "K8");
    EXPECT_STREQ(pmc_name_of_class(PMC_CLASS_IAF), "IAF");
    EXPECT_STREQ(pmc_name_of_class(PMC_CLASS_IAP), "IAP");
    EXPECT_STREQ(pmc_name_of_class(PMC_CLASS_SOFT), "SOFT");
    expect_invalid(pmc_name_of_class, static_cast<pmc_class>(1));
    expect_invalid(pmc_name_of_class, static_cast<pmc_class>(0x14));
}

TEST(Names, CpuTypes) {
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_GENERIC), "GENERIC");
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_INTEL_ARCH), "INTEL_ARCH");
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_AMD_K8), "AMD_K8");
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_AMD_EXT), "AMD_EXT");
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_AMD_V2), "AMD_V2");
    expect_invalid(pmc_name_of_cputype, static_cast<pmc_cputype>(6)); // 5: FreeBSD's AMD_K7
}

TEST(Names, Modes) {
    EXPECT_STREQ(pmc_name_of_mode(PMC_MODE_SS), "SS");
    EXPECT_STREQ(pmc_name_of_mode(PMC_MODE_SC), "SC");
    EXPECT_STREQ(pmc_name_of_mode(PMC_MODE_TS), "TS");
    EXPECT_STREQ(pmc_name_of_mode(PMC_MODE_TC), "TC");
    expect_invalid(pmc_name_of_mode, static_cast<pmc_mode>(PMC_MODE_INVALID));
}

TEST(Names, States) {
    EXPECT_STREQ(pmc_name_of_state(PMC_STATE_DISABLED), "DISABLED");
    EXPECT_STREQ(pmc_name_of_state(PMC_STATE_FREE), "FREE");
    EXPECT_STREQ(pmc_name_of_state(PMC_STATE_ALLOCATED), "ALLOCATED");
    EXPECT_STREQ(pmc_name_of_state(PMC_STATE_STOPPED), "STOPPED");
    EXPECT_STREQ(pmc_name_of_state(PMC_STATE_RUNNING), "RUNNING");
    EXPECT_STREQ(pmc_name_of_state(PMC_STATE_DELETED), "DELETED");
    expect_invalid(pmc_name_of_state, static_cast<pmc_state>(6));
}

TEST(Names, Dispositions) {
    EXPECT_STREQ(pmc_name_of_disposition(PMC_DISP_STANDALONE), "STANDALONE");
    EXPECT_STREQ(pmc_name_of_disposition(PMC_DISP_FREE), "FREE");
    EXPECT_STREQ(pmc_name_of_disposition(PMC_DISP_THREAD), "THREAD");
    // FreeBSD: UNKNOWN is a sentinel outside PMC_DISP_FIRST..LAST.
    expect_invalid(pmc_name_of_disposition, PMC_DISP_UNKNOWN);
}

TEST(Names, Capabilities) {
    struct {
        pmc_caps cap;
        const char *name;
    } const cases[] = {
        {PMC_CAP_INTERRUPT, "INTERRUPT"}, {PMC_CAP_USER, "USER"},
        {PMC_CAP_SYSTEM, "SYSTEM"},       {PMC_CAP_EDGE, "EDGE"},
        {PMC_CAP_THRESHOLD, "THRESHOLD"}, {PMC_CAP_READ, "READ"},
        {PMC_CAP_WRITE, "WRITE"},         {PMC_CAP_INVERT, "INVERT"},
        {PMC_CAP_QUALIFIER, "QUALIFIER"}, {PMC_CAP_PRECISE, "PRECISE"},
        {PMC_CAP_TAGGING, "TAGGING"},     {PMC_CAP_CASCADE, "CASCADE"},
        {PMC_CAP_SYSWIDE, "SYSWIDE"},     {PMC_CAP_DOMWIDE, "DOMWIDE"},
        {PMC_CAP_ANYTHREAD, "ANYTHREAD"},
    };
    uint32_t all = 0;
    for (const auto &c : cases) {
        EXPECT_STREQ(pmc_name_of_capability(c.cap), c.name) << c.name;
        all |= c.cap;
    }
    EXPECT_EQ(all, static_cast<uint32_t>(PMC_CAP_MASK)); // every ABI bit is named
    expect_invalid(pmc_name_of_capability, static_cast<pmc_caps>(0));
    expect_invalid(pmc_name_of_capability,
                   static_cast<pmc_caps>(PMC_CAP_USER | PMC_CAP_SYSTEM)); // two bits
    expect_invalid(pmc_name_of_capability, static_cast<pmc_caps>(0x8000));
}

TEST(Names, PredicatesOfModes) {
    EXPECT_TRUE(PMC_IS_COUNTING_MODE(PMC_MODE_SC));
    EXPECT_TRUE(PMC_IS_COUNTING_MODE(PMC_MODE_TC));
    EXPECT_TRUE(PMC_IS_SAMPLING_MODE(PMC_MODE_SS));
    EXPECT_TRUE(PMC_IS_SYSTEM_MODE(PMC_MODE_SC));
    EXPECT_TRUE(PMC_IS_VIRTUAL_MODE(PMC_MODE_TS));
    EXPECT_FALSE(PMC_IS_VIRTUAL_MODE(PMC_MODE_SS));
}

} // namespace

// The aliases of hardware event codes, as hwpmc-report names logged PMCs.
TEST(Names, AliasOfEvent) {
    auto alias = [](enum pmc_cputype t, enum pmc_class c, uint32_t ev, uint32_t um) {
        const char *n = pmc_alias_of_event(t, c, ev, um);
        return std::string(n ? n : "(null)");
    };
    EXPECT_EQ("instructions", alias(PMC_CPU_INTEL_ARCH, PMC_CLASS_IAP, 0xc0, 0));
    EXPECT_EQ("cycles", alias(PMC_CPU_INTEL_ARCH, PMC_CLASS_IAP, 0x3c, 0));
    EXPECT_EQ("ref-cycles", alias(PMC_CPU_INTEL_ARCH, PMC_CLASS_IAP, 0x3c, 1));
    EXPECT_EQ("cache-misses", alias(PMC_CPU_INTEL_ARCH, PMC_CLASS_IAP, 0x2e, 0x41));
    EXPECT_EQ("instructions", alias(PMC_CPU_AMD_V2, PMC_CLASS_K8, 0xc0, 0));
    EXPECT_EQ("cycles", alias(PMC_CPU_AMD_V2, PMC_CLASS_K8, 0x76, 0));
    // Another vendor's class, an unknown code, no PMU: none.
    EXPECT_EQ("(null)", alias(PMC_CPU_INTEL_ARCH, PMC_CLASS_K8, 0xc0, 0));
    EXPECT_EQ("(null)", alias(PMC_CPU_INTEL_ARCH, PMC_CLASS_IAP, 0xc0, 1));
    errno = 0;
    EXPECT_EQ(nullptr, pmc_alias_of_event(PMC_CPU_GENERIC, PMC_CLASS_IAP, 0xc0, 0));
    EXPECT_EQ(EINVAL, errno);
}
