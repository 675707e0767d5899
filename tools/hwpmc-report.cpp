// SPDX-License-Identifier: GPL-2.0
// hwpmc-report: read a hwpmc log file (hwpmc-record, pmcstat -O) and show
// where the samples fell: a flat profile by function (self and children),
// call graphs, folded stacks, an SVG flame graph, or the raw records.
//
// The log is read with libhwpmc's pmclog(3) reader.  User addresses are
// placed in files through the MAP_IN records of the sample's process at
// the sample's time (inherited at PROCFORK, reset at PROCEXEC) and named
// from the files' ELF symbol tables; kernel addresses from the symbols
// hwpmc-record saved with the log (profile/saved_ksyms.hpp), else
// /proc/kallsyms.
#include "lib/common.hpp"
#include "lib/lists.hpp"
#include "lib/numbers.hpp"
#include "lib/options.hpp"
#include "profile/output.hpp"
#include "profile/output_export.hpp"
#include "profile/output_gmon.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <fcntl.h>
#include <getopt.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace {

const char *prog = "hwpmc-report";

using namespace hwpmc_tools;

struct options {
    std::string input = "hwpmc.data";
    std::vector<sort_key> keys = {sort_key::comm, sort_key::dso, sort_key::sym};
    text_options text;
    bool folded = false;
    bool dump = false;
    bool script = false;  // --script: perf script's text
    std::string pprof;    // --pprof FILE
    std::string gprof;    // --gprof DIR
    std::string kallsyms; // --kallsyms FILE
    std::string flamegraph;
    std::string title = "Flame Graph";
    bool user_only = false;
    bool quiet = false;
    std::set<uint32_t> pids, tids, cpus;
    std::set<std::string> comms;
    std::string event;
};

void usage(FILE *out) {
    std::fprintf(
        out,
        "usage: %s [-i FILE] [--sort KEYS] [--children] [-g | --call-graph=caller|callee]\n"
        "                    [--folded | --flamegraph SVG | --script | --pprof FILE |\n"
        "                     --gprof DIR | --dump]\n"
        "                    [--pid PIDS] [--tid TIDS] [--comm NAMES] [--cpu CPUS]\n"
        "                    [--event NAME] [--user] [--kallsyms FILE]\n"
        "                    [--percent-limit PCT] [-q]\n"
        "\n"
        "Show where the samples of a hwpmc log (hwpmc-record) fell.\n"
        "\n"
        "  -i, --input FILE       the log (default hwpmc.data; - reads standard input)\n"
        "  -s, --sort KEYS        what an entry is: comma-separated comm, pid, tid, dso,\n"
        "                         sym, cpu (default comm,dso,sym)\n"
        "      --children         order by children (samples with the entry anywhere in\n"
        "                         their call chain) instead of self (innermost frame)\n"
        "  -g                     call graph under each entry: its callers\n"
        "      --call-graph=MODE  caller (as -g) or callee (what each entry calls)\n"
        "      --folded           folded stacks, 'comm;outer;...;inner COUNT' per line (for\n"
        "                         flamegraph.pl, speedscope, inferno, ...)\n"
        "      --flamegraph SVG   write an SVG flame graph to SVG\n"
        "      --title TEXT       the flame graph's title\n"
        "      --script           every sample as perf script prints it (for FlameGraph's\n"
        "                         stackcollapse-perf.pl, speedscope, the Firefox Profiler)\n"
        "      --pprof FILE       write a pprof profile (gzipped protobuf) to FILE, - for\n"
        "                         standard output (go tool pprof, Pyroscope, Parca)\n"
        "      --gprof DIR        gprof(1) flat profiles, as pmcstat -g: DIR/EVENT/IMAGE.gmon\n"
        "                         per event and program or library (gprof -p IMAGE FILE)\n"
        "      --dump             every record, one line each (like pmcstat -R)\n"
        "      --pid PIDS         only samples of these processes (comma-separated)\n"
        "      --tid TIDS         only samples of these threads\n"
        "      --comm NAMES       only samples of these commands\n"
        "      --cpu CPUS         only samples taken on these CPUs (e.g. 0,2-3)\n"
        "      --event NAME       only samples of this event (e.g. CLOCK.PROF)\n"
        "      --kallsyms FILE    kernel symbols from FILE (the /proc/kallsyms of the machine\n"
        "                         or guest that recorded the log), not those hwpmc-record\n"
        "                         saved in the log, nor this machine's\n"
        "  -u, --user             leave out kernel frames (samples in the kernel count for\n"
        "                         the user code that entered it)\n"
        "      --percent-limit P  hide entries and call graph branches below P%%\n"
        "  -q, --quiet            no header and notes\n"
        "  -h, --help             this help\n"
        "\n"
        "Exit status: 0; 1 if the log cannot be read (a truncated log is reported up to\n"
        "where it ends, with a warning); 2 for usage errors.\n",
        prog);
}

[[noreturn]] void usage_error(const std::string &msg) {
    hwpmc_tools::usage_error(prog, msg);
}

std::set<uint32_t> parse_ids(const char *arg, const char *opt) {
    std::vector<uint64_t> ids;
    if (!*arg)
        usage_error(std::string(opt) + " wants numbers separated by commas");
    if (!parse_number_list(arg, 0, UINT32_MAX, &ids))
        usage_error(std::string(opt) + " wants numbers separated by commas, not '" + arg + "'");
    return std::set<uint32_t>(ids.begin(), ids.end());
}

// The logged event `event` is the one the user named `want`: the same
// name, or the same SOFT event or TSC however written ("clock.prof",
// "SOFT-CLOCK.PROF", "task-clock").
bool event_matches(const std::string &event, const std::string &want) {
    if (strcasecmp(event.c_str(), want.c_str()) == 0)
        return true;
    try {
        const hwpmc::event_info e = hwpmc::parse_event(event), w = hwpmc::parse_event(want);
        return e.cls == w.cls && e.event == w.event;
    } catch (const hwpmc::spec_error &) {
        return false;
    }
}

std::string rate_text(const pmc_desc &d) {
    if (!d.rate)
        return "counting";
    return hwpmc_tools::rate_text(d.clock_prof, d.rate);
}

// The log, read to its end or to the first fault (reported).
bool read_log(int fd, const options &o, log_data *data) {
    if (data->read_fast(fd))
        return true;
    if (lseek(fd, 0, SEEK_SET) != 0) {
        std::fprintf(stderr, "%s: %s: %s\n", prog, o.input.c_str(), std::strerror(errno));
        return false;
    }
    try {
        hwpmc::log_reader r(fd);
        for (const pmclog_ev &ev : r)
            data->add(ev);
        if (r.state() != PMCLOG_EOF) {
            std::fprintf(stderr, "%s: %s: the log ends inside a record\n", prog, o.input.c_str());
            return data->records > 0;
        }
    } catch (const std::system_error &e) {
        int err = e.code().value();
        if (err == EBADMSG && data->records > 0) {
            std::fprintf(stderr, "%s: warning: %s: %s\n  (reporting the %s records before it)\n",
                         prog, o.input.c_str(), e.what(), thousands(data->records).c_str());
            return true;
        }
        std::fprintf(stderr, "%s: %s: %s\n", prog, o.input.c_str(), e.what());
        if (err == EPROTO)
            std::fprintf(stderr, "  The log was written by a module with another log format: "
                                 "use the tools of that version.\n");
        return false;
    }
    return true;
}

int run(const options &o) {
    int fd = 0;
    if (o.input != "-") {
        fd = open(o.input.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            std::fprintf(stderr, "%s: cannot open %s: %s\n", prog, o.input.c_str(),
                         std::strerror(err));
            if (err == ENOENT && o.input == "hwpmc.data")
                std::fprintf(stderr, "  Record one first: hwpmc-record -g -- COMMAND\n");
            return 1;
        }
    }
    if (o.dump)
        return dump_log(stdout, fd, prog, o.input);

    // Read twice: the records first, then the samples, one by one.
    const int in = rereadable(fd);
    if (in < 0) {
        std::fprintf(stderr, "%s: cannot keep a copy of %s to read it twice: %s\n", prog,
                     o.input.c_str(), std::strerror(errno));
        return 1;
    }
    auto close_input = [&] {
        if (in != fd && in > 0)
            close(in);
        if (fd > 0)
            close(fd);
    };
    log_data data;
    data.keep_samples = false;
    if (!read_log(in, o, &data)) {
        close_input();
        return 1;
    }
    data.apply();
    data.name_from_proc();

    symbolizer sym;
    // The kernel symbols saved with the log name its kernel frames; a
    // --kallsyms file comes first, /proc/kallsyms is the last resort.
    if (!data.saved_ksyms.empty())
        sym.set_saved_kernel(std::move(data.saved_ksyms));
    if (!o.kallsyms.empty()) {
        if (access(o.kallsyms.c_str(), R_OK) != 0) {
            std::fprintf(stderr, "%s: --kallsyms %s: %s\n", prog, o.kallsyms.c_str(),
                         std::strerror(errno));
            close_input();
            return 1;
        }
        sym.set_kallsyms(o.kallsyms);
    }
    resolver res(data.procs, sym, o.user_only);
    res.recorded = data.wallclock;

    // Events, in the order of their PMCs; a PMC per CPU counts once.
    auto event_of = [&](uint32_t pmcid) {
        auto it = data.pmcs.find(pmcid);
        if (it == data.pmcs.end()) {
            char buf[32];
            std::snprintf(buf, sizeof(buf), "pmc 0x%x", pmcid);
            return std::string(buf);
        }
        return it->second.event;
    };

    // Each sample as it is read: filters, then resolution, then the comm
    // filter (names need it); then into what the output needs.  Only the
    // address-by-address outputs keep the samples.
    const bool keep = !o.gprof.empty() || o.script || !o.pprof.empty();
    const bool flame = !o.flamegraph.empty() || o.folded;
    std::vector<raw_sample> kept;
    std::vector<sample> samples; // samples[i] is kept[i] resolved
    profile all(res, o.keys);    // --folded, --flamegraph
    std::map<std::string, profile> by_event;
    struct pmc_seen {
        bool wanted;
        profile *p;
    };
    std::unordered_map<uint32_t, pmc_seen> pmcs_seen;
    std::set<std::string> event_set;
    auto profile_of = [&](uint32_t pmcid) {
        const std::string ev = event_of(pmcid);
        event_set.insert(ev);
        return &by_event.try_emplace(ev, res, o.keys).first->second;
    };
    chain_cache cache(res);
    auto last_pmc = pmcs_seen.end();
    uint64_t selected = 0;
    read_samples(in, data.records, [&](const raw_sample &r) {
        if (!o.pids.empty() && !o.pids.count(r.pid))
            return;
        if (!o.tids.empty() && !o.tids.count(r.tid))
            return;
        if (!o.cpus.empty() && !o.cpus.count(r.cpu))
            return;
        // Samples come in runs of one PMC: the last one's entry first.
        auto pit = last_pmc != pmcs_seen.end() && last_pmc->first == r.pmcid
                       ? last_pmc
                       : pmcs_seen.find(r.pmcid);
        if (pit == pmcs_seen.end()) {
            bool wanted = true;
            if (!o.event.empty()) {
                auto it = data.pmcs.find(r.pmcid);
                wanted = it != data.pmcs.end() && event_matches(it->second.event, o.event);
            }
            pit = pmcs_seen.emplace(r.pmcid, pmc_seen{wanted, nullptr}).first;
        }
        last_pmc = pit;
        if (!pit->second.wanted)
            return;
        // The comm filter (names need the resolution), then the sample
        // counts if it has an address.
        auto take = [&](uint32_t comm, bool no_frames) {
            if (!o.comms.empty() && !o.comms.count(res.comm_name(comm)))
                return false;
            if (no_frames)
                return false; // nothing was interrupted that has an address
            selected++;
            if (!pit->second.p)
                pit->second.p = profile_of(r.pmcid);
            return true;
        };
        if (!keep) {
            // Each distinct chain resolved once.
            const resolved_chain c = cache.resolve(r);
            if (take(c.comm, c.frames.empty()))
                (flame ? all : *pit->second.p).add(c, r.pid, r.tid, r.cpu);
            return;
        }
        // The address-by-address outputs keep the chain the frames come
        // from (unwound, or with the leaf's caller), not the logged one.
        raw_sample as_resolved{};
        sample s = res.resolve(r, &as_resolved);
        if (!take(s.comm, s.frames.empty()))
            return;
        kept.push_back(std::move(as_resolved));
        samples.push_back(std::move(s));
    });
    close_input();
    std::vector<const raw_sample *> raws;
    raws.reserve(kept.size());
    for (const raw_sample &r : kept)
        raws.push_back(&r);
    const std::vector<std::string> events(event_set.begin(), event_set.end());

    if (!o.event.empty() && selected == 0) {
        bool known = false;
        for (const auto &[id, d] : data.pmcs)
            known |= event_matches(d.event, o.event);
        if (!known) {
            std::fprintf(stderr, "%s: %s has no event '%s'; it has:", prog, o.input.c_str(),
                         o.event.c_str());
            std::set<std::string> names;
            for (const auto &[id, d] : data.pmcs)
                names.insert(d.event);
            for (const auto &n : names)
                std::fprintf(stderr, " %s", n.c_str());
            std::fprintf(stderr, "\n");
            return 1;
        }
    }

    // Notes on what could not be resolved.
    std::vector<std::string> notes;
    if (data.dropped_samples || data.dropped_records)
        notes.push_back(thousands(data.dropped_samples) + " samples and " +
                        thousands(data.dropped_records) +
                        " other records were dropped while recording (DROPNOTIFY): the "
                        "per-CPU sample rings or the log buffers were full; record at a lower "
                        "rate (-F / -c), or load hwpmc with larger nsamples, nbuffers or "
                        "logbuffersize");
    if (!data.closed)
        notes.push_back("the log does not end with CLOSELOG: the recording was cut short");
    if (res.kernel_hidden)
        notes.push_back(
            thousands(res.kernel_hidden) + " samples interrupted the kernel but show it as " +
            kernel_hidden_name +
            ": the module hid their kernel frames, as the recording user may not see "
            "kernel addresses (CAP_PERFMON, or sysctl kernel.hwpmc.unprivileged_kernel=1 "
            "with perf_event_paranoid <= 1 and kptr_restrict = 0)");
    if (res.kernel_frames && res.kernel_restricted())
        notes.push_back(o.kallsyms.empty()
                            ? "kernel addresses are not symbolized: /proc/kallsyms shows zero "
                              "addresses to this user (run as root, or sysctl "
                              "kernel.kptr_restrict=0)"
                            : "kernel addresses are not symbolized: " + o.kallsyms +
                                  " lists zero addresses (copy /proc/kallsyms as root)");
    for (const auto &[path, why] : res.unreadable)
        notes.push_back("cannot read symbols of " + path + ": " + why);
    for (const auto &path : res.changed)
        notes.push_back(path + " was modified after the recording: its symbols may not be "
                               "those of the code that ran");
    if (const std::string n = res.unwinder().truncated_note(); !n.empty())
        notes.push_back(n);
    if (res.user_unmapped)
        notes.push_back(thousands(res.user_unmapped) +
                        " samples interrupted user code outside every mapping the log describes "
                        "(the vDSO, JIT code, or a process whose mappings were not logged)");

    if (!o.gprof.empty()) {
        gmon_summary sum;
        std::string err;
        if (!write_gmon_profiles(o.gprof, data, sym, raws, &sum, &err)) {
            std::fprintf(stderr, "%s: cannot write %s\n", prog, err.c_str());
            return 1;
        }
        if (sum.kernel)
            notes.push_back(thousands(sum.kernel) +
                            " samples fell in the kernel: gprof files are written for "
                            "programs and libraries only");
        if (sum.unmapped)
            notes.push_back(thousands(sum.unmapped) +
                            " samples fell outside every readable ELF image (the vDSO, "
                            "JIT code, an unreadable or unlogged file): not in any gprof file");
        if (!o.quiet) {
            for (const auto &f : sum.files)
                std::fprintf(stderr, "%s: wrote %s (%s samples of %s)\n", prog, f.path.c_str(),
                             thousands(f.samples).c_str(), f.image.c_str());
            for (const auto &n : notes)
                std::fprintf(stderr, "%s: note: %s\n", prog, n.c_str());
        }
        return 0;
    }

    if (o.script || !o.pprof.empty()) {
        debug_info dbg;
        address_describer describer(data.procs, sym, dbg, o.user_only, !o.pprof.empty());
        if (o.script)
            print_script(stdout, data, res, describer, raws, samples);
        if (!o.pprof.empty()) {
            std::string err;
            if (!write_pprof(o.pprof, data, res, describer, raws, samples, &err)) {
                std::fprintf(stderr, "%s: cannot write %s: %s\n", prog, o.pprof.c_str(),
                             err.c_str());
                return 1;
            }
            if (!o.quiet && o.pprof != "-")
                std::fprintf(stderr, "%s: wrote %s (%s samples)\n", prog, o.pprof.c_str(),
                             thousands(selected).c_str());
        }
        if (!o.quiet)
            for (const auto &n : notes)
                std::fprintf(stderr, "%s: note: %s\n", prog, n.c_str());
        return 0;
    }

    if (!o.flamegraph.empty() || o.folded) {
        const profile &p = all;
        if (!o.quiet && events.size() > 1 && o.event.empty())
            std::fprintf(stderr, "%s: note: %zu events mixed together; choose one with --event\n",
                         prog, events.size());
        if (o.folded)
            print_folded(stdout, folded_stacks(p, res));
        if (!o.flamegraph.empty()) {
            std::string subtitle = thousands(p.total()) + " samples";
            std::string ev;
            for (const auto &e : events)
                ev += (ev.empty() ? "" : ", ") + e;
            if (!ev.empty())
                subtitle += " of " + ev;
            subtitle += " from " + o.input;
            if (!write_flamegraph(o.flamegraph, p, res, o.title, subtitle)) {
                std::fprintf(stderr, "%s: cannot write %s: %s\n", prog, o.flamegraph.c_str(),
                             std::strerror(errno));
                return 1;
            }
            if (!o.quiet)
                std::fprintf(stderr, "%s: wrote %s (%s samples)\n", prog, o.flamegraph.c_str(),
                             thousands(p.total()).c_str());
        }
        if (!o.quiet)
            for (const auto &n : notes)
                std::fprintf(stderr, "%s: note: %s\n", prog, n.c_str());
        return 0;
    }

    if (o.text.header) {
        std::printf("# hwpmc-report of %s: %s records, %s samples", o.input.c_str(),
                    thousands(data.records).c_str(), thousands(data.sample_count).c_str());
        if (selected != data.sample_count)
            std::printf(" (%s selected)", thousands(selected).c_str());
        std::printf(", %s dropped\n", thousands(data.dropped_samples).c_str());
        for (const auto &n : notes)
            std::printf("# note: %s\n", n.c_str());
        std::printf("#\n");
    }
    if (selected == 0) {
        std::fprintf(stderr, "%s: no samples%s\n", prog,
                     data.sample_count == 0 ? " in the log" : " match the filters");
        return 0;
    }
    bool first = true;
    for (const auto &ev : events) {
        const profile &p = by_event.at(ev);
        if (o.text.header) {
            if (!first)
                std::printf("\n");
            const pmc_desc *d = nullptr;
            for (const auto &[id, pd] : data.pmcs)
                if (pd.event == ev)
                    d = &pd;
            std::printf("# Event: %s%s%s, %s samples\n", ev.c_str(), d ? ", " : "",
                        d ? rate_text(*d).c_str() : "", thousands(p.total()).c_str());
            std::printf("#\n");
        }
        first = false;
        print_profile(stdout, p, res, o.text);
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    options o;
    enum {
        opt_children = 256,
        opt_call_graph,
        opt_folded,
        opt_flamegraph,
        opt_title,
        opt_dump,
        opt_script,
        opt_pprof,
        opt_gprof,
        opt_kallsyms,
        opt_pid,
        opt_tid,
        opt_comm,
        opt_cpu,
        opt_event,
        opt_percent_limit,
    };
    option_reader r(prog, argc, argv, "i:s:guqh",
                    {
                        {"input", required_argument, nullptr, 'i'},
                        {"sort", required_argument, nullptr, 's'},
                        {"children", no_argument, nullptr, opt_children},
                        {"call-graph", optional_argument, nullptr, opt_call_graph},
                        {"folded", no_argument, nullptr, opt_folded},
                        {"flamegraph", required_argument, nullptr, opt_flamegraph},
                        {"title", required_argument, nullptr, opt_title},
                        {"dump", no_argument, nullptr, opt_dump},
                        {"script", no_argument, nullptr, opt_script},
                        {"pprof", required_argument, nullptr, opt_pprof},
                        {"gprof", required_argument, nullptr, opt_gprof},
                        {"kallsyms", required_argument, nullptr, opt_kallsyms},
                        {"pid", required_argument, nullptr, opt_pid},
                        {"tid", required_argument, nullptr, opt_tid},
                        {"comm", required_argument, nullptr, opt_comm},
                        {"cpu", required_argument, nullptr, opt_cpu},
                        {"event", required_argument, nullptr, opt_event},
                        {"user", no_argument, nullptr, 'u'},
                        {"percent-limit", required_argument, nullptr, opt_percent_limit},
                        {"quiet", no_argument, nullptr, 'q'},
                        {"help", no_argument, nullptr, 'h'},
                    },
                    usage);
    int opt;
    while ((opt = r.next()) != -1) {
        switch (opt) {
        case 'i':
            o.input = optarg;
            break;
        case 's': {
            std::string bad;
            if (!parse_sort_keys(optarg, &o.keys, &bad))
                usage_error("--sort: unknown key '" + bad +
                            "' (choose from comm, pid, tid, dso, sym, cpu)");
            break;
        }
        case opt_children:
            o.text.by_children = true;
            break;
        case 'g':
            o.text.graph = graph_mode::callers;
            break;
        case opt_call_graph:
            if (!optarg || !std::strcmp(optarg, "caller") || !std::strcmp(optarg, "callers"))
                o.text.graph = graph_mode::callers;
            else if (!std::strcmp(optarg, "callee") || !std::strcmp(optarg, "callees"))
                o.text.graph = graph_mode::callees;
            else if (!std::strcmp(optarg, "none"))
                o.text.graph = graph_mode::none;
            else
                usage_error(std::string("--call-graph: caller, callee or none, not '") + optarg +
                            "'");
            break;
        case opt_folded:
            o.folded = true;
            break;
        case opt_flamegraph:
            o.flamegraph = optarg;
            break;
        case opt_title:
            o.title = optarg;
            break;
        case opt_dump:
            o.dump = true;
            break;
        case opt_script:
            o.script = true;
            break;
        case opt_pprof:
            if (!*optarg)
                usage_error("--pprof wants a file name (- for standard output)");
            o.pprof = optarg;
            break;
        case opt_gprof:
            if (!*optarg)
                usage_error("--gprof wants a directory");
            o.gprof = optarg;
            break;
        case opt_kallsyms:
            if (!*optarg)
                usage_error("--kallsyms wants a file (a copy of /proc/kallsyms)");
            o.kallsyms = optarg;
            break;
        case opt_pid:
            o.pids = parse_ids(optarg, "--pid");
            break;
        case opt_tid:
            o.tids = parse_ids(optarg, "--tid");
            break;
        case opt_cpu: {
            std::vector<int> cpus;
            if (!parse_cpu_list(optarg, &cpus))
                usage_error(std::string("--cpu wants a CPU list like 0,2-3, not '") + optarg + "'");
            o.cpus.insert(cpus.begin(), cpus.end());
            break;
        }
        case opt_comm: {
            std::stringstream ss(optarg);
            std::string tok;
            while (std::getline(ss, tok, ','))
                if (!tok.empty())
                    o.comms.insert(tok);
            break;
        }
        case opt_event:
            o.event = optarg;
            break;
        case 'u':
            o.user_only = true;
            break;
        case opt_percent_limit: {
            auto v = to_number(optarg);
            if (!v || !(*v >= 0) || *v > 100)
                usage_error(std::string("--percent-limit wants 0 to 100, not '") + optarg + "'");
            o.text.percent_limit = *v;
            break;
        }
        case 'q':
            o.quiet = true;
            o.text.header = false;
            break;
        default:
            r.bad("is");
        }
    }
    if (optind < argc)
        usage_error(std::string("unexpected argument '") + argv[optind] + "' (the log is -i FILE)");
    if (!o.gprof.empty() && (o.dump || o.folded || !o.flamegraph.empty() || o.script ||
                             !o.pprof.empty() || o.text.graph != graph_mode::none))
        usage_error("--gprof writes gprof files only: no --dump, --folded, --flamegraph, "
                    "--script, --pprof or -g");
    if (o.dump && (o.folded || !o.flamegraph.empty() || o.text.graph != graph_mode::none ||
                   o.script || !o.pprof.empty()))
        usage_error("--dump prints the raw records only: no --folded, --flamegraph, --script, "
                    "--pprof or -g");
    if ((o.script || !o.pprof.empty()) && (o.folded || !o.flamegraph.empty()))
        usage_error("--script and --pprof go alone: no --folded or --flamegraph");
    if (o.script && o.pprof == "-")
        usage_error("--script and --pprof - both write to standard output");
    return run(o);
}
