// SPDX-License-Identifier: BSD-2-Clause
#include "handshake.hpp"

#include "sys.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hwpmc::detail {

int check_version(int fd, uint32_t *module_version) {
    pmc_op_getmoduleversion v{};
    v.pm_version = HWPMC_VERSION;
    const int rc = xioctl(fd, HWPMC_IOC_GETMODULEVERSION, &v);
    if (rc < 0 && errno != EPROTO)
        return -1;
    if (module_version != nullptr)
        *module_version = v.pm_version;
    // The module refuses a different major itself; check here as well, so
    // that a module that skips the check cannot slip through.
    if (rc < 0 || HWPMC_VERSION_TO_MAJOR(v.pm_version) != HWPMC_VERSION_MAJOR) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int get_cpuinfo(int fd, struct pmc_cpuinfo *out) {
    pmc_op_getcpuinfo ci{};
    if (xioctl(fd, HWPMC_IOC_GETCPUINFO, &ci) < 0)
        return -1;
    *out = {};
    out->pm_cputype = static_cast<enum pmc_cputype>(ci.pm_cputype);
    out->pm_ncpu = ci.pm_ncpu;
    out->pm_npmc = ci.pm_npmc;
    out->pm_nclass = std::min<uint32_t>(ci.pm_nclass, PMC_CLASS_TABLE_SIZE);
    std::copy_n(ci.pm_classes, out->pm_nclass, out->pm_classes);
    return 0;
}

int open_session(const char *path, struct pmc_cpuinfo *cpuinfo) {
    const int fd = open_device(path);
    if (fd < 0)
        return -1;
    if (check_version(fd, nullptr) < 0 || get_cpuinfo(fd, cpuinfo) < 0) {
        close_keep_errno(fd);
        return -1;
    }
    return fd;
}

} // namespace hwpmc::detail
