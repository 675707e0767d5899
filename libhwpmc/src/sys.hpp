// SPDX-License-Identifier: BSD-2-Clause
// System-call helpers shared by the C and the C++ API.
#pragma once

#include <string>

namespace hwpmc::detail {

// The device path: $HWPMC_DEVICE (ignored in set-uid programs) or /dev/hwpmc.
std::string device_path();

// open(2) the device O_RDWR | O_CLOEXEC: the fd, or -1 with errno.
int open_device(const char *path);

// ioctl(2), retried on EINTR: 0, or -1 with errno.
int xioctl(int fd, unsigned long request, void *arg);

// Tests: route every ioctl through `fn` instead of ioctl(2) (nullptr
// restores it).  `fn` returns 0, or -1 with errno, as ioctl(2).
using ioctl_function = int (*)(int fd, unsigned long request, void *arg);
void set_ioctl_function(ioctl_function fn);

// close(2) without disturbing errno.
void close_keep_errno(int fd);

} // namespace hwpmc::detail
