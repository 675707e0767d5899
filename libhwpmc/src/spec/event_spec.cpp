// SPDX-License-Identifier: BSD-2-Clause
// The event specifier grammar:
//
//   spec       := head ("," qualifier)*
//   head       := "tsc" | ["SOFT-"] soft-name | "IAF-" fixed-name
//               | alias [":" ("u" | "k")+] | libpfm4-name | raw-qualifier
//   qualifier  := "usr" | "os" | "edge" | "inv" | "anythread"
//               | ("cmask" | "umask" | "event") "=" number
//
// Names and qualifier keys are case-insensitive.  A specifier whose first
// token is "event=N" (or "umask="/"cmask=") is raw: it names the hardware
// event by its code.  An alias takes perf's modifiers too: "cycles:u" is
// "cycles,usr", ":k" is os, ":uk" both (libpfm4 names have their own ":u").
#include "event_spec.hpp"

#include "aliases.hpp"
#include "nearest.hpp"
#include "text.hpp"

#include <array>

namespace hwpmc::detail {

namespace {

constexpr std::string_view soft_prefix = "SOFT-";
constexpr std::string_view iaf_prefix = "IAF-";

constexpr std::array<std::string_view, 4> iaf_names = {"INSTR_RETIRED_ANY", "CPU_CLK_UNHALTED_CORE",
                                                       "CPU_CLK_UNHALTED_REF", "TOPDOWN_SLOTS"};

constexpr std::array<std::string_view, 8> qualifier_names = {
    "usr", "os", "edge", "inv", "anythread", "cmask=", "umask=", "event="};

bool is_intel(alias_set s) {
    return s == alias_set::intel_arch;
}
bool is_amd(alias_set s) {
    return s == alias_set::amd_legacy || s == alias_set::amd_zen || s == alias_set::amd_zen4;
}

struct qualifiers {
    bool usr = false, os = false, edge = false, inv = false, anythread = false;
    std::optional<uint64_t> cmask, umask, event;
    bool any() const { return usr || os || edge || inv || anythread || cmask || umask || event; }
};

enum class head_kind {
    tsc,
    soft,
    iaf,
    hardware
};

struct head {
    head_kind kind = head_kind::hardware;
    uint32_t code = 0;   // tsc / soft / iaf
    uint64_t evtsel = 0; // hardware
    uint64_t extra = 0;
    bool from_pfm = false; // usr/os bits come from libpfm4's encoding
};

class parser {
public:
    parser(std::string_view spec, const spec_context &ctx) : spec_(spec), ctx_(ctx) {}

    spec_result run();

private:
    std::string_view spec_;
    const spec_context &ctx_;
    std::string error_;

    bool fail(std::string msg) {
        error_ = std::move(msg) + " in event specifier \"" + std::string(spec_) + "\"";
        return false;
    }
    bool fail_nearest(std::string msg, std::string_view word,
                      const std::vector<std::string> &candidates) {
        const auto near = nearest(word, candidates);
        if (!near.empty())
            msg += " (nearest valid: " + join(near) + ")";
        return fail(std::move(msg));
    }

    bool hardware_pmu() const { return ctx_.aliases != alias_set::none; }
    std::vector<std::string> name_candidates(std::string_view word) const;

    bool resolve_head(std::string_view token, head *h);
    bool resolve_soft(std::string_view name, bool prefixed, head *h);
    bool resolve_iaf(std::string_view name, head *h);
    bool resolve_pfm(std::string_view token, head *h);
    bool parse_qualifier(std::string_view token, qualifiers *q);
    bool check_qualifiers(const head &h, const qualifiers &q, std::string_view name);
    bool encode_hardware(const head &h, const qualifiers &q, event_encoding *out);
    bool encode_iaf(uint32_t index, const qualifiers &q, event_encoding *out);
};

std::vector<std::string> parser::name_candidates(std::string_view word) const {
    std::vector<std::string> c;
    const bool soft_only = istarts_with(word, soft_prefix);
    for (const auto &e : ctx_.soft)
        c.push_back(soft_only ? std::string(soft_prefix) + e.name : e.name);
    if (soft_only)
        return c;
    c.emplace_back("tsc");
    if (hardware_pmu())
        for (auto a : alias_names())
            c.emplace_back(a);
    if (is_intel(ctx_.aliases))
        for (auto n : iaf_names)
            c.push_back(std::string(iaf_prefix) + std::string(n));
    if (ctx_.pfm != nullptr && hardware_pmu())
        for (auto &n : ctx_.pfm->names())
            c.push_back(std::move(n));
    return c;
}

bool parser::resolve_soft(std::string_view name, bool prefixed, head *h) {
    for (const auto &e : ctx_.soft) {
        if (iequals(name, e.name)) {
            h->kind = head_kind::soft;
            h->code = e.code;
            return true;
        }
    }
    if (prefixed) {
        std::string word = std::string(soft_prefix) + std::string(name);
        return fail_nearest("unknown SOFT event \"" + word + "\"", word, name_candidates(word));
    }
    return false; // not a SOFT name; try the others
}

bool parser::resolve_iaf(std::string_view name, head *h) {
    for (std::size_t i = 0; i < iaf_names.size(); ++i) {
        if (iequals(name, iaf_names[i])) {
            if (!is_intel(ctx_.aliases))
                return fail("fixed-function counter \"IAF-" + std::string(name) +
                            "\" needs an Intel CPU");
            h->kind = head_kind::iaf;
            h->code = static_cast<uint32_t>(i);
            return true;
        }
    }
    std::vector<std::string> c;
    for (auto n : iaf_names)
        c.push_back(std::string(iaf_prefix) + std::string(n));
    const std::string word = std::string(iaf_prefix) + std::string(name);
    return fail_nearest("unknown fixed-function event \"" + word + "\"", word, c);
}

bool parser::resolve_pfm(std::string_view token, head *h) {
    std::string why;
    const auto ev = ctx_.pfm->lookup(std::string(token), &why);
    if (!ev) {
        if (why.empty() || why == "event not found")
            return fail_nearest("unknown event \"" + std::string(token) + "\"", token,
                                name_candidates(token));
        return fail("libpfm4 cannot encode \"" + std::string(token) + "\": " + why);
    }
    if (ev->amd != is_amd(ctx_.aliases))
        return fail("\"" + std::string(token) + "\" is an event of another vendor's CPU");
    h->kind = head_kind::hardware;
    h->evtsel = ev->evtsel;
    h->extra = ev->extra;
    h->from_pfm = true;
    return true;
}

bool parser::resolve_head(std::string_view token, head *h) {
    if (iequals(token, "tsc") || iequals(token, "tsc-tsc")) {
        h->kind = head_kind::tsc;
        return true;
    }
    if (istarts_with(token, soft_prefix))
        return resolve_soft(token.substr(soft_prefix.size()), true, h);
    if (istarts_with(token, iaf_prefix))
        return resolve_iaf(token.substr(iaf_prefix.size()), h);
    if (resolve_soft(token, false, h))
        return true;
    if (is_alias(token)) {
        if (!hardware_pmu())
            return fail("\"" + std::string(token) +
                        "\" needs a hardware PMU, and this CPU has none (try SOFT-CLOCK.PROF)");
        const auto code = alias_lookup(ctx_.aliases, token);
        if (!code)
            return fail("this CPU has no \"" + std::string(token) + "\" event");
        h->kind = head_kind::hardware;
        h->evtsel = (code->event & 0xffu) | uint64_t{code->umask} << evtsel::umask_shift |
                    uint64_t{(code->event >> 8) & 0xfu} << 32;
        return true;
    }
    if (ctx_.pfm != nullptr && hardware_pmu())
        return resolve_pfm(token, h);
    return fail_nearest("unknown event \"" + std::string(token) + "\"", token,
                        name_candidates(token));
}

bool parser::parse_qualifier(std::string_view token, qualifiers *q) {
    const auto eq = token.find('=');
    const std::string_view key = trim(token.substr(0, eq));
    if (eq == std::string_view::npos) {
        bool *flag = iequals(key, "usr")         ? &q->usr
                     : iequals(key, "os")        ? &q->os
                     : iequals(key, "edge")      ? &q->edge
                     : iequals(key, "inv")       ? &q->inv
                     : iequals(key, "anythread") ? &q->anythread
                                                 : nullptr;
        if (flag != nullptr) {
            *flag = true;
            return true;
        }
        if (iequals(key, "cmask") || iequals(key, "umask") || iequals(key, "event"))
            return fail("qualifier \"" + std::string(key) + "\" needs a value (" +
                        std::string(key) + "=N)");
    } else {
        const std::string_view value = trim(token.substr(eq + 1));
        const bool amd = is_amd(ctx_.aliases);
        std::optional<uint64_t> *slot = iequals(key, "cmask")   ? &q->cmask
                                        : iequals(key, "umask") ? &q->umask
                                        : iequals(key, "event") ? &q->event
                                                                : nullptr;
        if (slot != nullptr) {
            const uint64_t max = (slot == &q->event && amd) ? 0xfff : 0xff;
            *slot = parse_number(value, max);
            if (!*slot)
                return fail("bad value \"" + std::string(value) + "\" for " + std::string(key) +
                            " (a number from 0 to " + (max == 0xff ? "0xff" : "0xfff") + ")");
            return true;
        }
        if (iequals(key, "usr") || iequals(key, "os") || iequals(key, "edge") ||
            iequals(key, "inv") || iequals(key, "anythread"))
            return fail("qualifier \"" + std::string(key) + "\" takes no value");
    }
    std::vector<std::string> c(qualifier_names.begin(), qualifier_names.end());
    return fail_nearest("unknown qualifier \"" + std::string(token) + "\"", key, c);
}

bool parser::check_qualifiers(const head &h, const qualifiers &q, std::string_view name) {
    const std::string n(name);
    switch (h.kind) {
    case head_kind::tsc:
    case head_kind::soft:
        if (q.any())
            return fail("event \"" + n + "\" takes no qualifiers");
        return true;
    case head_kind::iaf:
        if (q.edge || q.inv || q.cmask || q.umask || q.event)
            return fail("fixed-function event \"" + n +
                        "\" takes only the usr, os and anythread qualifiers");
        return true;
    case head_kind::hardware:
        if (q.anythread && !is_intel(ctx_.aliases))
            return fail("qualifier \"anythread\" needs an Intel CPU");
        return true;
    }
    return true;
}

bool parser::encode_iaf(uint32_t index, const qualifiers &q, event_encoding *out) {
    out->cls = PMC_CLASS_IAF;
    out->event = index;
    const bool both = !q.usr && !q.os;
    out->config = (both || q.usr ? evtsel::usr : 0) | (both || q.os ? evtsel::os : 0) |
                  (q.anythread ? evtsel::anythread : 0);
    out->caps = (out->config & evtsel::usr ? PMC_CAP_USER : 0u) |
                (out->config & evtsel::os ? PMC_CAP_SYSTEM : 0u) |
                (q.anythread ? PMC_CAP_ANYTHREAD : 0u);
    return true;
}

bool parser::encode_hardware(const head &h, const qualifiers &q, event_encoding *out) {
    uint64_t sel = h.evtsel;
    if (q.umask)
        sel = (sel & ~(0xffull << evtsel::umask_shift)) | *q.umask << evtsel::umask_shift;
    if (q.usr || q.os)
        sel = (sel & ~(evtsel::usr | evtsel::os)) | (q.usr ? evtsel::usr : 0) |
              (q.os ? evtsel::os : 0);
    else if (!h.from_pfm || (sel & (evtsel::usr | evtsel::os)) == 0)
        sel |= evtsel::usr | evtsel::os;
    sel |= (q.edge ? evtsel::edge : 0) | (q.inv ? evtsel::inv : 0) |
           (q.anythread ? evtsel::anythread : 0);
    if (q.cmask)
        sel = (sel & ~(0xffull << evtsel::cmask_shift)) | *q.cmask << evtsel::cmask_shift;

    const uint32_t event = static_cast<uint32_t>((sel & 0xff) | ((sel >> 32) & 0xf) << 8);
    const uint32_t umask = static_cast<uint32_t>((sel >> evtsel::umask_shift) & 0xff);
    // Intel's fixed-function pseudo-events: event 0x00, umask 1..4.
    if (is_intel(ctx_.aliases) && event == 0) {
        if (umask < 1 || umask > iaf_names.size())
            return fail("Intel event 0x00 with umask " + std::to_string(umask) +
                        " is not an event");
        if (sel & (evtsel::edge | evtsel::inv | 0xffull << evtsel::cmask_shift))
            return fail("a fixed-function event takes only the usr, os and anythread qualifiers");
        qualifiers fq;
        fq.usr = sel & evtsel::usr;
        fq.os = sel & evtsel::os;
        fq.anythread = sel & evtsel::anythread;
        return encode_iaf(umask - 1, fq, out);
    }
    // OFFCORE_RESPONSE and the like need a second MSR (Intel's
    // MSR_OFFCORE_RSP_x) that the module does not program: pm_config1 is
    // reserved and must be 0, so say why here rather than pass the kernel's
    // bare EINVAL on.
    if (h.extra != 0)
        return fail("the event needs an extra event register (OFFCORE_RSP), which hwpmc does "
                    "not program; choose an event without one");
    out->cls = is_intel(ctx_.aliases) ? PMC_CLASS_IAP : PMC_CLASS_K8;
    out->event = event;
    out->config = sel & evtsel::config_mask;
    out->caps = (sel & evtsel::usr ? PMC_CAP_USER : 0u) | (sel & evtsel::os ? PMC_CAP_SYSTEM : 0u) |
                (sel & evtsel::edge ? PMC_CAP_EDGE : 0u) |
                (sel & evtsel::inv ? PMC_CAP_INVERT : 0u) |
                (sel & evtsel::anythread ? PMC_CAP_ANYTHREAD : 0u) |
                ((sel >> evtsel::cmask_shift) & 0xff ? PMC_CAP_THRESHOLD : 0u) |
                (umask != 0 ? PMC_CAP_QUALIFIER : 0u);
    return true;
}

spec_result parser::run() {
    if (trim(spec_).empty()) {
        fail("empty event name");
        return {std::nullopt, error_};
    }
    std::vector<std::string_view> tokens = split(spec_, ',');
    for (auto &t : tokens) {
        t = trim(t);
        if (t.empty()) {
            fail("empty qualifier");
            return {std::nullopt, error_};
        }
    }
    std::string_view first = tokens.front();
    qualifiers q;
    if (const auto colon = first.rfind(':');
        colon != std::string_view::npos && is_alias(trim(first.substr(0, colon)))) {
        const std::string_view mods = first.substr(colon + 1);
        if (mods.empty() || mods.find_first_not_of("ukUK") != std::string_view::npos) {
            fail("unknown modifier \":" + std::string(mods) + "\" (perf's :u, :k and :uk " +
                 "work, as do the qualifiers ,usr and ,os)");
            return {std::nullopt, error_};
        }
        for (char c : mods)
            (c == 'u' || c == 'U' ? q.usr : q.os) = true;
        first = trim(first.substr(0, colon));
    }
    const std::string_view first_key = trim(first.substr(0, first.find('=')));
    const bool raw =
        first.find('=') != std::string_view::npos &&
        (iequals(first_key, "event") || iequals(first_key, "umask") || iequals(first_key, "cmask"));

    head h;
    if (!raw && !resolve_head(first, &h))
        return {std::nullopt, error_};
    for (std::size_t i = raw ? 0 : 1; i < tokens.size(); ++i)
        if (!parse_qualifier(tokens[i], &q))
            return {std::nullopt, error_};

    if (raw) {
        if (!hardware_pmu()) {
            fail("a raw event needs a hardware PMU, and this CPU has none");
            return {std::nullopt, error_};
        }
        if (!q.event) {
            fail("a raw event needs event=N");
            return {std::nullopt, error_};
        }
        h.kind = head_kind::hardware;
        h.evtsel = (*q.event & 0xff) | ((*q.event >> 8) & 0xf) << 32;
        q.event.reset();
    } else if (q.event) {
        fail("event=N names a raw event and must come first");
        return {std::nullopt, error_};
    }
    if (!check_qualifiers(h, q, first))
        return {std::nullopt, error_};

    event_encoding enc;
    switch (h.kind) {
    case head_kind::tsc:
        enc.cls = PMC_CLASS_TSC;
        enc.caps = PMC_CAP_READ;
        break;
    case head_kind::soft:
        enc.cls = PMC_CLASS_SOFT;
        enc.event = h.code;
        enc.caps = PMC_CAP_READ;
        break;
    case head_kind::iaf:
        encode_iaf(h.code, q, &enc);
        break;
    case head_kind::hardware:
        if (!encode_hardware(h, q, &enc))
            return {std::nullopt, error_};
        break;
    }
    return {enc, {}};
}

} // namespace

spec_result parse_event_spec(std::string_view spec, const spec_context &ctx) {
    return parser(spec, ctx).run();
}

std::span<const std::string_view> iaf_event_names() {
    return iaf_names;
}

alias_set alias_set_for(enum pmc_cputype cputype, unsigned cpu_family) {
    switch (cputype) {
    case PMC_CPU_INTEL_ARCH:
        return alias_set::intel_arch;
    case PMC_CPU_AMD_V2:
        return alias_set::amd_zen4;
    case PMC_CPU_AMD_K8:
    case PMC_CPU_AMD_EXT:
        if (cpu_family >= 0x1a)
            return alias_set::amd_zen4;
        return cpu_family >= 0x17 ? alias_set::amd_zen : alias_set::amd_legacy;
    default: // GENERIC, and FreeBSD's CPU types the module never reports
        break;
    }
    return alias_set::none;
}

} // namespace hwpmc::detail
