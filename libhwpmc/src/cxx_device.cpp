// SPDX-License-Identifier: BSD-2-Clause
// hwpmc::device: the C++ API's owner of a /dev/hwpmc descriptor.
#include "handshake.hpp"
#include "ops.hpp"
#include "rdpmc.hpp"
#include "session.hpp"
#include "sys.hpp"

#include <hwpmc/hwpmc.hpp>

#include <cerrno>

namespace hwpmc {

namespace {

[[noreturn]] void throw_errno(const char *what) {
    throw std::system_error(errno, std::generic_category(), what);
}

void check(int rc, const char *what) {
    if (rc < 0)
        throw_errno(what);
}

} // namespace

spec_error::spec_error(const std::string &message)
    : std::system_error(EINVAL, std::generic_category(), message) {}

device device::open() {
    return open(detail::device_path());
}

device device::open(const std::string &path) {
    auto s = std::make_shared<detail::session>();
    s->fd = detail::open_device(path.c_str());
    if (s->fd < 0)
        throw std::system_error(errno, std::generic_category(), "open " + path);
    struct pmc_cpuinfo ci {};
    check(detail::check_version(s->fd, &s->module_version), "GETMODULEVERSION");
    check(detail::get_cpuinfo(s->fd, &ci), "GETCPUINFO");
    check(detail::load_session_info(s->fd, ci, &s->info), "GETDYNEVENTINFO");
    for (const auto &e : s->info.soft)
        s->soft_names.push_back({e.name, e.code});
    // The read page (none before module 1.6): pmc::read() without a system call.
    s->page_forkgen = detail::fork_generation();
    s->page = detail::readpage_mapping().map(s->fd);
    return device(std::move(s));
}

device::device(std::shared_ptr<detail::session> s) noexcept : s_(std::move(s)) {}
device::device(device &&) noexcept = default;
device &device::operator=(device &&) noexcept = default;
device::~device() = default;

detail::session &device::live() const {
    if (!s_)
        throw std::system_error(EBADF, std::generic_category(), "moved-from hwpmc::device");
    return *s_;
}

int device::fd() const noexcept {
    return s_ ? s_->fd : -1;
}
uint32_t device::module_version() const noexcept {
    return s_ ? s_->module_version : 0;
}
const struct pmc_cpuinfo &device::cpuinfo() const {
    return live().info.cpuinfo;
}

const std::vector<soft_event_name> &device::soft_events() const {
    return live().soft_names;
}

pmc device::allocate(std::string_view spec, enum pmc_mode mode, uint32_t flags, int cpu,
                     uint64_t count) {
    return allocate(spec, mode, flags, cpu, count, 0);
}

pmc device::allocate(std::string_view spec, enum pmc_mode mode, uint32_t flags, int cpu,
                     uint64_t count, uint32_t ustack_size) {
    const std::string text(spec);
    std::string msg;
    detail::allocation a;
    if (detail::allocate(live().fd, live().info, text.c_str(), mode, flags, cpu, count, &a, &msg,
                         ustack_size) < 0) {
        if (!msg.empty())
            throw spec_error(msg);
        throw_errno("PMCALLOCATE");
    }
    pmc p(s_, a.id, a.cls, mode);
    if (p.rdpmc_ && live().page != nullptr &&
        ((mode == PMC_MODE_TC && a.cls == PMC_CLASS_SOFT) || a.cls == PMC_CLASS_TSC) &&
        !detail::readpage_slot(live().fd, a.id, &p.rdpmc_->rslot, &p.rdpmc_->rgen))
        p.rdpmc_->rgen = 0;
    return p;
}

std::vector<pmc_info> device::pmcinfo(int cpu) const {
    std::vector<pmc_info> rows;
    check(detail::op_pmcinfo(live().fd, cpu, &rows), "GETPMCINFO");
    return rows;
}

pmc_op_getdriverstats device::driver_stats() const {
    pmc_op_getdriverstats st;
    check(detail::op_driverstats(live().fd, &st), "GETDRIVERSTATS");
    return st;
}

void device::enable(int cpu, int row) {
    check(detail::op_admin(live().fd, cpu, row, PMC_STATE_FREE), "PMCADMIN");
}

void device::disable(int cpu, int row) {
    check(detail::op_admin(live().fd, cpu, row, PMC_STATE_DISABLED), "PMCADMIN");
}

void device::configure_log(int logfd) {
    check(detail::op_configurelog(live().fd, logfd), "CONFIGURELOG");
}

void device::flush_log() {
    check(detail::op_flushlog(live().fd), "FLUSHLOG");
}

void device::close_log() {
    check(detail::op_closelog(live().fd), "CLOSELOG");
}

void device::write_log(uint32_t userdata) {
    check(detail::op_writelog(live().fd, userdata), "WRITELOG");
}

} // namespace hwpmc
