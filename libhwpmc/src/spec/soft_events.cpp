// SPDX-License-Identifier: BSD-2-Clause
#include "soft_events.hpp"

namespace hwpmc::detail {

std::span<const soft_event> default_soft_events() {
    static const soft_event table[] = {
        {"CLOCK.HARD", PMC_SOFT_CLOCK_HARD},
        {"CLOCK.PROF", PMC_SOFT_CLOCK_PROF},
        {"PAGE_FAULT.ALL", PMC_SOFT_PAGE_FAULT_ALL},
        {"PAGE_FAULT.READ", PMC_SOFT_PAGE_FAULT_READ},
        {"PAGE_FAULT.WRITE", PMC_SOFT_PAGE_FAULT_WRITE},
        {"SCHED.SWITCH", PMC_SOFT_SCHED_SWITCH},
        {"SCHED.MIGRATE", PMC_SOFT_SCHED_MIGRATE},
        {"SYSCALL.ENTER", PMC_SOFT_SYSCALL_ENTER},
    };
    static_assert(std::size(table) == PMC_SOFT_NEVENTS);
    return table;
}

} // namespace hwpmc::detail
