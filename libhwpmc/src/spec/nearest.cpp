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

namespace {

std::string lowered(std::string_view s) {
    std::string out(s);
    for (char &c : out)
        c = fold(c);
    return out;
}

// Optimal string alignment distance of two already case-folded strings,
// three rolling rows.
std::size_t osa_distance(std::string_view a, std::string_view b) {
    const std::size_t m = b.size();
    std::vector<std::size_t> rows(3 * (m + 1));
    std::size_t *prev2 = rows.data(), *prev = prev2 + m + 1, *cur = prev + m + 1;
    std::iota(prev, prev + m + 1, std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= m; ++j) {
            std::size_t d = std::min(prev[j], cur[j - 1]) + 1;
            d = std::min(d, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d = std::min(d, prev2[j - 2] + 1);
            cur[j] = d;
        }
        std::size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[m];
}

} // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    return osa_distance(lowered(a), lowered(b));
}

std::vector<std::string> nearest(std::string_view word, const std::vector<std::string> &candidates,
                                 std::size_t n) {
    // A long token is no misspelling of a name: no suggestions (and no
    // quadratic work on hostile input).
    if (word.size() > max_word)
        return {};
    std::vector<std::pair<std::size_t, std::size_t>> scored; // (distance, index)
    scored.reserve(candidates.size());
    const std::string w = lowered(word);
    for (std::size_t i = 0; i < candidates.size(); ++i)
        scored.emplace_back(osa_distance(w, lowered(candidates[i])), i);
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
