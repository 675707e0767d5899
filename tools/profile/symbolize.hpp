// SPDX-License-Identifier: GPL-2.0
// Symbolization for the sampling tools: function symbols of ELF files
// (executables, PIE executables and shared libraries, with their separate
// debug files when installed) read with libelf, kernel symbols from
// /proc/kallsyms, and C++ demangling.
#pragma once

#include <libelf.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hwpmc_tools {

// A C++ symbol's demangled name (abi::__cxa_demangle), or the name itself.
std::string demangle(const std::string &name);

// How MAP_IN records name the vDSO, which has no file.
inline const std::string vdso_name = "[vdso]";

// A copy of this process's vDSO image (the kernel maps the same one into
// every process), or empty.
std::vector<char> own_vdso();

// The separate debug file of the ELF file `elf` at `path`, as gdb finds
// it: by build id under debug_dir/.build-id, then by .gnu_debuglink (next
// to the file, in .debug/ there, under debug_dir); "" if none.
std::string debug_file_of(Elf *elf, const std::string &path, const std::string &debug_dir);

// The function symbols of one ELF file.
class elf_symbols {
public:
    struct symbol {
        uint64_t start = 0; // ELF virtual address
        uint64_t size = 0;  // 0: unknown (up to the next symbol)
        std::string name;   // as in the symbol table (mangled)
        bool global = false;
    };

    // Read `path`; nullptr with *why set if it is not a readable ELF file.
    // vdso_name stands for the vDSO (as MAP_IN names it): this tool's own.
    // Separate debug files are looked for under `debug_dir` (.build-id/,
    // and the file's own directory below it) and next to the file.
    static std::unique_ptr<elf_symbols> load(const std::string &path, std::string *why,
                                             const std::string &debug_dir = "/usr/lib/debug");

    // A file offset as an ELF virtual address, through the PT_LOAD program
    // headers (false if no loaded segment holds it).
    bool offset_to_vaddr(uint64_t off, uint64_t *vaddr) const;

    // The function holding `vaddr`, or nullptr.
    const symbol *find(uint64_t vaddr) const;

    size_t size() const noexcept { return syms_.size(); }
    // The place of a symbol find() gave among the file's, below size().
    size_t index_of(const symbol *s) const noexcept {
        return static_cast<size_t>(s - syms_.data());
    }
    // Where the symbols came from: the file, or its debug file.
    const std::string &symbols_from() const noexcept { return from_; }

private:
    struct segment {
        uint64_t offset, filesz, vaddr;
    };
    std::vector<segment> segs_;
    std::vector<symbol> syms_; // sorted by start
    std::string from_;
};

// A kernel symbol as a list gives it (saved_ksyms.hpp: saved with a log).
struct saved_ksym {
    uint64_t start = 0;
    std::string name, module; // module: "" for the kernel itself
    bool operator==(const saved_ksym &) const = default;
};

// Whether the kallsyms file at `path` lists zero addresses (the kernel shows
// every address or none; read up to its first non-zero address, or its
// first text symbol at 0).  False if it cannot be read.
bool kallsyms_zeros(const std::string &path);

// The kernel's symbols (/proc/kallsyms: text symbols of the kernel and of
// its modules).
class kernel_symbols {
public:
    struct symbol {
        uint64_t start;
        std::string_view name;
        std::string_view module; // "" for the kernel itself
    };

    // Read `path` (default /proc/kallsyms); check restricted() and
    // available() afterwards.
    explicit kernel_symbols(const std::string &path = "/proc/kallsyms");
    // The symbols of a list (saved with a log), in any order.
    explicit kernel_symbols(const std::vector<saved_ksym> &list);

    bool available() const noexcept { return !syms_.empty(); }
    // The file lists zero addresses (kernel.kptr_restrict, or not root).
    bool restricted() const noexcept { return restricted_; }

    // The symbol holding `addr` (the last one at or below it), or nullptr.
    const symbol *find(uint64_t addr) const;
    size_t size() const noexcept { return syms_.size(); }
    const symbol &at(size_t i) const { return syms_[i]; }
    // The place of a symbol find() gave, below size().
    size_t index_of(const symbol *s) const noexcept {
        return static_cast<size_t>(s - syms_.data());
    }

private:
    struct pending {
        uint64_t start;
        size_t name, name_len, module, module_len; // offsets into names_
    };
    void adopt(const std::vector<pending> &found);

    std::vector<symbol> syms_; // sorted by start
    std::vector<char> names_;  // the names syms_ shows
    bool restricted_ = false;
};

// ELF files by path, each read once.
class symbolizer {
public:
    // nullptr if the file cannot be read (the reason is remembered).
    const elf_symbols *elf(const std::string &path);
    const std::string &why_not(const std::string &path) const;
    // The kernel's symbols: /proc/kallsyms, or the file set_kallsyms() names
    // (the kallsyms of the machine or guest that recorded the log; perf's
    // --kallsyms), read on first use.
    // The symbols saved with the log (saved_ksyms.hpp), if any, stand for
    // /proc/kallsyms; a file set_kallsyms() names comes before both.
    kernel_symbols &kernel();
    void set_kallsyms(const std::string &path) {
        kallsyms_ = path;
        kallsyms_set_ = true;
    }
    const std::string &kallsyms() const noexcept { return kallsyms_; }
    // They are shown only to a user who may see kernel addresses here:
    // where `proc_kallsyms` (this machine's) lists zero addresses
    // (kernel.kptr_restrict, not root), kernel() is read from it as
    // without them (restricted(): the report says so); where it does not
    // exist, they are used.
    void set_saved_kernel(std::vector<saved_ksym> syms,
                          std::string proc_kallsyms = "/proc/kallsyms") {
        saved_ = std::move(syms);
        has_saved_ = true;
        proc_kallsyms_ = std::move(proc_kallsyms);
    }
    // The kernel's symbols will be those saved with the log (if this user
    // may see them).
    bool kernel_saved() const noexcept { return has_saved_ && !kallsyms_set_; }

private:
    std::map<std::string, std::unique_ptr<elf_symbols>> files_;
    std::map<std::string, std::string> errors_;
    std::unique_ptr<kernel_symbols> kernel_;
    std::string kallsyms_ = "/proc/kallsyms";
    bool kallsyms_set_ = false, has_saved_ = false;
    std::vector<saved_ksym> saved_;
    std::string proc_kallsyms_;
};

} // namespace hwpmc_tools
