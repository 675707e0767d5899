// SPDX-License-Identifier: BSD-2-Clause
// "Did you mean": the candidates nearest to a misspelt name.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hwpmc::detail {

// Edit distance (insertions, deletions, substitutions, transpositions of
// adjacent characters), ignoring case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Up to `n` candidates nearest to `word`, nearest first (ties in the
// candidates' order), without duplicates; none for a word longer than
// max_word characters.
constexpr std::size_t max_word = 64;
std::vector<std::string> nearest(std::string_view word, const std::vector<std::string> &candidates,
                                 std::size_t n = 3);

} // namespace hwpmc::detail
