// SPDX-License-Identifier: GPL-2.0
// Resolved samples aggregated for the sampling tools: a flat profile whose
// entries are chosen by sort keys (comm, pid, tid, dso, sym, cpu) with self
// and children (inclusive) counts, and call trees (the callers of an
// entry, or its callees).
#pragma once

#include "chain_cache.hpp"
#include "hash_index.hpp"
#include "samples.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace hwpmc_tools {

enum class sort_key {
    comm,
    pid,
    tid,
    dso,
    sym,
    cpu
};

// "comm,dso,sym" -> keys; false with *bad naming the unknown key.
bool parse_sort_keys(const std::string &s, std::vector<sort_key> *keys, std::string *bad);
const char *sort_key_title(sort_key k); // "Command", "Shared Object", ...

// Samples by the values of the sort keys of their frames, aggregated as
// they come: a profile keeps each distinct call chain once, with its count
// (and the command, and the pid, tid and cpu its keys show), never the
// samples themselves, so it does not grow with repeated samples.  The
// entries are made from the chains in the order of their first samples,
// which gives what adding the samples one by one would give.
class profile {
public:
    using key = std::array<uint64_t, 6>;

    struct entry {
        key k{};
        uint64_t self = 0;     // samples whose innermost frame is this entry
        uint64_t children = 0; // samples with this entry anywhere in their chain
        // One sample's values, to print the columns.
        uint32_t comm = 0, pid = 0, tid = 0, cpu = 0, frame = 0;
    };

    // A distinct chain: its samples' command (and pid, tid, cpu where a
    // key shows them, else 0) and frames, innermost first.
    struct chain {
        uint32_t comm = 0, pid = 0, tid = 0, cpu = 0;
        uint32_t first = 0, len = 0; // frames(): [first, first + len) of the pool
        uint64_t hash = 0;
        uint64_t count = 0; // samples
    };

    profile(const resolver &res, std::vector<sort_key> keys);

    void add(const sample &s);
    // A sample of thread `tid` of process `pid` on `cpu`, resolved by a
    // chain_cache: a chain seen before in this profile (c.memo) is counted
    // without looking at its frames.
    void add(const resolved_chain &c, uint32_t pid, uint32_t tid, uint32_t cpu);
    void clear();

    // Entries by self (or children) count, the largest first; valid until
    // the next add() or clear().
    std::vector<const entry *> sorted(bool by_children) const;

    // The text of one column of an entry.
    std::string column(const entry &e, sort_key k) const;

    const std::vector<sort_key> &keys() const noexcept { return keys_; }
    uint64_t total() const noexcept { return total_; }
    // The distinct chains, in the order of their first samples.
    const std::vector<chain> &chains() const noexcept { return chains_; }
    std::span<const uint32_t> frames(const chain &c) const {
        return {pool_.data() + c.first, c.len};
    }
    key key_of(const chain &c, uint32_t frame) const;

    // The chains (indices into chains()) whose innermost frame is entry
    // e, and those with e anywhere (indexed on first use).
    const std::vector<uint32_t> &self_chains(const entry &e) const;
    const std::vector<uint32_t> &chain_chains(const entry &e) const;

private:
    uint64_t hash_of(std::span<const uint32_t> frames, const chain &c) const;
    bool same(const chain &c, std::span<const uint32_t> frames, const chain &want) const;
    uint32_t add_chain(uint32_t comm, uint32_t pid, uint32_t tid, uint32_t cpu,
                       std::span<const uint32_t> frames);
    void build() const;
    void index() const;

    const resolver *res_;
    std::vector<sort_key> keys_;
    bool by_pid_ = false, by_tid_ = false, by_cpu_ = false;
    std::vector<chain> chains_;
    std::vector<uint32_t> pool_; // the chains' frames
    hash_index slots_{64};       // the chains by their hash
    uint64_t total_ = 0;
    uint64_t gen_; // profile_memo::gen
    mutable bool built_ = false, indexed_ = false;
    mutable std::map<key, entry> entries_;
    mutable std::map<std::string, uint32_t> dso_ids_;
    mutable std::vector<uint32_t> frame_dso_; // frame id -> dso id + 1 (0: not yet)
    mutable std::map<key, std::vector<uint32_t>> self_idx_, chain_idx_;
};

// A tree of call paths: the root is one function; children are its callers
// (or callees), with the samples through each path.
struct call_tree {
    struct node {
        uint32_t frame;
        uint64_t count = 0;
        std::vector<uint32_t> kids; // indices into nodes
    };
    std::vector<node> nodes; // nodes[0]: the root

    explicit call_tree(uint32_t root_frame) { nodes.push_back({root_frame, 0, {}}); }
    // The path below the root (frames in order, away from it) of `count`
    // samples.
    template <typename It>
    void add(It first, It last, uint64_t count = 1) {
        uint32_t n = 0;
        nodes[0].count += count;
        for (; first != last; ++first)
            n = child(n, *first, count);
    }
    // The kids of a node, the largest first.
    std::vector<uint32_t> sorted_kids(uint32_t n) const;

private:
    uint32_t child(uint32_t n, uint32_t frame, uint64_t count);
};

// The callers of entry `e` (samples whose innermost frame is e), or its
// callees (samples through e, from its outermost occurrence inwards).
call_tree callers_of(const profile &p, const profile::entry &e);
call_tree callees_of(const profile &p, const profile::entry &e);

} // namespace hwpmc_tools
