// SPDX-License-Identifier: GPL-2.0
// Counting next to another tool's run (hwpmc-record --count-event, which
// pmcstat uses for -p with -P): process-scope counting PMCs that follow the
// same targets as the run's samplers, read at the end and printed as
// hwpmc-stat prints them (perf stat's text).
#pragma once

#include "events.hpp"
#include "lib/pmc_group.hpp"

#include <hwpmc/hwpmc.hpp>

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace hwpmc_stat {

class side_counts {
public:
    explicit side_counts(const char *prog)
        : prog_(prog), group_(prog, hwpmc_tools::pmc_group::use::counting) {}

    // Allocate a process-scope counting PMC per event of `specs` (each as
    // hwpmc-stat's -p takes it); false after saying why.
    bool allocate(hwpmc::device &dev, const std::vector<std::string> &specs, bool inherit);
    // Attach them to `targets` and start them; false after saying why.
    bool start(const std::vector<pid_t> &targets);
    void stop() { group_.stop(); }
    // Read them and print "Performance counter stats for WHAT" and a row
    // per event to `out`; false after saying why.
    bool print(FILE *out, const std::string &what, double elapsed);
    bool empty() const noexcept { return group_.empty(); }

private:
    const char *prog_;
    options o_;
    std::vector<hwpmc_tools::pmc_group::request> reqs_;
    hwpmc_tools::pmc_group group_;
};

} // namespace hwpmc_stat
