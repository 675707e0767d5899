// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the event specifier parser, on every CPU flavour, with
// the invariants every answer must satisfy:
//  - exactly one of an encoding and an error message;
//  - an encoding stays inside the ABI (class, event width, config bits,
//    capability bits);
//  - a programmable-counter encoding, written back as a raw specifier,
//    parses to the same encoding.
#include "spec/event_spec.hpp"
#include "spec/soft_events.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace hwpmc::detail;

namespace {

class fake_pfm final : public hw_event_source {
public:
    std::optional<hw_event> lookup(const std::string &name, std::string *why) override {
        if (name == "INST_RETIRED:ANY_P")
            return hw_event{false, 0x5300c0, 0};
        if (name == "OFFCORE_RESPONSE_0")
            return hw_event{false, 0x5301b7, 0x3f84000001};
        if (name == "RETIRED_INSTRUCTIONS")
            return hw_event{true, 0x5300c0, 0};
        if (name == "CYCLES_NOT_IN_HALT")
            return hw_event{true, 0x100530020, 0};
        *why = name.size() % 2 ? "event not found" : "invalid event attribute";
        return std::nullopt;
    }
    std::vector<std::string> names() override {
        return {"INST_RETIRED", "OFFCORE_RESPONSE_0", "RETIRED_INSTRUCTIONS"};
    }
};

[[noreturn]] void die(const char *what, std::string_view spec) {
    std::fprintf(stderr, "invariant broken: %s for \"%.*s\"\n", what, static_cast<int>(spec.size()),
                 spec.data());
    std::abort();
}

std::string raw_spec(const event_encoding &e) {
    char buf[160];
    const uint64_t c = e.config;
    std::snprintf(buf, sizeof(buf), "event=%#x,umask=%#x,cmask=%u%s%s%s%s%s", e.event,
                  static_cast<unsigned>((c >> 8) & 0xff), static_cast<unsigned>((c >> 24) & 0xff),
                  c & evtsel::usr ? ",usr" : "", c & evtsel::os ? ",os" : "",
                  c & evtsel::edge ? ",edge" : "", c & evtsel::inv ? ",inv" : "",
                  c & evtsel::anythread ? ",anythread" : "");
    return buf;
}

void check(std::string_view spec, alias_set set, fake_pfm &pfm) {
    spec_context ctx;
    ctx.aliases = set;
    ctx.soft = default_soft_events();
    ctx.pfm = set == alias_set::none ? nullptr : &pfm;
    const spec_result r = parse_event_spec(spec, ctx);
    if (r.encoding.has_value() == !r.error.empty())
        die("not exactly one of encoding and error", spec);
    if (!r.encoding)
        return;
    const event_encoding &e = *r.encoding;
    if (e.caps & ~static_cast<uint32_t>(PMC_CAP_MASK))
        die("unknown capability bits", spec);
    if (e.config & ~evtsel::config_mask)
        die("config bits outside the event-select layout", spec);
    switch (e.cls) {
    case PMC_CLASS_TSC:
    case PMC_CLASS_SOFT:
        if (e.config != 0 || e.config1 != 0)
            die("configuration on a software class", spec);
        return;
    case PMC_CLASS_IAF:
        if (e.event > 3 || set != alias_set::intel_arch)
            die("bad fixed-function encoding", spec);
        return;
    case PMC_CLASS_IAP:
    case PMC_CLASS_K8: {
        if ((e.cls == PMC_CLASS_IAP) != (set == alias_set::intel_arch) || set == alias_set::none)
            die("hardware class of the wrong vendor", spec);
        if (e.event > (e.cls == PMC_CLASS_IAP ? 0xffu : 0xfffu))
            die("event code too wide", spec);
        const spec_result again = parse_event_spec(raw_spec(e), ctx);
        if (!again.encoding || again.encoding->cls != e.cls || again.encoding->event != e.event ||
            again.encoding->config != e.config || again.encoding->caps != e.caps)
            die("raw round trip differs", spec);
        return;
    }
    }
    die("unknown class", spec);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fake_pfm pfm;
    const std::string_view spec(reinterpret_cast<const char *>(data), size);
    for (alias_set set : {alias_set::none, alias_set::intel_arch, alias_set::amd_legacy,
                          alias_set::amd_zen, alias_set::amd_zen4})
        check(spec, set, pfm);
    return 0;
}
