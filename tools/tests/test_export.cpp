// SPDX-License-Identifier: GPL-2.0
// The outputs for other tools (tools/profile/output_export): perf script's
// text, and pprof's profile read back with the protobuf parser (after
// gunzip) - samples, values and units, locations, mappings with build
// ids, functions with source files and lines, labels.
#include "profile/output_export.hpp"
#include "tools_test.hpp"

#include "profile.pb.h"

#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

using namespace tools_test;
using hwpmc_tools::address_describer;
using hwpmc_tools::address_info;
using hwpmc_tools::debug_info;
using hwpmc_tools::log_data;
using hwpmc_tools::pprof_builder;
using hwpmc_tools::symbolizer;
namespace pb = perftools::profiles;

constexpr uint64_t base = 0x7f0000000000;

// 5 samples of parent (pid 100) in fixture_hidden called by
// fixture_exported, 3 in fixture_exported; 1 of other (pid 200) in
// fixture_hidden, on CPU 2.
class Export : public ::testing::Test {
protected:
    void SetUp() override {
        lib = place_of("libfixture.so");
        ASSERT_EQ(lib.fn.size(), 3u);
        bytes b;
        append(b, attach(10, 100, "/usr/bin/parent"));
        append(b, map_at(11, 100, base, lib));
        append(b, attach(12, 200, "/usr/bin/other"));
        append(b, map_at(13, 200, base, lib));
        uint64_t t = 1234567890123ull;
        for (int i = 0; i < 5; i++)
            append(b, sample_rec(t++, 100, {pc("fixture_hidden"), pc("fixture_exported", 5)}, 0));
        for (int i = 0; i < 3; i++)
            append(b, sample_rec(t++, 100, {pc("fixture_exported")}, 1));
        append(b, sample_rec(t++, 200, {pc("fixture_hidden", 2)}, 2));
        read_log(log_of(b), &data);
    }
    uint64_t pc(const char *f, uint64_t off = 0) const { return base + lib.fn.at(f) + off; }
    std::string comm(uint32_t pid) const { return pid == 100 ? "parent" : "other"; }

    place lib;
    log_data data;
    symbolizer sym;
    debug_info dbg;
};

TEST_F(Export, ScriptIsPerfScriptText) {
    address_describer d(data.procs, sym, dbg);
    const auto &r = data.samples.at(0);
    std::string out = capture([&](FILE *f) {
        hwpmc_tools::print_script_sample(f, comm(r.pid), r, "SOFT-CLOCK.PROF", 1000000, 15,
                                         d.describe(r));
    });
    std::istringstream in(out);
    std::string head, inner, caller, blank;
    std::getline(in, head);
    std::getline(in, inner);
    std::getline(in, caller);
    ASSERT_TRUE(std::getline(in, blank));
    EXPECT_FALSE(std::getline(in, blank)) << out;
    EXPECT_EQ(head, "parent   100/101   [000]  1234.567890:    1000000 SOFT-CLOCK.PROF: ");
    char buf[64];
    std::snprintf(buf, sizeof(buf), "\t%16lx ", static_cast<unsigned long>(pc("fixture_hidden")));
    EXPECT_EQ(inner, std::string(buf) + "fixture_hidden+0x0 (" + lib.path + ")");
    // A return address: its symbol is that of the call before it.
    std::snprintf(buf, sizeof(buf), "\t%16lx ",
                  static_cast<unsigned long>(pc("fixture_exported", 5)));
    EXPECT_EQ(caller, std::string(buf) + "fixture_exported+0x5 (" + lib.path + ")");
    EXPECT_EQ(blank, "");
}

TEST_F(Export, ScriptUnknownAddresses) {
    address_describer d(data.procs, sym, dbg);
    hwpmc_tools::raw_sample r{5, 300, 301, 3, pmcid, 0, 0, {0x1234}};
    std::string out = capture(
        [&](FILE *f) { hwpmc_tools::print_script_sample(f, ":300", r, "E", 7, 1, d.describe(r)); });
    EXPECT_EQ(out, ":300   300/301   [003]     0.000000:          7 E: \n"
                   "\t            1234 [unknown] ([unknown])\n\n");
}

// The profile as pprof reads it: gunzipped, parsed.
pb::Profile read_back(const std::string &path) {
    gzFile gz = gzopen(path.c_str(), "rb");
    std::string data;
    char buf[4096];
    int n;
    while (gz && (n = gzread(gz, buf, sizeof(buf))) > 0)
        data.append(buf, static_cast<size_t>(n));
    if (gz)
        gzclose(gz);
    pb::Profile p;
    EXPECT_TRUE(p.ParseFromString(data));
    return p;
}

TEST_F(Export, PprofRoundTrip) {
    address_describer d(data.procs, sym, dbg, false, true);
    pprof_builder b({{"SOFT-CLOCK.PROF", 1000000, true}}, dbg);
    b.set_time(1700000000000000000, 2000000000);
    for (const auto &r : data.samples)
        b.add(0, comm(r.pid), r, d.describe(r));
    EXPECT_EQ(b.samples(), 9u);
    auto dir = std::filesystem::temp_directory_path() / ("export_test." + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::string path = (dir / "p.pb.gz").string();
    std::string err;
    ASSERT_TRUE(b.write(path, &err)) << err;
    pb::Profile p = read_back(path);
    std::filesystem::remove_all(dir);

    auto str = [&](int64_t i) { return p.string_table(static_cast<int>(i)); };
    ASSERT_GT(p.string_table_size(), 0);
    EXPECT_EQ(p.string_table(0), "");
    ASSERT_EQ(p.sample_type_size(), 2);
    EXPECT_EQ(str(p.sample_type(0).type()), "SOFT-CLOCK.PROF_samples");
    EXPECT_EQ(str(p.sample_type(0).unit()), "count");
    EXPECT_EQ(str(p.sample_type(1).type()), "SOFT-CLOCK.PROF");
    EXPECT_EQ(str(p.sample_type(1).unit()), "nanoseconds");
    EXPECT_EQ(str(p.default_sample_type()), "SOFT-CLOCK.PROF_samples");
    EXPECT_EQ(str(p.period_type().unit()), "nanoseconds");
    EXPECT_EQ(p.period(), 1000000);
    EXPECT_EQ(p.time_nanos(), 1700000000000000000);
    EXPECT_EQ(p.duration_nanos(), 2000000000);

    // Ids are 1.. in order; every reference resolves.
    std::map<uint64_t, const pb::Location *> locs;
    std::map<uint64_t, const pb::Function *> fns;
    std::map<uint64_t, const pb::Mapping *> maps;
    for (int i = 0; i < p.location_size(); i++) {
        EXPECT_EQ(p.location(i).id(), static_cast<uint64_t>(i + 1));
        locs[p.location(i).id()] = &p.location(i);
    }
    for (int i = 0; i < p.function_size(); i++)
        fns[p.function(i).id()] = &p.function(i);
    for (int i = 0; i < p.mapping_size(); i++)
        maps[p.mapping(i).id()] = &p.mapping(i);

    ASSERT_EQ(maps.size(), 1u); // both processes map the library at base
    const pb::Mapping &m = *maps.begin()->second;
    EXPECT_EQ(str(m.filename()), lib.path);
    EXPECT_EQ(m.memory_start(), base);
    EXPECT_EQ(m.memory_limit(), base + lib.len);
    EXPECT_EQ(m.file_offset(), lib.pgoff);
    EXPECT_TRUE(std::regex_match(str(m.build_id()), std::regex("[0-9a-f]{40}")))
        << str(m.build_id());
    EXPECT_TRUE(m.has_functions());
    EXPECT_TRUE(m.has_line_numbers()); // the fixture is built with -g

    // Samples: stacks by function names, values, labels.
    std::map<std::string, int64_t> stacks, values;
    std::set<std::string> labels;
    for (const pb::Sample &s : p.sample()) {
        std::string stack;
        for (uint64_t id : s.location_id()) {
            ASSERT_TRUE(locs.count(id));
            const pb::Location &l = *locs[id];
            EXPECT_EQ(l.mapping_id(), m.id());
            ASSERT_EQ(l.line_size(), 1);
            const pb::Function &f = *fns.at(l.line(0).function_id());
            stack += (stack.empty() ? "" : ";") + str(f.name());
            EXPECT_EQ(std::filesystem::path(str(f.filename())).filename(), "fixture_lib.c");
            EXPECT_GT(l.line(0).line(), 0);
            EXPECT_GT(f.start_line(), 0);
        }
        ASSERT_EQ(s.value_size(), 2);
        stacks[stack] += s.value(0);
        values[stack] += s.value(1);
        std::string lab;
        for (const pb::Label &l : s.label())
            lab += str(l.key()) + "=" + (l.str() ? str(l.str()) : std::to_string(l.num())) + " ";
        labels.insert(lab);
    }
    EXPECT_EQ(stacks, (std::map<std::string, int64_t>{{"fixture_hidden;fixture_exported", 5},
                                                      {"fixture_exported", 3},
                                                      {"fixture_hidden", 1}}));
    EXPECT_EQ(values["fixture_exported"], 3000000);
    EXPECT_TRUE(labels.count("pid=100 tid=101 cpu=0 comm=parent ")) << *labels.begin();
    EXPECT_TRUE(labels.count("pid=200 tid=201 cpu=2 comm=other "));
    // A string, so that CPU 0 is a label too (pprof drops numeric zeros).
    for (const pb::Sample &s : p.sample()) {
        for (const pb::Label &l : s.label()) {
            if (str(l.key()) == "cpu") {
                EXPECT_NE(l.str(), 0);
            }
        }
    }

    // Addresses are the logged ones.
    std::set<uint64_t> addrs;
    for (const auto &[id, l] : locs)
        addrs.insert(l->address());
    EXPECT_TRUE(addrs.count(pc("fixture_hidden")));
    EXPECT_TRUE(addrs.count(pc("fixture_exported", 5)));
}

TEST_F(Export, PprofTwoEventsValuesPerEvent) {
    address_describer d(data.procs, sym, dbg);
    pprof_builder b({{"A", 10, false}, {"B", 20, false}}, dbg);
    const auto &r = data.samples.at(0);
    b.add(1, "parent", r, d.describe(r));
    pb::Profile p;
    ASSERT_TRUE(p.ParseFromString(b.serialize()));
    ASSERT_EQ(p.sample_type_size(), 4);
    ASSERT_EQ(p.sample_size(), 1);
    const auto &v = p.sample(0).value();
    EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()), (std::vector<int64_t>{0, 0, 1, 20}));
    EXPECT_EQ(p.string_table(static_cast<int>(p.sample_type(2).type())), "B_samples");
}

TEST_F(Export, PprofWriteErrorIsReported) {
    pprof_builder b({{"A", 1, false}}, dbg);
    std::string err;
    EXPECT_FALSE(b.write("/nonexistent-dir/p.pb.gz", &err));
    EXPECT_FALSE(err.empty());
}

} // namespace
