// SPDX-License-Identifier: GPL-2.0
// hwpmc-stat's events (tools/stat/events) and printer (tools/stat/printer):
// -e lists, perf's names, the default set, rows and their statistics, the
// derived figures, and the human, CSV (-x) and JSON (-j) formats.
#include "stat/events.hpp"
#include "stat/printer.hpp"
#include "tools_test.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace hwpmc_stat;
using hwpmc::event_role;
using tools_test::capture;

TEST(StatEvents, ArgumentsTableDriven) {
    const struct {
        const char *arg;
        bool ok;
        std::vector<std::string> specs, names;
    } cases[] = {
        {"cycles,usr,instructions",
         true,
         {"cycles,usr", "instructions"},
         {"cycles,usr", "instructions"}},
        {"task-clock,cs", true, {"SOFT-CLOCK.PROF", "SOFT-SCHED.SWITCH"}, {"task-clock", "cs"}},
        {"event=0x2e,umask=0x41,usr",
         true,
         {"event=0x2e,umask=0x41,usr"},
         {"event=0x2e,umask=0x41,usr"}},
        {"cycles,", false, {}, {}},
        // An empty event before a qualifier: ",usr" (the library refuses it).
        {"cycles,,usr", true, {"cycles", ",usr"}, {"cycles", ",usr"}},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.arg);
        options o;
        EXPECT_EQ(add_events(o, c.arg, scope::system, true), c.ok);
        if (!c.ok)
            continue;
        ASSERT_EQ(o.events.size(), c.specs.size());
        for (size_t i = 0; i < c.specs.size(); i++) {
            EXPECT_EQ(o.events[i].spec, c.specs[i]);
            EXPECT_EQ(o.events[i].name, c.names[i]);
            EXPECT_EQ(o.events[i].sc, scope::system);
            EXPECT_TRUE(o.events[i].scope_from_a);
            EXPECT_FALSE(o.events[i].optional);
        }
    }
}

TEST(StatEvents, DefaultSetAndRequests) {
    options o;
    add_default_events(o);
    ASSERT_EQ(o.events.size(), 5u);
    EXPECT_EQ(o.events[0].spec, "CLOCK.PROF");
    for (const auto &e : o.events)
        EXPECT_TRUE(e.optional);
    o.events[0].sc = scope::system;
    o.inherit = true;
    const auto reqs = requests_of(o);
    ASSERT_EQ(reqs.size(), 5u);
    EXPECT_TRUE(reqs[0].system);
    EXPECT_EQ(reqs[0].flags, 0u);
    EXPECT_FALSE(reqs[1].system);
    EXPECT_EQ(reqs[1].flags, static_cast<uint32_t>(PMC_F_DESCENDANTS));
    o.inherit = false;
    EXPECT_EQ(requests_of(o)[1].flags, 0u);
}

TEST(StatRows, SumsPerCpuAndStatistics) {
    options o;
    add_events(o, "SCHED.SWITCH", scope::system, false);
    const std::vector<slot> slots = {{0, 0}, {0, 1}};
    auto rows = make_rows(o, slots, {{10, 20}, {30, 40}});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].cpu, -1);
    EXPECT_EQ(rows[0].runs, (std::vector<uint64_t>{30, 70}));
    EXPECT_DOUBLE_EQ(rows[0].mean, 50);
    EXPECT_NEAR(rows[0].rel_sd, 40, 1e-9); // sd of the mean 20, of 50
    o.no_aggr = true;
    rows = make_rows(o, slots, {{10, 20}});
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].cpu, 0);
    EXPECT_EQ(rows[1].runs, std::vector<uint64_t>{20});
}

// A measurement of 1 s: 2 s of CPU time, 4e9 cycles, 8e9 instructions,
// 1,500 context switches.
struct measured {
    options o;
    std::vector<row> rows;
    measured(format f) {
        o.fmt = f;
        add_events(o, "CLOCK.PROF,cycles,instructions,cs", scope::process, true);
        const event_role roles[] = {event_role::clock_prof, event_role::cycles,
                                    event_role::instructions, event_role::other};
        for (size_t i = 0; i < 4; i++)
            o.events[i].role = roles[i];
        rows = make_rows(o, {{0, -1}, {1, -1}, {2, -1}, {3, -1}},
                         {{2000000000, 4000000000, 8000000000, 1500}});
    }
};

TEST(StatPrinter, DerivedFigures) {
    measured m(format::human);
    const struct {
        size_t row;
        double value;
        const char *unit;
    } want[] = {
        {0, 2.0, "CPUs utilized"}, {1, 2.0, "GHz"}, {2, 2.0, "insn per cycle"}, {3, 750, "/sec"}};
    for (const auto &w : want) {
        auto x = metric_of(m.o, m.rows[w.row], m.rows, 1.0);
        ASSERT_TRUE(x) << w.row;
        EXPECT_DOUBLE_EQ(x->value, w.value) << w.row;
        EXPECT_EQ(x->unit, w.unit) << w.row;
    }
}

TEST(StatPrinter, EveryFormat) {
    const struct {
        format f;
        const char *want;
    } cases[] = {
        {format::human,
         "\n Performance counter stats for 'true':\n\n"
         "          2,000.00 msec CLOCK.PROF                 #     2.000 CPUs utilized\n"
         "     4,000,000,000      cycles                     #     2.000 GHz\n"
         "     8,000,000,000      instructions               #      2.00 insn per cycle\n"
         "             1,500      cs                         #   750.000 /sec\n"
         "\n       1.000000000 seconds time elapsed\n"
         "\n       0.500000000 seconds user\n       0.250000000 seconds sys\n\n"},
        {format::csv, "2000.000000,msec,CLOCK.PROF,1000000000,100.00,2.000,CPUs utilized\n"
                      "4000000000,,cycles,1000000000,100.00,2.000,GHz\n"
                      "8000000000,,instructions,1000000000,100.00,2.000,insn per cycle\n"
                      "1500,,cs,1000000000,100.00,750.000,/sec\n"},
        {format::json,
         "{\"counter-value\" : 2000.000000, \"unit\" : \"msec\", \"event\" : \"CLOCK.PROF\", "
         "\"scope\" : \"process\", \"count\" : 2000000000, \"event-runtime\" : 1000000000, "
         "\"pcnt-running\" : 100.00, \"metric-value\" : 2.000000, \"metric-unit\" : \"CPUs "
         "utilized\"}\n"
         "{\"counter-value\" : 4000000000, \"unit\" : \"\", \"event\" : \"cycles\", \"scope\" "
         ": \"process\", \"count\" : 4000000000, \"event-runtime\" : 1000000000, "
         "\"pcnt-running\" : 100.00, \"metric-value\" : 2.000000, \"metric-unit\" : \"GHz\"}\n"
         "{\"counter-value\" : 8000000000, \"unit\" : \"\", \"event\" : \"instructions\", "
         "\"scope\" : \"process\", \"count\" : 8000000000, \"event-runtime\" : 1000000000, "
         "\"pcnt-running\" : 100.00, \"metric-value\" : 2.000000, \"metric-unit\" : \"insn per "
         "cycle\"}\n"
         "{\"counter-value\" : 1500, \"unit\" : \"\", \"event\" : \"cs\", \"scope\" : "
         "\"process\", \"count\" : 1500, \"event-runtime\" : 1000000000, \"pcnt-running\" : "
         "100.00, \"metric-value\" : 750.000000, \"metric-unit\" : \"/sec\"}\n"
         "{\"time-elapsed\" : 1.000000000, \"user-time\" : 0.500000, \"system-time\" : "
         "0.250000, \"runs\" : 1, \"exit-status\" : 0}\n"},
    };
    for (const auto &c : cases) {
        measured m(c.f);
        const std::string out = capture([&](FILE *f) {
            printer pr(f, m.o);
            pr.header("'true'");
            pr.counters(m.rows, 1.0);
            pr.footer({1.0}, {0.5}, {0.25}, 0, true);
        });
        EXPECT_EQ(out, c.want);
    }
}

TEST(StatPrinter, RepeatsMixedScopesAndQuoting) {
    options o;
    o.fmt = format::csv;
    o.sep = ";";
    o.repeat = 2;
    add_events(o, "SCHED.SWITCH", scope::process, false);
    add_events(o, "a;b", scope::system, false); // a name holding the separator
    const auto rows = make_rows(o, {{0, -1}, {1, 0}}, {{10, 1}, {30, 3}});
    const std::string out = capture([&](FILE *f) {
        printer pr(f, o);
        pr.counters(rows, 2.0);
    });
    EXPECT_EQ(out, "20.00;;p/SCHED.SWITCH;50.00%;2000000000;100.00;10.000;/sec\n"
                   "2.00;;\"s/a;b\";50.00%;2000000000;100.00;1.000;/sec\n");
}

} // namespace
