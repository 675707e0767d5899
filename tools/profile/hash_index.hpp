// SPDX-License-Identifier: GPL-2.0
// An open-addressing hash index (linear probing) over a vector of items
// that carry their own 64-bit `hash`: each slot holds an item's index + 1,
// 0 is empty.  The items live in the caller's vector; the index only
// finds them.  Shared by the chain cache and the profile.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hwpmc_tools {

class hash_index {
public:
    explicit hash_index(size_t first_size) : first_size_(first_size) {}

    size_t size() const noexcept { return slots_.size(); }
    // Forget every item, keeping the slots' memory.
    void clear() { std::fill(slots_.begin(), slots_.end(), 0); }
    // Forget every item and the slots too.
    void reset() { slots_.clear(); }

    // The slot of the first item with hash h for which same(index) holds,
    // or the empty slot where such an item goes (found() tells which).
    template <class Same>
    size_t find(uint64_t h, Same same) {
        if (slots_.empty())
            slots_.assign(first_size_, 0);
        const size_t mask = slots_.size() - 1;
        size_t at = h & mask;
        for (; slots_[at]; at = (at + 1) & mask)
            if (same(slots_[at] - 1))
                return at;
        return at;
    }
    bool found(size_t slot) const { return slots_[slot] != 0; }
    uint32_t index(size_t slot) const { return slots_[slot] - 1; }

    // Put item `index` of `items` in empty slot `slot` (from find()), and
    // double the slots when more than half are used (items[i].hash says
    // where each goes again), up to max_size slots.
    template <class Items>
    void put(size_t slot, size_t index, const Items &items, size_t max_size = SIZE_MAX) {
        slots_[slot] = static_cast<uint32_t>(index + 1);
        if (items.size() * 2 <= slots_.size() || slots_.size() >= max_size)
            return;
        std::vector<uint32_t> slots(slots_.size() * 2, 0);
        const size_t mask = slots.size() - 1;
        for (size_t i = 0; i < items.size(); i++) {
            size_t at = items[i].hash & mask;
            while (slots[at])
                at = (at + 1) & mask;
            slots[at] = static_cast<uint32_t>(i + 1);
        }
        slots_.swap(slots);
    }

private:
    size_t first_size_; // a power of two
    std::vector<uint32_t> slots_;
};

} // namespace hwpmc_tools
