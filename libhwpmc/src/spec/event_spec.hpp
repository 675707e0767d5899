// SPDX-License-Identifier: BSD-2-Clause
// Event specifiers: "instructions,usr", "SOFT-CLOCK.PROF", "tsc",
// "event=0xc0,umask=0x00,os", "INST_RETIRED:ANY_P,cmask=1,inv" (a libpfm4
// name), ... -> the class, event code, configuration and capabilities of a
// PMCALLOCATE.  Pure: everything it needs comes in a spec_context.
#pragma once

#include <hwpmc/pmc.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hwpmc::detail {

// x86 event-select bits carried in pm_config (the layout of the
// IA32_PERFEVTSELx / PERF_CTLx registers; the kernel owns EN and INT).
namespace evtsel {
constexpr uint64_t umask_shift = 8;
constexpr uint64_t usr = 1ull << 16;
constexpr uint64_t os = 1ull << 17;
constexpr uint64_t edge = 1ull << 18;
constexpr uint64_t anythread = 1ull << 21;
constexpr uint64_t inv = 1ull << 23;
constexpr uint64_t cmask_shift = 24;
constexpr uint64_t config_mask =
    0xffull << umask_shift | usr | os | edge | anythread | inv | 0xffull << cmask_shift;
} // namespace evtsel

// Fixed-function counters (class IAF): the event code is the counter index.
enum iaf_event : uint32_t {
    iaf_instr_retired_any = 0,
    iaf_cpu_clk_unhalted_core = 1,
    iaf_cpu_clk_unhalted_ref = 2,
    iaf_topdown_slots = 3,
};

// Which table of generic aliases ("cycles", "cache-misses", ...) applies.
enum class alias_set {
    none,       // no hardware PMU (PMC_CPU_GENERIC)
    intel_arch, // Intel architectural events
    amd_legacy, // AMD before family 17h
    amd_zen,    // AMD Zen 1-3
    amd_zen4,   // AMD Zen 4 and later (PerfMonV2)
};

struct soft_event {
    std::string name; // "CLOCK.PROF"
    uint32_t code;    // PMC_SOFT_*
};

// A hardware event found by name in libpfm4 (or a stand-in in tests).
struct hw_event {
    bool amd;        // the PMU's vendor: AMD (else Intel)
    uint64_t evtsel; // the event-select image; AMD event bits 8-11 at 32-35
    uint64_t extra;  // a second register (Intel OFFCORE_RSP), or 0
};

class hw_event_source {
public:
    virtual ~hw_event_source() = default;
    // The event `name`, or nullopt with *why set (e.g. "event not found").
    virtual std::optional<hw_event> lookup(const std::string &name, std::string *why) = 0;
    // Names for "did you mean" suggestions.
    virtual std::vector<std::string> names() = 0;
};

struct spec_context {
    alias_set aliases = alias_set::none;
    std::span<const soft_event> soft; // the SOFT events the kernel offers
    hw_event_source *pfm = nullptr;   // nullptr: no libpfm4 lookups
};

struct event_encoding {
    enum pmc_class cls = PMC_CLASS_TSC;
    uint32_t event = 0;   // pm_event
    uint64_t config = 0;  // pm_config
    uint64_t config1 = 0; // pm_config1
    uint32_t caps = 0;    // pm_caps

    bool operator==(const event_encoding &) const = default;
};

struct spec_result {
    std::optional<event_encoding> encoding; // set on success
    std::string error;                      // set on failure
};

spec_result parse_event_spec(std::string_view spec, const spec_context &ctx);

// The names of the fixed-function events (class IAF), by counter index.
std::span<const std::string_view> iaf_event_names();

// The alias set for a CPU type (and, for AMD, the CPU family).
alias_set alias_set_for(enum pmc_cputype cputype, unsigned cpu_family);

} // namespace hwpmc::detail
