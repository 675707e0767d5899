// SPDX-License-Identifier: GPL-2.0
// A program whose hot leaf has no frame, built -O1 -fno-omit-frame-pointer
// (a program built for frame-pointer callchains), for the leaf-caller test
// (selftests/leaf_test.sh):
//
//   main -> leaf_mid (libhwpmc-record-leaflib.so) -> leaf_hot
//
// GCC gives leaf_hot, which spins in registers, no frame even with
// -fno-omit-frame-pointer: a frame-pointer walk from a sample there starts
// at leaf_mid's frame and finds main, not leaf_mid.  Nearly all of the CPU
// time is spent in leaf_hot.
//
//   hwpmc-record-leafpath [SECONDS]
//
// runs for SECONDS of CPU time (default 0.5).
#include <time.h>

#include <cstdlib>

extern "C" unsigned long leaf_mid(unsigned long n);

namespace {
volatile unsigned long sink;

double cpu_seconds() {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}
} // namespace

int main(int argc, char **argv) {
    double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
    double end = cpu_seconds() + seconds;
    while (cpu_seconds() < end)
        sink = leaf_mid(2000000);
    return 0;
}
