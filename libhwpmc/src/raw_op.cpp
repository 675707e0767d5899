// SPDX-License-Identifier: BSD-2-Clause
// pmc_raw_op() and pmc_owner_fd(): FreeBSD's syscall(pmc_syscall, op, arg)
// on the library's owner.
#include "capi_state.hpp"
#include "sys.hpp"

#include <hwpmc/pmc.h>

#include <cerrno>
#include <mutex>

using namespace hwpmc::detail;

namespace {

// The ioctl of each PMC_OP_* number (nr = the op: <linux/hwpmc.h>).
unsigned long request_of(int op) {
    switch (op) {
    case PMC_OP_CONFIGURELOG:
        return HWPMC_IOC_CONFIGURELOG;
    case PMC_OP_FLUSHLOG:
        return HWPMC_IOC_FLUSHLOG;
    case PMC_OP_GETCPUINFO:
        return HWPMC_IOC_GETCPUINFO;
    case PMC_OP_GETDRIVERSTATS:
        return HWPMC_IOC_GETDRIVERSTATS;
    case PMC_OP_GETMODULEVERSION:
        return HWPMC_IOC_GETMODULEVERSION;
    case PMC_OP_GETPMCINFO:
        return HWPMC_IOC_GETPMCINFO;
    case PMC_OP_PMCADMIN:
        return HWPMC_IOC_PMCADMIN;
    case PMC_OP_PMCALLOCATE:
        return HWPMC_IOC_PMCALLOCATE;
    case PMC_OP_PMCATTACH:
        return HWPMC_IOC_PMCATTACH;
    case PMC_OP_PMCDETACH:
        return HWPMC_IOC_PMCDETACH;
    case PMC_OP_PMCGETMSR:
        return HWPMC_IOC_PMCGETMSR;
    case PMC_OP_PMCRELEASE:
        return HWPMC_IOC_PMCRELEASE;
    case PMC_OP_PMCRW:
        return HWPMC_IOC_PMCRW;
    case PMC_OP_PMCSETCOUNT:
        return HWPMC_IOC_PMCSETCOUNT;
    case PMC_OP_PMCSTART:
        return HWPMC_IOC_PMCSTART;
    case PMC_OP_PMCSTOP:
        return HWPMC_IOC_PMCSTOP;
    case PMC_OP_WRITELOG:
        return HWPMC_IOC_WRITELOG;
    case PMC_OP_CLOSELOG:
        return HWPMC_IOC_CLOSELOG;
    case PMC_OP_GETDYNEVENTINFO:
        return HWPMC_IOC_GETDYNEVENTINFO;
    case PMC_OP_GETCAPS:
        return HWPMC_IOC_GETCAPS;
    default:
        return 0;
    }
}

uint32_t pmcid_of(int op, const void *arg) {
    switch (op) {
    case PMC_OP_PMCDETACH:
        return static_cast<const pmc_op_pmcattach *>(arg)->pm_pmcid;
    case PMC_OP_PMCRELEASE:
        return static_cast<const pmc_op_simple *>(arg)->pm_pmcid;
    default:
        return PMC_ID_INVALID;
    }
}

} // namespace

extern "C" {

int pmc_owner_fd(void) {
    return capi_fd();
}

int pmc_raw_op(int op, void *arg) {
    const unsigned long request = request_of(op);
    if (request == 0 || (arg == nullptr && op != PMC_OP_FLUSHLOG && op != PMC_OP_CLOSELOG)) {
        errno = EINVAL;
        return -1;
    }
    const int fd = capi_fd();
    if (fd < 0)
        return -1;
    if (xioctl(fd, request, arg) < 0)
        return -1;
    std::lock_guard lock(capi().classes_lock);
    if (op == PMC_OP_PMCALLOCATE) {
        // pmc_width() knows it as it knows pmc_allocate()'s PMCs.
        const auto *a = static_cast<const pmc_op_pmcallocate *>(arg);
        capi().classes[a->pm_pmcid] = static_cast<enum pmc_class>(a->pm_class);
    } else if (op == PMC_OP_PMCDETACH || op == PMC_OP_PMCRELEASE) {
        // The kernel revoked RDPMC: pmc_read() goes back to the ioctl.
        capi().rdpmc.erase(pmcid_of(op, arg));
        if (op == PMC_OP_PMCRELEASE)
            capi().classes.erase(pmcid_of(op, arg));
    }
    return 0;
}

} // extern "C"
