// SPDX-License-Identifier: GPL-2.0
// The samples of a hwpmc log, resolved to functions: log_data takes the
// records (pmclog(3) events) in log order, keeps the processes' mappings,
// the PMCs and (unless told not to) the raw samples; resolver turns a raw
// sample into frames (interned functions, innermost first) through the
// mappings, the ELF symbols and the kernel's.
//
// hwpmc-report reads a log twice so that its memory does not grow with the
// samples: log_data takes every record but keeps no sample, then
// read_samples() reads the log again and hands over the samples one by one
// to be resolved against the complete (time-indexed) process table and
// aggregated.
#pragma once

#include "addrspace.hpp"
#include "log_scan.hpp"
#include "symbolize.hpp"
#include "unwind.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmclog.h>

#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <system_error>
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

// A record's time, nanoseconds.
inline uint64_t log_time(const pmclog_ev &ev) {
    return static_cast<uint64_t>(ev.pl_ts.tv_sec) * 1000000000ull +
           static_cast<uint64_t>(ev.pl_ts.tv_nsec);
}

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

// The one place where a sample and its call chain are formed from the
// log: `ev` (at time `t`, nanoseconds) is a CALLCHAIN record; *r is its
// sample (its pcs reused: no allocation once they are long enough).
// log_data::add() and read_samples() both form their samples here.
void sample_of(const pmclog_ev &ev, uint64_t t, raw_sample *r);
// A USERSTACK record `ev` (at time `t`) given to the sample *r formed from
// the CALLCHAIN before it, if it is that sample's (same time, thread and
// PMC, none yet); false if not.
bool attach_user_stack(const pmclog_ev &ev, uint64_t t, raw_sample *r);
// The same from records read in place (log_scan::callchain_ok() and
// userstack_ok() hold).
// *spare: a user_stack reused from sample to sample while no one else
// holds it (none is allocated per sample).
void sample_of(const log_scan::record &rec, raw_sample *r);
bool attach_user_stack(const log_scan::record &rec, raw_sample *r,
                       std::shared_ptr<user_stack> *spare);

// A frame-pointer chain's leaf caller (hwpmc-record -g, lib/leaf_stack.hpp):
// `pcs` is a sample's chain, its user frames from index `user` (the sampled
// PC, then the return addresses the walk found), and `caller` the return
// address one CFI step at the user PC `pc` finds.  True if the walk
// missed it and it belongs right after the PC: the chain's user PC is `pc`
// and the frame after it is not `caller` (or there is none).
bool leaf_caller_missing(const std::vector<uint64_t> &pcs, size_t user, uint64_t pc,
                         uint64_t caller);
// A USERSTACK of at most lib/leaf_stack.hpp's size: a frame-pointer
// sample's leaf aid (hwpmc-record -g), not a stack to unwind whole.
bool is_leaf_stack(const user_stack &us);

// The samples of the log in `fd`, read again from its start after a
// log_data has taken all its records (`records` of them: where that first
// reading stopped, at a truncated or corrupt record), each handed to `fn`
// in log order, formed by sample_of().  `r` is reused from one to the next.
template <typename Fn>
void read_samples(int fd, uint64_t records, Fn &&fn);
// A descriptor that can be read twice holding what `fd` holds: `fd`
// itself if it seeks (rewound to its start), else (a pipe) an unlinked
// temporary file in $TMPDIR (or /tmp) with everything `fd` gives; -1 with
// errno if it cannot be made.  A temporary file is closed by the caller.
int rereadable(int fd);

class log_data {
public:
    // The whole log in `fd` (a regular file, from its start) read in place
    // (log_scan), its samples counted but not kept: true if it was read
    // to its end so; false, with *this as it was, where the log is not
    // whole and well formed or cannot be mapped (read it with log_reader
    // then, from its start, which reports why).
    bool read_fast(int fd);
    // One record, in log order.  CALLCHAIN records are kept raw in
    // `samples` (if keep_samples) and counted; records about processes
    // wait for apply().
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
    // The processes considered are those sampled since the last call.
    void name_from_proc();

    bool keep_samples = true;
    process_table procs;
    std::map<uint32_t, pmc_desc> pmcs;
    std::vector<raw_sample> samples; // if keep_samples
    uint64_t sample_count = 0;       // CALLCHAIN records, kept or not
    uint64_t records = 0;
    uint64_t dropped_samples = 0, dropped_records = 0;
    bool initialized = false, closed = false;
    uint32_t version = 0, ncpu = 0, cputype = 0;
    int64_t wallclock = 0; // seconds since the epoch at INITIALIZE (0: unknown)
    // The kernel symbols hwpmc-record saved with the log (saved_ksyms.hpp),
    // found by read_fast() (log_reader skips their records); empty if
    // none, or if one of their records is malformed.
    std::vector<saved_ksym> saved_ksyms;
    uint64_t t_first = 0, t_last = 0; // record times

private:
    struct proc_event {
        uint64_t t;
        uint32_t type, pid, ppid;
        uint64_t start, end, pgoff;
        std::string path;
    };
    void count(uint64_t t);
    void count_sample(uint32_t pid, uint64_t t);
    std::vector<proc_event> pending_;
    std::map<uint32_t, uint64_t> first_sample_; // pid -> time of its first sample
    // the pids of the last two processes sampled (in first_sample_): the
    // samples of two CPUs come interleaved
    uint32_t last_sampled_ = UINT32_MAX, prev_sampled_ = UINT32_MAX;
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

    // A raw sample as frames, innermost first.  The one place where a
    // sample's chain is chosen: with a USERSTACK whose registers are
    // valid, its user frames are those DWARF unwinding finds (a
    // truncated_name frame outermost when it stops early), its kernel
    // frames those of the callchain; with a frame-pointer sample's leaf
    // aid (is_leaf_stack), the callchain with the leaf's caller put in
    // when the walk missed it (leaf_caller_missing); else the callchain.
    // as_resolved (if not null): `r` with that chain as its pcs and no
    // USERSTACK, for the outputs that describe addresses (--script,
    // --pprof, --gprof), so that they count what the others do.
    sample resolve(const raw_sample &r, raw_sample *as_resolved = nullptr);
    // resolve() in two steps.  The chain whose frames `r` shows: r.pcs, or
    // *buf made of them as above (*truncated: DWARF unwinding stopped
    // early).  Then the frames of `pcs` (that chain) into *frames, and the
    // sample's command (comm_name()).  The counts below count here.
    const std::vector<uint64_t> &chain(const raw_sample &r, std::vector<uint64_t> *buf,
                                       bool *truncated);
    uint32_t frames_of(const raw_sample &r, const std::vector<uint64_t> &pcs, bool truncated,
                       std::vector<uint32_t> *frames);
    // The state of process `pid`'s address space and name at time `t`: two
    // times of one process with the same epoch resolve every address and
    // the name the same (process_table::change_times()).
    uint32_t epoch(uint32_t pid, uint64_t t) {
        if (last_epochs_ && pid == last_pid_ && t >= last_epochs_->lo && t < last_epochs_->hi)
            return last_epochs_->epoch;
        // The process before it (two CPUs' samples interleave).
        if (prev_epochs_ && pid == prev_pid_ && t >= prev_epochs_->lo && t < prev_epochs_->hi)
            return prev_epochs_->epoch;
        return epoch_slow(pid, t);
    }
    // The frame of address `addr` of a chain of process `pid` at time `t`
    // (in epoch `epoch`), a kernel address or a user one, the chain's
    // innermost (`leaf`: counted in user_unmapped if no mapping holds it)
    // or not: through a cache of the addresses seen, each resolved once.
    uint32_t frame_at(uint32_t pid, uint32_t epoch, uint64_t addr, uint64_t t, bool kernel,
                      bool leaf);

    const frame_info &frame(uint32_t id) const { return frames_[id]; }
    size_t frame_count() const noexcept { return frames_.size(); }
    const std::string &comm_name(uint32_t id) const { return comms_[id]; }
    bool user_only() const noexcept { return user_only_; }
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
    // Frame-pointer samples with a leaf aid, and those whose leaf's
    // caller was put in.
    uint64_t leaf_checked = 0, leaf_inserted = 0;

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
    // Each function is named once, not each address: the frames of the
    // symbols seen (by their place among their file's, id + 1; 0: not
    // yet), and of the addresses no symbol holds.  They grow with the code
    // sampled, not with the samples.
    struct dso_state {
        const elf_symbols *es = nullptr;
        std::string base;                   // the file's name, without " (deleted)"
        std::vector<uint32_t> by_sym;       // symbol index -> frame id + 1
        std::map<uint64_t, uint32_t> other; // file offset -> frame id
    };
    dso_state &dso(uint32_t id);
    std::unordered_map<uint32_t, dso_state> dsos_;
    std::vector<uint32_t> ksym_;                    // kernel symbol index -> frame id + 1
    std::unordered_map<uint64_t, uint32_t> kother_; // address -> frame id
    std::vector<std::string> comms_;
    std::unordered_map<std::string, uint32_t> comm_ids_;
    uint32_t epoch_slow(uint32_t pid, uint64_t t);
    // epoch(): per process, its change times and the last epoch's [lo, hi)
    struct pid_epochs {
        std::vector<uint64_t> times;
        uint64_t lo = 0, hi = 0;
        uint32_t epoch = 0;
    };
    std::unordered_map<uint32_t, pid_epochs> epochs_;
    pid_epochs *last_epochs_ = nullptr, *prev_epochs_ = nullptr; // the last two processes
    uint32_t last_pid_ = 0, prev_pid_ = 0;
    // frame_at(): open addressing, bounded (starts afresh when full)
    struct pc_slot {
        uint64_t addr;
        uint32_t pid, epoch;
        uint32_t id;   // frame id + 1; 0: empty
        bool unmapped; // outside every mapping
    };
    std::vector<pc_slot> pc_slots_;
    // chain(): the CFI rules of the leaves of -g samples
    struct leaf_key {
        uint64_t pc;
        uint32_t pid, epoch;
        bool operator==(const leaf_key &) const = default;
    };
    struct leaf_hash {
        size_t operator()(const leaf_key &k) const noexcept {
            return static_cast<size_t>(
                (k.pc ^ (uint64_t{k.pid} << 40) ^ (uint64_t{k.epoch} << 24)) *
                    0x9e3779b97f4a7c15ull >>
                20);
        }
    };
    std::unordered_map<leaf_key, const dwarf_unwinder::frame_rule *, leaf_hash> leaf_rules_;
    size_t pc_used_ = 0;
    // the last comm looked up: its process, epoch and id + 1
    uint32_t comm_pid_ = 0, comm_epoch_ = 0, comm_id_ = 0;
};

template <typename Fn>
void read_samples(int fd, uint64_t records, Fn &&fn) {
    raw_sample r{};
    uint64_t n = 0;
    bool pending = false; // r waits for a USERSTACK record that may follow
    if (lseek(fd, 0, SEEK_SET) != 0)
        return;
    {
        std::shared_ptr<user_stack> spare;
        // In place; the records were read once already.
        log_scan scan(fd);
        log_scan::record rec;
        while (n < records && scan.next(&rec)) {
            if (rec.type > PMCLOG_TYPE_MAX)
                continue; // log_reader skips them too
            n++;
            if (rec.type == PMCLOG_TYPE_USERSTACK) {
                if (pending)
                    attach_user_stack(rec, &r, &spare);
                continue;
            }
            if (rec.type != PMCLOG_TYPE_CALLCHAIN)
                continue;
            if (pending)
                fn(static_cast<const raw_sample &>(r));
            sample_of(rec, &r);
            pending = true;
        }
        if (n == records || scan.clean()) {
            if (pending)
                fn(static_cast<const raw_sample &>(r));
            return;
        }
    }
    // The file cannot be mapped: read on with log_reader from where the
    // scan stopped.
    const uint64_t taken = n;
    n = 0;
    if (lseek(fd, 0, SEEK_SET) != 0)
        return;
    try {
        hwpmc::log_reader reader(fd);
        for (const pmclog_ev &ev : reader) {
            if (++n > records)
                break;
            if (n <= taken)
                continue;
            if (ev.pl_type == PMCLOG_TYPE_USERSTACK && pending) {
                attach_user_stack(ev, log_time(ev), &r);
                continue;
            }
            if (ev.pl_type != PMCLOG_TYPE_CALLCHAIN)
                continue;
            if (pending)
                fn(static_cast<const raw_sample &>(r));
            sample_of(ev, log_time(ev), &r);
            pending = true;
        }
    } catch (const std::system_error &) {
        // the first reading stopped here too, and said why
    }
    if (pending)
        fn(static_cast<const raw_sample &>(r));
}

} // namespace hwpmc_tools
