// SPDX-License-Identifier: GPL-2.0
// pmcstat(8)'s options (tools/lib/pmcstat_args): which tool runs, with
// which arguments, and the usage errors.
#include "lib/pmcstat_args.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace {

using hwpmc_tools::plan_pmcstat;
using hwpmc_tools::pmcstat_plan;
using strings = std::vector<std::string>;

pmcstat_plan plan(std::initializer_list<const char *> args) {
    std::vector<std::string> store{"pmcstat"};
    store.insert(store.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto &s : store)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    return plan_pmcstat(static_cast<int>(store.size()), argv.data());
}

TEST(Pmcstat, ProcessCountingRunsStat) {
    const auto p = plan({"-p", "instructions", "-p", "SOFT-CLOCK.PROF", "-d", "-w", "2", "-o",
                         "out.txt", "ls", "-l"});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.tool, "hwpmc-stat");
    EXPECT_EQ(p.args, (strings{"-p", "instructions", "-p", "SOFT-CLOCK.PROF", "-d", "-w", "2", "-o",
                               "out.txt", "--", "ls", "-l"}));
}

TEST(Pmcstat, SystemCountingAndCpusAndPid) {
    const auto p = plan({"-s", "cycles", "-c", "0,1", "-t", "42", "-l", "3", "-v"});
    EXPECT_EQ(p.tool, "hwpmc-stat");
    EXPECT_EQ(p.args, (strings{"-s", "cycles", "-c", "0,1", "-t", "42", "-l", "3", "-v"}));
}

TEST(Pmcstat, SamplingToALogRunsRecord) {
    // -n before -P sets its period; callchains are on unless -N.
    const auto p = plan({"-n", "5000", "-P", "SOFT-CLOCK.PROF", "-O", "x.log", "-q", "./a.out"});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.tool, "hwpmc-record");
    EXPECT_EQ(p.args, (strings{"-e", "SOFT-CLOCK.PROF", "-c", "5000", "-g", "-o", "x.log", "-q",
                               "--", "./a.out"}));
    const auto s = plan({"-N", "-S", "instructions", "-c", "1", "-d", "-O", "s.log"});
    EXPECT_EQ(s.args,
              (strings{"-e", "instructions", "-a", "-C", "1", "-o", "s.log", "--no-inherit"}));
}

TEST(Pmcstat, TopMode) {
    const auto p = plan({"-T", "-S", "SOFT-CLOCK.PROF", "-w", "2"});
    EXPECT_EQ(p.tool, "hwpmc-top");
    EXPECT_EQ(p.args, (strings{"-e", "SOFT-CLOCK.PROF", "-a", "-g", "-d", "2"}));
    const auto t = plan({"-T", "-P", "cycles", "-t", "7", "-C"});
    EXPECT_EQ(t.args, (strings{"-e", "cycles", "-p", "7", "-g", "--cumulative"}));
}

TEST(Pmcstat, ProcessAndSystemSamplingInOneLog) {
    const auto p = plan({"-P", "SOFT-CLOCK.PROF", "-S", "SOFT-PAGE_FAULT.ALL", "-c", "0", "-O",
                         "x.log", "--", "make"});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.tool, "hwpmc-record");
    EXPECT_EQ(p.args, (strings{"-e", "SOFT-CLOCK.PROF", "--system-event", "SOFT-PAGE_FAULT.ALL",
                               "-C", "0", "-g", "-o", "x.log", "--", "make"}));
}

TEST(Pmcstat, CountingWithSamplingRecordsTheCounter) {
    // hwpmc-record counts -p's events on the targets it samples.
    const auto p = plan({"-p", "SOFT-SYSCALL.ENTER", "-P", "SOFT-CLOCK.PROF", "-O", "x.log", "-o",
                         "counts.txt", "--", "make", "-j2"});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.tool, "hwpmc-record");
    EXPECT_EQ(p.args,
              (strings{"-e", "SOFT-CLOCK.PROF", "-g", "-o", "x.log", "--count-event",
                       "SOFT-SYSCALL.ENTER", "--count-output", "counts.txt", "--", "make", "-j2"}));
    const auto t =
        plan({"-p", "SOFT-SYSCALL.ENTER", "-P", "SOFT-CLOCK.PROF", "-O", "x.log", "-t", "42"});
    EXPECT_EQ(t.args, (strings{"-e", "SOFT-CLOCK.PROF", "-p", "42", "-g", "-o", "x.log",
                               "--count-event", "SOFT-SYSCALL.ENTER"}));
}

TEST(Pmcstat, ReadingALogRunsReport) {
    EXPECT_EQ(plan({"-R", "x.log"}).args, (strings{"-i", "x.log", "--dump"}));
    EXPECT_EQ(plan({"-R", "x.log"}).tool, "hwpmc-report");
    EXPECT_EQ(plan({"-R", "x.log", "-g"}).args, (strings{"-i", "x.log", "--gprof", "."}));
    EXPECT_EQ(plan({"-R", "x.log", "-g", "-D", "prof"}).args,
              (strings{"-i", "x.log", "--gprof", "prof"}));
    const auto g = plan({"-R", "x.log", "-G", "graph.txt"});
    EXPECT_EQ(g.args, (strings{"-i", "x.log", "-g"}));
    EXPECT_EQ(g.stdout_file, "graph.txt");
    const auto f = plan({"-R", "x.log", "-F", "stacks.folded"});
    EXPECT_EQ(f.args, (strings{"-i", "x.log", "--folded"}));
    EXPECT_EQ(f.stdout_file, "stacks.folded");
    EXPECT_EQ(plan({"-R", "x.log", "-m", "pcs"}).stdout_file, "pcs");
}

TEST(Pmcstat, AcceptedOptionsWithoutEffectSaySo) {
    const auto p = plan({"-E", "-W", "-z", "16", "-D", "/tmp", "-p", "cycles"});
    EXPECT_EQ(p.error, "");
    EXPECT_EQ(p.notes.size(), 3u); // -D names where -g writes: no note
}

TEST(Pmcstat, UsageErrors) {
    EXPECT_NE(plan({}).error, "");
    EXPECT_NE(plan({"-P", "cycles"}).error.find("-O"), std::string::npos);
    // -T counts nothing; -s does not go with sampling.
    EXPECT_NE(plan({"-p", "cycles", "-P", "cycles", "-T", "--", "ls"}).error, "");
    EXPECT_NE(plan({"-s", "cycles", "-P", "cycles", "-O", "x", "--", "ls"}).error, "");
    EXPECT_NE(plan({"-P", "cycles", "-S", "cycles", "-T", "--", "ls"}).error, "");
    EXPECT_NE(plan({"-R", "x", "-p", "cycles"}).error, "");
    EXPECT_NE(plan({"-p", "cycles", "-g"}).error, "");
    EXPECT_EQ(plan({"-x"}).error, "-x: unknown option");
    EXPECT_EQ(plan({"-p"}).error, "-p needs an argument");
    EXPECT_NE(plan({"-w", "soon", "-p", "cycles"}).error, "");
    EXPECT_NE(plan({"-t", "self", "-p", "cycles"}).error, "");
    EXPECT_TRUE(plan({"-h"}).help);
}

} // namespace
