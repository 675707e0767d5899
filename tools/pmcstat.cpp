// SPDX-License-Identifier: GPL-2.0
// pmcstat: FreeBSD's pmcstat(8) command line for FreeBSD users and scripts.
// The work is done by the tool that does it here (tools/lib/pmcstat_args
// chooses it and its arguments): this is the wiring, an exec of that tool
// from pmcstat's own directory (or PATH).
#include "lib/common.hpp"
#include "lib/pmcstat_args.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    const auto plan = hwpmc_tools::plan_pmcstat(argc, argv);
    if (plan.help) {
        std::fputs(hwpmc_tools::pmcstat_usage(), stdout);
        return 0;
    }
    if (!plan.error.empty()) {
        std::fprintf(stderr, "pmcstat: %s\n%s", plan.error.c_str(), hwpmc_tools::pmcstat_usage());
        return 2;
    }
    for (const auto &n : plan.notes)
        std::fprintf(stderr, "pmcstat: note: %s\n", n.c_str());
    if (!plan.stdout_file.empty()) {
        const int fd =
            open(plan.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
            std::fprintf(stderr, "pmcstat: %s: %s\n", plan.stdout_file.c_str(),
                         std::strerror(errno));
            return 1;
        }
        close(fd);
    }
    std::vector<char *> args;
    args.push_back(const_cast<char *>(plan.tool.c_str()));
    for (const auto &a : plan.args)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    // The tools installed (or built) next to pmcstat, else PATH's.
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        std::string dir(self);
        dir.erase(dir.rfind('/') + 1);
        const std::string path = dir + plan.tool;
        execv(path.c_str(), args.data());
    }
    execvp(plan.tool.c_str(), args.data());
    std::fprintf(stderr, "pmcstat: cannot run %s: %s\n", plan.tool.c_str(), std::strerror(errno));
    return 127;
}
