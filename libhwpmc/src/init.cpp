// SPDX-License-Identifier: BSD-2-Clause
// pmc_init(3) and the cached CPU information.
#include "capi_state.hpp"
#include "handshake.hpp"
#include "sys.hpp"

#include <cerrno>

using namespace hwpmc::detail;

extern "C" int pmc_init(void) {
    capi_state &s = capi();
    std::lock_guard lock(s.init_lock);
    if (hot().fd.load(std::memory_order_relaxed) >= 0)
        return 0; // already initialized, as FreeBSD
    struct pmc_cpuinfo ci {};
    const int fd = open_session(device_path().c_str(), &ci);
    if (fd < 0)
        return -1;
    if (load_session_info(fd, ci, &s.info) < 0) {
        close_keep_errno(fd);
        return -1;
    }
    hot().readpage.map(fd); // none before module 1.6: PMCRW reads
    hot().fd.store(fd, std::memory_order_release);
    return 0;
}

extern "C" int pmc_cpuinfo(const struct pmc_cpuinfo **cpu_info) {
    if (capi_fd() < 0)
        return -1;
    if (cpu_info == nullptr) {
        errno = EINVAL;
        return -1;
    }
    *cpu_info = &capi().info.cpuinfo;
    return 0;
}

extern "C" int pmc_ncpu(void) {
    if (capi_fd() < 0)
        return -1;
    return static_cast<int>(capi().info.cpuinfo.pm_ncpu);
}

extern "C" int pmc_npmc(int cpu) {
    if (capi_fd() < 0)
        return -1;
    if (cpu < 0 || static_cast<uint32_t>(cpu) >= capi().info.cpuinfo.pm_ncpu) {
        errno = EINVAL;
        return -1;
    }
    return static_cast<int>(capi().info.cpuinfo.pm_npmc);
}
