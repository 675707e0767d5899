// SPDX-License-Identifier: GPL-2.0
#include "events.hpp"

#include <hwpmc/pmc.h>

namespace hwpmc_stat {

const char *scope_word(scope sc) {
    return sc == scope::process ? "process" : "system";
}

bool add_events(options &o, const std::string &arg, scope sc, bool from_e) {
    for (auto &s : hwpmc::split_event_list(arg)) {
        if (s.empty())
            return false;
        event_req e;
        e.spec = hwpmc::resolve_perf_alias(s);
        e.name = s;
        e.sc = sc;
        e.scope_from_a = from_e;
        o.events.push_back(e);
    }
    return true;
}

void add_default_events(options &o) {
    for (auto name : {"CLOCK.PROF", "SCHED.SWITCH", "PAGE_FAULT.ALL", "cycles", "instructions"}) {
        event_req e;
        e.spec = e.name = name;
        e.optional = true;
        e.scope_from_a = true;
        o.events.push_back(e);
    }
}

void describe_events(const hwpmc::device &dev, options &o) {
    for (auto &e : o.events) {
        try {
            const hwpmc::event_info info = dev.parse(e.spec);
            e.role = info.role;
            e.tsc = info.is_tsc();
        } catch (const hwpmc::spec_error &) {
        }
    }
}

std::vector<hwpmc_tools::pmc_group::request> requests_of(const options &o) {
    std::vector<hwpmc_tools::pmc_group::request> reqs;
    for (const auto &e : o.events) {
        hwpmc_tools::pmc_group::request r;
        r.spec = e.spec;
        r.name = e.name;
        r.system = e.sc == scope::system;
        r.flags = e.sc == scope::process && o.inherit ? PMC_F_DESCENDANTS : 0;
        r.tsc = e.tsc;
        reqs.push_back(r);
    }
    return reqs;
}

} // namespace hwpmc_stat
