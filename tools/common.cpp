// SPDX-License-Identifier: GPL-2.0
#include "common.hpp"

#include <hwpmc/pmc.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace hwpmc_tools {

void explain(const char *prog, const char *what, int err)
{
    std::fprintf(stderr, "%s: %s: %s\n", prog, what, std::strerror(err));
    switch (err) {
    case ENOENT:
    case ENXIO:
    case ENODEV:
        std::fprintf(stderr,
                     "  The hwpmc module is not loaded. Load it with\n"
                     "    sudo insmod build/$(uname -r)/hwpmc.ko\n"
                     "  (or 'sudo modprobe hwpmc' after 'make install').\n");
        break;
    case EACCES:
        std::fprintf(stderr, "  /dev/hwpmc is not readable and writable by you: install\n"
                             "  kmod/99-hwpmc.rules into /etc/udev/rules.d (make install).\n");
        break;
    case EPERM:
        std::fprintf(stderr,
                     "  Permission denied by hwpmc's security rules: system-wide PMCs need\n"
                     "  CAP_PERFMON or root unless 'sysctl kernel.hwpmc.unprivileged_syspmcs=1';\n"
                     "  attaching to other processes follows the ptrace rules and\n"
                     "  'sysctl kernel.hwpmc.unprivileged_proc_debug'; enabling or disabling\n"
                     "  rows needs root (CAP_SYS_ADMIN) outside any container.\n");
        break;
    case EPROTO:
        std::fprintf(stderr, "  The loaded module speaks another major ABI version than this tool:\n"
                             "  rebuild both from one checkout.\n");
        break;
    case EBUSY:
        std::fprintf(stderr, "  The counter is in use (by another hwpmc user, or by perf: the NMI\n"
                             "  watchdog holds one; 'sysctl kernel.nmi_watchdog=0' frees it).\n");
        break;
    default:
        break;
    }
}

bool init_or_explain(const char *prog)
{
    if (pmc_init() == 0)
        return true;
    explain(prog, "cannot open /dev/hwpmc", errno);
    return false;
}

std::string thousands(std::uint64_t v)
{
    std::string digits = std::to_string(v), out;
    int n = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (n && n % 3 == 0)
            out.insert(out.begin(), ',');
        out.insert(out.begin(), *it);
        ++n;
    }
    return out;
}

std::string module_version()
{
    std::ifstream f("/sys/module/hwpmc/version");
    std::string v;
    std::getline(f, v);
    return v;
}

} // namespace hwpmc_tools
