// SPDX-License-Identifier: BSD-2-Clause
#include "capi_state.hpp"

#include <cerrno>

namespace hwpmc::detail {

capi_state &capi() {
    static capi_state state;
    return state;
}

int capi_fd() {
    const int fd = capi().fd.load(std::memory_order_acquire);
    if (fd < 0)
        errno = ENXIO;
    return fd;
}

std::string &capi_errmsg() {
    thread_local std::string msg;
    return msg;
}

} // namespace hwpmc::detail
