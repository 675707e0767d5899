// SPDX-License-Identifier: BSD-2-Clause
// Reading a PMC with RDPMC where the kernel granted it (PMCGETMSR), for
// pmc_read() and hwpmc::pmc::read(): when to, and how a width-bit reading
// becomes the 64-bit count.
#pragma once

#include <hwpmc/pmc.h>

#include <cstdint>
#include <sys/types.h>

namespace hwpmc::detail {

// RDPMC with ECX = index.  Tests replace it (rdpmc_reader()): QEMU's TCG
// has no RDPMC (#UD even where the kernel set CR4.PCE).
using rdpmc_fn = uint64_t (*)(uint32_t index);
rdpmc_fn &rdpmc_reader();

// What the library knows of one PMC's user-mode RDPMC.
struct rdpmc_state {
    bool counting = false; // a counting PMC (its counter holds its count)
    uint32_t width = 0;    // its class's counter width (0: unknown)
    bool granted = false;  // PMCGETMSR succeeded, and nothing revoked it since
    pid_t pid = 0;         // the process it was granted to (not a fork's child)
    uint32_t index = 0;    // the RDPMC index PMCGETMSR gave
    bool running = false;  // started (PMCSTART) and not stopped since
    bool have_base = false;
    uint64_t base = 0; // the last 64-bit count read (ioctl or RDPMC)
    // hwpmc::pmc's read-page slot (readpage.hpp): generation 0 for none.
    uint32_t rslot = 0;
    uint32_t rgen = 0;

    // PMCGETMSR succeeded with this index.
    void grant(uint32_t idx);
    // PMCDETACH of the owner, PMCRELEASE: the kernel revoked it.
    void revoke() { granted = have_base = false; }
    // PMCRW with a new value, PMCSETCOUNT: the count changed under us.
    void forget() { have_base = false; }
    void started() { running = true; }
    void stopped() { running = have_base = false; }

    // Whether a read may use RDPMC now: granted to this process, counting,
    // running, with a base count (the first read after a start is the
    // ioctl's, which gives the upper bits).
    bool usable() const;
    // The 64-bit count from an RDPMC reading (and the new base).
    uint64_t extend(uint64_t raw);
    // An ioctl read of a running PMC: the base for the next RDPMC reads.
    void read_by_ioctl(uint64_t value);
};

// The count of a width-bit counter that reads `raw` now and whose count
// was `last` at the previous read: last plus how far the counter went since
// (modulo 2^width).  A reading behind `last` by less than half the range
// (another thread's CPU, whose counter was loaded before the last count
// was credited) gives `last`: the count never goes backwards.
uint64_t rdpmc_extend(uint64_t last, uint64_t raw, uint32_t width);

} // namespace hwpmc::detail
