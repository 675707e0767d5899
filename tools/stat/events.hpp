// SPDX-License-Identifier: GPL-2.0
// hwpmc-stat's events: what the command line asks to count (perf's -e
// lists, pmcstat's -p/-s), the default set, and, once the device is open,
// what each event is (the library's parse: CLOCK.PROF, instructions,
// cycles, the TSC), which the printer's derived figures need.
#pragma once

#include "lib/pmc_group.hpp"

#include <hwpmc/hwpmc.hpp>

#include <sys/types.h>

#include <string>
#include <vector>

namespace hwpmc_stat {

enum class scope {
    process,
    system
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
    hwpmc::event_role role = hwpmc::event_role::other;
    bool tsc = false;
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

// "process" or "system".
const char *scope_word(scope sc);

// The events of one -e / -p SPEC / -s argument: "cycles,usr,instructions"
// is two; perf's software names become SOFT specifiers.  False on an
// empty event.
bool add_events(options &o, const std::string &arg, scope sc, bool from_e);

// Without events given: what a machine may have of CLOCK.PROF,
// SCHED.SWITCH, PAGE_FAULT.ALL, cycles, instructions (optional).
void add_default_events(options &o);

// What each event is, on this device (an event the library cannot parse
// stays "other": its allocation says why).
void describe_events(const hwpmc::device &dev, options &o);

// The requests of a pmc_group, one per event (parallel to o.events).
std::vector<hwpmc_tools::pmc_group::request> requests_of(const options &o);

} // namespace hwpmc_stat
