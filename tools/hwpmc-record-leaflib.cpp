// SPDX-License-Identifier: GPL-2.0
// The shared library of hwpmc-record-leafpath: leaf_mid and its leaf,
// built -O1 -fno-omit-frame-pointer (see that program).
namespace {
volatile unsigned long sink;
}

// The leaf spins in registers: GCC sets up no frame for it.
extern "C" __attribute__((noinline)) unsigned long leaf_hot(unsigned long n) {
    unsigned long x = sink;
    for (unsigned long i = 0; i < n; i++) {
        x = x * 2862933555777941757ul + 3037000493ul;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

extern "C" __attribute__((noinline)) unsigned long leaf_mid(unsigned long n) {
    unsigned long r = leaf_hot(n);
    sink = r; // not a tail call: leaf_mid stays on the stack, with its frame
    return r + 1;
}
