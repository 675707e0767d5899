// SPDX-License-Identifier: GPL-2.0
// Each distinct call chain resolved once, not each sample: a sample's
// frames depend only on its process, the state of that process's address
// space and name at its time (resolver::epoch()),
// its flags and its chain of addresses (after the leaf's caller is put in,
// resolver::chain()); of the innermost kernel and user addresses, which
// vary inside their functions from sample to sample, only their frames
// (resolver::frame_at(), cached by address) matter.  So a chain_cache
// keyed by those gives a repeated chain's frames with one hash and one
// comparison.  What resolving counts
// (resolver::user_unmapped, kernel_frames, kernel_hidden) is counted
// again on every hit, so the notes count samples as before.
//
// Samples unwound whole (--call-graph dwarf) are resolved one by one: their
// chains come from their stack copies.
//
// The cache is bounded (max_bytes): when full it starts afresh, which
// costs time, not results.  A profile keeps in each entry where the
// chain's samples go in it (profile_memo), so that adding a repeated chain
// is one counter's increment.
#pragma once

#include "hash_index.hpp"
#include "samples.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace hwpmc_tools {

// Where a chain went in a profile: the profile's generation (unique among
// all profiles and their clear()s; 0: none) and its chain there.
struct profile_memo {
    uint64_t gen = 0;
    uint32_t chain = 0;
};

// A sample's resolution, as resolver::resolve() gives it: valid until the
// next chain_cache::resolve().
struct resolved_chain {
    uint32_t comm = 0;
    std::span<const uint32_t> frames;
    profile_memo *memo = nullptr; // null: not cached
};

class chain_cache {
public:
    explicit chain_cache(resolver &res, size_t max_bytes = 12u << 20);

    resolved_chain resolve(const raw_sample &r);

    // Statistics (tests, tuning).
    uint64_t hits = 0, misses = 0, flushes = 0;
    size_t entries() const noexcept { return entries_.size(); }

private:
    struct entry {
        uint64_t hash;
        uint32_t pid, epoch, flags, nkernel;
        uint32_t pcs, npc;       // pcs_[pcs, pcs + npc): the key's addresses
        uint32_t kleaf, uleaf;   // the leaves' frames (UINT32_MAX: none)
        uint32_t repeats;        // addresses next to a leaf that repeat it
        uint32_t frames, nframe; // frames_[frames, frames + nframe)
        uint32_t comm;
        // what resolving it counted
        uint32_t unmapped, kernel_frames, hidden;
        profile_memo memo;
    };
    void flush();

    resolver &res_;
    size_t max_entries_;
    std::vector<entry> entries_;
    std::vector<uint64_t> pcs_;
    std::vector<uint32_t> frames_;
    hash_index slots_{1024}; // the entries by their hash
    // the chain being resolved, and the frames of one not cached
    std::vector<uint64_t> buf_;
    std::vector<uint64_t> key_; // its key's addresses
    std::vector<uint32_t> scratch_;
};

} // namespace hwpmc_tools
