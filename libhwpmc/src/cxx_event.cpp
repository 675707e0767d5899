// SPDX-License-Identifier: BSD-2-Clause
// hwpmc::device::parse() and the event-list helpers of the C++ API: what
// the specifier parser decided, handed to the tools so that none of them
// matches event names itself.
#include "session.hpp"
#include "spec/aliases.hpp"
#include "spec/event_spec.hpp"
#include "spec/soft_events.hpp"
#include "spec/text.hpp"

#include <hwpmc/hwpmc.hpp>

#include <array>

namespace hwpmc {

namespace {

using detail::iequals;
using detail::trim;

struct perf_name {
    std::string_view perf, soft;
};
constexpr std::array<perf_name, 7> perf_names = {{
    {"task-clock", "SOFT-CLOCK.PROF"},
    {"context-switches", "SOFT-SCHED.SWITCH"},
    {"cs", "SOFT-SCHED.SWITCH"},
    {"cpu-migrations", "SOFT-SCHED.MIGRATE"},
    {"migrations", "SOFT-SCHED.MIGRATE"},
    {"page-faults", "SOFT-PAGE_FAULT.ALL"},
    {"faults", "SOFT-PAGE_FAULT.ALL"},
}};

// The soft specifier of a perf software name, or empty.
std::string_view perf_soft_name(std::string_view head) {
    for (const auto &p : perf_names)
        if (iequals(head, p.perf))
            return p.soft;
    return {};
}

bool is_qualifier(std::string_view tok) {
    if (tok.find('=') != std::string_view::npos)
        return true;
    for (std::string_view q : {"usr", "os", "edge", "inv", "anythread"})
        if (iequals(tok, q))
            return true;
    return false;
}

event_role role_of(const detail::event_encoding &e) {
    namespace sel = detail::evtsel;
    switch (e.cls) {
    case PMC_CLASS_SOFT:
        return e.event == PMC_SOFT_CLOCK_PROF ? event_role::clock_prof : event_role::other;
    case PMC_CLASS_IAF:
        return e.event == detail::iaf_instr_retired_any       ? event_role::instructions
               : e.event == detail::iaf_cpu_clk_unhalted_core ? event_role::cycles
                                                              : event_role::other;
    case PMC_CLASS_IAP:
    case PMC_CLASS_K8: {
        // With edge, inv or a counter mask it counts cycles or occurrences
        // of a condition, not the events themselves.
        if (e.config & (sel::edge | sel::inv | 0xffull << sel::cmask_shift))
            return event_role::other;
        const uint64_t umask = (e.config >> sel::umask_shift) & 0xff;
        if (e.event == 0xc0 && umask == 0)
            return event_role::instructions;
        if (e.cls == PMC_CLASS_IAP && e.event == 0x3c && umask == 0)
            return event_role::cycles;
        if (e.cls == PMC_CLASS_K8 && e.event == 0x76)
            return event_role::cycles;
        return event_role::other;
    }
    case PMC_CLASS_TSC:
        break;
    }
    return event_role::other;
}

event_info describe(std::string_view spec, const detail::spec_context &ctx) {
    event_info info;
    info.spec = resolve_perf_alias(spec);
    const detail::spec_result r = detail::parse_event_spec(info.spec, ctx);
    if (!r.encoding)
        throw spec_error(r.error);
    const auto tokens = detail::split(spec, ',');
    std::string_view head = trim(tokens.front());
    if (!perf_soft_name(head).empty()) {
        info.perf_alias = std::string(head);
    } else if (const auto colon = head.rfind(':');
               colon != std::string_view::npos && detail::is_alias(trim(head.substr(0, colon)))) {
        // perf's modifiers on an alias ("cycles:u"), as the parser takes
        // them; libpfm4 names keep their own.
        for (char c : head.substr(colon + 1))
            info.qualifiers.emplace_back(c == 'u' || c == 'U' ? "usr" : "os");
        head = trim(head.substr(0, colon));
    }
    info.name = std::string(head);
    for (std::size_t i = 1; i < tokens.size(); ++i)
        info.qualifiers.emplace_back(trim(tokens[i]));
    info.cls = r.encoding->cls;
    info.event = r.encoding->event;
    info.config = r.encoding->config;
    info.caps = r.encoding->caps;
    info.role = role_of(*r.encoding);
    return info;
}

} // namespace

std::vector<std::string> split_event_list(std::string_view list) {
    std::vector<std::string> out;
    for (std::string_view tok : detail::split(list, ',')) {
        if (!out.empty() && is_qualifier(tok))
            out.back() += "," + std::string(tok);
        else
            out.emplace_back(tok);
    }
    // split() of "a," ends in an empty token already; of "" it is {""}.
    if (list.empty())
        out.clear();
    return out;
}

std::string resolve_perf_alias(std::string_view spec) {
    const std::size_t comma = spec.find(',');
    const std::string_view soft = perf_soft_name(trim(spec.substr(0, comma)));
    if (soft.empty())
        return std::string(spec);
    return std::string(soft) +
           std::string(comma == std::string_view::npos ? "" : spec.substr(comma));
}

event_info device::parse(std::string_view spec) const {
    return describe(spec, live().info.context());
}

event_info parse_event(std::string_view spec) {
    detail::spec_context ctx;
    ctx.soft = detail::default_soft_events();
    return describe(spec, ctx);
}

} // namespace hwpmc
