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
//
// hwpmc::log_reader reads log files (pmclog(3) underneath):
//
//   hwpmc::log_reader log(fd);
//   for (const pmclog_ev &ev : log)
//       if (ev.pl_type == PMCLOG_TYPE_CALLCHAIN) ...
#pragma once

#include <hwpmc/pmc.h>
#include <hwpmc/pmclog.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#pragma GCC visibility push(default)

namespace hwpmc {

namespace detail {
struct session;
struct rdpmc_state;
} // namespace detail

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

// What an event specifier counts, for the figures a tool derives from it
// (insn per cycle, GHz, CPU time): from the encoding, whatever the name.
enum class event_role {
    other,
    instructions, // instructions retired (IAF 0; IAP/K8 0xc0, umask 0)
    cycles,       // unhalted core cycles (IAF 1; IAP 0x3c umask 0; K8 0x76)
    clock_prof,   // SOFT CLOCK.PROF: nanoseconds of CPU time
};

// An event specifier as the parser understood it (device::parse()): what
// to allocate, what it was written as, and what it encodes.
struct event_info {
    std::string spec;       // what allocate() takes: perf's software names resolved
    std::string name;       // the event as written, without qualifiers or perf modifiers
    std::string perf_alias; // the perf software event it was written as ("task-clock"), or ""
    std::vector<std::string>
        qualifiers; // after the name ("usr", "cmask=1"); perf's :u :k as usr, os
    enum pmc_class cls = PMC_CLASS_TSC;
    uint32_t event = 0;  // pm_event: SOFT code, IAF counter index, or event select
    uint64_t config = 0; // pm_config (x86 event-select image)
    uint32_t caps = 0;   // pm_caps the qualifiers ask for
    event_role role = event_role::other;

    bool is_soft() const noexcept { return cls == PMC_CLASS_SOFT; }
    bool is_tsc() const noexcept { return cls == PMC_CLASS_TSC; }
    bool is_clock_prof() const noexcept { return role == event_role::clock_prof; }
};

// A list of specifiers separated by commas, as tools take them:
// "cycles,usr,instructions" -> {"cycles,usr", "instructions"} (a token that
// is a qualifier belongs to the specifier before it).  A trailing comma
// gives an empty specifier.  Needs no device.
std::vector<std::string> split_event_list(std::string_view list);

// perf's software event names as hwpmc SOFT specifiers: "task-clock,usr" ->
// "SOFT-CLOCK.PROF,usr" (also context-switches/cs, cpu-migrations/
// migrations, page-faults/faults); any other specifier is returned as it
// is.  Needs no device.
std::string resolve_perf_alias(std::string_view spec);

// What `spec` names without a device: the SOFT events of <linux/hwpmc.h>
// and the TSC (perf's software names accepted).  Hardware events need the
// machine's CPU (device::parse()): here they throw spec_error.
event_info parse_event(std::string_view spec);

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
    // The same with PMCALLOCATE's pm_ustack_size: the bytes of user stack
    // each sample of a PMC_F_USERSTACK PMC copies (0: the module's default).
    pmc allocate(std::string_view spec, enum pmc_mode mode, uint32_t flags, int cpu, uint64_t count,
                 uint32_t ustack_size);
    // What `spec` names on this machine (perf's software names accepted),
    // without allocating anything; a bad specifier throws spec_error with
    // the message allocate() would give for resolve_perf_alias(spec).
    event_info parse(std::string_view spec) const;

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
    // The count: from the device's read page where the PMC has a slot, with
    // RDPMC once msr() granted it, else PMCRW (as pmc_read(); <hwpmc/pmc.h>
    // says when the page and RDPMC are used and what they give).
    uint64_t read() const;
    void write(uint64_t value);        // PMCRW, new value
    uint64_t exchange(uint64_t value); // PMCRW, both: returns the old value
    void set_count(uint64_t count);    // PMCSETCOUNT (sampling period)
    uint32_t capabilities() const;     // GETCAPS
    uint32_t width() const;            // the class's counter width
    uint32_t msr() const;              // PMCGETMSR: the RDPMC index (grants RDPMC)
    void release();                    // PMCRELEASE now, reporting errors

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
    std::unique_ptr<detail::rdpmc_state> rdpmc_; // read()'s RDPMC
};

// The records of a log file, validated as pmclog_read() does (see
// <hwpmc/pmclog.h>): from a descriptor, from a whole log in memory, or fed
// piece by piece.  A corrupt or truncated log, a log of another major
// version, or a read(2) failure throws std::system_error (EBADMSG, EPROTO,
// read's errno) whose what() names the fault and its offset.
class log_reader {
public:
    log_reader();                                        // fed: feed(), then finish()
    explicit log_reader(int fd);                         // read(2)s fd (never closed here)
    explicit log_reader(std::span<const std::byte> log); // a whole log (copied)

    log_reader(log_reader &&) noexcept;
    log_reader &operator=(log_reader &&) noexcept;
    log_reader(const log_reader &) = delete;
    log_reader &operator=(const log_reader &) = delete;
    ~log_reader();

    void feed(std::span<const std::byte> data); // copied (EINVAL unless fed)
    void finish();                              // the input ends here

    // The next record, valid until the next call (or until the reader is
    // fed or destroyed); nullptr at the end of the log (state() is
    // PMCLOG_EOF) or while a fed reader needs more (PMCLOG_REQUIRE_DATA;
    // with a non-blocking descriptor also on EAGAIN).
    const pmclog_ev *next();
    enum pmclog_state state() const noexcept;

    // An input range over the records from the current one on.
    class iterator {
    public:
        using iterator_concept = std::input_iterator_tag;
        using iterator_category = std::input_iterator_tag;
        using value_type = pmclog_ev;
        using difference_type = std::ptrdiff_t;
        using reference = const pmclog_ev &;
        using pointer = const pmclog_ev *;

        iterator() = default;
        reference operator*() const noexcept { return *ev_; }
        pointer operator->() const noexcept { return ev_; }
        iterator &operator++() {
            ev_ = r_->next();
            return *this;
        }
        void operator++(int) { ++*this; }
        friend bool operator==(const iterator &i, std::default_sentinel_t) noexcept {
            return i.ev_ == nullptr;
        }

    private:
        friend class log_reader;
        iterator(log_reader *r, const pmclog_ev *ev) noexcept : r_(r), ev_(ev) {}
        log_reader *r_ = nullptr;
        const pmclog_ev *ev_ = nullptr;
    };
    iterator begin() { return iterator(this, next()); }
    std::default_sentinel_t end() const noexcept { return {}; }

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

} // namespace hwpmc

#pragma GCC visibility pop
