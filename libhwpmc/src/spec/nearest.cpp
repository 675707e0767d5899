// SPDX-License-Identifier: BSD-2-Clause
#include "nearest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace hwpmc::detail {

namespace {
char fold(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}
} // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment distance, three rolling rows.
    const std::size_t m = b.size();
    std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    std::iota(prev.begin(), prev.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= m; ++j) {
            const bool same = fold(a[i - 1]) == fold(b[j - 1]);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]))
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
        }
        std::swap(prev2, prev);
        std::swap(prev, cur);
    }
    return prev[m];
}

std::vector<std::string> nearest(std::string_view word, const std::vector<std::string> &candidates,
                                 std::size_t n) {
    std::vector<std::pair<std::size_t, std::size_t>> scored; // (distance, index)
    scored.reserve(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i)
        scored.emplace_back(edit_distance(word, candidates[i]), i);
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (const auto &[distance, index] : scored) {
        if (out.size() == n)
            break;
        if (std::find(out.begin(), out.end(), candidates[index]) == out.end())
            out.push_back(candidates[index]);
    }
    return out;
}

} // namespace hwpmc::detail
