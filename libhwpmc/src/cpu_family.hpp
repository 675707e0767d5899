// SPDX-License-Identifier: BSD-2-Clause
#pragma once

namespace hwpmc::detail {

// The x86 CPU family (CPUID leaf 1, extended family added), 0 elsewhere.
unsigned x86_cpu_family();

} // namespace hwpmc::detail
