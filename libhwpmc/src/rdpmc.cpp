// SPDX-License-Identifier: BSD-2-Clause
#include "rdpmc.hpp"

#include <unistd.h>

namespace hwpmc::detail {

namespace {

uint64_t x86_rdpmc(uint32_t index) {
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(index));
    return static_cast<uint64_t>(hi) << 32 | lo;
#else
    (void)index;
    return 0;
#endif
}

} // namespace

rdpmc_fn &rdpmc_reader() {
    static rdpmc_fn fn = x86_rdpmc;
    return fn;
}

void rdpmc_state::grant(uint32_t idx) {
    granted = true;
    pid = ::getpid();
    index = idx;
}

bool rdpmc_state::usable() const {
#if defined(__x86_64__) || defined(__i386__)
    // The kernel grants RDPMC to the owner's process (its mm): a child of
    // fork(2) inherits this state but not the grant, and would fault.
    return granted && counting && running && have_base && width > 0 && width <= 64 &&
           pid == ::getpid();
#else
    return false;
#endif
}

uint64_t rdpmc_extend(uint64_t last, uint64_t raw, uint32_t width) {
    const uint64_t mask = width >= 64 ? ~0ULL : (1ULL << width) - 1;
    const uint64_t delta = (raw - last) & mask;
    if (delta > mask / 2)
        return last; // behind: see the header
    return last + delta;
}

uint64_t rdpmc_state::extend(uint64_t raw) {
    base = rdpmc_extend(base, raw, width);
    return base;
}

void rdpmc_state::read_by_ioctl(uint64_t value) {
    if (granted && running) {
        base = value;
        have_base = true;
    }
}

} // namespace hwpmc::detail
