// SPDX-License-Identifier: GPL-2.0
#include "numbers.hpp"

#include "common.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hwpmc_tools {

std::optional<double> to_number(const char *arg) {
    char *end;
    errno = 0;
    double v = std::strtod(arg, &end);
    if (!*arg || *end || errno || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::optional<std::uint64_t> to_whole(const char *arg, int base) {
    char *end;
    errno = 0;
    unsigned long long v = std::strtoull(arg, &end, base);
    if (!*arg || *end || errno || *arg == '-')
        return std::nullopt;
    return v;
}

double parse_positive(const char *prog, const char *arg, const char *opt) {
    auto v = to_number(arg);
    if (!v || !(*v > 0))
        usage_error(prog, std::string(opt) + " wants a positive number, not '" + arg + "'");
    return *v;
}

double parse_at_least(const char *prog, const char *arg, const char *opt, double min) {
    auto v = to_number(arg);
    if (!v || !(*v >= min))
        usage_error(prog, std::string(opt) + " wants a number >= " +
                              (min == std::floor(min) ? std::to_string(static_cast<long>(min))
                                                      : std::to_string(min)) +
                              ", not '" + arg + "'");
    return *v;
}

std::uint64_t parse_count(const char *prog, const char *arg, const char *opt) {
    auto v = to_whole(arg);
    if (!v || *v == 0)
        usage_error(prog, std::string(opt) + " wants a positive whole number, not '" + arg + "'");
    return *v;
}

std::string thousands(std::uint64_t v) {
    return group_thousands(std::to_string(v));
}

std::string group_thousands(const std::string &num) {
    size_t start = !num.empty() && num[0] == '-' ? 1 : 0, dot = num.find('.');
    size_t end = dot == std::string::npos ? num.size() : dot;
    std::string out = num.substr(0, start), ip = num.substr(start, end - start);
    int n = static_cast<int>(ip.size());
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out += ',';
        out += ip[static_cast<size_t>(i)];
    }
    return out + num.substr(end);
}

std::string human_bytes(std::uint64_t bytes) {
    static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
    return buf;
}

std::string hz_text(std::uint64_t period_ns) {
    double hz = 1e9 / static_cast<double>(period_ns);
    char buf[32];
    if (hz >= 1 && std::fabs(hz - std::round(hz)) < 0.005)
        return thousands(static_cast<std::uint64_t>(std::round(hz)));
    std::snprintf(buf, sizeof(buf), "%.3g", hz);
    return buf;
}

std::string rate_text(bool clock_prof, std::uint64_t period) {
    if (clock_prof)
        return "every " + thousands(period) + " ns of CPU time (" + hz_text(period) + " Hz)";
    return "every " + thousands(period) + (period == 1 ? " event" : " events");
}

} // namespace hwpmc_tools
