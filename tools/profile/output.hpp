// SPDX-License-Identifier: GPL-2.0
// hwpmc-report's parts: the text reports (flat profile, call graphs), the
// folded stacks and the SVG flame graph, and the raw record dump.
#pragma once

#include "profile.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace hwpmc_tools {

// --- hwpmc-report-text.cpp ---------------------------------------------

enum class graph_mode {
    none,
    callers, // -g: who calls each entry
    callees  // --call-graph=callee: what each entry calls
};

struct text_options {
    bool by_children = false; // order entries by children
    graph_mode graph = graph_mode::none;
    double percent_limit = 0; // hide entries (and branches) below this
    bool header = true;
    size_t max_entries = 0; // print at most this many entries (0: all)
};

// The flat profile of one event, with call graphs under its entries.
void print_profile(FILE *out, const profile &p, const resolver &res, const text_options &o);

// --- hwpmc-report-flame.cpp --------------------------------------------

// Folded stacks: "comm;outermost;...;innermost" -> samples.  Kernel
// frames get a "_[k]" suffix, as stackcollapse-perf.pl writes them.
std::map<std::string, uint64_t> folded_stacks(const profile &p, const resolver &res);
void print_folded(FILE *out, const std::map<std::string, uint64_t> &stacks);

// An SVG flame graph of the samples of `p`; false with errno on a write
// error.
bool write_flamegraph(const std::string &path, const profile &p, const resolver &res,
                      const std::string &title, const std::string &subtitle);

// --- hwpmc-report-dump.cpp ---------------------------------------------

// Every record of the log in `fd`, one line each (pmcstat -R style, with
// the record type names of <linux/hwpmc.h>).  0, or 1 with a message on
// stderr for a corrupt or truncated log.
int dump_log(FILE *out, int fd, const char *prog, const std::string &name);

} // namespace hwpmc_tools
