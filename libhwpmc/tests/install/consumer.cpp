// SPDX-License-Identifier: BSD-2-Clause
// Links the C and the C++ API from an installed libhwpmc; runs without the
// module (the open fails with ENOENT, or succeeds where the module is).
#include <hwpmc/hwpmc.hpp>
#include <pmc.h>

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
    return 0;
}
