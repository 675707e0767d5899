// SPDX-License-Identifier: GPL-2.0
// DWARF unwinding of user stacks after the fact (hwpmc-record --call-graph
// dwarf): one sample's user registers and the copy of the top of its user
// stack (a USERSTACK record) become the sample's user call chain, through
// the call frame information (.eh_frame, else .debug_frame, in the file or
// its separate debug file) of the files mapped in the process at the
// sample's time (process_table), read with libdw's CFI interface.
//
// Memory is read from the stack copy only: an address outside it ends the
// chain.  A chain that ends before its outermost frame (whose return
// address the CFI leaves undefined, as _start's and clone's, or the entry
// code of the dynamic linker, which has no CFI) is marked
// truncated, with the reason: no mapping, no CFI, a register or a stack
// word the copy does not have, a frame that does not move up the stack.
#pragma once

#include "addrspace.hpp"
#include "symbolize.hpp"

#include <hwpmc/pmclog.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hwpmc_tools {

// One sample's USERSTACK: registers in DWARF order (PMCLOG_US_REG_*), the
// bytes of stack from pl_regs[RSP] up.
struct user_stack {
    std::array<uint64_t, PMCLOG_US_NREGS> regs{};
    uint32_t flags = 0; // PMCLOG_US_F_*
    uint32_t size = 0;  // bytes asked for
    std::vector<uint8_t> stack;

    static user_stack from(const pmclog_ev_userstack &us);
    // The same in place (the stack's storage reused).
    void assign(const pmclog_ev_userstack &us);
};

// Why an unwind stopped.
enum class unwind_stop {
    outermost,   // the CFI says so (return address undefined): complete
    no_regs,     // the sample has no user registers
    unmapped,    // a PC outside every mapping of the process
    no_cfi,      // the PC's file has no CFI for it (or is unreadable)
    bad_cfi,     // an expression this unwinder does not evaluate
    off_stack,   // a read outside the stack copy (short copy, or too small)
    no_progress, // the caller's frame is not above the callee's
    depth,       // more frames than the limit
};
const char *unwind_stop_name(unwind_stop s);

struct unwind_result {
    std::vector<uint64_t> pcs; // innermost first: the sampled PC, then return addresses
    unwind_stop stop = unwind_stop::no_regs;
    bool truncated() const noexcept { return stop != unwind_stop::outermost; }
};

class dwarf_unwinder {
public:
    // Files are opened through `sym`'s names for them (sym.elf() gives the
    // file offsets' virtual addresses); separate debug files are looked for
    // under debug_dir.
    dwarf_unwinder(const process_table &procs, symbolizer &sym,
                   std::string debug_dir = "/usr/lib/debug", size_t max_depth = 127);
    ~dwarf_unwinder();
    dwarf_unwinder(const dwarf_unwinder &) = delete;
    dwarf_unwinder &operator=(const dwarf_unwinder &) = delete;

    // The user chain of process `pid`'s sample at time `t`.
    unwind_result unwind(uint32_t pid, uint64_t t, const user_stack &us);
    // One step only: the return address of the function the sample's PC
    // is in (its caller), from the CFI at the PC and the stack copy; false
    // if that step cannot be taken (no registers, no mapping or CFI, the
    // return address beyond the copy, the outermost frame).  Not counted
    // in `samples` or `stops`.
    bool leaf_caller(uint32_t pid, uint64_t t, const user_stack &us, uint64_t *ret);
    // leaf_caller() in two steps, for a caller that keeps the rules of the
    // PCs it has seen: the CFI rule at `pc` of process `pid` at time `t`
    // (nullptr: none, *why says why), cached here by file and address and
    // the same for every time of one resolver::epoch(); then the step.
    struct frame_rule;
    const frame_rule *rule_at(uint32_t pid, uint64_t t, uint64_t pc, unwind_stop *why);
    bool leaf_caller(const frame_rule *r, const user_stack &us, uint64_t *ret);

    // Counts, for a note under the report.
    uint64_t samples = 0;
    std::map<unwind_stop, uint64_t> stops;
    // A note on the samples whose unwind stopped early, "" if none did.
    std::string truncated_note() const;

private:
    struct dso_cfi;
    // The unwind, at most max_depth frames, not counted.
    unwind_result walk(uint32_t pid, uint64_t t, const user_stack &us, size_t max_depth);
    const frame_rule *rule(uint32_t dso, uint64_t vaddr, unwind_stop *why);
    dso_cfi *cfi(uint32_t dso);

    const process_table &procs_;
    symbolizer &sym_;
    std::string debug_dir_;
    size_t max_depth_;
    std::unordered_map<uint32_t, std::unique_ptr<dso_cfi>> cfis_;
    // dso -> ELF virtual address -> rule (nullptr: none, the reason in the rule map's twin)
    std::unordered_map<uint32_t, std::unordered_map<uint64_t, std::unique_ptr<frame_rule>>> rules_;
};

} // namespace hwpmc_tools
