// SPDX-License-Identifier: GPL-2.0
// hwpmc-stat: count events of a command, of running processes, or of the
// whole system, like `perf stat` and FreeBSD's `pmcstat -p/-s/-t`.
//
// A command is started stopped: the tool forks, the child waits on a pipe,
// the tool attaches the process-scope PMCs to it (with PMC_F_DESCENDANTS
// unless --no-inherit), starts every PMC, and only then lets the child
// exec, so nothing of the command is missed.  The child's one wait on that
// pipe happens before counting starts, so a command's SCHED.SWITCH count
// is its own context switches from its exec on.
#include "lib/common.hpp"
#include "lib/lists.hpp"
#include "lib/numbers.hpp"
#include "lib/options.hpp"
#include "lib/pmc_group.hpp"
#include "lib/run.hpp"
#include "stat/events.hpp"
#include "stat/printer.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace {

const char *prog = "hwpmc-stat";

using namespace hwpmc_stat;
using hwpmc_tools::cpu_list_string;
using hwpmc_tools::exit_status_of;
using hwpmc_tools::monotonic_seconds;
using hwpmc_tools::option_reader;
using hwpmc_tools::parse_at_least;
using hwpmc_tools::parse_cpu_list;
using hwpmc_tools::parse_pid_list;
using hwpmc_tools::pmc_group;
using hwpmc_tools::proc_state;
using hwpmc_tools::run_watch;
using hwpmc_tools::stopped_child;
namespace signals = hwpmc_tools::signals;

double now() {
    return monotonic_seconds();
}

void usage(FILE *out) {
    std::fprintf(
        out,
        "usage: %s [-e SPEC]... [-p PID | -t PID | -a [-C CPUS] [-A]] [-d | --no-inherit]\n"
        "                  [-I MS | -w SECS] [-r N] [-x SEP | -j] [-o FILE] [-l SECS] [-v]\n"
        "                  [--] [COMMAND [ARG...]]\n"
        "       %s [-p SPEC]... [-s SPEC]... [-t PID] [-c CPUS] [-d] [-w SECS] [-o FILE]\n"
        "                  [--] [COMMAND [ARG...]]                      (pmcstat(8) style)\n"
        "\n"
        "Count hardware and software events with hwpmc, like perf stat and FreeBSD pmcstat.\n"
        "What is counted: COMMAND and its descendants (the default), running processes\n"
        "(-p/-t PID: until they exit or SIGINT), or every CPU (-a: while COMMAND runs,\n"
        "or until SIGINT).  With -p PID or -a, a COMMAND only sets how long to count.\n"
        "\n"
        "Events:\n"
        "  -e, --event SPEC    count SPEC (repeatable).  SPEC is a pmc(3) event specifier:\n"
        "                      instructions, cycles, branches, branch-misses, ref-cycles,\n"
        "                      cache-references, cache-misses, tsc (system scope only),\n"
        "                      SOFT events (CLOCK.PROF, CLOCK.HARD, SCHED.SWITCH,\n"
        "                      SCHED.MIGRATE, PAGE_FAULT.ALL/READ/WRITE, SYSCALL.ENTER,\n"
        "                      optionally prefixed SOFT-), libpfm4 names, raw event=/umask=\n"
        "                      encodings, with qualifiers after commas (cycles,usr).  Commas\n"
        "                      also separate events: -e cycles,usr,instructions is two.\n"
        "                      perf names are accepted: task-clock (CLOCK.PROF),\n"
        "                      context-switches/cs (SCHED.SWITCH), cpu-migrations/migrations\n"
        "                      (SCHED.MIGRATE), page-faults/faults (PAGE_FAULT.ALL).\n"
        "                      'hwpmc-control -L' lists what this machine has.\n"
        "  -p SPEC             (pmcstat) count SPEC in process scope: the command or -t PID\n"
        "  -s, --system SPEC   (pmcstat) count SPEC in system scope, on every CPU (or -C)\n"
        "  Without -e, -p SPEC or -s: what this machine has of instructions, cycles,\n"
        "  CLOCK.PROF, SCHED.SWITCH and PAGE_FAULT.ALL (the others are skipped silently;\n"
        "  -v says why).  An event you name that cannot be counted is an error (exit\n"
        "  status 1), never skipped.\n"
        "\n"
        "Targets:\n"
        "  -p, --pid PID[,PID...]  attach to running processes.  -p takes PIDs when its\n"
        "                      argument is numbers and commas, an event SPEC otherwise.\n"
        "  -t, --tid PID       (pmcstat) attach to the process of PID (hwpmc counts whole\n"
        "                      processes: every thread)\n"
        "  -a, --all-cpus      system-wide: count every CPU (needs root or CAP_PERFMON, or\n"
        "                      'sysctl kernel.hwpmc.unprivileged_syspmcs=1')\n"
        "  -C, -c, --cpu CPUS  only these CPUs, e.g. 0,2-3 (implies -a; -c as in pmcstat)\n"
        "  -A, --no-aggr       with -a: one row per CPU instead of the sum\n"
        "  --no-inherit        do not count descendants (children forked after attaching,\n"
        "                      and with -p, the existing ones); --inherit: do (the default)\n"
        "  -d                  (pmcstat) toggle counting descendants (on by default, so\n"
        "                      -d turns it off)\n"
        "\n"
        "Runs and output:\n"
        "  -I, --interval-print MS  print the counts of every MS milliseconds (>= 10) as\n"
        "                      they happen, instead of the totals at the end\n"
        "  -w SECS             (pmcstat) the same, in seconds (fractions allowed)\n"
        "  -r, --repeat N      run COMMAND N times; print means, with the standard\n"
        "                      deviation of the mean as a percentage ( +- 1.23%% ), like perf\n"
        "  -l SECS, --timeout MS  stop after this long (a COMMAND gets SIGTERM)\n"
        "  -x, --field-separator SEP  CSV-like output (see OUTPUT FORMATS)\n"
        "  -j, --json          one JSON object per line (see OUTPUT FORMATS)\n"
        "  -o, --output FILE   write the counts to FILE instead of standard error\n"
        "      --append        append to FILE\n"
        "      --no-big-num    no thousands separators\n"
        "  -v, --verbose       say which default events were skipped, and when counting\n"
        "                      starts; -vv also how many context switches COMMAND had made\n"
        "                      before (waiting to be let exec; not counted)\n"
        "  -V, --version       print the module's and this tool's versions\n"
        "  -h, --help          show this help\n"
        "\n"
        "OUTPUT FORMATS (stable; the counts go to standard error unless -o)\n"
        "  Default: like perf stat.  Each line is the count (thousands separated), the unit,\n"
        "  the event, and after '#' a derived figure: for CLOCK.PROF (printed in msec)\n"
        "  'CPUs utilized' = CPU time / elapsed time; for instructions with cycles\n"
        "  'insn per cycle'; for cycles with CLOCK.PROF 'GHz'; for the others a rate\n"
        "  (/sec, K/sec, M/sec, G/sec) per second of CLOCK.PROF CPU time when CLOCK.PROF is\n"
        "  counted in the same scope, else per second of elapsed time.  Then the elapsed\n"
        "  time and, for a COMMAND, its user and system CPU time (from wait4()).  When both\n"
        "  scopes are counted, event names carry p/ (process) or s/ (system).\n"
        "  -x SEP: one line per counter (and per CPU with -A, per interval with -I):\n"
        "    [TIME SEP] [CPU SEP] VALUE SEP UNIT SEP EVENT SEP [VARIANCE SEP]\n"
        "      RUNTIME SEP PERCENT SEP METRIC SEP METRIC-UNIT\n"
        "  the columns of perf stat -x: TIME (with -I) seconds since the start; CPU (with\n"
        "  -A) 'CPU<n>'; VALUE the count (msec with 6 decimals for CLOCK.PROF; the mean\n"
        "  with -r); UNIT 'msec' or empty; VARIANCE (with -r N>1) like '1.23%%'; RUNTIME the\n"
        "  nanoseconds counted; PERCENT always 100.00 (hwpmc never multiplexes); METRIC and\n"
        "  METRIC-UNIT the derived figure or empty.  A field holding SEP or '\"' is quoted\n"
        "  (\"...\", with \"\" for \").\n"
        "  -j: one JSON object per line.  A counter: {\"interval\" (with -I), \"cpu\" (with\n"
        "  -A, a number), \"counter-value\" (as VALUE), \"unit\", \"event\", \"scope\"\n"
        "  (\"process\" or \"system\"), \"count\" (the raw count: nanoseconds for CLOCK.PROF),\n"
        "  \"variance\" (with -r N>1, a percentage), \"event-runtime\", \"pcnt-running\",\n"
        "  \"metric-value\", \"metric-unit\"} (the metric keys only when there is one).  The\n"
        "  last line: {\"time-elapsed\" (seconds), \"time-elapsed-variance\" (with -r N>1),\n"
        "  \"user-time\", \"system-time\" (with a COMMAND), \"runs\", \"exit-status\"}.\n"
        "\n"
        "EXIT STATUS\n"
        "  COMMAND's exit status (of the last run with -r), 128+N if a signal N killed it;\n"
        "  127 if it cannot be found, 126 if it cannot be run; 0 without a COMMAND; 1 on\n"
        "  errors of the tool; 2 on usage errors.\n",
        prog, prog);
}

[[noreturn]] void usage_error(const std::string &msg) {
    hwpmc_tools::usage_error(prog, msg);
}

bool all_digits_commas(const char *s) {
    if (!*s || !std::isdigit(static_cast<unsigned char>(*s)))
        return false;
    for (; *s; s++)
        if (!std::isdigit(static_cast<unsigned char>(*s)) && *s != ',')
            return false;
    return true;
}

void add_pids(options &o, const char *arg, const char *opt) {
    if (!parse_pid_list(arg, &o.pids))
        usage_error(std::string(opt) + " wants process ids, not '" + arg + "'");
}

void add_event_arg(options &o, const std::string &arg, scope sc, bool from_e) {
    if (!hwpmc_stat::add_events(o, arg, sc, from_e))
        usage_error("empty event in '" + arg + "'");
}

double parse_double(const char *arg, const char *opt, double min) {
    return parse_at_least(prog, arg, opt, min);
}

// ---------------------------------------------------------------------------
// Counters

// What each PMC of `c` counts, for the printer.
std::vector<slot> slots_of(const pmc_group &c) {
    std::vector<slot> out;
    for (const auto &m : c.members())
        out.push_back({m.req, m.cpu});
    return out;
}

// A failure that means "this machine cannot count that event".
bool unavailable(int err) {
    return err == EINVAL || err == EOPNOTSUPP || err == ENODEV || err == ENOENT || err == EBUSY ||
           err == ENXIO;
}

// Allocate every event (per CPU for system scope).  With `resolve`, events
// of the default set that this machine cannot count are dropped from `o`.
// Returns false (after saying why) on failure.
bool allocate_all(hwpmc::device &dev, options &o, pmc_group *c, bool resolve) {
    c->clear();
    std::vector<event_req> kept;
    const auto reqs = requests_of(o);
    for (size_t i = 0; i < o.events.size(); i++) {
        const event_req &e = o.events[i];
        pmc_group::failure f;
        if (c->allocate(dev, resolve ? kept.size() : i, reqs[i], o.cpus, &f)) {
            if (resolve)
                kept.push_back(e);
            continue;
        }
        if (resolve && e.optional && (f.spec || unavailable(f.err))) {
            if (f.spec) {
                if (o.verbose)
                    std::fprintf(stderr, "%s: skipping %s: %s\n", prog, e.name.c_str(),
                                 f.what.c_str());
            } else if (o.verbose || f.err == EBUSY) {
                std::fprintf(stderr, "%s: %s %s: %s%s\n", prog,
                             o.verbose ? "skipping" : "note: not counting", e.name.c_str(),
                             std::strerror(f.err),
                             f.err == EBUSY ? " (see 'hwpmc-control -l'; the NMI "
                                              "watchdog may hold a counter)"
                                            : "");
            }
            continue;
        }
        c->explain_allocation(reqs[i], f);
        return false;
    }
    if (resolve)
        o.events = kept;
    if (c->empty()) {
        std::fprintf(stderr, "%s: none of the default events can be counted here%s\n", prog,
                     o.verbose ? "" : " (-v says why)");
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------
// Running

// voluntary + nonvoluntary context switches of PID so far, or -1.
long long ctxt_switches(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    long long n = -1;
    while (std::getline(f, line)) {
        size_t p = line.find("ctxt_switches:");
        if (p != std::string::npos)
            n = (n < 0 ? 0 : n) + std::atoll(line.c_str() + p + 14);
    }
    return n;
}

// The thread group of a thread id (itself, if it leads one).
pid_t tgid_of(pid_t tid) {
    std::ifstream f("/proc/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("Tgid:", 0) == 0)
            return static_cast<pid_t>(std::atol(line.c_str() + 5));
    return tid;
}

std::string quote_command(const std::vector<std::string> &cmd) {
    std::string s;
    for (const auto &a : cmd)
        s += (s.empty() ? "" : " ") + a;
    return "'" + s + "'";
}

struct run_result {
    std::vector<uint64_t> values; // per slot
    double elapsed = 0, user = 0, sys = 0;
    int status = 0;      // what the tool exits with
    bool failed = false; // a tool error (already reported)
    bool stop = false;   // do not repeat: interrupted, or the command could not run
};

// One measurement.  Everything is allocated already.
run_result run_once(options &o, pmc_group &c, printer &pr) {
    run_result res;
    const auto reqs = requests_of(o);
    const bool has_proc_events =
        std::any_of(o.events.begin(), o.events.end(),
                    [](const event_req &e) { return e.sc == scope::process; });
    stopped_child ch; // killed and reaped if this run gives up before its exec
    signals::reset();

    if (!o.command.empty()) {
        if (!ch.fork(prog, o.command)) {
            res.failed = true;
            return res;
        }
        // Its wait on the pipe is then never part of the counts.
        ch.wait_until_waiting();
    }
    if (has_proc_events) {
        if (o.pids.empty()) {
            if (!c.attach(ch.pid(), reqs)) {
                res.failed = true;
                return res;
            }
        } else {
            for (pid_t p : o.pids)
                if (!c.attach(p, reqs)) {
                    res.failed = true;
                    return res;
                }
        }
    }
    if (!c.start(reqs)) {
        res.failed = true;
        return res;
    }
    // The TSC can be neither written nor stopped: count from its value now.
    std::vector<uint64_t> base(c.size(), 0);
    for (size_t i = 0; i < c.size(); i++) {
        if (c.members()[i].pmc.cls() != PMC_CLASS_TSC)
            continue;
        try {
            base[i] = c.members()[i].pmc.read();
        } catch (const std::system_error &) {
        }
    }
    double t0 = now();
    if (o.verbose) {
        std::fprintf(stderr, "%s: counting %zu event%s", prog, o.events.size(),
                     o.events.size() == 1 ? "" : "s");
        if (!o.pids.empty()) {
            std::fprintf(stderr, " of process");
            for (pid_t p : o.pids)
                std::fprintf(stderr, " %d", p);
        } else if (ch.pid() > 0 && has_proc_events) {
            std::fprintf(stderr, " of %s (pid %d)", quote_command(o.command).c_str(), ch.pid());
        }
        if (o.system_wide)
            std::fprintf(stderr, " on CPUs %s", cpu_list_string(o.cpus).c_str());
        std::fprintf(stderr, "%s\n", has_proc_events && o.inherit ? ", with descendants" : "");
        if (o.verbose > 1 && ch.pid() > 0)
            std::fprintf(stderr, "%s: command pid %d: %s, %lld context switches before counting\n",
                         prog, ch.pid(),
                         ch.waiting() ? "waiting on its pipe"
                                      : ("not waiting yet (state " +
                                         std::string(1, proc_state(ch.pid())) + ")")
                                            .c_str(),
                         ctxt_switches(ch.pid()));
    }

    std::vector<pid_t> watched; // -p without a command: until they all exit
    if (ch.pid() > 0) {
        signals::forward_to(ch.pid());
        if (int st = ch.start(prog, o.command)) {
            signals::forward_to(0);
            c.stop();
            res.status = st;
            res.stop = true;
            res.failed = true;
            return res;
        }
    } else {
        for (pid_t p : o.pids)
            watched.push_back(tgid_of(p));
    }
    std::vector<uint64_t> last = base, cur;
    double next_tick = o.interval_ms > 0 ? t0 + o.interval_ms / 1000 : 0;
    double last_tick = t0;
    bool header_done = false;
    auto print_interval = [&](double t) {
        if (!c.read(reqs, &cur))
            return false;
        std::vector<uint64_t> delta(cur.size());
        for (size_t i = 0; i < cur.size(); i++)
            delta[i] = cur[i] - last[i];
        last = cur;
        if (!header_done) {
            pr.interval_header();
            header_done = true;
        }
        pr.counters(make_rows(o, slots_of(c), {delta}), t - last_tick, t - t0);
        last_tick = t;
        return true;
    };

    run_watch watch(ch.pid(), watched);
    if (o.timeout_ms > 0)
        watch.set_deadline(t0 + static_cast<double>(o.timeout_ms) / 1000);
    for (;;) {
        // Why we wake: the run ended (the command or the processes exited,
        // a signal, the timeout), or the next interval.
        if (watch.wait(next_tick) != run_watch::end::none)
            break;
        double t = now();
        if (next_tick > 0 && t >= next_tick) {
            if (!print_interval(t)) {
                res.failed = true;
                break;
            }
            while (next_tick <= t)
                next_tick += o.interval_ms / 1000;
        }
    }
    const int wstatus = watch.wstatus();
    const struct rusage &ru = watch.usage();
    double t1 = now();
    signals::forward_to(0);
    c.stop();
    if (!c.read(reqs, &res.values))
        res.failed = true;
    if (o.interval_ms > 0 && !res.failed && t1 - last_tick > 1e-4) {
        // The last, partial interval.
        std::vector<uint64_t> delta(res.values.size());
        for (size_t i = 0; i < delta.size(); i++)
            delta[i] = res.values[i] - last[i];
        if (!header_done)
            pr.interval_header();
        pr.counters(make_rows(o, slots_of(c), {delta}), t1 - last_tick, t1 - t0);
    }
    for (size_t i = 0; i < res.values.size(); i++)
        res.values[i] -= base[i];
    res.elapsed = t1 - t0;
    if (ch.pid() > 0) {
        res.status = exit_status_of(wstatus);
        res.user = static_cast<double>(ru.ru_utime.tv_sec) +
                   static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
        res.sys = static_cast<double>(ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
        if (WIFSIGNALED(wstatus) || signals::stop_signal())
            res.stop = true;
    } else {
        res.stop = true;
    }
    return res;
}

std::string target_description(const options &o) {
    if (!o.pids.empty()) {
        std::string s;
        for (pid_t p : o.pids)
            s += (s.empty() ? "" : ",") + std::to_string(p);
        return (o.pids.size() == 1 ? "process id '" : "process ids '") + s + "'";
    }
    bool proc = std::any_of(o.events.begin(), o.events.end(),
                            [](const event_req &e) { return e.sc == scope::process; });
    if (proc)
        return quote_command(o.command);
    if (o.cpus_given)
        return "'CPU(s) " + cpu_list_string(o.cpus) + "'";
    return "'system wide'";
}

} // namespace

int main(int argc, char **argv) {
    enum {
        OPT_APPEND = 256,
        OPT_NO_BIG_NUM,
        OPT_TIMEOUT,
        OPT_INHERIT,
        OPT_NO_INHERIT,
    };
    option_reader r(prog, argc, argv, "+e:p:t:s:aC:c:AdI:w:r:x:jo:l:vhV",
                    {
                        {"event", required_argument, nullptr, 'e'},
                        {"pid", required_argument, nullptr, 'p'},
                        {"tid", required_argument, nullptr, 't'},
                        {"system", required_argument, nullptr, 's'},
                        {"all-cpus", no_argument, nullptr, 'a'},
                        {"cpu", required_argument, nullptr, 'C'},
                        {"no-aggr", no_argument, nullptr, 'A'},
                        {"no-inherit", no_argument, nullptr, OPT_NO_INHERIT},
                        {"inherit", no_argument, nullptr, OPT_INHERIT},
                        {"interval-print", required_argument, nullptr, 'I'},
                        {"repeat", required_argument, nullptr, 'r'},
                        {"field-separator", required_argument, nullptr, 'x'},
                        {"json", no_argument, nullptr, 'j'},
                        {"output", required_argument, nullptr, 'o'},
                        {"append", no_argument, nullptr, OPT_APPEND},
                        {"no-big-num", no_argument, nullptr, OPT_NO_BIG_NUM},
                        {"timeout", required_argument, nullptr, OPT_TIMEOUT},
                        {"verbose", no_argument, nullptr, 'v'},
                        {"help", no_argument, nullptr, 'h'},
                        {"version", no_argument, nullptr, 'V'},
                    },
                    usage);
    options o;
    bool csv = false, json = false, want_version = false;
    int opt;
    while ((opt = r.next()) != -1) {
        switch (opt) {
        case 'e':
            add_event_arg(o, optarg, scope::process, true);
            break;
        case 'p':
            if (all_digits_commas(optarg))
                add_pids(o, optarg, "-p");
            else
                add_event_arg(o, optarg, scope::process, false);
            break;
        case 't':
            add_pids(o, optarg, "-t");
            break;
        case 's':
            add_event_arg(o, optarg, scope::system, false);
            break;
        case 'a':
            o.system_wide = true;
            break;
        case 'C':
        case 'c':
            if (!parse_cpu_list(optarg, &o.cpus))
                usage_error(std::string("-") + static_cast<char>(opt) +
                            " wants a CPU list like 0,2-3, not '" + optarg + "'");
            o.cpus_given = true;
            o.system_wide = true;
            break;
        case 'A':
            o.no_aggr = true;
            break;
        case 'd':
            o.inherit = !o.inherit;
            break;
        case OPT_INHERIT:
            o.inherit = true;
            break;
        case OPT_NO_INHERIT:
            o.inherit = false;
            break;
        case 'I':
            o.interval_ms = parse_double(optarg, "-I", 10);
            break;
        case 'w':
            o.interval_ms = parse_double(optarg, "-w", 0.01) * 1000;
            break;
        case 'r': {
            double n = parse_double(optarg, "-r", 1);
            if (n != std::floor(n) || n > 100000)
                usage_error(std::string("-r wants a whole number of runs, not '") + optarg + "'");
            o.repeat = static_cast<int>(n);
            break;
        }
        case 'x':
            if (!*optarg)
                usage_error("-x wants a separator");
            o.sep = optarg;
            csv = true;
            break;
        case 'j':
            json = true;
            break;
        case 'o':
            o.output = optarg;
            break;
        case OPT_APPEND:
            o.append = true;
            break;
        case OPT_NO_BIG_NUM:
            o.big_num = false;
            break;
        case 'l':
            o.timeout_ms = static_cast<long>(parse_double(optarg, "-l", 0.01) * 1000);
            break;
        case OPT_TIMEOUT:
            o.timeout_ms = static_cast<long>(parse_double(optarg, "--timeout", 10));
            break;
        case 'v':
            o.verbose++;
            break;
        case 'V':
            want_version = true;
            break;
        case '?':
        default:
            if (optopt && std::strchr("PSOTRgGNDFmMqkzn", optopt))
                usage_error(std::string("option -") + static_cast<char>(optopt) +
                            " is a pmcstat sampling or log option: hwpmc-stat only counts "
                            "(hwpmc-record samples)");
            r.bad("eptsCcIwrxol");
        }
    }
    o.command = r.operands();

    if (want_version) {
        std::printf("hwpmc-stat: hwpmc module %s; this tool speaks ABI %d.%d\n",
                    hwpmc_tools::module_version().c_str(), HWPMC_VERSION_MAJOR,
                    HWPMC_VERSION_MINOR);
        return 0;
    }
    if (csv && json)
        usage_error("-x and --json exclude each other");
    o.fmt = json ? format::json : csv ? format::csv : format::human;
    if (o.repeat > 1 && o.command.empty())
        usage_error("-r needs a COMMAND to repeat");
    if (o.repeat > 1 && o.interval_ms > 0)
        usage_error("-r and -I (-w) exclude each other");
    if (o.append && o.output.empty())
        usage_error("--append needs -o FILE");
    if (o.system_wide && !o.pids.empty() &&
        (o.events.empty() ||
         std::any_of(o.events.begin(), o.events.end(), [](auto &e) { return e.scope_from_a; })))
        usage_error("-p/-t PID and -a exclude each other (use -s SPEC for system events)");

    // Scopes: -e events follow -a; -p SPEC / -s SPEC say theirs.
    bool any_events = !o.events.empty();
    if (!any_events)
        add_default_events(o);
    const bool dash_a = o.system_wide; // -a or -C
    for (auto &e : o.events) {
        if (e.scope_from_a)
            e.sc = dash_a && o.pids.empty() ? scope::system : scope::process;
        if (e.sc == scope::system)
            o.system_wide = true;
    }
    bool proc_events = std::any_of(o.events.begin(), o.events.end(),
                                   [](auto &e) { return e.sc == scope::process; });
    if (proc_events && o.command.empty() && o.pids.empty())
        usage_error("nothing to count: give a COMMAND to run, a process (-p PID / -t PID), "
                    "or -a for the whole system");
    if (o.no_aggr && !o.system_wide)
        usage_error("-A (--no-aggr) needs -a: per-CPU rows are for system-wide counting");

    signals::setup(prog);
    hwpmc::device dev = hwpmc_tools::open_device(prog);
    describe_events(dev, o);
    if (o.system_wide)
        o.cpus = hwpmc_tools::system_cpus(prog, dev, o.cpus_given ? o.cpus : std::vector<int>{});
    if (!o.pids.empty()) {
        for (pid_t p : o.pids)
            if (kill(p, 0) < 0 && errno == ESRCH) {
                std::fprintf(stderr, "%s: cannot attach to process %d: %s\n", prog, p,
                             std::strerror(ESRCH));
                return 1;
            }
    }

    FILE *out = stderr;
    if (!o.output.empty()) {
        out = std::fopen(o.output.c_str(), o.append ? "ae" : "we");
        if (!out) {
            std::fprintf(stderr, "%s: cannot open %s: %s\n", prog, o.output.c_str(),
                         std::strerror(errno));
            return 1;
        }
    }
    // In front of a command, the terminal's SIGINT reaches it too: the tool
    // waits for it to exit and prints what it counted.
    printer pr(out, o);

    std::vector<std::vector<uint64_t>> runs;
    std::vector<double> elapsed, user, sys;
    pmc_group c(prog, pmc_group::use::counting);
    int status = 0;
    for (int run = 0; run < o.repeat; run++) {
        if (!allocate_all(dev, o, &c, run == 0))
            return 1;
        run_result r = run_once(o, c, pr);
        if (r.failed)
            return r.status ? r.status : 1;
        runs.push_back(r.values);
        elapsed.push_back(r.elapsed);
        user.push_back(r.user);
        sys.push_back(r.sys);
        status = r.status;
        if (r.stop || signals::stop_signal())
            break;
    }
    if (runs.size() < static_cast<size_t>(o.repeat) && o.repeat > 1)
        o.repeat = static_cast<int>(runs.size());
    if (o.interval_ms <= 0) {
        pr.header(target_description(o));
        pr.counters(make_rows(o, slots_of(c), runs), [&] {
            double m, r;
            fill_stats(elapsed, &m, &r);
            return m;
        }());
    }
    if (o.interval_ms <= 0 || o.fmt == format::json)
        pr.footer(elapsed, user, sys, status, !o.command.empty());
    if (out != stderr)
        std::fclose(out);
    return status;
}
