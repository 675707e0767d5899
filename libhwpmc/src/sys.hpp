// SPDX-License-Identifier: BSD-2-Clause
// System-call helpers shared by the C and the C++ API.
#pragma once

#include <cerrno>
#include <string>
#include <sys/ioctl.h>

namespace hwpmc::detail {

// The device path: $HWPMC_DEVICE (ignored in set-uid programs) or /dev/hwpmc.
std::string device_path();

// open(2) the device O_RDWR | O_CLOEXEC: the fd, or -1 with errno.
int open_device(const char *path);

// The ioctl itself: the system call laid out straight, nothing checked
// before it (pmc_read()'s path).  The unit tests' model of the module
// (tests/fake_kernel.cpp) takes the calls by defining ioctl(2) in the test
// program, which the linker prefers to the C library's.
inline int ioctl_once(int fd, unsigned long request, void *arg) {
    return ::ioctl(fd, request, arg);
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
