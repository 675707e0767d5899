// SPDX-License-Identifier: BSD-2-Clause
// The owner's read page (module 1.6, <linux/hwpmc.h> "the read page"):
// pmc_read() of a PMC that has a slot reads it there, with no system call,
// and uses PMCRW whenever the page cannot answer.
#pragma once

#include <linux/hwpmc.h>

#include <array>
#include <atomic>
#include <cstdint>

namespace hwpmc::detail {

// Ordered RDTSC (LFENCE; RDTSC).  Tests replace it.
using rdtsc_fn = uint64_t (*)();
rdtsc_fn &rdtsc_reader();

// The header's reader: true with the count in *value, false when PMCRW
// must answer (the slot is not generation `gen`'s, or cannot answer now,
// or kept changing under the read).  Inline: pmc_read()'s fast path.
inline bool readpage_read(const hwpmc_readpage *page, uint32_t slot, uint32_t gen,
                          uint64_t *value) {
    if (slot >= HWPMC_READPAGE_NSLOTS)
        return false;
    const hwpmc_readslot &s = page->rp_slots[slot];
    for (int tries = 0; tries < 4; ++tries) {
        const uint64_t ctl = __atomic_load_n(&s.rs_ctl, __ATOMIC_ACQUIRE);
        if (HWPMC_RS_GEN(ctl) != gen || (ctl & (HWPMC_RS_VALUE | HWPMC_RS_TSC)) == 0)
            return false;
        uint64_t v = __atomic_load_n(&s.rs_value, __ATOMIC_ACQUIRE);
        if (ctl & HWPMC_RS_TSC) [[unlikely]]
            v += rdtsc_reader()();
        if (__atomic_load_n(&s.rs_ctl, __ATOMIC_ACQUIRE) == ctl) {
            *value = v;
            return true;
        }
    }
    return false;
}

// mmap() of the page on a session fd: the page, or nullptr (a module
// before 1.6, or any error: PMCRW then reads everything).  Tests replace
// it (the fake kernel's page); unmap undoes a map.
struct readpage_mapper {
    const hwpmc_readpage *(*map)(int fd);
    void (*unmap)(const hwpmc_readpage *page);
};
readpage_mapper &readpage_mapping();

// Incremented in every fork(2)'s child (pthread_atfork), where no read
// page of the parent is mapped: a page mapped at generation g is usable
// (and unmapped) only while this is still g.  Registers the handler.
unsigned fork_generation();

// GETREADSLOT: true with the PMC's slot and generation, false when it has
// none (ENOENT, or a module before 1.6: ENOTTY).
bool readpage_slot(int fd, uint32_t id, uint32_t *slot, uint32_t *gen);

// What the C API knows: its session's page and, per PMC id below
// kMaxIds, its slot (0: none; else gen << 32 | slot, gen never 0).
struct readpage_state {
    static constexpr uint32_t kMaxIds = 1024;
    // First: at the start of capi_hot, pmc_read()'s look at a slot is
    // one indexed load from the state's address.
    std::array<std::atomic<uint64_t>, kMaxIds> slots{};
    std::atomic<const hwpmc_readpage *> page{nullptr};

    // pmc_read()'s fast path, in two steps: the PMC's slot (0: none), then
    // the read of that slot, true with the count when the page answers.
    uint64_t slot(uint32_t id) const {
        return id < kMaxIds ? slots[id].load(std::memory_order_relaxed) : 0;
    }
    bool read_slot(uint64_t si, uint64_t *value) const {
        const hwpmc_readpage *p = page.load(std::memory_order_acquire);
        return p != nullptr &&
               readpage_read(p, static_cast<uint32_t>(si), static_cast<uint32_t>(si >> 32), value);
    }
    // After PMCALLOCATE: ask the kernel for the PMC's slot (GETREADSLOT).
    void learn(int fd, uint32_t id);
    void forget(uint32_t id) {
        if (id < kMaxIds)
            slots[id].store(0, std::memory_order_relaxed);
    }
    // pmc_init(): map the page (and forget it in a fork()'s child, which
    // does not inherit the mapping).
    void map(int fd);
    // capi_reset(): unmap, forget every slot.
    void reset();
};

} // namespace hwpmc::detail
