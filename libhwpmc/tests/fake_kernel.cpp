// SPDX-License-Identifier: BSD-2-Clause
#include "fake_kernel.hpp"

#include "readpage.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hwpmc::testing {

namespace {

template <typename T>
bool zero(const T &field) {
    const auto *p = reinterpret_cast<const unsigned char *>(&field);
    return std::all_of(p, p + sizeof(field), [](unsigned char c) { return c == 0; });
}

int fail(int err) {
    errno = err;
    return -1;
}

// Set while a test has the model installed: ioctl(2) below goes to it.
std::atomic<bool> installed{false};

} // namespace

fake_kernel &fake_kernel::instance() {
    static fake_kernel k;
    return k;
}

void fake_kernel::reset() {
    *this = fake_kernel();
}

void fake_kernel::install() {
    reset();
    setenv("HWPMC_DEVICE", "/dev/null", 1);
    installed.store(true);
}

void fake_kernel::uninstall() {
    installed.store(false);
    unsetenv("HWPMC_DEVICE");
}

int fake_kernel::ioctl(unsigned long request, void *arg) {
    ++calls;
    if (request == HWPMC_IOC_PMCRW)
        ++rw_calls;
    if (eintr_next > 0) {
        --eintr_next;
        return fail(EINTR);
    }
    const int rc = op(request, arg);
    const int saved = errno;
    if (readpage)
        sync_page();
    errno = saved;
    return rc;
}

bool fake_kernel::has_slot(uint32_t, const fake_pmc &p) const {
    if (p.alloc.pm_class == PMC_CLASS_TSC)
        return tsc_slots;
    return p.alloc.pm_class == PMC_CLASS_SOFT && p.alloc.pm_mode == PMC_MODE_TC &&
           p.alloc.pm_event != 1; // CLOCK.PROF
}

void fake_kernel::sync_page() {
    page.rp_version = HWPMC_READPAGE_VERSION;
    page.rp_nslots = HWPMC_READPAGE_NSLOTS;
    page.rp_slot_size = sizeof(hwpmc_readslot);
    page.rp_flags = tsc_slots ? HWPMC_RP_F_TSC : 0;
    for (auto &s : page.rp_slots)
        s = {};
    for (const auto &[id, p] : pmcs) {
        if (!has_slot(id, p))
            continue;
        hwpmc_readslot &s = page.rp_slots[(id - 1) % HWPMC_READPAGE_NSLOTS];
        s.rs_ctl = static_cast<uint64_t>(id) << 32;
        if (p.alloc.pm_class == PMC_CLASS_TSC) {
            s.rs_ctl |= HWPMC_RS_TSC;
        } else if (!p.targets.empty() && !p.stopped) {
            s.rs_ctl |= HWPMC_RS_VALUE;
            s.rs_value = p.value + (p.running ? 1000 : 0); // as PMCRW
        }
    }
}

void fake_kernel::route_mapping() {
    detail::readpage_mapping() = {[](int) -> const hwpmc_readpage * {
                                      fake_kernel &k = instance();
                                      return k.readpage ? &k.page : nullptr;
                                  },
                                  [](const hwpmc_readpage *) {}};
}

void fake_kernel::restore_mapping() {
    static const detail::readpage_mapper real = detail::readpage_mapping();
    detail::readpage_mapping() = real;
}

int fake_kernel::op(unsigned long request, void *arg) {
    switch (request) {
    case HWPMC_IOC_GETMODULEVERSION: {
        auto *a = static_cast<pmc_op_getmoduleversion *>(arg);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        const uint32_t theirs = a->pm_version;
        a->pm_version = version;
        if (theirs && HWPMC_VERSION_TO_MAJOR(theirs) != HWPMC_VERSION_TO_MAJOR(version))
            return fail(EPROTO);
        return 0;
    }
    case HWPMC_IOC_GETCPUINFO: {
        auto *a = static_cast<pmc_op_getcpuinfo *>(arg);
        std::memset(a, 0, sizeof(*a));
        a->pm_cputype = cputype;
        a->pm_ncpu = ncpu;
        a->pm_npmc = nrows();
        a->pm_nclass = 2;
        a->pm_classes[0] = {PMC_CLASS_TSC, PMC_CAP_READ, 64, 1, 0, {}};
        a->pm_classes[1] = {PMC_CLASS_SOFT,
                            PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_INTERRUPT | PMC_CAP_USER |
                                PMC_CAP_SYSTEM,
                            64,
                            16,
                            1,
                            {}};
        return 0;
    }
    case HWPMC_IOC_GETDYNEVENTINFO: {
        auto *a = static_cast<pmc_op_getdyneventinfo *>(arg);
        if (!dyn_events)
            return fail(EOPNOTSUPP);
        if (!zero(a->pm_reserved) || a->pm_class != PMC_CLASS_SOFT)
            return fail(EINVAL);
        const auto n = static_cast<uint32_t>(soft.size());
        if (a->pm_events == 0) {
            a->pm_nevent = n;
            return 0;
        }
        if (a->pm_nevent < n) {
            a->pm_nevent = n;
            return fail(E2BIG);
        }
        auto *out = reinterpret_cast<pmc_dyn_event_descr *>(static_cast<uintptr_t>(a->pm_events));
        for (uint32_t i = 0; i < n; ++i) {
            std::memset(&out[i], 0, sizeof(out[i]));
            std::strncpy(out[i].pm_ev_name, soft[i].first.c_str(), PMC_NAME_MAX - 1);
            out[i].pm_ev_code = soft[i].second;
        }
        a->pm_nevent = n;
        return 0;
    }
    case HWPMC_IOC_GETPMCINFO: {
        auto *a = static_cast<pmc_op_getpmcinfo *>(arg);
        if (!zero(a->pm_reserved) || a->pm_cpu >= ncpu)
            return fail(EINVAL);
        uint32_t n = nrows();
        if (a->pm_info != 0 && grow_rows_once) {
            n += grow_rows_once; // rows appeared between the two calls
        }
        if (a->pm_info == 0) {
            a->pm_npmc = n;
            return 0;
        }
        if (a->pm_npmc < n) {
            a->pm_npmc = n;
            grow_rows_once = 0;
            return fail(E2BIG);
        }
        auto *out = reinterpret_cast<pmc_info *>(static_cast<uintptr_t>(a->pm_info));
        for (uint32_t r = 0; r < n; ++r) {
            std::memset(&out[r], 0, sizeof(out[r]));
            std::snprintf(out[r].pm_name, PMC_NAME_MAX, r == 0 ? "TSC-%u" : "SOFT-%u",
                          r == 0 ? 0 : r - 1);
            out[r].pm_class = r == 0 ? PMC_CLASS_TSC : PMC_CLASS_SOFT;
            out[r].pm_enabled = 1;
            out[r].pm_rowdisp = PMC_DISP_FREE;
            out[r].pm_ownerpid = -1;
            out[r].pm_state = PMC_STATE_FREE;
            out[r].pm_mode = PMC_MODE_INVALID;
            if (static_cast<int>(r) == owned_row) {
                out[r].pm_rowdisp = PMC_DISP_THREAD;
                out[r].pm_state = PMC_STATE_RUNNING;
                out[r].pm_mode = PMC_MODE_TC;
                out[r].pm_event = owned_event;
            }
        }
        a->pm_npmc = n;
        return 0;
    }
    case HWPMC_IOC_PMCALLOCATE: {
        auto *a = static_cast<pmc_op_pmcallocate *>(arg);
        if (!zero(a->pm_reserved) || a->pm_mode > PMC_MODE_MAX ||
            (a->pm_flags & ~PMC_F_ALLOCATE_MASK))
            return fail(EINVAL);
        // PMC_F_USERSTACK: a multiple of 8 up to the default cap, sampling.
        if ((a->pm_flags & PMC_F_USERSTACK)
                ? (a->pm_ustack_size % 8 || a->pm_ustack_size > PMC_USTACK_DEFAULT ||
                   !(a->pm_mode == PMC_MODE_SS || a->pm_mode == PMC_MODE_TS))
                : a->pm_ustack_size != 0)
            return fail(EINVAL);
        const bool sys = a->pm_mode == PMC_MODE_SS || a->pm_mode == PMC_MODE_SC;
        if (sys ? a->pm_cpu >= ncpu : a->pm_cpu != PMC_CPU_ANY)
            return fail(EINVAL);
        if (a->pm_class != PMC_CLASS_TSC && a->pm_class != PMC_CLASS_SOFT &&
            !(hw_classes && (a->pm_class == PMC_CLASS_IAP || a->pm_class == PMC_CLASS_IAF ||
                             a->pm_class == PMC_CLASS_K8)))
            return fail(EINVAL);
        a->pm_pmcid = next_id++;
        fake_pmc p;
        p.alloc = *a;
        p.value = (a->pm_mode == PMC_MODE_SC || a->pm_mode == PMC_MODE_TC) ? a->pm_count : 0;
        pmcs[a->pm_pmcid] = p;
        return 0;
    }
    case HWPMC_IOC_PMCATTACH:
    case HWPMC_IOC_PMCDETACH: {
        auto *a = static_cast<pmc_op_pmcattach *>(arg);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        auto it = pmcs.find(a->pm_pmcid);
        if (it == pmcs.end())
            return fail(EINVAL);
        auto &t = it->second.targets;
        if (request == HWPMC_IOC_PMCATTACH) {
            t.push_back(a->pm_pid);
            return 0;
        }
        auto pos = std::find(t.begin(), t.end(), a->pm_pid);
        if (pos == t.end())
            return fail(EINVAL);
        t.erase(pos);
        return 0;
    }
    case HWPMC_IOC_PMCRELEASE:
    case HWPMC_IOC_PMCSTART:
    case HWPMC_IOC_PMCSTOP: {
        auto *a = static_cast<pmc_op_simple *>(arg);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        auto it = pmcs.find(a->pm_pmcid);
        if (it == pmcs.end())
            return fail(EINVAL);
        if (request == HWPMC_IOC_PMCRELEASE)
            pmcs.erase(it);
        else if (request == HWPMC_IOC_PMCSTART)
            it->second.running = true, it->second.stopped = false;
        else if (!it->second.running)
            return fail(EINVAL);
        else
            it->second.running = false, it->second.stopped = true;
        return 0;
    }
    case HWPMC_IOC_PMCRW: {
        auto *a = static_cast<pmc_op_pmcrw *>(arg);
        if (a->pm_flags & ~PMC_F_RW_MASK)
            return fail(EINVAL);
        auto it = pmcs.find(a->pm_pmcid);
        if (it == pmcs.end())
            return fail(EINVAL);
        const uint64_t old = it->second.value + (it->second.running ? 1000 : 0);
        if (a->pm_flags & PMC_F_NEWVALUE) {
            if (it->second.running)
                return fail(EBUSY);
            it->second.value = a->pm_value;
        }
        if (a->pm_flags & PMC_F_OLDVALUE)
            a->pm_value = old;
        return 0;
    }
    case HWPMC_IOC_PMCSETCOUNT: {
        auto *a = static_cast<pmc_op_pmcsetcount *>(arg);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        auto it = pmcs.find(a->pm_pmcid);
        if (it == pmcs.end())
            return fail(EINVAL);
        it->second.alloc.pm_count = a->pm_count;
        return 0;
    }
    case HWPMC_IOC_PMCGETMSR: {
        auto *a = static_cast<pmc_op_getmsr *>(arg);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        if (!pmcs.count(a->pm_pmcid))
            return fail(EINVAL);
        if (getmsr_errno)
            return fail(getmsr_errno);
        a->pm_msr = 0x40000000 + a->pm_pmcid;
        return 0;
    }
    case HWPMC_IOC_GETCAPS: {
        auto *a = static_cast<pmc_op_caps *>(arg);
        auto it = pmcs.find(a->pm_pmcid);
        if (it == pmcs.end())
            return fail(EINVAL);
        a->pm_caps = it->second.alloc.pm_caps;
        return 0;
    }
    case HWPMC_IOC_CONFIGURELOG: {
        auto *a = static_cast<pmc_op_configurelog *>(arg);
        if (!zero(a->pm_reserved) || a->pm_flags)
            return fail(EINVAL);
        logfd = a->pm_logfd;
        return 0;
    }
    case HWPMC_IOC_FLUSHLOG:
        if (logfd < 0)
            return fail(ENOENT);
        ++flushes;
        return 0;
    case HWPMC_IOC_CLOSELOG:
        if (logfd < 0)
            return fail(ENOENT);
        logfd = -1;
        return 0;
    case HWPMC_IOC_WRITELOG: {
        auto *a = static_cast<pmc_op_writelog *>(arg);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        if (logfd < 0)
            return fail(EINVAL);
        userdata.push_back(a->pm_userdata);
        return 0;
    }
    case HWPMC_IOC_GETDRIVERSTATS: {
        auto *a = static_cast<pmc_op_getdriverstats *>(arg);
        std::memset(a, 0, sizeof(*a));
        a->pm_syscalls = calls;
        a->pm_intr_processed = 0x100000005ull; // does not fit an unsigned int
        a->pm_samples_taken = 7;
        return 0;
    }
    case HWPMC_IOC_PMCADMIN: {
        auto *a = static_cast<pmc_op_pmcadmin *>(arg);
        if (a->pm_flags || a->pm_cpu >= ncpu || a->pm_pmcid >= nrows() ||
            (a->pm_state != PMC_STATE_DISABLED && a->pm_state != PMC_STATE_FREE))
            return fail(EINVAL);
        admin[{a->pm_cpu, a->pm_pmcid}] = a->pm_state;
        return 0;
    }
    case HWPMC_IOC_GETREADSLOT: {
        auto *a = static_cast<pmc_op_getreadslot *>(arg);
        if (!readpage)
            return fail(ENOTTY);
        if (!zero(a->pm_reserved))
            return fail(EINVAL);
        auto it = pmcs.find(a->pm_pmcid);
        if (it == pmcs.end())
            return fail(EINVAL);
        if (!has_slot(a->pm_pmcid, it->second))
            return fail(ENOENT);
        a->pm_slot = (a->pm_pmcid - 1) % HWPMC_READPAGE_NSLOTS;
        a->pm_gen = a->pm_pmcid;
        return 0;
    }
    default:
        return fail(ENOTTY);
    }
}

} // namespace hwpmc::testing

// ioctl(2) of the test program: the linker takes it before the C library's
// for every call the library makes (the test programs link it statically),
// so the model answers while installed and the kernel otherwise.  The C
// library's own calls (isatty() and the like) do not come here.
extern "C" int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (hwpmc::testing::installed.load())
        return hwpmc::testing::fake_kernel::instance().ioctl(request, arg);
    return static_cast<int>(::syscall(SYS_ioctl, fd, request, arg));
}
