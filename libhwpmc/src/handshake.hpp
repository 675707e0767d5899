// SPDX-License-Identifier: BSD-2-Clause
// Opening a session with the kernel module: version handshake, CPU info.
#pragma once

#include <hwpmc/pmc.h>

namespace hwpmc::detail {

// GETMODULEVERSION with HWPMC_VERSION: 0, or -1 with errno (EPROTO when the
// module's major version differs).  *module_version gets the module's
// version when the module reported one.
int check_version(int fd, uint32_t *module_version);

// GETCPUINFO, converted to FreeBSD's struct pmc_cpuinfo: 0, or -1 with errno.
int get_cpuinfo(int fd, struct pmc_cpuinfo *out);

// Open the device at `path`, check the version and read the CPU info: the
// fd, or -1 with errno (and nothing left open).
int open_session(const char *path, struct pmc_cpuinfo *cpuinfo);

} // namespace hwpmc::detail
