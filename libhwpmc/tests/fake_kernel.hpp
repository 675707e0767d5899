// SPDX-License-Identifier: BSD-2-Clause
// A model of the hwpmc kernel module's ioctl interface, for unit tests of
// the library without the module: install() routes the library's ioctls to
// it (the device itself is /dev/null, through HWPMC_DEVICE).  It checks what
// the ABI demands of callers (reserved fields zero, known flags) and keeps
// just enough state to answer.
#pragma once

#include <linux/hwpmc.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hwpmc::testing {

struct fake_pmc {
    pmc_op_pmcallocate alloc{}; // as allocated
    bool running = false;
    bool stopped = false; // PMCSTOP since the last PMCSTART
    uint64_t value = 0;
    std::vector<int32_t> targets;
};

class fake_kernel {
public:
    // The one instance; install() resets it and routes ioctls to it.
    static fake_kernel &instance();
    void install();   // also sets HWPMC_DEVICE=/dev/null
    void uninstall(); // the real ioctl(2) again

    // Configuration.
    uint32_t version = HWPMC_VERSION;
    uint32_t cputype = PMC_CPU_GENERIC;
    uint32_t ncpu = 2;
    bool dyn_events = true; // GETDYNEVENTINFO implemented
    std::vector<std::pair<std::string, uint32_t>> soft = {
        {"CLOCK.HARD", 0}, {"CLOCK.PROF", 1}, {"PAGE_FAULT.ALL", 2}, {"SYSCALL.ENTER", 7}};
    uint32_t grow_rows_once = 0; // GETPMCINFO: grow the rows once (E2BIG)
    int getmsr_errno = 0;        // PMCGETMSR fails with it (not qualifying: EINVAL)
    bool hw_classes = false;     // PMCALLOCATE takes IAP, IAF and K8 too
    int owned_row = -1;          // GETPMCINFO: this row has a TC PMC ...
    uint32_t owned_event = 0;    // ... whose pm_event is this (either encoding)
    // The read page (module 1.6): mapped and GETREADSLOT answered only when
    // set.  Slot of PMC id: (id - 1) % NSLOTS, generation id.  After every
    // operation the page holds what PMCRW would read of each PMC that has a
    // slot (HWPMC_RS_VALUE while it has a target and is not stopped).
    bool readpage = false;
    bool tsc_slots = true; // TSC PMCs get slots (HWPMC_RP_F_TSC)
    alignas(4096) hwpmc_readpage page{};
    unsigned rw_calls = 0;   // PMCRW ioctls
    unsigned eintr_next = 0; // the next this many ioctls fail with EINTR, as a signal does
    void sync_page();
    // The library's mapping routed to `page` (restore_mapping() undoes it).
    void route_mapping();
    static void restore_mapping();

    // State.
    std::map<uint32_t, fake_pmc> pmcs;
    uint32_t next_id = 1;
    int logfd = -1;
    std::vector<uint32_t> userdata;
    unsigned flushes = 0;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> admin; // (cpu,row) -> state
    unsigned calls = 0;

    int ioctl(unsigned long request, void *arg);

private:
    int op(unsigned long request, void *arg);
    bool has_slot(uint32_t id, const fake_pmc &p) const;
    fake_kernel() = default;
    void reset();
    uint32_t nrows() const { return 3 + 16; } // TSC-0, SOFT-0..15, +2 spare
};

} // namespace hwpmc::testing
