// SPDX-License-Identifier: BSD-2-Clause
// System-call helpers shared by the C and the C++ API.
#pragma once

#include <atomic>
#include <cerrno>
#include <string>
#include <sys/ioctl.h>

namespace hwpmc::detail {

// The device path: $HWPMC_DEVICE (ignored in set-uid programs) or /dev/hwpmc.
std::string device_path();

// open(2) the device O_RDWR | O_CLOEXEC: the fd, or -1 with errno.
int open_device(const char *path);

// Tests: route every ioctl through `fn` instead of ioctl(2) (nullptr
// restores it).  `fn` returns 0, or -1 with errno, as ioctl(2).
using ioctl_function = int (*)(int fd, unsigned long request, void *arg);
void set_ioctl_function(ioctl_function fn);
extern std::atomic<ioctl_function> ioctl_override; // set_ioctl_function()'s

// The ioctl, through set_ioctl_function()'s function if any (tests only:
// the system call is the path laid out straight).
inline int ioctl_once(int fd, unsigned long request, void *arg) {
    const ioctl_function fn = ioctl_override.load(std::memory_order_relaxed);
    if (fn == nullptr) [[likely]]
        return ::ioctl(fd, request, arg);
    return fn(fd, request, arg);
}

// After an ioctl failed: again while it fails with EINTR; 0, or -1 with
// errno.
int xioctl_retry(int fd, unsigned long request, void *arg);

// ioctl(2), retried on EINTR: 0, or -1 with errno.  Inline, the retries
// out of line: pmc_read() and hwpmc::pmc::read() are one ioctl and little
// else.
inline int xioctl(int fd, unsigned long request, void *arg) {
    if (ioctl_once(fd, request, arg) < 0) [[unlikely]]
        return xioctl_retry(fd, request, arg);
    return 0;
}

// close(2) without disturbing errno.
void close_keep_errno(int fd);

} // namespace hwpmc::detail
