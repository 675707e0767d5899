// SPDX-License-Identifier: GPL-2.0
// pctr: OpenBSD pctr(1) over /dev/pctr.  With no option, prints the TSC
// and the counters with their functions; -l lists this CPU's events
// (libpfm4, through libhwpmc); -s N programs counter N.
#include "lib/pctr.hpp"
#include "lib/common.hpp"
#include "lib/numbers.hpp"
#include "lib/options.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char *prog = "pctr";

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: %s [-l] [-s N [-d | -e EVENT [-m UMASK] [-c CMASK] [-AEIKMU]]]\n"
                 "\n"
                 "OpenBSD pctr(1) over /dev/pctr: with no option, print the TSC and the\n"
                 "counters of the CPU it runs on, with their functions.\n"
                 "\n"
                 "  -l           list the events of this CPU (libpfm4 names)\n"
                 "  -s N         program counter N (0-3) with the options below\n"
                 "  -e EVENT     event select (a number, or an event name of -l)\n"
                 "  -m UMASK     unit mask (a number)\n"
                 "  -c CMASK     counter mask (a number)\n"
                 "  -U, -K       count user mode, kernel mode (neither: both)\n"
                 "  -E, -I       edge detect, invert the counter mask\n"
                 "  -A, -M       unit mask bits 'any initiator', MESI\n"
                 "  -d           disable counter N (function 0)\n"
                 "  -h, --help   show this help\n",
                 prog);
}

const char *dev_path() {
    const char *p = std::getenv("PCTR_DEVICE");
    return p && *p ? p : "/dev/" PCTR_DEVICE_NAME;
}

int list_events() {
    if (pmc_init() < 0) {
        std::fprintf(stderr, "%s: /dev/hwpmc: %s (the event names come from hwpmc)\n", prog,
                     std::strerror(errno));
        return 1;
    }
    // The programmable class the module found (pctr's counters are its
    // rows), not whatever libpfm4 would name for this CPU model.
    const struct pmc_cpuinfo *ci = nullptr;
    if (pmc_cpuinfo(&ci) < 0) {
        std::fprintf(stderr, "%s: GETCPUINFO: %s\n", prog, std::strerror(errno));
        return 1;
    }
    for (uint32_t i = 0; i < ci->pm_nclass; i++) {
        auto c = static_cast<enum pmc_class>(ci->pm_classes[i].pm_class);
        const char **names = nullptr;
        int n = 0;
        if (c != PMC_CLASS_IAP && c != PMC_CLASS_K8)
            continue;
        if (pmc_event_names_of_class(c, &names, &n) < 0 || n <= 0)
            continue;
        for (int i = 0; i < n; i++)
            std::printf("%s\n", names[i]);
        std::free(names);
        return 0;
    }
    std::fprintf(stderr, "%s: this CPU has no programmable counters (no IAP or K8 class)\n", prog);
    return 1;
}

// -e: a number, or an event name resolved by libhwpmc (event and unit mask).
bool resolve_event(const char *arg, hwpmc_tools::pctr::request *r) {
    if (auto v = hwpmc_tools::to_whole(arg)) {
        r->event = static_cast<uint32_t>(*v > 0xffffffffu ? 0x100 : *v);
        return true;
    }
    try {
        auto dev = hwpmc::device::open();
        auto info = dev.parse(arg);
        if (info.cls != PMC_CLASS_IAP && info.cls != PMC_CLASS_K8) {
            std::fprintf(stderr, "%s: %s is not an event of the programmable counters\n", prog,
                         arg);
            return false;
        }
        r->event = info.event;
        r->umask = (info.config >> 8) & 0xff;
        r->cmask = (info.config >> 24) & 0xff;
        return true;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: -e %s: %s\n", prog, arg, e.what());
        return false;
    }
}

uint32_t byte_arg(const char *arg, const char *opt) {
    auto v = hwpmc_tools::to_whole(arg);
    if (!v || *v > 0xff) {
        std::fprintf(stderr, "%s: %s wants a number from 0 to 0xff\n", prog, opt);
        std::exit(2);
    }
    return static_cast<uint32_t>(*v);
}

} // namespace

int main(int argc, char **argv) {
    hwpmc_tools::option_reader opts(prog, argc, argv, "+hls:e:m:c:UKEIAMd",
                                    {{"help", no_argument, nullptr, 'h'}}, usage);
    hwpmc_tools::pctr::request req;
    const char *event = nullptr;
    int counter = -1;
    bool list = false, any_fn = false;
    for (int c; (c = opts.next()) != -1;) {
        switch (c) {
        case 'l':
            list = true;
            break;
        case 's': {
            auto v = hwpmc_tools::to_whole(optarg);
            if (!v || *v >= PCTR_NUM) {
                std::fprintf(stderr, "%s: -s wants a counter from 0 to %d\n", prog, PCTR_NUM - 1);
                return 2;
            }
            counter = static_cast<int>(*v);
            break;
        }
        case 'e':
            event = optarg;
            any_fn = true;
            break;
        case 'm':
            req.umask = byte_arg(optarg, "-m");
            any_fn = true;
            break;
        case 'c':
            req.cmask = byte_arg(optarg, "-c");
            any_fn = true;
            break;
        case 'U':
            req.user = any_fn = true;
            break;
        case 'K':
            req.kernel = any_fn = true;
            break;
        case 'E':
            req.edge = any_fn = true;
            break;
        case 'I':
            req.invert = any_fn = true;
            break;
        case 'A':
            req.any = any_fn = true;
            break;
        case 'M':
            req.mesi = any_fn = true;
            break;
        case 'd':
            req.disable = true;
            break;
        default:
            opts.bad("smce");
        }
    }
    if (!opts.operands().empty()) {
        std::fprintf(stderr, "%s: unexpected operand '%s'\n", prog, opts.operands()[0].c_str());
        return 2;
    }
    if (list)
        return list_events();
    if (counter < 0 && (any_fn || req.disable)) {
        std::fprintf(stderr, "%s: -e, -m, -c, -U, -K, -E, -I, -A, -M and -d need -s N\n", prog);
        return 2;
    }
    if (counter >= 0 && !event && !req.disable) {
        std::fprintf(stderr, "%s: -s needs -e EVENT (or -d)\n", prog);
        return 2;
    }
    int fd = open(dev_path(), (counter >= 0 ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) {
        std::fprintf(stderr, "%s: %s: %s%s\n", prog, dev_path(), std::strerror(errno),
                     errno == ENOENT ? " (is the hwpmc module loaded?)" : "");
        return 1;
    }
    if (counter >= 0) {
        if (event && !resolve_event(event, &req))
            return 1;
        uint32_t fn = 0;
        std::string why;
        if (!hwpmc_tools::pctr::function_word(req, &fn, &why)) {
            std::fprintf(stderr, "%s: %s\n", prog, why.c_str());
            return 2;
        }
        const unsigned long cmds[PCTR_NUM] = {PCIOCS0, PCIOCS1, PCIOCS2, PCIOCS3};
        unsigned int arg = fn;
        if (ioctl(fd, cmds[counter], &arg) < 0) {
            int e = errno;
            std::fprintf(stderr, "%s: counter %d: %s%s\n", prog, counter, std::strerror(e),
                         e == ENODEV  ? " (this CPU has no programmable counters)"
                         : e == EBUSY ? " (the counter is in use by hwpmc or perf)"
                         : e == EPERM ? " (needs CAP_PERFMON, or kernel.hwpmc.unprivileged_syspmcs "
                                        "and unprivileged_hw)"
                         : e == EACCES ? " (kernel mode needs CAP_PERFMON: try -U)"
                                       : "");
            return 1;
        }
        return 0;
    }
    struct pctrst st;
    if (ioctl(fd, PCIOCRD, &st) < 0) {
        std::fprintf(stderr, "%s: PCIOCRD: %s\n", prog, std::strerror(errno));
        return 1;
    }
    std::fputs(hwpmc_tools::pctr::format_status(st).c_str(), stdout);
    return 0;
}
