// SPDX-License-Identifier: BSD-2-Clause
// hwpmc::device::parse(), split_event_list() and resolve_perf_alias(): what
// the parser decided, as the tools get it (table driven, fake kernel).
#include "fake_kernel.hpp"

#include <hwpmc/hwpmc.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using hwpmc::event_role;
using hwpmc::testing::fake_kernel;

namespace {

TEST(EventList, SplitsAtEventsKeepsQualifiers) {
    const struct {
        const char *list;
        std::vector<std::string> want;
    } cases[] = {
        {"cycles", {"cycles"}},
        {"cycles,usr,instructions", {"cycles,usr", "instructions"}},
        {"cycles,USR,os,instructions,cmask=1,inv", {"cycles,USR,os", "instructions,cmask=1,inv"}},
        {"event=0x2e,umask=0x41,usr", {"event=0x2e,umask=0x41,usr"}},
        {"task-clock,cs,faults", {"task-clock", "cs", "faults"}},
        {"cycles,", {"cycles", ""}},
        {"cycles,,instructions", {"cycles", "", "instructions"}},
        {",cycles", {"", "cycles"}},
        {"", {}},
    };
    for (const auto &c : cases)
        EXPECT_EQ(hwpmc::split_event_list(c.list), c.want) << c.list;
}

TEST(EventList, ResolvesPerfSoftwareNames) {
    const struct {
        const char *spec, *want;
    } cases[] = {
        {"task-clock", "SOFT-CLOCK.PROF"},
        {"TASK-CLOCK", "SOFT-CLOCK.PROF"},
        {"context-switches", "SOFT-SCHED.SWITCH"},
        {"cs", "SOFT-SCHED.SWITCH"},
        {"cpu-migrations", "SOFT-SCHED.MIGRATE"},
        {"migrations", "SOFT-SCHED.MIGRATE"},
        {"page-faults", "SOFT-PAGE_FAULT.ALL"},
        {"faults,usr", "SOFT-PAGE_FAULT.ALL,usr"},
        {"cycles,usr", "cycles,usr"},
        {"CLOCK.PROF", "CLOCK.PROF"},
        {"", ""},
    };
    for (const auto &c : cases)
        EXPECT_EQ(hwpmc::resolve_perf_alias(c.spec), c.want) << c.spec;
}

class EventInfo : public ::testing::Test {
protected:
    fake_kernel &k = fake_kernel::instance();
    void SetUp() override { k.install(); }
    void TearDown() override { k.uninstall(); }
};

struct parse_case {
    const char *spec;
    enum pmc_class cls;
    uint32_t event;
    event_role role;
    const char *name, *perf_alias;
    std::vector<std::string> qualifiers;
};

void check(const hwpmc::device &dev, const parse_case &c) {
    SCOPED_TRACE(c.spec);
    const hwpmc::event_info i = dev.parse(c.spec);
    EXPECT_EQ(i.cls, c.cls);
    EXPECT_EQ(i.event, c.event);
    EXPECT_EQ(i.role, c.role);
    EXPECT_EQ(i.name, c.name);
    EXPECT_EQ(i.perf_alias, c.perf_alias);
    EXPECT_EQ(i.qualifiers, c.qualifiers);
    EXPECT_EQ(i.is_soft(), c.cls == PMC_CLASS_SOFT);
    EXPECT_EQ(i.is_tsc(), c.cls == PMC_CLASS_TSC);
    EXPECT_EQ(i.is_clock_prof(), c.role == event_role::clock_prof);
}

TEST_F(EventInfo, SoftAndTscWithoutPmu) {
    hwpmc::device dev = hwpmc::device::open();
    const parse_case cases[] = {
        {"CLOCK.PROF",
         PMC_CLASS_SOFT,
         PMC_SOFT_CLOCK_PROF,
         event_role::clock_prof,
         "CLOCK.PROF",
         "",
         {}},
        {"soft-clock.prof",
         PMC_CLASS_SOFT,
         PMC_SOFT_CLOCK_PROF,
         event_role::clock_prof,
         "soft-clock.prof",
         "",
         {}},
        {"task-clock",
         PMC_CLASS_SOFT,
         PMC_SOFT_CLOCK_PROF,
         event_role::clock_prof,
         "task-clock",
         "task-clock",
         {}},
        {"PAGE_FAULT.ALL", PMC_CLASS_SOFT, 2, event_role::other, "PAGE_FAULT.ALL", "", {}},
        {"faults", PMC_CLASS_SOFT, 2, event_role::other, "faults", "faults", {}},
        {"CLOCK.HARD", PMC_CLASS_SOFT, 0, event_role::other, "CLOCK.HARD", "", {}},
        {"tsc", PMC_CLASS_TSC, 0, event_role::other, "tsc", "", {}},
    };
    for (const auto &c : cases)
        check(dev, c);
    EXPECT_EQ(dev.parse("task-clock").spec, "SOFT-CLOCK.PROF");
    EXPECT_EQ(dev.parse("CLOCK.PROF").spec, "CLOCK.PROF");
}

TEST_F(EventInfo, IntelHardwareRolesFromTheEncoding) {
    k.cputype = PMC_CPU_INTEL_ARCH;
    hwpmc::device dev = hwpmc::device::open();
    const parse_case cases[] = {
        {"instructions", PMC_CLASS_IAP, 0xc0, event_role::instructions, "instructions", "", {}},
        {"cycles:u", PMC_CLASS_IAP, 0x3c, event_role::cycles, "cycles", "", {"usr"}},
        {"unhalted-cycles,os",
         PMC_CLASS_IAP,
         0x3c,
         event_role::cycles,
         "unhalted-cycles",
         "",
         {"os"}},
        {"ref-cycles", PMC_CLASS_IAP, 0x3c, event_role::other, "ref-cycles", "", {}},
        {"IAF-INSTR_RETIRED_ANY",
         PMC_CLASS_IAF,
         0,
         event_role::instructions,
         "IAF-INSTR_RETIRED_ANY",
         "",
         {}},
        {"IAF-CPU_CLK_UNHALTED_CORE,usr",
         PMC_CLASS_IAF,
         1,
         event_role::cycles,
         "IAF-CPU_CLK_UNHALTED_CORE",
         "",
         {"usr"}},
        {"IAF-CPU_CLK_UNHALTED_REF",
         PMC_CLASS_IAF,
         2,
         event_role::other,
         "IAF-CPU_CLK_UNHALTED_REF",
         "",
         {}},
        {"event=0xc0,umask=0",
         PMC_CLASS_IAP,
         0xc0,
         event_role::instructions,
         "event=0xc0",
         "",
         {"umask=0"}},
        {"instructions,cmask=1,inv",
         PMC_CLASS_IAP,
         0xc0,
         event_role::other,
         "instructions",
         "",
         {"cmask=1", "inv"}},
        {"branches", PMC_CLASS_IAP, 0xc4, event_role::other, "branches", "", {}},
    };
    for (const auto &c : cases)
        check(dev, c);
}

TEST_F(EventInfo, AmdHardwareRolesFromTheEncoding) {
    k.cputype = PMC_CPU_AMD_K8;
    hwpmc::device dev = hwpmc::device::open();
    const parse_case cases[] = {
        {"instructions", PMC_CLASS_K8, 0xc0, event_role::instructions, "instructions", "", {}},
        {"cycles", PMC_CLASS_K8, 0x76, event_role::cycles, "cycles", "", {}},
        {"branch-misses", PMC_CLASS_K8, 0xc3, event_role::other, "branch-misses", "", {}},
    };
    for (const auto &c : cases)
        check(dev, c);
}

TEST_F(EventInfo, BadSpecifierThrowsTheParsersMessage) {
    hwpmc::device dev = hwpmc::device::open();
    for (const char *spec : {"instrutions", "", "CLOCK.PROF,usr", "task-clock,usr"}) {
        SCOPED_TRACE(spec);
        try {
            dev.parse(spec);
            ADD_FAILURE() << "no error";
        } catch (const hwpmc::spec_error &e) {
            EXPECT_EQ(e.code().value(), EINVAL);
            EXPECT_NE(std::string(e.what()).find("event specifier"), std::string::npos) << e.what();
        }
    }
    // The message is allocate()'s for the resolved specifier.
    try {
        dev.parse("task-clock,usr");
    } catch (const hwpmc::spec_error &e) {
        EXPECT_NE(std::string(e.what()).find("SOFT-CLOCK.PROF,usr"), std::string::npos) << e.what();
    }
}

} // namespace

namespace {

TEST(EventInfoOffline, SoftAndTscWithoutADevice) {
    EXPECT_TRUE(hwpmc::parse_event("SOFT-CLOCK.PROF").is_clock_prof());
    EXPECT_TRUE(hwpmc::parse_event("clock.prof").is_clock_prof());
    EXPECT_TRUE(hwpmc::parse_event("task-clock").is_clock_prof());
    EXPECT_EQ(hwpmc::parse_event("task-clock").perf_alias, "task-clock");
    EXPECT_TRUE(hwpmc::parse_event("SCHED.SWITCH").is_soft());
    EXPECT_FALSE(hwpmc::parse_event("SCHED.SWITCH").is_clock_prof());
    EXPECT_TRUE(hwpmc::parse_event("tsc").is_tsc());
    EXPECT_THROW(hwpmc::parse_event("cycles"), hwpmc::spec_error);
    EXPECT_THROW(hwpmc::parse_event("CLOCK.PROF,usr"), hwpmc::spec_error);
}

} // namespace
