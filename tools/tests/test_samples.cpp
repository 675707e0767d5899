// SPDX-License-Identifier: GPL-2.0
// Sample attribution (tools/profile/addrspace, samples): a synthetic log's
// samples resolve through the mappings of their process at their time,
// across fork (inherited), exec (a new image), dlopen/dlclose (MAP_IN,
// MAP_OUT), with records of different CPUs out of order in the file.
#include "profile/samples.hpp"
#include "tools_test.hpp"

#include <gtest/gtest.h>

#include <string>
#include <unistd.h>

namespace {

using namespace tools_test;
using hwpmc_tools::log_data;
using hwpmc_tools::resolver;
using hwpmc_tools::symbolizer;

constexpr uint64_t base_a = 0x7f0000000000, base_b = 0x7f1000000000;

struct expect {
    uint64_t t;
    uint32_t pid;
    const char *name, *dso, *comm;
};

void check(const bytes &body, const std::vector<expect> &want) {
    log_data data;
    read_log(log_of(body), &data);
    symbolizer sym;
    resolver res(data.procs, sym);
    ASSERT_EQ(data.samples.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) {
        const auto &raw = data.samples[i];
        SCOPED_TRACE("sample at t=" + std::to_string(raw.t) + " pid " + std::to_string(raw.pid));
        EXPECT_EQ(raw.t, want[i].t);
        EXPECT_EQ(raw.pid, want[i].pid);
        const auto s = res.resolve(raw);
        ASSERT_EQ(s.frames.size(), 1u);
        EXPECT_EQ(res.frame(s.frames[0]).name, want[i].name);
        EXPECT_EQ(res.frame(s.frames[0]).dso, want[i].dso);
        EXPECT_EQ(res.comm_name(s.comm), want[i].comm);
    }
}

TEST(Attribution, ForkExecDlopen) {
    const place lib = place_of("libfixture.so"), other = place_of("libfixture-debuglink.so");
    ASSERT_NE(lib.len, 0u);
    ASSERT_NE(other.len, 0u);
    const uint64_t pc_a = base_a + lib.delta, pc_b = base_b + other.delta;
    bytes b;
    // pid 100 runs /usr/bin/parent with lib at base_a.
    append(b, attach(10, 100, "/usr/bin/parent"));
    append(b, map_at(11, 100, base_a, lib));
    append(b, sample_rec(20, 100, {pc_a}));
    // It forks 101 (inherits lib at base_a, and the name).
    append(b, fork(30, 100, 101));
    append(b, sample_rec(40, 101, {pc_a}));
    // 101 execs /usr/bin/child, whose image maps `other` at base_a.
    append(b, exec(50, 101, "/usr/bin/child"));
    append(b, map_at(51, 101, base_a, other));
    append(b, sample_rec(60, 101, {base_a + other.delta}));
    append(b, sample_rec(61, 100, {pc_a})); // the parent is unchanged
    // 100 dlopens `other` at base_b, then dlcloses it.
    append(b, map_at(70, 100, base_b, other));
    append(b, sample_rec(80, 100, {pc_b}));
    append(b, map_out(90, 100, base_b, base_b + other.len));
    append(b, map_at(95, 100, base_b, lib)); // something else there now
    append(b, sample_rec(99, 100, {base_b + lib.delta}));
    check(b, {
                 {20, 100, "fixture_exported", "libfixture.so", "parent"},
                 {40, 101, "fixture_exported", "libfixture.so", "parent"},
                 {60, 101, "fixture_exported", "libfixture-debuglink.so", "child"},
                 {61, 100, "fixture_exported", "libfixture.so", "parent"},
                 {80, 100, "fixture_exported", "libfixture-debuglink.so", "parent"},
                 {99, 100, "fixture_exported", "libfixture.so", "parent"},
             });
}

TEST(Attribution, RecordsOutOfOrderAreAppliedByTime) {
    // Each CPU has its own buffers: the child's exec (CPU 1) reaches the
    // file before the parent's fork (CPU 0) that came first.
    const place lib = place_of("libfixture.so"), other = place_of("libfixture-debuglink.so");
    bytes b;
    append(b, attach(10, 200, "/usr/bin/parent"));
    append(b, map_at(11, 200, base_a, lib));
    append(b, exec(50, 201, "/usr/bin/child"));
    append(b, map_at(51, 201, base_a, other));
    append(b, sample_rec(40, 201, {base_a + lib.delta}));
    append(b, sample_rec(60, 201, {base_a + other.delta}));
    append(b, fork(30, 200, 201));
    check(b, {
                 {40, 201, "fixture_exported", "libfixture.so", "parent"},
                 {60, 201, "fixture_exported", "libfixture-debuglink.so", "child"},
             });
}

TEST(Attribution, SampleBeforeItsExecsMappingsUsesTheNextMapping) {
    // An exec's MAP_IN records come once the new image runs, after its
    // first samples: those resolve through the mapping just after them.
    const place lib = place_of("libfixture.so");
    bytes b;
    append(b, exec(10, 300, "/usr/bin/prog"));
    append(b, sample_rec(11, 300, {base_a + lib.delta}));
    append(b, map_at(12, 300, base_a, lib));
    check(b, {{11, 300, "fixture_exported", "libfixture.so", "prog"}});
}

TEST(Attribution, UnmappedAndUnknownProcesses) {
    bytes b;
    append(b, sample_rec(10, 400, {0x1234}));
    log_data data;
    read_log(log_of(b), &data);
    symbolizer sym;
    resolver res(data.procs, sym);
    const auto s = res.resolve(data.samples.at(0));
    ASSERT_EQ(s.frames.size(), 1u);
    EXPECT_TRUE(res.frame(s.frames[0]).unknown);
    EXPECT_EQ(res.frame(s.frames[0]).name, "[unknown] 0x1234");
    EXPECT_EQ(res.comm_name(s.comm), ":400");
    EXPECT_EQ(res.user_unmapped, 1u);
}

TEST(Attribution, LogTotals) {
    bytes b;
    append(b, sample_rec(10, 1, {0x1000}));
    {
        struct pmclog_dropnotify r {};
        r.pl_samples = 7;
        r.pl_records = 2;
        append(b, record(PMCLOG_TYPE_DROPNOTIFY, r, 11));
    }
    log_data data;
    read_log(log_of(b), &data);
    EXPECT_TRUE(data.initialized);
    EXPECT_TRUE(data.closed);
    EXPECT_EQ(data.dropped_samples, 7u);
    EXPECT_EQ(data.dropped_records, 2u);
    ASSERT_EQ(data.pmcs.count(pmcid), 1u);
    EXPECT_EQ(data.pmcs[pmcid].event, "SOFT-CLOCK.PROF");
    EXPECT_TRUE(data.pmcs[pmcid].clock_prof);
    EXPECT_EQ(data.pmcs[pmcid].rate, 1000000u);
}

// hwpmc-report's two readings: log_data takes the records and keeps no
// sample; read_samples() gives the samples again, in log order, as
// log_data would have kept them, from a file or (copied by rereadable())
// a pipe, and stops where the first reading stopped.
TEST(TwoReadings, SamplesReadAgainAreTheKeptOnes) {
    bytes b;
    append(b, attach(10, 500, "/usr/bin/prog"));
    append(b, sample_rec(12, 500, {0x1000, 0x2000}));
    append(b, exec(13, 500, "/usr/bin/next"));
    append(b, sample_rec(11, 501, {0x3000}, 2)); // out of order: another CPU
    append(b, sample_rec(14, 500, {}));
    const bytes log = log_of(b);
    log_data kept;
    read_log(log, &kept);
    ASSERT_EQ(kept.samples.size(), 3u);

    int p[2];
    ASSERT_EQ(pipe(p), 0);
    ASSERT_EQ(write(p[1], log.data(), log.size()), static_cast<ssize_t>(log.size()));
    close(p[1]);
    const int fd = hwpmc_tools::rereadable(p[0]);
    ASSERT_GE(fd, 0);
    EXPECT_NE(fd, p[0]); // a pipe cannot be read twice: a copy
    close(p[0]);
    log_data data;
    data.keep_samples = false;
    {
        hwpmc::log_reader r(fd);
        for (const pmclog_ev &ev : r)
            data.add(ev);
    }
    EXPECT_TRUE(data.samples.empty());
    EXPECT_EQ(data.sample_count, 3u);
    EXPECT_EQ(data.records, kept.records);
    std::vector<hwpmc_tools::raw_sample> again;
    hwpmc_tools::read_samples(fd, data.records,
                              [&](const hwpmc_tools::raw_sample &r) { again.push_back(r); });
    ASSERT_EQ(again.size(), kept.samples.size());
    for (size_t i = 0; i < again.size(); i++) {
        EXPECT_EQ(again[i].t, kept.samples[i].t);
        EXPECT_EQ(again[i].pid, kept.samples[i].pid);
        EXPECT_EQ(again[i].cpu, kept.samples[i].cpu);
        EXPECT_EQ(again[i].pcs, kept.samples[i].pcs);
    }
    // A first reading that stopped early (a corrupt record): no further.
    again.clear();
    const uint64_t before_second = 5; // INITIALIZE, PMCALLOCATE, ATTACH, sample, EXEC
    hwpmc_tools::read_samples(fd, before_second,
                              [&](const hwpmc_tools::raw_sample &r) { again.push_back(r); });
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].t, 12u);
    close(fd);
}

} // namespace
