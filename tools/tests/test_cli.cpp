// SPDX-License-Identifier: GPL-2.0
// The command-line pieces (tools/lib): numbers, CPU and process-id lists,
// the sampling tools' shared options, usage errors (exit status 2), the
// rate texts.
#include "lib/common.hpp"
#include "lib/lists.hpp"
#include "lib/numbers.hpp"
#include "lib/sampling.hpp"

#include <gtest/gtest.h>

#include <cerrno>

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace hwpmc_tools;

TEST(Numbers, ToNumberAndWhole) {
    const struct {
        const char *arg;
        std::optional<double> num;
        std::optional<uint64_t> whole;
    } cases[] = {
        {"1", 1, 1},
        {"0x10", 16, 16},
        {"010", 10, 8}, // strtoull base 0: octal
        {"2.5", 2.5, std::nullopt},
        {"-3", -3, std::nullopt},
        {"", std::nullopt, std::nullopt},
        {"1e3", 1000, std::nullopt},
        {"inf", std::nullopt, std::nullopt},
        {"nan", std::nullopt, std::nullopt},
        {"12abc", std::nullopt, std::nullopt},
        {"99999999999999999999999", 1e23, std::nullopt},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.arg);
        EXPECT_EQ(to_number(c.arg), c.num);
        EXPECT_EQ(to_whole(c.arg), c.whole);
    }
}

TEST(Numbers, ParseOrUsageError) {
    EXPECT_EQ(parse_positive("t", "0.5", "-l"), 0.5);
    EXPECT_EQ(parse_count("t", "0x100", "-c"), 256u);
    EXPECT_EQ(parse_at_least("t", "10", "-I", 10), 10);
    EXPECT_EXIT(parse_positive("t", "0", "-l"), ::testing::ExitedWithCode(2),
                "t: -l wants a positive number, not '0'\n\\(t --help for help\\)");
    EXPECT_EXIT(parse_count("t", "-1", "-c"), ::testing::ExitedWithCode(2),
                "-c wants a positive whole number, not '-1'");
    EXPECT_EXIT(parse_count("t", "0", "-c"), ::testing::ExitedWithCode(2), "whole number");
    EXPECT_EXIT(parse_at_least("t", "5", "-I", 10), ::testing::ExitedWithCode(2),
                "-I wants a number >= 10, not '5'");
    EXPECT_EXIT(parse_at_least("t", "0", "-w", 0.01), ::testing::ExitedWithCode(2),
                "-w wants a number >= 0.010000, not '0'");
}

TEST(Numbers, Formatting) {
    const struct {
        uint64_t v;
        const char *text;
    } th[] = {{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}};
    for (const auto &c : th)
        EXPECT_EQ(thousands(c.v), c.text);
    EXPECT_EQ(group_thousands("-1234.50"), "-1,234.50");
    EXPECT_EQ(group_thousands("123"), "123");
    EXPECT_EQ(human_bytes(1), "1 byte");
    EXPECT_EQ(human_bytes(1023), "1023 bytes");
    EXPECT_EQ(human_bytes(1536), "1.5 KiB");
    EXPECT_EQ(human_bytes(3ull << 30), "3.0 GiB");
    EXPECT_EQ(hz_text(1000000), "1,000");
    EXPECT_EQ(hz_text(2000000000), "0.5");
    EXPECT_EQ(hz_text(3000000), "333");
    EXPECT_EQ(rate_text(true, 1000000), "every 1,000,000 ns of CPU time (1,000 Hz)");
    EXPECT_EQ(rate_text(false, 1), "every 1 event");
    EXPECT_EQ(rate_text(false, 1000), "every 1,000 events");
}

TEST(Lists, CpuListsTableDriven) {
    const struct {
        const char *arg;
        bool ok;
        std::vector<int> cpus;
        const char *text;
    } cases[] = {
        {"0", true, {0}, "0"},
        {"0,2-3", true, {0, 2, 3}, "0,2-3"},
        {"3,1,2,2", true, {1, 2, 3}, "1-3"},
        {"0-1,5,7-9", true, {0, 1, 5, 7, 8, 9}, "0-1,5,7-9"},
        {"", false, {}, ""},
        {"3-1", false, {}, ""},
        {"-1", false, {}, ""},
        {"1,", true, {1}, "1"},
        {"a", false, {}, ""},
        {"70000", false, {}, ""},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.arg);
        std::vector<int> cpus;
        EXPECT_EQ(parse_cpu_list(c.arg, &cpus), c.ok);
        if (c.ok) {
            EXPECT_EQ(cpus, c.cpus);
            EXPECT_EQ(cpu_list_string(cpus), c.text);
        }
    }
    EXPECT_FALSE(online_cpus(1).empty());
}

TEST(Lists, PidListsTableDriven) {
    const struct {
        const char *arg;
        bool ok;
        std::vector<pid_t> pids;
    } cases[] = {
        {"1", true, {1}},
        {"123,456", true, {123, 456}},
        {"1073741823", true, {pid_max}},
        {"1073741824", false, {}},
        {"0", false, {}},
        {"-5", false, {}},
        {"", false, {}},
        {"1,", false, {}},
        {",1", false, {}},
        {"1,,2", false, {}},
        {"12x", false, {}},
        {"0x10", false, {}}, // decimal only
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.arg);
        std::vector<pid_t> pids;
        EXPECT_EQ(parse_pid_list(c.arg, &pids), c.ok);
        if (c.ok) {
            EXPECT_EQ(pids, c.pids);
        }
    }
    std::vector<uint64_t> ids;
    EXPECT_TRUE(parse_number_list("0,4294967295", 0, UINT32_MAX, &ids));
    EXPECT_EQ(ids, (std::vector<uint64_t>{0, 4294967295u}));
    EXPECT_FALSE(parse_number_list("4294967296", 0, UINT32_MAX, &ids));
}

TEST(SamplingOptions, TableDriven) {
    const struct {
        int opt;
        const char *arg;
        bool (*check)(const sampling_options &);
    } cases[] = {
        {'e', "cycles", [](const sampling_options &o) { return o.events.back() == "cycles"; }},
        {'F', "99", [](const sampling_options &o) { return o.freq == 99; }},
        {'c', "5000", [](const sampling_options &o) { return o.period == 5000; }},
        {'g', nullptr, [](const sampling_options &o) { return o.callchain; }},
        {'a', nullptr, [](const sampling_options &o) { return o.system_wide; }},
        {'C', "0-1",
         [](const sampling_options &o) {
             return o.cpus == std::vector<int>{0, 1};
         }},
        {'p', "7,8",
         [](const sampling_options &o) {
             return o.pids == std::vector<pid_t>{7, 8};
         }},
        {opt_no_inherit, nullptr, [](const sampling_options &o) { return !o.inherit; }},
    };
    for (const auto &c : cases) {
        sampling_options o;
        EXPECT_TRUE(sampling_option("t", c.opt, c.arg, &o)) << c.opt;
        EXPECT_TRUE(c.check(o)) << c.opt;
    }
    sampling_options o;
    EXPECT_FALSE(sampling_option("t", 'o', "x", &o)); // not a shared option
    EXPECT_EXIT(
        {
            sampling_options x;
            sampling_option("t", 'F', "10", &x);
            sampling_option("t", 'c', "10", &x);
        },
        ::testing::ExitedWithCode(2), "-F and -c exclude each other");
    EXPECT_EXIT(sampling_option("t", 'p', "x", &o), ::testing::ExitedWithCode(2),
                "-p wants process ids, not 'x'");
    EXPECT_EXIT(sampling_option("t", 'C', "x", &o), ::testing::ExitedWithCode(2),
                "-C wants a CPU list like 0,2-3, not 'x'");
    EXPECT_EXIT(sampling_option("t", 'e', "", &o), ::testing::ExitedWithCode(2),
                "-e wants an event specifier");
}

// perf's --call-graph: fp (as -g) or dwarf[,SIZE].
TEST(SamplingOptions, CallGraphTableDriven) {
    const struct {
        const char *arg;
        bool ok;
        uint32_t ustack; // when ok
        const char *why; // in the message when not
    } cases[] = {
        {"fp", true, 0, nullptr},
        {"dwarf", true, 8192, nullptr},
        {"dwarf,4096", true, 4096, nullptr},
        {"dwarf,72", true, 72, nullptr},
        {"dwarf,65", true, 72, nullptr},              // rounded up to 8, as perf
        {"dwarf,64", false, 0, "more than 64 bytes"}, // -g's leaf copy
        {"dwarf,8", false, 0, "more than 64 bytes"},
        {"dwarf,65536", true, 65536, nullptr},
        {"dwarf,65537", false, 0, "at most 65536"},
        {"dwarf,0", false, 0, "a size in bytes"},
        {"dwarf,", false, 0, "a size in bytes"},
        {"dwarf,4k", false, 0, "a size in bytes"},
        {"dwarf,-8", false, 0, "a size in bytes"},
        {"dwarf,99999999999999", false, 0, "a size in bytes"},
        {"dwarf4096", false, 0, "fp or dwarf"},
        {"lbr", false, 0, "fp or dwarf"},
        {"", false, 0, "fp or dwarf"},
        {"FP", false, 0, "fp or dwarf"},
    };
    for (const auto &c : cases) {
        sampling_options o;
        std::string why;
        EXPECT_EQ(parse_call_graph(c.arg, &o, &why), c.ok) << c.arg;
        if (c.ok) {
            EXPECT_TRUE(o.callchain) << c.arg;
            EXPECT_EQ(o.ustack_size, c.ustack) << c.arg;
        } else {
            EXPECT_NE(why.find(c.why), std::string::npos) << c.arg << ": " << why;
            EXPECT_FALSE(o.callchain) << c.arg;
        }
    }
    // Through the shared option code: the last of -g / --call-graph wins.
    sampling_options o;
    EXPECT_TRUE(sampling_option("t", opt_call_graph, "dwarf,1024", &o));
    EXPECT_EQ(o.ustack_size, 1024u);
    EXPECT_TRUE(sampling_option("t", 'g', nullptr, &o));
    EXPECT_TRUE(o.callchain);
    EXPECT_EQ(o.ustack_size, 0u);
    EXPECT_TRUE(sampling_option("t", opt_call_graph, "dwarf", &o));
    EXPECT_EQ(o.ustack_size, 8192u);
    EXPECT_TRUE(sampling_option("t", opt_call_graph, "fp", &o));
    EXPECT_EQ(o.ustack_size, 0u);
    EXPECT_EXIT(sampling_option("t", opt_call_graph, "dwarf,x", &o), ::testing::ExitedWithCode(2),
                "dwarf,SIZE wants a size");
    // The long option takes its argument (perf's spelling).
    bool found = false;
    for (const auto &lo : sampling_longopts({}))
        if (lo.name && std::string(lo.name) == "call-graph") {
            found = true;
            EXPECT_EQ(lo.has_arg, required_argument);
            EXPECT_EQ(lo.val, opt_call_graph);
        }
    EXPECT_TRUE(found);
}

// hwpmc-record -g's stack copy: asked for, and done without when the
// module gives none (EINVAL, EOPNOTSUPP, ENOMEM), not on other errors.
TEST(SamplingOptions, LeafStackAndItsFallback) {
    pmc_group::request r;
    r.spec = "SOFT-CLOCK.PROF";
    r.flags = PMC_F_CALLCHAIN | PMC_F_DESCENDANTS;
    struct attempt {
        uint32_t flags, ustack;
    };
    // `errs`: what each allocation in turn fails with (0: succeeds; -1: a
    // bad specifier).
    auto run = [&](std::vector<int> errs, std::vector<attempt> *calls, pmc_group::failure *f,
                   pmc_group::request *failed, int *no_copy) {
        size_t i = 0;
        auto alloc = [&](const pmc_group::request &x, pmc_group::failure *xf) {
            calls->push_back({x.flags, x.ustack_size});
            const int e = i < errs.size() ? errs[i] : 0;
            i++;
            if (!e)
                return true;
            *xf = {e < 0 ? EINVAL : e, e < 0, "", -1};
            return false;
        };
        return allocate_leaf_stack(r, alloc, f, failed, no_copy);
    };
    const uint32_t with = PMC_F_CALLCHAIN | PMC_F_DESCENDANTS | PMC_F_USERSTACK;
    const uint32_t without = PMC_F_CALLCHAIN | PMC_F_DESCENDANTS;
    {
        std::vector<attempt> calls;
        pmc_group::failure f;
        pmc_group::request failed;
        int no_copy = -1;
        EXPECT_TRUE(run({0}, &calls, &f, &failed, &no_copy));
        ASSERT_EQ(calls.size(), 1u);
        EXPECT_EQ(calls[0].flags, with);
        EXPECT_EQ(calls[0].ustack, 64u);
        EXPECT_EQ(no_copy, 0);
    }
    for (int err : {EINVAL, EOPNOTSUPP, ENOMEM}) {
        std::vector<attempt> calls;
        pmc_group::failure f;
        pmc_group::request failed;
        int no_copy = 0;
        EXPECT_TRUE(run({err, 0}, &calls, &f, &failed, &no_copy)) << err;
        ASSERT_EQ(calls.size(), 2u) << err;
        EXPECT_EQ(calls[0].flags, with);
        EXPECT_EQ(calls[1].flags, without);
        EXPECT_EQ(calls[1].ustack, 0u);
        EXPECT_EQ(no_copy, err);
        // ... and the same error without the copy: that one is the failure.
        calls.clear();
        EXPECT_FALSE(run({err, err}, &calls, &f, &failed, &no_copy)) << err;
        EXPECT_EQ(calls.size(), 2u);
        EXPECT_EQ(failed.flags, without);
        EXPECT_EQ(f.err, err);
    }
    for (int err : {EPERM, EBUSY, -1}) {
        std::vector<attempt> calls;
        pmc_group::failure f;
        pmc_group::request failed;
        int no_copy = 0;
        EXPECT_FALSE(run({err, 0}, &calls, &f, &failed, &no_copy)) << err;
        EXPECT_EQ(calls.size(), 1u) << err; // not tried again without the copy
        EXPECT_EQ(failed.flags, with);
        EXPECT_EQ(f.spec, err < 0);
    }
}

TEST(SamplingOptions, DefaultEventAndFreqOnlyForClockProf) {
    sampling_options o;
    finish_sampling_options("t", &o);
    EXPECT_EQ(o.events, std::vector<std::string>{"SOFT-CLOCK.PROF"});
    o.freq = 100;
    o.events = {"task-clock", "CLOCK.PROF"};
    finish_sampling_options("t", &o); // no exit
    o.events = {"CLOCK.PROF", "SCHED.SWITCH"};
    EXPECT_EXIT(finish_sampling_options("t", &o), ::testing::ExitedWithCode(2),
                "-F HZ converts to a period only for CLOCK.PROF \\(CPU time\\); give "
                "'SCHED.SWITCH' a period with -c PERIOD");
}

TEST(SamplingOptions, Periods) {
    const struct {
        const char *spec;
        double freq;
        uint64_t period, want;
    } cases[] = {
        {"SOFT-CLOCK.PROF", 0, 0, 1000000}, // the default 1000 Hz
        {"CLOCK.PROF", 100, 0, 10000000},
        {"task-clock", 3, 0, 333333333},
        {"SCHED.SWITCH", 0, 0, 1},
        {"SCHED.SWITCH", 0, 7, 7},
        {"tsc", 0, 0, 1000000}, // not SOFT: hardware's default
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.spec);
        sampling_options o;
        o.freq = c.freq;
        o.period = c.period;
        uint64_t p = 0;
        std::string why;
        EXPECT_TRUE(period_of(hwpmc::parse_event(c.spec), o, &p, &why)) << why;
        EXPECT_EQ(p, c.want);
    }
    sampling_options o;
    o.freq = 10;
    uint64_t p = 0;
    std::string why;
    EXPECT_FALSE(period_of(hwpmc::parse_event("SCHED.SWITCH"), o, &p, &why));
    EXPECT_NE(why.find("-F HZ converts"), std::string::npos);
}

TEST(Cli, BadOptionSaysWhich) {
    char a0[] = "t", a1[] = "--nope";
    char *argv[] = {a0, a1, nullptr};
    EXPECT_EXIT(
        {
            optind = 2;
            optopt = 0;
            bad_option("t", argv, "e");
        },
        ::testing::ExitedWithCode(2), "t: unknown option --nope");
    EXPECT_EXIT(
        {
            optind = 2;
            optopt = 'e';
            bad_option("t", argv, "e");
        },
        ::testing::ExitedWithCode(2), "t: option -e needs an argument");
}

} // namespace
