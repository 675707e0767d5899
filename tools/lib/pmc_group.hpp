// SPDX-License-Identifier: GPL-2.0
// The PMCs of a measurement, as hwpmc-stat (counting), hwpmc-record and
// hwpmc-top (sampling) use them: one PMC per event, or per event and CPU
// in system scope, allocated, attached, started, stopped and read
// together, with every failure explained (what failed, why, what to do).
#pragma once

#include <hwpmc/hwpmc.hpp>

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace hwpmc_tools {

class pmc_group {
public:
    enum class use {
        counting, // PMC_MODE_SC / TC
        sampling  // PMC_MODE_SS / TS
    };

    // One event to allocate.
    struct request {
        std::string spec;         // what hwpmc::device::allocate() gets
        std::string name;         // what messages call it (as the user wrote it)
        bool system = false;      // system scope: one PMC per CPU
        uint64_t period = 0;      // sampling: the period
        uint32_t flags = 0;       // PMC_F_*
        uint32_t ustack_size = 0; // PMC_F_USERSTACK: bytes of user stack
        bool tsc = false;         // the TSC (it counts only system-wide)
    };

    // One allocated PMC.
    struct member {
        size_t req; // index of its request, as given to allocate()
        int cpu;    // -1: process scope
        hwpmc::pmc pmc;
    };

    // A failed allocation, for the caller to explain or to pass over.
    struct failure {
        int err = 0;       // errno (EINVAL for a bad specifier)
        bool spec = false; // a bad specifier (hwpmc::spec_error)
        std::string what;  // the exception's what()
        int cpu = -1;      // where it failed
    };

    pmc_group(const char *prog, use u) : prog_(prog), use_(u) {}

    // Allocate `r` (index `req`) on every CPU of `cpus` (system scope) or
    // once (process scope).  False with *f set, and nothing of `r` kept,
    // on failure (not explained: see explain_allocation()).
    bool allocate(hwpmc::device &dev, size_t req, const request &r, const std::vector<int> &cpus,
                  failure *f);
    // Print why `r` could not be allocated, and what to do.
    void explain_allocation(const request &r, const failure &f) const;

    // Attach the process-scope PMCs to `pid`; false with a message.  The
    // messages name each PMC by its request in `reqs`.
    bool attach(pid_t pid, const std::vector<request> &reqs);
    // Start every PMC; false with a message.
    bool start(const std::vector<request> &reqs);
    // Stop every PMC; errors are ignored (a CPU went offline, the targets
    // of a process PMC are gone).
    void stop();
    // Read every PMC into (*v)[i] (members' order); a PMC on a CPU gone
    // offline keeps its last value.  False with a message.
    bool read(const std::vector<request> &reqs, std::vector<uint64_t> *v);

    std::vector<member> &members() noexcept { return members_; }
    const std::vector<member> &members() const noexcept { return members_; }
    size_t size() const noexcept { return members_.size(); }
    bool empty() const noexcept { return members_.empty(); }
    // Release every PMC.
    void clear() noexcept { members_.clear(); }

private:
    // A failed operation: a bad specifier's message, or explain().
    void report(const char *what, const std::system_error &e) const;

    const char *prog_;
    use use_;
    std::vector<member> members_;
};

} // namespace hwpmc_tools
