// SPDX-License-Identifier: GPL-2.0
#include "samples.hpp"

#include "saved_ksyms.hpp"

#include "lib/leaf_stack.hpp"

#include <hwpmc/pmc.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hwpmc_tools {

namespace {

// A logged PMC's event as users name it: the generic alias of a hardware
// event logged by its codes ("IAP-event=0xc0,umask=0x0": "instructions"),
// else the logged name.
std::string event_label(const std::string &logged, uint32_t cls, uint32_t cputype) {
    unsigned ev = 0, um = 0;
    size_t dash = logged.find('-');
    if (dash == std::string::npos ||
        std::sscanf(logged.c_str() + dash, "-event=0x%x,umask=0x%x", &ev, &um) != 2)
        return logged;
    const char *alias = pmc_alias_of_event(static_cast<enum pmc_cputype>(cputype),
                                           static_cast<enum pmc_class>(cls), ev, um);
    return alias ? alias : logged;
}

uint64_t ts_ns(const struct timespec &ts) {
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string base_name(const std::string &path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
    return buf;
}

} // namespace

namespace {

// A sample's fields, its chain's `npc` addresses at `pcs` (not aligned).
void set_sample(raw_sample *r, uint64_t t, uint32_t pid, uint32_t tid, uint32_t cpu, uint32_t pmcid,
                uint32_t flags, uint32_t nkernel, const void *pcs, uint32_t npc) {
    r->t = t;
    r->pid = pid;
    r->tid = tid;
    r->cpu = cpu;
    r->pmcid = pmcid;
    r->flags = flags;
    r->nkernel = nkernel;
    r->pcs.resize(npc);
    std::memcpy(r->pcs.data(), pcs, size_t{npc} * sizeof(uint64_t));
    r->us.reset();
}

} // namespace

void sample_of(const pmclog_ev &ev, uint64_t t, raw_sample *r) {
    const auto &c = ev.pl_u.pl_cc;
    set_sample(r, t, c.pl_pid, c.pl_tid, c.pl_cpu, c.pl_pmcid, c.pl_flags, c.pl_nkernel, c.pl_pc,
               c.pl_npc);
}

bool attach_user_stack(const pmclog_ev &ev, uint64_t t, raw_sample *r) {
    const auto &u = ev.pl_u.pl_us;
    if (r->t != t || r->pid != u.pl_pid || r->tid != u.pl_tid || r->pmcid != u.pl_pmcid || r->us)
        return false;
    r->us = std::make_shared<const user_stack>(user_stack::from(u));
    return true;
}

void sample_of(const log_scan::record &rec, raw_sample *r) {
    const auto c = log_scan::load<struct pmclog_callchain>(rec.p);
    set_sample(r, rec.time, c.pl_pid, c.pl_tid, c.pl_cpu, c.pl_pmcid, c.pl_flags, c.pl_nkernel,
               rec.p + sizeof(c), c.pl_npc);
}

bool attach_user_stack(const log_scan::record &rec, raw_sample *r,
                       std::shared_ptr<user_stack> *spare) {
    using us_rec = struct pmclog_userstack;
    const auto field = [&](size_t off) { return log_scan::load<uint32_t>(rec.p + off); };
    if (r->t != rec.time || r->pid != field(offsetof(us_rec, pl_pid)) ||
        r->tid != field(offsetof(us_rec, pl_tid)) ||
        r->pmcid != field(offsetof(us_rec, pl_pmcid)) || r->us)
        return false;
    // The spare is reused once no sample holds it any more; filled from
    // the record directly, as user_stack::from() fills one.
    if (!*spare || spare->use_count() > 1)
        *spare = std::make_shared<user_stack>();
    user_stack &u = **spare;
    std::memcpy(u.regs.data(), rec.p + offsetof(us_rec, pl_regs), sizeof(u.regs));
    u.flags = field(offsetof(us_rec, pl_flags));
    u.size = field(offsetof(us_rec, pl_size));
    const uint32_t copied = field(offsetof(us_rec, pl_copied));
    u.stack.resize(copied);
    if (copied)
        std::memcpy(u.stack.data(), rec.p + sizeof(us_rec), copied);
    r->us = *spare;
    return true;
}

bool leaf_caller_missing(const std::vector<uint64_t> &pcs, size_t user, uint64_t pc,
                         uint64_t caller) {
    if (user >= pcs.size() || pcs[user] != pc || caller == 0)
        return false;
    return user + 1 == pcs.size() || pcs[user + 1] != caller;
}

bool is_leaf_stack(const user_stack &us) {
    return us.size <= leaf_stack_size;
}

int rereadable(int fd) {
    if (lseek(fd, 0, SEEK_SET) == 0)
        return fd;
    if (errno != ESPIPE)
        return -1;
    const char *dir = std::getenv("TMPDIR");
    int tmp = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (tmp < 0)
        return -1;
    // Everything fd gives, written to tmp; false with errno.
    auto copy = [fd, tmp] {
        std::vector<char> buf(1 << 20);
        for (;;) {
            ssize_t n = read(fd, buf.data(), buf.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return n == 0;
            for (ssize_t done = 0; done < n;) {
                ssize_t w = write(tmp, buf.data() + done, static_cast<size_t>(n - done));
                if (w < 0 && errno != EINTR)
                    return false;
                done += w < 0 ? 0 : w;
            }
        }
    };
    if (copy() && lseek(tmp, 0, SEEK_SET) == 0)
        return tmp;
    int err = errno;
    close(tmp);
    errno = err;
    return -1;
}

void log_data::count(uint64_t t) {
    records++;
    if (!t_first || t < t_first)
        t_first = t;
    if (t > t_last)
        t_last = t;
    closed = false;
}

void log_data::count_sample(uint32_t pid, uint64_t t) {
    sample_count++;
    if (pid != last_sampled_) {
        if (pid != prev_sampled_)
            first_sample_.try_emplace(pid, t);
        prev_sampled_ = last_sampled_;
        last_sampled_ = pid;
    }
}

bool log_data::read_fast(int fd) {
    if (keep_samples)
        return false;
    log_data d;
    d.keep_samples = false;
    try {
        log_scan scan(fd);
        hwpmc::log_reader other; // fed the records that are not samples, one by one
        log_scan::record rec;
        bool ksyms_ok = true;
        while (scan.next(&rec)) {
            if (rec.type == PMCLOG_TYPE_CALLCHAIN) {
                if (!log_scan::callchain_ok(rec))
                    return false;
                d.count(rec.time);
                d.count_sample(log_scan::load<struct pmclog_callchain>(rec.p).pl_pid, rec.time);
            } else if (rec.type == PMCLOG_TYPE_USERSTACK) {
                if (!log_scan::userstack_ok(rec))
                    return false;
                d.count(rec.time);
            } else if (rec.type <= PMCLOG_TYPE_MAX) {
                other.feed({reinterpret_cast<const std::byte *>(rec.p), rec.len});
                const pmclog_ev *ev = other.next();
                if (!ev)
                    return false;
                d.add(*ev);
            } else if (rec.type == PMCLOG_TYPE_KSYMS && ksyms_ok) {
                ksyms_ok = decode_ksyms_record(rec.p, rec.len, &d.saved_ksyms);
            }
        }
        if (!scan.clean())
            return false;
        if (!ksyms_ok)
            d.saved_ksyms.clear();
    } catch (const std::system_error &) {
        return false;
    }
    *this = std::move(d);
    return true;
}

void log_data::add(const pmclog_ev &ev) {
    uint64_t t = log_time(ev);
    count(t);
    switch (ev.pl_type) {
    case PMCLOG_TYPE_INITIALIZE:
        initialized = true;
        version = ev.pl_u.pl_i.pl_version;
        ncpu = ev.pl_u.pl_i.pl_ncpu;
        cputype = ev.pl_u.pl_i.pl_arch;
        wallclock = static_cast<int64_t>(ev.pl_u.pl_i.pl_ts.tv_sec);
        break;
    case PMCLOG_TYPE_CLOSELOG:
        closed = true;
        break;
    case PMCLOG_TYPE_DROPNOTIFY:
        dropped_samples += ev.pl_u.pl_dn.pl_samples;
        dropped_records += ev.pl_u.pl_dn.pl_records;
        break;
    case PMCLOG_TYPE_PMCALLOCATE: {
        const auto &a = ev.pl_u.pl_a;
        pmcs[a.pl_pmcid] = {event_label(a.pl_evname ? a.pl_evname : "", a.pl_class, cputype),
                            a.pl_rate,
                            a.pl_event == PMC_EV_SOFT_CLOCK_PROF,
                            a.pl_mode,
                            a.pl_flags,
                            a.pl_cpu};
        break;
    }
    case PMCLOG_TYPE_PMCATTACH:
        pending_.push_back({t, ev.pl_type, static_cast<uint32_t>(ev.pl_u.pl_t.pl_pid), 0, 0, 0, 0,
                            ev.pl_u.pl_t.pl_pathname});
        break;
    case PMCLOG_TYPE_PROCEXEC:
        pending_.push_back({t, ev.pl_type, static_cast<uint32_t>(ev.pl_u.pl_x.pl_pid), 0, 0, 0, 0,
                            ev.pl_u.pl_x.pl_pathname});
        break;
    case PMCLOG_TYPE_PROCFORK:
        pending_.push_back({t,
                            ev.pl_type,
                            static_cast<uint32_t>(ev.pl_u.pl_f.pl_newpid),
                            static_cast<uint32_t>(ev.pl_u.pl_f.pl_oldpid),
                            0,
                            0,
                            0,
                            {}});
        break;
    case PMCLOG_TYPE_MAP_IN: {
        const auto &m = ev.pl_u.pl_mi;
        pending_.push_back({t, ev.pl_type, static_cast<uint32_t>(m.pl_pid), 0, m.pl_start, m.pl_end,
                            m.pl_pgoff, m.pl_pathname});
        break;
    }
    case PMCLOG_TYPE_MAP_OUT: {
        const auto &m = ev.pl_u.pl_mo;
        pending_.push_back(
            {t, ev.pl_type, static_cast<uint32_t>(m.pl_pid), 0, m.pl_start, m.pl_end, 0, {}});
        break;
    }
    case PMCLOG_TYPE_CALLCHAIN: {
        count_sample(ev.pl_u.pl_cc.pl_pid, t);
        if (keep_samples) {
            raw_sample r{};
            sample_of(ev, t, &r);
            samples.push_back(std::move(r));
        }
        break;
    }
    case PMCLOG_TYPE_USERSTACK:
        if (!samples.empty())
            attach_user_stack(ev, t, &samples.back());
        break;
    default:
        break;
    }
}

void log_data::apply() {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const proc_event &a, const proc_event &b) { return a.t < b.t; });
    for (const auto &e : pending_) {
        switch (e.type) {
        case PMCLOG_TYPE_PMCATTACH:
            procs.attach(e.pid, e.path, e.t);
            break;
        case PMCLOG_TYPE_PROCEXEC:
            procs.exec(e.pid, e.path, e.t);
            break;
        case PMCLOG_TYPE_PROCFORK:
            procs.fork(e.ppid, e.pid, e.t);
            break;
        case PMCLOG_TYPE_MAP_IN:
            procs.map_in(e.pid, e.start, e.end, e.pgoff, e.path, e.t);
            break;
        case PMCLOG_TYPE_MAP_OUT:
            procs.map_out(e.pid, e.start, e.end, e.t);
            break;
        default:
            break;
        }
    }
    pending_.clear();
}

void log_data::name_from_proc() {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (t_last > ts_ns(now))
        return;                         // from another boot, or another machine
    std::map<uint32_t, uint64_t> first; // pid -> first sample
    first.swap(first_sample_);
    last_sampled_ = prev_sampled_ = UINT32_MAX; // none in first_sample_ now
    const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    for (const auto &[pid, t] : first) {
        if (pid == 0 || procs.named(pid))
            continue;
        std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
        std::string st;
        if (!std::getline(f, st))
            continue;
        size_t open = st.find('('), close = st.rfind(')');
        if (open == std::string::npos || close == std::string::npos || close < open)
            continue;
        std::string comm = st.substr(open + 1, close - open - 1);
        // Field 22, starttime, in clock ticks since boot.
        std::istringstream rest(st.substr(close + 2));
        std::string field;
        unsigned long long start = 0;
        for (int i = 3; i <= 22 && rest >> field; i++)
            if (i == 22)
                start = std::strtoull(field.c_str(), nullptr, 10);
        double start_ns = static_cast<double>(start) / tick * 1e9;
        if (start_ns > static_cast<double>(t) + 1e9)
            continue; // a newer process with a recycled pid
        procs.name(pid, comm);
    }
}

resolver::resolver(const process_table &procs, symbolizer &sym, bool user_only)
    : procs_(procs), sym_(sym), user_only_(user_only), unwinder_(procs, sym) {}

uint32_t resolver::comm_id(const std::string &name) {
    auto it = comm_ids_.find(name);
    if (it != comm_ids_.end())
        return it->second;
    uint32_t id = static_cast<uint32_t>(comms_.size());
    comms_.push_back(name);
    comm_ids_.emplace(name, id);
    return id;
}

uint32_t resolver::intern(const frame_info &f, const std::string &key) {
    auto it = frame_ids_.find(key);
    if (it != frame_ids_.end())
        return it->second;
    uint32_t id = static_cast<uint32_t>(frames_.size());
    frames_.push_back(f);
    frame_ids_.emplace(key, id);
    return id;
}

resolver::dso_state &resolver::dso(uint32_t id) {
    auto [it, fresh] = dsos_.try_emplace(id);
    dso_state &d = it->second;
    if (!fresh)
        return d;
    const std::string &path = procs_.dso_path(id);
    if (recorded) {
        struct stat st;
        if (stat(path.c_str(), &st) == 0 && st.st_mtime > recorded)
            changed.push_back(path);
    }
    d.base = base_name(path);
    static const std::string deleted = " (deleted)";
    if (d.base.size() > deleted.size() &&
        d.base.compare(d.base.size() - deleted.size(), deleted.size(), deleted) == 0)
        d.base.resize(d.base.size() - deleted.size());
    d.es = sym_.elf(path);
    if (!d.es)
        unreadable[path] = sym_.why_not(path);
    else
        d.by_sym.assign(d.es->size(), 0);
    return d;
}

uint32_t resolver::user_frame(uint32_t pid, uint64_t addr, uint64_t t, bool leaf) {
    const process_table::mapping *m = procs_.find(pid, addr, t);
    if (!m) {
        if (leaf)
            user_unmapped++;
        return intern({"[unknown] " + hex(addr), "[unknown]", false, true}, "u:" + hex(addr));
    }
    uint64_t off = addr - m->start + m->pgoff;
    dso_state &d = dso(m->dso);
    uint64_t vaddr = 0;
    const elf_symbols::symbol *s = nullptr;
    if (d.es && d.es->offset_to_vaddr(off, &vaddr))
        s = d.es->find(vaddr);
    if (s) {
        uint32_t &known = d.by_sym[d.es->index_of(s)];
        if (!known)
            known = intern({demangle(s->name), d.base, false, false},
                           std::to_string(m->dso) + ":s" + hex(s->start)) +
                    1;
        return known - 1;
    }
    auto cit = d.other.find(off);
    if (cit != d.other.end())
        return cit->second;
    const std::string dkey = std::to_string(m->dso) + ":";
    uint32_t id;
    if (!d.es || !d.es->offset_to_vaddr(off, &vaddr))
        id = intern({"[unknown] " + d.base + "+" + hex(off), d.base, false, true}, dkey + hex(off));
    else
        id = intern({"[unknown] " + d.base + "+" + hex(vaddr), d.base, false, true},
                    dkey + "v" + hex(vaddr));
    d.other.emplace(off, id);
    return id;
}

uint32_t resolver::epoch_slow(uint32_t pid, uint64_t t) {
    pid_epochs *p = last_epochs_;
    if (!p || pid != last_pid_) {
        if (prev_epochs_ && pid == prev_pid_) {
            p = prev_epochs_;
        } else {
            auto [it, fresh] = epochs_.try_emplace(pid);
            p = &it->second;
            if (fresh)
                p->times = procs_.change_times(pid); // [lo, hi) empty: looked up below
        }
        // The last two processes, the newest first.
        prev_epochs_ = last_epochs_;
        prev_pid_ = last_pid_;
        last_epochs_ = p;
        last_pid_ = pid;
    }
    if (t >= p->lo && t < p->hi)
        return p->epoch;
    // The number of change times at or before t.
    auto it = std::upper_bound(p->times.begin(), p->times.end(), t);
    p->epoch = static_cast<uint32_t>(it - p->times.begin());
    p->lo = it == p->times.begin() ? 0 : *std::prev(it);
    p->hi = it == p->times.end() ? UINT64_MAX : *it;
    return p->epoch;
}

uint32_t resolver::frame_at(uint32_t pid, uint32_t ep, uint64_t addr, uint64_t t, bool kernel,
                            bool leaf) {
    constexpr size_t max_slots = 1u << 17;
    auto slot_of = [](uint64_t a, uint32_t p, uint32_t e, size_t n) {
        const uint64_t h = (a ^ (uint64_t{p} << 40) ^ (uint64_t{e} << 24)) * 0x9e3779b97f4a7c15ull;
        return static_cast<size_t>(h >> 32) & (n - 1);
    };
    if (kernel) {
        kernel_frames++;
        pid = UINT32_MAX; // the kernel's addresses are every process's
        ep = 0;
    }
    if (pc_used_ * 2 >= pc_slots_.size()) {
        // Grow; at the bound, start afresh.
        std::vector<pc_slot> old;
        old.swap(pc_slots_);
        const size_t n = old.empty() ? 4096 : old.size() >= max_slots ? old.size() : old.size() * 2;
        pc_slots_.assign(n, pc_slot{});
        pc_used_ = 0;
        if (n > old.size())
            for (const pc_slot &o : old)
                if (o.id) {
                    size_t at = slot_of(o.addr, o.pid, o.epoch, n);
                    while (pc_slots_[at].id)
                        at = (at + 1) & (n - 1);
                    pc_slots_[at] = o;
                    pc_used_++;
                }
    }
    const size_t mask = pc_slots_.size() - 1;
    size_t at = slot_of(addr, pid, ep, pc_slots_.size());
    for (; pc_slots_[at].id; at = (at + 1) & mask) {
        const pc_slot &sl = pc_slots_[at];
        if (sl.addr == addr && sl.pid == pid && sl.epoch == ep) {
            if (sl.unmapped && leaf)
                user_unmapped++;
            return sl.id - 1;
        }
    }
    const uint64_t unmapped = user_unmapped;
    const uint32_t id = kernel ? kernel_frame(addr) : user_frame(pid, addr, t, true);
    const bool out = user_unmapped != unmapped;
    if (!leaf)
        user_unmapped = unmapped;
    pc_slots_[at] = {addr, pid, ep, id + 1, out};
    pc_used_++;
    return id;
}

uint32_t resolver::kernel_frame(uint64_t addr) {
    const kernel_symbols &ks = sym_.kernel();
    if (const kernel_symbols::symbol *s = ks.find(addr)) {
        if (ksym_.size() != ks.size())
            ksym_.assign(ks.size(), 0);
        uint32_t &known = ksym_[ks.index_of(s)];
        if (!known) {
            const std::string name(s->name), module(s->module);
            std::string dso = module.empty() ? "[kernel]" : "[" + module + "]";
            known = intern({name, dso, true, false}, "k:" + name + ":" + module) + 1;
        }
        return known - 1;
    }
    auto cit = kother_.find(addr);
    if (cit != kother_.end())
        return cit->second;
    uint32_t id =
        intern({"[unknown] [kernel]+" + hex(addr), "[kernel]", true, true}, "k:" + hex(addr));
    kother_.emplace(addr, id);
    return id;
}

const std::vector<uint64_t> &resolver::chain(const raw_sample &r, std::vector<uint64_t> *buf,
                                             bool *truncated) {
    *truncated = false;
    const size_t user = std::min<size_t>(r.nkernel, r.pcs.size());
    if (r.us && (r.us->flags & PMCLOG_US_F_REGS) && is_leaf_stack(*r.us)) {
        // -g: the frame-pointer chain, and the leaf's caller if it missed it.
        leaf_checked++;
        uint64_t caller = 0;
        const uint64_t pc = r.us->regs[PMCLOG_US_REG_RIP];
        // The rule at the PC, once per process, epoch and PC.
        const leaf_key k{pc, r.pid, epoch(r.pid, r.t)};
        if (leaf_rules_.size() >= (1u << 18))
            leaf_rules_.clear(); // bounded: start afresh
        auto [it, fresh] = leaf_rules_.try_emplace(k, nullptr);
        if (fresh) {
            unwind_stop why;
            it->second = unwinder_.rule_at(r.pid, r.t, pc, &why);
        }
        if (unwinder_.leaf_caller(it->second, *r.us, &caller) &&
            leaf_caller_missing(r.pcs, user, pc, caller)) {
            leaf_inserted++;
            // r.pcs with the caller after the user PC
            const size_t n = r.pcs.size();
            buf->resize(n + 1);
            std::memcpy(buf->data(), r.pcs.data(), (user + 1) * sizeof(uint64_t));
            (*buf)[user + 1] = caller;
            std::memcpy(buf->data() + user + 2, r.pcs.data() + user + 1,
                        (n - user - 1) * sizeof(uint64_t));
            return *buf;
        }
    } else if (r.us && (r.us->flags & PMCLOG_US_F_REGS)) {
        // --call-graph dwarf: the kernel's frames, then the unwound user chain.
        unwind_result u = unwinder_.unwind(r.pid, r.t, *r.us);
        buf->assign(r.pcs.begin(), r.pcs.begin() + static_cast<ptrdiff_t>(user));
        buf->insert(buf->end(), u.pcs.begin(), u.pcs.end());
        *truncated = u.truncated();
        return *buf;
    }
    return r.pcs;
}

sample resolver::resolve(const raw_sample &r, raw_sample *as_resolved) {
    std::vector<uint64_t> unwound;
    bool truncated = false;
    const std::vector<uint64_t> &pcs = chain(r, &unwound, &truncated);
    if (as_resolved) {
        as_resolved->t = r.t;
        as_resolved->pid = r.pid;
        as_resolved->tid = r.tid;
        as_resolved->cpu = r.cpu;
        as_resolved->pmcid = r.pmcid;
        as_resolved->flags = r.flags;
        as_resolved->nkernel = r.nkernel;
        as_resolved->pcs = pcs;
        as_resolved->us.reset();
    }
    sample s{r.t, r.pid, r.tid, r.cpu, r.pmcid, 0, {}};
    s.comm = frames_of(r, pcs, truncated, &s.frames);
    return s;
}

uint32_t resolver::frames_of(const raw_sample &r, const std::vector<uint64_t> &pcs, bool truncated,
                             std::vector<uint32_t> *frames) {
    const uint32_t ep = epoch(r.pid, r.t);
    if (!comm_id_ || comm_pid_ != r.pid || comm_epoch_ != ep) {
        comm_id_ = comm_id(procs_.comm(r.pid, r.t)) + 1;
        comm_pid_ = r.pid;
        comm_epoch_ = ep;
    }
    const uint32_t comm = comm_id_ - 1;
    frames->clear();
    frames->reserve(pcs.size() + 2);
    // In the kernel, its frames hidden: one frame says so, innermost (the
    // user frames that follow are where the task entered the kernel).
    if ((r.flags & PMCLOG_CC_F_KERNEL_HIDDEN) && r.nkernel == 0) {
        kernel_hidden++;
        if (!user_only_)
            frames->push_back(intern({kernel_hidden_name, "[kernel]", true, false}, "k:[hidden]"));
    }
    for (size_t i = 0; i < pcs.size(); i++) {
        bool kernel = i < r.nkernel;
        if (kernel && user_only_)
            continue;
        // A return address is the instruction after the call, which may be
        // the first of the next function: look up the call itself.
        bool leaf = i == 0 || i == r.nkernel;
        uint64_t a = pcs[i] - (leaf ? 0 : 1);
        uint32_t id = frame_at(r.pid, ep, a, r.t, kernel, leaf);
        // Recursion shows each level; a repeated address from the unwinder
        // (the interrupted PC again as its first return address) does not.
        if (!frames->empty() && frames->back() == id && i > 0 && pcs[i] == pcs[i - 1])
            continue;
        frames->push_back(id);
    }
    if (truncated)
        frames->push_back(intern({truncated_name, "[unknown]", false, false}, "u:[truncated]"));
    return comm;
}

} // namespace hwpmc_tools
