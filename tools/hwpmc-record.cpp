// SPDX-License-Identifier: GPL-2.0
// hwpmc-record: sample a command, running processes, or every CPU into a
// hwpmc log file, like `perf record` and FreeBSD's `pmcstat -P/-S -O`.
//
// The log is configured first (so that PMCALLOCATE records name the
// events), then the sampling PMCs are allocated.  A command is forked
// stopped (it waits on a pipe), the process PMCs are attached to it with
// PMC_F_DESCENDANTS and started, and only then does it exec: the log holds
// its PMCATTACH, PROCEXEC and MAP_IN records before its first sample.  At
// the end the PMCs are stopped and the log closed (CLOSELOG drains the
// sample rings into it), the kernel symbols that its samples' kernel
// addresses need are appended to it (profile/saved_ksyms.hpp), and the
// file is read back for the summary.
#include "lib/common.hpp"
#include "lib/numbers.hpp"
#include "lib/run.hpp"
#include "lib/sampling.hpp"
#include "profile/saved_ksyms.hpp"
#include "stat/side_counts.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>
#include <hwpmc/pmclog.h>

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <system_error>
#include <vector>

namespace {

const char *prog = "hwpmc-record";

using namespace hwpmc_tools;

struct options : sampling_options {
    std::vector<std::string> count_events; // --count-event: counted, not sampled
    std::string count_output;              // --count-output (default: stderr)
    std::string output = "hwpmc.data";
    double duration = 0; // -l SECS (0: none)
    bool quiet = false;
    int verbose = 0;
};

void usage(FILE *out) {
    std::fprintf(
        out,
        "usage: %s [-e SPEC]... [-F HZ | -c PERIOD] [-g | --call-graph fp|dwarf[,SIZE]]\n"
        "                    [-a [-C CPUS] | -p PID[,PID]] [--system-event SPEC]...\n"
        "                    [--count-event SPEC]... [--count-output FILE] [--no-inherit]\n"
        "                    [-o FILE] [-l SECS] [-q] [-v] [--] [COMMAND [ARG]...]\n"
        "\n"
        "Sample COMMAND (and the processes it forks), running processes (-p: until\n"
        "they exit or SIGINT), or every CPU (-a: while COMMAND runs, or until SIGINT)\n"
        "into a hwpmc log file; read it with hwpmc-report.\n"
        "\n"
        "  -e SPEC          event to sample (pmc_allocate() specifier; repeatable);\n"
        "                   default SOFT-CLOCK.PROF (CPU time), which needs no PMU\n"
        "  -F HZ            samples per second of CPU time, for CLOCK.PROF (default %g)\n"
        "  -c PERIOD        sample every PERIOD events (CLOCK.PROF: nanoseconds of CPU\n"
        "                   time); default for other events: 1 (SOFT), 1,000,000 (hardware)\n"
        "  -g               record callchains (kernel and user, through frame pointers;\n"
        "                   with the user registers and 64 bytes of user stack, which\n"
        "                   give a function without a frame (a leaf) its caller)\n"
        "  --call-graph fp  the same\n"
        "  --call-graph dwarf[,SIZE]\n"
        "                   also each sample's user registers and SIZE bytes of its\n"
        "                   user stack (default 8192), for hwpmc-report to unwind\n"
        "                   through DWARF CFI: right without frame pointers\n"
        "  -a               system-wide: one sampling PMC per CPU (needs root/CAP_PERFMON)\n"
        "  -C CPUS          with -a or --system-event: only these CPUs (e.g. 0,2-3)\n"
        "  --system-event SPEC  also sample SPEC on every CPU (system-wide, one PMC per\n"
        "                   CPU) next to the -e events of COMMAND or -p (pmcstat -P -S)\n"
        "  --count-event SPEC  also count SPEC in COMMAND or -p (hwpmc-stat's -p SPEC),\n"
        "                   printed at the end as hwpmc-stat prints it (pmcstat -p -P)\n"
        "  --count-output FILE  those counts into FILE (default: standard error)\n"
        "  -p PID[,PID]     sample running processes (and what they fork from now on)\n"
        "  --no-inherit     do not sample descendants forked after attaching\n"
        "  -o FILE          the log file (default hwpmc.data; an old one becomes FILE.old)\n"
        "  -l SECS          stop after SECS seconds (a COMMAND gets SIGTERM)\n"
        "  -q               no summary\n"
        "  -v               more detail (driver statistics)\n"
        "  -h, --help       this help\n"
        "\n"
        "Exit status: COMMAND's (128+N if signal N killed it; 127 not found, 126 not\n"
        "executable); 0 without a command; 1 for errors of the tool; 2 for usage errors.\n",
        prog, default_sampling_hz);
}

// ---------------------------------------------------------------------------
// Reading the log back for the summary

struct log_summary {
    bool read_ok = false;
    std::string error;
    uint64_t samples = 0;
    uint64_t dropped_samples = 0, dropped_records = 0;
    uint64_t throttled = 0; // not taken: a CPU at kernel.hwpmc.max_sample_rate
    uint64_t records = 0;
    bool closed = false; // CLOSELOG seen last
    std::map<uint32_t, uint64_t> per_pmc;
    uint64_t user_only = 0, with_kernel = 0;
};

log_summary summarize(const std::string &path) {
    log_summary s;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        s.error = std::strerror(errno);
        return s;
    }
    try {
        hwpmc::log_reader r(fd);
        for (const pmclog_ev &ev : r) {
            s.records++;
            s.closed = ev.pl_type == PMCLOG_TYPE_CLOSELOG;
            switch (ev.pl_type) {
            case PMCLOG_TYPE_CALLCHAIN:
                s.samples++;
                s.per_pmc[ev.pl_u.pl_cc.pl_pmcid]++;
                if (ev.pl_u.pl_cc.pl_nkernel)
                    s.with_kernel++;
                else
                    s.user_only++;
                break;
            case PMCLOG_TYPE_DROPNOTIFY:
                s.dropped_samples += ev.pl_u.pl_dn.pl_samples;
                s.dropped_records += ev.pl_u.pl_dn.pl_records;
                s.throttled += ev.pl_u.pl_dn.pl_throttled;
                break;
            default:
                break;
            }
        }
        s.read_ok = true;
    } catch (const std::system_error &e) {
        s.error = e.what();
    }
    close(fd);
    return s;
}

mode_t st_of(int fd) {
    struct stat st {};
    return fstat(fd, &st) == 0 ? st.st_mode : 0;
}

std::string pct(uint64_t part, uint64_t whole) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f%%",
                  whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return buf;
}

void print_summary(const options &o, const std::string &rate0, const log_summary &ls,
                   const pmc_op_getdriverstats &d0, const pmc_op_getdriverstats &d1, double elapsed,
                   uint64_t file_size) {
    if (!ls.read_ok) {
        std::fprintf(stderr, "%s: cannot read back %s: %s\n", prog, o.output.c_str(),
                     ls.error.c_str());
        return;
    }
    uint64_t taken = ls.samples + ls.dropped_samples + ls.throttled;
    std::string events;
    for (const auto &spec : o.events)
        events += (events.empty() ? "" : ", ") + spec;
    for (const auto &spec : o.system_events)
        events += ", " + spec + " (system-wide)";
    std::fprintf(stderr, "%s: %s samples of %s in %.2f s", prog, thousands(ls.samples).c_str(),
                 events.c_str(), elapsed);
    if (o.events.size() == 1 && o.system_events.empty())
        std::fprintf(stderr, " (%s%s)", rate0.c_str(), o.system_wide ? " per CPU" : "");
    std::fprintf(stderr, ", %s dropped", thousands(ls.dropped_samples).c_str());
    if (ls.throttled)
        std::fprintf(stderr, ", %s throttled", thousands(ls.throttled).c_str());
    std::fputc('\n', stderr);
    std::fprintf(stderr, "%s: wrote %s (%s, %s records)%s\n", prog, o.output.c_str(),
                 human_bytes(file_size).c_str(), thousands(ls.records).c_str(),
                 o.ustack_size ? ", with callchains and user stacks"
                 : o.callchain ? ", with callchains"
                               : "");
    if (!ls.closed)
        std::fprintf(stderr, "%s: warning: the log does not end with CLOSELOG\n", prog);
    // The driver's own count covers every user of the module, and samples
    // lost with no log to report them in.
    uint64_t driver_drops = d1.pm_samples_dropped - d0.pm_samples_dropped;
    if (driver_drops > ls.dropped_samples)
        std::fprintf(stderr,
                     "%s: note: the driver counted %s samples dropped during the recording "
                     "(of all its users; this log reports %s)\n",
                     prog, thousands(driver_drops).c_str(), thousands(ls.dropped_samples).c_str());
    if (ls.dropped_samples || ls.dropped_records) {
        std::string nsamples = module_param("nsamples");
        std::string nbuffers = module_param("nbuffers");
        std::string lbs = module_param("logbuffersize");
        std::fprintf(stderr,
                     "%s: warning: %s of %s samples (%s) and %s other records were dropped:\n"
                     "  the per-CPU sample rings or the log buffers were full.  Sample at a\n"
                     "  lower rate (-F / -c), or load hwpmc with more room: nsamples=%s (ring\n"
                     "  entries per CPU), nbuffers=%s (log buffers per CPU), logbuffersize=%s\n"
                     "  (KB per buffer), e.g. insmod hwpmc.ko nsamples=4096 nbuffers=128.\n",
                     prog, thousands(ls.dropped_samples).c_str(), thousands(taken).c_str(),
                     pct(ls.dropped_samples, taken).c_str(), thousands(ls.dropped_records).c_str(),
                     nsamples.empty() ? "?" : nsamples.c_str(),
                     nbuffers.empty() ? "?" : nbuffers.c_str(), lbs.empty() ? "?" : lbs.c_str());
    }
    if (ls.throttled)
        std::fprintf(stderr,
                     "%s: note: %s of %s samples were not taken: a CPU reached the\n"
                     "  sampling-rate ceiling (sysctl kernel.hwpmc.max_sample_rate, per CPU);\n"
                     "  sample at a lower rate (-F / -c).\n",
                     prog, thousands(ls.throttled).c_str(), thousands(taken).c_str());
    if (ls.samples == 0)
        std::fprintf(stderr, "%s: no samples: the target used less CPU time than one period%s\n",
                     prog, o.freq > 0 || o.period ? "" : " (try -F 10000)");
    if (o.verbose) {
        std::fprintf(
            stderr,
            "%s: driver statistics during the recording (all users): %s samples "
            "taken, %s dropped (%s ring full), %s throttled, %s log bytes, %s buffer "
            "requests failed\n",
            prog, thousands(d1.pm_samples_taken - d0.pm_samples_taken).c_str(),
            thousands(d1.pm_samples_dropped - d0.pm_samples_dropped).c_str(),
            thousands(d1.pm_intr_bufferfull - d0.pm_intr_bufferfull).c_str(),
            thousands(d1.pm_samples_throttled - d0.pm_samples_throttled).c_str(),
            thousands(d1.pm_log_bytes - d0.pm_log_bytes).c_str(),
            thousands(d1.pm_buffer_requests_failed - d0.pm_buffer_requests_failed).c_str());
        std::fprintf(stderr, "%s: %s samples in user mode only, %s with kernel frames\n", prog,
                     thousands(ls.user_only).c_str(), thousands(ls.with_kernel).c_str());
    }
}

// ---------------------------------------------------------------------------

int run(options &o) {
    hwpmc::device dev = open_device(prog);
    if (o.system_wide || !o.system_events.empty())
        o.cpus = system_cpus(prog, dev, o.cpus);

    // The old file becomes FILE.old, as perf does.
    struct stat st;
    if (stat(o.output.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        std::string old = o.output + ".old";
        if (rename(o.output.c_str(), old.c_str()) < 0)
            std::fprintf(stderr, "%s: warning: cannot rename %s to %s: %s\n", prog,
                         o.output.c_str(), old.c_str(), std::strerror(errno));
    }
    int logfd = open(o.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (logfd < 0) {
        std::fprintf(stderr, "%s: cannot create %s: %s\n", prog, o.output.c_str(),
                     std::strerror(errno));
        return 1;
    }
    try {
        dev.configure_log(logfd);
    } catch (const std::system_error &e) {
        explain(prog, "cannot configure the log", e.code().value());
        return 1;
    }

    samplers pmcs(prog);
    if (!pmcs.allocate(dev, o))
        return 1;
    hwpmc_stat::side_counts counts(prog);
    if (!o.count_events.empty() && !counts.allocate(dev, o.count_events, o.inherit))
        return 1;
    FILE *count_out = stderr;
    if (!o.count_output.empty()) {
        count_out = std::fopen(o.count_output.c_str(), "we");
        if (!count_out) {
            std::fprintf(stderr, "%s: cannot create %s: %s\n", prog, o.count_output.c_str(),
                         std::strerror(errno));
            return 1;
        }
    }
    pmc_op_getdriverstats d0{}, d1{};
    try {
        d0 = dev.driver_stats();
    } catch (const std::system_error &) {
    }
    stopped_child ch;
    if (!pmcs.start(o, ch))
        return 1;
    // The counters follow the samplers' targets, started before the
    // command is let go.
    if (!counts.empty() && !counts.start(o.pids.empty() ? std::vector<pid_t>{ch.pid()} : o.pids))
        return 1;
    double t0 = monotonic_seconds();

    int status = 0;
    bool failed = false, exec_failed = false;
    if (ch.pid() > 0) {
        signals::forward_to(ch.pid());
        if (int st = ch.start(prog, o.command)) {
            status = st;
            failed = exec_failed = true;
        }
    }

    const bool progress = !o.quiet && isatty(2);
    bool progress_shown = false;
    double next_progress = t0 + 1;
    run_watch watch(ch.pid(), o.pids);
    if (o.duration > 0)
        watch.set_deadline(t0 + o.duration);
    while (!exec_failed) {
        if (watch.wait(progress ? next_progress : 0) != run_watch::end::none)
            break;
        double t = monotonic_seconds();
        if (progress && t >= next_progress) {
            // The samples and log bytes of every hwpmc user (the log's own
            // size is not asked of the file: on a network file system such
            // as 9p a stat(2) during the writes can lose cached data).
            try {
                auto d = dev.driver_stats();
                uint64_t bytes = d.pm_log_bytes - d0.pm_log_bytes;
                std::string size = bytes ? ", " + human_bytes(bytes) + " logged" : "";
                std::fprintf(stderr, "\r[ %s: %.0f s, %s samples%s ]\033[K", prog, t - t0,
                             thousands(d.pm_samples_taken - d0.pm_samples_taken).c_str(),
                             size.c_str());
                progress_shown = true;
            } catch (const std::system_error &) {
            }
            while (next_progress <= t)
                next_progress += 1;
        }
    }
    const int wstatus = watch.wstatus();
    double elapsed = monotonic_seconds() - t0;
    signals::forward_to(0);
    if (progress_shown)
        std::fprintf(stderr, "\r\033[K");
    pmcs.stop();
    counts.stop();
    if (!counts.empty()) {
        std::string what = o.pids.empty() ? "'" + o.command[0] + "'" : "process";
        if (o.pids.size() > 1 || (o.pids.empty() && o.command.size() > 1))
            what = o.pids.empty() ? "'" + o.command[0] + " ...'" : "processes";
        if (!counts.print(count_out, what, elapsed))
            failed = true;
        if (count_out != stderr)
            std::fclose(count_out);
    }
    // CLOSELOG: the rings are drained, the CLOSELOG record written, and the
    // writer's error (if any) returned.
    try {
        dev.close_log();
    } catch (const std::system_error &e) {
        int err = e.code().value();
        std::fprintf(stderr, "%s: writing %s failed: %s\n", prog, o.output.c_str(),
                     std::strerror(err));
        if (err == ENOSPC)
            std::fprintf(stderr, "  The file system is full: the log is incomplete.\n");
        failed = true;
    }
    try {
        d1 = dev.driver_stats();
    } catch (const std::system_error &) {
        d1 = d0;
    }
    const std::string rate0 = pmcs.rate0();
    pmcs.clear(); // release the PMCs
    // The kernel symbols the samples need, saved with the log: hwpmc-report
    // names kernel frames from them, not from its machine's /proc/kallsyms.
    if (!failed && S_ISREG(st_of(logfd))) {
        std::string why;
        const long n = save_kernel_symbols(o.output, "/proc/kallsyms", &why);
        if (n < 0)
            std::fprintf(stderr, "%s: warning: cannot save the kernel symbols in %s: %s\n", prog,
                         o.output.c_str(), why.c_str());
        else if (o.verbose && n > 0)
            std::fprintf(stderr, "%s: saved %ld kernel symbols in %s\n", prog, n, o.output.c_str());
    }
    struct stat fs {};
    fstat(logfd, &fs);
    close(logfd);

    if (ch.pid() > 0 && !failed) {
        status = exit_status_of(wstatus);
        if (!o.quiet && (WIFSIGNALED(wstatus) || status != 0))
            std::fprintf(stderr, "%s: '%s' %s %d\n", prog, o.command[0].c_str(),
                         WIFSIGNALED(wstatus) ? "was killed by signal" : "exited with status",
                         WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : status);
    }
    if (!o.quiet && !exec_failed) {
        log_summary ls = summarize(o.output);
        print_summary(o, rate0, ls, d0, d1, elapsed, static_cast<uint64_t>(fs.st_size));
        if (!ls.read_ok)
            return 1;
    }
    return failed && status == 0 ? 1 : status;
}

} // namespace

int main(int argc, char **argv) {
    options o;
    option_reader r =
        sampling_options_reader(prog, argc, argv, "o:l:qvh",
                                {
                                    {"output", required_argument, nullptr, 'o'},
                                    {"quiet", no_argument, nullptr, 'q'},
                                    {"verbose", no_argument, nullptr, 'v'},
                                    {"help", no_argument, nullptr, 'h'},
                                    {"system-event", required_argument, nullptr, opt_system_event},
                                    {"count-event", required_argument, nullptr, opt_count_event},
                                    {"count-output", required_argument, nullptr, opt_count_output},
                                },
                                usage);
    int opt;
    while ((opt = next_tool_option(prog, r, &o)) != -1) {
        switch (opt) {
        case 'o':
            if (!*optarg)
                usage_error(prog, "-o wants a file name");
            o.output = optarg;
            break;
        case 'l':
            o.duration = parse_positive(prog, optarg, "-l");
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'v':
            o.verbose++;
            break;
        case opt_system_event:
            if (!*optarg)
                usage_error(prog, "--system-event wants an event specifier");
            o.system_events.push_back(optarg);
            break;
        case opt_count_event:
            if (!*optarg)
                usage_error(prog, "--count-event wants an event specifier");
            o.count_events.push_back(optarg);
            break;
        case opt_count_output:
            if (!*optarg)
                usage_error(prog, "--count-output wants a file name");
            o.count_output = optarg;
            break;
        default:
            r.bad("eFcCpol");
        }
    }
    o.command = r.operands();
    if (o.system_wide && !o.pids.empty())
        usage_error(prog, "-a and -p exclude each other");
    if (!o.cpus.empty() && !o.system_wide && o.system_events.empty())
        usage_error(prog, "-C needs -a or --system-event");
    if (o.command.empty() && o.pids.empty() && !o.system_wide)
        usage_error(prog, "nothing to sample: give a COMMAND, -p PID or -a");
    if (!o.count_events.empty() && o.system_wide)
        usage_error(prog, "--count-event counts COMMAND or -p: not with -a");
    if (!o.count_output.empty() && o.count_events.empty())
        usage_error(prog, "--count-output without --count-event");
    if (o.freq > 0 && o.freq > 1e6)
        usage_error(prog, "-F: at most 1000000 Hz");
    finish_sampling_options(prog, &o);
    o.leaf_stack = true; // -g: the leaf's caller too (lib/leaf_stack.hpp)
    return run(o);
}
