// SPDX-License-Identifier: GPL-2.0
// The leaf's caller in frame-pointer callchains (hwpmc-record -g,
// lib/leaf_stack.hpp): the decision (leaf_caller_missing), and samples
// taken in a chain built -O1 -fno-omit-frame-pointer
// (fixtures/leaf_lib.c) as the module logs them for -g: the
// frame-pointer walk's CALLCHAIN and a 64-byte USERSTACK.  A leaf without
// a frame gets its caller back; a leaf with one keeps its chain; a copy
// that does not hold the return address changes nothing.
#include "lib/leaf_stack.hpp"
#include "profile/samples.hpp"
#include "tools_test.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

struct leaf_snapshot {
    uint64_t regs[17];
    uint64_t stack_end;
    uint64_t stack[8];
    uint64_t copied;
    uint64_t fp[8];
    uint64_t nfp;
};

namespace tools_test_leaf {
// The caller of the fixture's chain, in this executable.
__attribute__((noinline)) int caller(int (*outer)(leaf_snapshot *, int), leaf_snapshot *s,
                                     int framed) {
    int r = outer(s, framed);
    asm volatile("" ::: "memory"); // not a tail call
    return r + 1;
}
} // namespace tools_test_leaf

namespace {

using namespace tools_test;
using hwpmc_tools::leaf_caller_missing;
using hwpmc_tools::log_data;
using hwpmc_tools::raw_sample;
using hwpmc_tools::resolver;
using hwpmc_tools::symbolizer;

constexpr uint32_t pid = 4545;

TEST(LeafCaller, MissingWhenTheWalkSkippedIt) {
    // The walk from the caller's frame: PC, then the caller's caller.
    EXPECT_TRUE(leaf_caller_missing({0x100, 0x300, 0x400}, 0, 0x100, 0x200));
    // Only the PC (the walk found no frame): the caller goes after it.
    EXPECT_TRUE(leaf_caller_missing({0x100}, 0, 0x100, 0x200));
    // After kernel frames: the user part is what counts.
    EXPECT_TRUE(leaf_caller_missing({0xffff1, 0xffff2, 0x100, 0x300}, 2, 0x100, 0x200));
}

TEST(LeafCaller, NotMissingWhenTheChainHasIt) {
    // The leaf set up its frame: the walk found its caller.
    EXPECT_FALSE(leaf_caller_missing({0x100, 0x200, 0x300}, 0, 0x100, 0x200));
    EXPECT_FALSE(leaf_caller_missing({0xffff1, 0x100, 0x200}, 1, 0x100, 0x200));
    // The chain is not of these registers (another PC): leave it.
    EXPECT_FALSE(leaf_caller_missing({0x104, 0x300}, 0, 0x100, 0x200));
    // No user frames, or no caller found.
    EXPECT_FALSE(leaf_caller_missing({0xffff1}, 1, 0x100, 0x200));
    EXPECT_FALSE(leaf_caller_missing({}, 0, 0x100, 0x200));
    EXPECT_FALSE(leaf_caller_missing({0x100, 0x300}, 0, 0x100, 0));
}

// The end of this thread's stack: the walk stays below it.
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

// A snapshot taken in the fixture's leaf (framed or not).
std::unique_ptr<leaf_snapshot> snapshot(bool framed, void **leaf_fn) {
    const std::string lib = std::string(HWPMC_FIXTURES) + "/libleaf.so";
    void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(h, nullptr) << dlerror();
    if (!h)
        return nullptr;
    auto outer = reinterpret_cast<int (*)(leaf_snapshot *, int)>(dlsym(h, "leaf_outer"));
    *leaf_fn = dlsym(h, framed ? "leaf_framed" : "leaf_bare");
    EXPECT_NE(outer, nullptr);
    auto s = std::make_unique<leaf_snapshot>();
    s->stack_end = stack_end();
    EXPECT_NE(s->stack_end, 0u);
    tools_test_leaf::caller(outer, s.get(), framed);
    return s;
}

// The log of one -g sample: MAP_IN records of the fixture and of this
// program, the frame-pointer walk's CALLCHAIN, and (with `copied` bytes
// of the snapshot's stack, if us) the USERSTACK of leaf_stack_size.
bytes log_body(const leaf_snapshot &s, void *leaf_fn, bool us, size_t copied = 64) {
    bytes b = map_in_of(10, pid, leaf_fn);
    append(b, map_in_of(10, pid, reinterpret_cast<void *>(&tools_test_leaf::caller)));
    append(b, sample_rec(20, pid, std::vector<uint64_t>(s.fp, s.fp + s.nfp)));
    if (us) {
        struct pmclog_userstack r {};
        r.pl_pid = pid;
        r.pl_tid = pid + 1;
        r.pl_pmcid = pmcid;
        r.pl_size = hwpmc_tools::leaf_stack_size;
        r.pl_copied = static_cast<uint32_t>(copied);
        r.pl_flags = PMCLOG_US_F_REGS | (copied < 64 ? PMCLOG_US_F_SHORT : 0u);
        std::copy(s.regs, s.regs + 17, r.pl_regs);
        const auto *p = reinterpret_cast<const uint8_t *>(s.stack);
        append(b, record(PMCLOG_TYPE_USERSTACK, r, 20, bytes(p, p + copied)));
    }
    return b;
}

struct resolved {
    std::vector<std::string> names;
    raw_sample as_resolved{};
    uint64_t checked = 0, inserted = 0;
};

resolved resolve(const bytes &body) {
    log_data data;
    read_log(log_of(body), &data);
    resolved out;
    EXPECT_EQ(data.samples.size(), 1u);
    if (data.samples.size() != 1)
        return out;
    symbolizer sym;
    resolver res(data.procs, sym);
    const auto s = res.resolve(data.samples[0], &out.as_resolved);
    for (uint32_t f : s.frames)
        out.names.push_back(res.frame(f).name);
    out.checked = res.leaf_checked;
    out.inserted = res.leaf_inserted;
    return out;
}

std::string joined(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v)
        s += x + "\n";
    return s;
}

bool has(const std::vector<std::string> &v, const std::string &name) {
    return std::find(v.begin(), v.end(), name) != v.end();
}

// The leaf has no frame: the walk misses leaf_mid (as before), and the
// 64-byte USERSTACK gives it back, in its place.
TEST(LeafCaller, FramelessLeafGetsItsCaller) {
    void *leaf = nullptr;
    auto s = snapshot(false, &leaf);
    ASSERT_TRUE(s);
    ASSERT_EQ(s->copied, 64u);
    ASSERT_GE(s->nfp, 2u);

    const resolved old = resolve(log_body(*s, leaf, false));
    ASSERT_GE(old.names.size(), 2u) << joined(old.names);
    EXPECT_EQ(old.names[0], "leaf_bare") << joined(old.names);
    EXPECT_EQ(old.names[1], "leaf_outer") << joined(old.names);
    EXPECT_FALSE(has(old.names, "leaf_mid")) << joined(old.names);
    EXPECT_EQ(old.checked, 0u);

    const resolved now = resolve(log_body(*s, leaf, true));
    ASSERT_GE(now.names.size(), 4u) << joined(now.names);
    EXPECT_EQ(now.names[0], "leaf_bare") << joined(now.names);
    EXPECT_EQ(now.names[1], "leaf_mid") << joined(now.names);
    EXPECT_EQ(now.names[2], "leaf_outer") << joined(now.names);
    EXPECT_EQ(now.names[3].rfind("tools_test_leaf::caller(", 0), 0u) << joined(now.names);
    EXPECT_EQ(now.names.size(), old.names.size() + 1) << joined(now.names);
    EXPECT_EQ(now.checked, 1u);
    EXPECT_EQ(now.inserted, 1u);
    // The outputs that describe addresses get that chain, without the stack.
    EXPECT_EQ(now.as_resolved.pcs.size(), s->nfp + 1);
    EXPECT_EQ(now.as_resolved.pcs[0], s->fp[0]);
    EXPECT_EQ(now.as_resolved.pcs[1], s->stack[0]); // the return address at rsp
    EXPECT_EQ(now.as_resolved.pcs[2], s->fp[1]);
    EXPECT_FALSE(now.as_resolved.us);
}

// The leaf set up its frame: the walk found leaf_mid; nothing is added.
TEST(LeafCaller, FramedLeafKeepsItsChain) {
    void *leaf = nullptr;
    auto s = snapshot(true, &leaf);
    ASSERT_TRUE(s);
    const resolved now = resolve(log_body(*s, leaf, true));
    ASSERT_GE(now.names.size(), 4u) << joined(now.names);
    EXPECT_EQ(now.names[0], "leaf_framed") << joined(now.names);
    EXPECT_EQ(now.names[1], "leaf_mid") << joined(now.names);
    EXPECT_EQ(now.names[2], "leaf_outer") << joined(now.names);
    EXPECT_EQ(now.checked, 1u);
    EXPECT_EQ(now.inserted, 0u);
    EXPECT_EQ(now.as_resolved.pcs, std::vector<uint64_t>(s->fp, s->fp + s->nfp));
}

// A copy without the return address (a short one: the stack's end, or a
// page not resident): the chain stays as the walk found it.
TEST(LeafCaller, ShortCopyChangesNothing) {
    void *leaf = nullptr;
    auto s = snapshot(false, &leaf);
    ASSERT_TRUE(s);
    const resolved now = resolve(log_body(*s, leaf, true, 0));
    ASSERT_GE(now.names.size(), 2u) << joined(now.names);
    EXPECT_EQ(now.names[1], "leaf_outer") << joined(now.names);
    EXPECT_EQ(now.inserted, 0u);
    EXPECT_EQ(now.as_resolved.pcs, std::vector<uint64_t>(s->fp, s->fp + s->nfp));
    EXPECT_NE(now.names.back(), hwpmc_tools::truncated_name);
}

} // namespace
