// SPDX-License-Identifier: GPL-2.0
#include "lib/pmcstat_args.hpp"

#include <getopt.h>

#include <cctype>
#include <cstdlib>

namespace hwpmc_tools {

namespace {

struct spec {
    char opt; // 'p', 's', 'P' or 'S'
    std::string event;
    std::string count; // -n before it, for -P/-S
};

bool digits(const std::string &s) {
    if (s.empty())
        return false;
    for (unsigned char c : s)
        if (!std::isdigit(c) && c != '.')
            return false;
    return true;
}

} // namespace

const char *pmcstat_usage() {
    return "usage: pmcstat [-dEgNqTvWz] [-c CPUS] [-D DIR] [-F FILE] [-G FILE] [-l SECS]\n"
           "               [-m FILE] [-n RATE] [-O LOGFILE] [-o OUTFILE] [-R LOGFILE]\n"
           "               [-t PID] [-w SECS] [-z DEPTH]\n"
           "               [-p SPEC]... [-s SPEC]... [-P SPEC]... [-S SPEC]... [COMMAND [ARG...]]\n"
           "FreeBSD's pmcstat(8) on hwpmc for Linux: counting (-p, -s) runs hwpmc-stat,\n"
           "sampling (-P, -S) into a log (-O) hwpmc-record, -T hwpmc-top, -R hwpmc-report.\n"
           "'man pmcstat' says what each option does here.\n";
}

pmcstat_plan plan_pmcstat(int argc, char **argv) {
    pmcstat_plan plan;
    std::vector<spec> specs;
    std::string cpus, outfile, logout, login, interval, duration, pid, rate, gmon_dir = ".";
    bool descendants = true, callchains = true, top = false, quiet = false, cumulative = false;
    int verbose = 0;
    enum {
        none,
        gprof,
        graph,
        folded,
        pcs
    } report = none;

    optind = 0; // a full reset of getopt(3)'s state
    opterr = 0;
    int c;
    while ((c = getopt(argc, argv, "+c:CdD:EF:gG:hl:m:n:No:O:p:P:qR:s:S:t:Tvw:Wz:")) != -1) {
        const std::string arg = optarg != nullptr ? optarg : "";
        switch (c) {
        case 'p':
        case 's':
        case 'P':
        case 'S':
            specs.push_back({static_cast<char>(c), arg, rate});
            break;
        case 'c':
            cpus = arg;
            break;
        case 'C':
            cumulative = !cumulative; // -T: totals since the start
            break;
        case 'd':
            descendants = !descendants;
            break;
        case 'D':
            gmon_dir = arg; // where -g writes its gprof files
            break;
        case 'E':
            plan.notes.push_back("-E: per-process counts at exit are not printed separately");
            break;
        case 'F':
            report = folded;
            plan.stdout_file = arg;
            break;
        case 'g':
            report = gprof;
            break;
        case 'G':
            report = graph;
            plan.stdout_file = arg;
            break;
        case 'h':
            plan.help = true;
            return plan;
        case 'l':
            duration = arg;
            break;
        case 'm':
            report = pcs;
            plan.stdout_file = arg;
            break;
        case 'n':
            rate = arg;
            break;
        case 'N':
            callchains = !callchains;
            break;
        case 'o':
            outfile = arg;
            break;
        case 'O':
            logout = arg;
            break;
        case 'q':
            quiet = true;
            break;
        case 'R':
            login = arg;
            break;
        case 't':
            pid = arg;
            break;
        case 'T':
            top = true;
            break;
        case 'v':
            verbose++;
            break;
        case 'w':
            interval = arg;
            break;
        case 'W':
            plan.notes.push_back("-W: context-switch counts are not logged (PMC_F_LOG_PROCCSW)");
            break;
        case 'z':
            plan.notes.push_back("-z: the callchain depth is the module's callchaindepth");
            break;
        default: {
            const char bad = static_cast<char>(optopt);
            plan.error = std::string(1, '-') + bad +
                         (std::string("cCdDEFgGhlmnNoOpPqRsStTvwWz").find(bad) != std::string::npos
                              ? " needs an argument"
                              : ": unknown option");
            optind = 0;
            return plan;
        }
        }
    }
    std::vector<std::string> command(argv + optind, argv + argc);
    optind = 0;

    bool counting = false, sampling = false;
    for (const auto &s : specs)
        (s.opt == 'p' || s.opt == 's' ? counting : sampling) = true;
    auto fail = [&](std::string msg) {
        plan.error = std::move(msg);
        return plan;
    };
    if (!interval.empty() && !digits(interval))
        return fail("-w wants seconds, not '" + interval + "'");
    if (!pid.empty() && !digits(pid))
        return fail("-t wants a process id, not '" + pid + "'");

    if (!login.empty()) {
        // Reading a log: hwpmc-report.
        if (counting || sampling || top || !command.empty())
            return fail("-R reads a log: no events, -T or command with it");
        plan.tool = "hwpmc-report";
        plan.args = {"-i", login};
        switch (report) {
        case none: // pmcstat -R alone prints the log's records
        case pcs:
            plan.args.push_back("--dump");
            break;
        case gprof: // gprof(1) files under DIR/EVENT/ (-D DIR, default .)
            plan.args.insert(plan.args.end(), {"--gprof", gmon_dir});
            break;
        case graph:
            plan.args.push_back("-g");
            break;
        case folded:
            plan.args.push_back("--folded");
            break;
        }
        return plan;
    }
    if (specs.empty())
        return fail("no events: give -p, -s, -P or -S SPEC (or -R LOGFILE)");
    if (report != none)
        return fail("-g, -G, -F and -m read a log: record it with -O FILE, then pmcstat -R FILE");
    if (counting && sampling && top)
        return fail("-T shows samples: no counting (-p, -s) with it");
    bool system_counting = false;
    for (const auto &s : specs)
        system_counting |= s.opt == 's';
    if (system_counting && sampling)
        return fail("-s with sampling (-P, -S) in one run is not supported: run pmcstat twice "
                    "(-p counts with sampling)");

    if (!sampling) {
        plan.tool = "hwpmc-stat";
        for (const auto &s : specs)
            plan.args.insert(plan.args.end(), {std::string("-") + s.opt, s.event});
        if (!cpus.empty())
            plan.args.insert(plan.args.end(), {"-c", cpus});
        if (!descendants)
            plan.args.push_back("-d");
        if (!interval.empty())
            plan.args.insert(plan.args.end(), {"-w", interval});
        if (!pid.empty())
            plan.args.insert(plan.args.end(), {"-t", pid});
        if (!outfile.empty())
            plan.args.insert(plan.args.end(), {"-o", outfile});
        if (!duration.empty())
            plan.args.insert(plan.args.end(), {"-l", duration});
        for (int i = 0; i < verbose; i++)
            plan.args.push_back("-v");
        if (!logout.empty())
            plan.notes.push_back("-O: counting writes no log here");
    } else {
        bool system = false, process = false;
        for (const auto &s : specs)
            if (s.opt == 'P' || s.opt == 'S')
                (s.opt == 'S' ? system : process) = true;
        if (system && process && top)
            return fail("-T with -P and -S together is not supported: run one of them");
        if (!top && logout.empty())
            return fail("sampling needs -O LOGFILE (read it with pmcstat -R) or -T");
        plan.tool = top ? "hwpmc-top" : "hwpmc-record";
        // -P alone: process scope; -S alone: -a; both: -P as -e, -S as
        // --system-event (one PMC per CPU next to the process's).
        for (const auto &s : specs) {
            if (s.opt != 'P' && s.opt != 'S')
                continue;
            const bool as_system = s.opt == 'S' && process;
            plan.args.insert(plan.args.end(), {as_system ? "--system-event" : "-e", s.event});
            if (!s.count.empty())
                plan.args.insert(plan.args.end(), {"-c", s.count});
        }
        if (system && !process)
            plan.args.push_back("-a");
        if (system && !cpus.empty())
            plan.args.insert(plan.args.end(), {"-C", cpus});
        else if (!cpus.empty())
            plan.notes.push_back("-c: process-scope sampling follows the process on every CPU");
        if (!pid.empty())
            plan.args.insert(plan.args.end(), {"-p", pid});
        if (callchains)
            plan.args.push_back("-g");
        if (!duration.empty())
            plan.args.insert(plan.args.end(), {"-l", duration});
        if (top) {
            if (!interval.empty())
                plan.args.insert(plan.args.end(), {"-d", interval});
            if (cumulative)
                plan.args.push_back("--cumulative");
        } else {
            plan.args.insert(plan.args.end(), {"-o", logout});
            if (!descendants)
                plan.args.push_back("--no-inherit");
            if (quiet)
                plan.args.push_back("-q");
            for (int i = 0; i < verbose; i++)
                plan.args.push_back("-v");
        }
        // -p with sampling: hwpmc-record counts them too, on the same
        // targets, and prints them at the end as hwpmc-stat would.
        for (const auto &s : specs)
            if (s.opt == 'p')
                plan.args.insert(plan.args.end(), {"--count-event", s.event});
        if (counting && !outfile.empty())
            plan.args.insert(plan.args.end(), {"--count-output", outfile});
        if (counting && !interval.empty())
            plan.notes.push_back("-w: counts with sampling are printed at the end only");
    }
    if (!command.empty()) {
        plan.args.push_back("--");
        plan.args.insert(plan.args.end(), command.begin(), command.end());
    }
    return plan;
}

} // namespace hwpmc_tools
