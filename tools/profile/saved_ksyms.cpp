// SPDX-License-Identifier: GPL-2.0
#include "saved_ksyms.hpp"

#include "log_scan.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hwpmc_tools {

bool kernel_pcs_of_log(int fd, std::vector<uint64_t> *pcs, uint64_t *last_time) {
    pcs->clear();
    log_scan scan(fd);
    log_scan::record rec;
    uint64_t last = 0;
    bool any = false;
    while (scan.next(&rec)) {
        if (last_time)
            *last_time = rec.time;
        if (rec.type != PMCLOG_TYPE_CALLCHAIN)
            continue;
        if (!log_scan::callchain_ok(rec))
            return false;
        const auto c = log_scan::load<struct pmclog_callchain>(rec.p);
        const unsigned char *p = rec.p + sizeof(c);
        for (uint32_t i = 0; i < c.pl_nkernel; i++) {
            const auto pc = log_scan::load<uint64_t>(p + size_t{i} * sizeof(uint64_t));
            // Most samples repeat the last one's address: keep fewer copies.
            if (any && pc == last)
                continue;
            pcs->push_back(pc);
            last = pc;
            any = true;
        }
        if (pcs->size() > (1u << 22)) {
            std::sort(pcs->begin(), pcs->end());
            pcs->erase(std::unique(pcs->begin(), pcs->end()), pcs->end());
        }
    }
    if (!scan.clean())
        return false;
    std::sort(pcs->begin(), pcs->end());
    pcs->erase(std::unique(pcs->begin(), pcs->end()), pcs->end());
    return true;
}

std::vector<saved_ksym> needed_kernel_symbols(const kernel_symbols &ks,
                                              const std::vector<uint64_t> &pcs) {
    std::vector<size_t> idx;
    idx.reserve(pcs.size());
    for (uint64_t pc : pcs)
        for (uint64_t a : {pc, pc - 1})
            if (const kernel_symbols::symbol *s = ks.find(a))
                idx.push_back(ks.index_of(s));
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    std::vector<saved_ksym> out;
    out.reserve(idx.size());
    for (size_t i : idx) {
        const kernel_symbols::symbol &s = ks.at(i);
        out.push_back({s.start, std::string(s.name), std::string(s.module)});
    }
    return out;
}

namespace {

template <class T>
void put(std::vector<unsigned char> *b, T v) {
    const size_t at = b->size();
    b->resize(at + sizeof(v));
    std::memcpy(b->data() + at, &v, sizeof(v));
}

template <class T>
T get(const unsigned char *p) {
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

constexpr size_t head = sizeof(struct pmclog_header) + 8; // header, magic, count
constexpr size_t entry = 12;                              // start, two lengths

} // namespace

std::vector<unsigned char> encode_ksyms_records(const std::vector<saved_ksym> &syms, uint64_t t) {
    std::vector<unsigned char> out;
    size_t i = 0;
    while (i < syms.size()) {
        const size_t at = out.size();
        put<uint32_t>(&out, PMCLOG_TYPE_KSYMS);
        put<uint32_t>(&out, 0); // pl_len, below
        put<uint64_t>(&out, t);
        put<uint32_t>(&out, KSYMS_MAGIC);
        put<uint32_t>(&out, 0); // the count, below
        uint32_t n = 0;
        for (; i < syms.size(); i++) {
            const saved_ksym &s = syms[i];
            // Names longer than a u16 are not kernel symbols: cut.
            const size_t nl = std::min<size_t>(s.name.size(), UINT16_MAX);
            const size_t ml = std::min<size_t>(s.module.size(), UINT16_MAX);
            if (n && out.size() - at + entry + nl + ml + 7 > ksyms_record_max)
                break;
            put<uint64_t>(&out, s.start);
            put<uint16_t>(&out, static_cast<uint16_t>(nl));
            put<uint16_t>(&out, static_cast<uint16_t>(ml));
            out.insert(out.end(), s.name.begin(), s.name.begin() + static_cast<long>(nl));
            out.insert(out.end(), s.module.begin(), s.module.begin() + static_cast<long>(ml));
            n++;
        }
        out.resize(at + ((out.size() - at + 7) & ~size_t{7}), 0);
        const uint32_t len = static_cast<uint32_t>(out.size() - at);
        std::memcpy(out.data() + at + 4, &len, sizeof(len));
        std::memcpy(out.data() + at + sizeof(struct pmclog_header) + 4, &n, sizeof(n));
    }
    return out;
}

bool decode_ksyms_record(const unsigned char *p, size_t len, std::vector<saved_ksym> *out) {
    if (len < head || len % 8 || get<uint32_t>(p) != PMCLOG_TYPE_KSYMS ||
        get<uint32_t>(p + 4) != len ||
        get<uint32_t>(p + sizeof(struct pmclog_header)) != KSYMS_MAGIC)
        return false;
    const uint32_t n = get<uint32_t>(p + sizeof(struct pmclog_header) + 4);
    std::vector<saved_ksym> got;
    size_t at = head;
    for (uint32_t i = 0; i < n; i++) {
        if (len - at < entry)
            return false;
        saved_ksym s;
        s.start = get<uint64_t>(p + at);
        const size_t nl = get<uint16_t>(p + at + 8), ml = get<uint16_t>(p + at + 10);
        at += entry;
        if (len - at < nl + ml || nl == 0)
            return false;
        s.name.assign(reinterpret_cast<const char *>(p + at), nl);
        s.module.assign(reinterpret_cast<const char *>(p + at + nl), ml);
        at += nl + ml;
        got.push_back(std::move(s));
    }
    // Only padding after the symbols.
    if (len - at >= 8 || std::any_of(p + at, p + len, [](unsigned char c) { return c != 0; }))
        return false;
    out->insert(out->end(), std::make_move_iterator(got.begin()),
                std::make_move_iterator(got.end()));
    return true;
}

long save_kernel_symbols(const std::string &path, const std::string &kallsyms, std::string *why) {
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        *why = std::strerror(errno);
        return -1;
    }
    std::vector<uint64_t> pcs;
    uint64_t t = 0;
    // The KSYMS records take the time of the last record, after it.
    if (!kernel_pcs_of_log(fd, &pcs, &t) || pcs.empty()) {
        close(fd);
        return 0;
    }
    const kernel_symbols ks(kallsyms);
    if (!ks.available()) {
        close(fd);
        return 0;
    }
    const std::vector<saved_ksym> syms = needed_kernel_symbols(ks, pcs);
    if (syms.empty()) {
        close(fd);
        return 0;
    }
    const std::vector<unsigned char> b = encode_ksyms_records(syms, t);
    const off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0) {
        *why = std::strerror(errno);
        close(fd);
        return -1;
    }
    size_t done = 0;
    while (done < b.size()) {
        const ssize_t n =
            pwrite(fd, b.data() + done, b.size() - done, end + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *why = n < 0 ? std::strerror(errno) : "short write";
            // The log stays as it was: a partial record would spoil it.
            if (ftruncate(fd, end) != 0) {
            }
            close(fd);
            return -1;
        }
        done += static_cast<size_t>(n);
    }
    if (close(fd) != 0) {
        *why = std::strerror(errno);
        return -1;
    }
    return static_cast<long>(syms.size());
}

} // namespace hwpmc_tools
