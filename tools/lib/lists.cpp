// SPDX-License-Identifier: GPL-2.0
#include "lists.hpp"

#include "numbers.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace hwpmc_tools {

bool parse_cpu_list(const std::string &arg, std::vector<int> *cpus) {
    std::stringstream ss(arg);
    std::string tok;
    cpus->clear();
    while (std::getline(ss, tok, ',')) {
        char *end;
        long a = std::strtol(tok.c_str(), &end, 10), b = a;
        if (tok.empty() || end == tok.c_str() || a < 0)
            return false;
        if (*end == '-') {
            const char *s = end + 1;
            b = std::strtol(s, &end, 10);
            if (end == s || b < a)
                return false;
        }
        if (*end || b > 65535)
            return false;
        for (long c = a; c <= b; c++)
            cpus->push_back(static_cast<int>(c));
    }
    std::sort(cpus->begin(), cpus->end());
    cpus->erase(std::unique(cpus->begin(), cpus->end()), cpus->end());
    return !cpus->empty();
}

std::string cpu_list_string(const std::vector<int> &cpus) {
    std::string s;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            j++;
        if (!s.empty())
            s += ',';
        s += std::to_string(cpus[i]);
        if (j > i)
            s += "-" + std::to_string(cpus[j]);
        i = j + 1;
    }
    return s;
}

std::vector<int> online_cpus(int ncpu) {
    std::ifstream f("/sys/devices/system/cpu/online");
    std::string line;
    std::vector<int> cpus;
    if (std::getline(f, line) && parse_cpu_list(line, &cpus))
        return cpus;
    cpus.clear();
    for (int c = 0; c < ncpu; c++)
        cpus.push_back(c);
    return cpus;
}

bool parse_number_list(const std::string &arg, std::uint64_t min, std::uint64_t max,
                       std::vector<std::uint64_t> *out) {
    size_t i = 0;
    while (i <= arg.size()) {
        size_t j = arg.find(',', i);
        if (j == std::string::npos)
            j = arg.size();
        const std::string tok = arg.substr(i, j - i);
        auto v = to_whole(tok.c_str(), 10);
        if (!v || *v < min || *v > max)
            return false;
        out->push_back(*v);
        i = j + 1;
    }
    return true;
}

bool parse_pid_list(const std::string &arg, std::vector<pid_t> *pids) {
    std::vector<std::uint64_t> v;
    if (!parse_number_list(arg, 1, pid_max, &v))
        return false;
    pids->insert(pids->end(), v.begin(), v.end());
    return true;
}

} // namespace hwpmc_tools
