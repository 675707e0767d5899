// SPDX-License-Identifier: BSD-2-Clause
// Sources: Intel SDM vol. 3B, "Pre-defined Architectural Performance
// Events"; AMD: the events Linux perf uses for the generic hardware events
// (arch/x86/events/amd/core.c), per family.
#include "aliases.hpp"

#include <algorithm>
#include <array>
#include <strings.h>

namespace hwpmc::detail {

namespace {

constexpr std::array<std::string_view, 8> names = {
    "instructions", "cycles",        "unhalted-cycles",  "ref-cycles",
    "branches",     "branch-misses", "cache-references", "cache-misses",
};

// Indexed like `names`; event 0 means "no such event".
using table = std::array<alias_code, names.size()>;

constexpr table intel_arch = {{
    {0xc0, 0x00}, // instruction retired
    {0x3c, 0x00}, // unhalted core cycles
    {0x3c, 0x00},
    {0x3c, 0x01}, // unhalted reference cycles
    {0xc4, 0x00}, // branch instruction retired
    {0xc5, 0x00}, // branch misses retired
    {0x2e, 0x4f}, // LLC reference
    {0x2e, 0x41}, // LLC misses
}};

constexpr table amd_legacy = {{
    {0xc0, 0x00}, // retired instructions
    {0x76, 0x00}, // CPU clocks not halted
    {0x76, 0x00},
    {0x00, 0x00}, // no reference-cycles event
    {0xc2, 0x00}, // retired branch instructions
    {0xc3, 0x00}, // retired mispredicted branches
    {0x7d, 0x07}, // L2 requests
    {0x7e, 0x07}, // L2 misses
}};

constexpr table amd_zen = {{
    {0xc0, 0x00},
    {0x76, 0x00},
    {0x76, 0x00},
    {0x00, 0x00},
    {0xc2, 0x00},
    {0xc3, 0x00},
    {0x60, 0xff}, // L2 cache accesses
    {0x64, 0x09}, // L2 cache misses
}};

constexpr table amd_zen4 = {{
    {0xc0, 0x00},
    {0x76, 0x00},
    {0x76, 0x00},
    {0x120, 0x00}, // cycles not halted at P0 frequency (as MPERF)
    {0xc2, 0x00},
    {0xc3, 0x00},
    {0x60, 0xff},
    {0x64, 0x09},
}};

const table *table_for(alias_set set) {
    switch (set) {
    case alias_set::intel_arch:
        return &intel_arch;
    case alias_set::amd_legacy:
        return &amd_legacy;
    case alias_set::amd_zen:
        return &amd_zen;
    case alias_set::amd_zen4:
        return &amd_zen4;
    case alias_set::none:
        break;
    }
    return nullptr;
}

std::optional<std::size_t> index_of(std::string_view name) {
    for (std::size_t i = 0; i < names.size(); ++i)
        if (name.size() == names[i].size() &&
            strncasecmp(name.data(), names[i].data(), name.size()) == 0)
            return i;
    return std::nullopt;
}

} // namespace

std::span<const std::string_view> alias_names() {
    return names;
}

bool is_alias(std::string_view name) {
    return index_of(name).has_value();
}

std::optional<alias_code> alias_lookup(alias_set set, std::string_view name) {
    const table *t = table_for(set);
    const auto i = index_of(name);
    if (t == nullptr || !i || (*t)[*i].event == 0)
        return std::nullopt;
    return (*t)[*i];
}

} // namespace hwpmc::detail
