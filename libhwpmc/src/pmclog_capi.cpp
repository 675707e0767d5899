// SPDX-License-Identifier: BSD-2-Clause
// pmclog(3): the C API over pmclog_parser.
#include "pmclog_parser.hpp"

#include <hwpmc/pmclog.h>

#include <cerrno>
#include <new>

using hwpmc::detail::pmclog_parser;

// pl_offset: one layout whatever _FILE_OFFSET_BITS the caller uses.
static_assert(sizeof(off_t) == 8);

extern "C" {

void *pmclog_open(int fd) {
    if (fd < PMCLOG_FD_NONE) {
        errno = EBADF;
        return nullptr;
    }
    auto *p = new (std::nothrow) pmclog_parser(fd);
    if (p == nullptr)
        errno = ENOMEM;
    return p;
}

int pmclog_feed(void *cookie, char *data, int len) {
    auto *p = static_cast<pmclog_parser *>(cookie);
    if (p == nullptr || len < 0) {
        errno = EINVAL;
        return -1;
    }
    if (len == 0)
        return p->end_input();
    return p->feed(data, static_cast<size_t>(len));
}

int pmclog_read(void *cookie, struct pmclog_ev *ev) {
    auto *p = static_cast<pmclog_parser *>(cookie);
    if (p == nullptr || ev == nullptr) {
        if (ev != nullptr)
            ev->pl_state = PMCLOG_ERROR;
        errno = EINVAL;
        return -1;
    }
    return p->read(*ev) == PMCLOG_OK ? 0 : -1;
}

void pmclog_close(void *cookie) {
    delete static_cast<pmclog_parser *>(cookie);
}

const char *pmclog_errmsg(void *cookie) {
    const auto *p = static_cast<const pmclog_parser *>(cookie);
    return p != nullptr ? p->error().c_str() : "";
}

} // extern "C"
