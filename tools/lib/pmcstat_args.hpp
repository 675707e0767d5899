// SPDX-License-Identifier: GPL-2.0
// pmcstat(8)'s command line (FreeBSD's options and their meanings) turned
// into the run of the tool that does that work here: hwpmc-stat for
// counting (-p, -s), hwpmc-record for sampling into a log (-P, -S with
// -O), hwpmc-report for reading one (-R), hwpmc-top for the live view
// (-T).  Pure: plan_pmcstat() only reads its arguments, for unit tests.
#pragma once

#include <string>
#include <vector>

namespace hwpmc_tools {

struct pmcstat_plan {
    std::string error;              // a usage error (exit 2), or empty
    bool help = false;              // -h: print the usage
    std::string tool;               // "hwpmc-stat", "hwpmc-record", ...
    std::vector<std::string> args;  // its arguments (without its name)
    std::string stdout_file;        // -G/-F/-m: the tool's standard output
    std::vector<std::string> notes; // accepted options that change nothing here
};

// argv[0] is pmcstat's name; getopt(3) is reset before and after.
pmcstat_plan plan_pmcstat(int argc, char **argv);

// The usage text.
const char *pmcstat_usage();

} // namespace hwpmc_tools
