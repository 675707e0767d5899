// SPDX-License-Identifier: GPL-2.0
// Helpers of the tools' unit tests: synthetic hwpmc logs written with the
// ABI's record structures (libhwpmc/tests/pmclog_builder.hpp), read into a
// log_data as hwpmc-report reads a file, and this process's own mappings.
#pragma once

#include "pmclog_builder.hpp"
#include "profile/samples.hpp"

#include <hwpmc/hwpmc.hpp>

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace tools_test {

using hwpmc::test::append;
using hwpmc::test::bytes;
using hwpmc::test::cstr;
using hwpmc::test::record;

constexpr uint32_t pmcid = 0x13000001;

inline bytes map_in(uint64_t t, uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                    const std::string &path) {
    struct pmclog_map_in r {};
    r.pl_pid = pid;
    r.pl_start = start;
    r.pl_end = end;
    r.pl_pgoff = pgoff;
    return record(PMCLOG_TYPE_MAP_IN, r, t, cstr(path));
}

inline bytes map_out(uint64_t t, uint32_t pid, uint64_t start, uint64_t end) {
    struct pmclog_map_out r {};
    r.pl_pid = pid;
    r.pl_start = start;
    r.pl_end = end;
    return record(PMCLOG_TYPE_MAP_OUT, r, t);
}

inline bytes exec(uint64_t t, uint32_t pid, const std::string &path) {
    struct pmclog_procexec r {};
    r.pl_pid = pid;
    r.pl_pmcid = PMC_ID_INVALID;
    return record(PMCLOG_TYPE_PROCEXEC, r, t, cstr(path));
}

inline bytes fork(uint64_t t, uint32_t ppid, uint32_t pid) {
    struct pmclog_procfork r {};
    r.pl_ppid = ppid;
    r.pl_pid = pid;
    return record(PMCLOG_TYPE_PROCFORK, r, t);
}

inline bytes attach(uint64_t t, uint32_t pid, const std::string &path) {
    struct pmclog_pmcattach r {};
    r.pl_pmcid = pmcid;
    r.pl_pid = pid;
    return record(PMCLOG_TYPE_PMCATTACH, r, t, cstr(path));
}

// A user-mode sample of `pid` (its thread pid + 1), innermost pc first.
inline bytes sample_rec(uint64_t t, uint32_t pid, const std::vector<uint64_t> &pcs,
                        uint32_t cpu = 1) {
    return hwpmc::test::callchain(t, pmcid, pid, pcs, 0, PMCLOG_CC_F_USER, cpu);
}

// A log: INITIALIZE, a CLOCK.PROF PMCALLOCATE, `body`, CLOSELOG.
inline bytes log_of(const bytes &body) {
    bytes log = hwpmc::test::initialize(1);
    append(log, hwpmc::test::pmcallocate(2, pmcid, "SOFT-CLOCK.PROF"));
    append(log, body);
    append(log, hwpmc::test::closelog(UINT32_MAX));
    return log;
}

inline std::span<const std::byte> as_span(const bytes &b) {
    return {reinterpret_cast<const std::byte *>(b.data()), b.size()};
}

// The log read as hwpmc-report reads it (records applied in time order).
inline void read_log(const bytes &log, hwpmc_tools::log_data *data) {
    hwpmc::log_reader r(as_span(log));
    for (const pmclog_ev &ev : r)
        data->add(ev);
    data->apply();
}

// This process's mappings (/proc/self/maps): start, end, file offset,
// whether executable, and path ("" for anonymous ones).
struct mapping {
    uint64_t start = 0, end = 0, pgoff = 0;
    std::string path;
    bool exec = false;
};
inline std::vector<mapping> self_mappings() {
    std::vector<mapping> out;
    std::ifstream f("/proc/self/maps");
    std::string line;
    while (std::getline(f, line)) {
        unsigned long long lo, hi, off;
        char perms[8];
        int n = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s%n", &lo, &hi, perms, &off, &n) <
            4)
            continue;
        std::string path = line.substr(static_cast<size_t>(n));
        path.erase(0, path.find_first_not_of(' '));
        out.push_back({lo, hi, off, path, perms[2] == 'x'});
    }
    return out;
}

// The mapping of this process holding `p`; false if none.
inline bool mapping_of(const void *p, mapping *m) {
    const auto addr = reinterpret_cast<uint64_t>(p);
    for (const auto &x : self_mappings())
        if (addr >= x.start && addr < x.end) {
            *m = x;
            return true;
        }
    return false;
}

// The MAP_IN record of the mapping holding `p`.
inline bytes map_in_of(uint64_t t, uint32_t pid, const void *p) {
    mapping m;
    if (!mapping_of(p, &m))
        return {};
    return map_in(t, pid, m.start, m.end, m.pgoff, m.path);
}

// Where the functions of a fixture file (built by tools/tests/CMakeLists.txt)
// lie: the file offset of the mapping of their text, and each one's
// distance from its start, for synthetic MAP_IN records of that file at
// any address.
struct place {
    std::string path;
    uint64_t pgoff = 0, len = 0;
    uint64_t delta = 0;                 // fixture_exported
    std::map<std::string, uint64_t> fn; // every function by name
};

inline place place_of(const char *file) {
    place p;
    p.path = std::string(HWPMC_FIXTURES) + "/" + file;
    void *h = dlopen(p.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return p;
    void *exported = dlsym(h, "fixture_exported");
    void *addr_fn = dlsym(h, "fixture_hidden_address");
    mapping m;
    if (exported && addr_fn && mapping_of(exported, &m)) {
        p.pgoff = m.pgoff;
        p.len = m.end - m.start;
        auto delta = [&](const void *f) { return reinterpret_cast<uint64_t>(f) - m.start; };
        p.delta = delta(exported);
        p.fn["fixture_exported"] = delta(exported);
        p.fn["fixture_hidden_address"] = delta(addr_fn);
        p.fn["fixture_hidden"] = delta(reinterpret_cast<void *(*)()>(addr_fn)());
    }
    dlclose(h); // the file stays on disk: the tests read it by path
    return p;
}

// A MAP_IN record of fixture `p` at `base`.
inline bytes map_at(uint64_t t, uint32_t pid, uint64_t base, const place &p) {
    return map_in(t, pid, base, base + p.len, p.pgoff, p.path);
}

// What `f` writes to a FILE.
inline std::string capture(const std::function<void(FILE *)> &f) {
    char *buf = nullptr;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    f(out);
    std::fclose(out);
    std::string s(buf, len);
    std::free(buf);
    return s;
}

// The build id of an ELF file, in hex.
inline std::string build_id_of(const std::string &path) {
    elf_version(EV_CURRENT);
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
    const void *id = nullptr;
    ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    std::string s;
    for (ssize_t i = 0; i < n; i++) {
        char b[3];
        std::snprintf(b, sizeof(b), "%02x", static_cast<const unsigned char *>(id)[i]);
        s += b;
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return s;
}

} // namespace tools_test
