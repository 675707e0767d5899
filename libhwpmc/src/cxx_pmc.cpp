// SPDX-License-Identifier: BSD-2-Clause
// hwpmc::pmc: an allocated PMC that releases itself.
#include "ops.hpp"
#include "rdpmc.hpp"
#include "readpage.hpp"
#include "session.hpp"

#include <hwpmc/hwpmc.hpp>

#include <cerrno>
#include <unistd.h>
#include <utility>

namespace hwpmc {

namespace {

void check(int rc, const char *what) {
    if (rc < 0)
        throw std::system_error(errno, std::generic_category(), what);
}

} // namespace

pmc::pmc(std::shared_ptr<detail::session> s, pmc_id_t id, enum pmc_class cls,
         enum pmc_mode mode) noexcept
    : s_(std::move(s)), id_(id), class_(cls), mode_(mode) {
    try {
        rdpmc_ = std::make_unique<detail::rdpmc_state>();
        rdpmc_->counting = mode == PMC_MODE_TC;
        rdpmc_->width = s_ ? s_->info.width_of(cls) : 0;
    } catch (...) {
        rdpmc_.reset(); // read() then always uses the ioctl
    }
}

pmc::pmc(pmc &&other) noexcept
    : s_(std::move(other.s_)), id_(std::exchange(other.id_, PMC_ID_INVALID)), class_(other.class_),
      mode_(other.mode_), started_(std::exchange(other.started_, false)),
      rdpmc_(std::move(other.rdpmc_)) {}

pmc &pmc::operator=(pmc &&other) noexcept {
    if (this != &other) {
        reset();
        s_ = std::move(other.s_);
        id_ = std::exchange(other.id_, PMC_ID_INVALID);
        class_ = other.class_;
        mode_ = other.mode_;
        started_ = std::exchange(other.started_, false);
        rdpmc_ = std::move(other.rdpmc_);
    }
    return *this;
}

pmc::~pmc() {
    reset();
}

void pmc::reset() noexcept {
    if (id_ == PMC_ID_INVALID || !s_)
        return;
    const int saved = errno;
    if (started_)
        detail::op_stop(s_->fd, id_);
    detail::op_release(s_->fd, id_);
    errno = saved;
    id_ = PMC_ID_INVALID;
    started_ = false;
    s_.reset();
    rdpmc_.reset();
}

int pmc::live_fd() const {
    if (id_ == PMC_ID_INVALID || !s_)
        throw std::system_error(EBADF, std::generic_category(), "released PMC");
    return s_->fd;
}

void pmc::attach(pid_t pid) {
    check(detail::op_attach(live_fd(), id_, pid), "PMCATTACH");
}

void pmc::detach(pid_t pid) {
    check(detail::op_detach(live_fd(), id_, pid), "PMCDETACH");
    // Detached from its owner: the kernel revoked user-mode RDPMC.
    if (rdpmc_ && (pid == static_cast<pid_t>(PMC_PID_SELF) || pid == ::getpid()))
        rdpmc_->revoke();
}

void pmc::start() {
    check(detail::op_start(live_fd(), id_), "PMCSTART");
    started_ = true;
    if (rdpmc_)
        rdpmc_->started();
}

void pmc::stop() {
    check(detail::op_stop(live_fd(), id_), "PMCSTOP");
    started_ = false;
    if (rdpmc_)
        rdpmc_->stopped();
}

uint64_t pmc::read() const {
    const int fd = live_fd();
    // The read page where the PMC has a slot that answers now (as pmc_read()).
    if (rdpmc_ && rdpmc_->rgen != 0) {
        uint64_t v = 0;
        const hwpmc_readpage *page = s_->live_page();
        if (page != nullptr && detail::readpage_read(page, rdpmc_->rslot, rdpmc_->rgen, &v))
            return v;
    }
    if (rdpmc_ && rdpmc_->usable())
        return rdpmc_->extend(detail::rdpmc_reader()(rdpmc_->index));
    pmc_value_t v = 0;
    check(detail::op_rw(fd, id_, PMC_F_OLDVALUE, &v), "PMCRW");
    if (rdpmc_)
        rdpmc_->read_by_ioctl(v);
    return v;
}

void pmc::write(uint64_t value) {
    check(detail::op_rw(live_fd(), id_, PMC_F_NEWVALUE, &value), "PMCRW");
    if (rdpmc_)
        rdpmc_->forget();
}

uint64_t pmc::exchange(uint64_t value) {
    check(detail::op_rw(live_fd(), id_, PMC_F_NEWVALUE | PMC_F_OLDVALUE, &value), "PMCRW");
    if (rdpmc_)
        rdpmc_->forget();
    return value;
}

void pmc::set_count(uint64_t count) {
    check(detail::op_setcount(live_fd(), id_, count), "PMCSETCOUNT");
    if (rdpmc_)
        rdpmc_->forget();
}

uint32_t pmc::capabilities() const {
    uint32_t caps = 0;
    check(detail::op_getcaps(live_fd(), id_, &caps), "GETCAPS");
    return caps;
}

uint32_t pmc::width() const {
    live_fd();
    return s_->info.width_of(class_);
}

uint32_t pmc::msr() const {
    uint32_t msr = 0;
    check(detail::op_getmsr(live_fd(), id_, &msr), "PMCGETMSR");
    if (rdpmc_)
        rdpmc_->grant(msr);
    return msr;
}

void pmc::release() {
    if (id_ == PMC_ID_INVALID)
        return;
    check(detail::op_release(live_fd(), id_), "PMCRELEASE");
    id_ = PMC_ID_INVALID;
    started_ = false;
    s_.reset();
    rdpmc_.reset();
}

} // namespace hwpmc
