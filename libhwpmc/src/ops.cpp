// SPDX-License-Identifier: BSD-2-Clause
#include "ops.hpp"

#include "sys.hpp"

#include <cerrno>
#include <cstdint>

namespace hwpmc::detail {

namespace {

template <typename T>
int simple(int fd, unsigned long request, pmc_id_t id) {
    T a{};
    a.pm_pmcid = id;
    return xioctl(fd, request, &a);
}

int attach_op(int fd, unsigned long request, pmc_id_t id, pid_t pid) {
    pmc_op_pmcattach a{};
    a.pm_pmcid = id;
    a.pm_pid = pid;
    return xioctl(fd, request, &a);
}

uint64_t user_ptr(const void *p) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

// The count protocol of GETPMCINFO and GETDYNEVENTINFO: ask for the count
// with a null pointer, then fetch; E2BIG (the count grew) starts over.
template <typename Op, typename Entry, typename Setup, typename Count, typename Ptr>
int fetch_array(int fd, unsigned long request, std::vector<Entry> *out, Setup setup,
                Count Op::*count, Ptr Op::*ptr) {
    for (int attempt = 0; attempt < 8; ++attempt) {
        Op a{};
        setup(a);
        if (xioctl(fd, request, &a) < 0)
            return -1;
        std::vector<Entry> v(a.*count);
        if (v.empty()) {
            out->clear();
            return 0;
        }
        Op b{};
        setup(b);
        b.*count = static_cast<Count>(v.size());
        b.*ptr = static_cast<Ptr>(user_ptr(v.data()));
        if (xioctl(fd, request, &b) == 0) {
            v.resize(std::min<std::size_t>(v.size(), b.*count));
            *out = std::move(v);
            return 0;
        }
        if (errno != E2BIG)
            return -1;
    }
    errno = EAGAIN;
    return -1;
}

} // namespace

int op_allocate(int fd, pmc_op_pmcallocate *a) {
    return xioctl(fd, HWPMC_IOC_PMCALLOCATE, a);
}

int op_attach(int fd, pmc_id_t id, pid_t pid) {
    return attach_op(fd, HWPMC_IOC_PMCATTACH, id, pid);
}

int op_detach(int fd, pmc_id_t id, pid_t pid) {
    return attach_op(fd, HWPMC_IOC_PMCDETACH, id, pid);
}

int op_release(int fd, pmc_id_t id) {
    return simple<pmc_op_simple>(fd, HWPMC_IOC_PMCRELEASE, id);
}

int op_start(int fd, pmc_id_t id) {
    return simple<pmc_op_simple>(fd, HWPMC_IOC_PMCSTART, id);
}

int op_stop(int fd, pmc_id_t id) {
    return simple<pmc_op_simple>(fd, HWPMC_IOC_PMCSTOP, id);
}

int op_setcount(int fd, pmc_id_t id, pmc_value_t count) {
    pmc_op_pmcsetcount a{};
    a.pm_pmcid = id;
    a.pm_count = count;
    return xioctl(fd, HWPMC_IOC_PMCSETCOUNT, &a);
}

int op_getmsr(int fd, pmc_id_t id, uint32_t *msr) {
    pmc_op_getmsr a{};
    a.pm_pmcid = id;
    if (xioctl(fd, HWPMC_IOC_PMCGETMSR, &a) < 0)
        return -1;
    *msr = a.pm_msr;
    return 0;
}

int op_getcaps(int fd, pmc_id_t id, uint32_t *caps) {
    pmc_op_caps a{};
    a.pm_pmcid = id;
    if (xioctl(fd, HWPMC_IOC_GETCAPS, &a) < 0)
        return -1;
    *caps = a.pm_caps;
    return 0;
}

int op_configurelog(int fd, int logfd) {
    pmc_op_configurelog a{};
    a.pm_logfd = logfd;
    return xioctl(fd, HWPMC_IOC_CONFIGURELOG, &a);
}

int op_flushlog(int fd) {
    return xioctl(fd, HWPMC_IOC_FLUSHLOG, nullptr);
}

int op_closelog(int fd) {
    return xioctl(fd, HWPMC_IOC_CLOSELOG, nullptr);
}

int op_writelog(int fd, uint32_t userdata) {
    pmc_op_writelog a{};
    a.pm_userdata = userdata;
    return xioctl(fd, HWPMC_IOC_WRITELOG, &a);
}

int op_driverstats(int fd, pmc_op_getdriverstats *out) {
    *out = {};
    return xioctl(fd, HWPMC_IOC_GETDRIVERSTATS, out);
}

int op_admin(int fd, int cpu, int row, enum pmc_state state) {
    if (cpu < 0 || row < 0) {
        errno = EINVAL;
        return -1;
    }
    pmc_op_pmcadmin a{};
    a.pm_cpu = static_cast<uint32_t>(cpu);
    a.pm_pmcid = static_cast<uint32_t>(row);
    a.pm_state = state;
    return xioctl(fd, HWPMC_IOC_PMCADMIN, &a);
}

int op_pmcinfo(int fd, int cpu, std::vector<pmc_info> *out) {
    if (cpu < 0) {
        errno = EINVAL;
        return -1;
    }
    auto setup = [cpu](pmc_op_getpmcinfo &a) { a.pm_cpu = static_cast<uint32_t>(cpu); };
    const int rc = fetch_array(fd, HWPMC_IOC_GETPMCINFO, out, setup, &pmc_op_getpmcinfo::pm_npmc,
                               &pmc_op_getpmcinfo::pm_info);
    if (rc == 0)
        for (auto &row : *out)
            normalize_pmcinfo_event(&row);
    return rc;
}

void normalize_pmcinfo_event(pmc_info *row) {
    // A module older than 1.4 gives the class code alone.  Its class bits
    // are then 0 where the row's class is not (TSC, class 0, has the one
    // event 0 in both forms), so the two forms cannot be confused.
    if (row->pm_mode <= PMC_MODE_MAX && HWPMC_EV_CLASS(row->pm_event) != row->pm_class)
        row->pm_event = HWPMC_EV_GLOBAL(row->pm_class, row->pm_event);
}

int op_dynevents(int fd, enum pmc_class cls, std::vector<pmc_dyn_event_descr> *out) {
    auto setup = [cls](pmc_op_getdyneventinfo &a) { a.pm_class = cls; };
    return fetch_array(fd, HWPMC_IOC_GETDYNEVENTINFO, out, setup,
                       &pmc_op_getdyneventinfo::pm_nevent, &pmc_op_getdyneventinfo::pm_events);
}

} // namespace hwpmc::detail
