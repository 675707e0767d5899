// SPDX-License-Identifier: BSD-2-Clause
// Links the C and the C++ API from an installed libhwpmc; runs without the
// module (the open fails with ENOENT, or succeeds where the module is).
// The pmclog reader needs no module.
#include <hwpmc/hwpmc.hpp>
#include <pmc.h>
#include <pmclog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main() {
    std::printf("%s\n", pmc_name_of_class(PMC_CLASS_SOFT));
    if (pmc_init() < 0 && errno != ENOENT)
        std::printf("pmc_init: %s\n", std::strerror(errno));
    try {
        hwpmc::device dev = hwpmc::device::open();
        std::printf("module %#x\n", dev.module_version());
    } catch (const std::system_error &e) {
        if (e.code().value() != ENOENT)
            std::printf("%s\n", e.what());
    }
    // The pmclog reader, in C and in C++: an empty log.
    void *p = pmclog_open(PMCLOG_FD_NONE);
    struct pmclog_ev ev;
    if (p == nullptr || pmclog_feed(p, nullptr, 0) != 0 || pmclog_read(p, &ev) != -1 ||
        ev.pl_state != PMCLOG_EOF)
        return 1;
    pmclog_close(p);
    hwpmc::log_reader r(std::span<const std::byte>{});
    return r.next() == nullptr && r.state() == PMCLOG_EOF ? 0 : 1;
}
