// SPDX-License-Identifier: BSD-2-Clause
#include "sys.hpp"

#include <linux/hwpmc.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace hwpmc::detail {

std::string device_path() {
    if (const char *p = secure_getenv("HWPMC_DEVICE"); p != nullptr && *p != '\0')
        return p;
    return "/dev/" HWPMC_DEVICE_NAME;
}

int open_device(const char *path) {
    int fd;
    do {
        fd = ::open(path, O_RDWR | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

namespace {
std::atomic<ioctl_function> ioctl_override{nullptr};
} // namespace

void set_ioctl_function(ioctl_function fn) {
    ioctl_override.store(fn);
}

int xioctl(int fd, unsigned long request, void *arg) {
    const ioctl_function fn = ioctl_override.load(std::memory_order_relaxed);
    int rc;
    do {
        rc = fn != nullptr ? fn(fd, request, arg) : ::ioctl(fd, request, arg);
    } while (rc < 0 && errno == EINTR);
    return rc < 0 ? -1 : 0;
}

void close_keep_errno(int fd) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
}

} // namespace hwpmc::detail
