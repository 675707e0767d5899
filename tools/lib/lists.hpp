// SPDX-License-Identifier: GPL-2.0
// Lists on the tools' command lines: CPUs ("0,2-3"), process ids
// ("123,456"), numbers; and the online CPUs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hwpmc_tools {

// "0,2-3" -> {0,2,3} (sorted, unique); false if malformed or empty.
bool parse_cpu_list(const std::string &arg, std::vector<int> *cpus);

// {0,2,3} -> "0,2-3".
std::string cpu_list_string(const std::vector<int> &cpus);

// The online CPUs (/sys/devices/system/cpu/online), or 0..ncpu-1.
std::vector<int> online_cpus(int ncpu);

// "1,20,300" -> numbers from min to max (decimal, no sign), appended to
// *out in order; false if a number is malformed or out of range, or the
// list is empty.
bool parse_number_list(const std::string &arg, std::uint64_t min, std::uint64_t max,
                       std::vector<std::uint64_t> *out);

// The largest process id Linux gives (PID_MAX_LIMIT).
constexpr pid_t pid_max = 0x3fffffff;

// "123,456" -> process ids (1 to pid_max), appended to *pids; false if
// malformed.
bool parse_pid_list(const std::string &arg, std::vector<pid_t> *pids);

} // namespace hwpmc_tools
