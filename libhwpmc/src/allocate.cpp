// SPDX-License-Identifier: BSD-2-Clause
// pmc_allocate(3), pmc_release(3), and what the library remembers of the
// PMCs it allocated (their class, for pmc_width()).
#include "capi_state.hpp"
#include "ops.hpp"

#include <cerrno>

using namespace hwpmc::detail;

extern "C" {

int pmc_allocate(const char *ctrspec, enum pmc_mode mode, uint32_t flags, int cpu, pmc_id_t *pmcid,
                 uint64_t count) {
    capi_errmsg().clear();
    const int fd = capi_fd();
    if (fd < 0)
        return -1;
    if (pmcid == nullptr) {
        errno = EINVAL;
        return -1;
    }
    allocation a;
    if (allocate(fd, capi().info, ctrspec, mode, flags, cpu, count, &a, &capi_errmsg()) < 0)
        return -1;
    {
        std::lock_guard lock(capi().classes_lock);
        capi().classes[a.id] = a.cls;
        rdpmc_state r;
        r.counting = mode == PMC_MODE_TC;
        r.width = capi().info.width_of(a.cls);
        capi().rdpmc[a.id] = r;
    }
    // A slot in the read page: TC SOFT (the kernel refuses CLOCK.PROF)
    // and TSC PMCs.
    if ((mode == PMC_MODE_TC && a.cls == PMC_CLASS_SOFT) || a.cls == PMC_CLASS_TSC)
        hot().readpage.learn(fd, a.id);
    else
        hot().readpage.forget(a.id);
    *pmcid = a.id;
    return 0;
}

int pmc_release(pmc_id_t pmc) {
    const int fd = capi_fd();
    if (fd < 0 || op_release(fd, pmc) < 0)
        return -1;
    hot().readpage.forget(pmc);
    std::lock_guard lock(capi().classes_lock);
    capi().classes.erase(pmc);
    capi().rdpmc.erase(pmc);
    return 0;
}

int pmc_width(pmc_id_t pmc, uint32_t *width) {
    if (capi_fd() < 0)
        return -1;
    if (width == nullptr) {
        errno = EINVAL;
        return -1;
    }
    // The kernel does not report a PMC's class; the library knows the
    // classes of the PMCs it allocated.
    std::lock_guard lock(capi().classes_lock);
    const auto it = capi().classes.find(pmc);
    if (it == capi().classes.end()) {
        errno = EINVAL;
        return -1;
    }
    *width = capi().info.width_of(it->second);
    return 0;
}

const char *pmc_errmsg(void) {
    return capi_errmsg().c_str();
}

} // extern "C"
