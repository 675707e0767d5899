// SPDX-License-Identifier: GPL-2.0
#include "common.hpp"

#include "lists.hpp"

#include <hwpmc/pmc.h>

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hwpmc_tools {

void explain(const char *prog, const char *what, int err) {
    std::fprintf(stderr, "%s: %s: %s\n", prog, what, std::strerror(err));
    switch (err) {
    case ENOENT:
    case ENXIO:
    case ENODEV:
        std::fprintf(stderr, "  The hwpmc module is not loaded. Load it with\n"
                             "    sudo insmod build/$(uname -r)/hwpmc.ko\n"
                             "  (or 'sudo modprobe hwpmc' after 'make install').\n");
        break;
    case EACCES:
        std::fprintf(stderr,
                     "  Opening /dev/hwpmc: it is not readable and writable by you: install\n"
                     "  kmod/99-hwpmc.rules into /etc/udev/rules.d (make install).\n"
                     "  Allocating: counting or sampling kernel mode (',os', ':k') needs\n"
                     "  CAP_PERFMON or root unless 'sysctl kernel.hwpmc.unprivileged_kernel=1'\n"
                     "  (and perf_event_paranoid <= 1, kptr_restrict = 0); ask for user mode\n"
                     "  only (',usr' or ':u').\n");
        break;
    case EPERM:
        std::fprintf(stderr,
                     "  Permission denied by hwpmc's security rules: hardware PMCs (which\n"
                     "  take the PMU from perf) need CAP_PERFMON or root unless\n"
                     "  'sysctl kernel.hwpmc.unprivileged_hw=1'; system-wide PMCs need\n"
                     "  CAP_PERFMON or root unless 'sysctl kernel.hwpmc.unprivileged_syspmcs=1';\n"
                     "  attaching to other processes follows the ptrace rules and\n"
                     "  'sysctl kernel.hwpmc.unprivileged_proc_debug'; enabling or disabling\n"
                     "  rows needs root (CAP_SYS_ADMIN) outside any container.\n");
        break;
    case EPROTO:
        std::fprintf(stderr,
                     "  The loaded module speaks another major ABI version than this tool:\n"
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

bool init_or_explain(const char *prog) {
    if (pmc_init() == 0)
        return true;
    explain(prog, "cannot open /dev/hwpmc", errno);
    return false;
}

std::string module_version() {
    std::ifstream f("/sys/module/hwpmc/version");
    std::string v;
    std::getline(f, v);
    return v;
}

std::string module_param(const char *name) {
    std::ifstream f(std::string("/sys/module/hwpmc/parameters/") + name);
    std::string v;
    std::getline(f, v);
    return v;
}

hwpmc::device open_device(const char *prog) {
    try {
        return hwpmc::device::open();
    } catch (const std::system_error &e) {
        explain(prog, "cannot open /dev/hwpmc", e.code().value());
        std::exit(1);
    }
}

std::vector<int> system_cpus(const char *prog, hwpmc::device &dev, const std::vector<int> &given) {
    int ncpu = static_cast<int>(dev.cpuinfo().pm_ncpu);
    if (given.empty())
        return online_cpus(ncpu);
    for (int c : given)
        if (c >= ncpu) {
            std::fprintf(stderr, "%s: no CPU %d: this machine has CPUs 0-%d\n", prog, c, ncpu - 1);
            std::exit(1);
        }
    return given;
}

void usage_error(const char *prog, const std::string &msg) {
    std::fprintf(stderr, "%s: %s\n(%s --help for help)\n", prog, msg.c_str(), prog);
    std::exit(2);
}

void bad_option(const char *prog, char *const argv[], const char *with_arg) {
    std::string bad =
        optopt ? std::string("-") + static_cast<char>(optopt) : std::string(argv[optind - 1]);
    bool missing = optopt && std::strchr(with_arg, optopt);
    usage_error(prog, missing ? "option " + bad + " needs an argument" : "unknown option " + bad);
}

} // namespace hwpmc_tools
