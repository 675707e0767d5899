// SPDX-License-Identifier: BSD-2-Clause
#include "readpage.hpp"

#include "capi_state.hpp"
#include "sys.hpp"

#include <mutex>
#include <pthread.h>
#include <sys/mman.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace hwpmc::detail {

namespace {

uint64_t x86_rdtsc() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_lfence(); // not before the loads that precede it
    return __rdtsc();
#else
    return 0;
#endif
}

const hwpmc_readpage *mmap_page(int fd) {
    void *p = ::mmap(nullptr, HWPMC_READPAGE_SIZE, PROT_READ, MAP_SHARED, fd,
                     static_cast<off_t>(HWPMC_READPAGE_OFFSET));
    if (p == MAP_FAILED)
        return nullptr;
    const auto *page = static_cast<const hwpmc_readpage *>(p);
    // A layout this library does not know: not used.
    if (page->rp_version != HWPMC_READPAGE_VERSION ||
        page->rp_slot_size != sizeof(hwpmc_readslot) || page->rp_nslots < HWPMC_READPAGE_NSLOTS) {
        ::munmap(p, HWPMC_READPAGE_SIZE);
        return nullptr;
    }
    return page;
}

void munmap_page(const hwpmc_readpage *page) {
    ::munmap(const_cast<hwpmc_readpage *>(page), HWPMC_READPAGE_SIZE);
}

std::atomic<unsigned> fork_gen{0};

// fork()'s child has no mapping (VM_DONTCOPY): it reads with PMCRW.
void forget_in_child() {
    hot().readpage.page.store(nullptr, std::memory_order_release);
    fork_gen.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

rdtsc_fn &rdtsc_reader() {
    static rdtsc_fn fn = x86_rdtsc;
    return fn;
}

readpage_mapper &readpage_mapping() {
    static readpage_mapper m{mmap_page, munmap_page};
    return m;
}

unsigned fork_generation() {
    static std::once_flag atfork;
    std::call_once(atfork, [] { pthread_atfork(nullptr, nullptr, forget_in_child); });
    return fork_gen.load(std::memory_order_relaxed);
}

bool readpage_slot(int fd, uint32_t id, uint32_t *slot, uint32_t *gen) {
    pmc_op_getreadslot a{};
    a.pm_pmcid = id;
    if (xioctl(fd, HWPMC_IOC_GETREADSLOT, &a) < 0 || a.pm_gen == 0 ||
        a.pm_slot >= HWPMC_READPAGE_NSLOTS)
        return false;
    *slot = a.pm_slot;
    *gen = a.pm_gen;
    return true;
}

void readpage_state::map(int fd) {
    (void)fork_generation(); // the child handler, before the page exists
    page.store(readpage_mapping().map(fd), std::memory_order_release);
}

void readpage_state::learn(int fd, uint32_t id) {
    if (id >= kMaxIds || page.load(std::memory_order_relaxed) == nullptr)
        return;
    uint32_t slot = 0, gen = 0;
    // ENOENT (no slot), ENOTTY (an older module): PMCRW reads it.
    if (!readpage_slot(fd, id, &slot, &gen)) {
        slots[id].store(0, std::memory_order_relaxed);
        return;
    }
    slots[id].store(static_cast<uint64_t>(gen) << 32 | slot, std::memory_order_relaxed);
}

void readpage_state::reset() {
    if (const hwpmc_readpage *p = page.exchange(nullptr); p != nullptr)
        readpage_mapping().unmap(p);
    for (auto &s : slots)
        s.store(0, std::memory_order_relaxed);
}

} // namespace hwpmc::detail
