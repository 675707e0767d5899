// SPDX-License-Identifier: BSD-2-Clause
#include "sys.hpp"

#include <linux/hwpmc.h>

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

int xioctl_retry(int fd, unsigned long request, void *arg) {
    while (errno == EINTR) {
        if (ioctl_once(fd, request, arg) >= 0)
            return 0;
    }
    return -1;
}

void close_keep_errno(int fd) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
}

} // namespace hwpmc::detail
