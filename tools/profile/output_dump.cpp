// SPDX-License-Identifier: GPL-2.0
// hwpmc-report --dump: every record of a log, one line each, like FreeBSD's
// `pmcstat -R FILE -o -` text mode, named as <linux/hwpmc.h> names them:
//
//   OFFSET SECONDS.NANOSECONDS TYPE FIELD=VALUE...
#include "output.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <cinttypes>
#include <system_error>

namespace hwpmc_tools {

namespace {

const char *type_name(uint32_t t) {
    static const char *names[] = {
        "?",         "INITIALIZE", "CLOSELOG", "DROPNOTIFY", "PMCALLOCATE", "PMCATTACH",
        "PMCDETACH", "PROCCSW",    "PROCEXEC", "PROCEXIT",   "PROCFORK",    "SYSEXIT",
        "USERDATA",  "MAP_IN",     "MAP_OUT",  "CALLCHAIN",  "USERSTACK",
    };
    return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

void print_record(FILE *out, const pmclog_ev &ev) {
    std::fprintf(out, "%8jd %jd.%09ld %s", static_cast<intmax_t>(ev.pl_offset),
                 static_cast<intmax_t>(ev.pl_ts.tv_sec), ev.pl_ts.tv_nsec, type_name(ev.pl_type));
    const auto &u = ev.pl_u;
    switch (ev.pl_type) {
    case PMCLOG_TYPE_INITIALIZE: {
        const char *cpu = pmc_name_of_cputype(static_cast<enum pmc_cputype>(u.pl_i.pl_arch));
        std::fprintf(out,
                     " version=0x%08x cpu=%s tsc_freq=%" PRIu64 " ncpu=%u pagesize=%u"
                     " wallclock=%jd.%09ld",
                     u.pl_i.pl_version, cpu ? cpu : "?", u.pl_i.pl_tsc_freq, u.pl_i.pl_ncpu,
                     u.pl_i.pl_pagesize, static_cast<intmax_t>(u.pl_i.pl_ts.tv_sec),
                     u.pl_i.pl_ts.tv_nsec);
        break;
    }
    case PMCLOG_TYPE_CLOSELOG:
        break;
    case PMCLOG_TYPE_DROPNOTIFY:
        std::fprintf(out, " samples=%" PRIu64 " records=%" PRIu64 " throttled=%" PRIu64,
                     u.pl_dn.pl_samples, u.pl_dn.pl_records, u.pl_dn.pl_throttled);
        break;
    case PMCLOG_TYPE_PMCALLOCATE: {
        const char *mode = pmc_name_of_mode(static_cast<enum pmc_mode>(u.pl_a.pl_mode));
        std::fprintf(out, " pmcid=0x%x event=\"%s\" mode=%s flags=0x%x rate=%" PRIu64,
                     u.pl_a.pl_pmcid, u.pl_a.pl_evname ? u.pl_a.pl_evname : "", mode ? mode : "?",
                     u.pl_a.pl_flags, u.pl_a.pl_rate);
        if (u.pl_a.pl_cpu != static_cast<uint32_t>(PMC_CPU_ANY))
            std::fprintf(out, " cpu=%u", u.pl_a.pl_cpu);
        break;
    }
    case PMCLOG_TYPE_PMCATTACH:
        std::fprintf(out, " pmcid=0x%x pid=%d path=\"%s\"", u.pl_t.pl_pmcid,
                     static_cast<int>(u.pl_t.pl_pid), u.pl_t.pl_pathname);
        break;
    case PMCLOG_TYPE_PMCDETACH:
        std::fprintf(out, " pmcid=0x%x pid=%d", u.pl_d.pl_pmcid, static_cast<int>(u.pl_d.pl_pid));
        break;
    case PMCLOG_TYPE_PROCCSW:
        std::fprintf(out, " pmcid=0x%x pid=%d tid=%d cpu=%u value=%" PRIu64, u.pl_c.pl_pmcid,
                     static_cast<int>(u.pl_c.pl_pid), static_cast<int>(u.pl_c.pl_tid),
                     u.pl_c.pl_cpu, static_cast<uint64_t>(u.pl_c.pl_value));
        break;
    case PMCLOG_TYPE_PROCEXEC:
        std::fprintf(out, " pid=%d pmcid=0x%x base=0x%" PRIx64 " path=\"%s\"",
                     static_cast<int>(u.pl_x.pl_pid), u.pl_x.pl_pmcid, u.pl_x.pl_baseaddr,
                     u.pl_x.pl_pathname);
        break;
    case PMCLOG_TYPE_PROCEXIT:
        std::fprintf(out, " pmcid=0x%x pid=%u value=%" PRIu64, u.pl_e.pl_pmcid, u.pl_e.pl_pid,
                     static_cast<uint64_t>(u.pl_e.pl_value));
        break;
    case PMCLOG_TYPE_PROCFORK:
        std::fprintf(out, " ppid=%d pid=%d", static_cast<int>(u.pl_f.pl_oldpid),
                     static_cast<int>(u.pl_f.pl_newpid));
        break;
    case PMCLOG_TYPE_SYSEXIT:
        std::fprintf(out, " pid=%d", static_cast<int>(u.pl_se.pl_pid));
        break;
    case PMCLOG_TYPE_USERDATA:
        std::fprintf(out, " pid=%d userdata=0x%x", static_cast<int>(u.pl_u.pl_pid),
                     u.pl_u.pl_userdata);
        break;
    case PMCLOG_TYPE_MAP_IN:
        std::fprintf(
            out, " pid=%d start=0x%" PRIx64 " end=0x%" PRIx64 " pgoff=0x%" PRIx64 " path=\"%s\"",
            static_cast<int>(u.pl_mi.pl_pid), u.pl_mi.pl_start, u.pl_mi.pl_end, u.pl_mi.pl_pgoff,
            u.pl_mi.pl_pathname);
        break;
    case PMCLOG_TYPE_MAP_OUT:
        std::fprintf(out, " pid=%d start=0x%" PRIx64 " end=0x%" PRIx64,
                     static_cast<int>(u.pl_mo.pl_pid), u.pl_mo.pl_start, u.pl_mo.pl_end);
        break;
    case PMCLOG_TYPE_CALLCHAIN: {
        const auto &c = u.pl_cc;
        std::fprintf(out, " pid=%u tid=%u pmcid=0x%x cpu=%u mode=%c flags=0x%x nkernel=%u npc=%u",
                     c.pl_pid, c.pl_tid, c.pl_pmcid, c.pl_cpu,
                     c.pl_cpumode == PMCLOG_CPUMODE_USER ? 'u' : 's', c.pl_flags, c.pl_nkernel,
                     c.pl_npc);
        if (c.pl_flags & PMCLOG_CC_F_KERNEL_HIDDEN)
            std::fprintf(out, " [kernel hidden]");
        for (uint32_t i = 0; i < c.pl_npc; i++)
            std::fprintf(out, " 0x%" PRIx64, c.pl_pc[i]);
        break;
    }
    case PMCLOG_TYPE_USERSTACK: {
        const auto &us = u.pl_us;
        std::fprintf(out, " pid=%u tid=%u pmcid=0x%x flags=0x%x size=%u copied=%u", us.pl_pid,
                     us.pl_tid, us.pl_pmcid, us.pl_flags, us.pl_size, us.pl_copied);
        if (us.pl_flags & PMCLOG_US_F_REGS)
            std::fprintf(out, " rip=0x%" PRIx64 " rsp=0x%" PRIx64 " rbp=0x%" PRIx64,
                         us.pl_regs[PMCLOG_US_REG_RIP], us.pl_regs[PMCLOG_US_REG_RSP],
                         us.pl_regs[PMCLOG_US_REG_RBP]);
        break;
    }
    default:
        break;
    }
    std::fprintf(out, "\n");
}

} // namespace

int dump_log(FILE *out, int fd, const char *prog, const std::string &name) {
    try {
        hwpmc::log_reader r(fd);
        for (const pmclog_ev &ev : r)
            print_record(out, ev);
        if (r.state() != PMCLOG_EOF) {
            std::fprintf(stderr, "%s: %s: the log ends inside a record\n", prog, name.c_str());
            return 1;
        }
    } catch (const std::system_error &e) {
        std::fflush(out);
        std::fprintf(stderr, "%s: %s: %s\n", prog, name.c_str(), e.what());
        return 1;
    }
    return 0;
}

} // namespace hwpmc_tools
