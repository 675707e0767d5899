// SPDX-License-Identifier: BSD-2-Clause
#include "session.hpp"

#include "cpu_family.hpp"
#include "ops.hpp"
#include "spec/pfm_source.hpp"
#include "spec/soft_events.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace hwpmc::detail {

spec_context session_info::context() const {
    spec_context ctx;
    ctx.aliases = aliases;
    ctx.soft = soft;
    ctx.pfm = aliases != alias_set::none ? &pfm_source::instance() : nullptr;
    return ctx;
}

uint32_t session_info::width_of(enum pmc_class cls) const {
    for (uint32_t i = 0; i < cpuinfo.pm_nclass; ++i)
        if (cpuinfo.pm_classes[i].pm_class == static_cast<uint32_t>(cls))
            return cpuinfo.pm_classes[i].pm_width;
    return 0;
}

int load_session_info(int fd, const struct pmc_cpuinfo &cpuinfo, session_info *out) {
    out->cpuinfo = cpuinfo;
    out->aliases = alias_set_for(cpuinfo.pm_cputype, x86_cpu_family());
    out->soft.clear();
    std::vector<pmc_dyn_event_descr> events;
    if (op_dynevents(fd, PMC_CLASS_SOFT, &events) == 0) {
        for (const auto &e : events)
            out->soft.push_back(
                {std::string(e.pm_ev_name, strnlen(e.pm_ev_name, sizeof(e.pm_ev_name))),
                 e.pm_ev_code});
        return 0;
    }
    // A module without the op (EOPNOTSUPP) or without SOFT (EINVAL): the
    // header's table.  Anything else is a real failure.
    if (errno != EOPNOTSUPP && errno != EINVAL && errno != ENOTTY)
        return -1;
    const auto dflt = default_soft_events();
    out->soft.assign(dflt.begin(), dflt.end());
    return 0;
}

session::~session() {
    if (const hwpmc_readpage *p = live_page(); p != nullptr)
        readpage_mapping().unmap(p);
    if (fd >= 0)
        ::close(fd);
}

const hwpmc_readpage *session::live_page() const {
    return page != nullptr && fork_generation() == page_forkgen ? page : nullptr;
}

int allocate(int fd, const session_info &info, const char *spec, enum pmc_mode mode, uint32_t flags,
             int cpu, uint64_t count, allocation *out, std::string *errmsg, uint32_t ustack_size) {
    errmsg->clear();
    if (spec == nullptr || out == nullptr || static_cast<uint32_t>(mode) > PMC_MODE_MAX) {
        errno = EINVAL;
        return -1;
    }
    const spec_result parsed = parse_event_spec(spec, info.context());
    if (!parsed.encoding) {
        *errmsg = parsed.error;
        errno = EINVAL;
        return -1;
    }
    // -1 is PMC_CPU_ANY (an int holding 0xffffffff); other negatives are
    // no CPU at all.
    if (cpu < 0 && static_cast<uint32_t>(cpu) != PMC_CPU_ANY) {
        errno = EINVAL;
        return -1;
    }
    const event_encoding &enc = *parsed.encoding;
    pmc_op_pmcallocate a{};
    a.pm_cpu = static_cast<uint32_t>(cpu);
    a.pm_class = enc.cls;
    a.pm_event = enc.event;
    a.pm_mode = mode;
    a.pm_flags = flags;
    a.pm_caps = enc.caps | (PMC_IS_SAMPLING_MODE(mode) ? PMC_CAP_INTERRUPT : 0u);
    a.pm_count = count;
    a.pm_ustack_size = ustack_size;
    a.pm_config = enc.config;
    a.pm_config1 = enc.config1;
    if (op_allocate(fd, &a) < 0) {
        // A hardware event for both modes (no ",usr"/",os", or ":uk") that
        // the caller may not count in kernel mode: EACCES, as from
        // perf_event_open(); like perf's tool, fall back to user mode
        // only.  A PMC asked for kernel mode alone keeps the EACCES.
        constexpr uint64_t both = PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS;
        if (errno != EACCES || (a.pm_config & both) != both)
            return -1;
        a.pm_config &= ~static_cast<uint64_t>(PMC_X86_CONFIG_OS);
        a.pm_caps &= ~static_cast<uint32_t>(PMC_CAP_SYSTEM);
        a.pm_pmcid = 0;
        if (op_allocate(fd, &a) < 0)
            return -1;
    }
    out->id = a.pm_pmcid;
    out->cls = enc.cls;
    return 0;
}

} // namespace hwpmc::detail
