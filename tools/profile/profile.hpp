// SPDX-License-Identifier: GPL-2.0
// Resolved samples aggregated for the sampling tools: a flat profile whose
// entries are chosen by sort keys (comm, pid, tid, dso, sym, cpu) with self
// and children (inclusive) counts, and call trees (the callers of an
// entry, or its callees).
#pragma once

#include "samples.hpp"

#include <array>
#include <cstdint>
#include <map>
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

// Samples by the values of the sort keys of their frames.
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

    profile(const resolver &res, std::vector<sort_key> keys);

    void add(const sample &s);
    void clear();

    // Entries by self (or children) count, the largest first.
    std::vector<const entry *> sorted(bool by_children) const;

    // The text of one column of an entry.
    std::string column(const entry &e, sort_key k) const;

    const std::vector<sort_key> &keys() const noexcept { return keys_; }
    uint64_t total() const noexcept { return total_; }
    const std::vector<const sample *> &samples() const noexcept { return samples_; }
    key key_of(const sample &s, uint32_t frame) const;

    // The samples whose innermost frame is entry e, and those with e
    // anywhere in their chain (indexed on first use).
    const std::vector<const sample *> &self_samples(const entry &e) const;
    const std::vector<const sample *> &chain_samples(const entry &e) const;

private:
    void index() const;

    const resolver &res_;
    std::vector<sort_key> keys_;
    std::map<key, entry> entries_;
    std::map<std::string, uint32_t> dso_ids_;
    std::vector<const sample *> samples_;
    uint64_t total_ = 0;
    mutable bool indexed_ = false;
    mutable std::map<key, std::vector<const sample *>> self_idx_, chain_idx_;
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
    // One sample's path below the root (frames in order, away from it).
    template <typename It>
    void add(It first, It last) {
        uint32_t n = 0;
        nodes[0].count++;
        for (; first != last; ++first)
            n = child(n, *first);
    }
    // The kids of a node, the largest first.
    std::vector<uint32_t> sorted_kids(uint32_t n) const;

private:
    uint32_t child(uint32_t n, uint32_t frame);
};

// The callers of entry `e` (samples whose innermost frame is e), or its
// callees (samples through e, from its outermost occurrence inwards).
call_tree callers_of(const profile &p, const profile::entry &e);
call_tree callees_of(const profile &p, const profile::entry &e);

} // namespace hwpmc_tools
