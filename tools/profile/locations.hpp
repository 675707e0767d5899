// SPDX-License-Identifier: GPL-2.0
// The addresses of samples, each described for the outputs that keep
// addresses (hwpmc-report --script, --pprof): the mapping that held it
// (file, range, file offset, build id), its symbol and the offset into it,
// and the source file and line where the debug information has them.
// The frames are those resolver::resolve keeps (the same return-address
// and repeated-address rules), so these outputs count what the others do.
#pragma once

#include "samples.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hwpmc_tools {

struct address_info {
    uint64_t pc = 0;     // as logged (a return address for callers)
    bool kernel = false; // a kernel address, or the hidden-kernel frame
    bool hidden = false; // the frame standing for hidden kernel frames
    // The mapping holding it: user code mapped from a file (path is then
    // the file's), else path names what it is ("[kernel.kallsyms]",
    // "[unknown]") and the range is empty.
    bool mapped = false;
    std::string path;
    uint64_t map_start = 0, map_end = 0, pgoff = 0;
    // The symbol, when one holds the address.
    bool has_symbol = false;
    std::string symbol;     // demangled
    std::string raw_symbol; // as in the symbol table
    uint64_t symbol_offset = 0;
    // Source position (file empty when the debug information has none).
    std::string file;
    int line = 0;
    std::string function_file; // where the function starts
    int function_line = 0;
};

// ELF files' build ids and lines (libdwfl, separate debug files found by
// build id and .gnu_debuglink), each file read once.
class debug_info {
public:
    debug_info();
    ~debug_info();
    debug_info(const debug_info &) = delete;
    debug_info &operator=(const debug_info &) = delete;

    // The GNU build id of `path` in hex, "" if none or unreadable.
    std::string build_id(const std::string &path);
    // The source position of ELF virtual address `vaddr` of `path`.
    bool line(const std::string &path, uint64_t vaddr, std::string *file, int *line);

private:
    struct module;
    module *get(const std::string &path);
    std::map<std::string, std::unique_ptr<module>> mods_;
};

class address_describer {
public:
    // lines: look up source positions (slower: reads DWARF).
    address_describer(const process_table &procs, symbolizer &sym, debug_info &dbg,
                      bool user_only = false, bool lines = false);

    // A raw sample's frames, innermost first.
    std::vector<address_info> describe(const raw_sample &r);
    debug_info &debug() noexcept { return dbg_; }

private:
    address_info user(uint32_t pid, uint64_t pc, uint64_t t, bool leaf);
    address_info kernel(uint64_t pc, bool leaf);

    const process_table &procs_;
    symbolizer &sym_;
    debug_info &dbg_;
    bool user_only_, lines_;
};

} // namespace hwpmc_tools
