// SPDX-License-Identifier: GPL-2.0
#include "pmc_group.hpp"

#include "common.hpp"
#include "numbers.hpp"

#include <hwpmc/pmc.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hwpmc_tools {

namespace {

std::string on_cpu(int cpu) {
    return cpu >= 0 ? " on CPU " + std::to_string(cpu) : "";
}

} // namespace

bool pmc_group::allocate(hwpmc::device &dev, size_t req, const request &r,
                         const std::vector<int> &cpus, failure *f) {
    const size_t first = members_.size();
    const std::vector<int> where = r.system ? cpus : std::vector<int>{-1};
    const enum pmc_mode mode = use_ == use::counting ? (r.system ? PMC_MODE_SC : PMC_MODE_TC)
                                                     : (r.system ? PMC_MODE_SS : PMC_MODE_TS);
    for (int cpu : where) {
        try {
            members_.push_back(
                {req, cpu, dev.allocate(r.spec, mode, r.flags, cpu, r.period, r.ustack_size)});
        } catch (const std::system_error &e) {
            *f = {e.code().value(), dynamic_cast<const hwpmc::spec_error *>(&e) != nullptr,
                  e.what(), cpu};
            members_.erase(members_.begin() + static_cast<long>(first), members_.end());
            return false;
        }
    }
    return true;
}

void pmc_group::report(const char *what, const std::system_error &e) const {
    if (dynamic_cast<const hwpmc::spec_error *>(&e)) {
        std::fprintf(stderr, "%s: %s\n", prog_, e.what());
        return;
    }
    explain(prog_, what, e.code().value());
}

void pmc_group::explain_allocation(const request &r, const failure &f) const {
    if (use_ == use::sampling) {
        const std::string what = "cannot sample '" + r.name + "'" + on_cpu(f.cpu);
        if (f.err == EPERM && r.system) {
            std::fprintf(stderr,
                         "%s: %s: %s\n"
                         "  System-wide sampling (-a) needs root, or CAP_PERFMON (the\n"
                         "  sysctl kernel.hwpmc.unprivileged_syspmcs only opens counting).\n"
                         "  Without privilege, sample your own command or processes.\n",
                         prog_, what.c_str(), std::strerror(EPERM));
            return;
        }
        if (f.spec) {
            std::fprintf(stderr, "%s: %s\n", prog_, f.what.c_str());
            return;
        }
        explain(prog_, what.c_str(), f.err);
        if (f.err == EINVAL)
            std::fprintf(stderr,
                         "  The event may not support sampling, or the period %s is out "
                         "of its range\n"
                         "  (without CAP_PERFMON, a hardware event's period must be at "
                         "least\n"
                         "  'sysctl kernel.hwpmc.min_hw_period').\n",
                         thousands(r.period).c_str());
        return;
    }
    if (f.spec) {
        // what() ends in ": Invalid argument": the message says more.
        std::string msg = f.what, tail = std::string(": ") + std::strerror(EINVAL);
        if (msg.size() > tail.size() &&
            msg.compare(msg.size() - tail.size(), tail.size(), tail) == 0)
            msg.resize(msg.size() - tail.size());
        std::fprintf(stderr, "%s: event '%s': %s\n", prog_, r.name.c_str(), msg.c_str());
        return;
    }
    const std::string what = "cannot count '" + r.name + "' in " +
                             (r.system ? "system" : "process") + " scope" + on_cpu(f.cpu);
    if (f.err == ENXIO && f.cpu >= 0) {
        std::fprintf(stderr, "%s: %s: CPU %d is offline\n", prog_, what.c_str(), f.cpu);
        return;
    }
    explain(prog_, what.c_str(), f.err);
    if (f.err == EINVAL && !r.system)
        std::fprintf(stderr, r.tsc ? "  The TSC counts only system-wide: use -a (or -s tsc).\n"
                                   : "  This event may count only system-wide: try -a.\n");
}

bool pmc_group::attach(pid_t pid, const std::vector<request> &reqs) {
    for (auto &m : members_) {
        if (m.cpu >= 0)
            continue;
        try {
            m.pmc.attach(pid);
        } catch (const std::system_error &e) {
            const int err = e.code().value();
            if (use_ == use::counting) {
                const std::string &name = reqs[m.req].name;
                if (err == ESRCH) {
                    std::fprintf(stderr,
                                 "%s: cannot attach %s to process %d: %s (no such process, or "
                                 "it is exiting)\n",
                                 prog_, name.c_str(), pid, std::strerror(err));
                } else {
                    std::string what =
                        "cannot attach " + name + " to process " + std::to_string(pid);
                    explain(prog_, what.c_str(), err);
                }
                return false;
            }
            const std::string what = "cannot attach to process " + std::to_string(pid);
            if (err == EPERM) {
                std::fprintf(
                    stderr,
                    "%s: %s: %s\n"
                    "  Sampling another process follows the ptrace rules: the same\n"
                    "  user (real, effective and saved ids) and a dumpable process, or\n"
                    "  CAP_SYS_PTRACE.  With 'sysctl kernel.hwpmc.unprivileged_proc_debug'\n"
                    "  at 0, users other than root may attach to no process but the\n"
                    "  tool itself, not even to a command it starts.\n",
                    prog_, what.c_str(), std::strerror(EPERM));
            } else if (err == ESRCH) {
                std::fprintf(stderr, "%s: %s: no such process\n", prog_, what.c_str());
            } else {
                report(what.c_str(), e);
            }
            return false;
        }
    }
    return true;
}

bool pmc_group::start(const std::vector<request> &reqs) {
    for (auto &m : members_) {
        try {
            m.pmc.start();
        } catch (const std::system_error &e) {
            if (use_ == use::counting) {
                std::string what = "cannot start " + reqs[m.req].name + on_cpu(m.cpu);
                explain(prog_, what.c_str(), e.code().value());
                return false;
            }
            report("cannot start sampling", e);
            if (e.code().value() == ESRCH)
                std::fprintf(stderr, "  The processes sampled have exited.\n");
            return false;
        }
    }
    return true;
}

void pmc_group::stop() {
    for (auto &m : members_) {
        try {
            m.pmc.stop();
        } catch (const std::system_error &) {
            // a CPU went offline, or a process PMC's targets are gone
        }
    }
}

bool pmc_group::read(const std::vector<request> &reqs, std::vector<uint64_t> *v) {
    v->resize(members_.size());
    for (size_t i = 0; i < members_.size(); i++) {
        try {
            (*v)[i] = members_[i].pmc.read();
        } catch (const std::system_error &e) {
            if (e.code().value() == ENXIO)
                continue; // CPU offline: keep the last value
            std::string what = "cannot read " + reqs[members_[i].req].name;
            explain(prog_, what.c_str(), e.code().value());
            return false;
        }
    }
    return true;
}

} // namespace hwpmc_tools
