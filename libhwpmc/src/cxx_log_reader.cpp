// SPDX-License-Identifier: BSD-2-Clause
// hwpmc::log_reader: the C++ face of the pmclog decoder.
#include "pmclog_parser.hpp"

#include <hwpmc/hwpmc.hpp>

#include <cerrno>
#include <cstring>
#include <string>

namespace hwpmc {

struct log_reader::impl {
    explicit impl(int fd) : parser(fd) { std::memset(&ev, 0, sizeof(ev)); }
    detail::pmclog_parser parser;
    pmclog_ev ev;
    enum pmclog_state state = PMCLOG_REQUIRE_DATA;
};

namespace {

[[noreturn]] void throw_errno(int err, const std::string &what) {
    throw std::system_error(err, std::generic_category(), what);
}

} // namespace

log_reader::log_reader() : p_(std::make_unique<impl>(PMCLOG_FD_NONE)) {}

log_reader::log_reader(int fd) {
    if (fd < 0)
        throw_errno(EBADF, "pmclog: no descriptor");
    p_ = std::make_unique<impl>(fd);
}

log_reader::log_reader(std::span<const std::byte> log) : log_reader() {
    feed(log);
    finish();
}

log_reader::log_reader(log_reader &&) noexcept = default;
log_reader &log_reader::operator=(log_reader &&) noexcept = default;
log_reader::~log_reader() = default;

void log_reader::feed(std::span<const std::byte> data) {
    if (!p_)
        throw_errno(EBADF, "moved-from hwpmc::log_reader");
    if (p_->parser.feed(data.data(), data.size()) < 0)
        throw_errno(errno, "pmclog: feed");
}

void log_reader::finish() {
    if (!p_)
        throw_errno(EBADF, "moved-from hwpmc::log_reader");
    if (p_->parser.end_input() < 0)
        throw_errno(errno, "pmclog: finish");
}

const pmclog_ev *log_reader::next() {
    if (!p_)
        throw_errno(EBADF, "moved-from hwpmc::log_reader");
    p_->state = p_->parser.read(p_->ev);
    switch (p_->state) {
    case PMCLOG_OK:
        return &p_->ev;
    case PMCLOG_ERROR: {
        const int err = errno;
        throw_errno(err, "pmclog: " + p_->parser.error());
    }
    default:
        return nullptr;
    }
}

enum pmclog_state log_reader::state() const noexcept {
    return p_ ? p_->state : PMCLOG_ERROR;
}

} // namespace hwpmc
