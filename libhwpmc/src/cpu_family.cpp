// SPDX-License-Identifier: BSD-2-Clause
#include "cpu_family.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace hwpmc::detail {

unsigned x86_cpu_family() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0)
        return 0;
    const unsigned family = (eax >> 8) & 0xf;
    return family == 0xf ? family + ((eax >> 20) & 0xff) : family;
#else
    return 0;
#endif
}

} // namespace hwpmc::detail
