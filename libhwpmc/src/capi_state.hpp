// SPDX-License-Identifier: BSD-2-Clause
// The C API's process-wide state: pmc(3) has one implicit session.
#pragma once

#include <hwpmc/pmc.h>

#include <atomic>
#include <mutex>

namespace hwpmc::detail {

struct capi_state {
    std::mutex init_lock;          // serializes pmc_init()
    std::atomic<int> fd{-1};       // -1 until pmc_init() succeeds
    struct pmc_cpuinfo cpuinfo {}; // written once, before fd is published
};

capi_state &capi();

// The session's fd, or -1 with errno ENXIO before pmc_init() (FreeBSD's
// libpmc says ENXIO for "not initialized" too).
int capi_fd();

} // namespace hwpmc::detail
