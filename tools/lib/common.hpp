// SPDX-License-Identifier: GPL-2.0
// Shared by the hwpmc tools: opening the driver with errors that say what
// to do, usage errors, and what the loaded module says of itself.  Numbers
// are in numbers.hpp, lists (CPUs, process ids) in lists.hpp, the PMCs'
// lifecycle in pmc_group.hpp.
#pragma once

#include <hwpmc/hwpmc.hpp>

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hwpmc_tools {

// pmc_init(), or print why it failed (and what to do) and return false.
bool init_or_explain(const char *prog);

// Explain a failed operation: errno plus the likely cause and the fix.
void explain(const char *prog, const char *what, int err);

// /dev/hwpmc; else why it cannot be opened (and what to do), and exit 1.
hwpmc::device open_device(const char *prog);

// The CPUs to count or sample system-wide: `given` (-C), each checked to
// exist (else a message and exit 1), or every online CPU when none is given.
std::vector<int> system_cpus(const char *prog, hwpmc::device &dev, const std::vector<int> &given);

// --- command lines ----------------------------------------------------------

// A usage error: the message and a pointer to --help on stderr, exit 2.
[[noreturn]] void usage_error(const char *prog, const std::string &msg);

// getopt_long() returned '?' (with opterr = 0): an unknown option, or one
// of the letters in `with_arg` given without its argument.
[[noreturn]] void bad_option(const char *prog, char *const argv[], const char *with_arg);

// The loaded module's version ("1.0"), or "" when unknown.
std::string module_version();

// A parameter of the loaded module (/sys/module/hwpmc/parameters/NAME),
// or "" when unknown.
std::string module_param(const char *name);

} // namespace hwpmc_tools
