// SPDX-License-Identifier: GPL-2.0
// gprof(1) output (tools/profile/output_gmon, hwpmc-report --gprof, pmcstat
// -g): the histogram, the bytes of GNU's gmon.out format, and GNU gprof
// itself (binutils) reading a profile of this test program's own functions
// back, with the time of each.
#include "profile/output_gmon.hpp"
#include "tools_test.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {
// Two functions for the profile; not inlined, not merged.
__attribute__((noinline, used)) int gmon_hot_function(int x) {
    asm volatile("" ::: "memory");
    return x * 3 + 1;
}
__attribute__((noinline, used)) int gmon_cold_function(int x) {
    asm volatile("" ::: "memory");
    return x * 5 + 2;
}
}

namespace {

using namespace hwpmc_tools;
using tools_test::mapping;
using tools_test::mapping_of;

TEST(Gmon, HistogramBinsEveryAddress) {
    const gmon_histogram h = gmon_histogram_of({0x1003, 0x1000, 0x1010, 0x1011, 0x1013}, 4);
    EXPECT_EQ(h.low, 0x1000u);
    EXPECT_EQ(h.high, 0x1014u);
    ASSERT_EQ(h.bins.size(), 5u);
    EXPECT_EQ(h.bins[0], 2u);
    EXPECT_EQ(h.bins[4], 3u);
    EXPECT_TRUE(gmon_histogram_of({}).bins.empty());
    // Counts saturate at 65535 rather than wrap.
    std::vector<uint64_t> many(70000, 0x2000);
    EXPECT_EQ(gmon_histogram_of(many).bins.at(0), 65535u);
}

TEST(Gmon, BytesAreGnuGmonFormat) {
    gmon_histogram h;
    h.low = 0x1000;
    h.high = 0x1008;
    h.bins = {7, 9};
    h.rate = 1000;
    const std::string b = gmon_bytes(h);
    // Header 20, tag 1, two addresses 16, size and rate 8, dimension 16, counts 4.
    ASSERT_EQ(b.size(), 20u + 1 + 16 + 8 + 16 + 4);
    EXPECT_EQ(b.substr(0, 4), "gmon");
    int32_t v;
    std::memcpy(&v, b.data() + 4, 4);
    EXPECT_EQ(v, 1);
    EXPECT_EQ(b[20], '\0'); // GMON_TAG_TIME_HIST
    uint64_t lo, hi;
    std::memcpy(&lo, b.data() + 21, 8);
    std::memcpy(&hi, b.data() + 29, 8);
    EXPECT_EQ(lo, 0x1000u);
    EXPECT_EQ(hi, 0x1008u);
    int32_t n, rate;
    std::memcpy(&n, b.data() + 37, 4);
    std::memcpy(&rate, b.data() + 41, 4);
    EXPECT_EQ(n, 2);
    EXPECT_EQ(rate, 1000);
    EXPECT_EQ(std::string(b.data() + 45), "seconds");
    EXPECT_EQ(b[60], 's');
    uint16_t c0, c1;
    std::memcpy(&c0, b.data() + 61, 2);
    std::memcpy(&c1, b.data() + 63, 2);
    EXPECT_EQ(c0, 7u);
    EXPECT_EQ(c1, 9u);
}

// A log of this process: 300 CLOCK.PROF samples (1 ms each) in
// gmon_hot_function, 100 in gmon_cold_function, 5 in the kernel; written
// as gprof files and read back by GNU gprof.
TEST(Gmon, GnuGprofReadsTheProfile) {
    if (std::system("gprof --version >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "GNU gprof (binutils) is not installed";
    const void *hot = reinterpret_cast<const void *>(&gmon_hot_function);
    const void *cold = reinterpret_cast<const void *>(&gmon_cold_function);
    mapping m;
    ASSERT_TRUE(mapping_of(hot, &m));
    log_data data;
    data.procs.map_in(42, m.start, m.end, m.pgoff, m.path, 1);
    data.pmcs[7] = pmc_desc{"SOFT-CLOCK.PROF", 1000000, true, 0, 0, 0};
    std::vector<raw_sample> store;
    for (int i = 0; i < 300; i++)
        store.push_back({10, 42, 42, 0, 7, 0, 0, {reinterpret_cast<uint64_t>(hot) + 1}});
    for (int i = 0; i < 100; i++)
        store.push_back({10, 42, 42, 0, 7, 0, 0, {reinterpret_cast<uint64_t>(cold) + 1}});
    for (int i = 0; i < 5; i++)
        store.push_back({10, 42, 42, 0, 7, 0, 1, {0xffffffff81000000ull}});
    std::vector<const raw_sample *> raws;
    for (const auto &r : store)
        raws.push_back(&r);

    const auto dir =
        std::filesystem::temp_directory_path() / ("hwpmc-gmon-" + std::to_string(getpid()));
    symbolizer sym;
    gmon_summary sum;
    std::string err;
    ASSERT_TRUE(write_gmon_profiles(dir.string(), data, sym, raws, &sum, &err)) << err;
    ASSERT_EQ(sum.files.size(), 1u);
    EXPECT_EQ(sum.files[0].samples, 400u);
    EXPECT_EQ(sum.kernel, 5u);
    const std::string exe = std::filesystem::path(m.path).filename().string();
    EXPECT_EQ(sum.files[0].path, (dir / "SOFT-CLOCK.PROF" / (exe + ".gmon")).string());

    const std::string cmd = "gprof -b -p '" + m.path + "' '" + sum.files[0].path + "' 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof(buf), p))
        out += buf;
    pclose(p);
    std::filesystem::remove_all(dir);
    // gprof's flat profile: "% time  cumulative seconds  self seconds ... name".
    double hot_pct = -1, hot_s = -1, cold_pct = -1, cold_s = -1;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        double pct, cum, self;
        if (std::sscanf(line.c_str(), "%lf %lf %lf", &pct, &cum, &self) != 3)
            continue;
        if (line.find("gmon_hot_function") != std::string::npos)
            hot_pct = pct, hot_s = self;
        if (line.find("gmon_cold_function") != std::string::npos)
            cold_pct = pct, cold_s = self;
    }
    EXPECT_DOUBLE_EQ(hot_pct, 75.0) << out;
    EXPECT_DOUBLE_EQ(hot_s, 0.30) << out;
    EXPECT_DOUBLE_EQ(cold_pct, 25.0) << out;
    EXPECT_DOUBLE_EQ(cold_s, 0.10) << out;
}

} // namespace
