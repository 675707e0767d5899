// SPDX-License-Identifier: BSD-2-Clause
// <hwpmc/hwpmc.hpp>: the C++ API of libhwpmc.
//
// A thin layer over the hwpmc operations: hwpmc::device owns a descriptor
// of /dev/hwpmc (one "owner" in hwpmc(4) terms, independent of the C API's
// implicit session); hwpmc::pmc is an allocated PMC that stops and releases
// itself when destroyed.  Every failure throws std::system_error carrying
// the errno of the operation (a bad event specifier: hwpmc::spec_error,
// EINVAL, whose what() names the offending token and the nearest valid
// names).  No policy: each member function is one operation.
//
//   hwpmc::device dev = hwpmc::device::open();
//   hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
//   p.attach();            // the calling process
//   p.start();
//   work();
//   uint64_t ns = p.read();
#pragma once

#include <hwpmc/pmc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#pragma GCC visibility push(default)

namespace hwpmc {

namespace detail {
struct session;
}

// A bad event specifier (error code EINVAL).
class spec_error : public std::system_error {
public:
    explicit spec_error(const std::string &message);
};

// A SOFT event the kernel offers.
struct soft_event_name {
    std::string name; // "CLOCK.PROF"
    uint32_t code;    // PMC_SOFT_CLOCK_PROF
};

class pmc;

class device {
public:
    // Open /dev/hwpmc ($HWPMC_DEVICE if set), or `path`, and check the
    // module's version (a different major version: EPROTO).
    static device open();
    static device open(const std::string &path);

    device(device &&) noexcept;
    device &operator=(device &&) noexcept;
    device(const device &) = delete;
    device &operator=(const device &) = delete;
    // Closes the descriptor once the device and all its PMCs are gone;
    // closing releases every PMC it still owns (hwpmc(4)).
    ~device();

    int fd() const noexcept;
    uint32_t module_version() const noexcept;
    const struct pmc_cpuinfo &cpuinfo() const;
    const std::vector<soft_event_name> &soft_events() const;

    // PMCALLOCATE.  cpu: a CPU for system scope, -1 (PMC_CPU_ANY) for
    // process scope; count: initial count, or the sampling period.
    pmc allocate(std::string_view spec, enum pmc_mode mode, uint32_t flags = 0, int cpu = -1,
                 uint64_t count = 0);

    std::vector<pmc_info> pmcinfo(int cpu) const; // GETPMCINFO
    pmc_op_getdriverstats driver_stats() const;   // GETDRIVERSTATS
    void enable(int cpu, int row);                // PMCADMIN
    void disable(int cpu, int row);               // PMCADMIN
    void configure_log(int logfd);                // CONFIGURELOG (-1: none)
    void flush_log();                             // FLUSHLOG
    void close_log();                             // CLOSELOG
    void write_log(uint32_t userdata);            // WRITELOG

private:
    explicit device(std::shared_ptr<detail::session> s) noexcept;
    detail::session &live() const; // EBADF after a move
    std::shared_ptr<detail::session> s_;
};

class pmc {
public:
    pmc(pmc &&) noexcept;
    pmc &operator=(pmc &&) noexcept;
    pmc(const pmc &) = delete;
    pmc &operator=(const pmc &) = delete;
    ~pmc(); // stops it if started, then releases it; errors are ignored

    pmc_id_t id() const noexcept { return id_; }
    enum pmc_class cls() const noexcept { return class_; }
    enum pmc_mode mode() const noexcept { return mode_; }
    explicit operator bool() const noexcept { return id_ != PMC_ID_INVALID; }

    void attach(pid_t pid = PMC_PID_SELF); // PMCATTACH
    void detach(pid_t pid = PMC_PID_SELF); // PMCDETACH
    void start();                          // PMCSTART
    void stop();                           // PMCSTOP
    uint64_t read() const;                 // PMCRW, old value
    void write(uint64_t value);            // PMCRW, new value
    uint64_t exchange(uint64_t value);     // PMCRW, both: returns the old value
    void set_count(uint64_t count);        // PMCSETCOUNT (sampling period)
    uint32_t capabilities() const;         // GETCAPS
    uint32_t width() const;                // the class's counter width
    uint32_t msr() const;                  // PMCGETMSR: the RDPMC index
    void release();                        // PMCRELEASE now, reporting errors

private:
    friend class device;
    pmc(std::shared_ptr<detail::session> s, pmc_id_t id, enum pmc_class cls,
        enum pmc_mode mode) noexcept;
    void reset() noexcept;
    int live_fd() const; // EBADF once released or moved from

    std::shared_ptr<detail::session> s_;
    pmc_id_t id_ = PMC_ID_INVALID;
    enum pmc_class class_ = PMC_CLASS_TSC;
    enum pmc_mode mode_ = PMC_MODE_TC;
    bool started_ = false;
};

} // namespace hwpmc

#pragma GCC visibility pop
