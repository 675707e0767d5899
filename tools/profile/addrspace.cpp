// SPDX-License-Identifier: GPL-2.0
#include "addrspace.hpp"

#include <algorithm>

namespace hwpmc_tools {

namespace {

std::string base_name(const std::string &path) {
    std::string p = path;
    static const std::string deleted = " (deleted)";
    if (p.size() > deleted.size() &&
        p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0)
        p.resize(p.size() - deleted.size());
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

// "libc.so.6", "ld-linux-x86-64.so.2", "plugin.so", and the kernel's
// "[vdso]": not a program.
bool is_library(const std::string &base) {
    return base.find(".so") != std::string::npos || (!base.empty() && base[0] == '[');
}

bool live_at(const process_table::mapping &m, uint64_t t) {
    return m.t_in <= t && t < m.t_out;
}

} // namespace

uint32_t process_table::dso_id(const std::string &path) {
    auto it = dso_ids_.find(path);
    if (it != dso_ids_.end())
        return it->second;
    uint32_t id = static_cast<uint32_t>(dsos_.size());
    dsos_.push_back(path);
    dso_ids_.emplace(path, id);
    return id;
}

void process_table::set_comm(proc &p, const std::string &path, uint64_t t) {
    std::string c = base_name(path);
    if (c.empty())
        return;
    auto it = std::upper_bound(
        p.comms.begin(), p.comms.end(), t,
        [](uint64_t v, const std::pair<uint64_t, std::string> &e) { return v < e.first; });
    p.comms.insert(it, {t, c});
}

// [start, end) of `p` is unmapped at `t`: the mappings there end; their
// parts outside it stay.
void process_table::unmap(proc &p, uint64_t start, uint64_t end, uint64_t t) {
    std::vector<mapping> rest;
    for (auto &m : p.maps) {
        if (!live_at(m, t) || m.end <= start || end <= m.start)
            continue;
        if (m.start < start)
            rest.push_back({m.start, start, m.pgoff, m.dso, t, m.t_out});
        if (end < m.end)
            rest.push_back({end, m.end, m.pgoff + (end - m.start), m.dso, t, m.t_out});
        m.t_out = t;
    }
    for (auto &m : rest)
        p.maps.push_back(m);
}

void process_table::map_in(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                           const std::string &path, uint64_t t) {
    if (end <= start)
        return;
    proc &p = procs_[pid];
    // A program (not a library) mapped: the process runs it from now on.
    // System-wide sampling logs no PROCEXEC, only the MAP_IN records of
    // the new image (the executable's first: the kernel lists mappings in
    // address order, libraries above the program), so this is an exec:
    // what was mapped before is gone.
    std::string base = base_name(path);
    if (!is_library(base)) {
        for (auto &m : p.maps)
            if (m.t_in < t && m.t_out > t)
                m.t_out = t;
        if (comm(pid, t) != base)
            set_comm(p, path, t);
    } else if (p.comms.empty() && p.maps.empty()) {
        set_comm(p, path, t);
    }
    // What the new mapping overlaps ends now (mmap over an old mapping, or
    // an exec that no PROCEXEC announced); the parts outside it stay.
    unmap(p, start, end, t);
    p.maps.push_back({start, end, pgoff, dso_id(path), t, forever});
}

void process_table::map_out(uint32_t pid, uint64_t start, uint64_t end, uint64_t t) {
    auto pit = procs_.find(pid);
    if (pit == procs_.end())
        return;
    proc &p = pit->second;
    unmap(p, start, end, t);
}

void process_table::exec(uint32_t pid, const std::string &path, uint64_t t) {
    proc &p = procs_[pid];
    for (auto &m : p.maps)
        if (m.t_out > t)
            m.t_out = std::max(m.t_in, t);
    set_comm(p, path, t);
}

void process_table::fork(uint32_t ppid, uint32_t pid, uint64_t t) {
    auto pit = procs_.find(ppid);
    proc &c = procs_[pid];
    if (pit == procs_.end())
        return;
    const proc &p = pit->second;
    for (const auto &m : p.maps)
        if (live_at(m, t))
            c.maps.push_back({m.start, m.end, m.pgoff, m.dso, t, forever});
    if (!p.comms.empty()) {
        // The name the parent had at the fork, unless the child has a
        // later one already (its exec came first in the log).
        std::string name = comm(ppid, t);
        if (c.comms.empty() || c.comms.front().first > t)
            c.comms.insert(c.comms.begin(), {t, name});
    }
}

bool process_table::named(uint32_t pid) const {
    auto it = procs_.find(pid);
    return it != procs_.end() && !it->second.comms.empty();
}

void process_table::name(uint32_t pid, const std::string &comm) {
    procs_[pid].comms.insert(procs_[pid].comms.begin(), {0, comm});
}

void process_table::attach(uint32_t pid, const std::string &path, uint64_t t) {
    proc &p = procs_[pid];
    if (!path.empty())
        set_comm(p, path, t);
}

const process_table::mapping *process_table::find(uint32_t pid, uint64_t addr, uint64_t t) const {
    auto pit = procs_.find(pid);
    if (pit == procs_.end())
        return nullptr;
    const mapping *live = nullptr, *later = nullptr, *earlier = nullptr;
    for (const auto &m : pit->second.maps) {
        if (addr < m.start || addr >= m.end)
            continue;
        if (live_at(m, t)) {
            if (!live || m.t_in > live->t_in)
                live = &m;
        } else if (m.t_in > t) {
            // Mapped just after the sample: an exec's MAP_IN records come
            // once the new image runs, after its first samples.
            if (!later || m.t_in < later->t_in)
                later = &m;
        } else if (!earlier || m.t_out > earlier->t_out) {
            earlier = &m;
        }
    }
    return live ? live : later ? later : earlier;
}

std::vector<uint64_t> process_table::change_times(uint32_t pid) const {
    std::vector<uint64_t> v;
    auto pit = procs_.find(pid);
    if (pit == procs_.end())
        return v;
    for (const auto &m : pit->second.maps) {
        v.push_back(m.t_in);
        if (m.t_out != forever)
            v.push_back(m.t_out);
    }
    for (const auto &c : pit->second.comms)
        v.push_back(c.first);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

std::string process_table::comm(uint32_t pid, uint64_t t) const {
    auto pit = procs_.find(pid);
    if (pit != procs_.end() && !pit->second.comms.empty()) {
        const auto &cs = pit->second.comms;
        auto it = std::upper_bound(
            cs.begin(), cs.end(), t,
            [](uint64_t v, const std::pair<uint64_t, std::string> &e) { return v < e.first; });
        return it == cs.begin() ? it->second : std::prev(it)->second;
    }
    if (pid == 0)
        return "swapper";
    return ":" + std::to_string(pid);
}

} // namespace hwpmc_tools
