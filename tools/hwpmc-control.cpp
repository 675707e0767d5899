// SPDX-License-Identifier: GPL-2.0
// hwpmc-control: FreeBSD pmccontrol(8) for hwpmc on Linux.  Lists classes
// and events, shows row dispositions per CPU, prints driver statistics,
// and enables or disables rows.
#include "lib/common.hpp"
#include "lib/numbers.hpp"

#include <hwpmc/pmc.h>

#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char *prog = "hwpmc-control";

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: %s [-L] [-l] [-s] [-c CPU] [-e ROW|*] [-d ROW|*]\n"
                 "\n"
                 "FreeBSD pmccontrol(8) for hwpmc on Linux.\n"
                 "\n"
                 "  -L           list the PMC classes of this machine and their events\n"
                 "  -l           list every row of every online CPU: its disposition\n"
                 "               (FREE, THREAD, STANDALONE), state (UNAVAILABLE: held\n"
                 "               by perf), mode, owner and event\n"
                 "  -s           print the driver's statistics\n"
                 "  -c CPU       apply the following -e/-d to CPU only (default: all)\n"
                 "  -e ROW       enable row ROW ('*': every row) (needs root)\n"
                 "  -d ROW       disable row ROW ('*': every row) (needs root)\n"
                 "  -V, --version  print the module's and this tool's versions\n"
                 "  -h, --help   show this help\n"
                 "\n"
                 "With no option, -l.  Options run in the order given.\n",
                 prog);
}

std::string caps_string(uint32_t caps) {
    std::string s;
    for (uint32_t bit = 1; bit && bit <= caps; bit <<= 1) {
        if (!(caps & bit))
            continue;
        const char *n = pmc_name_of_capability(static_cast<enum pmc_caps>(bit));
        if (!s.empty())
            s += ',';
        s += n ? n : "?";
    }
    return s;
}

int list_classes() {
    const struct pmc_cpuinfo *ci;
    if (pmc_cpuinfo(&ci) < 0) {
        hwpmc_tools::explain(prog, "GETCPUINFO", errno);
        return 1;
    }
    std::printf("CPU type %s, %u CPUs, %u rows per CPU\n", pmc_name_of_cputype(ci->pm_cputype),
                ci->pm_ncpu, ci->pm_npmc);
    for (uint32_t i = 0; i < ci->pm_nclass; i++) {
        const struct pmc_classinfo &c = ci->pm_classes[i];
        auto cls = static_cast<enum pmc_class>(c.pm_class);
        std::printf("\n%s: %u row%s, %u-bit, capabilities %s\n", pmc_name_of_class(cls), c.pm_num,
                    c.pm_num == 1 ? "" : "s", c.pm_width, caps_string(c.pm_caps).c_str());
        const char **names = nullptr;
        int n = 0;
        if (pmc_event_names_of_class(cls, &names, &n) == 0) {
            for (int e = 0; e < n; e++)
                std::printf("    %s\n", names[e]);
            std::free(names);
        }
    }
    return 0;
}

int list_rows() {
    int ncpu = pmc_ncpu();
    for (int cpu = 0; cpu < ncpu; cpu++) {
        struct pmc_pmcinfo *pi = nullptr;
        if (pmc_pmcinfo(cpu, &pi) < 0) {
            if (errno == ENXIO) {
                std::printf("CPU %d: offline\n\n", cpu);
                continue;
            }
            hwpmc_tools::explain(prog, "GETPMCINFO", errno);
            return 1;
        }
        std::printf("CPU %d\n  %-4s %-10s %-6s %-8s %-11s %-11s %-16s %-8s %s\n", cpu, "ROW",
                    "NAME", "CLASS", "ENABLED", "DISP", "STATE", "MODE", "OWNER", "EVENT");
        for (uint32_t r = 0; r < pi->pm_npmc; r++) {
            const struct pmc_info &p = pi->pm_pmcs[r];
            const auto cls = static_cast<enum pmc_class>(p.pm_class);
            const bool allocated = p.pm_mode <= PMC_MODE_MAX;
            const char *mode =
                allocated ? pmc_name_of_mode(static_cast<enum pmc_mode>(p.pm_mode)) : "-";
            std::string owner = p.pm_ownerpid < 0 ? "-" : std::to_string(p.pm_ownerpid);
            // A row another PMU user (perf) holds: hwpmc cannot allocate
            // it now (EBUSY), whatever its own state says.
            const char *state = p.pm_unavailable
                                    ? "UNAVAILABLE"
                                    : pmc_name_of_state(static_cast<enum pmc_state>(p.pm_state));
            std::string event = "-";
            if (allocated) {
                // pm_event is the global event number (libhwpmc gives it so
                // whatever the module's version), as on FreeBSD.
                const char *n = pmc_name_of_event(static_cast<enum pmc_event>(p.pm_event));
                char code[32];
                std::snprintf(code, sizeof(code), "event=%#x", PMC_EV_CODE(p.pm_event));
                event = n ? n : code;
            }
            if (p.pm_unavailable)
                event += " (held by perf)";
            std::printf("  %-4u %-10s %-6s %-8s %-11s %-11s %-16s %-8s %s\n", r, p.pm_name,
                        pmc_name_of_class(cls), p.pm_enabled ? "yes" : "NO",
                        pmc_name_of_disposition(static_cast<enum pmc_disp>(p.pm_rowdisp)), state,
                        mode, owner.c_str(), event.c_str());
        }
        std::printf("\n");
        std::free(pi);
    }
    return 0;
}

int print_stats() {
    struct pmc_driverstats s;
    if (pmc_get_driver_stats(&s) < 0) {
        hwpmc_tools::explain(prog, "GETDRIVERSTATS", errno);
        return 1;
    }
    using hwpmc_tools::thousands;
    struct {
        const char *name;
        uint64_t v;
    } rows[] = {
        {"interrupts processed", s.pm_intr_processed},
        {"interrupts ignored (not ours)", s.pm_intr_ignored},
        {"samples dropped: ring full", s.pm_intr_bufferfull},
        {"samples taken", s.pm_samples_taken},
        {"samples dropped", s.pm_samples_dropped},
        {"samples throttled", s.pm_samples_throttled},
        {"operations", s.pm_syscalls},
        {"operations failed", s.pm_syscall_errors},
        {"log buffers requested", s.pm_buffer_requests},
        {"log buffer requests failed", s.pm_buffer_requests_failed},
        {"sample ring drains", s.pm_log_sweeps},
        {"log bytes written", s.pm_log_bytes},
        {"atomic allocations failed", s.pm_alloc_failed},
    };
    for (auto &r : rows)
        std::printf("%-32s %15s\n", r.name, thousands(r.v).c_str());
    return 0;
}

// -e / -d: one row or '*' on one CPU or all.
int admin(bool enable, const char *rowarg, int cpu) {
    std::vector<int> cpus, rows;
    int ncpu = pmc_ncpu();
    if (cpu >= 0)
        cpus.push_back(cpu);
    else
        for (int c = 0; c < ncpu; c++)
            cpus.push_back(c);
    if (!std::strcmp(rowarg, "*")) {
        int n = pmc_npmc(cpus.front());
        for (int r = 0; r < n; r++)
            rows.push_back(r);
    } else {
        auto r = hwpmc_tools::to_whole(rowarg, 10);
        if (!r || *r > INT_MAX) {
            std::fprintf(stderr, "%s: '%s' is not a row number (see -l) or '*'\n", prog, rowarg);
            return 2;
        }
        rows.push_back(static_cast<int>(*r));
    }
    int rc = 0;
    for (int c : cpus) {
        for (int r : rows) {
            int err = enable ? pmc_enable(c, r) : pmc_disable(c, r);
            if (err < 0) {
                if (errno == ENXIO && cpu < 0)
                    continue; // offline CPU while doing all
                std::string what = std::string(enable ? "enable" : "disable") + " row " +
                                   std::to_string(r) + " on CPU " + std::to_string(c);
                hwpmc_tools::explain(prog, what.c_str(), errno);
                rc = 1;
            }
        }
    }
    return rc;
}

} // namespace

int main(int argc, char **argv) {
    static const struct option longopts[] = {
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    struct action {
        int op;
        std::string arg;
        int cpu;
    };
    std::vector<action> actions;
    int cpu = -1, opt;
    while ((opt = getopt_long(argc, argv, "Llsc:e:d:hV", longopts, nullptr)) != -1) {
        switch (opt) {
        case 'c': {
            auto c = hwpmc_tools::to_whole(optarg, 10);
            if (!c || *c > INT_MAX) {
                std::fprintf(stderr, "%s: -c wants a CPU number, not '%s'\n", prog, optarg);
                return 2;
            }
            cpu = static_cast<int>(*c);
            break;
        }
        case 'L':
        case 'l':
        case 's':
        case 'V':
            actions.push_back({opt, "", cpu});
            break;
        case 'e':
        case 'd':
            actions.push_back({opt, optarg, cpu});
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        std::fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        usage(stderr);
        return 2;
    }
    if (actions.empty())
        actions.push_back({'l', "", -1});
    if (!hwpmc_tools::init_or_explain(prog))
        return 1;
    int rc = 0;
    for (auto &a : actions) {
        switch (a.op) {
        case 'L':
            rc |= list_classes();
            break;
        case 'l':
            rc |= list_rows();
            break;
        case 's':
            rc |= print_stats();
            break;
        case 'V':
            std::printf("hwpmc module %s; this tool speaks ABI %d.%d\n",
                        hwpmc_tools::module_version().c_str(), HWPMC_VERSION_MAJOR,
                        HWPMC_VERSION_MINOR);
            break;
        case 'e':
        case 'd':
            rc |= admin(a.op == 'e', a.arg.c_str(), a.cpu);
            break;
        }
    }
    return rc;
}
