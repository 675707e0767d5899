// SPDX-License-Identifier: BSD-2-Clause
// The event specifier parser, table driven: each case names the CPU it is
// parsed for and the exact encoding (or the error) it must produce.
#include "spec/event_spec.hpp"
#include "spec/soft_events.hpp"

#include <gtest/gtest.h>

#include <map>
#include <ostream>

using namespace hwpmc::detail;

namespace {

// A stand-in for libpfm4 with the encodings libpfm4 4.13 produces (EN and
// INT set, as libpfm4 does; the parser must drop them).
class fake_pfm final : public hw_event_source {
public:
    std::optional<hw_event> lookup(const std::string &name, std::string *why) override {
        static const std::map<std::string, hw_event> events = {
            {"INST_RETIRED:ANY_P", {false, 0x5300c0, 0}},
            {"INST_RETIRED:ANY", {false, 0x530100, 0}},
            {"INST_RETIRED:ANY_P:c=1:e", {false, 0x15700c0, 0}},
            {"INST_RETIRED:ANY_P:u", {false, 0x5100c0, 0}},
            {"OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS", {false, 0x5301b7, 0x3f84000001}},
            {"RETIRED_INSTRUCTIONS", {true, 0x5300c0, 0}},
            {"RETIRED_INSTRUCTIONS:u", {true, 0x5100c0, 0}},
            {"CYCLES_NOT_IN_HALT", {true, 0x100530020, 0}}, // AMD event 0x120
        };
        if (const auto it = events.find(name); it != events.end())
            return it->second;
        *why = name == "BROKEN" ? "invalid event attribute" : "event not found";
        return std::nullopt;
    }
    std::vector<std::string> names() override {
        return {"INST_RETIRED", "OFFCORE_RESPONSE_0", "RETIRED_INSTRUCTIONS"};
    }
};

fake_pfm pfm;

spec_context context(alias_set set) {
    spec_context ctx;
    ctx.aliases = set;
    ctx.soft = default_soft_events();
    ctx.pfm = set == alias_set::none ? nullptr : &pfm;
    return ctx;
}

constexpr auto none = alias_set::none;
constexpr auto intel = alias_set::intel_arch;
constexpr auto amd_legacy = alias_set::amd_legacy;
constexpr auto zen = alias_set::amd_zen;
constexpr auto zen4 = alias_set::amd_zen4;

constexpr uint32_t U = PMC_CAP_USER, S = PMC_CAP_SYSTEM, Q = PMC_CAP_QUALIFIER, E = PMC_CAP_EDGE,
                   I = PMC_CAP_INVERT, T = PMC_CAP_THRESHOLD, A = PMC_CAP_ANYTHREAD,
                   R = PMC_CAP_READ;
constexpr uint64_t USR = 1 << 16, OS = 1 << 17, EDGE = 1 << 18, ANY = 1 << 21, INV = 1 << 23;

struct good_case {
    alias_set cpu;
    const char *spec;
    event_encoding want;
};

std::ostream &operator<<(std::ostream &os, const good_case &c) {
    return os << c.spec;
}

const good_case good_cases[] = {
    // tsc and SOFT, on any CPU
    {none, "tsc", {PMC_CLASS_TSC, 0, 0, 0, R}},
    {intel, "TSC", {PMC_CLASS_TSC, 0, 0, 0, R}},
    {zen, "tsc-tsc", {PMC_CLASS_TSC, 0, 0, 0, R}},
    {none, "SOFT-CLOCK.HARD", {PMC_CLASS_SOFT, PMC_SOFT_CLOCK_HARD, 0, 0, R}},
    {none, "SOFT-CLOCK.PROF", {PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF, 0, 0, R}},
    {none, "clock.prof", {PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF, 0, 0, R}},
    {intel, "soft-page_fault.all", {PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_ALL, 0, 0, R}},
    {none, "PAGE_FAULT.READ", {PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_READ, 0, 0, R}},
    {none, "Page_Fault.Write", {PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_WRITE, 0, 0, R}},
    {none, "SCHED.SWITCH", {PMC_CLASS_SOFT, PMC_SOFT_SCHED_SWITCH, 0, 0, R}},
    {zen4, "SOFT-SCHED.MIGRATE", {PMC_CLASS_SOFT, PMC_SOFT_SCHED_MIGRATE, 0, 0, R}},
    {none, "syscall.enter", {PMC_CLASS_SOFT, PMC_SOFT_SYSCALL_ENTER, 0, 0, R}},
    // generic aliases, Intel architectural events
    {intel, "instructions", {PMC_CLASS_IAP, 0xc0, USR | OS, 0, U | S}},
    {intel, "cycles", {PMC_CLASS_IAP, 0x3c, USR | OS, 0, U | S}},
    {intel, "unhalted-cycles", {PMC_CLASS_IAP, 0x3c, USR | OS, 0, U | S}},
    {intel, "ref-cycles", {PMC_CLASS_IAP, 0x3c, 0x0100 | USR | OS, 0, U | S | Q}},
    {intel, "branches", {PMC_CLASS_IAP, 0xc4, USR | OS, 0, U | S}},
    {intel, "branch-misses", {PMC_CLASS_IAP, 0xc5, USR | OS, 0, U | S}},
    {intel, "cache-references", {PMC_CLASS_IAP, 0x2e, 0x4f00 | USR | OS, 0, U | S | Q}},
    {intel, "Cache-Misses", {PMC_CLASS_IAP, 0x2e, 0x4100 | USR | OS, 0, U | S | Q}},
    // AMD, per family
    {amd_legacy, "instructions", {PMC_CLASS_K8, 0xc0, USR | OS, 0, U | S}},
    {amd_legacy, "cycles", {PMC_CLASS_K8, 0x76, USR | OS, 0, U | S}},
    {amd_legacy, "cache-references", {PMC_CLASS_K8, 0x7d, 0x0700 | USR | OS, 0, U | S | Q}},
    {amd_legacy, "cache-misses", {PMC_CLASS_K8, 0x7e, 0x0700 | USR | OS, 0, U | S | Q}},
    {zen, "branches", {PMC_CLASS_K8, 0xc2, USR | OS, 0, U | S}},
    {zen, "branch-misses", {PMC_CLASS_K8, 0xc3, USR | OS, 0, U | S}},
    {zen, "cache-references", {PMC_CLASS_K8, 0x60, 0xff00 | USR | OS, 0, U | S | Q}},
    {zen, "cache-misses", {PMC_CLASS_K8, 0x64, 0x0900 | USR | OS, 0, U | S | Q}},
    {zen4, "ref-cycles", {PMC_CLASS_K8, 0x120, USR | OS, 0, U | S}},
    {zen4, "unhalted-cycles", {PMC_CLASS_K8, 0x76, USR | OS, 0, U | S}},
    // qualifiers
    {intel, "instructions,usr", {PMC_CLASS_IAP, 0xc0, USR, 0, U}},
    {intel, "instructions,os", {PMC_CLASS_IAP, 0xc0, OS, 0, S}},
    {intel, "cycles,USR,Os", {PMC_CLASS_IAP, 0x3c, USR | OS, 0, U | S}},
    // perf's modifiers on aliases
    {intel, "instructions:u", {PMC_CLASS_IAP, 0xc0, USR, 0, U}},
    {intel, "cycles:k", {PMC_CLASS_IAP, 0x3c, OS, 0, S}},
    {zen, "instructions:uk", {PMC_CLASS_K8, 0xc0, USR | OS, 0, U | S}},
    {intel, "branches:K,edge", {PMC_CLASS_IAP, 0xc4, OS | EDGE, 0, S | E}},
    {intel,
     "branches,edge,inv,cmask=2",
     {PMC_CLASS_IAP, 0xc4, USR | OS | EDGE | INV | 0x02000000, 0, U | S | E | I | T}},
    {intel, "cycles,anythread", {PMC_CLASS_IAP, 0x3c, USR | OS | ANY, 0, U | S | A}},
    {intel, "instructions,umask=0x01", {PMC_CLASS_IAP, 0xc0, 0x0100 | USR | OS, 0, U | S | Q}},
    {intel, "cache-misses,umask=0", {PMC_CLASS_IAP, 0x2e, USR | OS, 0, U | S}},
    {zen, "cycles,cmask=255,usr", {PMC_CLASS_K8, 0x76, USR | 0xff000000, 0, U | T}},
    {intel, " instructions , usr ", {PMC_CLASS_IAP, 0xc0, USR, 0, U}},
    // raw events
    {intel, "event=0xc0,umask=0x01", {PMC_CLASS_IAP, 0xc0, 0x0100 | USR | OS, 0, U | S | Q}},
    {intel, "EVENT=0XC0", {PMC_CLASS_IAP, 0xc0, USR | OS, 0, U | S}},
    {intel, "umask=0x41,event=0x2e,os", {PMC_CLASS_IAP, 0x2e, 0x4100 | OS, 0, S | Q}},
    {intel, "event=255", {PMC_CLASS_IAP, 0xff, USR | OS, 0, U | S}},
    {intel, "event=0300", {PMC_CLASS_IAP, 0xc0, USR | OS, 0, U | S}}, // octal, as strtoul
    {zen, "event=0x120,usr", {PMC_CLASS_K8, 0x120, USR, 0, U}},
    {zen4, "event=0xfff,umask=0xff", {PMC_CLASS_K8, 0xfff, 0xff00 | USR | OS, 0, U | S | Q}},
    // Intel fixed-function counters (class IAF): event = counter index
    {intel, "IAF-INSTR_RETIRED_ANY", {PMC_CLASS_IAF, 0, USR | OS, 0, U | S}},
    {intel, "iaf-cpu_clk_unhalted_core,os", {PMC_CLASS_IAF, 1, OS, 0, S}},
    {intel, "IAF-CPU_CLK_UNHALTED_REF,usr,anythread", {PMC_CLASS_IAF, 2, USR | ANY, 0, U | A}},
    {intel, "IAF-TOPDOWN_SLOTS", {PMC_CLASS_IAF, 3, USR | OS, 0, U | S}},
    {intel, "event=0x00,umask=0x01", {PMC_CLASS_IAF, 0, USR | OS, 0, U | S}},
    {intel, "event=0,umask=3,usr", {PMC_CLASS_IAF, 2, USR, 0, U}},
    // libpfm4 names (EN, INT dropped; usr/os from libpfm4 unless qualified)
    {intel, "INST_RETIRED:ANY_P", {PMC_CLASS_IAP, 0xc0, USR | OS, 0, U | S}},
    {intel, "INST_RETIRED:ANY_P:u", {PMC_CLASS_IAP, 0xc0, USR, 0, U}},
    {intel, "INST_RETIRED:ANY_P:u,os", {PMC_CLASS_IAP, 0xc0, OS, 0, S}},
    {intel,
     "INST_RETIRED:ANY_P:c=1:e",
     {PMC_CLASS_IAP, 0xc0, USR | OS | EDGE | 0x01000000, 0, U | S | E | T}},
    {intel, "INST_RETIRED:ANY", {PMC_CLASS_IAF, 0, USR | OS, 0, U | S}},
    {zen, "RETIRED_INSTRUCTIONS", {PMC_CLASS_K8, 0xc0, USR | OS, 0, U | S}},
    {zen, "RETIRED_INSTRUCTIONS:u,inv", {PMC_CLASS_K8, 0xc0, USR | INV, 0, U | I}},
    {zen4, "CYCLES_NOT_IN_HALT", {PMC_CLASS_K8, 0x120, USR | OS, 0, U | S}},
};

class GoodSpec : public ::testing::TestWithParam<good_case> {};

TEST_P(GoodSpec, Encodes) {
    const good_case &c = GetParam();
    const spec_result r = parse_event_spec(c.spec, context(c.cpu));
    ASSERT_TRUE(r.encoding.has_value()) << r.error;
    const event_encoding &got = *r.encoding;
    EXPECT_EQ(got.cls, c.want.cls);
    EXPECT_EQ(got.event, c.want.event) << std::hex << got.event;
    EXPECT_EQ(got.config, c.want.config) << std::hex << got.config;
    EXPECT_EQ(got.config1, c.want.config1) << std::hex << got.config1;
    EXPECT_EQ(got.caps, c.want.caps) << std::hex << got.caps;
    EXPECT_TRUE(r.error.empty());
}

INSTANTIATE_TEST_SUITE_P(Table, GoodSpec, ::testing::ValuesIn(good_cases));

struct bad_case {
    alias_set cpu;
    const char *spec;
    std::vector<const char *> message; // substrings of the error
};

std::ostream &operator<<(std::ostream &os, const bad_case &c) {
    return os << c.spec;
}

const bad_case bad_cases[] = {
    {none, "", {"empty event name"}},
    {intel,
     "OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS,usr",
     {"needs an extra event register (OFFCORE_RSP)", "choose an event without one",
      "in event specifier"}},
    {none, "  ", {"empty event name"}},
    {intel, "instrutions", {"unknown event \"instrutions\"", "nearest valid: instructions"}},
    {intel,
     "cylces,usr",
     {"unknown event \"cylces\"", "cycles", "in event specifier \"cylces,usr\""}},
    {none, "SOFT-CLOCK.PRF", {"unknown SOFT event \"SOFT-CLOCK.PRF\"", "SOFT-CLOCK.PROF"}},
    {none, "clock.prf", {"unknown event \"clock.prf\"", "nearest valid: CLOCK.PROF"}},
    {none, "SOFT-instructions", {"unknown SOFT event"}},
    {none, "cycles", {"\"cycles\" needs a hardware PMU", "SOFT-CLOCK.PROF"}},
    {none, "INST_RETIRED:ANY_P", {"unknown event"}},
    {zen, "ref-cycles", {"this CPU has no \"ref-cycles\" event"}},
    {intel, "INST_RETIRED:ANY_PP", {"unknown event", "INST_RETIRED"}},
    {intel, "BROKEN", {"libpfm4 cannot encode \"BROKEN\": invalid event attribute"}},
    {zen, "INST_RETIRED:ANY_P", {"another vendor"}},
    {intel, "RETIRED_INSTRUCTIONS", {"another vendor"}},
    {intel, "instructions,usrr", {"unknown qualifier \"usrr\"", "nearest valid: usr"}},
    {intel, "instructions:p", {"unknown modifier \":p\"", ":u, :k"}},
    {intel, "instructions:", {"unknown modifier \":\""}},
    {intel, "instructions,cmaks=1", {"unknown qualifier \"cmaks=1\"", "cmask="}},
    {intel, "instructions,cmask=256", {"bad value \"256\" for cmask", "0xff"}},
    {intel, "instructions,umask=0x1g", {"bad value \"0x1g\" for umask"}},
    {intel, "instructions,umask=-1", {"bad value \"-1\" for umask"}},
    {intel, "instructions,umask=", {"bad value \"\" for umask"}},
    {intel, "instructions,umask", {"qualifier \"umask\" needs a value"}},
    {intel, "instructions,usr=1", {"qualifier \"usr\" takes no value"}},
    {intel, "instructions,,usr", {"empty qualifier"}},
    {intel, "instructions,", {"empty qualifier"}},
    {intel, "instructions,event=0xc0", {"must come first"}},
    {none, "tsc,usr", {"event \"tsc\" takes no qualifiers"}},
    {intel, "SOFT-CLOCK.PROF,os", {"takes no qualifiers"}},
    {intel, "umask=1", {"a raw event needs event=N"}},
    {none, "event=0xc0", {"a raw event needs a hardware PMU"}},
    {intel, "event=0x1ff", {"bad value \"0x1ff\" for event", "0xff"}},
    {zen, "event=0x1000", {"bad value \"0x1000\" for event", "0xfff"}},
    {zen, "cycles,anythread", {"\"anythread\" needs an Intel CPU"}},
    {zen, "IAF-INSTR_RETIRED_ANY", {"needs an Intel CPU"}},
    {intel, "IAF-INSTR_RETIRD_ANY", {"unknown fixed-function event", "IAF-INSTR_RETIRED_ANY"}},
    {intel, "IAF-INSTR_RETIRED_ANY,edge", {"takes only the usr, os and anythread"}},
    {intel, "IAF-CPU_CLK_UNHALTED_CORE,umask=1", {"takes only the usr, os and anythread"}},
    {intel, "event=0x00,umask=0x07", {"is not an event"}},
    {intel, "event=0x00", {"is not an event"}},
    {intel, "event=0x00,umask=0x01,inv", {"takes only the usr, os and anythread"}},
};

class BadSpec : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadSpec, FailsWithMessage) {
    const bad_case &c = GetParam();
    const spec_result r = parse_event_spec(c.spec, context(c.cpu));
    ASSERT_FALSE(r.encoding.has_value());
    for (const char *part : c.message)
        EXPECT_NE(r.error.find(part), std::string::npos)
            << "error \"" << r.error << "\" lacks \"" << part << "\"";
}

INSTANTIATE_TEST_SUITE_P(Table, BadSpec, ::testing::ValuesIn(bad_cases));

TEST(SpecContext, KernelSoftListWins) {
    // The kernel's list (GETDYNEVENTINFO) replaces the header's.
    const soft_event kernel[] = {{"CLOCK.PROF", 1}, {"NEW.EVENT", 42}};
    spec_context ctx;
    ctx.soft = kernel;
    auto r = parse_event_spec("SOFT-NEW.EVENT", ctx);
    ASSERT_TRUE(r.encoding) << r.error;
    EXPECT_EQ(r.encoding->event, 42u);
    r = parse_event_spec("SOFT-SCHED.SWITCH", ctx);
    EXPECT_FALSE(r.encoding);
}

TEST(SpecContext, AliasSetForCpu) {
    EXPECT_EQ(alias_set_for(PMC_CPU_GENERIC, 0x19), alias_set::none);
    EXPECT_EQ(alias_set_for(PMC_CPU_INTEL_ARCH, 6), alias_set::intel_arch);
    EXPECT_EQ(alias_set_for(PMC_CPU_AMD_K8, 0xf), alias_set::amd_legacy);
    EXPECT_EQ(alias_set_for(PMC_CPU_AMD_EXT, 0x15), alias_set::amd_legacy);
    EXPECT_EQ(alias_set_for(PMC_CPU_AMD_EXT, 0x17), alias_set::amd_zen);
    EXPECT_EQ(alias_set_for(PMC_CPU_AMD_EXT, 0x19), alias_set::amd_zen);
    EXPECT_EQ(alias_set_for(PMC_CPU_AMD_EXT, 0x1a), alias_set::amd_zen4);
    EXPECT_EQ(alias_set_for(PMC_CPU_AMD_V2, 0x19), alias_set::amd_zen4);
}

} // namespace
