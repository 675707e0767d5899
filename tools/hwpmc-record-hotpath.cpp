// SPDX-License-Identifier: GPL-2.0
// A program with a known hot path, for the tests of hwpmc-record and
// hwpmc-report (built with frame pointers, -O1, nothing inlined):
//
//   main -> outer -> middle -> hot       spins ~90% of the CPU time
//   main -> hotpath::warm(int)           a C++ function, ~10%
//
//   hwpmc-record-hotpath [SECONDS [EXIT_STATUS [fork | dlopen | vdso]]]
//
// runs for SECONDS of CPU time (default 0.5), then exits EXIT_STATUS
// (default 0).  With "fork" a child (forked, not exec'd: it lives on its
// parent's mappings) does the same first, while its parent waits.  With
// "dlopen" main also calls lib_hot() of libhwpmc-record-hotlib.so (next to
// the program), loaded with dlopen(3), for about a third of the time.  With
// "vdso" main also calls clock_gettime(CLOCK_MONOTONIC), which is the
// vDSO's (falling back to a system call where the clock source has no
// vDSO reader), for about a third of the time.
#include <dlfcn.h>
#include <limits.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
volatile unsigned long sink;

double cpu_seconds() {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}
} // namespace

// hot() and warm() keep their state on the stack (volatile): GCC gives a
// leaf function without a stack frame no frame pointer, whatever the flags,
// and a sample in it would then skip its caller.
extern "C" {
__attribute__((noinline)) unsigned long hot(unsigned long n) {
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x = x * 2862933555777941757ul + 3037000493ul;
    return x;
}

__attribute__((noinline)) unsigned long middle(unsigned long n) {
    return hot(n) + 1; // not a tail call: middle stays on the stack
}

__attribute__((noinline)) unsigned long outer(unsigned long n) {
    return middle(n) + 1;
}
}

namespace hotpath {
__attribute__((noinline)) unsigned long warm(int n) {
    volatile unsigned long x = 1;
    for (int i = 0; i < n; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x + 1;
}

__attribute__((noinline)) unsigned long clock_reads(int n) {
    struct timespec ts;
    unsigned long sum = 0;
    for (int i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += static_cast<unsigned long>(ts.tv_nsec);
    }
    return sum;
}
} // namespace hotpath

int main(int argc, char **argv) {
    double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
    int status = argc > 2 ? std::atoi(argv[2]) : 0;
    pid_t child = -1;
    unsigned long (*lib_hot)(unsigned long) = nullptr;
    if (argc > 3 && !std::strcmp(argv[3], "dlopen")) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
            return 1;
        exe[n] = 0;
        std::string lib = exe;
        lib = lib.substr(0, lib.rfind('/') + 1) + "libhwpmc-record-hotlib.so";
        void *h = dlopen(lib.c_str(), RTLD_NOW);
        if (!h) {
            std::fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        lib_hot = reinterpret_cast<unsigned long (*)(unsigned long)>(dlsym(h, "lib_hot"));
        if (!lib_hot)
            return 1;
    }
    const bool vdso = argc > 3 && !std::strcmp(argv[3], "vdso");
    if (argc > 3 && !std::strcmp(argv[3], "fork")) {
        child = fork();
        if (child < 0) {
            std::perror("fork");
            return 1;
        }
        if (child > 0) {
            int ws;
            waitpid(child, &ws, 0);
        }
    }
    // The loop is main's own, so that the path is exactly main -> outer.
    double end = cpu_seconds() + seconds;
    while (cpu_seconds() < end) {
        sink = outer(900000);
        sink = hotpath::warm(100000);
        if (lib_hot)
            sink = lib_hot(500000);
        if (vdso)
            sink = hotpath::clock_reads(2000);
    }
    if (child == 0)
        _exit(0);
    return status;
}
