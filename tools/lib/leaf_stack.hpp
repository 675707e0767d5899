// SPDX-License-Identifier: GPL-2.0
// The leaf's caller in frame-pointer callchains (hwpmc-record -g).
//
// A frame-pointer walk misses the caller of a function that has not set up
// its frame yet or never does (GCC gives a leaf function no frame, even
// with -fno-omit-frame-pointer): the walk starts at the frame pointer,
// which is still the caller's, and finds the caller's caller.  So
// hwpmc-record -g also asks each sample for a USERSTACK of this many bytes
// (PMC_F_USERSTACK: the user registers and the words at the stack
// pointer), enough for one CFI step at the sampled PC; hwpmc-report keeps
// the frame-pointer chain and puts in the return address that step finds
// when the chain does not have it.  A USERSTACK of at most this many bytes
// is such a sample's; --call-graph dwarf copies more (and is unwound
// whole).
#pragma once

#include <cstdint>

namespace hwpmc_tools {

constexpr uint32_t leaf_stack_size = 64;

} // namespace hwpmc_tools
