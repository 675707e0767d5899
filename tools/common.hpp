// SPDX-License-Identifier: GPL-2.0
// Shared by the hwpmc tools: opening the driver with errors that say what
// to do, and small formatting helpers.
#pragma once

#include <cstdint>
#include <string>

namespace hwpmc_tools {

// pmc_init(), or print why it failed (and what to do) and return false.
bool init_or_explain(const char *prog);

// Explain a failed operation: errno plus the likely cause and the fix.
void explain(const char *prog, const char *what, int err);

// 1234567 -> "1,234,567".
std::string thousands(std::uint64_t v);

// The loaded module's version ("1.0"), or "" when unknown.
std::string module_version();

} // namespace hwpmc_tools
