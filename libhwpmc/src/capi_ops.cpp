// SPDX-License-Identifier: BSD-2-Clause
// pmc(3) operations that map one to one onto an ioctl.
#include "capi_state.hpp"
#include "ops.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unistd.h>

using namespace hwpmc::detail;

namespace {

// Run `op` on the session fd: ENXIO before pmc_init().
template <typename F>
int with_fd(F op) {
    const int fd = capi_fd();
    return fd < 0 ? -1 : op(fd);
}

unsigned int clamp_uint(uint64_t v) {
    return v > std::numeric_limits<unsigned int>::max() ? std::numeric_limits<unsigned int>::max()
                                                        : static_cast<unsigned int>(v);
}

// Apply `f` to what the library knows of `pmc`'s RDPMC, if anything.
template <typename F>
void with_rdpmc(pmc_id_t pmc, F f) {
    std::lock_guard lock(capi().classes_lock);
    const auto it = capi().rdpmc.find(pmc);
    if (it != capi().rdpmc.end())
        f(it->second);
}

// Run `op` on the session fd, and on success `then` on `pmc`'s RDPMC state.
template <typename F, typename G>
int with_fd_then(pmc_id_t pmc, F op, G then) {
    const int rc = with_fd(op);
    if (rc == 0)
        with_rdpmc(pmc, then);
    return rc;
}

// pmc_read() once some PMC of the session has RDPMC: RDPMC if it is this
// PMC's and usable, else the ioctl, which then gives RDPMC its base.  A
// grant after the caller's check makes this an ioctl read that sets no
// base, as if it had come before the grant.
[[gnu::noinline]] int read_granted(int fd, pmc_id_t pmc, pmc_value_t *value) {
    {
        std::lock_guard lock(capi().classes_lock);
        const auto it = capi().rdpmc.find(pmc);
        if (it != capi().rdpmc.end() && it->second.usable()) {
            *value = it->second.extend(rdpmc_reader()(it->second.index));
            return 0;
        }
    }
    pmc_value_t v = 0;
    if (op_rw(fd, pmc, PMC_F_OLDVALUE, &v) < 0)
        return -1;
    with_rdpmc(pmc, [&](rdpmc_state &r) { r.read_by_ioctl(v); });
    *value = v;
    return 0;
}

// PMCRW after it failed: again while it fails with EINTR (op_rw()).
[[gnu::noinline, gnu::cold]] int read_again(int fd, pmc_id_t pmc, pmc_value_t *value) {
    if (errno != EINTR)
        return -1;
    pmc_value_t v = 0;
    if (op_rw(fd, pmc, PMC_F_OLDVALUE, &v) < 0)
        return -1;
    *value = v;
    return 0;
}

// pmc_read()'s PMCRW, out of line and called last, so that pmc_read()
// keeps nothing across the system call and this keeps only `value`; after
// a failure, the PMC's id is taken back from the request (the kernel does
// not change it).
[[gnu::noinline]] int read_by_ioctl(int fd, pmc_id_t pmc, pmc_value_t *value) {
    pmc_op_pmcrw a{};
    a.pm_pmcid = pmc;
    a.pm_flags = PMC_F_OLDVALUE;
    if (ioctl_once(fd, HWPMC_IOC_PMCRW, &a) < 0) [[unlikely]]
        return read_again(hot().fd.load(std::memory_order_relaxed), a.pm_pmcid, value);
    *value = a.pm_value;
    return 0;
}

// pmc_read() without the read page: RDPMC once granted, else PMCRW, with
// its value and its errors.
[[gnu::always_inline]] inline int read_by_kernel(const capi_hot &s, int fd, pmc_id_t pmc,
                                                 pmc_value_t *value) {
    if (s.rdpmc_granted.load(std::memory_order_acquire)) [[unlikely]]
        return read_granted(fd, pmc, value);
    return read_by_ioctl(fd, pmc, value);
}

// -1 with errno `err`, out of line: pmc_read()'s own path then needs no
// stack frame.
[[gnu::noinline, gnu::cold]] int fail_with(int err) {
    errno = err;
    return -1;
}

// The read page, where the PMC has a slot that answers now: no system
// call.  Out of line, so that pmc_read()'s ioctl path saves no register
// for the page's read.
[[gnu::noinline]] int read_by_slot(const capi_hot &s, int fd, pmc_id_t pmc, uint64_t slot,
                                   pmc_value_t *value) {
    if (s.readpage.read_slot(slot, value))
        return 0;
    return read_by_kernel(s, fd, pmc, value);
}

} // namespace

extern "C" {

int pmc_attach(pmc_id_t pmc, pid_t pid) {
    return with_fd([&](int fd) { return op_attach(fd, pmc, pid); });
}

int pmc_detach(pmc_id_t pmc, pid_t pid) {
    // Detached from its owner, it no longer qualifies: the kernel revokes
    // user-mode RDPMC.
    const bool self = pid == static_cast<pid_t>(PMC_PID_SELF) || pid == ::getpid();
    return with_fd_then(
        pmc, [&](int fd) { return op_detach(fd, pmc, pid); },
        [&](rdpmc_state &r) {
            if (self)
                r.revoke();
        });
}

int pmc_start(pmc_id_t pmc) {
    return with_fd_then(
        pmc, [&](int fd) { return op_start(fd, pmc); }, [](rdpmc_state &r) { r.started(); });
}

int pmc_stop(pmc_id_t pmc) {
    return with_fd_then(
        pmc, [&](int fd) { return op_stop(fd, pmc); }, [](rdpmc_state &r) { r.stopped(); });
}

// The read page where the PMC has a slot (TC SOFT but CLOCK.PROF, TSC;
// see readpage.hpp), RDPMC where pmc_get_msr() granted it and it gives the
// count (see <hwpmc/pmc.h>), the PMCRW ioctl otherwise.  Without a slot
// and with no PMC of the session ever granted RDPMC, a read is a look at
// the slot table and the ioctl: no lock (read_granted() is the rest, out
// of line).
int pmc_read(pmc_id_t pmc, pmc_value_t *value) {
    if (value == nullptr)
        return fail_with(EINVAL);
    const capi_hot &s = hot();
    const int fd = s.fd.load(std::memory_order_acquire);
    if (fd < 0)
        return fail_with(ENXIO); // as capi_fd()
    if (const uint64_t slot = s.readpage.slot(pmc))
        return read_by_slot(s, fd, pmc, slot, value);
    return read_by_kernel(s, fd, pmc, value);
}

int pmc_write(pmc_id_t pmc, pmc_value_t value) {
    return with_fd_then(
        pmc, [&](int fd) { return op_rw(fd, pmc, PMC_F_NEWVALUE, &value); },
        [](rdpmc_state &r) { r.forget(); });
}

int pmc_rw(pmc_id_t pmc, pmc_value_t newvalue, pmc_value_t *oldvalue) {
    if (oldvalue == nullptr) {
        errno = EINVAL;
        return -1;
    }
    return with_fd_then(
        pmc,
        [&](int fd) {
            pmc_value_t v = newvalue;
            if (op_rw(fd, pmc, PMC_F_NEWVALUE | PMC_F_OLDVALUE, &v) < 0)
                return -1;
            *oldvalue = v;
            return 0;
        },
        [](rdpmc_state &r) { r.forget(); });
}

int pmc_set(pmc_id_t pmc, pmc_value_t value) {
    return with_fd_then(
        pmc, [&](int fd) { return op_setcount(fd, pmc, value); },
        [](rdpmc_state &r) { r.forget(); });
}

int pmc_get_msr(pmc_id_t pmc, uint32_t *msr) {
    if (msr == nullptr) {
        errno = EINVAL;
        return -1;
    }
    uint32_t idx = 0;
    return with_fd_then(
        pmc,
        [&](int fd) {
            if (op_getmsr(fd, pmc, &idx) < 0)
                return -1;
            *msr = idx;
            return 0;
        },
        [&](rdpmc_state &r) {
            // Before the grant is visible: pmc_read() then looks.
            hot().rdpmc_granted.store(true, std::memory_order_release);
            r.grant(idx);
        });
}

int pmc_capabilities(pmc_id_t pmc, uint32_t *caps) {
    if (caps == nullptr) {
        errno = EINVAL;
        return -1;
    }
    return with_fd([&](int fd) { return op_getcaps(fd, pmc, caps); });
}

int pmc_configure_logfile(int logfd) {
    return with_fd([&](int fd) { return op_configurelog(fd, logfd); });
}

int pmc_flush_logfile(void) {
    return with_fd([](int fd) { return op_flushlog(fd); });
}

int pmc_close_logfile(void) {
    return with_fd([](int fd) { return op_closelog(fd); });
}

int pmc_writelog(uint32_t udata) {
    return with_fd([&](int fd) { return op_writelog(fd, udata); });
}

int pmc_enable(int cpu, int pmc) {
    return with_fd([&](int fd) { return op_admin(fd, cpu, pmc, PMC_STATE_FREE); });
}

int pmc_disable(int cpu, int pmc) {
    return with_fd([&](int fd) { return op_admin(fd, cpu, pmc, PMC_STATE_DISABLED); });
}

int pmc_get_driver_stats(struct pmc_driverstats *ds) {
    if (ds == nullptr) {
        errno = EINVAL;
        return -1;
    }
    return with_fd([&](int fd) {
        pmc_op_getdriverstats s;
        if (op_driverstats(fd, &s) < 0)
            return -1;
        ds->pm_intr_ignored = clamp_uint(s.pm_intr_ignored);
        ds->pm_intr_processed = clamp_uint(s.pm_intr_processed);
        ds->pm_intr_bufferfull = clamp_uint(s.pm_intr_bufferfull);
        ds->pm_syscalls = clamp_uint(s.pm_syscalls);
        ds->pm_syscall_errors = clamp_uint(s.pm_syscall_errors);
        ds->pm_buffer_requests = clamp_uint(s.pm_buffer_requests);
        ds->pm_buffer_requests_failed = clamp_uint(s.pm_buffer_requests_failed);
        ds->pm_log_sweeps = clamp_uint(s.pm_log_sweeps);
        ds->pm_samples_taken = s.pm_samples_taken;
        ds->pm_samples_dropped = s.pm_samples_dropped;
        ds->pm_log_bytes = s.pm_log_bytes;
        ds->pm_alloc_failed = s.pm_alloc_failed;
        ds->pm_samples_throttled = s.pm_samples_throttled;
        return 0;
    });
}

int pmc_pmcinfo(int cpu, struct pmc_pmcinfo **ppmci) {
    if (ppmci == nullptr) {
        errno = EINVAL;
        return -1;
    }
    if (pmc_npmc(cpu) < 0) // ENXIO before pmc_init(), EINVAL for a bad CPU
        return -1;
    return with_fd([&](int fd) {
        std::vector<pmc_info> rows;
        if (op_pmcinfo(fd, cpu, &rows) < 0)
            return -1;
        const std::size_t bytes = sizeof(struct pmc_pmcinfo) + rows.size() * sizeof(pmc_info);
        auto *p = static_cast<struct pmc_pmcinfo *>(std::calloc(1, bytes));
        if (p == nullptr)
            return -1; // ENOMEM
        p->pm_cpu = cpu;
        p->pm_npmc = static_cast<uint32_t>(rows.size());
        if (!rows.empty())
            std::memcpy(p->pm_pmcs, rows.data(), rows.size() * sizeof(pmc_info));
        *ppmci = p;
        return 0;
    });
}

} // extern "C"
