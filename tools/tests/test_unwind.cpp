// SPDX-License-Identifier: GPL-2.0
// DWARF unwinding (tools/profile/unwind, through the samples' pipeline):
// a snapshot of this process's registers and stack, taken in a chain of
// functions built -O2 without frame pointers (fixtures/unwind_lib.c), as a
// CALLCHAIN and USERSTACK record pair, unwinds to the chain's functions
// and on to main through .eh_frame; through .debug_frame of a separate
// debug file found by build id; and stops visibly (a [truncated] frame)
// beyond the copy, outside the mappings, without CFI.
#include "profile/output_export.hpp"
#include "profile/samples.hpp"
#include "profile/unwind.hpp"
#include "tools_test.hpp"

#include <dlfcn.h>
#include <gelf.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

struct unwind_snapshot {
    uint64_t regs[17];
    uint64_t stack_end;
    size_t cap;
    size_t copied;
    unsigned char stack[65536];
};

namespace tools_test_unwind {
// The caller of the fixture's chain, in this executable.
__attribute__((noinline)) int caller(int (*outer)(unwind_snapshot *), unwind_snapshot *s) {
    int r = outer(s);
    asm volatile("" ::: "memory"); // not a tail call
    return r + 1;
}

unwind_snapshot *signal_snapshot;
int (*signal_outer)(unwind_snapshot *);

void handler(int) {
    signal_outer(signal_snapshot);
    asm volatile("" ::: "memory"); // not a tail call
}

// Raises SIGUSR1, whose handler runs the fixture's chain.
__attribute__((noinline)) int raiser() {
    raise(SIGUSR1);
    asm volatile("" ::: "memory"); // not a tail call
    return 1;
}
} // namespace tools_test_unwind

namespace {

using namespace tools_test;
using hwpmc_tools::dwarf_unwinder;
using hwpmc_tools::log_data;
using hwpmc_tools::resolver;
using hwpmc_tools::symbolizer;
using hwpmc_tools::unwind_stop;
using hwpmc_tools::user_stack;

constexpr uint32_t pid = 4343;

// The end of this thread's stack.
uint64_t stack_end() {
    pthread_attr_t a;
    void *addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return 0;
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    return reinterpret_cast<uint64_t>(addr) + size;
}

// A snapshot taken in the fixture `lib`'s unwind_leaf, with `cap` bytes
// of stack at most.
std::unique_ptr<unwind_snapshot> snapshot(const std::string &lib, size_t cap) {
    void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(h, nullptr) << dlerror();
    if (!h)
        return nullptr;
    auto outer = reinterpret_cast<int (*)(unwind_snapshot *)>(dlsym(h, "unwind_outer"));
    EXPECT_NE(outer, nullptr);
    auto s = std::make_unique<unwind_snapshot>();
    s->stack_end = stack_end();
    s->cap = cap;
    EXPECT_NE(s->stack_end, 0u);
    tools_test_unwind::caller(outer, s.get());
    return s;
}

// MAP_IN records of this process's executable mappings (as the module
// logs them), the library's named `as` instead of its own path when set.
bytes map_ins(uint64_t t, const std::string &lib = "", const std::string &as = "",
              bool skip_lib = false) {
    bytes b;
    for (const auto &m : tools_test::self_mappings()) {
        std::string path = m.path;
        if (!m.exec || path.empty() || (path[0] != '/' && path != hwpmc_tools::vdso_name))
            continue;
        if (!lib.empty() && path == lib) {
            if (skip_lib)
                continue;
            if (!as.empty())
                path = as;
        }
        append(b, map_in(t, pid, m.start, m.end, m.pgoff, path));
    }
    return b;
}

// The USERSTACK record of a snapshot.
bytes userstack_of(uint64_t t, const unwind_snapshot &s, uint32_t flags = PMCLOG_US_F_REGS) {
    struct pmclog_userstack r {};
    r.pl_pid = pid;
    r.pl_tid = pid + 1;
    r.pl_pmcid = pmcid;
    r.pl_size = static_cast<uint32_t>(s.cap);
    r.pl_copied = static_cast<uint32_t>(s.copied);
    r.pl_flags = flags | (s.copied < s.cap ? PMCLOG_US_F_SHORT : 0u);
    if (flags & PMCLOG_US_F_REGS)
        std::copy(s.regs, s.regs + 17, r.pl_regs);
    return record(PMCLOG_TYPE_USERSTACK, r, t, bytes(s.stack, s.stack + s.copied));
}

// The frames hwpmc-report gives the sample, outermost last.
std::vector<std::string> frames_of(const bytes &body) {
    log_data data;
    read_log(log_of(body), &data);
    EXPECT_EQ(data.samples.size(), 1u);
    if (data.samples.size() != 1)
        return {};
    symbolizer sym;
    resolver res(data.procs, sym);
    const auto s = res.resolve(data.samples[0]);
    std::vector<std::string> out;
    for (uint32_t f : s.frames)
        out.push_back(res.frame(f).name);
    return out;
}

std::string joined(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v)
        s += x + "\n";
    return s;
}

const std::string fixtures = HWPMC_FIXTURES;

// Through .eh_frame: the chain, this test's caller, and on to main and
// beyond, complete (no [truncated]) when the copy reaches the stack's end.
TEST(Unwind, EhFrameChainToTheOutermostFrame) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, sizeof(unwind_snapshot::stack));
    ASSERT_TRUE(s);
    ASSERT_GT(s->copied, 64u);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    const auto f = frames_of(body);
    ASSERT_GE(f.size(), 5u) << joined(f);
    EXPECT_EQ(f[0], "unwind_leaf") << joined(f);
    EXPECT_EQ(f[1], "unwind_middle") << joined(f);
    EXPECT_EQ(f[2], "unwind_outer") << joined(f);
    EXPECT_EQ(f[3].rfind("tools_test_unwind::caller(", 0), 0u) << joined(f);
    EXPECT_NE(std::find(f.begin(), f.end(), "main"), f.end()) << joined(f);
    if (s->copied < s->cap) { // the whole stack: the unwind reaches _start
        EXPECT_NE(f.back(), hwpmc_tools::truncated_name) << joined(f);
    }
}

// The outputs that describe addresses (--script, --pprof, --gprof) get
// the unwound chain from resolve(), not the logged one (the PC alone).
TEST(Unwind, ScriptShowsTheUnwoundChain) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, sizeof(unwind_snapshot::stack));
    ASSERT_TRUE(s);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    log_data data;
    read_log(log_of(body), &data);
    ASSERT_EQ(data.samples.size(), 1u);
    symbolizer sym;
    resolver res(data.procs, sym);
    hwpmc_tools::raw_sample as_resolved{};
    const auto rs = res.resolve(data.samples[0], &as_resolved);
    EXPECT_FALSE(as_resolved.us);
    ASSERT_GE(as_resolved.pcs.size(), 4u);
    EXPECT_EQ(as_resolved.pcs[0], s->regs[16]);
    hwpmc_tools::debug_info dbg;
    hwpmc_tools::address_describer d(data.procs, sym, dbg);
    const std::vector<const hwpmc_tools::raw_sample *> raws{&as_resolved};
    const std::vector<hwpmc_tools::sample> samples{rs};
    const std::string out =
        capture([&](FILE *f) { hwpmc_tools::print_script(f, data, res, d, raws, samples); });
    const size_t leaf = out.find(" unwind_leaf+0x"), middle = out.find(" unwind_middle+0x"),
                 outer = out.find(" unwind_outer+0x"), main_fn = out.find(" main+0x");
    ASSERT_NE(leaf, std::string::npos) << out;
    ASSERT_NE(middle, std::string::npos) << out;
    ASSERT_NE(outer, std::string::npos) << out;
    ASSERT_NE(main_fn, std::string::npos) << out;
    EXPECT_LT(leaf, middle) << out;
    EXPECT_LT(middle, outer) << out;
    EXPECT_LT(outer, main_fn) << out;
    // The logged chain alone would give the leaf only.
    EXPECT_EQ(d.describe(data.samples[0]).size(), 1u);
}

// The copy ends inside the chain: it stops there, marked.
TEST(Unwind, ShortCopyIsMarkedTruncated) {
    const std::string lib = fixtures + "/libunwind.so";
    // The smallest copy --call-graph dwarf makes (64 bytes or less is
    // -g's, for the leaf's caller only: test_leaf).
    auto s = snapshot(lib, 72);
    ASSERT_TRUE(s);
    ASSERT_EQ(s->copied, 72u);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    const auto f = frames_of(body);
    ASSERT_GE(f.size(), 2u) << joined(f);
    EXPECT_EQ(f[0], "unwind_leaf") << joined(f);
    EXPECT_EQ(f.back(), hwpmc_tools::truncated_name) << joined(f);
    EXPECT_EQ(std::find(f.begin(), f.end(), "main"), f.end()) << joined(f);

    log_data data;
    read_log(log_of(body), &data);
    ASSERT_EQ(data.samples.size(), 1u);
    ASSERT_TRUE(data.samples[0].us);
    symbolizer sym;
    dwarf_unwinder u(data.procs, sym);
    const auto r = u.unwind(pid, 20, *data.samples[0].us);
    EXPECT_EQ(r.stop, unwind_stop::off_stack);
    EXPECT_TRUE(r.truncated());
    EXPECT_EQ(u.stops.at(unwind_stop::off_stack), 1u);
    EXPECT_EQ(u.truncated_note(),
              "1 of 1 user stacks (--call-graph dwarf) were unwound only in part and end in "
              "[truncated] (1 beyond the stack copy); a larger copy (--call-graph dwarf,SIZE) "
              "reaches further");
}

// A PC outside every mapping: nothing to unwind it with.
TEST(Unwind, UnmappedPcIsMarkedTruncated) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, 4096);
    ASSERT_TRUE(s);
    bytes body = map_ins(10, lib, "", true);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    const auto f = frames_of(body);
    ASSERT_EQ(f.size(), 2u) << joined(f);
    EXPECT_EQ(f[0].rfind("[unknown]", 0), 0u) << joined(f);
    EXPECT_EQ(f[1], hwpmc_tools::truncated_name);
}

// Without registers (a kernel thread, an exiting task) the callchain's
// frames stay as they are, unmarked.
TEST(Unwind, NoRegistersKeepsTheCallchain) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, 4096);
    ASSERT_TRUE(s);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    unwind_snapshot none{};
    none.cap = 4096;
    append(body, userstack_of(20, none, 0));
    const auto f = frames_of(body);
    ASSERT_EQ(f.size(), 1u) << joined(f);
    EXPECT_EQ(f[0], "unwind_leaf");
}

// A USERSTACK that is not its CALLCHAIN's (another thread) is ignored.
TEST(Unwind, UserStackOfAnotherSampleIsIgnored) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, 4096);
    ASSERT_TRUE(s);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(21, *s));
    log_data data;
    read_log(log_of(body), &data);
    ASSERT_EQ(data.samples.size(), 1u);
    EXPECT_FALSE(data.samples[0].us);
}

// The same code with .debug_frame only, stripped: no CFI in the file, so
// the chain stops at the leaf, marked; with its debug file under
// DEBUG_DIR/.build-id, the whole chain.
TEST(Unwind, DebugFrameOfASeparateDebugFileByBuildId) {
    // The unstripped file runs (dlopen); the samples name the stripped one
    // (the same code at the same addresses).
    const std::string full = fixtures + "/libunwind-full.so";
    const std::string stripped = fixtures + "/libunwind-dbg.so";
    auto s = snapshot(full, sizeof(unwind_snapshot::stack));
    ASSERT_TRUE(s);
    bytes body = map_ins(10, full, stripped);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    log_data data;
    read_log(log_of(body), &data);
    ASSERT_EQ(data.samples.size(), 1u);
    ASSERT_TRUE(data.samples[0].us);

    symbolizer sym;
    {
        dwarf_unwinder u(data.procs, sym, "/nonexistent");
        const auto r = u.unwind(pid, 20, *data.samples[0].us);
        EXPECT_EQ(r.stop, unwind_stop::no_cfi);
        EXPECT_EQ(r.pcs.size(), 1u);
    }
    const std::string id = build_id_of(stripped);
    ASSERT_GT(id.size(), 2u);
    const auto dir =
        std::filesystem::temp_directory_path() / ("hwpmc-unwind-test-" + std::to_string(getpid()));
    const auto dbg = dir / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
    std::filesystem::create_directories(dbg.parent_path());
    std::filesystem::copy_file(fixtures + "/libunwind-dbg.debug", dbg);
    dwarf_unwinder u(data.procs, sym, dir.string());
    const auto r = u.unwind(pid, 20, *data.samples[0].us);
    std::filesystem::remove_all(dir);
    ASSERT_GE(r.pcs.size(), 4u) << hwpmc_tools::unwind_stop_name(r.stop);
    // Named as a callchain of the same PCs would be.
    hwpmc_tools::raw_sample raw = data.samples[0];
    raw.us.reset();
    raw.pcs = r.pcs;
    resolver res(data.procs, sym);
    const auto rs = res.resolve(raw);
    std::vector<std::string> f;
    for (uint32_t id2 : rs.frames)
        f.push_back(res.frame(id2).name);
    ASSERT_GE(f.size(), 4u);
    EXPECT_EQ(f[0], "unwind_leaf") << joined(f);
    EXPECT_EQ(f[1], "unwind_middle") << joined(f);
    EXPECT_EQ(f[2], "unwind_outer") << joined(f);
    EXPECT_EQ(f[3].rfind("tools_test_unwind::caller(", 0), 0u) << joined(f);
}

// The dynamic linker's entry code (its _start, which has no CFI on
// Debian) ends a chain as its outermost frame, not as a truncation.
TEST(Unwind, DynamicLinkerEntryIsOutermost) {
    // ld.so's executable mapping and its e_entry.
    mapping ld;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find("/ld-linux-x86-64.so.2") == std::string::npos ||
            line.find(" r-xp ") == std::string::npos)
            continue;
        unsigned long long lo, hi, off;
        int n = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %*s %llx %*s %*s%n", &lo, &hi, &off, &n) < 3)
            continue;
        ld = {lo, hi, off, line.substr(line.find('/'))};
    }
    if (ld.path.empty())
        GTEST_SKIP() << "no ld-linux-x86-64.so.2 mapped";
    elf_version(EV_CURRENT);
    int fd = open(ld.path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
    GElf_Ehdr eh;
    ASSERT_TRUE(elf && gelf_getehdr(elf, &eh));
    uint64_t entry_off = 0;
    size_t nph = 0;
    elf_getphdrnum(elf, &nph);
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD &&
            eh.e_entry - ph.p_vaddr < ph.p_filesz)
            entry_off = eh.e_entry - ph.p_vaddr + ph.p_offset;
    }
    elf_end(elf);
    close(fd);
    ASSERT_GT(entry_off, ld.pgoff);
    bytes body = map_in(10, pid, ld.start, ld.end, ld.pgoff, ld.path);
    append(body, sample_rec(20, pid, {ld.start + entry_off - ld.pgoff + 3}));
    log_data data;
    read_log(log_of(body), &data);
    ASSERT_EQ(data.samples.size(), 1u);
    user_stack us;
    us.flags = PMCLOG_US_F_REGS;
    us.regs[PMCLOG_US_REG_RIP] = ld.start + entry_off - ld.pgoff + 3;
    us.regs[PMCLOG_US_REG_RSP] = 0x7ffc00001000;
    us.stack.assign(64, 0);
    symbolizer sym;
    dwarf_unwinder u(data.procs, sym);
    const auto r = u.unwind(pid, 20, us);
    EXPECT_EQ(r.stop, unwind_stop::outermost) << hwpmc_tools::unwind_stop_name(r.stop);
    EXPECT_EQ(r.pcs.size(), 1u);
}

// Through a signal frame: the handler's caller is the signal trampoline
// (libc's __restore_rt, whose CFI is a signal frame's: "[unknown]
// libc.so.6+0x..." without libc's debug symbols), and above it the code
// the signal interrupted, inside raise(), called from raiser().
TEST(Unwind, ThroughASignalFrame) {
    const std::string lib = fixtures + "/libunwind.so";
    void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    auto s = std::make_unique<unwind_snapshot>();
    s->stack_end = stack_end();
    s->cap = sizeof(s->stack);
    tools_test_unwind::signal_snapshot = s.get();
    tools_test_unwind::signal_outer =
        reinterpret_cast<int (*)(unwind_snapshot *)>(dlsym(h, "unwind_outer"));
    ASSERT_NE(tools_test_unwind::signal_outer, nullptr);
    struct sigaction sa {
    }, old{};
    sa.sa_handler = tools_test_unwind::handler;
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    tools_test_unwind::raiser();
    sigaction(SIGUSR1, &old, nullptr);
    ASSERT_GT(s->copied, 64u);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    const auto f = frames_of(body);
    ASSERT_GE(f.size(), 6u) << joined(f);
    EXPECT_EQ(f[0], "unwind_leaf") << joined(f);
    EXPECT_EQ(f[3].rfind("tools_test_unwind::handler(", 0), 0u) << joined(f);
    EXPECT_NE(std::find(f.begin(), f.end(), "raise"), f.end()) << joined(f);
    const auto raiser = std::find_if(f.begin(), f.end(), [](const std::string &n) {
        return n.rfind("tools_test_unwind::raiser(", 0) == 0;
    });
    ASSERT_NE(raiser, f.end()) << joined(f);
    EXPECT_NE(std::find(raiser, f.end(), "main"), f.end()) << joined(f);
}

// A log is untrusted input: random registers and stack bytes (PCs in the
// fixture's code, stack words that are often addresses in it) end every
// unwind within the depth limit, with a reason.
TEST(Unwind, RandomStacksEndWithinTheLimit) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, 4096);
    ASSERT_TRUE(s);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    log_data data;
    read_log(log_of(body), &data);
    symbolizer sym;
    dwarf_unwinder u(data.procs, sym, "/nonexistent", 64);
    uint64_t x = 88172645463325252ull; // xorshift64
    auto rnd = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    const uint64_t pc = s->regs[16];
    for (int i = 0; i < 2000; i++) {
        user_stack us;
        us.flags = PMCLOG_US_F_REGS;
        for (auto &r : us.regs)
            r = rnd();
        us.regs[PMCLOG_US_REG_RIP] = pc - 0x40 + rnd() % 0x200;
        us.regs[PMCLOG_US_REG_RSP] = 0x7ffc00000000 + (rnd() % 4096) * 8;
        us.stack.resize(rnd() % 512 * 8);
        for (size_t k = 0; k + 8 <= us.stack.size(); k += 8) {
            uint64_t w =
                rnd() % 3 ? pc - 0x40 + rnd() % 0x200 : us.regs[PMCLOG_US_REG_RSP] + rnd() % 4096;
            std::memcpy(&us.stack[k], &w, 8);
        }
        const auto r = u.unwind(pid, 20, us);
        ASSERT_GE(r.pcs.size(), 1u);
        ASSERT_LE(r.pcs.size(), 64u);
    }
    EXPECT_EQ(u.samples, 2000u);
}

// The per-address cache: a second unwind of the same sample gives the same
// chain.
TEST(Unwind, CachedRulesGiveTheSameChain) {
    const std::string lib = fixtures + "/libunwind.so";
    auto s = snapshot(lib, sizeof(unwind_snapshot::stack));
    ASSERT_TRUE(s);
    bytes body = map_ins(10);
    append(body, sample_rec(20, pid, {s->regs[16]}));
    append(body, userstack_of(20, *s));
    log_data data;
    read_log(log_of(body), &data);
    ASSERT_EQ(data.samples.size(), 1u);
    symbolizer sym;
    dwarf_unwinder u(data.procs, sym);
    const auto a = u.unwind(pid, 20, *data.samples[0].us);
    const auto b = u.unwind(pid, 20, *data.samples[0].us);
    EXPECT_EQ(a.pcs, b.pcs);
    EXPECT_EQ(a.stop, b.stop);
    EXPECT_EQ(u.samples, 2u);
    EXPECT_EQ(u.truncated_note(), "");
}

} // namespace
