// SPDX-License-Identifier: GPL-2.0
#include "symbolize.hpp"

#include <cxxabi.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hwpmc_tools {

std::string demangle(const std::string &name) {
    if (name.size() < 3 || name[0] != '_' || name[1] != 'Z')
        return name;
    int status = 0;
    char *d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !d)
        return name;
    std::string out(d);
    std::free(d);
    return out;
}

namespace {

// An open ELF file.
struct elf_handle {
    int fd = -1;
    Elf *elf = nullptr;
    elf_handle() = default;
    elf_handle(const elf_handle &) = delete;
    elf_handle &operator=(const elf_handle &) = delete;
    ~elf_handle() {
        if (elf)
            elf_end(elf);
        if (fd >= 0)
            close(fd);
    }
    bool open(const std::string &path, std::string *why) {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            *why = std::strerror(errno);
            return false;
        }
        elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
        return check(why);
    }
    // An image in memory, which must outlive the handle.
    bool open_memory(std::vector<char> &image, std::string *why) {
        elf = elf_memory(image.data(), image.size());
        return check(why);
    }
    bool check(std::string *why) const {
        if (!elf || elf_kind(elf) != ELF_K_ELF) {
            *why = "not an ELF file";
            return false;
        }
        return true;
    }
};

} // namespace

// A copy of this process's vDSO image (the kernel maps the same one into
// every process), or empty.
std::vector<char> own_vdso() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.size() < 6 || line.compare(line.size() - 6, 6, "[vdso]") != 0)
            continue;
        char *end;
        uint64_t lo = std::strtoull(line.c_str(), &end, 16);
        uint64_t hi = *end == '-' ? std::strtoull(end + 1, nullptr, 16) : 0;
        if (hi <= lo || getauxval(AT_SYSINFO_EHDR) != lo)
            return {};
        const char *p = reinterpret_cast<const char *>(lo);
        return std::vector<char>(p, p + (hi - lo));
    }
    return {};
}

namespace {
bool file_exists(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
} // namespace

// The separate debug file of an ELF file, as gdb finds it: by build id
// under /usr/lib/debug/.build-id, then by .gnu_debuglink.
std::string debug_file_of(Elf *elf, const std::string &path, const std::string &debug_dir) {
    const void *id = nullptr;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    if (n > 1) {
        const auto *b = static_cast<const unsigned char *>(id);
        static const char hex[] = "0123456789abcdef";
        std::string s = debug_dir + "/.build-id/";
        s += hex[b[0] >> 4];
        s += hex[b[0] & 15];
        s += '/';
        for (ssize_t i = 1; i < n; i++) {
            s += hex[b[i] >> 4];
            s += hex[b[i] & 15];
        }
        s += ".debug";
        if (file_exists(s))
            return s;
    }
    GElf_Word crc;
    const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
    if (link && *link) {
        std::string dir = path.substr(0, path.rfind('/') + 1);
        for (const std::string &c : {dir + ".debug/" + link, debug_dir + dir + link, dir + link}) {
            if (c != path && file_exists(c))
                return c;
        }
    }
    return "";
}

namespace {

// The function symbols of a symbol table section.
void read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr &sh,
                 std::vector<elf_symbols::symbol> *out) {
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || !sh.sh_entsize)
        return;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym))
            continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if (type != STT_FUNC && type != STT_GNU_IFUNC)
            continue;
        if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
            continue;
        const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        int bind = GELF_ST_BIND(sym.st_info);
        out->push_back({sym.st_value, sym.st_size, name, bind == STB_GLOBAL || bind == STB_WEAK});
    }
}

// SHT_SYMTAB if `want_symtab`, else SHT_DYNSYM: false if there is none.
bool read_symbols(Elf *elf, bool want_symtab, std::vector<elf_symbols::symbol> *out) {
    bool found = false;
    for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type != (want_symtab ? SHT_SYMTAB : SHT_DYNSYM))
            continue;
        found = true;
        read_symtab(elf, scn, sh, out);
    }
    return found;
}

} // namespace

std::unique_ptr<elf_symbols> elf_symbols::load(const std::string &path, std::string *why,
                                               const std::string &debug_dir) {
    static bool init = elf_version(EV_CURRENT) != EV_NONE;
    if (!init) {
        *why = "libelf is out of date";
        return nullptr;
    }
    elf_handle h;
    std::vector<char> image;
    if (path == vdso_name) {
        // Samples in the vDSO are resolved with the vDSO of the kernel
        // this tool runs on: the same as the recording's, when it is read
        // on the machine that recorded it.
        image = own_vdso();
        if (image.empty()) {
            *why = "this process has no vDSO to read";
            return nullptr;
        }
        if (!h.open_memory(image, why))
            return nullptr;
    } else if (!h.open(path, why)) {
        return nullptr;
    }
    auto es = std::unique_ptr<elf_symbols>(new elf_symbols);
    size_t nph = 0;
    if (elf_getphdrnum(h.elf, &nph) != 0) {
        *why = "no program headers";
        return nullptr;
    }
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(h.elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
            es->segs_.push_back({ph.p_offset, ph.p_filesz, ph.p_vaddr});
    }
    es->from_ = path;
    // The full symbol table, from the file or else from its debug file;
    // the dynamic symbols as a last resort.
    if (!read_symbols(h.elf, true, &es->syms_)) {
        std::string dbg = debug_file_of(h.elf, path, debug_dir);
        elf_handle d;
        std::string ignored;
        if (!dbg.empty() && d.open(dbg, &ignored) && read_symbols(d.elf, true, &es->syms_))
            es->from_ = dbg;
        else
            read_symbols(h.elf, false, &es->syms_);
    }
    // Sorted by address; of aliases (one address, several names), prefer
    // one with a size, then a global one, then one not starting with '_'
    // ("memcpy" rather than "__memcpy_avx_unaligned").
    std::stable_sort(es->syms_.begin(), es->syms_.end(),
                     [](const symbol &a, const symbol &b) { return a.start < b.start; });
    auto score = [](const symbol &s) {
        return (s.size ? 4 : 0) + (s.global ? 2 : 0) + (s.name[0] != '_' ? 1 : 0);
    };
    std::vector<symbol> out;
    out.reserve(es->syms_.size());
    for (auto &s : es->syms_) {
        if (!out.empty() && out.back().start == s.start) {
            if (score(s) > score(out.back()))
                out.back() = std::move(s);
            continue;
        }
        out.push_back(std::move(s));
    }
    es->syms_ = std::move(out);
    return es;
}

bool elf_symbols::offset_to_vaddr(uint64_t off, uint64_t *vaddr) const {
    for (const auto &s : segs_) {
        if (off >= s.offset && off - s.offset < s.filesz) {
            *vaddr = off - s.offset + s.vaddr;
            return true;
        }
    }
    return false;
}

const elf_symbols::symbol *elf_symbols::find(uint64_t vaddr) const {
    auto it = std::upper_bound(syms_.begin(), syms_.end(), vaddr,
                               [](uint64_t v, const symbol &s) { return v < s.start; });
    // The nearest symbol at or below; a sized one must hold the address
    // (else look a little further back: nested or overlapping symbols).
    for (int tries = 0; it != syms_.begin() && tries < 4; tries++) {
        --it;
        if (it->size == 0) {
            if (tries == 0)
                return &*it;
            continue;
        }
        if (vaddr - it->start < it->size)
            return &*it;
    }
    return nullptr;
}

kernel_symbols::kernel_symbols(const std::string &path) {
    // Read in large pieces and parsed in place: /proc/kallsyms has some
    // 100,000 lines, of which the text symbols are kept, their names in
    // one block.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    std::vector<pending> found;
    std::vector<char> buf(1 << 20);
    size_t have = 0;
    bool any = false, nonzero = false, eof = false;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        c = static_cast<char>(c | 0x20);
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    // One line, without its newline: "ffffffff81000000 T _stext" or
    // "ffffffffc0a01000 t foo\t[hwpmc]".
    auto line = [&](const char *p, const char *end) {
        uint64_t addr = 0;
        const char *q = p;
        for (int d; q < end && (d = hex(*q)) >= 0; q++)
            addr = addr << 4 | static_cast<uint64_t>(d);
        if (q == p || q - p > 16 || end - q < 3 || q[0] != ' ' || q[2] != ' ')
            return;
        any = true;
        if (addr)
            nonzero = true;
        if (q[1] != 't' && q[1] != 'T')
            return;
        const char *name = q + 3;
        const char *tab = static_cast<const char *>(std::memchr(name, '\t', end - name));
        const char *name_end = tab ? tab : end;
        pending e{addr, names_.size(), static_cast<size_t>(name_end - name), 0, 0};
        names_.insert(names_.end(), name, name_end);
        if (tab) {
            const char *m = tab + 1, *m_end = end;
            if (m_end - m >= 2 && *m == '[' && m_end[-1] == ']') {
                m++;
                m_end--;
            }
            e.module = names_.size();
            e.module_len = static_cast<size_t>(m_end - m);
            names_.insert(names_.end(), m, m_end);
        }
        found.push_back(e);
    };
    while (!eof) {
        ssize_t n = read(fd, buf.data() + have, buf.size() - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            eof = true;
            n = 0;
        }
        have += static_cast<size_t>(n);
        const char *p = buf.data(), *end = buf.data() + have;
        for (;;) {
            const char *nl = static_cast<const char *>(std::memchr(p, '\n', end - p));
            if (!nl) {
                if (eof && p < end)
                    line(p, end); // the last line, without its newline
                break;
            }
            line(p, nl);
            p = nl + 1;
        }
        have = static_cast<size_t>(end - p);
        std::memmove(buf.data(), p, have);
        if (have == buf.size())
            buf.resize(buf.size() * 2); // a line longer than the buffer
    }
    close(fd);
    if (any && !nonzero) {
        restricted_ = true;
        names_.clear();
        return;
    }
    adopt(found);
}

kernel_symbols::kernel_symbols(const std::vector<saved_ksym> &list) {
    std::vector<pending> found;
    found.reserve(list.size());
    for (const saved_ksym &s : list) {
        pending e{s.start, names_.size(), s.name.size(), 0, 0};
        names_.insert(names_.end(), s.name.begin(), s.name.end());
        e.module = names_.size();
        e.module_len = s.module.size();
        names_.insert(names_.end(), s.module.begin(), s.module.end());
        found.push_back(e);
    }
    adopt(found);
}

// syms_ from `found`, whose names are in names_ (complete).
void kernel_symbols::adopt(const std::vector<pending> &found) {
    names_.shrink_to_fit();
    syms_.reserve(found.size());
    for (const pending &e : found)
        syms_.push_back({e.start,
                         {names_.data() + e.name, e.name_len},
                         {names_.data() + e.module, e.module_len}});
    if (!std::is_sorted(syms_.begin(), syms_.end(),
                        [](const symbol &a, const symbol &b) { return a.start < b.start; }))
        std::stable_sort(syms_.begin(), syms_.end(),
                         [](const symbol &a, const symbol &b) { return a.start < b.start; });
}

const kernel_symbols::symbol *kernel_symbols::find(uint64_t addr) const {
    auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                               [](uint64_t v, const symbol &s) { return v < s.start; });
    if (it == syms_.begin())
        return nullptr;
    --it;
    // Past the last symbol of the kernel's text, or of a module, is not
    // text any more: give up beyond 1 MiB.
    if (addr - it->start > (1u << 20))
        return nullptr;
    return &*it;
}

const elf_symbols *symbolizer::elf(const std::string &path) {
    auto it = files_.find(path);
    if (it != files_.end())
        return it->second.get();
    std::string why;
    auto es = elf_symbols::load(path, &why);
    // A file deleted since it was mapped (upgraded): try the new one.
    static const std::string deleted = " (deleted)";
    if (!es && path.size() > deleted.size() &&
        path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
        es = elf_symbols::load(path.substr(0, path.size() - deleted.size()), &why);
    if (!es)
        errors_[path] = why;
    return (files_[path] = std::move(es)).get();
}

const std::string &symbolizer::why_not(const std::string &path) const {
    static const std::string none;
    auto it = errors_.find(path);
    return it == errors_.end() ? none : it->second;
}

bool kallsyms_zeros(const std::string &path) {
    // The kernel lists every address, or none (zeros).  The per-CPU
    // symbols come first, at small offsets, 0 among them even when
    // addresses are shown: the first non-zero address says they are shown,
    // a text symbol at 0 that they are not.  A few hundred lines at most,
    // not the whole file (listing /proc/kallsyms is most of its cost).
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    std::vector<char> buf(1 << 16);
    size_t have = 0;
    bool any = false;
    int verdict = -1; // 0: shown, 1: zeros
    while (verdict < 0) {
        ssize_t n = read(fd, buf.data() + have, buf.size() - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += static_cast<size_t>(n);
        const char *p = buf.data(), *end = buf.data() + have;
        for (const char *nl;
             verdict < 0 &&
             (nl = static_cast<const char *>(std::memchr(p, '\n', end - p))) != nullptr;
             p = nl + 1) {
            const char *q = p;
            bool nonzero = false;
            while (q < nl && std::isxdigit(static_cast<unsigned char>(*q)))
                nonzero |= *q++ != '0';
            if (q == p || nl - q < 3 || q[0] != ' ' || q[2] != ' ')
                continue;
            any = true;
            if (nonzero)
                verdict = 0;
            else if (q[1] == 't' || q[1] == 'T')
                verdict = 1;
        }
        have = static_cast<size_t>(end - p);
        std::memmove(buf.data(), p, have);
        if (have == buf.size())
            have = 0; // a line longer than the buffer: not a kallsyms line
    }
    close(fd);
    return verdict < 0 ? any : verdict == 1;
}

kernel_symbols &symbolizer::kernel() {
    if (!kernel_ && kernel_saved()) {
        if (kallsyms_zeros(proc_kallsyms_))
            kernel_ = std::make_unique<kernel_symbols>(proc_kallsyms_);
        else
            kernel_ = std::make_unique<kernel_symbols>(saved_);
        saved_ = {};
    }
    if (!kernel_)
        kernel_ = std::make_unique<kernel_symbols>(kallsyms_);
    return *kernel_;
}

} // namespace hwpmc_tools
