// SPDX-License-Identifier: GPL-2.0
// Numbers on the tools' command lines and in their output: parsing (a bad
// value is a usage error naming the option) and formatting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hwpmc_tools {

// --- parsing --------------------------------------------------------------

// The whole of `arg` as a finite number, or nullopt.
std::optional<double> to_number(const char *arg);
// The whole of `arg` as a whole number >= 0 (decimal, 0x hex, 0 octal: as
// strtoull base 0, without a sign), or nullopt.
std::optional<std::uint64_t> to_whole(const char *arg, int base = 0);

// A finite number > 0, or a usage error naming `opt`.
double parse_positive(const char *prog, const char *arg, const char *opt);
// A finite number >= min, or a usage error "OPT wants a number >= MIN".
double parse_at_least(const char *prog, const char *arg, const char *opt, double min);
// A whole number > 0 (decimal, or hex with 0x), or a usage error.
std::uint64_t parse_count(const char *prog, const char *arg, const char *opt);

// --- formatting -----------------------------------------------------------

// 1234567 -> "1,234,567".
std::string thousands(std::uint64_t v);
// Thousands separators on the integer part of a formatted number
// ("-1234.50" -> "-1,234.50").
std::string group_thousands(const std::string &num);
// 1536 -> "1.5 KiB".
std::string human_bytes(std::uint64_t bytes);
// A sampling period of CPU time as a rate: "1,000" for 1,000,000 ns, "0.5"
// for 2,000,000,000.
std::string hz_text(std::uint64_t period_ns);
// "every 1,000,000 ns of CPU time (1,000 Hz)" (CLOCK.PROF) or "every 10
// events".
std::string rate_text(bool clock_prof, std::uint64_t period);

} // namespace hwpmc_tools
