// SPDX-License-Identifier: GPL-2.0
#include "log_scan.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace hwpmc_tools {

log_scan::log_scan(int fd, size_t window)
    : fd_(fd), window_(std::max<size_t>(window, 2 * record_max)) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        failed_ = true;
    else
        size_ = static_cast<uint64_t>(st.st_size);
}

log_scan::~log_scan() {
    if (base_)
        munmap(base_, len_);
}

// The window from the page holding `off` on.
bool log_scan::map(uint64_t off) {
    if (base_)
        munmap(base_, len_);
    base_ = nullptr;
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    at_ = off / page * page;
    len_ = static_cast<size_t>(std::min<uint64_t>(window_, size_ - at_));
    void *p =
        mmap(nullptr, len_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(at_));
    if (p == MAP_FAILED)
        return false;
    base_ = static_cast<unsigned char *>(p);
    madvise(base_, len_, MADV_SEQUENTIAL);
    return true;
}

bool log_scan::next_slow(record *r) {
    if (failed_)
        return false;
    constexpr uint32_t hdr = sizeof(struct pmclog_header);
    if (pos_ == size_) {
        clean_ = true;
        return false;
    }
    if (size_ - pos_ < hdr)
        return false;
    if (!base_ || pos_ + hdr > at_ + len_) {
        if (!map(pos_)) {
            failed_ = true;
            return false;
        }
    }
    const auto h = load<struct pmclog_header>(base_ + (pos_ - at_));
    if (h.pl_len < hdr || h.pl_len % 8 != 0 || h.pl_len > record_max || h.pl_type == 0 ||
        (count_ == 0 && h.pl_type != PMCLOG_TYPE_INITIALIZE) || size_ - pos_ < h.pl_len) {
        failed_ = true;
        return false;
    }
    if (pos_ + h.pl_len > at_ + len_ && !map(pos_)) {
        failed_ = true;
        return false;
    }
    r->type = h.pl_type;
    r->len = h.pl_len;
    r->time = h.pl_time;
    r->p = base_ + (pos_ - at_);
    pos_ += h.pl_len;
    count_++;
    return true;
}

bool log_scan::callchain_ok(const record &r) {
    if (r.len < sizeof(struct pmclog_callchain))
        return false;
    const auto c = load<struct pmclog_callchain>(r.p);
    return c.pl_npc <= PMC_CALLCHAIN_DEPTH_MAX &&
           r.len == sizeof(c) + size_t{c.pl_npc} * sizeof(uint64_t) && c.pl_nkernel <= c.pl_npc;
}

bool log_scan::userstack_ok(const record &r) {
    if (r.len < sizeof(struct pmclog_userstack))
        return false;
    const auto size = load<uint32_t>(r.p + offsetof(struct pmclog_userstack, pl_size));
    const auto copied = load<uint32_t>(r.p + offsetof(struct pmclog_userstack, pl_copied));
    return copied <= size &&
           r.len == ((sizeof(struct pmclog_userstack) + size_t{copied} + 7) & ~size_t{7});
}

} // namespace hwpmc_tools
