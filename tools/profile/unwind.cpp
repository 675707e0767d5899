// SPDX-License-Identifier: GPL-2.0
#include "unwind.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hwpmc_tools {

user_stack user_stack::from(const pmclog_ev_userstack &us) {
    user_stack s;
    s.assign(us);
    return s;
}

void user_stack::assign(const pmclog_ev_userstack &us) {
    std::copy(us.pl_regs, us.pl_regs + PMCLOG_US_NREGS, regs.begin());
    flags = us.pl_flags;
    size = us.pl_size;
    if (us.pl_copied && us.pl_stack)
        stack.assign(us.pl_stack, us.pl_stack + us.pl_copied);
    else
        stack.clear();
}

const char *unwind_stop_name(unwind_stop s) {
    switch (s) {
    case unwind_stop::outermost:
        return "complete";
    case unwind_stop::no_regs:
        return "no user registers";
    case unwind_stop::unmapped:
        return "a PC outside the mappings";
    case unwind_stop::no_cfi:
        return "no CFI for a PC";
    case unwind_stop::bad_cfi:
        return "CFI this unwinder cannot evaluate";
    case unwind_stop::off_stack:
        return "beyond the stack copy";
    case unwind_stop::no_progress:
        return "a frame not above its callee";
    case unwind_stop::depth:
        return "too deep";
    }
    return "?";
}

std::string dwarf_unwinder::truncated_note() const {
    uint64_t n = 0;
    std::string why;
    for (const auto &[stop, count] : stops) {
        if (stop == unwind_stop::outermost || stop == unwind_stop::no_regs)
            continue;
        n += count;
        why += (why.empty() ? "" : ", ") + std::to_string(count) + " " + unwind_stop_name(stop);
    }
    if (!n)
        return "";
    std::string s = std::to_string(n) + " of " + std::to_string(samples) +
                    " user stacks (--call-graph dwarf) were unwound only in part and end in " +
                    "[truncated] (" + why + ")";
    if (stops.count(unwind_stop::off_stack))
        s += "; a larger copy (--call-graph dwarf,SIZE) reaches further";
    if (stops.count(unwind_stop::no_cfi))
        s += "; code without CFI (.eh_frame, or .debug_frame in a debug file) cannot be unwound";
    return s;
}

namespace {

constexpr unsigned nregs = PMCLOG_US_NREGS;
constexpr unsigned reg_sp = PMCLOG_US_REG_RSP;
constexpr unsigned reg_ip = PMCLOG_US_REG_RIP;
// How far from e_entry a PC is still in the entry code.
constexpr uint64_t entry_code = 64;

// An open ELF file (from a path, or this process's vDSO image) and its
// DWARF handle, if it has DWARF sections.
struct elf_file {
    int fd = -1;
    Elf *elf = nullptr;
    Dwarf *dw = nullptr;
    std::vector<char> image;
    elf_file() = default;
    elf_file(const elf_file &) = delete;
    elf_file &operator=(const elf_file &) = delete;
    ~elf_file() {
        if (dw)
            dwarf_end(dw);
        if (elf)
            elf_end(elf);
        if (fd >= 0)
            close(fd);
    }
    bool open(const std::string &path) {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
        return elf && elf_kind(elf) == ELF_K_ELF;
    }
    bool open_vdso() {
        image = own_vdso();
        if (image.empty())
            return false;
        elf = elf_memory(image.data(), image.size());
        return elf && elf_kind(elf) == ELF_K_ELF;
    }
    // The file's .debug_frame, or nullptr (owned by the Dwarf handle).
    Dwarf_CFI *debug_frame() {
        dw = dwarf_begin_elf(elf, DWARF_C_READ, nullptr);
        return dw ? dwarf_getcfi(dw) : nullptr;
    }
};

// The registers of one frame; `valid` has bit i when regs[i] is known.
struct reg_state {
    std::array<uint64_t, nregs> v{};
    uint32_t valid = 0;
    bool has(unsigned r) const noexcept { return r < nregs && (valid >> r & 1); }
    void set(unsigned r, uint64_t x) noexcept {
        v[r] = x;
        valid |= 1u << r;
    }
};

// The stack copy: `size` bytes of user memory from `base`.
struct stack_mem {
    uint64_t base;
    const uint8_t *data;
    size_t size;
    bool read(uint64_t addr, uint64_t *out) const noexcept {
        if (addr < base || addr - base > size || size - (addr - base) < 8)
            return false;
        std::memcpy(out, data + (addr - base), 8);
        return true;
    }
};

} // namespace

struct dwarf_unwinder::dso_cfi {
    elf_file file, debug;
    Dwarf_CFI *eh = nullptr;    // .eh_frame (dwarf_getcfi_elf: ours to end)
    Dwarf_CFI *frame = nullptr; // .debug_frame of the file or its debug file
    bool frame_read = false;    // looked for (only when .eh_frame has no FDE)
    std::string path;           // the file opened
    uint64_t entry = 0;         // e_entry (0: none)
    ~dso_cfi() {
        if (eh)
            dwarf_cfi_end(eh);
    }
};

// What one address's CFI says: how to compute the CFA, and each
// register's value in the caller (a copy of libdw's answer, cached per
// DSO and address).
struct dwarf_unwinder::frame_rule {
    enum kind : uint8_t {
        undefined,
        same,
        expr
    };
    struct reg {
        kind k = undefined;
        bool value = false; // the expression gives the value, not its address
        std::vector<Dwarf_Op> ops;
    };
    std::vector<Dwarf_Op> cfa;
    std::array<reg, nregs> regs;
    unsigned ra = reg_ip;
    bool signal = false; // a signal frame: its caller's PC is not a return address
    // The common rule of a leaf's frame in a simple form, for leaf_caller():
    // CFA = register cfa_reg + cfa_off, the return address saved at CFA +
    // ra_off, the caller's stack pointer the CFA (+ sp_off).
    bool simple = false;
    unsigned cfa_reg = 0;
    uint64_t cfa_off = 0, ra_off = 0, sp_off = 0; // the caller's SP: CFA + sp_off
};

namespace {

// A DWARF expression of CFI (DWARF 5, 2.5), over the frame's registers,
// the CFA and the stack copy.  false: it reads what is not there
// (*off_stack if that was memory), or has an operation this does not do.
bool eval(const std::vector<Dwarf_Op> &ops, const reg_state &regs, const uint64_t *cfa,
          const stack_mem &mem, uint64_t *out, bool *off_stack) {
    uint64_t st[16];
    size_t n = 0;
    auto push = [&](uint64_t v) {
        if (n == 16)
            return false;
        st[n++] = v;
        return true;
    };
    for (const Dwarf_Op &op : ops) {
        const uint8_t a = op.atom;
        bool ok = true;
        if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
            ok = push(a - DW_OP_lit0);
        } else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
            unsigned r = a - DW_OP_breg0;
            if (!regs.has(r))
                return false;
            ok = push(regs.v[r] + op.number);
        } else {
            switch (a) {
            case DW_OP_bregx:
                if (!regs.has(static_cast<unsigned>(op.number)))
                    return false;
                ok = push(regs.v[op.number] + op.number2);
                break;
            case DW_OP_call_frame_cfa:
                if (!cfa)
                    return false;
                ok = push(*cfa);
                break;
            case DW_OP_addr:
            case DW_OP_const1u:
            case DW_OP_const1s:
            case DW_OP_const2u:
            case DW_OP_const2s:
            case DW_OP_const4u:
            case DW_OP_const4s:
            case DW_OP_const8u:
            case DW_OP_const8s:
            case DW_OP_constu:
            case DW_OP_consts:
                ok = push(op.number);
                break;
            case DW_OP_plus_uconst:
                if (!n)
                    return false;
                st[n - 1] += op.number;
                break;
            case DW_OP_deref: {
                if (!n)
                    return false;
                uint64_t v;
                if (!mem.read(st[n - 1], &v)) {
                    *off_stack = true;
                    return false;
                }
                st[n - 1] = v;
                break;
            }
            case DW_OP_dup:
                ok = n && push(st[n - 1]);
                break;
            case DW_OP_drop:
                ok = n > 0;
                n -= ok;
                break;
            case DW_OP_over:
                ok = n >= 2 && push(st[n - 2]);
                break;
            case DW_OP_swap:
                ok = n >= 2;
                if (ok)
                    std::swap(st[n - 1], st[n - 2]);
                break;
            case DW_OP_neg:
            case DW_OP_not:
            case DW_OP_abs:
                ok = n > 0;
                if (ok) {
                    const auto s = static_cast<int64_t>(st[n - 1]);
                    st[n - 1] = a == DW_OP_not   ? ~st[n - 1]
                                : a == DW_OP_neg ? static_cast<uint64_t>(-s)
                                                 : static_cast<uint64_t>(s < 0 ? -s : s);
                }
                break;
            case DW_OP_nop:
                break;
            case DW_OP_plus:
            case DW_OP_minus:
            case DW_OP_mul:
            case DW_OP_and:
            case DW_OP_or:
            case DW_OP_xor:
            case DW_OP_shl:
            case DW_OP_shr:
            case DW_OP_shra:
            case DW_OP_eq:
            case DW_OP_ne:
            case DW_OP_lt:
            case DW_OP_le:
            case DW_OP_gt:
            case DW_OP_ge: {
                if (n < 2)
                    return false;
                const uint64_t y = st[--n], x = st[n - 1];
                const auto sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
                uint64_t r = 0;
                switch (a) {
                case DW_OP_plus:
                    r = x + y;
                    break;
                case DW_OP_minus:
                    r = x - y;
                    break;
                case DW_OP_mul:
                    r = x * y;
                    break;
                case DW_OP_and:
                    r = x & y;
                    break;
                case DW_OP_or:
                    r = x | y;
                    break;
                case DW_OP_xor:
                    r = x ^ y;
                    break;
                case DW_OP_shl:
                    r = y >= 64 ? 0 : x << y;
                    break;
                case DW_OP_shr:
                    r = y >= 64 ? 0 : x >> y;
                    break;
                case DW_OP_shra:
                    r = static_cast<uint64_t>(y >= 64 ? (sx < 0 ? -1 : 0) : sx >> y);
                    break;
                case DW_OP_eq:
                    r = sx == sy;
                    break;
                case DW_OP_ne:
                    r = sx != sy;
                    break;
                case DW_OP_lt:
                    r = sx < sy;
                    break;
                case DW_OP_le:
                    r = sx <= sy;
                    break;
                case DW_OP_gt:
                    r = sx > sy;
                    break;
                default: // DW_OP_ge
                    r = sx >= sy;
                    break;
                }
                st[n - 1] = r;
                break;
            }
            default:
                return false;
            }
        }
        if (!ok)
            return false;
    }
    if (!n)
        return false;
    *out = st[n - 1];
    return true;
}

constexpr unsigned base_cfa = ~0u;

// `ops` as base + offset, the base a register (*reg) or, where cfa is
// allowed, the CFA (*reg = base_cfa): what eval() computes from them, for
// the forms CFI uses for a leaf's frame; false for any other.
bool linear(const std::vector<Dwarf_Op> &ops, bool cfa, unsigned *reg, uint64_t *off) {
    if (ops.empty())
        return false;
    const Dwarf_Op &o = ops[0];
    if (o.atom >= DW_OP_breg0 && o.atom <= DW_OP_breg31) {
        *reg = o.atom - DW_OP_breg0;
        *off = o.number;
    } else if (o.atom == DW_OP_bregx) {
        if (o.number >= nregs)
            return false;
        *reg = static_cast<unsigned>(o.number);
        *off = o.number2;
    } else if (o.atom == DW_OP_call_frame_cfa && cfa) {
        *reg = base_cfa;
        *off = 0;
    } else {
        return false;
    }
    if (*reg != base_cfa && *reg >= nregs)
        return false; // eval() fails on it: left to it
    if (ops.size() == 1)
        return true;
    if (ops.size() == 2 && ops[1].atom == DW_OP_plus_uconst) {
        *off += ops[1].number;
        return true;
    }
    if (ops.size() == 3 && (ops[2].atom == DW_OP_plus || ops[2].atom == DW_OP_minus)) {
        const uint8_t a = ops[1].atom;
        uint64_t c;
        if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
            c = a - DW_OP_lit0;
        else if (a == DW_OP_constu || a == DW_OP_consts ||
                 (a >= DW_OP_const1u && a <= DW_OP_const8s))
            c = ops[1].number;
        else
            return false;
        *off = ops[2].atom == DW_OP_plus ? *off + c : *off - c;
        return true;
    }
    return false;
}

// The simple form of rule r, if it has one (frame_rule::simple).
template <class Rule>
void simplify(Rule *r) {
    unsigned reg, base;
    uint64_t off, ra_off;
    uint64_t sp_off = 0;
    if (r->ra >= nregs || r->ra == reg_sp)
        return;
    const auto &sp = r->regs[reg_sp];
    if (sp.k == Rule::expr &&
        (!sp.value || !linear(sp.ops, true, &base, &sp_off) || base != base_cfa))
        return;
    const auto &g = r->regs[r->ra];
    if (g.k != Rule::expr || g.value || !linear(r->cfa, false, &reg, &off) ||
        !linear(g.ops, true, &base, &ra_off) || base != base_cfa)
        return;
    r->simple = true;
    r->sp_off = sp_off;
    r->cfa_reg = reg;
    r->cfa_off = off;
    r->ra_off = ra_off;
}

// step() for the caller's PC only (hwpmc-record -g's leaf): the CFA, the
// return address and the caller's stack pointer, not the other registers;
// true exactly when step() would be, with the same *ret.
template <class Rule>
bool leaf_step(const Rule *r, const reg_state &cur, const stack_mem &mem, uint64_t *ret) {
    bool off = false;
    uint64_t cfa;
    if (!eval(r->cfa, cur, nullptr, mem, &cfa, &off))
        return false;
    // The value of register i in the caller, as step() finds it.
    auto value = [&](unsigned i, uint64_t *v) {
        const auto &g = r->regs[i];
        if (g.k == Rule::same) {
            if (!cur.has(i))
                return false;
            *v = cur.v[i];
            return true;
        }
        if (g.k != Rule::expr)
            return false;
        bool o = false;
        if (!eval(g.ops, cur, &cfa, mem, v, &o))
            return false;
        return g.value || mem.read(*v, v);
    };
    if (r->regs[r->ra].k == Rule::undefined)
        return false;
    uint64_t ra, sp;
    if (r->ra == reg_sp && r->regs[reg_sp].k != Rule::expr)
        ra = cfa; // as step() reads it: after the stack pointer is set
    else if (!value(r->ra, &ra))
        return false;
    if (ra == 0)
        return false;
    if (r->regs[reg_sp].k != Rule::expr)
        sp = cfa;
    else if (!value(reg_sp, &sp))
        return false;
    if (!cur.has(reg_sp) || sp <= cur.v[reg_sp])
        return false;
    *ret = ra;
    return true;
}

// One step up from the frame `cur` by its rule `r`: the caller's
// registers into *cur and its PC (the return address) into *ret; false
// with *stop why not.
template <class Rule>
bool step(const Rule *r, reg_state *curp, const stack_mem &mem, unwind_stop *stop,
          uint64_t *ret_out) {
    reg_state &cur = *curp;
    bool off_stack = false;
    uint64_t cfa;
    if (!eval(r->cfa, cur, nullptr, mem, &cfa, &off_stack)) {
        *stop = off_stack ? unwind_stop::off_stack : unwind_stop::bad_cfi;
        return false;
    }
    reg_state next;
    bool lost_to_stack = false; // a register saved beyond the copy
    for (unsigned i = 0; i < nregs; i++) {
        const auto &g = r->regs[i];
        if (g.k == Rule::same) {
            if (cur.has(i))
                next.set(i, cur.v[i]);
        } else if (g.k == Rule::expr) {
            uint64_t v;
            bool off = false;
            if (!eval(g.ops, cur, &cfa, mem, &v, &off)) {
                lost_to_stack |= off;
                continue;
            }
            if (!g.value && !mem.read(v, &v)) {
                lost_to_stack = true;
                continue;
            }
            next.set(i, v);
        }
    }
    // The CFA is the caller's stack pointer (x86-64 psABI).
    if (r->regs[reg_sp].k != Rule::expr)
        next.set(reg_sp, cfa);
    if (r->regs[r->ra].k == Rule::undefined) {
        *stop = unwind_stop::outermost;
        return false;
    }
    if (!next.has(r->ra)) {
        *stop = lost_to_stack ? unwind_stop::off_stack : unwind_stop::bad_cfi;
        return false;
    }
    const uint64_t ret = next.v[r->ra];
    if (ret == 0) {
        *stop = unwind_stop::outermost;
        return false;
    }
    if (!next.has(reg_sp) || next.v[reg_sp] <= cur.v[reg_sp]) {
        *stop = unwind_stop::no_progress;
        return false;
    }
    next.set(reg_ip, ret);
    cur = next;
    *ret_out = ret;
    return true;
}

} // namespace

dwarf_unwinder::dwarf_unwinder(const process_table &procs, symbolizer &sym, std::string debug_dir,
                               size_t max_depth)
    : procs_(procs), sym_(sym), debug_dir_(std::move(debug_dir)), max_depth_(max_depth) {
    elf_version(EV_CURRENT);
}

dwarf_unwinder::~dwarf_unwinder() = default;

dwarf_unwinder::dso_cfi *dwarf_unwinder::cfi(uint32_t dso) {
    auto it = cfis_.find(dso);
    if (it != cfis_.end())
        return it->second.get();
    auto c = std::make_unique<dso_cfi>();
    std::string path = procs_.dso_path(dso);
    bool ok;
    if (path == vdso_name) {
        ok = c->file.open_vdso();
    } else {
        ok = c->file.open(path);
        // A file deleted since it was mapped (upgraded): try the new one,
        // as the symbolizer does.
        static const std::string deleted = " (deleted)";
        if (!ok && path.size() > deleted.size() &&
            path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0) {
            path.resize(path.size() - deleted.size());
            c = std::make_unique<dso_cfi>();
            ok = c->file.open(path);
        }
    }
    if (ok) {
        GElf_Ehdr eh;
        if (gelf_getehdr(c->file.elf, &eh))
            c->entry = eh.e_entry;
        c->eh = dwarf_getcfi_elf(c->file.elf);
        c->path = path;
    }
    if (!ok)
        c.reset();
    return (cfis_[dso] = std::move(c)).get();
}

const dwarf_unwinder::frame_rule *dwarf_unwinder::rule(uint32_t dso, uint64_t vaddr,
                                                       unwind_stop *why) {
    auto &rules = rules_[dso];
    auto it = rules.find(vaddr);
    if (it != rules.end()) {
        if (!it->second)
            *why = unwind_stop::no_cfi;
        return it->second.get();
    }
    std::unique_ptr<frame_rule> r;
    dso_cfi *c = cfi(dso);
    Dwarf_Frame *f = nullptr;
    if (c && !(c->eh && dwarf_cfi_addrframe(c->eh, vaddr, &f) == 0)) {
        f = nullptr;
        // .debug_frame only when .eh_frame has nothing: opening the DWARF
        // of a file (or of its debug file) may mean decompressing all its
        // debug sections, which most files never need.
        if (!c->frame_read) {
            c->frame_read = true;
            c->frame = c->file.debug_frame();
            if (!c->frame && c->path != vdso_name) {
                const std::string dbg = debug_file_of(c->file.elf, c->path, debug_dir_);
                if (!dbg.empty() && c->debug.open(dbg))
                    c->frame = c->debug.debug_frame();
            }
        }
        if (c->frame && dwarf_cfi_addrframe(c->frame, vaddr, &f) != 0)
            f = nullptr;
    }
    if (f) {
        r = std::make_unique<frame_rule>();
        Dwarf_Op *ops = nullptr;
        size_t nops = 0;
        Dwarf_Addr start, end;
        bool signal = false;
        const int ra = dwarf_frame_info(f, &start, &end, &signal);
        if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0 || ra < 0 ||
            ra >= static_cast<int>(nregs)) {
            r.reset();
        } else {
            r->cfa.assign(ops, ops + nops);
            r->ra = static_cast<unsigned>(ra);
            r->signal = signal;
            for (unsigned i = 0; i < nregs; i++) {
                Dwarf_Op mem[3];
                frame_rule::reg &g = r->regs[i];
                if (dwarf_frame_register(f, static_cast<int>(i), mem, &ops, &nops) != 0)
                    continue; // undefined
                if (nops == 0) {
                    g.k = ops ? frame_rule::undefined : frame_rule::same;
                    continue;
                }
                g.k = frame_rule::expr;
                g.ops.assign(ops, ops + nops);
                if (g.ops.back().atom == DW_OP_stack_value) {
                    g.value = true;
                    g.ops.pop_back();
                } else if (g.ops.size() == 1 && g.ops[0].atom == DW_OP_regx) {
                    // register(R): the value is R's
                    g.value = true;
                    g.ops[0] = Dwarf_Op{DW_OP_bregx, g.ops[0].number, 0, 0};
                }
                if (g.ops.empty())
                    g.k = frame_rule::undefined;
            }
        }
        std::free(f);
    }
    if (!r)
        *why = unwind_stop::no_cfi;
    else
        simplify(r.get());
    return (rules[vaddr] = std::move(r)).get();
}

unwind_result dwarf_unwinder::unwind(uint32_t pid, uint64_t t, const user_stack &us) {
    samples++;
    unwind_result res = walk(pid, t, us, max_depth_);
    stops[res.stop]++;
    return res;
}

bool dwarf_unwinder::leaf_caller(uint32_t pid, uint64_t t, const user_stack &us, uint64_t *ret) {
    if (!(us.flags & PMCLOG_US_F_REGS))
        return false;
    unwind_stop stop;
    return leaf_caller(rule_at(pid, t, us.regs[reg_ip], &stop), us, ret);
}

bool dwarf_unwinder::leaf_caller(const frame_rule *r, const user_stack &us, uint64_t *ret) {
    if (!r || !(us.flags & PMCLOG_US_F_REGS))
        return false;
    if (r->simple) {
        // What leaf_step() computes for this form, directly.
        const uint64_t sp = us.regs[reg_sp], cfa = us.regs[r->cfa_reg] + r->cfa_off;
        const stack_mem mem{sp, us.stack.data(), us.stack.size()};
        uint64_t ra;
        if (!mem.read(cfa + r->ra_off, &ra) || ra == 0 || cfa + r->sp_off <= sp)
            return false;
        *ret = ra;
        return true;
    }
    reg_state cur;
    for (unsigned i = 0; i < nregs; i++)
        cur.set(i, us.regs[i]);
    const stack_mem mem{us.regs[reg_sp], us.stack.data(), us.stack.size()};
    return leaf_step(r, cur, mem, ret);
}

const dwarf_unwinder::frame_rule *dwarf_unwinder::rule_at(uint32_t pid, uint64_t t, uint64_t pc,
                                                          unwind_stop *stop) {
    const process_table::mapping *m = procs_.find(pid, pc, t);
    if (!m) {
        *stop = unwind_stop::unmapped;
        return nullptr;
    }
    const elf_symbols *es = sym_.elf(procs_.dso_path(m->dso));
    uint64_t vaddr = 0;
    if (!es || !es->offset_to_vaddr(pc - m->start + m->pgoff, &vaddr)) {
        *stop = unwind_stop::no_cfi;
        return nullptr;
    }
    const frame_rule *r = rule(m->dso, vaddr, stop);
    if (!r) {
        // A file's entry code (the dynamic linker's _start, which calls
        // _dl_start, has no CFI) is the outermost frame.
        const dso_cfi *c = cfi(m->dso);
        if (c && c->entry && vaddr - c->entry < entry_code)
            *stop = unwind_stop::outermost;
    }
    return r;
}

unwind_result dwarf_unwinder::walk(uint32_t pid, uint64_t t, const user_stack &us,
                                   size_t max_depth) {
    unwind_result res;
    if (!(us.flags & PMCLOG_US_F_REGS)) {
        res.stop = unwind_stop::no_regs;
        return res;
    }
    reg_state cur;
    for (unsigned i = 0; i < nregs; i++)
        cur.set(i, us.regs[i]);
    const stack_mem mem{us.regs[reg_sp], us.stack.data(), us.stack.size()};
    res.pcs.push_back(cur.v[reg_ip]);
    bool exact = true; // the PC is where the code was, not a return address
    for (;;) {
        if (res.pcs.size() >= max_depth) {
            res.stop = unwind_stop::depth;
            break;
        }
        const uint64_t pc = cur.v[reg_ip] - (exact ? 0 : 1);
        const frame_rule *r = rule_at(pid, t, pc, &res.stop);
        if (!r)
            break;
        uint64_t ret;
        if (!step(r, &cur, mem, &res.stop, &ret))
            break;
        res.pcs.push_back(ret);
        exact = r->signal;
    }
    return res;
}

} // namespace hwpmc_tools
