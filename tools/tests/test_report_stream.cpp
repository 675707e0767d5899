// SPDX-License-Identifier: GPL-2.0
// hwpmc-report streams (it reads the log twice and keeps aggregates, not
// samples): its outputs are byte for byte those of the report that kept
// every sample (the files under fixtures/report_stream/ were written by
// that report, before the change, from this log), for the flat profile,
// the call graphs of both directions, other sort keys, filters, two
// events, the folded stacks and the flame graph; a log read from a pipe
// gives the same as the file.
//
// The log: two processes whose address spaces change while they are
// sampled (a library unmapped and mapped elsewhere; a fork, then an exec
// whose MAP_IN records come after its first samples in the file), records
// of different CPUs out of order, kernel frames named from a --kallsyms
// file, recursion, and chains whose counts tie.  Files that do not exist
// name user frames by address.
#include "pmclog_builder.hpp"
#include "profile/saved_ksyms.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace hwpmc::test;

constexpr uint32_t clock_id = 0x13000001, faults_id = 0x13000002;
constexpr uint64_t app = 0x400000, lib_a = 0x7f0000000000, lib_b = 0x7f2000000000;
constexpr uint64_t kbase = 0xffffffff81000000ull;

bytes map_in(uint64_t t, uint32_t pid, uint64_t start, uint64_t len, const char *path) {
    struct pmclog_map_in r {};
    r.pl_pid = pid;
    r.pl_start = start;
    r.pl_end = start + len;
    return record(PMCLOG_TYPE_MAP_IN, r, t, cstr(path));
}

bytes stream_log() {
    bytes log = initialize(1000);
    append(log, pmcallocate(1001, clock_id, "SOFT-CLOCK.PROF"));
    append(log, pmcallocate(1002, faults_id, "SOFT-PAGE_FAULT.ALL"));
    {
        struct pmclog_pmcattach r {};
        r.pl_pmcid = clock_id;
        r.pl_pid = 100;
        append(log, record(PMCLOG_TYPE_PMCATTACH, r, 1003, cstr("/nonexistent/app")));
    }
    append(log, map_in(1004, 100, app, 0x10000, "/nonexistent/app"));
    append(log, map_in(1005, 100, lib_a, 0x10000, "/nonexistent/libx.so"));
    // Chains, innermost first: user PCs (app, libx at lib_a) and kernel
    // ones; the leaves vary inside a few "functions".
    const std::vector<std::vector<uint64_t>> user = {
        {app + 0x1100, app + 0x1205, app + 0x1305},
        {app + 0x1110, app + 0x1205, app + 0x1305},
        {lib_a + 0x2100, app + 0x1405, app + 0x1305},
        {lib_a + 0x2200, lib_a + 0x2105, app + 0x1405, app + 0x1305},
        {app + 0x1500, app + 0x1505, app + 0x1505, app + 0x1305}, // recursion
        {app + 0x1305},
    };
    const std::vector<std::vector<uint64_t>> kernel = {
        {kbase + 0x10, kbase + 0x105},
        {kbase + 0x200},
    };
    uint64_t t = 2000;
    auto sample = [&](uint32_t pmc, uint32_t pid, size_t u, int k, uint64_t lib_base) {
        std::vector<uint64_t> pcs;
        if (k >= 0)
            pcs = kernel[static_cast<size_t>(k)];
        for (uint64_t pc : user[u])
            pcs.push_back(pc >= lib_a ? pc - lib_a + lib_base : pc);
        uint32_t nk = k >= 0 ? static_cast<uint32_t>(kernel[static_cast<size_t>(k)].size()) : 0;
        append(log, callchain(t, pmc, pid, pcs, nk, nk ? 0 : PMCLOG_CC_F_USER,
                              static_cast<uint32_t>(t % 3)));
        t += 10;
    };
    // Phase 1: pid 100, libx at lib_a; 3 of each chain (ties), more of some.
    for (int round = 0; round < 3; round++)
        for (size_t u = 0; u < user.size(); u++)
            sample(clock_id, 100, u, static_cast<int>(u % 3) - 1, lib_a);
    for (int i = 0; i < 4; i++)
        sample(clock_id, 100, 3, 0, lib_a);
    for (int i = 0; i < 5; i++)
        sample(faults_id, 100, i % 2 ? 2 : 0, -1, lib_a);
    // libx unmapped, mapped again at lib_b.
    {
        struct pmclog_map_out r {};
        r.pl_pid = 100;
        r.pl_start = lib_a;
        r.pl_end = lib_a + 0x10000;
        append(log, record(PMCLOG_TYPE_MAP_OUT, r, t++));
    }
    append(log, map_in(t++, 100, lib_b, 0x10000, "/nonexistent/libx.so"));
    for (int i = 0; i < 6; i++)
        sample(clock_id, 100, 2 + static_cast<size_t>(i % 2), i % 3 - 1, lib_b);
    // pid 100 forks 200, which execs /nonexistent/tool: its first samples
    // come in the file before the exec's records (another CPU's buffer),
    // one of them taken before the exec.
    uint64_t fork_t = t++;
    uint64_t exec_t = t + 15;
    sample(clock_id, 200, 5, -1, lib_b); // before the exec: the parent's image
    t = exec_t + 5;
    for (int i = 0; i < 4; i++)
        sample(clock_id, 200, i % 2 ? 0 : 1, i % 2 ? 0 : -1, lib_b);
    {
        struct pmclog_procfork r {};
        r.pl_ppid = 100;
        r.pl_pid = 200;
        append(log, record(PMCLOG_TYPE_PROCFORK, r, fork_t));
        struct pmclog_procexec x {};
        x.pl_pid = 200;
        x.pl_pmcid = clock_id;
        append(log, record(PMCLOG_TYPE_PROCEXEC, x, exec_t, cstr("/nonexistent/tool")));
    }
    append(log, map_in(exec_t + 1, 200, app, 0x10000, "/nonexistent/tool"));
    for (int round = 0; round < 2; round++)
        for (size_t u = 0; u < user.size(); u++)
            sample(u % 2 ? faults_id : clock_id, round ? 100 : 200, u, static_cast<int>(u % 3) - 1,
                   lib_b);
    append(log, closelog(t + 100));
    return log;
}

const char kallsyms[] = "ffffffff81000000 T k_entry\n"
                        "ffffffff81000100 T k_syscall\n"
                        "ffffffff81000180 t k_helper\n"
                        "ffffffff81000200 T k_fault\n"
                        "ffffffff81000400 D k_data\n";

class ReportStream : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/hwpmc-report-stream-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        const bytes b = stream_log();
        std::ofstream f(dir_ + "/hwpmc.data", std::ios::binary);
        f.write(reinterpret_cast<const char *>(b.data()), static_cast<std::streamsize>(b.size()));
        std::ofstream k(dir_ + "/kallsyms");
        k << kallsyms;
        ASSERT_TRUE(f.good() && k.good());
        // Where to find the log the expected outputs were made from.
        if (const char *keep = std::getenv("HWPMC_REPORT_STREAM_LOG")) {
            std::ofstream c(keep, std::ios::binary);
            c.write(reinterpret_cast<const char *>(b.data()),
                    static_cast<std::streamsize>(b.size()));
        }
    }
    void TearDown() override {
        std::string cmd = "rm -rf '" + dir_ + "'";
        EXPECT_EQ(std::system(cmd.c_str()), 0);
    }
    // The standard output of `cmd` run in the test's directory.
    std::string run(const std::string &cmd) {
        std::string full = "cd '" + dir_ + "' && " + cmd;
        FILE *p = popen(full.c_str(), "r");
        std::string out;
        if (!p)
            return out;
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
            out.append(buf, n);
        int rc = pclose(p);
        EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd;
        return out;
    }
    std::string report(const std::string &args) {
        return run(std::string(HWPMC_REPORT) + " --kallsyms kallsyms -i hwpmc.data " + args);
    }
    static std::string expected(const std::string &name) {
        std::ifstream f(std::string(HWPMC_STREAM_FIXTURES) + "/" + name);
        std::stringstream ss;
        ss << f.rdbuf();
        EXPECT_TRUE(f.good()) << name;
        return ss.str();
    }
    std::string dir_;
};

TEST_F(ReportStream, SameOutputsAsTheReportThatKeptEverySample) {
    const struct {
        const char *file, *args;
    } cases[] = {
        {"flat.txt", ""},
        {"callers.txt", "-g"},
        {"callees.txt", "--call-graph=callee"},
        {"children.txt", "--children -g"},
        {"pid-dso-sym.txt", "--sort pid,dso,sym -g"},
        {"dso.txt", "--sort dso,cpu -g"},
        {"comm-tid.txt", "--sort comm,tid --call-graph=callee"},
        {"event.txt", "--event CLOCK.PROF -g --pid 100"},
        {"user.txt", "-u -g --percent-limit 5"},
        {"folded.txt", "--folded"},
        {"folded-tool.txt", "--folded --comm tool"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.args);
        EXPECT_EQ(report(c.args), expected(c.file));
    }
    report("-q --flamegraph flame.svg --title T");
    std::ifstream svg(dir_ + "/flame.svg");
    std::stringstream ss;
    ss << svg.rdbuf();
    EXPECT_EQ(ss.str(), expected("flame.svg"));
}

// The kernel symbols hwpmc-record saves with the log give, without
// --kallsyms, the outputs that --kallsyms gives; with --kallsyms, its file
// names the kernel frames still; and the log's other readers (--dump)
// do not see the appended records.
TEST_F(ReportStream, SavedKernelSymbolsGiveWhatKallsymsGives) {
    if (hwpmc_tools::kallsyms_zeros("/proc/kallsyms"))
        GTEST_SKIP() << "this user may not see kernel addresses (/proc/kallsyms lists zeros): "
                        "the report does not show the saved symbols";
    const std::string dump = run(std::string(HWPMC_REPORT) + " --dump -i hwpmc.data");
    std::string why;
    ASSERT_GT(hwpmc_tools::save_kernel_symbols(dir_ + "/hwpmc.data", dir_ + "/kallsyms", &why), 0)
        << why;
    EXPECT_EQ(run(std::string(HWPMC_REPORT) + " --dump -i hwpmc.data"), dump);
    const struct {
        const char *file, *args;
    } cases[] = {
        {"flat.txt", ""},
        {"callers.txt", "-g"},
        {"children.txt", "--children -g"},
        {"dso.txt", "--sort dso,cpu -g"},
        {"folded.txt", "--folded"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.args);
        EXPECT_EQ(run(std::string(HWPMC_REPORT) + " -i hwpmc.data " + c.args), expected(c.file));
    }
    {
        std::ofstream k(dir_ + "/other");
        k << "ffffffff81000000 T other_kernel\n";
    }
    const std::string other =
        run(std::string(HWPMC_REPORT) + " --kallsyms other -i hwpmc.data --folded");
    EXPECT_NE(other.find("other_kernel"), std::string::npos);
    EXPECT_EQ(other.find("k_syscall"), std::string::npos);
}

TEST_F(ReportStream, APipeGivesWhatTheFileGives) {
    for (const char *args : {"-g", "--folded", "--call-graph=callee --sort pid,sym"}) {
        SCOPED_TRACE(args);
        const std::string file = report(args);
        std::string piped = run("cat hwpmc.data | " + std::string(HWPMC_REPORT) +
                                " --kallsyms kallsyms -i - " + args);
        // Only the header names the input.
        const std::string name = "report of hwpmc.data:", dash = "report of -:";
        size_t at = piped.find(dash);
        if (at != std::string::npos)
            piped.replace(at, dash.size(), name);
        EXPECT_EQ(piped, file);
        EXPECT_NE(file.find("k_syscall"), std::string::npos);
    }
}

} // namespace
