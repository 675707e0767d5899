// SPDX-License-Identifier: BSD-2-Clause
// What a session with the kernel module knows after the handshake, and the
// allocation of a PMC from an event specifier: shared by the C API (one
// implicit session) and hwpmc::device (one session per object).
#pragma once

#include "readpage.hpp"
#include "spec/event_spec.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <string>
#include <vector>

namespace hwpmc::detail {

struct session_info {
    struct pmc_cpuinfo cpuinfo {};
    std::vector<soft_event> soft; // the kernel's SOFT events, else the header's
    alias_set aliases = alias_set::none;

    spec_context context() const;                // with libpfm4 lookups when there is a PMU
    uint32_t width_of(enum pmc_class cls) const; // 0 if the class is absent
};

// After the handshake: the SOFT event list (GETDYNEVENTINFO; the header's
// table if the module does not offer it) and the alias set.  0, or -1 with
// errno.
int load_session_info(int fd, const struct pmc_cpuinfo &cpuinfo, session_info *out);

struct allocation {
    pmc_id_t id = PMC_ID_INVALID;
    enum pmc_class cls = PMC_CLASS_TSC;
};

// A descriptor of the device with what the handshake learnt: the C++ API's
// device and its PMCs share one; the descriptor closes with the last.
struct session {
    int fd = -1;
    uint32_t module_version = 0;
    session_info info;
    std::vector<hwpmc::soft_event_name> soft_names; // info.soft, for the C++ API
    // The read page (readpage.hpp), mapped in fork generation page_forkgen.
    const hwpmc_readpage *page = nullptr;
    unsigned page_forkgen = 0;
    // The page, if mapped in this process (not a fork's child).
    const hwpmc_readpage *live_page() const;

    session() = default;
    session(const session &) = delete;
    session &operator=(const session &) = delete;
    ~session();
};

// pmc_allocate(3) on `fd`: 0, or -1 with errno; a bad specifier is EINVAL
// with the explanation in *errmsg.  ustack_size: PMCALLOCATE's
// pm_ustack_size (PMC_F_USERSTACK).
int allocate(int fd, const session_info &info, const char *spec, enum pmc_mode mode, uint32_t flags,
             int cpu, uint64_t count, allocation *out, std::string *errmsg,
             uint32_t ustack_size = 0);

} // namespace hwpmc::detail
