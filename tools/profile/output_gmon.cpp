// SPDX-License-Identifier: GPL-2.0
#include "output_gmon.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace hwpmc_tools {

namespace {

template <typename T>
void put(std::string &out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

// A directory or file name from an event or image name.
std::string file_name(std::string s) {
    for (char &c : s)
        if (c == '/' || c == '\0')
            c = '_';
    if (s.empty() || s == "." || s == "..")
        s = "_" + s;
    return s;
}

std::string base_name(const std::string &path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

gmon_histogram gmon_histogram_of(const std::vector<uint64_t> &vaddrs, uint32_t bin_bytes) {
    gmon_histogram h;
    if (vaddrs.empty() || bin_bytes == 0)
        return h;
    auto [lo, hi] = std::minmax_element(vaddrs.begin(), vaddrs.end());
    h.low = *lo & ~uint64_t{bin_bytes - 1};
    const uint64_t nbins = (*hi - h.low) / bin_bytes + 1;
    h.high = h.low + nbins * bin_bytes;
    h.bins.assign(nbins, 0);
    for (uint64_t v : vaddrs) {
        uint16_t &b = h.bins[(v - h.low) / bin_bytes];
        if (b != UINT16_MAX)
            b++;
    }
    return h;
}

std::string gmon_bytes(const gmon_histogram &h) {
    std::string out;
    // struct gmon_hdr: cookie, version (an int in the target's order), spare.
    out.append("gmon", 4);
    put<int32_t>(out, 1);
    out.append(12, '\0');
    // GMON_TAG_TIME_HIST: low_pc, high_pc, hist_size, prof_rate,
    // dimension (15 chars) and its abbreviation, then the counts.
    out.push_back('\0');
    put<uint64_t>(out, h.low);
    put<uint64_t>(out, h.high);
    put<int32_t>(out, static_cast<int32_t>(h.bins.size()));
    put<int32_t>(out, static_cast<int32_t>(h.rate));
    std::string dimen = h.dimen.substr(0, 15);
    dimen.resize(15, '\0');
    out += dimen;
    out.push_back(h.abbrev);
    for (uint16_t b : h.bins)
        put<uint16_t>(out, b);
    return out;
}

bool write_gmon_profiles(const std::string &dir, const log_data &data, symbolizer &sym,
                         const std::vector<const raw_sample *> &raws, gmon_summary *out,
                         std::string *err) {
    // (event, image path) -> the samples' ELF virtual addresses.
    std::map<std::pair<std::string, std::string>, std::vector<uint64_t>> hits;
    std::map<std::string, const pmc_desc *> events;
    for (const raw_sample *r : raws) {
        auto pit = data.pmcs.find(r->pmcid);
        const std::string event = pit != data.pmcs.end() ? pit->second.event : "unknown";
        if (pit != data.pmcs.end())
            events.emplace(event, &pit->second);
        if (r->nkernel > 0 || r->pcs.empty()) {
            out->kernel++;
            continue;
        }
        const uint64_t pc = r->pcs[0];
        const process_table::mapping *m = data.procs.find(r->pid, pc, r->t);
        const std::string *path = m ? &data.procs.dso_path(m->dso) : nullptr;
        const elf_symbols *es = path && *path != vdso_name ? sym.elf(*path) : nullptr;
        uint64_t vaddr = 0;
        if (!es || !es->offset_to_vaddr(pc - m->start + m->pgoff, &vaddr)) {
            out->unmapped++;
            continue;
        }
        hits[{event, *path}].push_back(vaddr);
    }

    std::error_code ec;
    std::map<std::string, std::set<std::string>> used; // event dir -> file names
    for (const auto &[key, vaddrs] : hits) {
        const auto &[event, image] = key;
        gmon_histogram h = gmon_histogram_of(vaddrs);
        auto eit = events.find(event);
        if (eit != events.end() && eit->second->clock_prof && eit->second->rate) {
            // A sample per `rate` ns of CPU time: 1e9 / rate per second.
            h.rate = static_cast<uint32_t>(
                std::max<uint64_t>(1, (1000000000ull + eit->second->rate / 2) / eit->second->rate));
        } else {
            h.rate = 1;
            h.dimen = "samples";
            h.abbrev = 'n';
        }
        const std::string edir = dir + "/" + file_name(event);
        std::filesystem::create_directories(edir, ec);
        if (ec) {
            *err = edir + ": " + ec.message();
            return false;
        }
        // Two images of one base name (two builds of a program) get ~2, ~3...
        std::string name = file_name(base_name(image)) + ".gmon";
        for (int n = 2; used[edir].count(name); n++)
            name = file_name(base_name(image)) + "~" + std::to_string(n) + ".gmon";
        used[edir].insert(name);
        const std::string path = edir + "/" + name;
        const std::string bytes = gmon_bytes(h);
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        if (!f || !f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) ||
            !f.flush()) {
            *err = path + ": " + std::strerror(errno ? errno : EIO);
            return false;
        }
        out->files.push_back({path, image, vaddrs.size()});
    }
    return true;
}

} // namespace hwpmc_tools
