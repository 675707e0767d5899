// SPDX-License-Identifier: BSD-2-Clause
#include "capi_state.hpp"

#include <cerrno>
#include <unistd.h>

namespace hwpmc::detail {

int capi_fd() {
    const int fd = hot().fd.load(std::memory_order_acquire);
    if (fd < 0)
        errno = ENXIO;
    return fd;
}

void capi_reset() {
    capi_state &s = capi();
    std::lock_guard lock(s.init_lock);
    const int fd = hot().fd.exchange(-1);
    if (fd >= 0)
        ::close(fd);
    s.info = session_info{};
    hot().readpage.reset();
    std::lock_guard classes(s.classes_lock);
    s.classes.clear();
    s.rdpmc.clear();
    hot().rdpmc_granted.store(false, std::memory_order_relaxed);
}

std::string &capi_errmsg() {
    thread_local std::string msg;
    return msg;
}

} // namespace hwpmc::detail
