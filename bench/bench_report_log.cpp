// SPDX-License-Identifier: GPL-2.0
// bench_report_log -n SAMPLES -o FILE [-s SEED]: a synthetic hwpmc log for
// measuring hwpmc-report's time and memory per sample on any machine, with
// no module: a CLOCK.PROF PMC sampling 8 processes at 10 kHz, each with
// call chains of 3 to 24 frames drawn (skewed: a few hot, a long tail) from
// 4,096 stacks through functions of real files of this machine (this
// program, libc and libstdc++, at their symbols: they resolve), a fifth of
// them with kernel frames (at this machine's kernel text symbols when
// /proc/kallsyms shows them); the leaf PC varies within its function.  The address
// spaces change while it runs: every 50,000 samples one process unmaps
// libstdc++ and maps it again elsewhere (dlclose, dlopen), and every
// 200,000 one forks a child that execs.  The same SEED gives the same log.
#include "pmclog_builder.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace hwpmc::test;

constexpr uint32_t pmcid = 0x13000001;

struct text {
    std::string path;
    uint64_t start = 0, len = 0, pgoff = 0; // start: in this process
};

// The executable mapping of the file whose path contains `name`.
bool text_of(const char *name, text *out) {
    std::ifstream f("/proc/self/maps");
    std::string line;
    while (std::getline(f, line)) {
        unsigned long long lo, hi, off;
        char perms[8];
        int n = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s%n", &lo, &hi, perms, &off, &n) <
                4 ||
            perms[2] != 'x')
            continue;
        std::string path = line.substr(static_cast<size_t>(n));
        path.erase(0, path.find_first_not_of(' '));
        if (path.find(name) == std::string::npos)
            continue;
        *out = {path, lo, hi - lo, off};
        return true;
    }
    return false;
}

struct frame {
    uint32_t dso;  // index into texts; UINT32_MAX: kernel
    uint64_t off;  // offset in the mapping (the kernel: address)
    uint32_t span; // the leaf PC lies in [off, off + span)
};

struct writer {
    FILE *f;
    void put(const bytes &b) { std::fwrite(b.data(), 1, b.size(), f); }
};

} // namespace

int main(int argc, char **argv) {
    uint64_t n = 100000, seed = 1;
    const char *out = nullptr;
    int opt;
    while ((opt = getopt(argc, argv, "n:o:s:")) != -1) {
        switch (opt) {
        case 'n':
            n = std::strtoull(optarg, nullptr, 10);
            break;
        case 'o':
            out = optarg;
            break;
        case 's':
            seed = std::strtoull(optarg, nullptr, 10);
            break;
        default:
            std::fprintf(stderr, "usage: bench_report_log -n SAMPLES -o FILE [-s SEED]\n");
            return 2;
        }
    }
    if (!out) {
        std::fprintf(stderr, "usage: bench_report_log -n SAMPLES -o FILE [-s SEED]\n");
        return 2;
    }
    std::vector<text> texts(3);
    if (!text_of("bench_report_log", &texts[0]) || !text_of("libc.so", &texts[1]) ||
        !text_of("libstdc++", &texts[2])) {
        std::fprintf(stderr, "bench_report_log: cannot find my own, libc's or libstdc++'s "
                             "text in /proc/self/maps\n");
        return 1;
    }
    std::mt19937_64 rng(seed);
    auto below = [&](uint64_t m) { return m ? rng() % m : 0; };

    // Functions: 3,000 places in the three files, each at the dynamic
    // symbol below a random place (this program is linked -rdynamic), 200
    // in the kernel.
    std::vector<frame> user_fns, kernel_fns;
    for (int i = 0; i < 3000; i++) {
        uint32_t d = static_cast<uint32_t>(i % 3);
        uint64_t span = 2 + below(6);
        uint64_t len = texts[d].len > span ? texts[d].len - span : 1;
        uint64_t off = below(len);
        Dl_info info;
        if (dladdr(reinterpret_cast<void *>(texts[d].start + off), &info) && info.dli_saddr &&
            reinterpret_cast<uint64_t>(info.dli_saddr) >= texts[d].start)
            off = reinterpret_cast<uint64_t>(info.dli_saddr) - texts[d].start;
        user_fns.push_back({d, off, static_cast<uint32_t>(span)});
    }
    std::vector<uint64_t> ktext;
    {
        std::ifstream k("/proc/kallsyms");
        std::string line;
        while (std::getline(k, line)) {
            unsigned long long a;
            char type;
            if (std::sscanf(line.c_str(), "%llx %c", &a, &type) == 2 && a &&
                (type == 't' || type == 'T') && line.find('\t') == std::string::npos)
                ktext.push_back(a);
        }
    }
    for (int i = 0; i < 200; i++)
        kernel_fns.push_back(
            {UINT32_MAX,
             ktext.empty() ? 0xffffffff81000000ull + below(0x1000000) : ktext[below(ktext.size())],
             16});
    // Stacks, outermost first, sharing their outer frames in a tree.
    struct stack {
        std::vector<size_t> user, kernel; // innermost last
        std::vector<uint64_t> ret;        // per user frame: the return address's offset
    };
    std::vector<stack> stacks(4096);
    for (size_t i = 0; i < stacks.size(); i++) {
        stack &s = stacks[i];
        size_t depth = 3 + below(22);
        if (i > 0 && below(4) != 0) { // shares a prefix with an earlier stack
            const stack &p = stacks[below(i)];
            size_t keep = std::min(p.user.size(), 1 + below(depth));
            s.user.assign(p.user.begin(), p.user.begin() + static_cast<long>(keep));
            s.ret.assign(p.ret.begin(), p.ret.begin() + static_cast<long>(keep));
        }
        while (s.user.size() < depth) {
            size_t fn = below(user_fns.size());
            s.user.push_back(fn);
            s.ret.push_back(1 + below(user_fns[fn].span - 1));
        }
        if (below(5) == 0)
            for (size_t k = 1 + below(6); k > 0; k--)
                s.kernel.push_back(below(kernel_fns.size()));
    }

    FILE *f = std::fopen(out, "w");
    if (!f) {
        std::perror(out);
        return 1;
    }
    writer w{f};
    uint64_t t = 1000;
    w.put(initialize(t++));
    w.put(pmcallocate(t++, pmcid, "SOFT-CLOCK.PROF"));
    // Processes: pid -> the base of each file.
    struct proc {
        uint32_t pid;
        uint64_t base[3];
    };
    std::vector<proc> procs;
    uint32_t next_pid = 1000;
    auto map_all = [&](proc &p) {
        for (int d = 0; d < 3; d++) {
            p.base[d] = 0x7f0000000000ull + (static_cast<uint64_t>(p.pid) << 32) +
                        static_cast<uint64_t>(d) * 0x10000000ull + below(1024) * 0x1000;
            struct pmclog_map_in r {};
            r.pl_pid = p.pid;
            r.pl_start = p.base[d];
            r.pl_end = p.base[d] + texts[d].len;
            r.pl_pgoff = texts[d].pgoff;
            w.put(record(PMCLOG_TYPE_MAP_IN, r, t++, cstr(texts[d].path)));
        }
    };
    for (int i = 0; i < 8; i++) {
        proc p{next_pid++, {}};
        struct pmclog_pmcattach a {};
        a.pl_pmcid = pmcid;
        a.pl_pid = p.pid;
        w.put(record(PMCLOG_TYPE_PMCATTACH, a, t++, cstr("/usr/bin/bench" + std::to_string(i))));
        map_all(p);
        procs.push_back(p);
    }
    std::vector<uint64_t> pcs;
    for (uint64_t i = 0; i < n; i++) {
        if (i && i % 50000 == 0) { // dlclose + dlopen of libstdc++ elsewhere
            proc &p = procs[below(procs.size())];
            struct pmclog_map_out mo {};
            mo.pl_pid = p.pid;
            mo.pl_start = p.base[2];
            mo.pl_end = p.base[2] + texts[2].len;
            w.put(record(PMCLOG_TYPE_MAP_OUT, mo, t++));
            p.base[2] += 0x100000000ull;
            struct pmclog_map_in mi {};
            mi.pl_pid = p.pid;
            mi.pl_start = p.base[2];
            mi.pl_end = p.base[2] + texts[2].len;
            mi.pl_pgoff = texts[2].pgoff;
            w.put(record(PMCLOG_TYPE_MAP_IN, mi, t++, cstr(texts[2].path)));
        }
        if (i && i % 200000 == 0) { // fork, and the child execs
            proc &parent = procs[below(procs.size())];
            proc c{next_pid++, {}};
            struct pmclog_procfork pf {};
            pf.pl_ppid = parent.pid;
            pf.pl_pid = c.pid;
            w.put(record(PMCLOG_TYPE_PROCFORK, pf, t++));
            struct pmclog_procexec px {};
            px.pl_pid = c.pid;
            px.pl_pmcid = PMC_ID_INVALID;
            w.put(record(PMCLOG_TYPE_PROCEXEC, px, t++,
                         cstr("/usr/bin/child" + std::to_string(c.pid))));
            map_all(c);
            procs[below(procs.size())] = c; // it replaces one that exited
        }
        // Skewed: a few stacks take most samples.
        double u = std::uniform_real_distribution<double>(0, 1)(rng);
        const stack &s =
            stacks[static_cast<size_t>(u * u * u * static_cast<double>(stacks.size()))];
        const proc &p = procs[below(procs.size())];
        pcs.clear();
        for (auto it = s.kernel.rbegin(); it != s.kernel.rend(); ++it) {
            const frame &k = kernel_fns[*it];
            pcs.push_back(k.off + (pcs.empty() ? below(k.span) : 5));
        }
        for (size_t j = s.user.size(); j-- > 0;) {
            const frame &fn = user_fns[s.user[j]];
            uint64_t at = j + 1 == s.user.size() && s.kernel.empty() ? below(fn.span) : s.ret[j];
            pcs.push_back(p.base[fn.dso] + fn.off + at);
        }
        uint32_t nk = static_cast<uint32_t>(s.kernel.size());
        struct pmclog_callchain r {};
        r.pl_pid = p.pid;
        r.pl_tid = p.pid + static_cast<uint32_t>(below(2));
        r.pl_pmcid = pmcid;
        r.pl_cpu = static_cast<uint32_t>(below(4));
        r.pl_flags = nk ? 0 : PMCLOG_CC_F_USER;
        r.pl_nkernel = nk;
        r.pl_npc = static_cast<uint32_t>(pcs.size());
        w.put(record(PMCLOG_TYPE_CALLCHAIN, r, t, hwpmc::test::pcs(pcs)));
        t += 100000;
    }
    w.put(closelog(t));
    if (std::fclose(f) != 0) {
        std::perror(out);
        return 1;
    }
    return 0;
}
