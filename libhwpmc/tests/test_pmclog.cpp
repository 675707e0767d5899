// SPDX-License-Identifier: BSD-2-Clause
// The pmclog(3) reader and hwpmc::log_reader on crafted logs: every record
// type, records split across feeds at every byte, truncated and corrupt
// input, unknown types, other versions, descriptors.
#include "pmclog_builder.hpp"

#include <hwpmc/hwpmc.hpp>
#include <pmclog.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <ranges>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace hwpmc::test;

namespace {

class parser {
public:
    explicit parser(int fd = PMCLOG_FD_NONE) : p_(pmclog_open(fd)) {}
    ~parser() { pmclog_close(p_); }
    parser(const parser &) = delete;
    parser &operator=(const parser &) = delete;
    void *get() const { return p_; }
    int feed(const unsigned char *d, size_t n) {
        return pmclog_feed(p_, const_cast<char *>(reinterpret_cast<const char *>(d)),
                           static_cast<int>(n));
    }
    int feed(const bytes &b) { return feed(b.data(), b.size()); }
    int end() { return pmclog_feed(p_, nullptr, 0); }

private:
    void *p_;
};

// What a reader made of a log: the records, how it ended, errno.
struct outcome {
    std::vector<std::string> events;
    enum pmclog_state end = PMCLOG_OK;
    int err = 0;
    std::string msg;
    bool operator==(const outcome &o) const {
        return events == o.events && end == o.end && err == o.err && msg == o.msg;
    }
};

std::ostream &operator<<(std::ostream &os, const outcome &o) {
    for (const auto &e : o.events)
        os << e << "\n";
    return os << "end=" << o.end << " errno=" << o.err << " msg=" << o.msg;
}

// Read until the reader stops; true if it wants more data.
bool drain(parser &p, outcome &o) {
    struct pmclog_ev ev;
    for (;;) {
        errno = 0;
        const int rc = pmclog_read(p.get(), &ev);
        if (rc == 0) {
            EXPECT_EQ(ev.pl_state, PMCLOG_OK);
            o.events.push_back(describe(ev));
            continue;
        }
        EXPECT_EQ(rc, -1);
        o.end = ev.pl_state;
        o.err = ev.pl_state == PMCLOG_ERROR ? errno : 0;
        o.msg = pmclog_errmsg(p.get());
        return ev.pl_state == PMCLOG_REQUIRE_DATA;
    }
}

// Feed `log` in pieces cut at `cuts` (ascending), reading after each.
outcome decode(const bytes &log, const std::vector<size_t> &cuts = {}) {
    parser p;
    outcome o;
    size_t at = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(log.size());
    for (size_t end : ends) {
        if (end == at)
            continue; // (feeding 0 bytes would end the input)
        EXPECT_EQ(p.feed(log.data() + at, end - at), 0);
        at = end;
        if (!drain(p, o))
            return o;
    }
    EXPECT_EQ(p.end(), 0);
    drain(p, o);
    return o;
}

// The first record after INITIALIZE of a log, decoded.
struct pmclog_ev second_record(const bytes &rec) {
    bytes log = initialize();
    append(log, rec);
    parser p;
    EXPECT_EQ(p.feed(log), 0);
    EXPECT_EQ(p.end(), 0);
    struct pmclog_ev ev;
    std::memset(&ev, 0xa5, sizeof(ev));
    EXPECT_EQ(pmclog_read(p.get(), &ev), 0) << pmclog_errmsg(p.get());
    EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_INITIALIZE);
    EXPECT_EQ(pmclog_read(p.get(), &ev), 0) << pmclog_errmsg(p.get());
    // pl_data is valid until the next call: check it here.
    EXPECT_EQ(ev.pl_len, static_cast<int>(rec.size()));
    EXPECT_EQ(std::memcmp(ev.pl_data, rec.data(), rec.size()), 0);
    struct pmclog_ev end;
    EXPECT_EQ(pmclog_read(p.get(), &end), -1);
    EXPECT_EQ(end.pl_state, PMCLOG_EOF);
    if (ev.pl_type == PMCLOG_TYPE_PMCALLOCATE)
        ev.pl_u.pl_a.pl_evname = ev.pl_u.pl_a.pl_name; // the copy's own
    return ev;
}

// --- every type round-trips --------------------------------------------

struct roundtrip_case {
    const char *name;
    bytes rec;
    std::function<void(const struct pmclog_ev &)> check;
};

std::vector<roundtrip_case> roundtrip_cases() {
    std::vector<roundtrip_case> v;
    v.push_back({"CLOSELOG", closelog(5000), [](const struct pmclog_ev &ev) {
                     EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_CLOSELOG);
                     EXPECT_EQ(ev.pl_ts.tv_sec, 0);
                     EXPECT_EQ(ev.pl_ts.tv_nsec, 5000);
                 }});
    {
        struct pmclog_dropnotify r {};
        r.pl_samples = 12;
        r.pl_records = 3;
        r.pl_throttled = 9;
        v.push_back({"DROPNOTIFY", record(PMCLOG_TYPE_DROPNOTIFY, r, 3000000001),
                     [](const struct pmclog_ev &ev) {
                         EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_DROPNOTIFY);
                         EXPECT_EQ(ev.pl_ts.tv_sec, 3);
                         EXPECT_EQ(ev.pl_ts.tv_nsec, 1);
                         EXPECT_EQ(ev.pl_u.pl_dn.pl_samples, 12u);
                         EXPECT_EQ(ev.pl_u.pl_dn.pl_records, 3u);
                         EXPECT_EQ(ev.pl_u.pl_dn.pl_throttled, 9u);
                     }});
    }
    {
        // Log minor 0 (module minor < 2): 32 bytes, no pl_throttled.
        struct {
            struct pmclog_header pl_hdr;
            uint64_t pl_samples, pl_records;
        } r{};
        r.pl_samples = 4;
        r.pl_records = 1;
        v.push_back({"DROPNOTIFY_minor0", record(PMCLOG_TYPE_DROPNOTIFY, r, 3000000002),
                     [](const struct pmclog_ev &ev) {
                         EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_DROPNOTIFY);
                         EXPECT_EQ(ev.pl_len, 32);
                         EXPECT_EQ(ev.pl_u.pl_dn.pl_samples, 4u);
                         EXPECT_EQ(ev.pl_u.pl_dn.pl_records, 1u);
                         EXPECT_EQ(ev.pl_u.pl_dn.pl_throttled, 0u);
                     }});
    }
    v.push_back({"PMCALLOCATE", pmcallocate(2000, 0x13000002, "SOFT-CLOCK.PROF"),
                 [](const struct pmclog_ev &ev) {
                     const auto &a = ev.pl_u.pl_a;
                     EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_PMCALLOCATE);
                     EXPECT_EQ(a.pl_pmcid, 0x13000002u);
                     EXPECT_STREQ(a.pl_evname, "SOFT-CLOCK.PROF");
                     EXPECT_STREQ(a.pl_name, "SOFT-CLOCK.PROF");
                     EXPECT_EQ(a.pl_event, static_cast<uint32_t>(PMC_EV_SOFT_CLOCK_PROF));
                     EXPECT_STREQ(pmc_name_of_event(static_cast<enum pmc_event>(a.pl_event)),
                                  "CLOCK.PROF");
                     EXPECT_EQ(a.pl_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
                     EXPECT_EQ(a.pl_mode, static_cast<uint32_t>(PMC_MODE_TS));
                     EXPECT_EQ(a.pl_flags, static_cast<uint32_t>(PMC_F_CALLCHAIN));
                     EXPECT_EQ(a.pl_cpu, PMC_CPU_ANY);
                     EXPECT_EQ(a.pl_rate, 1000000u);
                 }});
    {
        struct pmclog_pmcallocate r {};
        r.pl_pmcid = 7;
        std::memset(r.pl_name, 'x', sizeof(r.pl_name) - 1); // the longest name
        v.push_back({"PMCALLOCATE longest name", record(PMCLOG_TYPE_PMCALLOCATE, r, 1),
                     [](const struct pmclog_ev &ev) {
                         EXPECT_EQ(std::strlen(ev.pl_u.pl_a.pl_evname), PMC_NAME_MAX - 1u);
                     }});
    }
    {
        struct pmclog_pmcattach r {};
        r.pl_pmcid = 0x13000002;
        r.pl_pid = 4242;
        v.push_back({"PMCATTACH", record(PMCLOG_TYPE_PMCATTACH, r, 1, cstr("/usr/bin/sleep")),
                     [](const struct pmclog_ev &ev) {
                         EXPECT_EQ(ev.pl_u.pl_t.pl_pmcid, 0x13000002u);
                         EXPECT_EQ(ev.pl_u.pl_t.pl_pid, 4242);
                         EXPECT_STREQ(ev.pl_u.pl_t.pl_pathname, "/usr/bin/sleep");
                     }});
        v.push_back(
            {"PMCATTACH no path", record(PMCLOG_TYPE_PMCATTACH, r, 1, cstr("")),
             [](const struct pmclog_ev &ev) { EXPECT_STREQ(ev.pl_u.pl_t.pl_pathname, ""); }});
        const std::string longest(PATH_MAX - 1, 'p');
        v.push_back({"PMCATTACH longest path", record(PMCLOG_TYPE_PMCATTACH, r, 1, cstr(longest)),
                     [longest](const struct pmclog_ev &ev) {
                         EXPECT_EQ(ev.pl_u.pl_t.pl_pathname, longest);
                     }});
    }
    {
        struct pmclog_pmcdetach r {};
        r.pl_pmcid = 9;
        r.pl_pid = 77;
        v.push_back(
            {"PMCDETACH", record(PMCLOG_TYPE_PMCDETACH, r, 1), [](const struct pmclog_ev &ev) {
                 EXPECT_EQ(ev.pl_u.pl_d.pl_pmcid, 9u);
                 EXPECT_EQ(ev.pl_u.pl_d.pl_pid, 77);
             }});
    }
    {
        struct pmclog_proccsw r {};
        r.pl_pmcid = 9;
        r.pl_pid = 77;
        r.pl_tid = 78;
        r.pl_cpu = 5;
        r.pl_value = 1ull << 40;
        v.push_back({"PROCCSW", record(PMCLOG_TYPE_PROCCSW, r, 1), [](const struct pmclog_ev &ev) {
                         const auto &c = ev.pl_u.pl_c;
                         EXPECT_EQ(c.pl_pmcid, 9u);
                         EXPECT_EQ(c.pl_pid, 77);
                         EXPECT_EQ(c.pl_tid, 78);
                         EXPECT_EQ(c.pl_cpu, 5u);
                         EXPECT_EQ(c.pl_value, 1ull << 40);
                     }});
    }
    {
        struct pmclog_procexec r {};
        r.pl_pid = 77;
        r.pl_pmcid = PMC_ID_INVALID;
        r.pl_base = 0x555555554000;
        v.push_back({"PROCEXEC", record(PMCLOG_TYPE_PROCEXEC, r, 1, cstr("/bin/true")),
                     [](const struct pmclog_ev &ev) {
                         const auto &x = ev.pl_u.pl_x;
                         EXPECT_EQ(x.pl_pid, 77);
                         EXPECT_EQ(x.pl_pmcid, PMC_ID_INVALID);
                         EXPECT_EQ(x.pl_baseaddr, 0x555555554000u);
                         EXPECT_STREQ(x.pl_pathname, "/bin/true");
                     }});
    }
    {
        struct pmclog_procexit r {};
        r.pl_pmcid = 9;
        r.pl_pid = 77;
        r.pl_value = 31337;
        v.push_back(
            {"PROCEXIT", record(PMCLOG_TYPE_PROCEXIT, r, 1), [](const struct pmclog_ev &ev) {
                 EXPECT_EQ(ev.pl_u.pl_e.pl_pmcid, 9u);
                 EXPECT_EQ(ev.pl_u.pl_e.pl_pid, 77u);
                 EXPECT_EQ(ev.pl_u.pl_e.pl_value, 31337u);
             }});
    }
    {
        struct pmclog_procfork r {};
        r.pl_ppid = 77;
        r.pl_pid = 79;
        v.push_back(
            {"PROCFORK", record(PMCLOG_TYPE_PROCFORK, r, 1), [](const struct pmclog_ev &ev) {
                 EXPECT_EQ(ev.pl_u.pl_f.pl_oldpid, 77);
                 EXPECT_EQ(ev.pl_u.pl_f.pl_newpid, 79);
             }});
    }
    {
        struct pmclog_sysexit r {};
        r.pl_pid = 80;
        v.push_back({"SYSEXIT", record(PMCLOG_TYPE_SYSEXIT, r, 1),
                     [](const struct pmclog_ev &ev) { EXPECT_EQ(ev.pl_u.pl_se.pl_pid, 80); }});
    }
    {
        struct pmclog_userdata r {};
        r.pl_userdata = 0xdeadbeef;
        r.pl_pid = 81;
        v.push_back(
            {"USERDATA", record(PMCLOG_TYPE_USERDATA, r, 1), [](const struct pmclog_ev &ev) {
                 EXPECT_EQ(ev.pl_u.pl_u.pl_userdata, 0xdeadbeefu);
                 EXPECT_EQ(ev.pl_u.pl_u.pl_pid, 81);
             }});
    }
    {
        struct pmclog_map_in r {};
        r.pl_pid = 82;
        r.pl_start = 0x7f0000001000;
        r.pl_end = 0x7f0000005000;
        r.pl_pgoff = 0x2000;
        v.push_back({"MAP_IN", record(PMCLOG_TYPE_MAP_IN, r, 1, cstr("/lib/x86_64/libm.so.6")),
                     [](const struct pmclog_ev &ev) {
                         const auto &m = ev.pl_u.pl_mi;
                         EXPECT_EQ(m.pl_pid, 82);
                         EXPECT_EQ(m.pl_start, 0x7f0000001000u);
                         EXPECT_EQ(m.pl_end, 0x7f0000005000u);
                         EXPECT_EQ(m.pl_pgoff, 0x2000u);
                         EXPECT_STREQ(m.pl_pathname, "/lib/x86_64/libm.so.6");
                     }});
    }
    {
        struct pmclog_map_out r {};
        r.pl_pid = 82;
        r.pl_start = 0x7f0000001000;
        r.pl_end = 0x7f0000005000;
        v.push_back({"MAP_OUT", record(PMCLOG_TYPE_MAP_OUT, r, 1), [](const struct pmclog_ev &ev) {
                         EXPECT_EQ(ev.pl_u.pl_mo.pl_pid, 82);
                         EXPECT_EQ(ev.pl_u.pl_mo.pl_start, 0x7f0000001000u);
                         EXPECT_EQ(ev.pl_u.pl_mo.pl_end, 0x7f0000005000u);
                     }});
    }
    // USERSTACK (log minor 3): registers, the copy in the record, padding.
    v.push_back({"USERSTACK", userstack(1, 0x13000002, 100, bytes{0xa, 0xb, 0xc, 0xd, 0xe}, 4096),
                 [](const struct pmclog_ev &ev) {
                     const auto &us = ev.pl_u.pl_us;
                     EXPECT_EQ(ev.pl_len, 184);
                     EXPECT_EQ(us.pl_pid, 100u);
                     EXPECT_EQ(us.pl_tid, 101u);
                     EXPECT_EQ(us.pl_pmcid, 0x13000002u);
                     EXPECT_EQ(us.pl_flags,
                               static_cast<uint32_t>(PMCLOG_US_F_REGS | PMCLOG_US_F_SHORT));
                     EXPECT_EQ(us.pl_size, 4096u);
                     EXPECT_EQ(us.pl_copied, 5u);
                     EXPECT_EQ(us.pl_regs[PMCLOG_US_REG_RIP], 0x401234u);
                     EXPECT_EQ(us.pl_regs[PMCLOG_US_REG_RSP], 0x7ffc0000f000u);
                     EXPECT_EQ(us.pl_regs[PMCLOG_US_REG_RBP], 0x7ffc0000f040u);
                     EXPECT_EQ(us.pl_regs[0], 0u);
                     ASSERT_NE(us.pl_stack, nullptr);
                     EXPECT_EQ(us.pl_stack, static_cast<const unsigned char *>(ev.pl_data) +
                                                sizeof(struct pmclog_userstack));
                     EXPECT_EQ(us.pl_stack[0], 0xa);
                     EXPECT_EQ(us.pl_stack[4], 0xe);
                 }});
    v.push_back({"USERSTACK full copy", userstack(1, 1, 100, bytes(64, 0x5a), 64),
                 [](const struct pmclog_ev &ev) {
                     const auto &us = ev.pl_u.pl_us;
                     EXPECT_EQ(us.pl_flags, static_cast<uint32_t>(PMCLOG_US_F_REGS));
                     EXPECT_EQ(us.pl_copied, 64u);
                     EXPECT_EQ(us.pl_stack[63], 0x5a);
                 }});
    v.push_back({"USERSTACK of a kernel thread: no registers, no copy",
                 userstack(1, 1, 100, {}, 8192, 0, 0, 0), [](const struct pmclog_ev &ev) {
                     const auto &us = ev.pl_u.pl_us;
                     EXPECT_EQ(us.pl_flags, static_cast<uint32_t>(PMCLOG_US_F_SHORT));
                     EXPECT_EQ(us.pl_copied, 0u);
                     EXPECT_EQ(us.pl_size, 8192u);
                     EXPECT_EQ(us.pl_regs[PMCLOG_US_REG_RIP], 0u);
                 }});
    // Callchains: the mode of pl_pc[0] and FreeBSD's cpuflags.
    v.push_back({"CALLCHAIN user",
                 callchain(1, 0x13000002, 100, {0x401000, 0x402000}, 0, PMCLOG_CC_F_USER, 3),
                 [](const struct pmclog_ev &ev) {
                     const auto &cc = ev.pl_u.pl_cc;
                     EXPECT_EQ(cc.pl_pid, 100u);
                     EXPECT_EQ(cc.pl_tid, 101u);
                     EXPECT_EQ(cc.pl_pmcid, 0x13000002u);
                     EXPECT_EQ(cc.pl_cpu, 3u);
                     EXPECT_EQ(cc.pl_npc, 2u);
                     EXPECT_EQ(cc.pl_pc[0], 0x401000u);
                     EXPECT_EQ(cc.pl_pc[1], 0x402000u);
                     EXPECT_EQ(cc.pl_pc[2], 0u);
                     EXPECT_EQ(cc.pl_nkernel, 0u);
                     EXPECT_EQ(cc.pl_cpumode, static_cast<uint32_t>(PMCLOG_CPUMODE_USER));
                     EXPECT_EQ(PMC_CALLCHAIN_CPUFLAGS_TO_CPU(cc.pl_cpuflags), 3u);
                     EXPECT_TRUE(PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(cc.pl_cpuflags));
                     EXPECT_EQ(cc.pl_cpuflags2, 0u);
                     EXPECT_EQ(cc.pl_flags, static_cast<uint32_t>(PMCLOG_CC_F_USER));
                 }});
    v.push_back({"CALLCHAIN kernel hidden",
                 callchain(1, 1, 100, {0x401234, 0x401010}, 0, PMCLOG_CC_F_KERNEL_HIDDEN, 2),
                 [](const struct pmclog_ev &ev) {
                     const auto &cc = ev.pl_u.pl_cc;
                     EXPECT_EQ(cc.pl_npc, 2u);
                     EXPECT_EQ(cc.pl_nkernel, 0u);
                     EXPECT_EQ(cc.pl_pc[0], 0x401234u);
                     // The flag comes back; pl_pc[0] is the user-mode PC.
                     EXPECT_EQ(cc.pl_flags, static_cast<uint32_t>(PMCLOG_CC_F_KERNEL_HIDDEN));
                     EXPECT_EQ(cc.pl_cpumode, static_cast<uint32_t>(PMCLOG_CPUMODE_USER));
                 }});
    v.push_back({"CALLCHAIN kernel hidden, kernel thread",
                 callchain(1, 1, 100, {}, 0, PMCLOG_CC_F_KERNEL_HIDDEN, 2),
                 [](const struct pmclog_ev &ev) {
                     const auto &cc = ev.pl_u.pl_cc;
                     EXPECT_EQ(cc.pl_npc, 0u);
                     EXPECT_EQ(cc.pl_flags, static_cast<uint32_t>(PMCLOG_CC_F_KERNEL_HIDDEN));
                     EXPECT_EQ(cc.pl_cpumode, static_cast<uint32_t>(PMCLOG_CPUMODE_KERNEL));
                 }});
    v.push_back({"CALLCHAIN kernel then user",
                 callchain(1, 1, 100, {0xffffffff81001000, 0xffffffff81002000, 0x401000}, 2, 0, 1),
                 [](const struct pmclog_ev &ev) {
                     const auto &cc = ev.pl_u.pl_cc;
                     EXPECT_EQ(cc.pl_npc, 3u);
                     EXPECT_EQ(cc.pl_nkernel, 2u);
                     EXPECT_EQ(cc.pl_cpumode, static_cast<uint32_t>(PMCLOG_CPUMODE_KERNEL));
                     EXPECT_FALSE(PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(cc.pl_cpuflags));
                     EXPECT_EQ(PMC_CALLCHAIN_CPUFLAGS_TO_CPU(cc.pl_cpuflags), 1u);
                 }});
    v.push_back({"CALLCHAIN no pcs, user", callchain(1, 1, 100, {}, 0, PMCLOG_CC_F_USER),
                 [](const struct pmclog_ev &ev) {
                     EXPECT_EQ(ev.pl_u.pl_cc.pl_npc, 0u);
                     EXPECT_EQ(ev.pl_u.pl_cc.pl_cpumode,
                               static_cast<uint32_t>(PMCLOG_CPUMODE_USER));
                 }});
    v.push_back({"CALLCHAIN no pcs, kernel", callchain(1, 1, 100, {}, 0, 0),
                 [](const struct pmclog_ev &ev) {
                     EXPECT_EQ(ev.pl_u.pl_cc.pl_cpumode,
                               static_cast<uint32_t>(PMCLOG_CPUMODE_KERNEL));
                 }});
    v.push_back({"CALLCHAIN CPU 70000", callchain(1, 1, 100, {1}, 0, PMCLOG_CC_F_USER, 70000),
                 [](const struct pmclog_ev &ev) {
                     EXPECT_EQ(ev.pl_u.pl_cc.pl_cpu, 70000u);
                     EXPECT_EQ(PMC_CALLCHAIN_CPUFLAGS_TO_CPU(ev.pl_u.pl_cc.pl_cpuflags),
                               70000u & 0xffff);
                     EXPECT_TRUE(PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(ev.pl_u.pl_cc.pl_cpuflags));
                 }});
    {
        std::vector<uint64_t> deep(PMC_CALLCHAIN_DEPTH_MAX);
        for (size_t i = 0; i < deep.size(); ++i)
            deep[i] = 0x400000 + i;
        v.push_back({"CALLCHAIN full depth",
                     callchain(1, 1, 100, deep, 0, PMCLOG_CC_F_USER | PMCLOG_CC_F_TRUNCATED),
                     [](const struct pmclog_ev &ev) {
                         const auto &cc = ev.pl_u.pl_cc;
                         EXPECT_EQ(cc.pl_npc, static_cast<uint32_t>(PMC_CALLCHAIN_DEPTH_MAX));
                         EXPECT_EQ(cc.pl_pc[PMC_CALLCHAIN_DEPTH_MAX - 1],
                                   0x400000u + PMC_CALLCHAIN_DEPTH_MAX - 1);
                         EXPECT_TRUE(cc.pl_flags & PMCLOG_CC_F_TRUNCATED);
                     }});
    }
    // Longer than the fixed part (a later minor version): the rest ignored.
    {
        struct pmclog_procfork r {};
        r.pl_ppid = 1;
        r.pl_pid = 2;
        v.push_back({"PROCFORK, longer", record(PMCLOG_TYPE_PROCFORK, r, 1, bytes(16, 0xee)),
                     [](const struct pmclog_ev &ev) {
                         EXPECT_EQ(ev.pl_u.pl_f.pl_newpid, 2);
                         EXPECT_EQ(ev.pl_len, 40);
                     }});
    }
    {
        struct pmclog_map_in r {};
        r.pl_pid = 3;
        bytes tail = cstr("/a");
        tail.resize(64, 0); // NUL padding beyond the next multiple of 8
        v.push_back(
            {"MAP_IN, padded", record(PMCLOG_TYPE_MAP_IN, r, 1, tail),
             [](const struct pmclog_ev &ev) { EXPECT_STREQ(ev.pl_u.pl_mi.pl_pathname, "/a"); }});
    }
    return v;
}

TEST(PmclogRead, EveryTypeRoundTrips) {
    for (const auto &c : roundtrip_cases()) {
        SCOPED_TRACE(c.name);
        const struct pmclog_ev ev = second_record(c.rec);
        EXPECT_EQ(ev.pl_state, PMCLOG_OK);
        EXPECT_EQ(ev.pl_count, 2u);
        EXPECT_EQ(ev.pl_offset, static_cast<off_t>(initialize().size()));
        c.check(ev);
    }
}

TEST(PmclogRead, Initialize) {
    parser p;
    ASSERT_EQ(p.feed(initialize(3000000007)), 0);
    struct pmclog_ev ev;
    ASSERT_EQ(pmclog_read(p.get(), &ev), 0);
    EXPECT_EQ(ev.pl_state, PMCLOG_OK);
    EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_INITIALIZE);
    EXPECT_EQ(ev.pl_offset, 0);
    EXPECT_EQ(ev.pl_count, 1u);
    EXPECT_EQ(ev.pl_ts.tv_sec, 3);
    EXPECT_EQ(ev.pl_ts.tv_nsec, 7);
    const auto &i = ev.pl_u.pl_i;
    EXPECT_EQ(i.pl_version, static_cast<uint32_t>(PMCLOG_VERSION));
    EXPECT_EQ(i.pl_arch, static_cast<uint32_t>(PMC_CPU_INTEL_ARCH));
    EXPECT_EQ(i.pl_tsc_freq, 2400000000u);
    EXPECT_EQ(i.pl_ts.tv_sec, 1700000000);
    EXPECT_EQ(i.pl_ts.tv_nsec, 123456789);
    EXPECT_STREQ(i.pl_cpuid, "");
    EXPECT_EQ(i.pl_ncpu, 4u);
    EXPECT_EQ(i.pl_pagesize, 4096u);
    // A fed reader with nothing more asks for data, not EOF.
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_REQUIRE_DATA);
    EXPECT_EQ(ev.pl_offset, static_cast<off_t>(initialize().size()));
    EXPECT_EQ(p.end(), 0);
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_EOF);
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1); // and stays there
    EXPECT_EQ(ev.pl_state, PMCLOG_EOF);
    EXPECT_STREQ(pmclog_errmsg(p.get()), "");
}

TEST(PmclogRead, EveryTypeInOneLog) {
    const bytes log = every_type_log();
    const outcome o = decode(log);
    ASSERT_EQ(o.end, PMCLOG_EOF) << o;
    ASSERT_EQ(o.events.size(), 16u) << o;
    // Offsets add up; counts run 1..n; types in order.
    parser p;
    ASSERT_EQ(p.feed(log), 0);
    ASSERT_EQ(p.end(), 0);
    struct pmclog_ev ev;
    off_t off = 0;
    size_t n = 0;
    std::vector<uint32_t> types;
    while (pmclog_read(p.get(), &ev) == 0) {
        EXPECT_EQ(ev.pl_offset, off);
        EXPECT_EQ(ev.pl_count, ++n);
        off += ev.pl_len;
        types.push_back(ev.pl_type);
    }
    EXPECT_EQ(ev.pl_state, PMCLOG_EOF);
    EXPECT_EQ(off, static_cast<off_t>(log.size()));
    EXPECT_EQ(types.front(), static_cast<uint32_t>(PMCLOG_TYPE_INITIALIZE));
    EXPECT_EQ(types.back(), static_cast<uint32_t>(PMCLOG_TYPE_CLOSELOG));
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    EXPECT_EQ(types.size(), static_cast<size_t>(PMCLOG_TYPE_MAX)); // each type
}

TEST(PmclogRead, EmptyInputIsEof) {
    const outcome o = decode({});
    EXPECT_TRUE(o.events.empty());
    EXPECT_EQ(o.end, PMCLOG_EOF);
}

// --- buffering ------------------------------------------------------------

TEST(PmclogFeed, SplitAtEveryByte) {
    const bytes log = every_type_log();
    const outcome whole = decode(log);
    ASSERT_EQ(whole.end, PMCLOG_EOF);
    for (size_t k = 0; k <= log.size(); ++k)
        ASSERT_EQ(decode(log, {k}), whole) << "split at " << k;
}

TEST(PmclogFeed, SplitTwiceAcrossAWholeRecord) {
    const bytes log = every_type_log();
    const outcome whole = decode(log);
    for (size_t a = 0; a <= log.size(); a += 5)
        for (size_t b = a; b <= log.size(); b += 11)
            ASSERT_EQ(decode(log, {a, b}), whole) << "split at " << a << " and " << b;
}

TEST(PmclogFeed, OneByteAtATime) {
    const bytes log = every_type_log();
    std::vector<size_t> cuts;
    for (size_t k = 1; k < log.size(); ++k)
        cuts.push_back(k);
    EXPECT_EQ(decode(log, cuts), decode(log));
}

TEST(PmclogFeed, CallerBufferMayBeReusedAtOnce) {
    const bytes log = every_type_log();
    parser p;
    bytes scratch(log.begin(), log.begin() + 40); // inside PMCALLOCATE
    ASSERT_EQ(p.feed(scratch), 0);
    std::fill(scratch.begin(), scratch.end(), 0xff); // FreeBSD would misread
    outcome o;
    EXPECT_TRUE(drain(p, o));
    ASSERT_EQ(p.feed(log.data() + 40, log.size() - 40), 0);
    ASSERT_EQ(p.end(), 0);
    drain(p, o);
    EXPECT_EQ(o, decode(log));
}

TEST(PmclogFeed, ManyRecordsInManyFeeds) {
    // Enough data to make the buffer move: 20000 samples, fed in 4 KiB.
    bytes log = initialize();
    for (uint32_t i = 0; i < 20000; ++i)
        append(log, callchain(i, 1, i, std::vector<uint64_t>(i % 17, 0x400000 + i)));
    append(log, closelog(99999));
    parser p;
    size_t n = 0;
    struct pmclog_ev ev;
    for (size_t at = 0; at < log.size(); at += 4096) {
        ASSERT_EQ(p.feed(log.data() + at, std::min<size_t>(4096, log.size() - at)), 0);
        while (pmclog_read(p.get(), &ev) == 0) {
            if (ev.pl_type == PMCLOG_TYPE_CALLCHAIN) {
                ASSERT_EQ(ev.pl_u.pl_cc.pl_pid, n);
                ASSERT_EQ(ev.pl_u.pl_cc.pl_npc, n % 17);
                ++n;
            }
        }
        ASSERT_EQ(ev.pl_state, PMCLOG_REQUIRE_DATA);
    }
    EXPECT_EQ(n, 20000u);
    ASSERT_EQ(p.end(), 0);
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_EOF);
}

// --- truncated input ----------------------------------------------------

TEST(PmclogTruncated, EveryPrefix) {
    const bytes log = every_type_log();
    std::vector<size_t> boundaries{0};
    {
        parser p;
        ASSERT_EQ(p.feed(log), 0);
        struct pmclog_ev ev;
        while (pmclog_read(p.get(), &ev) == 0)
            boundaries.push_back(static_cast<size_t>(ev.pl_offset) + ev.pl_len);
    }
    for (size_t len = 0; len <= log.size(); ++len) {
        const bytes prefix(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(len));
        const outcome o = decode(prefix);
        const bool at_boundary =
            std::find(boundaries.begin(), boundaries.end(), len) != boundaries.end();
        if (at_boundary) {
            EXPECT_EQ(o.end, PMCLOG_EOF) << "prefix " << len << "\n" << o;
        } else {
            EXPECT_EQ(o.end, PMCLOG_ERROR) << "prefix " << len << "\n" << o;
            EXPECT_EQ(o.err, EBADMSG);
            EXPECT_NE(o.msg.find("truncated"), std::string::npos) << o.msg;
        }
    }
}

// --- corrupt input --------------------------------------------------------

struct corrupt_case {
    const char *name;
    bytes log;       // whole image; INITIALIZE added in front unless `raw`
    bool raw;        // the image as it is
    int err;         // expected errno
    const char *msg; // expected in pmclog_errmsg()
};

bytes with_len(bytes rec, uint32_t len) {
    std::memcpy(rec.data() + offsetof(struct pmclog_header, pl_len), &len, sizeof(len));
    return rec;
}

bytes with_type(bytes rec, uint32_t type) {
    std::memcpy(rec.data() + offsetof(struct pmclog_header, pl_type), &type, sizeof(type));
    return rec;
}

template <class T>
bytes with_field(bytes rec, size_t off, T v) {
    std::memcpy(rec.data() + off, &v, sizeof(v));
    return rec;
}

std::vector<corrupt_case> corrupt_cases() {
    std::vector<corrupt_case> v;
    const bytes cc = callchain(1, 1, 100, {1, 2, 3});
    v.push_back(
        {"length not a multiple of 8", with_len(closelog(1), 20), false, EBADMSG, "bad length 20"});
    v.push_back({"length 0", with_len(closelog(1), 0), false, EBADMSG, "bad length 0"});
    v.push_back(
        {"length 8, below the header", with_len(closelog(1), 8), false, EBADMSG, "bad length 8"});
    v.push_back({"length above 1 MiB", with_len(closelog(1), (1u << 20) + 8), false, EBADMSG,
                 "bad length"});
    v.push_back(
        {"length 0xfffffff8", with_len(closelog(1), 0xfffffff8u), false, EBADMSG, "bad length"});
    v.push_back({"type 0", with_type(closelog(1), 0), false, EBADMSG, "record type 0"});
    v.push_back({"first record not INITIALIZE", closelog(1), true, EBADMSG, "not INITIALIZE"});
    v.push_back({"first record of an unknown type", with_type(closelog(1), 99), true, EBADMSG,
                 "not INITIALIZE"});
    {
        struct pmclog_procexit r {};
        v.push_back({"shorter than its type", record(PMCLOG_TYPE_PROCEXIT, r, 1, {}, 24), false,
                     EBADMSG, "PROCEXIT: length 24 < 32"});
    }
    v.push_back({"INITIALIZE too short", with_len(initialize(), 24), true, EBADMSG,
                 "INITIALIZE: length 24"});
    v.push_back({"INITIALIZE of major 2", initialize(1, HWPMC_VERSION_MAKE(2, 0, 0)), true, EPROTO,
                 "version 2.0"});
    v.push_back({"INITIALIZE of major 2, short",
                 with_len(initialize(1, HWPMC_VERSION_MAKE(2, 0, 0)), 24), true, EPROTO,
                 "version 2.0"});
    v.push_back({"INITIALIZE of major 0", initialize(1, HWPMC_VERSION_MAKE(0, 9, 0)), true, EPROTO,
                 "version 0.9"});
    v.push_back({"a later INITIALIZE of major 2", initialize(1, HWPMC_VERSION_MAKE(2, 0, 0)), false,
                 EPROTO, "version 2.0"});
    v.push_back({"CALLCHAIN npc above 512",
                 with_field<uint32_t>(cc, offsetof(struct pmclog_callchain, pl_npc), 513), false,
                 EBADMSG, "513 program counters"});
    v.push_back({"CALLCHAIN npc above the record",
                 with_field<uint32_t>(cc, offsetof(struct pmclog_callchain, pl_npc), 4), false,
                 EBADMSG, "length 72 for 4"});
    v.push_back({"CALLCHAIN npc below the record",
                 with_field<uint32_t>(cc, offsetof(struct pmclog_callchain, pl_npc), 2), false,
                 EBADMSG, "length 72 for 2"});
    v.push_back({"CALLCHAIN npc huge",
                 with_field<uint32_t>(cc, offsetof(struct pmclog_callchain, pl_npc), 0xffffffffu),
                 false, EBADMSG, "program counters"});
    v.push_back({"CALLCHAIN nkernel above npc",
                 with_field<uint32_t>(cc, offsetof(struct pmclog_callchain, pl_nkernel), 4), false,
                 EBADMSG, "4 kernel addresses of 3"});
    {
        bytes c = callchain(1, 1, 100, {});
        v.push_back({"CALLCHAIN shorter than fixed", with_len(c, 40), false, EBADMSG,
                     "CALLCHAIN: length 40 < 48"});
    }
    {
        const bytes us = userstack(1, 1, 100, bytes(16, 1), 32);
        v.push_back({"USERSTACK copied above size",
                     with_field<uint32_t>(us, offsetof(struct pmclog_userstack, pl_size), 8), false,
                     EBADMSG, "USERSTACK: 16 bytes copied of 8"});
        v.push_back({"USERSTACK copied above the record",
                     with_field<uint32_t>(us, offsetof(struct pmclog_userstack, pl_copied), 24),
                     false, EBADMSG, "USERSTACK: length 192 for 24 bytes"});
        v.push_back({"USERSTACK copied below the record",
                     with_field<uint32_t>(us, offsetof(struct pmclog_userstack, pl_copied), 8),
                     false, EBADMSG, "USERSTACK: length 192 for 8 bytes"});
        v.push_back(
            {"USERSTACK copied huge",
             with_field<uint32_t>(
                 with_field<uint32_t>(us, offsetof(struct pmclog_userstack, pl_size), 0xffffffffu),
                 offsetof(struct pmclog_userstack, pl_copied), 0xfffffff8u),
             false, EBADMSG, "USERSTACK: length 192"});
        v.push_back({"USERSTACK shorter than fixed", with_len(us, 168), false, EBADMSG,
                     "USERSTACK: length 168 < 176"});
    }
    {
        struct pmclog_pmcallocate r {};
        std::memset(r.pl_name, 'n', sizeof(r.pl_name));
        v.push_back({"PMCALLOCATE name unterminated", record(PMCLOG_TYPE_PMCALLOCATE, r, 1), false,
                     EBADMSG, "unterminated event name"});
    }
    {
        struct pmclog_pmcattach r {};
        v.push_back({"PMCATTACH path unterminated",
                     record(PMCLOG_TYPE_PMCATTACH, r, 1, bytes(8, 'a')), false, EBADMSG,
                     "PMCATTACH: unterminated path"});
        v.push_back({"PMCATTACH without a path", record(PMCLOG_TYPE_PMCATTACH, r, 1), false,
                     EBADMSG, "PMCATTACH: length 24 < 25"});
        v.push_back({"PMCATTACH path of PATH_MAX bytes",
                     record(PMCLOG_TYPE_PMCATTACH, r, 1, cstr(std::string(PATH_MAX, 'p'))), false,
                     EBADMSG, "longer than 4095"});
    }
    {
        struct pmclog_procexec r {};
        v.push_back({"PROCEXEC path unterminated",
                     record(PMCLOG_TYPE_PROCEXEC, r, 1, bytes(16, 'b')), false, EBADMSG,
                     "PROCEXEC: unterminated path"});
    }
    {
        struct pmclog_map_in r {};
        v.push_back({"MAP_IN path unterminated", record(PMCLOG_TYPE_MAP_IN, r, 1, bytes(8, 'c')),
                     false, EBADMSG, "MAP_IN: unterminated path"});
        // The terminator lies in the padding the length does not cover.
        bytes m = record(PMCLOG_TYPE_MAP_IN, r, 1, cstr("12345678"));
        m = with_len(m, 56);
        v.push_back({"MAP_IN NUL outside the record", m, false, EBADMSG, "unterminated path"});
    }
    return v;
}

TEST(PmclogCorrupt, RejectedWithAnError) {
    for (const auto &c : corrupt_cases()) {
        SCOPED_TRACE(c.name);
        bytes log = c.raw ? bytes{} : initialize();
        append(log, c.log);
        append(log, closelog(99)); // never reached
        const outcome o = decode(log);
        EXPECT_EQ(o.end, PMCLOG_ERROR) << o;
        EXPECT_EQ(o.err, c.err) << o;
        EXPECT_NE(o.msg.find(c.msg), std::string::npos) << o.msg;
        const size_t at = c.raw ? 0 : initialize().size();
        EXPECT_NE(o.msg.find("offset " + std::to_string(at) + ":"), std::string::npos) << o.msg;
        EXPECT_EQ(o.events.size(), c.raw ? 0u : 1u) << o;
        // The same split at every byte: same answer, never a crash.
        for (size_t k = 0; k <= log.size(); k += 3)
            ASSERT_EQ(decode(log, {k}), o) << "split at " << k;
    }
}

TEST(PmclogCorrupt, ErrorIsSticky) {
    bytes log = initialize();
    append(log, with_len(closelog(1), 12));
    parser p;
    ASSERT_EQ(p.feed(log), 0);
    struct pmclog_ev ev;
    ASSERT_EQ(pmclog_read(p.get(), &ev), 0);
    for (int i = 0; i < 3; ++i) {
        errno = 0;
        EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
        EXPECT_EQ(ev.pl_state, PMCLOG_ERROR);
        EXPECT_EQ(errno, EBADMSG);
        EXPECT_EQ(ev.pl_offset, static_cast<off_t>(initialize().size()));
    }
    // Feeding more does not revive it.
    EXPECT_EQ(p.feed(closelog(2)), 0);
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_ERROR);
}

TEST(PmclogCorrupt, BadLengthSeenBeforeTheData) {
    // A header claiming 2 MiB is refused at once, without waiting for it.
    bytes log = initialize();
    append(log, with_len(closelog(1), 2u << 20));
    parser p;
    ASSERT_EQ(p.feed(log), 0);
    struct pmclog_ev ev;
    ASSERT_EQ(pmclog_read(p.get(), &ev), 0);
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_ERROR);
}

// --- forward compatibility ------------------------------------------------

TEST(PmclogCompat, UnknownTypesAreSkipped) {
    bytes log = initialize();
    append(log, with_type(closelog(1), PMCLOG_TYPE_MAX + 1));
    {
        struct pmclog_dropnotify r {};
        append(log, with_type(record(PMCLOG_TYPE_DROPNOTIFY, r, 2, bytes(100, 0x5a)), 0xabcdef));
    }
    append(log, pmcallocate(3, 5, "TSC"));
    // The largest record: 1 MiB, of an unknown type.
    append(log, with_type(record(PMCLOG_TYPE_CLOSELOG, pmclog_closelog{}, 4,
                                 bytes((1u << 20) - sizeof(pmclog_closelog), 0)),
                          1000));
    append(log, closelog(5));
    for (const std::vector<size_t> &cuts : {std::vector<size_t>{}, std::vector<size_t>{70, 200}}) {
        const outcome o = decode(log, cuts);
        ASSERT_EQ(o.end, PMCLOG_EOF) << o;
        ASSERT_EQ(o.events.size(), 3u) << o;
        // Counted: PMCALLOCATE is the 4th record, CLOSELOG the 6th.
        EXPECT_NE(o.events[1].find("count=4 "), std::string::npos) << o.events[1];
        EXPECT_NE(o.events[1].find("name='TSC'"), std::string::npos) << o.events[1];
        EXPECT_NE(o.events[2].find("count=6 "), std::string::npos) << o.events[2];
    }
}

TEST(PmclogCompat, LaterMinorVersionAccepted) {
    bytes log = initialize(1, HWPMC_VERSION_MAKE(PMCLOG_VERSION_MAJOR, 7, 3));
    append(log, closelog(2));
    const outcome o = decode(log);
    EXPECT_EQ(o.end, PMCLOG_EOF) << o;
    EXPECT_EQ(o.events.size(), 2u);
}

TEST(PmclogCompat, LaterInitializeAndRecordsAfterCloselog) {
    // A log reconfigured onto the same file: two sessions.
    bytes log = every_type_log();
    append(log, every_type_log());
    const outcome o = decode(log);
    EXPECT_EQ(o.end, PMCLOG_EOF) << o;
    EXPECT_EQ(o.events.size(), 32u);
}

// --- API misuse -----------------------------------------------------------

TEST(PmclogApi, Misuse) {
    errno = 0;
    EXPECT_EQ(pmclog_open(-2), nullptr);
    EXPECT_EQ(errno, EBADF);
    struct pmclog_ev ev;
    errno = 0;
    EXPECT_EQ(pmclog_read(nullptr, &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_ERROR);
    EXPECT_EQ(errno, EINVAL);
    parser fed;
    EXPECT_EQ(pmclog_read(fed.get(), nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmclog_feed(nullptr, nullptr, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    char c = 0;
    EXPECT_EQ(pmclog_feed(fed.get(), &c, -1), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmclog_feed(fed.get(), nullptr, 8), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(fed.end(), 0);
    errno = 0;
    EXPECT_EQ(fed.feed(initialize()), -1); // after the end
    EXPECT_EQ(errno, EINVAL);
    EXPECT_STREQ(pmclog_errmsg(nullptr), "");
    pmclog_close(nullptr);

    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    parser byfd(fds[0]);
    errno = 0;
    EXPECT_EQ(byfd.feed(initialize()), -1); // a descriptor reader is not fed
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(byfd.end(), -1);
    close(fds[0]);
    close(fds[1]);
}

// --- descriptors ------------------------------------------------------------

bool write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        const ssize_t w = write(fd, p, n);
        if (w <= 0)
            return false;
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

TEST(PmclogFd, FileAndItsGrowth) {
    char path[] = "/tmp/pmclog-test-XXXXXX";
    const int w = mkstemp(path);
    ASSERT_GE(w, 0);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    unlink(path);
    ASSERT_GE(fd, 0);
    const bytes log = every_type_log();
    ASSERT_TRUE(write_all(w, log.data(), log.size()));
    parser p(fd);
    outcome o;
    EXPECT_FALSE(drain(p, o));
    EXPECT_EQ(o, decode(log));
    // EOF is not sticky: what is appended later is read.
    const bytes more = closelog(123);
    ASSERT_TRUE(write_all(w, more.data(), more.size()));
    struct pmclog_ev ev;
    ASSERT_EQ(pmclog_read(p.get(), &ev), 0) << pmclog_errmsg(p.get());
    EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_CLOSELOG);
    EXPECT_EQ(ev.pl_offset, static_cast<off_t>(log.size()));
    EXPECT_EQ(ev.pl_count, 17u);
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_EOF);
    close(fd);
    close(w);
}

TEST(PmclogFd, FileGrows) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const bytes log = every_type_log();
    const size_t half = initialize().size() + 30;
    parser p(fds[0]);
    ASSERT_TRUE(write_all(fds[1], log.data(), half));
    ASSERT_EQ(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
    struct pmclog_ev ev;
    ASSERT_EQ(pmclog_read(p.get(), &ev), 0);
    EXPECT_EQ(ev.pl_type, PMCLOG_TYPE_INITIALIZE);
    // Half a record and a non-blocking descriptor: try again later.
    errno = 0;
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_REQUIRE_DATA);
    EXPECT_EQ(errno, EAGAIN);
    ASSERT_TRUE(write_all(fds[1], log.data() + half, log.size() - half));
    close(fds[1]);
    size_t n = 1;
    while (pmclog_read(p.get(), &ev) == 0)
        ++n;
    EXPECT_EQ(ev.pl_state, PMCLOG_EOF);
    EXPECT_EQ(n, 16u);
    close(fds[0]);
}

TEST(PmclogFd, PipeWrittenInSmallPieces) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    bytes log = initialize();
    for (uint32_t i = 0; i < 3000; ++i)
        append(log, callchain(i, 1, i, std::vector<uint64_t>(i % 9, i)));
    append(log, closelog(1));
    std::thread writer([&] {
        for (size_t at = 0; at < log.size(); at += 777)
            write_all(fds[1], log.data() + at, std::min<size_t>(777, log.size() - at));
        close(fds[1]);
    });
    parser p(fds[0]);
    outcome o;
    drain(p, o);
    writer.join();
    close(fds[0]);
    EXPECT_EQ(o, decode(log));
    EXPECT_EQ(o.events.size(), 3002u);
}

TEST(PmclogFd, TruncatedFileIsAnError) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const bytes log = every_type_log();
    ASSERT_TRUE(write_all(fds[1], log.data(), log.size() - 4));
    close(fds[1]);
    parser p(fds[0]);
    outcome o;
    drain(p, o);
    close(fds[0]);
    EXPECT_EQ(o.end, PMCLOG_ERROR);
    EXPECT_EQ(o.err, EBADMSG);
    EXPECT_EQ(o.events.size(), 15u);
}

TEST(PmclogFd, ReadErrorIsReported) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    parser p(fds[1]); // the write end: read(2) fails with EBADF
    struct pmclog_ev ev;
    errno = 0;
    EXPECT_EQ(pmclog_read(p.get(), &ev), -1);
    EXPECT_EQ(ev.pl_state, PMCLOG_ERROR);
    EXPECT_EQ(errno, EBADF);
    EXPECT_NE(std::string(pmclog_errmsg(p.get())).find("read"), std::string::npos);
    close(fds[0]);
    close(fds[1]);
}

// --- FreeBSD pmclog(3) code, built unchanged ---------------------------------

// Run examples/pmclog_print.c on `log`: its exit status and output.
int run_pmclog_print(const bytes &log, std::string *out) {
    char dir[] = "/tmp/pmclog-print-XXXXXX";
    if (mkdtemp(dir) == nullptr)
        return -1;
    const std::string in = std::string(dir) + "/log", res = std::string(dir) + "/out";
    std::ofstream(in, std::ios::binary)
        .write(reinterpret_cast<const char *>(log.data()),
               static_cast<std::streamsize>(log.size()));
    const std::string cmd = std::string(HWPMC_PMCLOG_PRINT) + " " + in + " >" + res + " 2>&1";
    const int status = std::system(cmd.c_str());
    std::stringstream ss;
    ss << std::ifstream(res).rdbuf();
    *out = ss.str();
    std::remove(in.c_str());
    std::remove(res.c_str());
    rmdir(dir);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PmclogPrint, FreeBsdProgramReadsEveryType) {
    std::string out;
    ASSERT_EQ(run_pmclog_print(every_type_log(), &out), 0) << out;
    const char *const want[] = {
        "0.000001000 initlog 0x1030000 \"INTEL_ARCH\"\n",
        "0.000002000 allocate 0x13000001 \"SOFT-CLOCK.PROF\" 0x80\n",
        "0.000002001 attach 0x13000001 42 \"/usr/bin/true\"\n",
        "0.000002002 map-in 42 0x400000 \"/usr/lib/libc.so.6\"\n",
        "0.000002003 callchain 42 0x13000001 1 3 s 0xffffffff81000000 0x401234 0x401000\n",
        "0.000002003 unknown record type 16\n", // USERSTACK: a Linux extension

        "0.000002004 cswval 0x13000001 42 123456\n",
        "0.000002005 fork 42 44\n",
        "0.000002006 exec 0xffffffff 44 \"/bin/sh\"\n",
        "0.000002007 map-out 42 0x400000 0x401000\n",
        "0.000002008 userdata 0xfeedf00d\n",
        "0.000002009 drop\n",
        "0.000002010 exitval 0x13000001 44 999\n",
        "0.000002011 exited 45\n",
        "0.000002012 detach 0x13000001 42\n",
        "0.000002013 closelog\n",
    };
    std::string expect;
    for (const char *line : want)
        expect += line;
    EXPECT_EQ(out, expect);
}

TEST(PmclogPrint, FreeBsdProgramStopsOnACorruptLog) {
    bytes log = every_type_log();
    log.resize(log.size() - 8);
    std::string out;
    EXPECT_EQ(run_pmclog_print(log, &out), 65) << out; // EX_DATAERR
    EXPECT_NE(out.find("corrupt log: Bad message"), std::string::npos) << out;
}

// --- C++ ------------------------------------------------------------------

static_assert(std::ranges::input_range<hwpmc::log_reader>);

std::span<const std::byte> as_span(const bytes &b) {
    return std::as_bytes(std::span(b));
}

TEST(LogReader, RangeOverMemory) {
    const bytes log = every_type_log();
    hwpmc::log_reader r(as_span(log));
    std::vector<std::string> seen;
    for (const pmclog_ev &ev : r)
        seen.push_back(describe(ev));
    EXPECT_EQ(r.state(), PMCLOG_EOF);
    EXPECT_EQ(seen, decode(log).events);
    EXPECT_EQ(r.next(), nullptr);
}

TEST(LogReader, Fed) {
    const bytes log = every_type_log();
    hwpmc::log_reader r;
    size_t n = 0;
    for (size_t at = 0; at < log.size(); at += 50) {
        r.feed(as_span(log).subspan(at, std::min<size_t>(50, log.size() - at)));
        for (const pmclog_ev &ev : r) {
            EXPECT_EQ(ev.pl_count, ++n);
        }
        EXPECT_EQ(r.state(), PMCLOG_REQUIRE_DATA);
    }
    r.finish();
    EXPECT_EQ(r.next(), nullptr);
    EXPECT_EQ(r.state(), PMCLOG_EOF);
    EXPECT_EQ(n, 16u);
    EXPECT_THROW(r.feed(as_span(log)), std::system_error); // after finish()
}

TEST(LogReader, Descriptor) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const bytes log = every_type_log();
    ASSERT_TRUE(write_all(fds[1], log.data(), log.size()));
    close(fds[1]);
    hwpmc::log_reader r(fds[0]);
    size_t n = 0;
    for (const pmclog_ev &ev : r)
        n += ev.pl_type == PMCLOG_TYPE_CALLCHAIN;
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(r.state(), PMCLOG_EOF);
    close(fds[0]);
    EXPECT_THROW(hwpmc::log_reader(-1), std::system_error);
}

TEST(LogReader, ErrorsThrow) {
    bytes log = initialize();
    append(log, with_field<uint32_t>(callchain(1, 1, 1, {1}),
                                     offsetof(struct pmclog_callchain, pl_npc), 600));
    hwpmc::log_reader r(as_span(log));
    ASSERT_NE(r.next(), nullptr);
    try {
        r.next();
        FAIL() << "no exception";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code().value(), EBADMSG);
        EXPECT_NE(std::string(e.what()).find("offset 48: CALLCHAIN: 600 program counters"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(r.state(), PMCLOG_ERROR);
    EXPECT_THROW(r.next(), std::system_error); // sticky

    const bytes v2 = initialize(1, HWPMC_VERSION_MAKE(2, 0, 0));
    hwpmc::log_reader r2(as_span(v2));
    try {
        r2.next();
        FAIL() << "no exception";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code().value(), EPROTO);
    }

    const bytes trunc(log.begin(), log.begin() + 60);
    hwpmc::log_reader r3(as_span(trunc));
    ASSERT_NE(r3.next(), nullptr);
    EXPECT_THROW(r3.next(), std::system_error);
}

TEST(LogReader, Moves) {
    const bytes log = every_type_log();
    hwpmc::log_reader a(as_span(log));
    ASSERT_NE(a.next(), nullptr);
    hwpmc::log_reader b(std::move(a));
    const pmclog_ev *ev = b.next();
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->pl_type, PMCLOG_TYPE_PMCALLOCATE);
    EXPECT_THROW(a.next(), std::system_error); // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(a.state(), PMCLOG_ERROR);
}

} // namespace
