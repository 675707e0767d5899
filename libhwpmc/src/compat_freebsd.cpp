// SPDX-License-Identifier: BSD-2-Clause
// The compat include directory's FreeBSD layouts (compat/include/sys/pmc.h)
// translated to the Linux ABI: pmc_freebsd_op() and the pmc(3) entry points
// whose structures differ (pmc_freebsd_cpuinfo ...).  This file sees the
// Linux ABI as uapi::, and FreeBSD's names unqualified; it reaches the
// device only through pmc_raw_op().
#include <linux/ioctl.h>
#include <linux/types.h>

namespace uapi {
#include <linux/hwpmc.h>
} // namespace uapi

#include "../compat/include/sys/pmc.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

extern "C" int pmc_raw_op(int op, void *arg);
extern "C" int pmc_pmu_pmcallocate(const char *ev, uapi::pmc_op_pmcallocate *op);

namespace {

constexpr uint64_t kConfigMask = 0xffa7ff00ULL; // PMC_X86_CONFIG_MASK
constexpr uint64_t kUsr = 1ULL << 16, kOs = 1ULL << 17, kAny = 1ULL << 21;

int fail(int err) {
    errno = err;
    return -1;
}

uint32_t event_of_evtsel(uint64_t sel) {
    return static_cast<uint32_t>((sel & 0xff) | ((sel >> 32) & 0xf) << 8);
}

// FreeBSD's PMCALLOCATE in the Linux layout; 0 or an errno.
int to_linux(const pmc_op_pmcallocate &f, uapi::pmc_op_pmcallocate *l) {
    *l = {};
    l->pm_cpu = f.pm_cpu;
    l->pm_class = static_cast<uint32_t>(f.pm_class);
    l->pm_mode = static_cast<uint32_t>(f.pm_mode);
    l->pm_flags = f.pm_flags & ~static_cast<uint32_t>(PMC_F_EV_PMU | PMC_F_USERCALLCHAIN);
    l->pm_caps = f.pm_caps;
    l->pm_count = f.pm_count;
    switch (f.pm_class) {
    case PMC_CLASS_TSC:
    case PMC_CLASS_SOFT:
    case PMC_CLASS_IAF:
        if (PMC_EV_CLASS(f.pm_ev) != static_cast<uint32_t>(f.pm_class))
            return EINVAL; // an event of another class
        l->pm_event = PMC_EV_CODE(f.pm_ev);
        if (f.pm_class == PMC_CLASS_IAF) {
            const uint64_t fl = f.pm_md.pm_iaf.pm_iaf_flags;
            l->pm_config =
                (fl & IAF_USR ? kUsr : 0) | (fl & IAF_OS ? kOs : 0) | (fl & IAF_ANY ? kAny : 0);
        }
        return 0;
    case PMC_CLASS_IAP:
        if (f.pm_md.pm_iap.pm_iap_rsp != 0)
            return EINVAL; // no OFFCORE_RSP programming here
        l->pm_event = event_of_evtsel(f.pm_md.pm_iap.pm_iap_config);
        l->pm_config = f.pm_md.pm_iap.pm_iap_config & kConfigMask;
        return 0;
    case PMC_CLASS_K8:
        // FreeBSD's amd_allocate_pmc() takes only PMU-table events.
        if (!(f.pm_flags & PMC_F_EV_PMU) ||
            f.pm_md.pm_amd.pm_amd_sub_class != PMC_AMD_SUB_CLASS_CORE)
            return EINVAL;
        l->pm_event = event_of_evtsel(f.pm_md.pm_amd.pm_amd_config);
        l->pm_config = f.pm_md.pm_amd.pm_amd_config & kConfigMask;
        return 0;
    default:
        return EINVAL; // a FreeBSD class this port does not have
    }
}

int cpuinfo_linux(uapi::pmc_op_getcpuinfo *ci) {
    *ci = {};
    return pmc_raw_op(PMC_OP_GETCPUINFO, ci);
}

int op_getpmcinfo(pmc_op_getpmcinfo *f) {
    uapi::pmc_op_getcpuinfo ci;
    if (cpuinfo_linux(&ci) < 0)
        return -1;
    std::vector<uapi::pmc_info> rows(ci.pm_npmc);
    uapi::pmc_op_getpmcinfo l{};
    l.pm_cpu = static_cast<uint32_t>(f->pm_cpu);
    l.pm_npmc = ci.pm_npmc;
    l.pm_info = reinterpret_cast<uintptr_t>(rows.data());
    if (f->pm_cpu < 0)
        return fail(EINVAL);
    if (pmc_raw_op(PMC_OP_GETPMCINFO, &l) < 0)
        return -1;
    for (uint32_t i = 0; i < l.pm_npmc && i < rows.size(); ++i) {
        const auto &r = rows[i];
        auto &o = f->pm_pmcs[i];
        std::memset(&o, 0, sizeof(o));
        std::memcpy(o.pm_name, r.pm_name, sizeof(o.pm_name));
        o.pm_class = static_cast<enum pmc_class>(r.pm_class);
        o.pm_enabled = static_cast<int>(r.pm_enabled);
        o.pm_rowdisp = static_cast<enum pmc_disp>(r.pm_rowdisp);
        o.pm_ownerpid = r.pm_ownerpid;
        o.pm_mode = static_cast<enum pmc_mode>(r.pm_mode);
        // Modules before 1.4 give the class code alone.
        uint32_t ev = r.pm_event;
        if (r.pm_mode <= PMC_MODE_TC && PMC_EV_CLASS(ev) != r.pm_class)
            ev = PMC_EV_MAKE(r.pm_class, ev);
        o.pm_event = static_cast<enum pmc_event>(ev);
        o.pm_flags = r.pm_flags;
        o.pm_reloadcount = r.pm_reloadcount;
    }
    return 0;
}

int op_getcpuinfo(pmc_op_getcpuinfo *f) {
    uapi::pmc_op_getcpuinfo ci;
    if (cpuinfo_linux(&ci) < 0)
        return -1;
    std::memset(f, 0, sizeof(*f));
    f->pm_cputype = static_cast<enum pmc_cputype>(ci.pm_cputype);
    f->pm_ncpu = ci.pm_ncpu;
    f->pm_npmc = ci.pm_npmc;
    f->pm_nclass = ci.pm_nclass;
    for (uint32_t i = 0; i < ci.pm_nclass && i < PMC_CLASS_TABLE_SIZE_FREEBSD; ++i) {
        f->pm_classes[i].pm_class = static_cast<enum pmc_class>(ci.pm_classes[i].pm_class);
        f->pm_classes[i].pm_caps = ci.pm_classes[i].pm_caps;
        f->pm_classes[i].pm_width = ci.pm_classes[i].pm_width;
        f->pm_classes[i].pm_num = ci.pm_classes[i].pm_num;
    }
    return 0;
}

unsigned int clamp(uint64_t v) {
    return v > 0xffffffffULL ? 0xffffffffU : static_cast<unsigned int>(v);
}

int op_driverstats(pmc_op_getdriverstats *f) {
    uapi::pmc_op_getdriverstats l{};
    if (pmc_raw_op(PMC_OP_GETDRIVERSTATS, &l) < 0)
        return -1;
    f->pm_intr_ignored = clamp(l.pm_intr_ignored);
    f->pm_intr_processed = clamp(l.pm_intr_processed);
    f->pm_intr_bufferfull = clamp(l.pm_intr_bufferfull);
    f->pm_syscalls = clamp(l.pm_syscalls);
    f->pm_syscall_errors = clamp(l.pm_syscall_errors);
    f->pm_buffer_requests = clamp(l.pm_buffer_requests);
    f->pm_buffer_requests_failed = clamp(l.pm_buffer_requests_failed);
    f->pm_log_sweeps = clamp(l.pm_log_sweeps);
    return 0;
}

int op_dynevents(pmc_op_getdyneventinfo *f) {
    std::vector<uapi::pmc_dyn_event_descr> ev(PMC_EV_DYN_COUNT);
    uapi::pmc_op_getdyneventinfo l{};
    l.pm_class = static_cast<uint32_t>(f->pm_class);
    l.pm_nevent = PMC_EV_DYN_COUNT;
    l.pm_events = reinterpret_cast<uintptr_t>(ev.data());
    if (pmc_raw_op(PMC_OP_GETDYNEVENTINFO, &l) < 0)
        return -1;
    f->pm_nevent = l.pm_nevent;
    for (uint32_t i = 0; i < l.pm_nevent && i < PMC_EV_DYN_COUNT; ++i) {
        std::memcpy(f->pm_events[i].pm_ev_name, ev[i].pm_ev_name, PMC_NAME_MAX);
        f->pm_events[i].pm_ev_code = PMC_EV_MAKE(f->pm_class, ev[i].pm_ev_code);
    }
    return 0;
}

int simple(int op, const void *arg) {
    uapi::pmc_op_simple l{};
    l.pm_pmcid = static_cast<const pmc_op_simple *>(arg)->pm_pmcid;
    return pmc_raw_op(op, &l);
}

} // namespace

extern "C" {

int pmc_syscall = -1;

int pmc_freebsd_op(int op, void *arg) {
    if (arg == nullptr && op != PMC_OP_FLUSHLOG && op != PMC_OP_CLOSELOG)
        return fail(EFAULT);
    switch (op) {
    case PMC_OP_CONFIGURELOG: {
        const auto *f = static_cast<const pmc_op_configurelog *>(arg);
        uapi::pmc_op_configurelog l{};
        l.pm_logfd = f->pm_logfd;
        l.pm_flags = static_cast<uint32_t>(f->pm_flags);
        return pmc_raw_op(op, &l);
    }
    case PMC_OP_FLUSHLOG:
    case PMC_OP_CLOSELOG:
        return pmc_raw_op(op, nullptr);
    case PMC_OP_GETCPUINFO:
        return op_getcpuinfo(static_cast<pmc_op_getcpuinfo *>(arg));
    case PMC_OP_GETDRIVERSTATS:
        return op_driverstats(static_cast<pmc_op_getdriverstats *>(arg));
    case PMC_OP_GETMODULEVERSION: {
        uapi::pmc_op_getmoduleversion l{};
        if (pmc_raw_op(op, &l) < 0)
            return -1;
        *static_cast<uint32_t *>(arg) = l.pm_version;
        return 0;
    }
    case PMC_OP_GETPMCINFO:
        return op_getpmcinfo(static_cast<pmc_op_getpmcinfo *>(arg));
    case PMC_OP_PMCADMIN: {
        const auto *f = static_cast<const pmc_op_pmcadmin *>(arg);
        if (f->pm_cpu < 0 || f->pm_pmc < 0)
            return fail(EINVAL);
        uapi::pmc_op_pmcadmin l{};
        l.pm_cpu = static_cast<uint32_t>(f->pm_cpu);
        l.pm_pmcid = static_cast<uint32_t>(f->pm_pmc);
        l.pm_state = static_cast<uint32_t>(f->pm_state);
        return pmc_raw_op(op, &l); // FreeBSD's pm_flags (PMC_F_FORCE) has no use here
    }
    case PMC_OP_PMCALLOCATE: {
        auto *f = static_cast<pmc_op_pmcallocate *>(arg);
        uapi::pmc_op_pmcallocate l;
        if (const int err = to_linux(*f, &l))
            return fail(err);
        if (pmc_raw_op(op, &l) < 0)
            return -1;
        f->pm_pmcid = l.pm_pmcid;
        return 0;
    }
    case PMC_OP_PMCATTACH:
    case PMC_OP_PMCDETACH: {
        const auto *f = static_cast<const pmc_op_pmcattach *>(arg);
        uapi::pmc_op_pmcattach l{};
        l.pm_pmcid = f->pm_pmc;
        l.pm_pid = f->pm_pid;
        return pmc_raw_op(op, &l);
    }
    case PMC_OP_PMCGETMSR: {
        auto *f = static_cast<pmc_op_x86_getmsr *>(arg);
        uapi::pmc_op_getmsr l{};
        l.pm_pmcid = f->pm_pmcid;
        if (pmc_raw_op(op, &l) < 0)
            return -1;
        f->pm_msr = l.pm_msr;
        return 0;
    }
    case PMC_OP_PMCRELEASE:
    case PMC_OP_PMCSTART:
    case PMC_OP_PMCSTOP:
        return simple(op, arg);
    case PMC_OP_PMCRW: {
        auto *f = static_cast<pmc_op_pmcrw *>(arg);
        uapi::pmc_op_pmcrw l{};
        l.pm_pmcid = f->pm_pmcid;
        l.pm_flags = f->pm_flags;
        l.pm_value = f->pm_value;
        if (pmc_raw_op(op, &l) < 0)
            return -1;
        f->pm_value = l.pm_value;
        return 0;
    }
    case PMC_OP_PMCSETCOUNT: {
        const auto *f = static_cast<const pmc_op_pmcsetcount *>(arg);
        uapi::pmc_op_pmcsetcount l{};
        l.pm_pmcid = f->pm_pmcid;
        l.pm_count = f->pm_count;
        return pmc_raw_op(op, &l);
    }
    case PMC_OP_WRITELOG: {
        uapi::pmc_op_writelog l{};
        l.pm_userdata = static_cast<const pmc_op_writelog *>(arg)->pm_userdata;
        return pmc_raw_op(op, &l);
    }
    case PMC_OP_GETDYNEVENTINFO:
        return op_dynevents(static_cast<pmc_op_getdyneventinfo *>(arg));
    case PMC_OP_GETCAPS: {
        auto *f = static_cast<pmc_op_caps *>(arg);
        uapi::pmc_op_caps l{};
        l.pm_pmcid = f->pm_pmcid;
        if (pmc_raw_op(op, &l) < 0)
            return -1;
        f->pm_caps = l.pm_caps;
        return 0;
    }
    default:
        return fail(EINVAL);
    }
}

// pmc(3) with FreeBSD's structures (the compat <pmc.h>'s asm labels).
#define HWPMC_EXPORT __attribute__((visibility("default")))
HWPMC_EXPORT int pmc_freebsd_cpuinfo(const pmc_op_getcpuinfo **out) {
    static std::mutex lock;
    static pmc_op_getcpuinfo info;
    static bool have = false;
    if (out == nullptr)
        return fail(EINVAL);
    std::lock_guard guard(lock);
    if (!have) {
        if (op_getcpuinfo(&info) < 0)
            return -1;
        have = true;
    }
    *out = &info;
    return 0;
}

HWPMC_EXPORT int pmc_freebsd_pmcinfo(int cpu, pmc_op_getpmcinfo **out) {
    uapi::pmc_op_getcpuinfo ci;
    if (out == nullptr)
        return fail(EINVAL);
    if (cpuinfo_linux(&ci) < 0)
        return -1;
    auto *p = static_cast<pmc_op_getpmcinfo *>(
        std::calloc(1, sizeof(pmc_op_getpmcinfo) + ci.pm_npmc * sizeof(pmc_info)));
    if (p == nullptr)
        return -1;
    p->pm_cpu = cpu;
    if (op_getpmcinfo(p) < 0) {
        const int err = errno;
        std::free(p);
        return fail(err);
    }
    *out = p;
    return 0;
}

HWPMC_EXPORT int pmc_freebsd_get_driver_stats(pmc_op_getdriverstats *out) {
    if (out == nullptr)
        return fail(EINVAL);
    return op_driverstats(out);
}

HWPMC_EXPORT int pmc_freebsd_pmu_pmcallocate(const char *ev, pmc_op_pmcallocate *f) {
    if (f == nullptr)
        return ENOENT;
    uapi::pmc_op_pmcallocate l{};
    l.pm_caps = f->pm_caps;
    const int rc = pmc_pmu_pmcallocate(ev, &l);
    if (rc != 0)
        return rc;
    std::memset(&f->pm_md, 0, sizeof(f->pm_md));
    f->pm_caps = l.pm_caps;
    f->pm_class = static_cast<enum pmc_class>(l.pm_class);
    f->pm_ev = PMC_EV_MAKE(l.pm_class, l.pm_event);
    f->pm_flags |= PMC_F_EV_PMU;
    const uint64_t sel = (l.pm_event & 0xffULL) | ((l.pm_event >> 8) & 0xfULL) << 32 | l.pm_config;
    if (l.pm_class == PMC_CLASS_K8) {
        f->pm_md.pm_amd.pm_amd_config = sel;
        f->pm_md.pm_amd.pm_amd_sub_class = PMC_AMD_SUB_CLASS_CORE;
    } else {
        f->pm_md.pm_iap.pm_iap_config = sel;
    }
    return 0;
}

} // extern "C"
