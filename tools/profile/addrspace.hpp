// SPDX-License-Identifier: GPL-2.0
// The processes of a hwpmc log over time: their code mappings (MAP_IN,
// MAP_OUT; a child inherits its parent's at PROCFORK; PROCEXEC starts
// afresh) and their command names (PMCATTACH, PROCEXEC paths), so that a
// sampled user address resolves to the file and offset that were mapped
// there when the sample was taken.
//
// Every mapping remembers when it came and went (the records' CLOCK_MONOTONIC
// times): samples reach the log later than the records written at the
// event itself (they wait in per-CPU rings), so a sample is resolved
// against the mappings of its own time, not those of its place in the log.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hwpmc_tools {

class process_table {
public:
    static constexpr uint64_t forever = UINT64_MAX;

    struct mapping {
        uint64_t start, end; // [start, end)
        uint64_t pgoff;      // file offset of start, bytes
        uint32_t dso;        // dso_path(dso)
        uint64_t t_in, t_out;
    };

    uint32_t dso_id(const std::string &path);
    const std::string &dso_path(uint32_t id) const { return dsos_[id]; }

    // MAP_IN: replaces what it overlaps.
    void map_in(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const std::string &path,
                uint64_t t);
    void map_out(uint32_t pid, uint64_t start, uint64_t end, uint64_t t);
    // PROCEXEC: every mapping ends; the name is the new program's.
    void exec(uint32_t pid, const std::string &path, uint64_t t);
    // PROCFORK: the child starts with the parent's mappings and name.
    void fork(uint32_t ppid, uint32_t pid, uint64_t t);
    // PMCATTACH: the process runs `path`.
    void attach(uint32_t pid, const std::string &path, uint64_t t);

    // Does the log name the process?  name() gives one it does not.
    bool named(uint32_t pid) const;
    void name(uint32_t pid, const std::string &comm);

    // The mapping of `addr` in `pid` at time `t` (or the nearest in time
    // holding it), nullptr if none.
    const mapping *find(uint32_t pid, uint64_t addr, uint64_t t) const;

    // The command name of `pid` at time `t`: the base name of what it ran,
    // or ":PID" when the log never says.
    std::string comm(uint32_t pid, uint64_t t) const;

    // The times at which what find() and comm() give for `pid` may change,
    // sorted, each once: the ends of its mappings' lives and its names'
    // times.  Between two of them (from one, inclusive, to the next) every
    // address of the process resolves the same, and so does its name.
    std::vector<uint64_t> change_times(uint32_t pid) const;

    size_t processes() const noexcept { return procs_.size(); }

private:
    struct proc {
        std::vector<mapping> maps;
        std::vector<std::pair<uint64_t, std::string>> comms; // by time
    };
    void set_comm(proc &p, const std::string &path, uint64_t t);
    void unmap(proc &p, uint64_t start, uint64_t end, uint64_t t);

    std::unordered_map<uint32_t, proc> procs_;
    std::vector<std::string> dsos_;
    std::unordered_map<std::string, uint32_t> dso_ids_;
};

} // namespace hwpmc_tools
