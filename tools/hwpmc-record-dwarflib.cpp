// SPDX-License-Identifier: GPL-2.0
// The shared library of hwpmc-record-dwarfpath: dwarf_b and its leaf,
// built -O2 without frame pointers (see that program).
#include "hwpmc-record-dwarfpath.hpp"

namespace {
volatile unsigned long sink;
}

// The leaf spins in registers: no frame, no frame pointer.
extern "C" __attribute__((noinline)) unsigned long dwarf_leaf(unsigned long n) {
    unsigned long x = sink;
    for (unsigned long i = 0; i < n; i++) {
        x = x * 2862933555777941757ul + 3037000493ul;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

extern "C" __attribute__((noinline)) unsigned long dwarf_b(unsigned long n) {
    unsigned long r = dwarf_leaf(n);
    sink = r; // not a tail call: dwarf_b stays on the stack
    return r + 1;
}
