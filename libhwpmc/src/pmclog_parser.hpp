// SPDX-License-Identifier: BSD-2-Clause
// The log decoder behind pmclog(3) and hwpmc::log_reader: bytes in (fed,
// or read from a descriptor), validated records out as struct pmclog_ev.
// Self-contained (the fuzzer builds it alone).
#pragma once

#include <hwpmc/pmclog.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hwpmc::detail {

class pmclog_parser {
public:
    // The longest record accepted.
    static constexpr uint32_t record_max = 1u << 20;

    // fd >= 0: read(2) it (never closed here); PMCLOG_FD_NONE: fed.
    explicit pmclog_parser(int fd) noexcept : fd_(fd) {}

    // Append data (copied); 0, or -1 with errno (EINVAL: a descriptor
    // reader, or the input already ended; ENOMEM).
    int feed(const void *data, size_t len) noexcept;
    // No more data will be fed.  0, or -1 with errno EINVAL.
    int end_input() noexcept;

    // Decode the next record into ev, set ev.pl_state and return it; on
    // PMCLOG_ERROR errno is set (and stays so on later calls).
    enum pmclog_state read(struct pmclog_ev &ev) noexcept;

    // Why the parser failed ("" while it has not).
    const std::string &error() const noexcept { return msg_; }
    bool fed() const noexcept { return fd_ < 0; }

private:
    enum class fill_result {
        ok,
        eof,
        more,
        error
    };

    fill_result fill(size_t want) noexcept;
    void compact() noexcept;
    enum pmclog_state fail(int err, const char *fmt, ...) noexcept
        __attribute__((format(printf, 3, 4)));
    enum pmclog_state decode(const unsigned char *p, uint32_t type, uint32_t len,
                             struct pmclog_ev &ev) noexcept;
    enum pmclog_state copy_string(const unsigned char *p, uint32_t len, size_t fixed, char *out,
                                  size_t outsz, const char *what) noexcept;

    int fd_;
    bool ended_ = false;  // fed: end_input() was called
    bool failed_ = false; // sticky PMCLOG_ERROR
    int errno_ = 0;       // its errno
    std::string msg_;     // and its message
    std::vector<unsigned char> buf_;
    size_t pos_ = 0;       // first unconsumed byte of buf_
    uint64_t base_ = 0;    // stream offset of buf_[0]
    uint64_t count_ = 0;   // records consumed
    uint64_t cur_off_ = 0; // offset of the record being decoded
};

} // namespace hwpmc::detail
