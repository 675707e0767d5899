// SPDX-License-Identifier: BSD-2-Clause
// The C API's process-wide state: pmc(3) has one implicit session.
#pragma once

#include "rdpmc.hpp"
#include "readpage.hpp"
#include "session.hpp"

#include <hwpmc/pmc.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

namespace hwpmc::detail {

// What pmc_read() looks at, constant-initialized (constinit): no first
// use guard before it, which capi()'s function-local state has, and which
// inlined into pmc_read() kept registers saved on its every path.
struct capi_hot {
    // The session's read page and its PMCs' slots (pmc_read() without a
    // system call).
    readpage_state readpage;
    std::atomic<int> fd{-1}; // -1 until pmc_init() succeeds
    // Set (under capi().classes_lock) before pmc_get_msr() first grants
    // RDPMC to any PMC, cleared only by capi_reset(): while false, no
    // rdpmc entry is granted, so pmc_read() neither takes the lock nor
    // looks the PMC up (an ioctl read then changes no state either).
    std::atomic<bool> rdpmc_granted{false};
};

inline constinit capi_hot capi_hot_state{};

inline capi_hot &hot() {
    return capi_hot_state;
}

struct capi_state {
    std::mutex init_lock; // serializes pmc_init()
    session_info info;    // written once, before hot().fd is published

    // The class of each PMC allocated through pmc_allocate() (pmc_width()).
    std::mutex classes_lock;
    std::unordered_map<pmc_id_t, enum pmc_class> classes;
    // Their user-mode RDPMC (pmc_get_msr(), pmc_read()), same lock.
    std::unordered_map<pmc_id_t, rdpmc_state> rdpmc;
};

inline capi_state &capi() {
    static capi_state state;
    return state;
}

// The session's fd, or -1 with errno ENXIO before pmc_init() (FreeBSD's
// libpmc says ENXIO for "not initialized" too).
int capi_fd();

// Tests: close the session and forget everything (as if never initialized).
void capi_reset();

// The calling thread's last pmc_allocate() explanation (pmc_errmsg()).
std::string &capi_errmsg();

} // namespace hwpmc::detail
