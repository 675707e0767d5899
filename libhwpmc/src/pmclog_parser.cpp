// SPDX-License-Identifier: BSD-2-Clause
// The log decoder: see pmclog_parser.hpp, and <hwpmc/pmclog.h> for the
// rules it enforces.
#include "pmclog_parser.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <type_traits>
#include <unistd.h>

namespace hwpmc::detail {

namespace {

constexpr size_t read_chunk = 64 * 1024;
constexpr uint64_t ns_per_s = 1000000000;

// A record's fixed part, copied out (the data need not be aligned).
template <class T>
T load(const unsigned char *p) noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

struct timespec ns_to_timespec(uint64_t ns) noexcept {
    struct timespec ts {};
    ts.tv_sec = static_cast<time_t>(ns / ns_per_s);
    ts.tv_nsec = static_cast<long>(ns % ns_per_s);
    return ts;
}

// The shortest valid record of a known type (string records: the fixed
// part and at least the NUL).  INITIALIZE: only up to its version, so that
// a log of another major version is refused as such (EPROTO) even if its
// INITIALIZE is shorter.
uint32_t min_len(uint32_t type) noexcept {
    switch (type) {
    case PMCLOG_TYPE_INITIALIZE:
        return offsetof(struct pmclog_initialize, pl_cputype);
    case PMCLOG_TYPE_CLOSELOG:
        return sizeof(struct pmclog_closelog);
    case PMCLOG_TYPE_DROPNOTIFY: // log minor 0: without pl_throttled
        return offsetof(struct pmclog_dropnotify, pl_throttled);
    case PMCLOG_TYPE_PMCALLOCATE:
        return sizeof(struct pmclog_pmcallocate);
    case PMCLOG_TYPE_PMCATTACH:
        return sizeof(struct pmclog_pmcattach) + 1;
    case PMCLOG_TYPE_PMCDETACH:
        return sizeof(struct pmclog_pmcdetach);
    case PMCLOG_TYPE_PROCCSW:
        return sizeof(struct pmclog_proccsw);
    case PMCLOG_TYPE_PROCEXEC:
        return sizeof(struct pmclog_procexec) + 1;
    case PMCLOG_TYPE_PROCEXIT:
        return sizeof(struct pmclog_procexit);
    case PMCLOG_TYPE_PROCFORK:
        return sizeof(struct pmclog_procfork);
    case PMCLOG_TYPE_SYSEXIT:
        return sizeof(struct pmclog_sysexit);
    case PMCLOG_TYPE_USERDATA:
        return sizeof(struct pmclog_userdata);
    case PMCLOG_TYPE_MAP_IN:
        return sizeof(struct pmclog_map_in) + 1;
    case PMCLOG_TYPE_MAP_OUT:
        return sizeof(struct pmclog_map_out);
    case PMCLOG_TYPE_CALLCHAIN:
        return sizeof(struct pmclog_callchain);
    case PMCLOG_TYPE_USERSTACK:
        return sizeof(struct pmclog_userstack);
    default:
        return sizeof(struct pmclog_header);
    }
}

const char *type_name(uint32_t type) noexcept {
    static const char *const names[] = {
        "type 0",    "INITIALIZE", "CLOSELOG", "DROPNOTIFY", "PMCALLOCATE", "PMCATTACH",
        "PMCDETACH", "PROCCSW",    "PROCEXEC", "PROCEXIT",   "PROCFORK",    "SYSEXIT",
        "USERDATA",  "MAP_IN",     "MAP_OUT",  "CALLCHAIN",  "USERSTACK",
    };
    static_assert(sizeof(names) / sizeof(names[0]) == PMCLOG_TYPE_MAX + 1);
    return type <= PMCLOG_TYPE_MAX ? names[type] : "unknown type";
}

unsigned long long ull(uint64_t v) noexcept {
    return static_cast<unsigned long long>(v);
}

} // namespace

int pmclog_parser::feed(const void *data, size_t len) noexcept {
    if (!fed() || ended_ || (data == nullptr && len != 0)) {
        errno = EINVAL;
        return -1;
    }
    if (len == 0)
        return 0;
    // Keep the copying linear: drop consumed bytes once they are the most.
    if (pos_ != 0 && pos_ >= buf_.size() / 2)
        compact();
    try {
        const auto *p = static_cast<const unsigned char *>(data);
        buf_.insert(buf_.end(), p, p + len);
    } catch (const std::bad_alloc &) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int pmclog_parser::end_input() noexcept {
    if (!fed()) {
        errno = EINVAL;
        return -1;
    }
    ended_ = true;
    return 0;
}

void pmclog_parser::compact() noexcept {
    if (pos_ == 0)
        return;
    base_ += pos_;
    if (pos_ == buf_.size())
        buf_.clear();
    else
        buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos_));
    pos_ = 0;
}

// Make `want` unconsumed bytes available: ok; eof (the input ended with
// fewer); more (fed: feed more; descriptor: EAGAIN); error (errno).
pmclog_parser::fill_result pmclog_parser::fill(size_t want) noexcept {
    for (;;) {
        const size_t avail = buf_.size() - pos_;
        if (avail >= want)
            return fill_result::ok;
        if (fed())
            return ended_ ? fill_result::eof : fill_result::more;
        compact();
        const size_t old = buf_.size();
        const size_t chunk = std::max(want - avail, read_chunk);
        try {
            buf_.resize(old + chunk);
        } catch (const std::bad_alloc &) {
            errno = ENOMEM;
            return fill_result::error;
        }
        ssize_t n;
        do
            n = ::read(fd_, buf_.data() + old, chunk);
        while (n < 0 && errno == EINTR);
        const int err = errno;
        buf_.resize(old + static_cast<size_t>(std::max<ssize_t>(n, 0)));
        errno = err;
        if (n < 0)
            return err == EAGAIN || err == EWOULDBLOCK ? fill_result::more : fill_result::error;
        if (n == 0)
            return fill_result::eof;
    }
}

enum pmclog_state pmclog_parser::fail(int err, const char *fmt, ...) noexcept {
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    try {
        char where[40];
        std::snprintf(where, sizeof(where), "offset %llu: ", ull(cur_off_));
        msg_ = std::string(where) + what;
    } catch (const std::bad_alloc &) {
        msg_.clear();
    }
    failed_ = true;
    errno_ = err;
    errno = err;
    return PMCLOG_ERROR;
}

enum pmclog_state pmclog_parser::copy_string(const unsigned char *p, uint32_t len, size_t fixed,
                                             char *out, size_t outsz, const char *what) noexcept {
    const auto *s = p + fixed;
    const auto *nul = static_cast<const unsigned char *>(std::memchr(s, 0, len - fixed));
    if (nul == nullptr)
        return fail(EBADMSG, "%s: unterminated %s", type_name(load<pmclog_header>(p).pl_type),
                    what);
    const auto n = static_cast<size_t>(nul - s);
    if (n >= outsz)
        return fail(EBADMSG, "%s: %s of %zu bytes, longer than %zu",
                    type_name(load<pmclog_header>(p).pl_type), what, n, outsz - 1);
    std::memcpy(out, s, n);
    out[n] = '\0';
    return PMCLOG_OK;
}

// One complete record of a known type, pl_len bytes at p (already checked
// against min_len()), into ev.pl_u.
enum pmclog_state pmclog_parser::decode(const unsigned char *p, uint32_t type, uint32_t len,
                                        struct pmclog_ev &ev) noexcept {
    auto &u = ev.pl_u;
    switch (type) {
    case PMCLOG_TYPE_INITIALIZE: {
        const uint32_t version = load<uint32_t>(p + offsetof(struct pmclog_initialize, pl_version));
        if (HWPMC_VERSION_TO_MAJOR(version) != PMCLOG_VERSION_MAJOR)
            return fail(EPROTO, "INITIALIZE: log format version %u.%u, this reader knows %u.x",
                        HWPMC_VERSION_TO_MAJOR(version), HWPMC_VERSION_TO_MINOR(version),
                        PMCLOG_VERSION_MAJOR);
        if (len < sizeof(struct pmclog_initialize))
            return fail(EBADMSG, "INITIALIZE: length %u < %zu", len,
                        sizeof(struct pmclog_initialize));
        const auto r = load<pmclog_initialize>(p);
        std::memset(&u.pl_i, 0, sizeof(u.pl_i));
        u.pl_i.pl_version = r.pl_version;
        u.pl_i.pl_arch = r.pl_cputype;
        u.pl_i.pl_tsc_freq = r.pl_tsc_freq;
        u.pl_i.pl_ts = ns_to_timespec(r.pl_wallclock);
        u.pl_i.pl_ncpu = r.pl_ncpu;
        u.pl_i.pl_pagesize = r.pl_pagesize;
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_CLOSELOG:
        std::memset(&u.pl_cl, 0, sizeof(u.pl_cl));
        return PMCLOG_OK;
    case PMCLOG_TYPE_DROPNOTIFY: {
        struct pmclog_dropnotify r {};
        std::memcpy(&r, p, std::min<size_t>(len, sizeof(r)));
        std::memset(&u.pl_dn, 0, sizeof(u.pl_dn));
        u.pl_dn.pl_samples = r.pl_samples;
        u.pl_dn.pl_records = r.pl_records;
        u.pl_dn.pl_throttled = r.pl_throttled; // 0 from a log minor 0
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_PMCALLOCATE: {
        const auto r = load<pmclog_pmcallocate>(p);
        std::memset(&u.pl_a, 0, sizeof(u.pl_a));
        if (std::memchr(r.pl_name, 0, sizeof(r.pl_name)) == nullptr)
            return fail(EBADMSG, "PMCALLOCATE: unterminated event name");
        std::memcpy(u.pl_a.pl_name, r.pl_name, sizeof(r.pl_name));
        u.pl_a.pl_evname = u.pl_a.pl_name;
        u.pl_a.pl_rate = r.pl_rate;
        u.pl_a.pl_event = static_cast<uint32_t>(PMC_EV_MAKE(r.pl_class, r.pl_event));
        u.pl_a.pl_flags = r.pl_flags;
        u.pl_a.pl_pmcid = r.pl_pmcid;
        u.pl_a.pl_class = r.pl_class;
        u.pl_a.pl_mode = r.pl_mode;
        u.pl_a.pl_cpu = r.pl_cpu;
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_PMCATTACH: {
        const auto r = load<pmclog_pmcattach>(p);
        std::memset(&u.pl_t, 0, sizeof(u.pl_t));
        u.pl_t.pl_pmcid = r.pl_pmcid;
        u.pl_t.pl_pid = static_cast<pid_t>(r.pl_pid);
        return copy_string(p, len, sizeof(r), u.pl_t.pl_pathname, sizeof(u.pl_t.pl_pathname),
                           "path");
    }
    case PMCLOG_TYPE_PMCDETACH: {
        const auto r = load<pmclog_pmcdetach>(p);
        std::memset(&u.pl_d, 0, sizeof(u.pl_d));
        u.pl_d.pl_pmcid = r.pl_pmcid;
        u.pl_d.pl_pid = static_cast<pid_t>(r.pl_pid);
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_PROCCSW: {
        const auto r = load<pmclog_proccsw>(p);
        std::memset(&u.pl_c, 0, sizeof(u.pl_c));
        u.pl_c.pl_pid = static_cast<pid_t>(r.pl_pid);
        u.pl_c.pl_tid = static_cast<pid_t>(r.pl_tid);
        u.pl_c.pl_pmcid = r.pl_pmcid;
        u.pl_c.pl_value = r.pl_value;
        u.pl_c.pl_cpu = r.pl_cpu;
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_PROCEXEC: {
        const auto r = load<pmclog_procexec>(p);
        std::memset(&u.pl_x, 0, sizeof(u.pl_x));
        u.pl_x.pl_pid = static_cast<pid_t>(r.pl_pid);
        u.pl_x.pl_pmcid = r.pl_pmcid;
        u.pl_x.pl_baseaddr = r.pl_base;
        return copy_string(p, len, sizeof(r), u.pl_x.pl_pathname, sizeof(u.pl_x.pl_pathname),
                           "path");
    }
    case PMCLOG_TYPE_PROCEXIT: {
        const auto r = load<pmclog_procexit>(p);
        std::memset(&u.pl_e, 0, sizeof(u.pl_e));
        u.pl_e.pl_pid = r.pl_pid;
        u.pl_e.pl_pmcid = r.pl_pmcid;
        u.pl_e.pl_value = r.pl_value;
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_PROCFORK: {
        const auto r = load<pmclog_procfork>(p);
        std::memset(&u.pl_f, 0, sizeof(u.pl_f));
        u.pl_f.pl_oldpid = static_cast<pid_t>(r.pl_ppid);
        u.pl_f.pl_newpid = static_cast<pid_t>(r.pl_pid);
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_SYSEXIT: {
        const auto r = load<pmclog_sysexit>(p);
        std::memset(&u.pl_se, 0, sizeof(u.pl_se));
        u.pl_se.pl_pid = static_cast<pid_t>(r.pl_pid);
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_USERDATA: {
        const auto r = load<pmclog_userdata>(p);
        std::memset(&u.pl_u, 0, sizeof(u.pl_u));
        u.pl_u.pl_userdata = r.pl_userdata;
        u.pl_u.pl_pid = static_cast<pid_t>(r.pl_pid);
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_MAP_IN: {
        const auto r = load<pmclog_map_in>(p);
        std::memset(&u.pl_mi, 0, sizeof(u.pl_mi));
        u.pl_mi.pl_pid = static_cast<pid_t>(r.pl_pid);
        u.pl_mi.pl_start = r.pl_start;
        u.pl_mi.pl_end = r.pl_end;
        u.pl_mi.pl_pgoff = r.pl_pgoff;
        return copy_string(p, len, sizeof(r), u.pl_mi.pl_pathname, sizeof(u.pl_mi.pl_pathname),
                           "path");
    }
    case PMCLOG_TYPE_MAP_OUT: {
        const auto r = load<pmclog_map_out>(p);
        std::memset(&u.pl_mo, 0, sizeof(u.pl_mo));
        u.pl_mo.pl_pid = static_cast<pid_t>(r.pl_pid);
        u.pl_mo.pl_start = r.pl_start;
        u.pl_mo.pl_end = r.pl_end;
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_CALLCHAIN: {
        const auto r = load<pmclog_callchain>(p);
        if (r.pl_npc > PMC_CALLCHAIN_DEPTH_MAX)
            return fail(EBADMSG, "CALLCHAIN: %u program counters, more than %d", r.pl_npc,
                        PMC_CALLCHAIN_DEPTH_MAX);
        const size_t want = sizeof(r) + size_t{r.pl_npc} * sizeof(uint64_t);
        if (len != want)
            return fail(EBADMSG, "CALLCHAIN: length %u for %u program counters (%zu)", len,
                        r.pl_npc, want);
        if (r.pl_nkernel > r.pl_npc)
            return fail(EBADMSG, "CALLCHAIN: %u kernel addresses of %u", r.pl_nkernel, r.pl_npc);
        auto &cc = u.pl_cc;
        std::memset(&cc, 0, offsetof(struct pmclog_ev_callchain, pl_pc));
        cc.pl_pid = r.pl_pid;
        cc.pl_tid = r.pl_tid;
        cc.pl_pmcid = r.pl_pmcid;
        cc.pl_npc = r.pl_npc;
        cc.pl_cpu = r.pl_cpu;
        cc.pl_nkernel = r.pl_nkernel;
        cc.pl_flags = r.pl_flags;
        const bool user = r.pl_nkernel == 0 && (r.pl_npc > 0 || (r.pl_flags & PMCLOG_CC_F_USER));
        cc.pl_cpumode = user ? PMCLOG_CPUMODE_USER : PMCLOG_CPUMODE_KERNEL;
        cc.pl_cpuflags =
            PMC_CALLCHAIN_TO_CPUFLAGS(r.pl_cpu & 0xffffu, user ? PMC_CC_F_USERSPACE : 0u);
        std::memcpy(cc.pl_pc, p + sizeof(r), size_t{r.pl_npc} * sizeof(uint64_t));
        std::memset(cc.pl_pc + r.pl_npc, 0,
                    (PMC_CALLCHAIN_DEPTH_MAX - r.pl_npc) * sizeof(uint64_t));
        return PMCLOG_OK;
    }
    case PMCLOG_TYPE_USERSTACK: {
        const auto r = load<pmclog_userstack>(p);
        if (r.pl_copied > r.pl_size)
            return fail(EBADMSG, "USERSTACK: %u bytes copied of %u", r.pl_copied, r.pl_size);
        const size_t want = (sizeof(r) + size_t{r.pl_copied} + 7) & ~size_t{7};
        if (len != want)
            return fail(EBADMSG, "USERSTACK: length %u for %u bytes of stack (%zu)", len,
                        r.pl_copied, want);
        auto &us = u.pl_us;
        std::memset(&us, 0, sizeof(us));
        us.pl_pid = r.pl_pid;
        us.pl_tid = r.pl_tid;
        us.pl_pmcid = r.pl_pmcid;
        us.pl_flags = r.pl_flags;
        us.pl_size = r.pl_size;
        us.pl_copied = r.pl_copied;
        std::memcpy(us.pl_regs, r.pl_regs, sizeof(us.pl_regs));
        us.pl_stack = p + sizeof(r);
        return PMCLOG_OK;
    }
    }
    return fail(EBADMSG, "record type %u", type); // not reached: only known types come here
}

enum pmclog_state pmclog_parser::read(struct pmclog_ev &ev) noexcept {
    for (;;) {
        cur_off_ = base_ + pos_;
        ev.pl_offset = static_cast<off_t>(cur_off_);
        if (failed_) {
            errno = errno_;
            return ev.pl_state = PMCLOG_ERROR;
        }
        const size_t hdr = sizeof(struct pmclog_header);
        auto r = fill(hdr);
        uint32_t type = 0, len = 0;
        if (r == fill_result::ok) {
            const auto h = load<pmclog_header>(buf_.data() + pos_);
            type = h.pl_type;
            len = h.pl_len;
            if (len < hdr || len % 8 != 0 || len > record_max)
                return ev.pl_state = fail(EBADMSG, "%s: bad length %u", type_name(type), len);
            if (type == 0)
                return ev.pl_state = fail(EBADMSG, "record type 0");
            if (count_ == 0 && type != PMCLOG_TYPE_INITIALIZE)
                return ev.pl_state =
                           fail(EBADMSG, "the first record is %s, not INITIALIZE", type_name(type));
            if (len < min_len(type))
                return ev.pl_state =
                           fail(EBADMSG, "%s: length %u < %u", type_name(type), len, min_len(type));
            r = fill(len);
        }
        switch (r) {
        case fill_result::ok:
            break;
        case fill_result::more:
            return ev.pl_state = PMCLOG_REQUIRE_DATA;
        case fill_result::error:
            return ev.pl_state = fail(errno, "read: %s", std::strerror(errno));
        case fill_result::eof: {
            const size_t avail = buf_.size() - pos_;
            if (avail == 0)
                return ev.pl_state = PMCLOG_EOF;
            if (avail < hdr)
                return ev.pl_state =
                           fail(EBADMSG, "truncated log: %zu bytes of a record header", avail);
            return ev.pl_state = fail(EBADMSG, "truncated log: %zu of the %u bytes of a %s record",
                                      avail, len, type_name(type));
        }
        }
        const unsigned char *p = buf_.data() + pos_;
        if (type > PMCLOG_TYPE_MAX) {
            // A later minor version's record: skipped.
            pos_ += len;
            ++count_;
            continue;
        }
        if (decode(p, type, len, ev) != PMCLOG_OK)
            return ev.pl_state = PMCLOG_ERROR;
        pos_ += len;
        ++count_;
        ev.pl_count = static_cast<size_t>(count_);
        ev.pl_ts = ns_to_timespec(load<pmclog_header>(p).pl_time);
        ev.pl_type = static_cast<enum pmclog_type>(type);
        ev.pl_data = const_cast<unsigned char *>(p);
        ev.pl_len = static_cast<int>(len);
        return ev.pl_state = PMCLOG_OK;
    }
}

} // namespace hwpmc::detail
