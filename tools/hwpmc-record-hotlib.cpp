// SPDX-License-Identifier: GPL-2.0
// A library that hwpmc-record-hotpath loads with dlopen(3) ("dlopen"): its
// code is mapped after sampling started, so only a MAP_IN record logged
// after the mmap() names its samples.
extern "C" __attribute__((noinline, visibility("default"))) unsigned long lib_hot(unsigned long n) {
    volatile unsigned long x = 7;
    for (unsigned long i = 0; i < n; i++)
        x = x * 0x9e3779b97f4a7c15ul + 11;
    return x;
}
