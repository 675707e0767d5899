// SPDX-License-Identifier: GPL-2.0
// Profiles (tools/profile/profile) and every output: aggregation by sort
// keys, ordering by self and by children, call trees, the text report,
// folded stacks, the SVG flame graph, and the record dump.
#include "profile/output.hpp"
#include "profile/profile.hpp"
#include "tools_test.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using namespace tools_test;
using hwpmc_tools::log_data;
using hwpmc_tools::profile;
using hwpmc_tools::resolver;
using hwpmc_tools::sample;
using hwpmc_tools::sort_key;
using hwpmc_tools::symbolizer;

constexpr uint64_t base = 0x7f0000000000;

// The samples of one log, resolved: 5 of parent in fixture_hidden called by
// fixture_exported, 3 in fixture_exported, 2 in fixture_hidden_address
// called by fixture_exported, and 1 of other in fixture_hidden.
class Outputs : public ::testing::Test {
protected:
    void SetUp() override {
        lib = place_of("libfixture.so");
        ASSERT_EQ(lib.fn.size(), 3u);
        auto pc = [&](const char *f, bool ret = false) { return base + lib.fn.at(f) + ret; };
        bytes b;
        append(b, attach(10, 100, "/usr/bin/parent"));
        append(b, map_at(11, 100, base, lib));
        append(b, attach(12, 200, "/usr/bin/other"));
        append(b, map_at(13, 200, base, lib));
        uint64_t t = 20;
        for (int i = 0; i < 5; i++)
            append(b,
                   sample_rec(t++, 100, {pc("fixture_hidden"), pc("fixture_exported", true)}, 0));
        for (int i = 0; i < 3; i++)
            append(b, sample_rec(t++, 100, {pc("fixture_exported")}, 1));
        for (int i = 0; i < 2; i++)
            append(b, sample_rec(t++, 100,
                                 {pc("fixture_hidden_address"), pc("fixture_exported", true)}, 1));
        append(b, sample_rec(t++, 200, {pc("fixture_hidden")}, 0));
        log = log_of(b);
        read_log(log, &data);
        res = std::make_unique<resolver>(data.procs, sym);
        for (const auto &r : data.samples)
            samples.push_back(res->resolve(r));
    }

    profile make(std::vector<sort_key> keys) const {
        profile p(*res, std::move(keys));
        for (const auto &s : samples)
            p.add(s);
        return p;
    }

    // (column texts joined by '|', self, children) of every entry, in order.
    std::vector<std::string> rows(const profile &p, bool by_children) const {
        std::vector<std::string> out;
        for (const auto *e : p.sorted(by_children)) {
            std::string r;
            for (auto k : p.keys())
                r += p.column(*e, k) + "|";
            out.push_back(r + std::to_string(e->self) + "|" + std::to_string(e->children));
        }
        return out;
    }

    place lib;
    bytes log;
    log_data data;
    symbolizer sym;
    std::unique_ptr<resolver> res;
    std::vector<sample> samples;
};

TEST_F(Outputs, AggregationAndOrderTableDriven) {
    const struct {
        std::vector<sort_key> keys;
        bool by_children;
        std::vector<std::string> want;
    } cases[] = {
        {{sort_key::comm, sort_key::sym},
         false,
         {"parent|[.] fixture_hidden|5|5", "parent|[.] fixture_exported|3|10",
          "parent|[.] fixture_hidden_address|2|2", "other|[.] fixture_hidden|1|1"}},
        {{sort_key::comm, sort_key::sym},
         true,
         {"parent|[.] fixture_exported|3|10", "parent|[.] fixture_hidden|5|5",
          "parent|[.] fixture_hidden_address|2|2", "other|[.] fixture_hidden|1|1"}},
        {{sort_key::sym},
         false,
         {"[.] fixture_hidden|6|6", "[.] fixture_exported|3|10", "[.] fixture_hidden_address|2|2"}},
        {{sort_key::dso}, false, {"libfixture.so|11|11"}},
        {{sort_key::pid, sort_key::cpu}, false, {"100|0|5|5", "100|1|5|5", "200|0|1|1"}},
    };
    for (const auto &c : cases) {
        const profile p = make(c.keys);
        EXPECT_EQ(p.total(), 11u);
        EXPECT_EQ(rows(p, c.by_children), c.want);
    }
}

// A profile keeps distinct chains with counts, not samples: the same
// samples again and again change its counts only, and what it shows is
// what it showed, scaled.
TEST_F(Outputs, RepeatedSamplesDoNotGrowTheProfile) {
    for (const auto &keys :
         std::vector<std::vector<sort_key>>{{sort_key::comm, sort_key::dso, sort_key::sym},
                                            {sort_key::pid, sort_key::cpu},
                                            {sort_key::tid, sort_key::sym}}) {
        profile once = make(keys);
        profile p(*res, keys);
        for (const auto &s : samples)
            p.add(s);
        const size_t chains = p.chains().size();
        size_t frames = 0;
        for (const auto &c : p.chains())
            frames += c.len;
        EXPECT_LE(chains, samples.size());
        // Looked at between adds (as hwpmc-top --cumulative does): the
        // counts go on.
        EXPECT_EQ(p.sorted(false).size(), once.sorted(false).size());
        for (int round = 1; round < 1000; round++)
            for (const auto &s : samples)
                p.add(s);
        EXPECT_EQ(p.total(), 1000 * samples.size());
        EXPECT_EQ(p.chains().size(), chains);
        size_t frames_after = 0;
        for (const auto &c : p.chains())
            frames_after += c.len;
        EXPECT_EQ(frames_after, frames);
        const auto a = once.sorted(false), b = p.sorted(false);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); i++) {
            EXPECT_EQ(b[i]->k, a[i]->k);
            EXPECT_EQ(b[i]->self, 1000 * a[i]->self);
            EXPECT_EQ(b[i]->children, 1000 * a[i]->children);
        }
    }
    // With sort keys that leave pid out, samples of the same command and
    // frames are one chain whatever their pid, tid or cpu.
    profile bysym(*res, {sort_key::comm, sort_key::sym});
    for (const auto &s : samples)
        bysym.add(s);
    EXPECT_EQ(bysym.chains().size(), 4u); // 3 of parent, 1 of other
    uint64_t counted = 0;
    for (const auto &c : bysym.chains())
        counted += c.count;
    EXPECT_EQ(counted, samples.size());
}

TEST_F(Outputs, SortKeysParse) {
    std::vector<sort_key> keys;
    std::string bad;
    EXPECT_TRUE(hwpmc_tools::parse_sort_keys("comm,pid,tid,dso,sym,cpu", &keys, &bad));
    EXPECT_EQ(keys.size(), 6u);
    EXPECT_FALSE(hwpmc_tools::parse_sort_keys("comm,nope", &keys, &bad));
    EXPECT_EQ(bad, "nope");
}

TEST_F(Outputs, CallTrees) {
    const profile p = make({sort_key::sym});
    const profile::entry *hidden = nullptr, *exported = nullptr;
    for (const auto *e : p.sorted(false)) {
        const std::string n = p.column(*e, sort_key::sym);
        if (n == "[.] fixture_hidden")
            hidden = e;
        else if (n == "[.] fixture_exported")
            exported = e;
    }
    ASSERT_NE(hidden, nullptr);
    ASSERT_NE(exported, nullptr);
    auto callers = hwpmc_tools::callers_of(p, *hidden);
    EXPECT_EQ(callers.nodes[0].count, 6u);
    auto kids = callers.sorted_kids(0);
    ASSERT_EQ(kids.size(), 1u); // fixture_exported, for parent's 5
    EXPECT_EQ(res->frame(callers.nodes[kids[0]].frame).name, "fixture_exported");
    EXPECT_EQ(callers.nodes[kids[0]].count, 5u);
    auto callees = hwpmc_tools::callees_of(p, *exported);
    EXPECT_EQ(callees.nodes[0].count, 10u);
    kids = callees.sorted_kids(0);
    ASSERT_EQ(kids.size(), 2u); // largest first
    EXPECT_EQ(res->frame(callees.nodes[kids[0]].frame).name, "fixture_hidden");
    EXPECT_EQ(callees.nodes[kids[0]].count, 5u);
    EXPECT_EQ(res->frame(callees.nodes[kids[1]].frame).name, "fixture_hidden_address");
}

TEST_F(Outputs, TextReport) {
    const profile p = make({sort_key::comm, sort_key::dso, sort_key::sym});
    hwpmc_tools::text_options o;
    const std::string flat = capture([&](FILE *f) { hwpmc_tools::print_profile(f, p, *res, o); });
    std::istringstream in(flat);
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line))
        lines.push_back(line);
    ASSERT_EQ(lines.size(), 3u + 4u) << flat;
    EXPECT_EQ(lines[0].rfind("# Children      Self   Samples  Command  Shared Object  Symbol", 0),
              0u)
        << lines[0];
    EXPECT_NE(lines[3].find("45.45%"), std::string::npos) << lines[3]; // 5 of 11, self
    EXPECT_NE(lines[3].find("fixture_hidden"), std::string::npos);
    EXPECT_NE(lines[4].find("90.91%"), std::string::npos) << lines[4]; // 10 of 11, children
    // -q, --percent-limit, -n.
    o.header = false;
    o.percent_limit = 20;
    const std::string some = capture([&](FILE *f) { hwpmc_tools::print_profile(f, p, *res, o); });
    EXPECT_EQ(std::count(some.begin(), some.end(), '\n'), 2) << some;
    o.percent_limit = 0;
    o.max_entries = 1;
    const std::string one = capture([&](FILE *f) { hwpmc_tools::print_profile(f, p, *res, o); });
    EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 1) << one;
    // -g: the callers under each entry.
    o.max_entries = 0;
    o.graph = hwpmc_tools::graph_mode::callers;
    const std::string graph = capture([&](FILE *f) { hwpmc_tools::print_profile(f, p, *res, o); });
    EXPECT_NE(graph.find("---fixture_hidden"), std::string::npos) << graph;
}

TEST_F(Outputs, FoldedStacks) {
    const profile p = make({sort_key::comm, sort_key::dso, sort_key::sym});
    const std::map<std::string, uint64_t> want = {
        {"other;fixture_hidden", 1},
        {"parent;fixture_exported", 3},
        {"parent;fixture_exported;fixture_hidden", 5},
        {"parent;fixture_exported;fixture_hidden_address", 2},
    };
    const auto stacks = hwpmc_tools::folded_stacks(p, *res);
    EXPECT_EQ(stacks, want);
    const std::string text = capture([&](FILE *f) { hwpmc_tools::print_folded(f, stacks); });
    EXPECT_EQ(text, "other;fixture_hidden 1\nparent;fixture_exported 3\n"
                    "parent;fixture_exported;fixture_hidden 5\n"
                    "parent;fixture_exported;fixture_hidden_address 2\n");
}

TEST_F(Outputs, FlameGraph) {
    const profile p = make({sort_key::comm, sort_key::dso, sort_key::sym});
    const auto path = std::filesystem::temp_directory_path() /
                      ("hwpmc-flame-" + std::to_string(getpid()) + ".svg");
    ASSERT_TRUE(hwpmc_tools::write_flamegraph(path.string(), p, *res, "T<itle>", "sub"));
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    std::filesystem::remove(path);
    const std::string svg = ss.str();
    EXPECT_NE(svg.find("<svg"), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_NE(svg.find("T&lt;itle&gt;"), std::string::npos); // escaped
    EXPECT_NE(svg.find("<title>fixture_exported"), std::string::npos);
    EXPECT_NE(svg.find("<title>fixture_hidden"), std::string::npos);
    EXPECT_FALSE(hwpmc_tools::write_flamegraph("/nonexistent/dir/x.svg", p, *res, "t", "s"));
}

int memfd_of(const bytes &b) {
    int fd = memfd_create("log", MFD_CLOEXEC);
    EXPECT_EQ(write(fd, b.data(), b.size()), static_cast<ssize_t>(b.size()));
    lseek(fd, 0, SEEK_SET);
    return fd;
}

TEST_F(Outputs, DumpEveryRecord) {
    const bytes every = hwpmc::test::every_type_log();
    int fd = memfd_of(every);
    int rc = 0;
    const std::string out =
        capture([&](FILE *f) { rc = hwpmc_tools::dump_log(f, fd, "test", "every"); });
    close(fd);
    EXPECT_EQ(rc, 0);
    for (const char *type : {"INITIALIZE", "PMCALLOCATE", "PMCATTACH", "MAP_IN", "CALLCHAIN",
                             "PROCFORK", "PROCEXEC", "MAP_OUT", "DROPNOTIFY", "CLOSELOG"})
        EXPECT_NE(out.find(type), std::string::npos) << type;
    hwpmc::log_reader r(as_span(every));
    size_t records = 0;
    for ([[maybe_unused]] const pmclog_ev &ev : r)
        records++;
    EXPECT_EQ(static_cast<size_t>(std::count(out.begin(), out.end(), '\n')), records);
    // A truncated log: the records before the cut, and status 1.
    bytes cut(every.begin(), every.end() - 4);
    fd = memfd_of(cut);
    const std::string part =
        capture([&](FILE *f) { rc = hwpmc_tools::dump_log(f, fd, "test", "cut"); });
    close(fd);
    EXPECT_EQ(rc, 1);
    EXPECT_NE(part.find("INITIALIZE"), std::string::npos);
}

} // namespace
