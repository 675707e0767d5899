// SPDX-License-Identifier: BSD-2-Clause
// Hardware event names through the real libpfm4, for the PMU models forced
// with LIBPFM_FORCE_PMU (independent of the machine running the tests).
#include "spec/event_spec.hpp"
#include "spec/pfm_source.hpp"
#include "spec/soft_events.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

using namespace hwpmc::detail;

namespace {

constexpr uint64_t USR = 1 << 16, OS = 1 << 17;

class Pfm : public ::testing::Test {
protected:
    static void force(const char *pmu) {
        setenv("LIBPFM_FORCE_PMU", pmu, 1);
        pfm_source::instance().reinitialize();
    }
    void TearDown() override {
        unsetenv("LIBPFM_FORCE_PMU");
        pfm_source::instance().reinitialize();
    }
    static spec_result parse(const char *spec, alias_set set) {
        spec_context ctx;
        ctx.aliases = set;
        ctx.soft = default_soft_events();
        ctx.pfm = &pfm_source::instance();
        return parse_event_spec(spec, ctx);
    }
};

TEST_F(Pfm, IntelSkylakeProgrammable) {
    force("skl");
    auto r = parse("INST_RETIRED:ANY_P", alias_set::intel_arch);
    ASSERT_TRUE(r.encoding) << r.error;
    EXPECT_EQ(r.encoding->cls, PMC_CLASS_IAP);
    EXPECT_EQ(r.encoding->event, 0xc0u);
    EXPECT_EQ(r.encoding->config, USR | OS);

    r = parse("INST_RETIRED:ANY_P:u,cmask=1,inv", alias_set::intel_arch);
    ASSERT_TRUE(r.encoding) << r.error;
    EXPECT_EQ(r.encoding->config, USR | (1ull << 23) | (1ull << 24));
}

TEST_F(Pfm, IntelOffcoreCarriesTheExtraRegister) {
    force("skl");
    const auto r = parse("OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS", alias_set::intel_arch);
    ASSERT_TRUE(r.encoding) << r.error;
    EXPECT_EQ(r.encoding->event, 0xb7u);
    EXPECT_EQ(r.encoding->config, 0x0100 | USR | OS);
    EXPECT_EQ(r.encoding->config1, 0x3f84000001u);
}

TEST_F(Pfm, IntelFixedCounterEvent) {
    force("icl");
    const auto r = parse("INST_RETIRED:ANY", alias_set::intel_arch);
    ASSERT_TRUE(r.encoding) << r.error;
    EXPECT_EQ(r.encoding->cls, PMC_CLASS_IAF);
    EXPECT_EQ(r.encoding->event, 0u);
}

TEST_F(Pfm, AmdZen) {
    force("amd64_fam17h_zen1");
    const auto r = parse("RETIRED_INSTRUCTIONS:u", alias_set::amd_zen);
    ASSERT_TRUE(r.encoding) << r.error;
    EXPECT_EQ(r.encoding->cls, PMC_CLASS_K8);
    EXPECT_EQ(r.encoding->event, 0xc0u);
    EXPECT_EQ(r.encoding->config, USR);
}

TEST_F(Pfm, WrongVendor) {
    force("amd64_fam19h_zen4");
    const auto r = parse("RETIRED_INSTRUCTIONS", alias_set::intel_arch);
    ASSERT_FALSE(r.encoding);
    EXPECT_NE(r.error.find("another vendor"), std::string::npos) << r.error;
}

TEST_F(Pfm, UnknownNameSuggestsPfmNames) {
    force("skl");
    const auto r = parse("INST_RETIRD", alias_set::intel_arch);
    ASSERT_FALSE(r.encoding);
    EXPECT_NE(r.error.find("INST_RETIRED"), std::string::npos) << r.error;
}

TEST_F(Pfm, NamesOfTheForcedPmu) {
    force("skl");
    const auto names = pfm_source::instance().names();
    EXPECT_NE(std::find(names.begin(), names.end(), "INST_RETIRED"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "RETIRED_INSTRUCTIONS"), names.end());
}

} // namespace
