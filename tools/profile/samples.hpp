// SPDX-License-Identifier: GPL-2.0
// The samples of a hwpmc log, resolved to functions: log_data takes the
// records (pmclog(3) events) in log order, keeps the processes' mappings,
// the PMCs and the raw samples; resolver turns a raw sample into frames
// (interned functions, innermost first) through the mappings, the ELF
// symbols and the kernel's.
#pragma once

#include "addrspace.hpp"
#include "symbolize.hpp"
#include "unwind.hpp"

#include <hwpmc/pmclog.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hwpmc_tools {

// A PMC of the log (PMCALLOCATE).
struct pmc_desc {
    std::string event;       // "SOFT-CLOCK.PROF"
    uint64_t rate = 0;       // sampling period
    bool clock_prof = false; // SOFT CLOCK.PROF: the rate is nanoseconds of CPU time
    uint32_t mode = 0, flags = 0, cpu = 0;
};

struct raw_sample {
    uint64_t t;
    uint32_t pid, tid, cpu, pmcid, flags, nkernel;
    std::vector<uint64_t> pcs; // innermost first; pcs[0..nkernel) kernel
    // --call-graph dwarf: the sample's USERSTACK (registers and stack
    // copy), whose unwinding replaces the user part of pcs.  It is the
    // record right after the CALLCHAIN: a reader that resolves samples as
    // it reads must wait for the next record before resolving one.
    std::shared_ptr<const user_stack> us = {};
};

class log_data {
public:
    // One record, in log order.  CALLCHAIN records are kept raw; records
    // about processes wait for apply().
    void add(const pmclog_ev &ev);
    // Apply the process records added since the last call to procs, in
    // time order: each CPU has its own log buffers, so the file holds the
    // records of different CPUs out of order (a PROCFORK on one CPU may
    // come before the MAP_IN records of its parent's exec on another).
    void apply();
    // Name the sampled processes the log does not name (kernel threads,
    // processes of a system-wide log that mapped nothing since it began)
    // from /proc, if they still run and started before their first sample:
    // the log was then written on this machine, since its last boot.
    void name_from_proc();

    process_table procs;
    std::map<uint32_t, pmc_desc> pmcs;
    std::vector<raw_sample> samples;
    uint64_t records = 0;
    uint64_t dropped_samples = 0, dropped_records = 0;
    bool initialized = false, closed = false;
    uint32_t version = 0, ncpu = 0, cputype = 0;
    int64_t wallclock = 0;            // seconds since the epoch at INITIALIZE (0: unknown)
    uint64_t t_first = 0, t_last = 0; // record times

private:
    struct proc_event {
        uint64_t t;
        uint32_t type, pid, ppid;
        uint64_t start, end, pgoff;
        std::string path;
    };
    std::vector<proc_event> pending_;
};

// The frame that stands for the kernel frames of a sample the module hid
// (PMCLOG_CC_F_KERNEL_HIDDEN: the recording user may not see kernel
// addresses).
inline const std::string kernel_hidden_name = "[kernel hidden]";

// The outermost frame of a user chain that DWARF unwinding could not
// follow to its end (unwind_stop): the frames above it are missing.
inline const std::string truncated_name = "[truncated]";

// A function (or an unresolved address) that samples name.
struct frame_info {
    std::string name; // demangled, or "[unknown] dso+0xoff"
    std::string dso;  // base name of the file, "[kernel]", "[module]", "[unknown]"
    bool kernel = false;
    bool unknown = false;
};

struct sample {
    uint64_t t;
    uint32_t pid, tid, cpu, pmcid;
    uint32_t comm;                // resolver::comm_name(comm)
    std::vector<uint32_t> frames; // resolver::frame(id), innermost first
};

class resolver {
public:
    // user_only: drop the kernel frames of every sample.
    resolver(const process_table &procs, symbolizer &sym, bool user_only = false);

    // A raw sample as frames.  With a USERSTACK whose registers are valid,
    // its user frames are those DWARF unwinding finds (a truncated_name
    // frame outermost when it stops early), its kernel frames those of
    // the callchain.
    sample resolve(const raw_sample &r);

    const frame_info &frame(uint32_t id) const { return frames_[id]; }
    size_t frame_count() const noexcept { return frames_.size(); }
    const std::string &comm_name(uint32_t id) const { return comms_[id]; }
    uint32_t comm_id(const std::string &name);

    // What could not be resolved, for a note under the report.
    uint64_t user_unmapped = 0;                    // user addresses outside every MAP_IN
    uint64_t kernel_frames = 0;                    // kernel addresses seen
    uint64_t kernel_hidden = 0;                    // samples whose kernel frames the module hid
    std::map<std::string, std::string> unreadable; // dso path -> why
    // Files modified after `recorded` (seconds since the epoch; 0: do not
    // check): their symbols may not be those of the code that ran.
    int64_t recorded = 0;
    std::vector<std::string> changed;
    bool kernel_restricted() { return sym_.kernel().restricted(); }
    // The unwinder of the samples with a USERSTACK, and its counts.
    const dwarf_unwinder &unwinder() const noexcept { return unwinder_; }

private:
    uint32_t intern(const frame_info &f, const std::string &key);
    uint32_t user_frame(uint32_t pid, uint64_t addr, uint64_t t, bool leaf);
    uint32_t kernel_frame(uint64_t addr);

    const process_table &procs_;
    symbolizer &sym_;
    bool user_only_;
    dwarf_unwinder unwinder_;
    std::vector<frame_info> frames_;
    std::unordered_map<std::string, uint32_t> frame_ids_;
    std::unordered_map<uint64_t, uint32_t> kcache_;
    std::unordered_map<uint32_t, std::unordered_map<uint64_t, uint32_t>> ucache_; // dso -> off
    std::unordered_map<uint32_t, bool> checked_; // dso -> checked its mtime
    std::vector<std::string> comms_;
    std::unordered_map<std::string, uint32_t> comm_ids_;
};

} // namespace hwpmc_tools
