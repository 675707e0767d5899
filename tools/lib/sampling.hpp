// SPDX-License-Identifier: GPL-2.0
// The sampling session shared by hwpmc-record and hwpmc-top: what to
// sample (events, periods, targets: their common options) and the
// sampling PMCs (a pmc_group) allocated, attached to the command or the
// processes, and started.
#pragma once

#include "numbers.hpp"
#include "options.hpp"
#include "pmc_group.hpp"
#include "run.hpp"

#include <hwpmc/hwpmc.hpp>

#include <getopt.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace hwpmc_tools {

constexpr double default_sampling_hz = 1000;

struct sampling_options {
    std::vector<std::string> events; // specifiers, as given
    // hwpmc-record --system-event: system-scope events next to the
    // process-scope ones of -e (pmcstat -P with -S)
    std::vector<std::string> system_events;
    double freq = 0;          // -F HZ (0: not given)
    uint64_t period = 0;      // -c PERIOD (0: not given)
    bool callchain = false;   // -g, --call-graph fp|dwarf
    uint32_t ustack_size = 0; // --call-graph dwarf[,SIZE]: bytes of user stack (0: fp)
    // Frame-pointer callchains also ask for a leaf_stack_size USERSTACK
    // (lib/leaf_stack.hpp: the leaf's caller), if the module gives one
    // (hwpmc-record; hwpmc-top does not read them).
    bool leaf_stack = false;
    bool system_wide = false; // -a
    std::vector<int> cpus;    // -C (with -a)
    std::vector<pid_t> pids;  // -p
    bool inherit = true;      // PMC_F_DESCENDANTS
    std::vector<std::string> command;
};

// The options hwpmc-record and hwpmc-top share: their getopt letters (the
// start of the tools' option strings), their long options, and the value
// getopt_long() returns for --no-inherit.
constexpr const char *sampling_optstring = "e:F:c:gaC:p:";
constexpr int opt_no_inherit = 0x1000;
constexpr int opt_call_graph = 0x1001;
constexpr int opt_system_event = 0x1004; // hwpmc-record's
constexpr int opt_count_event = 0x1002;  // hwpmc-record's
constexpr int opt_count_output = 0x1003; // hwpmc-record's
// --call-graph's default stack copy (perf's: 8 KiB) and the largest one
// (the module's max_user_stack may allow less: PMCALLOCATE says EINVAL).
constexpr uint32_t default_ustack_size = 8192;
constexpr uint32_t max_ustack_size = 65536;

// perf's --call-graph MODE: "fp" (frame pointers, as -g) or "dwarf" with
// an optional ",SIZE" (bytes of user stack per sample, rounded up to a
// multiple of 8, more than leaf_stack_size (-g's), at most
// max_ustack_size; default default_ustack_size).
// False with *why for anything else.
bool parse_call_graph(const char *arg, sampling_options *o, std::string *why);
// The tool's long options: the shared ones, then `more`.
std::vector<struct option> sampling_longopts(std::initializer_list<struct option> more);

// The command line of a sampling tool: its own options (`optstring` and
// `more` long options) after the shared ones.
option_reader sampling_options_reader(const char *prog, int argc, char **argv,
                                      const char *optstring,
                                      std::initializer_list<struct option> more,
                                      void (*usage)(FILE *));
// The next option that is not a shared one (those are applied to `o`), or
// -1 after the last.
int next_tool_option(const char *prog, option_reader &r, sampling_options *o);

// Apply option `opt` (its argument `arg`) to `o` if it is one of those;
// false if it is not.  A bad value is a usage error.  -F and -c together
// are one too.
bool sampling_option(const char *prog, int opt, const char *arg, sampling_options *o);

// After the options: the default event (SOFT-CLOCK.PROF), -F only for
// CLOCK.PROF, and --system-event only next to process-scope -e events
// (else usage errors).
void finish_sampling_options(const char *prog, sampling_options *o);

// hwpmc-record -g: allocate `r` with -g's stack copy (lib/leaf_stack.hpp:
// PMC_F_USERSTACK, leaf_stack_size bytes) through `alloc`, or, when the
// module gives no copy (EINVAL: a module before 1.5; EOPNOTSUPP: its
// max_user_stack is 0; ENOMEM: no room for the copy areas in the memory
// cgroup), `r` as it is, *no_copy then being that errno (else 0).  False
// when the allocation fails otherwise, with *f, and *failed the request
// that failed.
using allocate_fn = std::function<bool(const pmc_group::request &, pmc_group::failure *)>;
bool allocate_leaf_stack(const pmc_group::request &r, const allocate_fn &alloc,
                         pmc_group::failure *f, pmc_group::request *failed, int *no_copy);

// The sampling period of `spec`: -c; for CLOCK.PROF 10^9/HZ ns (-F, or
// the default rate); 1 for other SOFT events, 1,000,000 for hardware ones.
// False with *why when -F was given for an event it cannot convert.
bool period_of(const hwpmc::event_info &ev, const sampling_options &o, uint64_t *period,
               std::string *why);

// The sampling PMCs of a run: one per event (per CPU with -a, and for
// each --system-event).
class samplers {
public:
    explicit samplers(const char *prog) : prog_(prog), set_(prog, pmc_group::use::sampling) {}

    // Allocate them; false with a message.
    bool allocate(hwpmc::device &dev, const sampling_options &o);
    // Set up the signals, fork o.command stopped (into `ch`), attach the
    // PMCs to it or to o.pids (not with -a) and start them; false with a
    // message.  The command is released by the caller (ch.start()).
    bool start(const sampling_options &o, stopped_child &ch);
    void stop() { set_.stop(); }
    void clear() { set_.clear(); } // release the PMCs

    // The first event's specifier and period, and its rate in words
    // ("every 1,000,000 ns of CPU time (1,000 Hz)").
    const std::string &spec0() const { return reqs_.at(0).spec; }
    uint64_t period0() const { return reqs_.at(0).period; }
    std::string rate0() const { return rate_text(clock_prof0_, period0()); }

private:
    const char *prog_;
    pmc_group set_;
    std::vector<pmc_group::request> reqs_;
    bool leaf_note_ = false; // said that the module gives no leaf aid
    bool clock_prof0_ = false;
};

} // namespace hwpmc_tools
