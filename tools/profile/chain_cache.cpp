// SPDX-License-Identifier: GPL-2.0
#include "chain_cache.hpp"

#include <algorithm>
#include <cstring>

namespace hwpmc_tools {

namespace {

inline uint64_t step(uint64_t h, uint64_t v) {
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

} // namespace

namespace {

// What a cached chain takes on average, for the reservations: its entry,
// 16 addresses and 16 frames, two slots.
template <class E>
constexpr size_t per_entry = sizeof(E) + 16 * sizeof(uint64_t) + 16 * sizeof(uint32_t) + 8;

} // namespace

chain_cache::chain_cache(resolver &res, size_t max_bytes)
    : res_(res), max_entries_(std::max<size_t>(max_bytes / per_entry<entry>, 4)) {
    // Reserved, not touched: the memory grows with the chains cached, and
    // no copy of a vector that doubles ever holds twice the cache.
    entries_.reserve(max_entries_);
    pcs_.reserve(max_entries_ * 16);
    frames_.reserve(max_entries_ * 16);
}

void chain_cache::flush() {
    flushes++;
    entries_.clear();
    pcs_.clear();
    frames_.clear();
    slots_.clear();
}

resolved_chain chain_cache::resolve(const raw_sample &r) {
    bool truncated = false;
    if (r.us && (r.us->flags & PMCLOG_US_F_REGS) && !is_leaf_stack(*r.us)) {
        // Unwound whole: its chain comes from its stack, not its record.
        const std::vector<uint64_t> &pcs = res_.chain(r, &buf_, &truncated);
        resolved_chain c;
        c.comm = res_.frames_of(r, pcs, truncated, &scratch_);
        c.frames = scratch_;
        return c;
    }
    const std::vector<uint64_t> &pcs = res_.chain(r, &buf_, &truncated);
    const uint64_t unmapped = res_.user_unmapped, kframes = res_.kernel_frames,
                   hidden = res_.kernel_hidden;
    // The key: the leaves by their frames (the PC varies inside its
    // function from sample to sample), whether an address next to a leaf
    // repeats it (frames_of() shows a repeat once), the other addresses.
    const uint32_t ep = res_.epoch(r.pid, r.t);
    const size_t npc = pcs.size(), nk = std::min<size_t>(r.nkernel, npc);
    uint32_t kleaf = UINT32_MAX, uleaf = UINT32_MAX, repeats = 0;
    size_t skip0 = SIZE_MAX, skip1 = SIZE_MAX; // the leaves' places: 0 in the key
    if (nk > 0 && !res_.user_only()) {
        kleaf = res_.frame_at(r.pid, ep, pcs[0], r.t, true, true);
        skip0 = 0;
    }
    if (npc > nk) {
        uleaf = res_.frame_at(r.pid, ep, pcs[nk], r.t, false, true);
        skip1 = nk;
    }
    repeats = (npc > 1 && pcs[1] == pcs[0]) | (nk > 0 && nk < npc && pcs[nk] == pcs[nk - 1]) << 1 |
              (nk + 1 < npc && pcs[nk + 1] == pcs[nk]) << 2;
    // The key's addresses, the leaves' 0: hashed with one multiply each
    // (and mixed at the end), compared with memcmp.
    key_.resize(npc);
    uint64_t *const key = key_.data();
    if (npc)
        std::memcpy(key, pcs.data(), npc * sizeof(uint64_t));
    if (skip0 != SIZE_MAX)
        key[skip0] = 0;
    if (skip1 != SIZE_MAX)
        key[skip1] = 0;
    uint64_t h = step(step(step(step(step(0, r.pid), ep), r.flags), r.nkernel), npc);
    h = step(step(step(h, kleaf), uleaf), repeats);
    for (size_t i = 0; i < npc; i++)
        h = (h ^ key[i]) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    auto same_key = [&](const uint64_t *k) {
        return npc == 0 || std::memcmp(k, key, npc * sizeof(uint64_t)) == 0;
    };
    res_.user_unmapped = unmapped;
    res_.kernel_frames = kframes;
    size_t at = slots_.find(h, [&](uint32_t i) {
        const entry &e = entries_[i];
        return e.hash == h && e.pid == r.pid && e.epoch == ep && e.flags == r.flags &&
               e.nkernel == r.nkernel && e.npc == npc && e.kleaf == kleaf && e.uleaf == uleaf &&
               e.repeats == repeats && same_key(pcs_.data() + e.pcs);
    });
    if (slots_.found(at)) {
        entry &e = entries_[slots_.index(at)];
        hits++;
        res_.user_unmapped += e.unmapped;
        res_.kernel_frames += e.kernel_frames;
        res_.kernel_hidden += e.hidden;
        return {e.comm, {frames_.data() + e.frames, e.nframe}, &e.memo};
    }
    misses++;
    const uint32_t comm = res_.frames_of(r, pcs, truncated, &scratch_);
    if (!entries_.empty() &&
        (entries_.size() == entries_.capacity() || pcs_.size() + npc > pcs_.capacity() ||
         frames_.size() + scratch_.size() > frames_.capacity())) {
        flush();
        at = slots_.find(h, [](uint32_t) { return false; });
    }
    entry e{};
    e.hash = h;
    e.pid = r.pid;
    e.epoch = ep;
    e.flags = r.flags;
    e.nkernel = r.nkernel;
    e.pcs = static_cast<uint32_t>(pcs_.size());
    e.npc = static_cast<uint32_t>(npc);
    e.kleaf = kleaf;
    e.uleaf = uleaf;
    e.repeats = repeats;
    e.frames = static_cast<uint32_t>(frames_.size());
    e.nframe = static_cast<uint32_t>(scratch_.size());
    e.comm = comm;
    e.unmapped = static_cast<uint32_t>(res_.user_unmapped - unmapped);
    e.kernel_frames = static_cast<uint32_t>(res_.kernel_frames - kframes);
    e.hidden = static_cast<uint32_t>(res_.kernel_hidden - hidden);
    pcs_.insert(pcs_.end(), key_.begin(), key_.end());
    frames_.insert(frames_.end(), scratch_.begin(), scratch_.end());
    entries_.push_back(e);
    slots_.put(at, entries_.size() - 1, entries_, 2 * max_entries_);
    entry &last = entries_.back();
    return {last.comm, {frames_.data() + last.frames, last.nframe}, &last.memo};
}

} // namespace hwpmc_tools
