// SPDX-License-Identifier: BSD-2-Clause
// Small string helpers of the specifier parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwpmc::detail {

bool iequals(std::string_view a, std::string_view b);
bool istarts_with(std::string_view s, std::string_view prefix);
std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);

// An unsigned number as strtoul(3) base 0 reads it (0x: hex, 0: octal,
// else decimal), the whole of `s`, at most `max`.
std::optional<uint64_t> parse_number(std::string_view s, uint64_t max);

// "a, b, c"
std::string join(const std::vector<std::string> &words, std::string_view sep = ", ");

} // namespace hwpmc::detail
