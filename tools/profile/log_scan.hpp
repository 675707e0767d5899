// SPDX-License-Identifier: GPL-2.0
// A log's records as they lie in the file, without decoding them: the
// samples (CALLCHAIN, USERSTACK) of a large log are read in place, a
// window of the file mapped at a time (so that the mapped log does not
// count in the reader's memory), and only the few other records go
// through libhwpmc's decoder (hwpmc::log_reader).
//
// log_scan takes no record it does not know to be whole and well formed
// by the checks libhwpmc makes: faster reading never reports differently.
// Where it meets anything else (a truncated or malformed record, a file
// it cannot map) it says so, and the caller reads the log the careful way
// (log_reader), whose errors and their messages are the ones reported.
#pragma once

#include <hwpmc/pmclog.h>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace hwpmc_tools {

class log_scan {
public:
    // `fd`, a regular file, from its start.
    explicit log_scan(int fd, size_t window = 4u << 20);
    ~log_scan();
    log_scan(const log_scan &) = delete;
    log_scan &operator=(const log_scan &) = delete;

    // A record: its header's fields and its bytes (header included),
    // valid until the next call.
    struct record {
        uint32_t type, len;
        uint64_t time;
        const unsigned char *p;
    };
    // The next record whose header is sane (length a multiple of 8, at
    // least a header, at most the longest libhwpmc takes; type not 0;
    // INITIALIZE first); false at the end of the file, or where it cannot
    // go on: then clean() says whether the file ended at a record's end.
    bool next(record *r) {
        // The common case inline: the whole record in the window.
        if (base_ && count_ && size_ - pos_ >= sizeof(struct pmclog_header) &&
            pos_ + sizeof(struct pmclog_header) <= at_ + len_) {
            const unsigned char *p = base_ + (pos_ - at_);
            struct pmclog_header h;
            __builtin_memcpy(&h, p, sizeof(h));
            if (h.pl_len >= sizeof(h) && h.pl_len % 8 == 0 && h.pl_len <= record_max &&
                h.pl_type != 0 && pos_ + h.pl_len <= at_ + len_ && size_ - pos_ >= h.pl_len) {
                r->type = h.pl_type;
                r->len = h.pl_len;
                r->time = h.pl_time;
                r->p = p;
                pos_ += h.pl_len;
                count_++;
                return true;
            }
        }
        return next_slow(r);
    }
    bool clean() const noexcept { return clean_; }

    // A field of a record (the data need not be aligned).
    template <class T>
    static T load(const unsigned char *p) noexcept {
        T v;
        __builtin_memcpy(&v, p, sizeof(v));
        return v;
    }

    // The checks libhwpmc makes of a sample's record, beyond its header.
    static bool callchain_ok(const record &r);
    static bool userstack_ok(const record &r);

    // libhwpmc's limit (pmclog_parser::record_max).
    static constexpr uint32_t record_max = 1u << 20;

private:
    bool next_slow(record *r);
    bool map(uint64_t off);

    int fd_;
    size_t window_;
    uint64_t size_ = 0, pos_ = 0, count_ = 0;
    unsigned char *base_ = nullptr; // the mapped window: file offsets [at_, at_ + len_)
    uint64_t at_ = 0;
    size_t len_ = 0;
    bool clean_ = false, failed_ = false;
};

} // namespace hwpmc_tools
