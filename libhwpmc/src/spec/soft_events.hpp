// SPDX-License-Identifier: BSD-2-Clause
// The SOFT events named by <linux/hwpmc.h>: the fallback when the kernel's
// list (GETDYNEVENTINFO) is not available.
#pragma once

#include "event_spec.hpp"

#include <span>

namespace hwpmc::detail {

std::span<const soft_event> default_soft_events();

} // namespace hwpmc::detail
