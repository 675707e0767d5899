// SPDX-License-Identifier: BSD-2-Clause
// Tests: hwpmc log images built from the ABI header's record structures,
// and a textual rendering of struct pmclog_ev for comparing decodings.
#pragma once

#include <hwpmc/pmclog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hwpmc::test {

using bytes = std::vector<unsigned char>;

inline uint32_t align8(size_t n) {
    return static_cast<uint32_t>((n + 7) & ~size_t{7});
}

// A record: the fixed part `r` (its header is filled here: type, time and a
// length covering the fixed part, `tail` and the padding to 8 bytes), then
// `tail`.  len_override != 0 writes that length instead (corrupt records);
// the bytes are still those of the well-formed record.
template <class T>
bytes record(uint32_t type, T r, uint64_t time, const bytes &tail = {}, uint32_t len_override = 0) {
    const uint32_t len = align8(sizeof(T) + tail.size());
    auto *h = reinterpret_cast<struct pmclog_header *>(&r);
    h->pl_type = type;
    h->pl_len = len_override != 0 ? len_override : len;
    h->pl_time = time;
    const auto *fixed = reinterpret_cast<const unsigned char *>(&r);
    bytes out(fixed, fixed + sizeof(T));
    out.insert(out.end(), tail.begin(), tail.end());
    out.resize(len, 0);
    return out;
}

// A NUL-terminated string as a record tail.
inline bytes cstr(std::string_view s) {
    bytes b(s.begin(), s.end());
    b.push_back(0);
    return b;
}

inline bytes pcs(const std::vector<uint64_t> &pc) {
    bytes b(pc.size() * sizeof(uint64_t));
    if (!pc.empty())
        std::memcpy(b.data(), pc.data(), b.size());
    return b;
}

inline bytes initialize(uint64_t time = 1000, uint32_t version = PMCLOG_VERSION) {
    struct pmclog_initialize r {};
    r.pl_version = version;
    r.pl_cputype = PMC_CPU_INTEL_ARCH;
    r.pl_tsc_freq = 2400000000u;
    r.pl_wallclock = 1700000000123456789u;
    r.pl_ncpu = 4;
    r.pl_pagesize = 4096;
    return record(PMCLOG_TYPE_INITIALIZE, r, time);
}

inline bytes closelog(uint64_t time) {
    return record(PMCLOG_TYPE_CLOSELOG, pmclog_closelog{}, time);
}

inline bytes pmcallocate(uint64_t time, uint32_t pmcid, const char *name) {
    struct pmclog_pmcallocate r {};
    r.pl_pmcid = pmcid;
    r.pl_class = PMC_CLASS_SOFT;
    r.pl_event = 1;
    r.pl_mode = PMC_MODE_TS;
    r.pl_flags = PMC_F_CALLCHAIN;
    r.pl_cpu = PMC_CPU_ANY;
    r.pl_rate = 1000000;
    std::snprintf(r.pl_name, sizeof(r.pl_name), "%s", name);
    return record(PMCLOG_TYPE_PMCALLOCATE, r, time);
}

inline bytes callchain(uint64_t time, uint32_t pmcid, uint32_t pid, const std::vector<uint64_t> &pc,
                       uint32_t nkernel = 0, uint32_t flags = PMCLOG_CC_F_USER, uint32_t cpu = 1) {
    struct pmclog_callchain r {};
    r.pl_pid = pid;
    r.pl_tid = pid + 1;
    r.pl_pmcid = pmcid;
    r.pl_cpu = cpu;
    r.pl_flags = flags;
    r.pl_nkernel = nkernel;
    r.pl_npc = static_cast<uint32_t>(pc.size());
    return record(PMCLOG_TYPE_CALLCHAIN, r, time, pcs(pc));
}

// A USERSTACK record: rip, rsp and rbp set (the rest of the registers 0
// unless `regs`), `stack` copied of `size` asked for.
inline bytes userstack(uint64_t time, uint32_t pmcid, uint32_t pid, const bytes &stack,
                       uint32_t size, uint64_t rip = 0x401234, uint64_t rsp = 0x7ffc0000f000,
                       uint32_t flags = PMCLOG_US_F_REGS) {
    struct pmclog_userstack r {};
    r.pl_pid = pid;
    r.pl_tid = pid + 1;
    r.pl_pmcid = pmcid;
    r.pl_flags = flags | (stack.size() < size ? PMCLOG_US_F_SHORT : 0u);
    r.pl_size = size;
    r.pl_copied = static_cast<uint32_t>(stack.size());
    if (flags & PMCLOG_US_F_REGS) {
        r.pl_regs[PMCLOG_US_REG_RIP] = rip;
        r.pl_regs[PMCLOG_US_REG_RSP] = rsp;
        r.pl_regs[PMCLOG_US_REG_RBP] = rsp + 0x40;
    }
    return record(PMCLOG_TYPE_USERSTACK, r, time, stack);
}

inline void append(bytes &log, const bytes &rec) {
    log.insert(log.end(), rec.begin(), rec.end());
}

// A log with one record of every type.
inline bytes every_type_log() {
    bytes log = initialize(1000);
    uint64_t t = 2000;
    append(log, pmcallocate(t++, 0x13000001, "SOFT-CLOCK.PROF"));
    {
        struct pmclog_pmcattach r {};
        r.pl_pmcid = 0x13000001;
        r.pl_pid = 42;
        append(log, record(PMCLOG_TYPE_PMCATTACH, r, t++, cstr("/usr/bin/true")));
    }
    {
        struct pmclog_map_in r {};
        r.pl_pid = 42;
        r.pl_start = 0x400000;
        r.pl_end = 0x401000;
        r.pl_pgoff = 0x1000;
        append(log, record(PMCLOG_TYPE_MAP_IN, r, t++, cstr("/usr/lib/libc.so.6")));
    }
    append(log, callchain(t, 0x13000001, 42, {0xffffffff81000000, 0x401234, 0x401000}, 1, 0));
    append(log, userstack(t++, 0x13000001, 42, bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 64));
    {
        struct pmclog_proccsw r {};
        r.pl_pmcid = 0x13000001;
        r.pl_pid = 42;
        r.pl_tid = 43;
        r.pl_cpu = 3;
        r.pl_value = 123456;
        append(log, record(PMCLOG_TYPE_PROCCSW, r, t++));
    }
    {
        struct pmclog_procfork r {};
        r.pl_ppid = 42;
        r.pl_pid = 44;
        append(log, record(PMCLOG_TYPE_PROCFORK, r, t++));
    }
    {
        struct pmclog_procexec r {};
        r.pl_pid = 44;
        r.pl_pmcid = PMC_ID_INVALID;
        r.pl_base = 0x555555554000;
        append(log, record(PMCLOG_TYPE_PROCEXEC, r, t++, cstr("/bin/sh")));
    }
    {
        struct pmclog_map_out r {};
        r.pl_pid = 42;
        r.pl_start = 0x400000;
        r.pl_end = 0x401000;
        append(log, record(PMCLOG_TYPE_MAP_OUT, r, t++));
    }
    {
        struct pmclog_userdata r {};
        r.pl_userdata = 0xfeedf00d;
        r.pl_pid = 42;
        append(log, record(PMCLOG_TYPE_USERDATA, r, t++));
    }
    {
        struct pmclog_dropnotify r {};
        r.pl_samples = 7;
        r.pl_records = 2;
        append(log, record(PMCLOG_TYPE_DROPNOTIFY, r, t++));
    }
    {
        struct pmclog_procexit r {};
        r.pl_pmcid = 0x13000001;
        r.pl_pid = 44;
        r.pl_value = 999;
        append(log, record(PMCLOG_TYPE_PROCEXIT, r, t++));
    }
    {
        struct pmclog_sysexit r {};
        r.pl_pid = 45;
        append(log, record(PMCLOG_TYPE_SYSEXIT, r, t++));
    }
    {
        struct pmclog_pmcdetach r {};
        r.pl_pmcid = 0x13000001;
        r.pl_pid = 42;
        append(log, record(PMCLOG_TYPE_PMCDETACH, r, t++));
    }
    append(log, closelog(t++));
    return log;
}

// Every field of an event, as text (for comparing two decodings).
inline std::string describe(const struct pmclog_ev &ev) {
    char b[512];
    std::string s;
    std::snprintf(b, sizeof(b), "state=%d off=%lld count=%zu ts=%lld.%09ld type=%u len=%d",
                  static_cast<int>(ev.pl_state), static_cast<long long>(ev.pl_offset), ev.pl_count,
                  static_cast<long long>(ev.pl_ts.tv_sec), ev.pl_ts.tv_nsec,
                  static_cast<unsigned>(ev.pl_type), ev.pl_len);
    s = b;
    if (ev.pl_state != PMCLOG_OK)
        return s;
    const auto &u = ev.pl_u;
    switch (ev.pl_type) {
    case PMCLOG_TYPE_INITIALIZE:
        std::snprintf(
            b, sizeof(b), " v=%#x arch=%u tsc=%llu wall=%lld.%09ld cpuid='%s' ncpu=%u ps=%u",
            u.pl_i.pl_version, u.pl_i.pl_arch, static_cast<unsigned long long>(u.pl_i.pl_tsc_freq),
            static_cast<long long>(u.pl_i.pl_ts.tv_sec), u.pl_i.pl_ts.tv_nsec, u.pl_i.pl_cpuid,
            u.pl_i.pl_ncpu, u.pl_i.pl_pagesize);
        break;
    case PMCLOG_TYPE_CLOSELOG:
        b[0] = 0;
        break;
    case PMCLOG_TYPE_DROPNOTIFY:
        std::snprintf(b, sizeof(b), " samples=%llu records=%llu",
                      static_cast<unsigned long long>(u.pl_dn.pl_samples),
                      static_cast<unsigned long long>(u.pl_dn.pl_records));
        break;
    case PMCLOG_TYPE_PMCALLOCATE:
        std::snprintf(b, sizeof(b),
                      " pmcid=%#x ev=%#x flags=%#x rate=%llu class=%u mode=%u cpu=%u name='%s'",
                      u.pl_a.pl_pmcid, u.pl_a.pl_event, u.pl_a.pl_flags,
                      static_cast<unsigned long long>(u.pl_a.pl_rate), u.pl_a.pl_class,
                      u.pl_a.pl_mode, u.pl_a.pl_cpu, u.pl_a.pl_evname);
        break;
    case PMCLOG_TYPE_PMCATTACH:
        std::snprintf(b, sizeof(b), " pmcid=%#x pid=%d path='%.300s'", u.pl_t.pl_pmcid,
                      u.pl_t.pl_pid, u.pl_t.pl_pathname);
        break;
    case PMCLOG_TYPE_PMCDETACH:
        std::snprintf(b, sizeof(b), " pmcid=%#x pid=%d", u.pl_d.pl_pmcid, u.pl_d.pl_pid);
        break;
    case PMCLOG_TYPE_PROCCSW:
        std::snprintf(b, sizeof(b), " pmcid=%#x pid=%d tid=%d cpu=%u value=%llu", u.pl_c.pl_pmcid,
                      u.pl_c.pl_pid, u.pl_c.pl_tid, u.pl_c.pl_cpu,
                      static_cast<unsigned long long>(u.pl_c.pl_value));
        break;
    case PMCLOG_TYPE_PROCEXEC:
        std::snprintf(b, sizeof(b), " pid=%d pmcid=%#x base=%#llx path='%.300s'", u.pl_x.pl_pid,
                      u.pl_x.pl_pmcid, static_cast<unsigned long long>(u.pl_x.pl_baseaddr),
                      u.pl_x.pl_pathname);
        break;
    case PMCLOG_TYPE_PROCEXIT:
        std::snprintf(b, sizeof(b), " pid=%u pmcid=%#x value=%llu", u.pl_e.pl_pid, u.pl_e.pl_pmcid,
                      static_cast<unsigned long long>(u.pl_e.pl_value));
        break;
    case PMCLOG_TYPE_PROCFORK:
        std::snprintf(b, sizeof(b), " old=%d new=%d", u.pl_f.pl_oldpid, u.pl_f.pl_newpid);
        break;
    case PMCLOG_TYPE_SYSEXIT:
        std::snprintf(b, sizeof(b), " pid=%d", u.pl_se.pl_pid);
        break;
    case PMCLOG_TYPE_USERDATA:
        std::snprintf(b, sizeof(b), " data=%#x pid=%d", u.pl_u.pl_userdata, u.pl_u.pl_pid);
        break;
    case PMCLOG_TYPE_MAP_IN:
        std::snprintf(b, sizeof(b), " pid=%d start=%#llx end=%#llx pgoff=%#llx path='%.300s'",
                      u.pl_mi.pl_pid, static_cast<unsigned long long>(u.pl_mi.pl_start),
                      static_cast<unsigned long long>(u.pl_mi.pl_end),
                      static_cast<unsigned long long>(u.pl_mi.pl_pgoff), u.pl_mi.pl_pathname);
        break;
    case PMCLOG_TYPE_MAP_OUT:
        std::snprintf(b, sizeof(b), " pid=%d start=%#llx end=%#llx", u.pl_mo.pl_pid,
                      static_cast<unsigned long long>(u.pl_mo.pl_start),
                      static_cast<unsigned long long>(u.pl_mo.pl_end));
        break;
    case PMCLOG_TYPE_CALLCHAIN: {
        const auto &cc = u.pl_cc;
        std::snprintf(
            b, sizeof(b),
            " pid=%u tid=%u pmcid=%#x cpuflags=%#x/%#x cpu=%u mode=%u nk=%u fl=%#x npc=%u",
            cc.pl_pid, cc.pl_tid, cc.pl_pmcid, cc.pl_cpuflags, cc.pl_cpuflags2, cc.pl_cpu,
            cc.pl_cpumode, cc.pl_nkernel, cc.pl_flags, cc.pl_npc);
        s += b;
        for (uint32_t i = 0; i < cc.pl_npc && i < PMC_CALLCHAIN_DEPTH_MAX; ++i) {
            std::snprintf(b, sizeof(b), " %#llx", static_cast<unsigned long long>(cc.pl_pc[i]));
            s += b;
        }
        b[0] = 0;
        break;
    }
    case PMCLOG_TYPE_USERSTACK: {
        const auto &us = u.pl_us;
        std::snprintf(b, sizeof(b), " pid=%u tid=%u pmcid=%#x fl=%#x size=%u copied=%u regs",
                      us.pl_pid, us.pl_tid, us.pl_pmcid, us.pl_flags, us.pl_size, us.pl_copied);
        s += b;
        for (uint64_t r : us.pl_regs) {
            std::snprintf(b, sizeof(b), " %#llx", static_cast<unsigned long long>(r));
            s += b;
        }
        s += " stack";
        for (uint32_t i = 0; i < us.pl_copied; ++i) {
            std::snprintf(b, sizeof(b), " %02x", us.pl_stack[i]);
            s += b;
        }
        b[0] = 0;
        break;
    }
    default:
        std::snprintf(b, sizeof(b), " ?");
        break;
    }
    s += b;
    return s;
}

} // namespace hwpmc::test
