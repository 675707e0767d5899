// SPDX-License-Identifier: GPL-2.0
// hwpmc-report's fast paths give what the careful ones give: the log read
// in place (log_scan, log_data::read_fast()) takes the records log_reader
// takes and refuses what it would report; the chain cache (chain_cache,
// resolver::epoch() and frame_at()) resolves every sample as
// resolver::resolve() does, with the same counts, across remappings,
// forks, execs, unmapped and kernel addresses, hidden kernel frames and
// leaves that vary, however small the cache; a profile fed through it is
// the profile fed sample by sample.
#include "profile/chain_cache.hpp"
#include "profile/log_scan.hpp"
#include "profile/profile.hpp"
#include "profile/samples.hpp"
#include "tools_test.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

using namespace tools_test;
using hwpmc_tools::chain_cache;
using hwpmc_tools::log_data;
using hwpmc_tools::log_scan;
using hwpmc_tools::raw_sample;
using hwpmc_tools::resolver;
using hwpmc_tools::symbolizer;

constexpr uint64_t base_a = 0x7f0000000000, base_b = 0x7f1000000000;
constexpr uint64_t kaddr = 0xffffffff81000000ull;

// An unlinked temporary file holding `b`.
int file_of(const bytes &b) {
    char name[] = "/tmp/hwpmc-fast-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0)
        return -1;
    unlink(name);
    if (write(fd, b.data(), b.size()) != static_cast<ssize_t>(b.size())) {
        close(fd);
        return -1;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

// A log whose processes change while sampled, with every kind of chain.
bytes busy_log(const place &lib) {
    bytes b;
    const uint64_t fn = base_a + lib.delta;
    append(b, attach(10, 100, "/usr/bin/parent"));
    append(b, map_at(11, 100, base_a, lib));
    uint64_t t = 20;
    for (int round = 0; round < 40; round++) {
        // leaves varying inside the function, a repeated address, unmapped
        // ones, kernel frames, a hidden kernel
        append(b, sample_rec(t++, 100, {fn + static_cast<uint64_t>(round % 5), fn + 0x10}));
        append(b, sample_rec(t++, 100, {fn, fn, fn + 0x20}));
        append(b, sample_rec(t++, 100, {0x1234 + static_cast<uint64_t>(round % 3), fn + 0x10}));
        append(b, hwpmc::test::callchain(t++, pmcid, 100, {kaddr + 0x10, kaddr + 0x20, fn, fn + 8},
                                         2, 0));
        append(b, hwpmc::test::callchain(t++, pmcid, 100, {fn + 4}, 0, PMCLOG_CC_F_KERNEL_HIDDEN));
        append(b, sample_rec(t++, 101, {base_b + lib.delta + 2}));
        if (round == 10) {
            // dlclose, dlopen elsewhere
            append(b, map_out(t++, 100, base_a, base_a + lib.len));
            append(b, map_at(t++, 100, base_b, lib));
        }
        if (round == 20) {
            append(b, fork(t++, 100, 101));
            append(b, exec(t++, 101, "/usr/bin/child"));
            append(b, map_at(t++, 101, base_b, lib));
        }
        if (round == 30) {
            append(b, map_out(t++, 100, base_b, base_b + lib.len));
            append(b, map_at(t++, 100, base_a, lib));
        }
    }
    return log_of(b);
}

TEST(LogScan, ReadsTheRecordsLogReaderReads) {
    const place lib = place_of("libfixture.so");
    ASSERT_NE(lib.len, 0u);
    const bytes log = busy_log(lib);
    log_data slow;
    read_log(log, &slow);
    const int fd = file_of(log);
    ASSERT_GE(fd, 0);
    log_data fast;
    fast.keep_samples = false;
    ASSERT_TRUE(fast.read_fast(fd));
    fast.apply();
    EXPECT_EQ(fast.records, slow.records);
    EXPECT_EQ(fast.sample_count, slow.sample_count);
    EXPECT_EQ(fast.t_first, slow.t_first);
    EXPECT_EQ(fast.t_last, slow.t_last);
    EXPECT_TRUE(fast.closed);
    EXPECT_EQ(fast.pmcs.size(), slow.pmcs.size());
    EXPECT_EQ(fast.procs.processes(), slow.procs.processes());
    // read in place again: the samples log_data would have kept
    std::vector<raw_sample> again;
    hwpmc_tools::read_samples(fd, fast.records, [&](const raw_sample &r) { again.push_back(r); });
    ASSERT_EQ(again.size(), slow.samples.size());
    for (size_t i = 0; i < again.size(); i++) {
        EXPECT_EQ(again[i].t, slow.samples[i].t);
        EXPECT_EQ(again[i].pid, slow.samples[i].pid);
        EXPECT_EQ(again[i].flags, slow.samples[i].flags);
        EXPECT_EQ(again[i].nkernel, slow.samples[i].nkernel);
        EXPECT_EQ(again[i].pcs, slow.samples[i].pcs);
    }
    close(fd);
}

TEST(LogScan, LeavesWhatIsNotWholeToLogReader) {
    const place lib = place_of("libfixture.so");
    const bytes log = busy_log(lib);
    // Truncated inside a record.
    {
        const int fd = file_of(bytes(log.begin(), log.end() - 12));
        ASSERT_GE(fd, 0);
        log_data d;
        d.keep_samples = false;
        EXPECT_FALSE(d.read_fast(fd));
        EXPECT_EQ(d.records, 0u); // untouched
        close(fd);
    }
    // A CALLCHAIN claiming more addresses than it has.
    {
        bytes b;
        bytes bad = sample_rec(10, 100, {0x1000, 0x2000});
        struct pmclog_callchain c;
        std::memcpy(&c, bad.data(), sizeof(c));
        c.pl_npc = 3;
        std::memcpy(bad.data(), &c, sizeof(c));
        append(b, bad);
        const int fd = file_of(log_of(b));
        ASSERT_GE(fd, 0);
        log_scan scan(fd);
        log_scan::record r;
        bool refused = false;
        while (scan.next(&r))
            if (r.type == PMCLOG_TYPE_CALLCHAIN)
                refused = !log_scan::callchain_ok(r);
        EXPECT_TRUE(refused);
        lseek(fd, 0, SEEK_SET);
        log_data d;
        d.keep_samples = false;
        EXPECT_FALSE(d.read_fast(fd));
        close(fd);
    }
    // Not a regular file.
    {
        int p[2];
        ASSERT_EQ(pipe(p), 0);
        log_scan scan(p[0]);
        log_scan::record r;
        EXPECT_FALSE(scan.next(&r));
        EXPECT_FALSE(scan.clean());
        close(p[0]);
        close(p[1]);
    }
}

TEST(ProcessTable, ChangeTimesBoundWhatResolves) {
    const place lib = place_of("libfixture.so");
    log_data data;
    read_log(busy_log(lib), &data);
    const auto times = data.procs.change_times(100);
    ASSERT_FALSE(times.empty());
    EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
    EXPECT_EQ(std::adjacent_find(times.begin(), times.end()), times.end());
    EXPECT_TRUE(data.procs.change_times(999).empty());
    symbolizer sym;
    resolver res(data.procs, sym);
    // One epoch from a change time up to the next.
    for (size_t i = 0; i + 1 < times.size(); i++) {
        EXPECT_EQ(res.epoch(100, times[i]), res.epoch(100, times[i + 1] - 1));
        EXPECT_NE(res.epoch(100, times[i]), res.epoch(100, times[i + 1]));
    }
}

// Every sample through the cache and through resolve(), in step.
void same_as_resolve(size_t max_bytes) {
    const place lib = place_of("libfixture.so");
    log_data data;
    read_log(busy_log(lib), &data);
    ASSERT_GT(data.samples.size(), 200u);
    symbolizer sym_a, sym_b;
    resolver plain(data.procs, sym_a), cached(data.procs, sym_b);
    chain_cache cache(cached, max_bytes);
    for (const raw_sample &r : data.samples) {
        SCOPED_TRACE("sample at t=" + std::to_string(r.t));
        const auto s = plain.resolve(r);
        const auto c = cache.resolve(r);
        EXPECT_EQ(plain.comm_name(s.comm), cached.comm_name(c.comm));
        ASSERT_EQ(s.frames.size(), c.frames.size());
        for (size_t i = 0; i < s.frames.size(); i++) {
            EXPECT_EQ(plain.frame(s.frames[i]).name, cached.frame(c.frames[i]).name);
            EXPECT_EQ(plain.frame(s.frames[i]).dso, cached.frame(c.frames[i]).dso);
        }
        EXPECT_EQ(plain.user_unmapped, cached.user_unmapped);
        EXPECT_EQ(plain.kernel_frames, cached.kernel_frames);
        EXPECT_EQ(plain.kernel_hidden, cached.kernel_hidden);
    }
    if (max_bytes < 4096) {
        EXPECT_GT(cache.flushes, 0u);
    } else {
        EXPECT_GT(cache.hits, 0u);
    }
}

TEST(ChainCache, ResolvesAsResolveDoes) {
    same_as_resolve(8u << 20);
}

TEST(ChainCache, ATinyCacheStartsAfreshAndResolvesTheSame) {
    same_as_resolve(1);
}

TEST(ChainCache, AProfileFedThroughItIsTheSame) {
    const place lib = place_of("libfixture.so");
    log_data data;
    read_log(busy_log(lib), &data);
    for (const auto &keys :
         {std::vector<hwpmc_tools::sort_key>{
              hwpmc_tools::sort_key::comm, hwpmc_tools::sort_key::dso, hwpmc_tools::sort_key::sym},
          std::vector<hwpmc_tools::sort_key>{hwpmc_tools::sort_key::tid,
                                             hwpmc_tools::sort_key::sym}}) {
        symbolizer sym;
        resolver res(data.procs, sym);
        hwpmc_tools::profile one(res, keys), two(res, keys);
        chain_cache cache(res);
        for (const raw_sample &r : data.samples) {
            one.add(res.resolve(r));
            two.add(cache.resolve(r), r.pid, r.tid, r.cpu);
        }
        ASSERT_EQ(one.total(), two.total());
        ASSERT_EQ(one.chains().size(), two.chains().size());
        for (size_t i = 0; i < one.chains().size(); i++) {
            EXPECT_EQ(one.chains()[i].count, two.chains()[i].count);
            const auto a = one.frames(one.chains()[i]), b = two.frames(two.chains()[i]);
            EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
        }
    }
}

} // namespace
