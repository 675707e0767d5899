// SPDX-License-Identifier: GPL-2.0
#include "sampling.hpp"

#include "common.hpp"

#include <hwpmc/pmc.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hwpmc_tools {

namespace {

std::string upper(std::string s) {
    for (auto &c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// The event name of a specifier, upper case, without SOFT- and qualifiers.
std::string head_of(const std::string &spec) {
    std::string h = upper(spec.substr(0, spec.find(',')));
    if (h.rfind("SOFT-", 0) == 0)
        h = h.substr(5);
    return h;
}

bool is_soft(hwpmc::device &dev, const std::string &spec) {
    if (upper(spec).rfind("SOFT-", 0) == 0)
        return true;
    std::string h = head_of(spec);
    for (const auto &e : dev.soft_events())
        if (upper(e.name) == h)
            return true;
    return false;
}

} // namespace

std::string hz_text(uint64_t period_ns) {
    double hz = 1e9 / static_cast<double>(period_ns);
    char buf[32];
    if (hz >= 1 && std::fabs(hz - std::round(hz)) < 0.005)
        return thousands(static_cast<uint64_t>(std::round(hz)));
    std::snprintf(buf, sizeof(buf), "%.3g", hz);
    return buf;
}

bool is_clock_prof(const std::string &spec) {
    return head_of(spec) == "CLOCK.PROF";
}

bool period_of(hwpmc::device &dev, const sampling_options &o, const std::string &spec,
               uint64_t *period, std::string *why) {
    if (o.period) {
        *period = o.period;
        return true;
    }
    if (is_clock_prof(spec)) {
        double hz = o.freq > 0 ? o.freq : default_sampling_hz;
        double p = std::round(1e9 / hz);
        *period = p < 1 ? 1 : static_cast<uint64_t>(p);
        return true;
    }
    if (o.freq > 0) {
        *why = "-F HZ converts to a period only for CLOCK.PROF (CPU time); give '" + spec +
               "' a period with -c PERIOD";
        return false;
    }
    *period = is_soft(dev, spec) ? 1 : 1000000;
    return true;
}

std::string rate_text(const std::string &spec, uint64_t period) {
    char buf[128];
    if (is_clock_prof(spec))
        std::snprintf(buf, sizeof(buf), "every %s ns of CPU time (%s Hz)",
                      thousands(period).c_str(), hz_text(period).c_str());
    else
        std::snprintf(buf, sizeof(buf), "every %s event%s", thousands(period).c_str(),
                      period == 1 ? "" : "s");
    return buf;
}

void report_error(const char *prog, const char *what, const std::system_error &e) {
    if (dynamic_cast<const hwpmc::spec_error *>(&e)) {
        std::fprintf(stderr, "%s: %s\n", prog, e.what());
        return;
    }
    explain(prog, what, e.code().value());
}

std::vector<struct option> sampling_longopts(std::initializer_list<struct option> more) {
    std::vector<struct option> v = {
        {"event", required_argument, nullptr, 'e'},
        {"freq", required_argument, nullptr, 'F'},
        {"count", required_argument, nullptr, 'c'},
        {"call-graph", no_argument, nullptr, 'g'},
        {"all-cpus", no_argument, nullptr, 'a'},
        {"cpu", required_argument, nullptr, 'C'},
        {"pid", required_argument, nullptr, 'p'},
        {"no-inherit", no_argument, nullptr, opt_no_inherit},
    };
    v.insert(v.end(), more);
    v.push_back({nullptr, 0, nullptr, 0});
    return v;
}

bool sampling_option(const char *prog, int opt, const char *arg, sampling_options *o) {
    switch (opt) {
    case 'e':
        if (!*arg)
            usage_error(prog, "-e wants an event specifier");
        o->events.push_back(arg);
        break;
    case 'F':
        o->freq = parse_positive(prog, arg, "-F");
        break;
    case 'c':
        o->period = parse_count(prog, arg, "-c");
        break;
    case 'g':
        o->callchain = true;
        break;
    case 'a':
        o->system_wide = true;
        break;
    case 'C':
        if (!parse_cpu_list(arg, &o->cpus))
            usage_error(prog, std::string("-C wants a CPU list like 0,2-3, not '") + arg + "'");
        break;
    case 'p':
        if (!parse_pid_list(arg, &o->pids))
            usage_error(prog, std::string("-p wants process ids, not '") + arg + "'");
        break;
    case opt_no_inherit:
        o->inherit = false;
        break;
    default:
        return false;
    }
    if (o->freq > 0 && o->period)
        usage_error(prog, "-F and -c exclude each other");
    return true;
}

bool allocate_samplers(const char *prog, hwpmc::device &dev, const sampling_options &o,
                       std::vector<sampler> *out) {
    uint32_t flags = 0;
    if (o.callchain)
        flags |= PMC_F_CALLCHAIN;
    if (!o.system_wide && o.inherit)
        flags |= PMC_F_DESCENDANTS;
    for (const auto &spec : o.events) {
        uint64_t period = 0;
        std::string why;
        if (!period_of(dev, o, spec, &period, &why)) {
            std::fprintf(stderr, "%s: %s\n", prog, why.c_str());
            return false;
        }
        std::vector<int> cpus = o.system_wide ? o.cpus : std::vector<int>{-1};
        for (int cpu : cpus) {
            try {
                hwpmc::pmc p = dev.allocate(spec, o.system_wide ? PMC_MODE_SS : PMC_MODE_TS, flags,
                                            cpu, period);
                out->push_back({spec, period, cpu, std::move(p)});
            } catch (const std::system_error &e) {
                std::string what = "cannot sample '" + spec + "'";
                if (cpu >= 0)
                    what += " on CPU " + std::to_string(cpu);
                if (e.code().value() == EPERM && o.system_wide) {
                    std::fprintf(
                        stderr,
                        "%s: %s: %s\n"
                        "  System-wide sampling (-a) needs root, or CAP_PERFMON (the\n"
                        "  sysctl kernel.hwpmc.unprivileged_syspmcs only opens counting).\n"
                        "  Without privilege, sample your own command or processes.\n",
                        prog, what.c_str(), std::strerror(EPERM));
                    return false;
                }
                report_error(prog, what.c_str(), e);
                if (e.code().value() == EINVAL && !dynamic_cast<const hwpmc::spec_error *>(&e))
                    std::fprintf(stderr,
                                 "  The event may not support sampling, or the period %s is out "
                                 "of its range\n"
                                 "  (without CAP_PERFMON, a hardware event's period must be at "
                                 "least\n"
                                 "  'sysctl kernel.hwpmc.min_hw_period').\n",
                                 thousands(period).c_str());
                return false;
            }
        }
    }
    return true;
}

bool attach_samplers(const char *prog, std::vector<sampler> &s, pid_t pid) {
    for (auto &x : s) {
        try {
            x.pmc.attach(pid);
        } catch (const std::system_error &e) {
            std::string what = "cannot attach to process " + std::to_string(pid);
            if (e.code().value() == EPERM) {
                std::fprintf(
                    stderr,
                    "%s: %s: %s\n"
                    "  Sampling another process follows the ptrace rules: the same\n"
                    "  user (real, effective and saved ids) and a dumpable process, or\n"
                    "  CAP_SYS_PTRACE.  With 'sysctl kernel.hwpmc.unprivileged_proc_debug'\n"
                    "  at 0, users other than root may attach to no process but the\n"
                    "  tool itself, not even to a command it starts.\n",
                    prog, what.c_str(), std::strerror(EPERM));
                return false;
            }
            if (e.code().value() == ESRCH) {
                std::fprintf(stderr, "%s: %s: no such process\n", prog, what.c_str());
                return false;
            }
            report_error(prog, what.c_str(), e);
            return false;
        }
    }
    return true;
}

bool start_samplers(const char *prog, std::vector<sampler> &s) {
    for (auto &x : s) {
        try {
            x.pmc.start();
        } catch (const std::system_error &e) {
            report_error(prog, "cannot start sampling", e);
            if (e.code().value() == ESRCH)
                std::fprintf(stderr, "  The processes sampled have exited.\n");
            return false;
        }
    }
    return true;
}

void stop_samplers(std::vector<sampler> &s) {
    for (auto &x : s) {
        try {
            x.pmc.stop();
        } catch (const std::system_error &) {
            // a process PMC whose targets are gone may be stopped already
        }
    }
}

bool parse_pid_list(const std::string &arg, std::vector<pid_t> *pids) {
    size_t i = 0;
    while (i <= arg.size()) {
        size_t j = arg.find(',', i);
        if (j == std::string::npos)
            j = arg.size();
        std::string tok = arg.substr(i, j - i);
        char *end;
        errno = 0;
        long v = std::strtol(tok.c_str(), &end, 10);
        if (tok.empty() || *end || errno || v <= 0 || v > 0x3fffffff)
            return false;
        pids->push_back(static_cast<pid_t>(v));
        i = j + 1;
    }
    return true;
}

} // namespace hwpmc_tools
