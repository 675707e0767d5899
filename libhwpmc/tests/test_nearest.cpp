// SPDX-License-Identifier: BSD-2-Clause
#include "spec/nearest.hpp"
#include "spec/text.hpp"

#include <gtest/gtest.h>

using namespace hwpmc::detail;

TEST(EditDistance, Basics) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("abc", ""), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    EXPECT_EQ(edit_distance("cycles", "CYCLES"), 0u); // case-insensitive
    EXPECT_EQ(edit_distance("cylces", "cycles"), 1u); // transposition
    EXPECT_EQ(edit_distance("instrutions", "instructions"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Nearest, OrderedByDistanceThenCandidateOrder) {
    const std::vector<std::string> c = {"usr", "os", "edge", "inv", "anythread", "usr"};
    EXPECT_EQ(nearest("us", c), (std::vector<std::string>{"usr", "os", "inv"}));
    EXPECT_EQ(nearest("x", {}, 3), std::vector<std::string>{});
    EXPECT_EQ(nearest("usr", c, 1), std::vector<std::string>{"usr"});
    EXPECT_TRUE(nearest(std::string(max_word + 1, 'u'), c).empty());
}

TEST(ParseNumber, AsStrtoulBaseZero) {
    EXPECT_EQ(parse_number("0", 0xff), 0u);
    EXPECT_EQ(parse_number("255", 0xff), 255u);
    EXPECT_EQ(parse_number("0xFF", 0xff), 255u);
    EXPECT_EQ(parse_number("017", 0xff), 15u);
    EXPECT_FALSE(parse_number("256", 0xff));
    EXPECT_FALSE(parse_number("0x", 0xff));
    EXPECT_FALSE(parse_number("", 0xff));
    EXPECT_FALSE(parse_number("08", 0xff));
    EXPECT_FALSE(parse_number("1 ", 0xff));
    EXPECT_FALSE(parse_number("-1", 0xff));
    EXPECT_FALSE(parse_number("99999999999999999999999", ~0ull));
}
