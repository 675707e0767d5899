// SPDX-License-Identifier: GPL-2.0
#include "side_counts.hpp"

#include "printer.hpp"

namespace hwpmc_stat {

bool side_counts::allocate(hwpmc::device &dev, const std::vector<std::string> &specs,
                           bool inherit) {
    o_.inherit = inherit;
    for (const auto &s : specs)
        if (!add_events(o_, s, scope::process, false)) {
            std::fprintf(stderr, "%s: --count-event: an empty event in '%s'\n", prog_, s.c_str());
            return false;
        }
    describe_events(dev, o_);
    reqs_ = requests_of(o_);
    for (size_t i = 0; i < reqs_.size(); i++) {
        hwpmc_tools::pmc_group::failure f;
        if (!group_.allocate(dev, i, reqs_[i], {}, &f)) {
            group_.explain_allocation(reqs_[i], f);
            return false;
        }
    }
    return true;
}

bool side_counts::start(const std::vector<pid_t> &targets) {
    for (pid_t p : targets)
        if (!group_.attach(p, reqs_))
            return false;
    return group_.start(reqs_);
}

bool side_counts::print(FILE *out, const std::string &what, double elapsed) {
    std::vector<uint64_t> v;
    if (!group_.read(reqs_, &v))
        return false;
    std::vector<slot> slots;
    for (const auto &m : group_.members())
        slots.push_back({m.req, m.cpu});
    printer pr(out, o_);
    pr.header(what);
    pr.counters(make_rows(o_, slots, {v}), elapsed);
    std::fprintf(out, "\n");
    std::fflush(out);
    return true;
}

} // namespace hwpmc_stat
