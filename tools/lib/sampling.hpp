// SPDX-License-Identifier: GPL-2.0
// The sampling session shared by hwpmc-record and hwpmc-top: what to
// sample (events, periods, targets), the sampling PMCs (allocated, attached,
// started, stopped, with errors explained).
#pragma once

#include <hwpmc/hwpmc.hpp>

#include <getopt.h>
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <system_error>
#include <vector>

namespace hwpmc_tools {

constexpr double default_sampling_hz = 1000;

struct sampling_options {
    std::vector<std::string> events; // specifiers, as given
    double freq = 0;                 // -F HZ (0: not given)
    uint64_t period = 0;             // -c PERIOD (0: not given)
    bool callchain = false;          // -g
    bool system_wide = false;        // -a
    std::vector<int> cpus;           // -C (with -a)
    std::vector<pid_t> pids;         // -p
    bool inherit = true;             // PMC_F_DESCENDANTS
};

// The options hwpmc-record and hwpmc-top share: their getopt letters (the
// start of the tools' option strings), their long options, and the value
// getopt_long() returns for --no-inherit.
constexpr const char *sampling_optstring = "e:F:c:gaC:p:";
constexpr int opt_no_inherit = 0x1000;
// The tool's long options: the shared ones, then `more`, then the end.
std::vector<struct option> sampling_longopts(std::initializer_list<struct option> more);

// Apply option `opt` (its argument `arg`) to `o` if it is one of those;
// false if it is not.  A bad value is a usage error.  -F and -c together
// are one too.
bool sampling_option(const char *prog, int opt, const char *arg, sampling_options *o);

// Is `spec` the CLOCK.PROF event (with or without SOFT-, qualifiers)?
bool is_clock_prof(const std::string &spec);

// The sampling period of `spec`: -c; for CLOCK.PROF 10^9/HZ ns (-F, or
// the default rate); 1 for other SOFT events, 1,000,000 for hardware ones.
// False with *why when -F was given for an event it cannot convert.
bool period_of(hwpmc::device &dev, const sampling_options &o, const std::string &spec,
               uint64_t *period, std::string *why);

// "1,000" for a period of 1,000,000 ns, "0.5" for 2,000,000,000.
std::string hz_text(uint64_t period_ns);

// "every 1,000,000 ns of CPU time (1,000 Hz)" or "every 10 events".
std::string rate_text(const std::string &spec, uint64_t period);

struct sampler {
    std::string spec;
    uint64_t period;
    int cpu; // -1: process scope
    hwpmc::pmc pmc;
};

// Print why an operation failed: a bad specifier's message, or explain().
void report_error(const char *prog, const char *what, const std::system_error &e);

// A PMC per event (per CPU with system_wide).  False with a message.
bool allocate_samplers(const char *prog, hwpmc::device &dev, const sampling_options &o,
                       std::vector<sampler> *out);
bool attach_samplers(const char *prog, std::vector<sampler> &s, pid_t pid);
bool start_samplers(const char *prog, std::vector<sampler> &s);
void stop_samplers(std::vector<sampler> &s); // errors ignored

// "123,456" -> pids; false if malformed.
bool parse_pid_list(const std::string &arg, std::vector<pid_t> *pids);

} // namespace hwpmc_tools
