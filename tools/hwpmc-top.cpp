// SPDX-License-Identifier: GPL-2.0
// hwpmc-top: a live view of the hottest functions, like FreeBSD's
// `pmcstat -T` and `perf top`.
//
// The sampling PMCs log into a pipe.  A thread reads the pipe as the
// module's writer fills it (so that the writer never waits on a full pipe
// while the main thread flushes); every refresh the main thread asks the
// module to flush its buffers (FLUSHLOG), feeds what arrived to a fed
// pmclog(3) reader, resolves the new samples (hwpmc-report's symbolization)
// and redraws the profile of the last interval (or, with --cumulative, of
// everything so far).
#include "lib/common.hpp"
#include "lib/lists.hpp"
#include "lib/numbers.hpp"
#include "lib/run.hpp"
#include "lib/sampling.hpp"
#include "profile/output.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>
#include <hwpmc/pmclog.h>

#include <fcntl.h>
#include <getopt.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

const char *prog = "hwpmc-top";

using namespace hwpmc_tools;

struct options : sampling_options {
    double delay = 1;        // -d SECS between refreshes
    size_t lines = 0;        // -n: entries shown (0: what fits)
    long iterations = 0;     // --iterations: stop after this many (0: never)
    double duration = 0;     // -l SECS
    bool cumulative = false; // everything so far, not the last interval
    std::vector<sort_key> keys = {sort_key::comm, sort_key::dso, sort_key::sym};
    bool user_only = false;
};

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: %s [-e SPEC]... [-F HZ | -c PERIOD] [-g] [-a [-C CPUS] | -p PID[,PID]]\n"
                 "                 [-d SECS] [-n LINES] [--sort KEYS] [--cumulative] [-u]\n"
                 "                 [-l SECS] [--iterations N] [--] [COMMAND [ARG]...]\n"
                 "\n"
                 "Show the hottest functions, refreshed every few seconds: of the whole system\n"
                 "(the default, and -a: needs root/CAP_PERFMON), of running processes (-p), or of\n"
                 "COMMAND and its descendants (until it exits).  Ctrl-C ends it.\n"
                 "\n"
                 "  -e SPEC          event to sample (default SOFT-CLOCK.PROF, CPU time)\n"
                 "  -F HZ            samples per second of CPU time, for CLOCK.PROF (default %g)\n"
                 "  -c PERIOD        sample every PERIOD events\n"
                 "  -g               record callchains: the Children column counts callers too\n"
                 "  -a, -C CPUS      system-wide, on every CPU or on these\n"
                 "  -p PID[,PID]     sample running processes\n"
                 "  -d SECS          seconds between refreshes (default 1)\n"
                 "  -n LINES         entries shown (default: what fits the terminal, or 20)\n"
                 "  -s, --sort KEYS  comm, pid, tid, dso, sym, cpu (default comm,dso,sym)\n"
                 "  --cumulative     everything since the start, not the last interval\n"
                 "  -u, --user       leave out kernel frames\n"
                 "  -l SECS          stop after SECS seconds\n"
                 "  --iterations N   stop after N refreshes\n"
                 "  -h, --help       this help\n"
                 "\n"
                 "Without a terminal each refresh is printed after the previous one.  Exit\n"
                 "status: COMMAND's, else 0; 1 for errors of the tool; 2 for usage errors.\n",
                 prog, default_sampling_hz);
}

// What the pipe delivered, handed from the reading thread to the main one.
class pipe_reader {
public:
    explicit pipe_reader(int fd) : fd_(fd), thread_([this] { run(); }) {}
    ~pipe_reader() {
        if (thread_.joinable())
            thread_.join();
    }
    // Everything read since the last call.
    std::vector<std::byte> take() {
        std::lock_guard<std::mutex> g(m_);
        std::vector<std::byte> out;
        out.swap(buf_);
        return out;
    }
    // Wait for the end of the pipe (once the module has let it go).
    void join() {
        if (thread_.joinable())
            thread_.join();
    }
    int error() const { return err_; }

private:
    void run() {
        std::vector<std::byte> chunk(1 << 20);
        for (;;) {
            ssize_t n = read(fd_, chunk.data(), chunk.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                err_ = n < 0 ? errno : 0;
                return;
            }
            std::lock_guard<std::mutex> g(m_);
            buf_.insert(buf_.end(), chunk.begin(), chunk.begin() + n);
        }
    }
    int fd_;
    std::mutex m_;
    std::vector<std::byte> buf_;
    int err_ = 0;
    std::thread thread_;
};

size_t terminal_rows() {
    struct winsize ws {};
    if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
        return ws.ws_row;
    return 0;
}

struct view {
    const options &o;
    log_data data;
    symbolizer sym;
    resolver res{data.procs, sym, o.user_only};
    profile prof{res, o.keys}; // aggregated: it keeps no sample
    hwpmc::log_reader reader;  // fed
    uint64_t total = 0, dropped = 0;
    bool tty = isatty(1);

    explicit view(const options &opt) : o(opt) {}

    // Feed what arrived; false (with a message) on a corrupt log.
    bool feed(const std::vector<std::byte> &bytes) {
        try {
            if (!bytes.empty())
                reader.feed(bytes);
            while (const pmclog_ev *ev = reader.next())
                data.add(*ev);
        } catch (const std::system_error &e) {
            std::fprintf(stderr, "%s: reading the log: %s\n", prog, e.what());
            return false;
        }
        data.apply();
        data.name_from_proc();
        for (const raw_sample &r : data.samples) {
            sample s = res.resolve(r);
            if (s.frames.empty())
                continue;
            prof.add(s);
            total++;
        }
        data.samples.clear();
        return true;
    }

    // False once stdout is a pipe nobody reads (SIGPIPE is ignored while a
    // command runs): the view ends quietly, as when its iterations are done.
    bool draw(double elapsed, double interval, const std::string &what) {
        size_t rows = terminal_rows();
        text_options t;
        t.by_children = false;
        t.max_entries = o.lines ? o.lines : rows > 10 ? rows - 9 : 20;
        if (tty)
            std::printf("\033[H\033[2J");
        else
            std::printf("\n");
        uint64_t lost = data.dropped_samples - dropped;
        dropped = data.dropped_samples;
        std::printf("%s: %s, %.1f s\n", prog, what.c_str(), elapsed);
        std::printf("%s samples %s, %s in all; %s dropped%s\n", thousands(prof.total()).c_str(),
                    o.cumulative ? "so far" : ("in the last " + fmt(interval) + " s").c_str(),
                    thousands(total).c_str(), thousands(lost).c_str(),
                    lost ? " (lower the rate: -F)" : "");
        if (data.procs.processes() == 0 && total == 0)
            std::printf("(no samples yet)\n");
        std::printf("\n");
        if (prof.total())
            print_profile(stdout, prof, res, t);
        const bool closed = std::fflush(stdout) != 0 && errno == EPIPE;
        if (!o.cumulative)
            prof.clear();
        return !closed;
    }

    static std::string fmt(double v) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.1f", v);
        return buf;
    }
};

int run(options &o) {
    hwpmc::device dev = open_device(prog);
    if (o.system_wide)
        o.cpus = system_cpus(prog, dev, o.cpus);

    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        std::fprintf(stderr, "%s: pipe: %s\n", prog, std::strerror(errno));
        return 1;
    }
    fcntl(p[1], F_SETPIPE_SZ, 1 << 20); // room for a few buffers; best effort
    try {
        dev.configure_log(p[1]);
    } catch (const std::system_error &e) {
        explain(prog, "cannot configure the log", e.code().value());
        return 1;
    }
    close(p[1]); // the module holds its own reference: EOF once it lets go
    pipe_reader pr(p[0]);

    samplers pmcs(prog);
    auto give_up = [&] {
        pmcs.clear();
        try {
            dev.close_log();
        } catch (const std::system_error &) {
        }
        pr.join();
        close(p[0]);
        return 1;
    };
    if (!pmcs.allocate(dev, o))
        return give_up();
    stopped_child ch;
    if (!pmcs.start(o, ch))
        return give_up();

    std::string what = o.events[0];
    for (size_t i = 1; i < o.events.size(); i++)
        what += ", " + o.events[i];
    if (o.events.size() == 1)
        what += " " + pmcs.rate0();
    if (o.system_wide)
        what += " on CPUs " + cpu_list_string(o.cpus);
    else if (!o.pids.empty()) {
        what += " of process";
        for (pid_t pid : o.pids)
            what += " " + std::to_string(pid);
    } else {
        what += " of '" + o.command[0] + "'";
    }

    int status = 0;
    if (ch.pid() > 0) {
        signals::forward_to(ch.pid());
        if (int st = ch.start(prog, o.command)) {
            signals::forward_to(0);
            give_up();
            return st;
        }
    }

    view v(o);
    double t0 = monotonic_seconds(), last = t0, next = t0 + o.delay;
    double deadline = o.duration > 0 ? t0 + o.duration : 0;
    long iterations = 0;
    bool failed = false, target_ended = false;
    int wstatus = 0;
    run_watch watch(ch.pid(), o.pids);
    for (;;) {
        double t = monotonic_seconds();
        if (t >= next || (deadline > 0 && t >= deadline)) {
            try {
                dev.flush_log();
            } catch (const std::system_error &e) {
                std::fprintf(stderr, "%s: the log failed: %s\n", prog,
                             std::strerror(e.code().value()));
                failed = true;
                break;
            }
            // The writer thread writes what FLUSHLOG handed it; give it a
            // moment to reach the pipe.
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, nullptr);
            if (!v.feed(pr.take())) {
                failed = true;
                break;
            }
            t = monotonic_seconds();
            const bool reader = v.draw(t - t0, t - last, what);
            last = t;
            if (!reader)
                break;
            while (next <= t)
                next += o.delay;
            if (o.iterations && ++iterations >= o.iterations)
                break;
            if (deadline > 0 && t >= deadline)
                break;
        }
        double wake = deadline > 0 ? std::min(next, deadline) : next;
        auto why = watch.wait(wake);
        if (why == run_watch::end::command) {
            wstatus = watch.wstatus();
            status = exit_status_of(wstatus);
            target_ended = true;
            break;
        }
        if (why == run_watch::end::processes)
            target_ended = true;
        if (why != run_watch::end::none)
            break;
    }
    signals::forward_to(0);
    pmcs.stop();
    try {
        dev.close_log();
    } catch (const std::system_error &e) {
        if (!failed)
            std::fprintf(stderr, "%s: the log failed: %s\n", prog, std::strerror(e.code().value()));
        failed = true;
    }
    pmcs.clear();
    pr.join();
    close(p[0]);
    // When the command (or a process of -p) ended: what came after the
    // last refresh (all of it, for a short command).
    if (target_ended && !failed && v.feed(pr.take()) && (v.prof.total() || iterations == 0)) {
        double t = monotonic_seconds();
        v.draw(t - t0, t - last, what);
    }
    if (ch.pid() > 0 && !WIFEXITED(wstatus) && !WIFSIGNALED(wstatus)) {
        // Stopped early (-l, --iterations): the command goes on alone.
        status = 0;
    }
    if (failed && status == 0)
        status = 1;
    return status;
}

} // namespace

int main(int argc, char **argv) {
    enum {
        opt_cumulative = 256,
        opt_iterations,
    };
    options o;
    option_reader r =
        sampling_options_reader(prog, argc, argv, "d:n:s:ul:h",
                                {
                                    {"delay", required_argument, nullptr, 'd'},
                                    {"lines", required_argument, nullptr, 'n'},
                                    {"sort", required_argument, nullptr, 's'},
                                    {"cumulative", no_argument, nullptr, opt_cumulative},
                                    {"user", no_argument, nullptr, 'u'},
                                    {"iterations", required_argument, nullptr, opt_iterations},
                                    {"help", no_argument, nullptr, 'h'},
                                },
                                usage);
    int opt;
    while ((opt = next_tool_option(prog, r, &o)) != -1) {
        switch (opt) {
        case 'd':
            o.delay = parse_positive(prog, optarg, "-d");
            if (o.delay < 0.1)
                usage_error(prog, "-d: at least 0.1 seconds");
            break;
        case 'n':
            o.lines = static_cast<size_t>(parse_count(prog, optarg, "-n"));
            break;
        case 's': {
            std::string bad;
            if (!parse_sort_keys(optarg, &o.keys, &bad))
                usage_error(prog, "--sort: unknown key '" + bad +
                                      "' (choose from comm, pid, tid, dso, sym, cpu)");
            break;
        }
        case opt_cumulative:
            o.cumulative = true;
            break;
        case 'u':
            o.user_only = true;
            break;
        case 'l':
            o.duration = parse_positive(prog, optarg, "-l");
            break;
        case opt_iterations:
            o.iterations = static_cast<long>(parse_count(prog, optarg, "--iterations"));
            break;
        default:
            r.bad("eFcCpdnsl");
        }
    }
    if (!o.cpus.empty()) // -C alone: those CPUs, system-wide
        o.system_wide = true;
    o.command = r.operands();
    if (o.system_wide && !o.pids.empty())
        usage_error(prog, "-a and -p exclude each other");
    if (o.pids.empty() && o.command.empty())
        o.system_wide = true;
    finish_sampling_options(prog, &o);
    if (o.ustack_size) // nothing here would unwind the stacks
        usage_error(prog, "--call-graph dwarf is hwpmc-record's; use -g (--call-graph fp)");
    return run(o);
}
