// SPDX-License-Identifier: GPL-2.0
#include "sampling.hpp"

#include "common.hpp"
#include "leaf_stack.hpp"
#include "lists.hpp"
#include "numbers.hpp"

#include <hwpmc/pmc.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace hwpmc_tools {

namespace {

bool is_clock_prof(const std::string &spec) {
    try {
        return hwpmc::parse_event(spec).is_clock_prof();
    } catch (const hwpmc::spec_error &) {
        return false;
    }
}

std::string freq_error(const std::string &spec) {
    return "-F HZ converts to a period only for CLOCK.PROF (CPU time); give '" + spec +
           "' a period with -c PERIOD";
}

} // namespace

bool parse_call_graph(const char *arg, sampling_options *o, std::string *why) {
    const std::string a = arg ? arg : "";
    if (a == "fp") {
        o->callchain = true;
        o->ustack_size = 0;
        return true;
    }
    if (a.rfind("dwarf", 0) != 0 || (a.size() > 5 && a[5] != ',')) {
        *why = "--call-graph wants fp or dwarf[,SIZE], not '" + a + "'";
        return false;
    }
    uint64_t size = default_ustack_size;
    if (a.size() > 5) {
        const std::string n = a.substr(6);
        if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9 ||
            (size = std::stoull(n)) == 0) {
            *why = "--call-graph dwarf,SIZE wants a size in bytes, not '" + n + "'";
            return false;
        }
        size = (size + 7) & ~uint64_t{7};
        if (size <= leaf_stack_size) {
            *why = "--call-graph dwarf,SIZE: more than " + std::to_string(leaf_stack_size) +
                   " bytes, not " + n + " (-g copies " + std::to_string(leaf_stack_size) +
                   " to find a leaf function's caller)";
            return false;
        }
        if (size > max_ustack_size) {
            *why = "--call-graph dwarf,SIZE: at most " + std::to_string(max_ustack_size) +
                   " bytes, not " + n;
            return false;
        }
    }
    o->callchain = true;
    o->ustack_size = static_cast<uint32_t>(size);
    return true;
}

// -g's copy stays in the module's small stack tier (nsamples x
// PMC_USTACK_SMALL bytes per CPU, not nsamples x max_user_stack).
static_assert(leaf_stack_size <= PMC_USTACK_SMALL);

bool allocate_leaf_stack(const pmc_group::request &r, const allocate_fn &alloc,
                         pmc_group::failure *f, pmc_group::request *failed, int *no_copy) {
    *no_copy = 0;
    pmc_group::request leaf = r;
    leaf.flags |= PMC_F_USERSTACK;
    leaf.ustack_size = leaf_stack_size;
    if (alloc(leaf, f))
        return true;
    *failed = leaf;
    if (f->spec || (f->err != EINVAL && f->err != EOPNOTSUPP && f->err != ENOMEM))
        return false;
    const int err = f->err;
    *failed = r;
    if (!alloc(r, f))
        return false;
    *no_copy = err;
    return true;
}

bool period_of(const hwpmc::event_info &ev, const sampling_options &o, uint64_t *period,
               std::string *why) {
    if (o.period) {
        *period = o.period;
        return true;
    }
    if (ev.is_clock_prof()) {
        double hz = o.freq > 0 ? o.freq : default_sampling_hz;
        double p = std::round(1e9 / hz);
        *period = p < 1 ? 1 : static_cast<uint64_t>(p);
        return true;
    }
    if (o.freq > 0) {
        *why = freq_error(ev.spec);
        return false;
    }
    *period = ev.is_soft() ? 1 : 1000000;
    return true;
}

std::vector<struct option> sampling_longopts(std::initializer_list<struct option> more) {
    std::vector<struct option> v = {
        {"event", required_argument, nullptr, 'e'},
        {"freq", required_argument, nullptr, 'F'},
        {"count", required_argument, nullptr, 'c'},
        {"call-graph", required_argument, nullptr, opt_call_graph},
        {"all-cpus", no_argument, nullptr, 'a'},
        {"cpu", required_argument, nullptr, 'C'},
        {"pid", required_argument, nullptr, 'p'},
        {"no-inherit", no_argument, nullptr, opt_no_inherit},
    };
    v.insert(v.end(), more);
    return v;
}

option_reader sampling_options_reader(const char *prog, int argc, char **argv,
                                      const char *optstring,
                                      std::initializer_list<struct option> more,
                                      void (*usage)(FILE *)) {
    return option_reader(prog, argc, argv, std::string("+") + sampling_optstring + optstring,
                         sampling_longopts(more), usage);
}

int next_tool_option(const char *prog, option_reader &r, sampling_options *o) {
    int opt;
    while ((opt = r.next()) != -1 && sampling_option(prog, opt, optarg, o)) {
    }
    return opt;
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
        o->ustack_size = 0;
        break;
    case opt_call_graph: {
        std::string why;
        if (!parse_call_graph(arg, o, &why))
            usage_error(prog, why);
        break;
    }
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

void finish_sampling_options(const char *prog, sampling_options *o) {
    if (!o->system_events.empty() && (o->events.empty() || o->system_wide))
        usage_error(prog, "--system-event goes with process-scope -e events, without -a "
                          "(alone: -a -e EVENT)");
    if (o->events.empty())
        o->events.push_back("SOFT-CLOCK.PROF");
    for (const auto *list : {&o->events, &o->system_events})
        for (const auto &e : *list)
            if (o->freq > 0 && !is_clock_prof(e))
                usage_error(prog, freq_error(e));
}

bool samplers::allocate(hwpmc::device &dev, const sampling_options &o) {
    std::vector<std::pair<std::string, bool>> specs; // (spec, system scope)
    for (const auto &spec : o.events)
        specs.emplace_back(spec, o.system_wide);
    for (const auto &spec : o.system_events)
        specs.emplace_back(spec, true);
    for (const auto &[spec, system] : specs) {
        pmc_group::request r;
        r.spec = r.name = spec;
        r.system = system;
        r.flags = o.callchain ? PMC_F_CALLCHAIN : 0;
        if (o.ustack_size)
            r.flags |= PMC_F_USERSTACK;
        r.ustack_size = o.ustack_size;
        if (!system && o.inherit)
            r.flags |= PMC_F_DESCENDANTS;
        hwpmc::event_info ev;
        try {
            ev = dev.parse(spec);
        } catch (const hwpmc::spec_error &) {
            ev.spec = spec; // a hardware period; allocate() says what is wrong
        }
        std::string why;
        if (!period_of(ev, o, &r.period, &why)) {
            std::fprintf(stderr, "%s: %s\n", prog_, why.c_str());
            return false;
        }
        if (reqs_.empty())
            clock_prof0_ = ev.is_clock_prof();
        reqs_.push_back(r);
        pmc_group::failure f;
        bool ok = false;
        if (o.callchain && !o.ustack_size && o.leaf_stack && !leaf_note_) {
            pmc_group::request failed;
            int no_copy = 0;
            const size_t req = reqs_.size() - 1;
            auto alloc = [&](const pmc_group::request &x, pmc_group::failure *xf) {
                return set_.allocate(dev, req, x, o.cpus, xf);
            };
            if (!allocate_leaf_stack(r, alloc, &f, &failed, &no_copy)) {
                set_.explain_allocation(failed, f);
                return false;
            }
            ok = true;
            if (no_copy) {
                leaf_note_ = true;
                std::fprintf(stderr,
                             "%s: note: the module gives no user stack copy (%s): frame-pointer "
                             "callchains are recorded without it, and a sample in a function "
                             "without a frame (a leaf) may miss its caller\n",
                             prog_, std::strerror(no_copy));
            }
        }
        if (!ok && !set_.allocate(dev, reqs_.size() - 1, r, o.cpus, &f)) {
            set_.explain_allocation(r, f);
            return false;
        }
    }
    return true;
}

bool samplers::start(const sampling_options &o, stopped_child &ch) {
    signals::setup(prog_);
    if (!o.command.empty()) {
        if (!ch.fork(prog_, o.command))
            return false;
        // Its wait on the pipe then happens before sampling starts.
        ch.wait_until_waiting();
    }
    if (!o.system_wide) {
        std::vector<pid_t> targets = o.pids;
        if (targets.empty())
            targets.push_back(ch.pid());
        for (pid_t p : targets)
            if (!set_.attach(p, reqs_))
                return false;
    }
    return set_.start(reqs_);
}

} // namespace hwpmc_tools
