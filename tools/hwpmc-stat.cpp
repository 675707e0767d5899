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
#include "lib/run.hpp"

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

// ---------------------------------------------------------------------------
// Options and events

enum class scope {
    process,
    system
};
enum class kind {
    other,
    clock_prof,
    cycles,
    instructions
};
enum class format {
    human,
    csv,
    json
};

struct event_req {
    std::string spec; // what pmc_allocate() gets
    std::string name; // what is printed
    scope sc = scope::process;
    bool optional = false;     // from the default set: skipped where it cannot be counted
    bool scope_from_a = false; // an -e event: system scope iff -a
    kind k = kind::other;
};

struct options {
    std::vector<event_req> events;
    std::vector<pid_t> pids; // -p PID / -t PID
    bool system_wide = false;
    std::vector<int> cpus; // -C; empty: every online CPU
    bool cpus_given = false;
    bool no_aggr = false;
    bool inherit = true;
    double interval_ms = 0;
    long timeout_ms = 0;
    int repeat = 1;
    format fmt = format::human;
    std::string sep = ",";
    std::string output;
    bool append = false;
    bool big_num = true;
    int verbose = 0;
    std::vector<std::string> command;
};

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

std::string upper(std::string s) {
    for (auto &c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool iequals(const std::string &a, const char *b) {
    return strcasecmp(a.c_str(), b) == 0;
}

// perf's software event names, mapped to hwpmc's SOFT events.
const char *perf_alias(const std::string &name) {
    static const struct {
        const char *perf, *soft;
    } aliases[] = {
        {"task-clock", "SOFT-CLOCK.PROF"},    {"context-switches", "SOFT-SCHED.SWITCH"},
        {"cs", "SOFT-SCHED.SWITCH"},          {"cpu-migrations", "SOFT-SCHED.MIGRATE"},
        {"migrations", "SOFT-SCHED.MIGRATE"}, {"page-faults", "SOFT-PAGE_FAULT.ALL"},
        {"faults", "SOFT-PAGE_FAULT.ALL"},
    };
    for (auto &a : aliases)
        if (iequals(name, a.perf))
            return a.soft;
    return nullptr;
}

// What derived figures an event takes part in, from its name.
kind kind_of(const std::string &spec) {
    std::string head = upper(spec.substr(0, spec.find(',')));
    if (head.rfind("SOFT-", 0) == 0)
        head = head.substr(5);
    if (head == "CLOCK.PROF")
        return kind::clock_prof;
    static const char *insns[] = {"INSTRUCTIONS",       "IAF-INSTR_RETIRED_ANY",
                                  "INSTR_RETIRED_ANY",  "INST_RETIRED.ANY",
                                  "INST_RETIRED.ANY_P", "INST_RETIRED:ANY",
                                  "INST_RETIRED:ANY_P", "RETIRED_INSTRUCTIONS"};
    static const char *cycles[] = {"CYCLES",
                                   "UNHALTED-CYCLES",
                                   "IAF-CPU_CLK_UNHALTED_CORE",
                                   "CPU_CLK_UNHALTED_CORE",
                                   "CPU_CLK_UNHALTED.THREAD",
                                   "CPU_CLK_UNHALTED.THREAD_P",
                                   "CPU_CLK_UNHALTED:THREAD",
                                   "CPU_CLK_UNHALTED:THREAD_P",
                                   "CYCLES_NOT_IN_HALT"};
    for (auto n : insns)
        if (head == n)
            return kind::instructions;
    for (auto n : cycles)
        if (head == n)
            return kind::cycles;
    return kind::other;
}

bool is_qualifier(const std::string &tok) {
    if (tok.find('=') != std::string::npos)
        return true;
    for (auto q : {"usr", "os", "edge", "inv", "anythread"})
        if (iequals(tok, q))
            return true;
    return false;
}

// "cycles,usr,instructions" -> {"cycles,usr", "instructions"}.
std::vector<std::string> split_events(const std::string &arg) {
    std::vector<std::string> out;
    std::stringstream ss(arg);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        if (!out.empty() && is_qualifier(tok))
            out.back() += "," + tok;
        else
            out.push_back(tok);
    }
    if (!arg.empty() && arg.back() == ',')
        out.push_back("");
    return out;
}

void add_events(options &o, const std::string &arg, scope sc, bool from_e) {
    for (auto &s : split_events(arg)) {
        if (s.empty())
            usage_error("empty event in '" + arg + "'");
        event_req e;
        const char *alias = perf_alias(s.substr(0, s.find(',')));
        e.spec = alias ? std::string(alias) + s.substr(std::min(s.size(), s.find(','))) : s;
        e.name = s;
        e.sc = sc;
        e.scope_from_a = from_e;
        e.k = kind_of(e.spec);
        o.events.push_back(e);
    }
}

bool all_digits_commas(const char *s) {
    if (!*s || !std::isdigit(static_cast<unsigned char>(*s)))
        return false;
    for (; *s; s++)
        if (!std::isdigit(static_cast<unsigned char>(*s)) && *s != ',')
            return false;
    return true;
}

std::vector<pid_t> parse_pids(const std::string &arg, const char *opt) {
    std::vector<pid_t> pids;
    std::stringstream ss(arg);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        char *end;
        errno = 0;
        long v = std::strtol(tok.c_str(), &end, 10);
        if (tok.empty() || *end || errno || v <= 0 || v > 0x3fffffff)
            usage_error(std::string(opt) + " wants process ids, not '" + arg + "'");
        pids.push_back(static_cast<pid_t>(v));
    }
    return pids;
}

// CPU lists ("0,2-3") and the online CPUs: shared with the other tools.
using hwpmc_tools::cpu_list_string;
using hwpmc_tools::exit_status_of;
using hwpmc_tools::monotonic_seconds;
using hwpmc_tools::online_cpus;
using hwpmc_tools::parse_cpu_list;
using hwpmc_tools::proc_state;
using hwpmc_tools::run_watch;
using hwpmc_tools::stopped_child;
namespace signals = hwpmc_tools::signals;

double parse_double(const char *arg, const char *opt, double min) {
    char *end;
    errno = 0;
    double v = std::strtod(arg, &end);
    if (!*arg || *end || errno || !(v >= min) || !std::isfinite(v))
        usage_error(std::string(opt) + " wants a number >= " +
                    (min == std::floor(min) ? std::to_string(static_cast<long>(min))
                                            : std::to_string(min)) +
                    ", not '" + arg + "'");
    return v;
}

// ---------------------------------------------------------------------------
// Time, signals

double now() {
    return monotonic_seconds();
}

// ---------------------------------------------------------------------------
// Counters

struct slot {
    size_t ev; // index into options::events
    int cpu;   // -1: process scope
};

struct counters {
    std::vector<slot> slots;
    std::vector<hwpmc::pmc> pmcs; // parallel to slots
};

// A failure that means "this machine cannot count that event".
bool unavailable(int err) {
    return err == EINVAL || err == EOPNOTSUPP || err == ENODEV || err == ENOENT || err == EBUSY ||
           err == ENXIO;
}

std::string scope_word(scope sc) {
    return sc == scope::process ? "process" : "system";
}

// Report why `e` could not be allocated.
void allocation_error(const event_req &e, int cpu, const std::system_error &x, bool is_spec) {
    if (is_spec) {
        // what() ends in ": Invalid argument": the message says more.
        std::string msg = x.what(), tail = std::string(": ") + std::strerror(EINVAL);
        if (msg.size() > tail.size() &&
            msg.compare(msg.size() - tail.size(), tail.size(), tail) == 0)
            msg.resize(msg.size() - tail.size());
        std::fprintf(stderr, "%s: event '%s': %s\n", prog, e.name.c_str(), msg.c_str());
        return;
    }
    int err = x.code().value();
    std::string what = "cannot count '" + e.name + "' in " + scope_word(e.sc) + " scope";
    if (cpu >= 0)
        what += " on CPU " + std::to_string(cpu);
    if (err == ENXIO && cpu >= 0) {
        std::fprintf(stderr, "%s: %s: CPU %d is offline\n", prog, what.c_str(), cpu);
        return;
    }
    hwpmc_tools::explain(prog, what.c_str(), err);
    if (err == EINVAL && e.sc == scope::process && upper(e.spec) == "TSC")
        std::fprintf(stderr, "  The TSC counts only system-wide: use -a (or -s tsc).\n");
    else if (err == EINVAL && e.sc == scope::process)
        std::fprintf(stderr, "  This event may count only system-wide: try -a.\n");
}

// Allocate every event (per CPU for system scope).  With `resolve`, events
// of the default set that this machine cannot count are dropped from `o`.
// Returns false (after saying why) on failure.
bool allocate_all(hwpmc::device &dev, options &o, const std::vector<int> &cpus, counters *c,
                  bool resolve) {
    c->slots.clear();
    c->pmcs.clear();
    std::vector<event_req> kept;
    for (size_t i = 0; i < o.events.size(); i++) {
        const event_req &e = o.events[i];
        std::vector<int> where = e.sc == scope::system ? cpus : std::vector<int>{-1};
        size_t first = c->pmcs.size();
        bool ok = true;
        for (int cpu : where) {
            try {
                uint32_t flags = e.sc == scope::process && o.inherit ? PMC_F_DESCENDANTS : 0;
                c->pmcs.push_back(dev.allocate(
                    e.spec, e.sc == scope::system ? PMC_MODE_SC : PMC_MODE_TC, flags, cpu));
                c->slots.push_back({resolve ? kept.size() : i, cpu});
            } catch (const hwpmc::spec_error &x) {
                if (resolve && e.optional) {
                    if (o.verbose)
                        std::fprintf(stderr, "%s: skipping %s: %s\n", prog, e.name.c_str(),
                                     x.what());
                    ok = false;
                    break;
                }
                allocation_error(e, cpu, x, true);
                return false;
            } catch (const std::system_error &x) {
                int err = x.code().value();
                if (resolve && e.optional && unavailable(err)) {
                    if (o.verbose || err == EBUSY)
                        std::fprintf(stderr, "%s: %s %s: %s%s\n", prog,
                                     o.verbose ? "skipping" : "note: not counting", e.name.c_str(),
                                     std::strerror(err),
                                     err == EBUSY ? " (see 'hwpmc-control -l'; the NMI "
                                                    "watchdog may hold a counter)"
                                                  : "");
                    ok = false;
                    break;
                }
                allocation_error(e, cpu, x, false);
                return false;
            }
        }
        if (!ok) {
            c->pmcs.erase(c->pmcs.begin() + static_cast<long>(first), c->pmcs.end());
            c->slots.erase(c->slots.begin() + static_cast<long>(first), c->slots.end());
            continue;
        }
        if (resolve)
            kept.push_back(e);
    }
    if (resolve)
        o.events = kept;
    if (c->pmcs.empty()) {
        std::fprintf(stderr, "%s: none of the default events can be counted here%s\n", prog,
                     o.verbose ? "" : " (-v says why)");
        return false;
    }
    return true;
}

bool attach_all(counters &c, const options &o, pid_t pid) {
    for (size_t i = 0; i < c.pmcs.size(); i++) {
        if (c.slots[i].cpu >= 0)
            continue;
        try {
            c.pmcs[i].attach(pid);
        } catch (const std::system_error &x) {
            int err = x.code().value();
            const std::string &name = o.events[c.slots[i].ev].name;
            if (err == ESRCH) {
                std::fprintf(stderr,
                             "%s: cannot attach %s to process %d: %s (no such process, or it "
                             "is exiting)\n",
                             prog, name.c_str(), pid, std::strerror(err));
            } else {
                std::string what = "cannot attach " + name + " to process " + std::to_string(pid);
                hwpmc_tools::explain(prog, what.c_str(), err);
            }
            return false;
        }
    }
    return true;
}

bool start_all(counters &c, const options &o) {
    for (size_t i = 0; i < c.pmcs.size(); i++) {
        try {
            c.pmcs[i].start();
        } catch (const std::system_error &x) {
            std::string what = "cannot start " + o.events[c.slots[i].ev].name;
            if (c.slots[i].cpu >= 0)
                what += " on CPU " + std::to_string(c.slots[i].cpu);
            hwpmc_tools::explain(prog, what.c_str(), x.code().value());
            return false;
        }
    }
    return true;
}

void stop_all(counters &c) {
    for (auto &p : c.pmcs) {
        try {
            p.stop();
        } catch (const std::system_error &) {
            // a CPU went offline: its count stays as it was
        }
    }
}

bool read_all(counters &c, const options &o, std::vector<uint64_t> *v) {
    v->resize(c.pmcs.size());
    for (size_t i = 0; i < c.pmcs.size(); i++) {
        try {
            (*v)[i] = c.pmcs[i].read();
        } catch (const std::system_error &x) {
            if (x.code().value() == ENXIO)
                continue; // CPU offline: keep the last value
            std::string what = "cannot read " + o.events[c.slots[i].ev].name;
            hwpmc_tools::explain(prog, what.c_str(), x.code().value());
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------
// Output

struct row {
    size_t ev;
    int cpu;                     // -1: the process, or the sum of the CPUs
    std::vector<uint64_t> runs;  // one value per run
    double mean = 0, rel_sd = 0; // rel_sd: stddev of the mean, % of the mean
};

void fill_stats(std::vector<double> xs, double *mean, double *rel_sd) {
    double n = static_cast<double>(xs.size()), sum = 0, sq = 0;
    for (double x : xs)
        sum += x;
    *mean = n ? sum / n : 0;
    for (double x : xs)
        sq += (x - *mean) * (x - *mean);
    double sd_mean = xs.size() > 1 ? std::sqrt(sq / (n - 1) / n) : 0;
    *rel_sd = *mean != 0 ? 100.0 * sd_mean / *mean : 0;
}

// Rows to print, from per-run slot values: per CPU (-A) or summed.
std::vector<row> make_rows(const options &o, const counters &c,
                           const std::vector<std::vector<uint64_t>> &runs) {
    std::vector<row> rows;
    for (size_t e = 0; e < o.events.size(); e++) {
        std::vector<int> cpus;
        for (const auto &s : c.slots)
            if (s.ev == e)
                cpus.push_back(o.no_aggr ? s.cpu : -1);
        cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
        for (int cpu : cpus) {
            row r{e, cpu, {}};
            for (const auto &v : runs) {
                uint64_t sum = 0;
                for (size_t i = 0; i < c.slots.size(); i++)
                    if (c.slots[i].ev == e && (cpu < 0 || c.slots[i].cpu == cpu))
                        sum += v[i];
                r.runs.push_back(sum);
            }
            std::vector<double> xs(r.runs.begin(), r.runs.end());
            fill_stats(xs, &r.mean, &r.rel_sd);
            rows.push_back(r);
        }
    }
    return rows;
}

struct metric {
    double value = 0;
    std::string unit;
};

// The derived figure of `r`, from the rows of the same scope and CPU.
std::optional<metric> metric_of(const options &o, const row &r, const std::vector<row> &rows,
                                double elapsed) {
    const event_req &e = o.events[r.ev];
    auto find = [&](kind k) -> const row * {
        for (const auto &x : rows)
            if (o.events[x.ev].k == k && o.events[x.ev].sc == e.sc && x.cpu == r.cpu)
                return &x;
        return nullptr;
    };
    const row *prof = find(kind::clock_prof);
    if (e.k == kind::clock_prof) {
        if (elapsed <= 0)
            return std::nullopt;
        return metric{r.mean / 1e9 / elapsed, "CPUs utilized"};
    }
    if (e.k == kind::instructions) {
        const row *cyc = find(kind::cycles);
        if (cyc && cyc->mean > 0)
            return metric{r.mean / cyc->mean, "insn per cycle"};
    }
    if (e.k == kind::cycles && prof && prof->mean > 0)
        return metric{r.mean / prof->mean, "GHz"};
    double secs = prof && prof->mean > 0 ? prof->mean / 1e9 : elapsed;
    if (secs <= 0)
        return std::nullopt;
    double rate = r.mean / secs;
    static const struct {
        double f;
        const char *unit;
    } scales[] = {{1e9, "G/sec"}, {1e6, "M/sec"}, {1e3, "K/sec"}};
    for (auto &s : scales)
        if (rate >= s.f)
            return metric{rate / s.f, s.unit};
    return metric{rate, "/sec"};
}

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), f, v);
    return buf;
}

// Thousands separators on the integer part of a formatted number.
std::string group(const std::string &num, bool big) {
    if (!big)
        return num;
    size_t start = num[0] == '-' ? 1 : 0, dot = num.find('.');
    size_t end = dot == std::string::npos ? num.size() : dot;
    std::string out = num.substr(0, start), ip = num.substr(start, end - start);
    int n = static_cast<int>(ip.size());
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out += ',';
        out += ip[static_cast<size_t>(i)];
    }
    return out + num.substr(end);
}

class printer {
public:
    printer(FILE *out, const options &o) : out_(out), o_(o) {}

    bool mixed() const {
        bool p = false, s = false;
        for (const auto &e : o_.events)
            (e.sc == scope::process ? p : s) = true;
        return p && s;
    }

    std::string event_name(const event_req &e) const {
        if (!mixed())
            return e.name;
        return (e.sc == scope::process ? "p/" : "s/") + e.name;
    }

    // The value in the event's unit, for -x and -j.
    std::string value_text(const event_req &e, const row &r) const {
        if (e.k == kind::clock_prof)
            return fmt("%.6f", r.mean / 1e6);
        if (r.runs.size() == 1)
            return std::to_string(r.runs[0]);
        return fmt("%.2f", r.mean);
    }

    std::string field(const std::string &s) const {
        if (s.find(o_.sep) == std::string::npos && s.find('"') == std::string::npos)
            return s;
        std::string q = "\"";
        for (char ch : s)
            q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        return q + "\"";
    }

    static std::string json_str(const std::string &s) {
        std::string q = "\"";
        for (unsigned char ch : s) {
            if (ch == '"' || ch == '\\') {
                q += '\\';
                q += static_cast<char>(ch);
            } else if (ch < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
                q += buf;
            } else {
                q += static_cast<char>(ch);
            }
        }
        return q + "\"";
    }

    void header(const std::string &what) {
        if (o_.fmt != format::human)
            return;
        std::fprintf(out_, "\n Performance counter stats for %s", what.c_str());
        if (o_.repeat > 1)
            std::fprintf(out_, " (%d runs)", o_.repeat);
        std::fprintf(out_, ":\n\n");
    }

    // The counters; `interval` >= 0: a row of -I (seconds since the start).
    void counters(const std::vector<row> &rows, double elapsed, double interval = -1) {
        for (const auto &r : rows) {
            const event_req &e = o_.events[r.ev];
            auto m = metric_of(o_, r, rows, elapsed);
            switch (o_.fmt) {
            case format::human:
                human_row(e, r, m, interval);
                break;
            case format::csv:
                csv_row(e, r, m, elapsed, interval);
                break;
            case format::json:
                json_row(e, r, m, elapsed, interval);
                break;
            }
        }
        std::fflush(out_);
    }

    void interval_header() {
        if (o_.fmt != format::human)
            return;
        if (o_.no_aggr)
            std::fprintf(out_, "#%14s %-6s %18s %-4s %s\n", "time", "CPU", "counts", "unit",
                         "events");
        else
            std::fprintf(out_, "#%14s %18s %-4s %s\n", "time", "counts", "unit", "events");
    }

    void footer(const std::vector<double> &elapsed, const std::vector<double> &user,
                const std::vector<double> &sys, int exit_status, bool command) {
        double mean, rel;
        fill_stats(elapsed, &mean, &rel);
        if (o_.fmt == format::json) {
            std::string s = "{\"time-elapsed\" : " + fmt("%.9f", mean);
            if (elapsed.size() > 1)
                s += ", \"time-elapsed-variance\" : " + fmt("%.2f", rel);
            if (command) {
                double u, us, y, ys;
                fill_stats(user, &u, &us);
                fill_stats(sys, &y, &ys);
                s +=
                    ", \"user-time\" : " + fmt("%.6f", u) + ", \"system-time\" : " + fmt("%.6f", y);
            }
            s += ", \"runs\" : " + std::to_string(elapsed.size()) +
                 ", \"exit-status\" : " + std::to_string(exit_status) + "}";
            std::fprintf(out_, "%s\n", s.c_str());
        }
        if (o_.fmt != format::human)
            return;
        if (elapsed.size() > 1)
            std::fprintf(out_, "\n  %16.9f +- %.9f seconds time elapsed  ( +- %5.2f%% )\n", mean,
                         mean * rel / 100, rel);
        else
            std::fprintf(out_, "\n  %16.9f seconds time elapsed\n", mean);
        if (command) {
            double u, us, y, ys;
            fill_stats(user, &u, &us);
            fill_stats(sys, &y, &ys);
            std::fprintf(out_, "\n  %16.9f seconds user\n  %16.9f seconds sys\n", u, y);
        }
        std::fprintf(out_, "\n");
        std::fflush(out_);
    }

private:
    void human_row(const event_req &e, const row &r, const std::optional<metric> &m,
                   double interval) {
        std::string line;
        if (interval >= 0)
            line += fmt("%15.9f ", interval);
        if (r.cpu >= 0) {
            char buf[32];
            std::snprintf(buf, sizeof(buf), "CPU%-4d", r.cpu);
            line += buf;
        }
        std::string value, unit = "    ";
        if (e.k == kind::clock_prof) {
            value = group(fmt("%.2f", r.mean / 1e6), o_.big_num);
            unit = "msec";
        } else {
            value = group(fmt("%.0f", r.mean), o_.big_num);
            if (r.runs.size() == 1)
                value = o_.big_num ? hwpmc_tools::thousands(r.runs[0]) : std::to_string(r.runs[0]);
        }
        char buf[512];
        std::snprintf(buf, sizeof(buf), "%18s %s %-26s", value.c_str(), unit.c_str(),
                      event_name(e).c_str());
        line += buf;
        if (m) {
            const char *f = m->unit == "insn per cycle" ? "%9.2f" : "%9.3f";
            line += " # " + fmt(f, m->value) + " " + m->unit;
        }
        if (r.runs.size() > 1) {
            size_t pad = line.size() < 80 ? 80 - line.size() : 1;
            line += std::string(pad, ' ') + fmt("( +- %5.2f%% )", r.rel_sd);
        }
        std::fprintf(out_, "%s\n", line.c_str());
    }

    void csv_row(const event_req &e, const row &r, const std::optional<metric> &m, double elapsed,
                 double interval) {
        std::vector<std::string> f;
        if (interval >= 0)
            f.push_back(fmt("%.9f", interval));
        if (r.cpu >= 0)
            f.push_back("CPU" + std::to_string(r.cpu));
        f.push_back(value_text(e, r));
        f.push_back(e.k == kind::clock_prof ? "msec" : "");
        f.push_back(event_name(e));
        if (r.runs.size() > 1)
            f.push_back(fmt("%.2f%%", r.rel_sd));
        f.push_back(fmt("%.0f", elapsed * 1e9));
        f.push_back("100.00");
        f.push_back(m ? fmt("%.3f", m->value) : "");
        f.push_back(m ? m->unit : "");
        std::string line;
        for (size_t i = 0; i < f.size(); i++)
            line += (i ? o_.sep : "") + field(f[i]);
        std::fprintf(out_, "%s\n", line.c_str());
    }

    void json_row(const event_req &e, const row &r, const std::optional<metric> &m, double elapsed,
                  double interval) {
        std::string s = "{";
        if (interval >= 0)
            s += "\"interval\" : " + fmt("%.9f", interval) + ", ";
        if (r.cpu >= 0)
            s += "\"cpu\" : " + std::to_string(r.cpu) + ", ";
        s += "\"counter-value\" : " + value_text(e, r);
        s += ", \"unit\" : " + json_str(e.k == kind::clock_prof ? "msec" : "");
        s += ", \"event\" : " + json_str(event_name(e));
        s += ", \"scope\" : " + json_str(scope_word(e.sc));
        s += ", \"count\" : " +
             (r.runs.size() == 1 ? std::to_string(r.runs[0]) : fmt("%.2f", r.mean));
        if (r.runs.size() > 1)
            s += ", \"variance\" : " + fmt("%.2f", r.rel_sd);
        s += ", \"event-runtime\" : " + fmt("%.0f", elapsed * 1e9);
        s += ", \"pcnt-running\" : 100.00";
        if (m)
            s += ", \"metric-value\" : " + fmt("%.6f", m->value) +
                 ", \"metric-unit\" : " + json_str(m->unit);
        s += "}";
        std::fprintf(out_, "%s\n", s.c_str());
    }

    FILE *out_;
    const options &o_;
};

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
run_result run_once(options &o, counters &c, printer &pr) {
    run_result res;
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
            if (!attach_all(c, o, ch.pid())) {
                res.failed = true;
                return res;
            }
        } else {
            for (pid_t p : o.pids)
                if (!attach_all(c, o, p)) {
                    res.failed = true;
                    return res;
                }
        }
    }
    if (!start_all(c, o)) {
        res.failed = true;
        return res;
    }
    // The TSC can be neither written nor stopped: count from its value now.
    std::vector<uint64_t> base(c.pmcs.size(), 0);
    for (size_t i = 0; i < c.pmcs.size(); i++) {
        if (c.pmcs[i].cls() != PMC_CLASS_TSC)
            continue;
        try {
            base[i] = c.pmcs[i].read();
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
            stop_all(c);
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
        if (!read_all(c, o, &cur))
            return false;
        std::vector<uint64_t> delta(cur.size());
        for (size_t i = 0; i < cur.size(); i++)
            delta[i] = cur[i] - last[i];
        last = cur;
        if (!header_done) {
            pr.interval_header();
            header_done = true;
        }
        pr.counters(make_rows(o, c, {delta}), t - last_tick, t - t0);
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
    stop_all(c);
    if (!read_all(c, o, &res.values))
        res.failed = true;
    if (o.interval_ms > 0 && !res.failed && t1 - last_tick > 1e-4) {
        // The last, partial interval.
        std::vector<uint64_t> delta(res.values.size());
        for (size_t i = 0; i < delta.size(); i++)
            delta[i] = res.values[i] - last[i];
        if (!header_done)
            pr.interval_header();
        pr.counters(make_rows(o, c, {delta}), t1 - last_tick, t1 - t0);
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
    static const struct option longopts[] = {
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
        {nullptr, 0, nullptr, 0},
    };
    options o;
    bool csv = false, json = false, want_version = false;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+e:p:t:s:aC:c:AdI:w:r:x:jo:l:vhV", longopts, nullptr)) !=
           -1) {
        switch (opt) {
        case 'e':
            add_events(o, optarg, scope::process, true);
            break;
        case 'p':
            if (all_digits_commas(optarg)) {
                auto p = parse_pids(optarg, "-p");
                o.pids.insert(o.pids.end(), p.begin(), p.end());
            } else {
                add_events(o, optarg, scope::process, false);
            }
            break;
        case 't': {
            auto p = parse_pids(optarg, "-t");
            o.pids.insert(o.pids.end(), p.begin(), p.end());
            break;
        }
        case 's':
            add_events(o, optarg, scope::system, false);
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
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            want_version = true;
            break;
        case '?':
        default:
            if (optopt && std::strchr("PSOTRgGNDFmMqkzn", optopt))
                usage_error(std::string("option -") + static_cast<char>(optopt) +
                            " is a pmcstat sampling or log option: hwpmc-stat only counts "
                            "(hwpmc-record samples)");
            hwpmc_tools::bad_option(prog, argv, "eptsCcIwrxol");
        }
    }
    for (int i = optind; i < argc; i++)
        o.command.push_back(argv[i]);

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
    if (!any_events) {
        for (auto name :
             {"CLOCK.PROF", "SCHED.SWITCH", "PAGE_FAULT.ALL", "cycles", "instructions"}) {
            event_req e;
            e.spec = e.name = name;
            e.optional = true;
            e.scope_from_a = true;
            e.k = kind_of(e.spec);
            o.events.push_back(e);
        }
    }
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
    counters c;
    int status = 0;
    for (int run = 0; run < o.repeat; run++) {
        if (!allocate_all(dev, o, o.cpus, &c, run == 0))
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
        pr.counters(make_rows(o, c, runs), [&] {
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
