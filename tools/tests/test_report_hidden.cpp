// SPDX-License-Identifier: GPL-2.0
// hwpmc-report on samples whose kernel frames the module hid
// (PMCLOG_CC_F_KERNEL_HIDDEN): every output shows them as "[kernel hidden]",
// never as an address or an unresolved kernel symbol (--script and --pprof
// too); the export options' usage errors.
#include "pmclog_builder.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace hwpmc::test;

constexpr uint32_t pmcid = 0x13000001;
constexpr uint32_t pid = 4242;

// A process sampled 6 times: 3 in the kernel with the frames hidden (from
// a system call made at 0x401234 in a function called from 0x401010), 2 in
// user mode, 1 in a kernel thread with nothing user to show.
bytes hidden_log() {
    bytes log = initialize(1000);
    append(log, pmcallocate(2000, pmcid, "SOFT-PAGE_FAULT.ALL"));
    {
        struct pmclog_pmcattach r {};
        r.pl_pmcid = pmcid;
        r.pl_pid = pid;
        append(log, record(PMCLOG_TYPE_PMCATTACH, r, 2001, cstr("/nonexistent/prog")));
    }
    {
        struct pmclog_map_in r {};
        r.pl_pid = pid;
        r.pl_start = 0x400000;
        r.pl_end = 0x402000;
        r.pl_pgoff = 0;
        append(log, record(PMCLOG_TYPE_MAP_IN, r, 2002, cstr("/nonexistent/prog")));
    }
    for (uint64_t t = 3000; t < 3003; t++)
        append(log, callchain(t, pmcid, pid, {0x401234, 0x401010}, 0, PMCLOG_CC_F_KERNEL_HIDDEN));
    for (uint64_t t = 3003; t < 3005; t++)
        append(log, callchain(t, pmcid, pid, {0x401800, 0x401010}, 0, PMCLOG_CC_F_USER));
    append(log, callchain(3005, pmcid, pid + 100, {}, 0, PMCLOG_CC_F_KERNEL_HIDDEN));
    append(log, closelog(4000));
    return log;
}

class ReportHidden : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/hwpmc-report-hidden-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        log_ = dir_ + "/hwpmc.data";
        std::ofstream f(log_, std::ios::binary);
        const bytes b = hidden_log();
        f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
        ASSERT_TRUE(f.good());
    }
    void TearDown() override {
        std::string cmd = "rm -rf '" + dir_ + "'";
        EXPECT_EQ(std::system(cmd.c_str()), 0);
    }
    // hwpmc-report's standard output with `args`; its exit status in *rc.
    std::string report(const std::string &args, int *rc) {
        std::string cmd = std::string(HWPMC_REPORT) + " -i '" + log_ + "' " + args + " 2>&1";
        FILE *p = popen(cmd.c_str(), "r");
        std::string out;
        if (!p)
            return out;
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
            out.append(buf, n);
        *rc = pclose(p);
        return out;
    }
    static size_t count(const std::string &s, const std::string &what) {
        size_t n = 0;
        for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1))
            n++;
        return n;
    }
    std::string dir_, log_;
};

TEST_F(ReportHidden, FlatProfile) {
    int rc = -1;
    const std::string out = report("", &rc);
    EXPECT_EQ(rc, 0) << out;
    // 4 of 6 samples are "[kernel hidden]": 3 of the process, 1 of the
    // kernel thread (a command of its own).
    EXPECT_NE(out.find("50.00%         3  prog     [kernel]       [k] [kernel hidden]"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("16.67%         1  :4342    [kernel]       [k] [kernel hidden]"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("[unknown] [kernel]"), std::string::npos) << out;
    EXPECT_EQ(out.find("0xffff"), std::string::npos) << out;
    // The note says why.
    EXPECT_NE(out.find("4 samples interrupted the kernel but show it as [kernel hidden]"),
              std::string::npos)
        << out;
}

TEST_F(ReportHidden, CallGraph) {
    int rc = -1;
    const std::string out = report("-g", &rc);
    EXPECT_EQ(rc, 0) << out;
    // Under the hidden frame, its callers: the user code that made the call.
    const size_t at = out.find("---[kernel hidden]");
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_NE(out.find("prog+0x1234", at), std::string::npos) << out;
}

TEST_F(ReportHidden, Folded) {
    int rc = -1;
    const std::string out = report("--folded", &rc);
    EXPECT_EQ(rc, 0) << out;
    // Innermost last: the user frames, then the hidden kernel.
    EXPECT_NE(out.find("prog+0x100f;[unknown] prog+0x1234;[kernel hidden]_[k] 3"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(";[kernel hidden]_[k] 1"), std::string::npos) << out;
}

TEST_F(ReportHidden, FlameGraph) {
    int rc = -1;
    const std::string svg = dir_ + "/flame.svg";
    const std::string out = report("--flamegraph '" + svg + "'", &rc);
    EXPECT_EQ(rc, 0) << out;
    std::ifstream f(svg);
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_GE(count(ss.str(), "<title>[kernel hidden]"), 2u) << ss.str();
}

TEST_F(ReportHidden, Dump) {
    int rc = -1;
    const std::string out = report("--dump", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_EQ(count(out, "[kernel hidden]"), 4u) << out;
    EXPECT_EQ(count(out, "flags=0x4 nkernel=0"), 4u) << out;
}

TEST_F(ReportHidden, UserOnlyLeavesItOut) {
    int rc = -1;
    const std::string out = report("--user --folded", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_EQ(out.find("[kernel hidden]_[k]"), std::string::npos) << out;
    // The hidden samples count for the user code that entered the kernel.
    EXPECT_NE(out.find("prog+0x100f;[unknown] prog+0x1234 3"), std::string::npos) << out;
}

TEST_F(ReportHidden, Script) {
    int rc = -1;
    const std::string out = report("--script", &rc);
    EXPECT_EQ(rc, 0) << out;
    // One frame for the hidden kernel, innermost; no kernel address.
    EXPECT_EQ(count(out, "\t               0 [kernel hidden]+0x0 ([kernel.kallsyms])\n"), 4u)
        << out;
    EXPECT_EQ(out.find("ffff"), std::string::npos) << out;
    EXPECT_NE(out.find("prog  4242/4243  [001]     0.000003:    1000000 SOFT-PAGE_FAULT.ALL: \n"),
              std::string::npos)
        << out;
}

TEST_F(ReportHidden, PprofHasTheHiddenFrame) {
    int rc = -1;
    const std::string pb = dir_ + "/p.pb.gz";
    const std::string out = report("--pprof '" + pb + "'", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("wrote " + pb + " (6 samples)"), std::string::npos) << out;
    // The string table holds the frame's name; no location is a kernel
    // address (checked by decoding in test_export.cpp; here the bytes).
    std::string cmd = "gzip -dc '" + pb + "'";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string raw;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
        raw.append(buf, n);
    EXPECT_EQ(pclose(p), 0);
    EXPECT_NE(raw.find("[kernel hidden]"), std::string::npos);
    EXPECT_NE(raw.find("SOFT-PAGE_FAULT.ALL_samples"), std::string::npos);
}

TEST_F(ReportHidden, ExportUsageErrors) {
    for (const char *args : {"--script --folded", "--pprof x --flamegraph y", "--pprof ''",
                             "--script --pprof -", "--dump --script"}) {
        int rc = -1;
        const std::string out = report(args, &rc);
        EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << args << ": " << out;
        EXPECT_NE(out.find("hwpmc-report:"), std::string::npos) << out;
    }
}

} // namespace
