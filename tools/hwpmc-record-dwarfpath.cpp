// SPDX-License-Identifier: GPL-2.0
// A program with a known 4-deep hot path through a shared library, all
// built -O2 -fomit-frame-pointer (as Debian builds its packages), for the
// DWARF unwinding test (selftests/dwarf_test.sh):
//
//   main -> dwarf_a -> dwarf_b (libhwpmc-record-dwarflib.so) -> dwarf_leaf
//
// dwarf_leaf spins in registers (no frame at all); nearly all of the CPU
// time is spent there.  A frame-pointer walk cannot follow this path.
//
//   hwpmc-record-dwarfpath [SECONDS]
//
// runs for SECONDS of CPU time (default 0.5).
#include "hwpmc-record-dwarfpath.hpp"

#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace {
volatile unsigned long sink;

double cpu_seconds() {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}
} // namespace

extern "C" __attribute__((noinline)) unsigned long dwarf_a(unsigned long n) {
    unsigned long r = dwarf_b(n);
    sink = r; // not a tail call
    return r + 2;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
    double end = cpu_seconds() + seconds;
    while (cpu_seconds() < end)
        sink = dwarf_a(2000000);
    return 0;
}
