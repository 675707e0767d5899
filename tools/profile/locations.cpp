// SPDX-License-Identifier: GPL-2.0
#include "locations.hpp"

#include <hwpmc/pmc.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

namespace hwpmc_tools {

// --- debug_info ----------------------------------------------------------

struct debug_info::module {
    Dwfl *dwfl = nullptr;
    Dwfl_Module *mod = nullptr;
    Dwarf_Addr bias = 0; // Dwfl address = ELF virtual address + bias
    bool have_bias = false;
    ~module() {
        if (dwfl)
            dwfl_end(dwfl);
    }
};

namespace {

char *debuginfo_path = nullptr;
const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

} // namespace

debug_info::debug_info() = default;
debug_info::~debug_info() = default;

debug_info::module *debug_info::get(const std::string &path) {
    auto it = mods_.find(path);
    if (it != mods_.end())
        return it->second.get();
    auto m = std::make_unique<module>();
    if (!path.empty() && path[0] == '/') {
        m->dwfl = dwfl_begin(&offline_callbacks);
        if (m->dwfl) {
            m->mod = dwfl_report_offline(m->dwfl, path.c_str(), path.c_str(), -1);
            dwfl_report_end(m->dwfl, nullptr, nullptr);
        }
    }
    module *p = m.get();
    mods_.emplace(path, std::move(m));
    return p->mod ? p : nullptr;
}

std::string debug_info::build_id(const std::string &path) {
    module *m = get(path);
    if (!m)
        return "";
    const unsigned char *bits = nullptr;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
    static const char hex[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < n; i++) {
        s += hex[bits[i] >> 4];
        s += hex[bits[i] & 15];
    }
    return s;
}

bool debug_info::line(const std::string &path, uint64_t vaddr, std::string *file, int *line) {
    module *m = get(path);
    if (!m)
        return false;
    if (!m->have_bias) {
        GElf_Addr bias = 0;
        if (!dwfl_module_getelf(m->mod, &bias))
            return false;
        m->bias = bias;
        m->have_bias = true;
    }
    Dwfl_Line *l = dwfl_module_getsrc(m->mod, vaddr + m->bias);
    if (!l)
        return false;
    int ln = 0;
    const char *f = dwfl_lineinfo(l, nullptr, &ln, nullptr, nullptr, nullptr);
    if (!f || ln <= 0)
        return false;
    *file = f;
    *line = ln;
    return true;
}

// --- address_describer -----------------------------------------------------

address_describer::address_describer(const process_table &procs, symbolizer &sym, debug_info &dbg,
                                     bool user_only, bool lines)
    : procs_(procs), sym_(sym), dbg_(dbg), user_only_(user_only), lines_(lines) {}

address_info address_describer::user(uint32_t pid, uint64_t pc, uint64_t t, bool leaf) {
    address_info a;
    a.pc = pc;
    // A return address is the instruction after the call: look up the call.
    uint64_t look = pc - (leaf ? 0 : 1);
    const process_table::mapping *m = procs_.find(pid, look, t);
    if (!m) {
        a.path = "[unknown]";
        return a;
    }
    a.mapped = true;
    a.path = procs_.dso_path(m->dso);
    a.map_start = m->start;
    a.map_end = m->end;
    a.pgoff = m->pgoff;
    const elf_symbols *es = sym_.elf(a.path);
    uint64_t vaddr = 0;
    if (!es || !es->offset_to_vaddr(look - m->start + m->pgoff, &vaddr))
        return a;
    if (const elf_symbols::symbol *s = es->find(vaddr)) {
        a.has_symbol = true;
        a.raw_symbol = s->name;
        a.symbol = demangle(s->name);
        a.symbol_offset = vaddr + (pc - look) - s->start;
        if (lines_) {
            dbg_.line(a.path, vaddr, &a.file, &a.line);
            dbg_.line(a.path, s->start, &a.function_file, &a.function_line);
        }
    }
    return a;
}

address_info address_describer::kernel(uint64_t pc, bool leaf) {
    address_info a;
    a.pc = pc;
    a.kernel = true;
    a.path = "[kernel.kallsyms]";
    uint64_t look = pc - (leaf ? 0 : 1);
    if (const kernel_symbols::symbol *s = sym_.kernel().find(look)) {
        a.has_symbol = true;
        a.symbol = a.raw_symbol = std::string(s->name);
        a.symbol_offset = pc - s->start;
        if (!s->module.empty())
            a.path = "[" + std::string(s->module) + "]";
    }
    return a;
}

std::vector<address_info> address_describer::describe(const raw_sample &r) {
    std::vector<address_info> out;
    out.reserve(r.pcs.size() + 1);
    if ((r.flags & PMCLOG_CC_F_KERNEL_HIDDEN) && r.nkernel == 0 && !user_only_) {
        address_info a;
        a.kernel = a.hidden = a.has_symbol = true;
        a.path = "[kernel.kallsyms]";
        a.symbol = a.raw_symbol = kernel_hidden_name;
        out.push_back(a);
    }
    for (size_t i = 0; i < r.pcs.size(); i++) {
        bool kern = i < r.nkernel;
        if (kern && user_only_)
            continue;
        // The unwinder may give the interrupted PC again as the first
        // return address: resolver::resolve drops it, and so do these.
        if (i > 0 && r.pcs[i] == r.pcs[i - 1] && (i - 1 < r.nkernel) == kern && !out.empty())
            continue;
        bool leaf = i == 0 || i == r.nkernel;
        out.push_back(kern ? kernel(r.pcs[i], leaf) : user(r.pid, r.pcs[i], r.t, leaf));
    }
    return out;
}

} // namespace hwpmc_tools
