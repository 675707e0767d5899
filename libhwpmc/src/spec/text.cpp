// SPDX-License-Identifier: BSD-2-Clause
#include "text.hpp"

#include <cctype>
#include <charconv>

namespace hwpmc::detail {

namespace {
char fold(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}
} // namespace

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (fold(a[i]) != fold(b[i]))
            return false;
    return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const auto pos = s.find(sep);
        out.push_back(s.substr(0, pos));
        if (pos == std::string_view::npos)
            return out;
        s.remove_prefix(pos + 1);
    }
}

std::optional<uint64_t> parse_number(std::string_view s, uint64_t max) {
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    } else if (s.size() > 1 && s[0] == '0') {
        base = 8;
        s.remove_prefix(1);
    }
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v > max)
        return std::nullopt;
    return v;
}

std::string join(const std::vector<std::string> &words, std::string_view sep) {
    std::string out;
    for (const auto &w : words) {
        if (!out.empty())
            out += sep;
        out += w;
    }
    return out;
}

} // namespace hwpmc::detail
