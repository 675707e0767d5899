// SPDX-License-Identifier: GPL-2.0
// Symbolization (tools/profile/symbolize, through the samples' pipeline):
// this PIE executable's functions, a shared object's, a stripped one's
// through its .gnu_debuglink and through its build id, C++ demangling, and
// what is not resolvable.
#include "profile/samples.hpp"
#include "profile/symbolize.hpp"
#include "tools_test.hpp"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tools_test_pie {
// A function of this PIE executable, for the tests to find by address.
__attribute__((noinline)) int pie_function(int x) {
    return x * 7 + 3;
}
} // namespace tools_test_pie

namespace {

using namespace tools_test;
using hwpmc_tools::elf_symbols;
using hwpmc_tools::log_data;
using hwpmc_tools::resolver;
using hwpmc_tools::symbolizer;

const std::string fixtures = HWPMC_FIXTURES;

// The name of the function at `addr` of this process, as hwpmc-report
// names it: through a MAP_IN record of its mapping, the ELF file, and
// symbols (`debug_dir` for separate debug files).
std::string name_at(const void *addr, std::string *from = nullptr) {
    const uint32_t pid = 4242;
    bytes body = map_in_of(10, pid, addr);
    EXPECT_FALSE(body.empty()) << "no mapping holds " << addr;
    append(body, sample_rec(20, pid, {reinterpret_cast<uint64_t>(addr)}));
    log_data data;
    read_log(log_of(body), &data);
    symbolizer sym;
    resolver res(data.procs, sym);
    EXPECT_EQ(data.samples.size(), 1u);
    if (data.samples.empty())
        return "";
    const auto s = res.resolve(data.samples[0]);
    if (s.frames.empty())
        return "";
    if (from) {
        mapping m;
        mapping_of(addr, &m);
        const elf_symbols *es = sym.elf(m.path);
        *from = es ? es->symbols_from() : "";
    }
    return res.frame(s.frames[0]).name;
}

struct loaded {
    void *handle = nullptr;
    ~loaded() {
        if (handle)
            dlclose(handle);
    }
};

TEST(Symbolize, OwnPieExecutable) {
    // The test program is a PIE: its text is mapped at a random base and
    // file offsets must go through the program headers.
    mapping m;
    ASSERT_TRUE(mapping_of(reinterpret_cast<void *>(&tools_test_pie::pie_function), &m));
    EXPECT_EQ(name_at(reinterpret_cast<void *>(&tools_test_pie::pie_function)),
              "tools_test_pie::pie_function(int)");
}

TEST(Symbolize, SharedObjectTableDriven) {
    const struct {
        const char *file;
        bool hidden_named; // the hidden function is named (full symbols)
        const char *symbols_from;
    } cases[] = {
        {"libfixture.so", true, "libfixture.so"},
        {"libfixture-debuglink.so", true, ".debug/libfixture-debuglink.debug"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.file);
        loaded lib;
        const std::string path = fixtures + "/" + c.file;
        lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(lib.handle, nullptr) << dlerror();
        void *exported = dlsym(lib.handle, "fixture_exported");
        auto hidden_of = reinterpret_cast<void *(*)()>(dlsym(lib.handle, "fixture_hidden_address"));
        ASSERT_NE(exported, nullptr);
        ASSERT_NE(hidden_of, nullptr);
        std::string from;
        EXPECT_EQ(name_at(exported), "fixture_exported");
        EXPECT_EQ(name_at(hidden_of(), &from), c.hidden_named ? "fixture_hidden" : "");
        EXPECT_EQ(from, fixtures + "/" + c.symbols_from);
    }
}

TEST(Symbolize, StrippedFileThroughBuildId) {
    const std::string lib = fixtures + "/libfixture-buildid.so";
    const std::string id = build_id_of(lib);
    ASSERT_GT(id.size(), 2u);
    // Without a debug file: only the dynamic symbols.
    std::string why;
    auto plain = elf_symbols::load(lib, &why, "/nonexistent");
    ASSERT_TRUE(plain) << why;
    EXPECT_EQ(plain->symbols_from(), lib);
    // With one under DEBUG_DIR/.build-id/xx/rest.debug: the full table.
    const auto dir =
        std::filesystem::temp_directory_path() / ("hwpmc-tools-test-" + std::to_string(getpid()));
    const auto dbg = dir / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
    std::filesystem::create_directories(dbg.parent_path());
    std::filesystem::copy_file(fixtures + "/libfixture.debug", dbg);
    auto full = elf_symbols::load(lib, &why, dir.string());
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(full) << why;
    EXPECT_EQ(full->symbols_from(), dbg.string());
    EXPECT_GT(full->size(), plain->size()); // fixture_hidden too
}

TEST(Symbolize, NotAnElfFile) {
    std::string why;
    EXPECT_FALSE(elf_symbols::load("/proc/self/status", &why));
    EXPECT_FALSE(why.empty());
    EXPECT_FALSE(elf_symbols::load(fixtures + "/no-such-file", &why));
    symbolizer sym;
    EXPECT_EQ(sym.elf(fixtures + "/no-such-file"), nullptr);
    EXPECT_FALSE(sym.why_not(fixtures + "/no-such-file").empty());
}

TEST(Symbolize, DemangleTable) {
    const struct {
        const char *in, *out;
    } cases[] = {
        {"_ZN3foo3barEv", "foo::bar()"},
        {"_Z4workii", "work(int, int)"},
        {"main", "main"},
        {"_Znotmangled", "_Znotmangled"},
    };
    for (const auto &c : cases)
        EXPECT_EQ(hwpmc_tools::demangle(c.in), c.out) << c.in;
}

TEST(Symbolize, KernelSymbolsFromAFile) {
    const auto path =
        std::filesystem::temp_directory_path() / ("hwpmc-kallsyms-" + std::to_string(getpid()));
    {
        std::ofstream f(path);
        f << "ffffffff81000000 T _stext\n"
             "ffffffff81001000 T do_syscall_64\n"
             "ffffffff81002000 t helper\n"
             "ffffffffc0000000 t mod_fn\t[mymod]\n";
    }
    hwpmc_tools::kernel_symbols k(path.string());
    std::filesystem::remove(path);
    ASSERT_TRUE(k.available());
    EXPECT_FALSE(k.restricted());
    const auto *s = k.find(0xffffffff81001010);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->name, "do_syscall_64");
    s = k.find(0xffffffffc0000004);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->name, "mod_fn");
    EXPECT_EQ(s->module, "mymod");
    EXPECT_EQ(k.find(0x1000), nullptr);
}

// hwpmc-report --kallsyms: the resolver names kernel frames from the file
// the symbolizer is given (another machine's kallsyms), not this one's.
TEST(Symbolize, ResolverUsesTheKallsymsFileGiven) {
    const auto path =
        std::filesystem::temp_directory_path() / ("hwpmc-kallsyms2-" + std::to_string(getpid()));
    {
        std::ofstream f(path);
        f << "ffffffff81000000 T _stext\n"
             "ffffffff81234000 T a_function_of_the_recording_kernel\n";
    }
    hwpmc_tools::symbolizer sym;
    sym.set_kallsyms(path.string());
    EXPECT_EQ(sym.kallsyms(), path.string());
    hwpmc_tools::process_table procs;
    hwpmc_tools::resolver res(procs, sym);
    hwpmc_tools::raw_sample r{1, 5, 5, 0, 1, 0, 1, {0xffffffff81234010ull}};
    const hwpmc_tools::sample s = res.resolve(r);
    std::filesystem::remove(path);
    ASSERT_EQ(s.frames.size(), 1u);
    EXPECT_EQ(res.frame(s.frames[0]).name, "a_function_of_the_recording_kernel");
    EXPECT_TRUE(res.frame(s.frames[0]).kernel);
}

} // namespace
