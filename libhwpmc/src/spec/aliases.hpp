// SPDX-License-Identifier: BSD-2-Clause
// Generic event aliases, mapped per vendor to architectural event codes.
#pragma once

#include "event_spec.hpp"

#include <optional>
#include <span>
#include <string_view>

namespace hwpmc::detail {

struct alias_code {
    uint32_t event; // event select; AMD: up to 12 bits
    uint32_t umask;
};

// The generic alias names, in documentation order.
std::span<const std::string_view> alias_names();

// Whether `name` (case-insensitive) is a generic alias.
bool is_alias(std::string_view name);

// The code of alias `name` on `set`; nullopt if that CPU has no such event.
std::optional<alias_code> alias_lookup(alias_set set, std::string_view name);

} // namespace hwpmc::detail
