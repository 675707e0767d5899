// SPDX-License-Identifier: GPL-2.0
#include "output_export.hpp"

#include <algorithm>
#include <cinttypes>

namespace hwpmc_tools {

void print_script_sample(FILE *out, const std::string &comm, const raw_sample &r,
                         const std::string &event, uint64_t period, int event_width,
                         const std::vector<address_info> &frames) {
    // perf prints the command unpadded when a callchain follows, and the
    // time as seconds.microseconds of the recording's clock.
    std::fprintf(out, "%s %5u/%-5u [%03u] %5" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " %*s: \n",
                 comm.c_str(), r.pid, r.tid, r.cpu, r.t / 1000000000u, (r.t % 1000000000u) / 1000u,
                 period, event_width, event.c_str());
    for (const address_info &a : frames) {
        std::fprintf(out, "\t%16" PRIx64 " ", a.pc);
        if (a.has_symbol)
            std::fprintf(out, "%s+0x%" PRIx64, a.symbol.c_str(), a.symbol_offset);
        else
            std::fprintf(out, "[unknown]");
        std::fprintf(out, " (%s)\n", a.path.c_str());
    }
    std::fprintf(out, "\n");
}

void print_script(FILE *out, const log_data &data, const resolver &res, address_describer &d,
                  const std::vector<const raw_sample *> &raws, const std::vector<sample> &samples) {
    auto event_of = [&](uint32_t pmcid) -> std::pair<std::string, uint64_t> {
        auto it = data.pmcs.find(pmcid);
        if (it == data.pmcs.end()) {
            char buf[32];
            std::snprintf(buf, sizeof(buf), "pmc-0x%x", pmcid);
            return {buf, 0};
        }
        return {it->second.event, it->second.rate};
    };
    int width = 0;
    for (const raw_sample *r : raws)
        width = std::max(width, static_cast<int>(event_of(r->pmcid).first.size()));
    for (size_t i = 0; i < raws.size(); i++) {
        auto [ev, period] = event_of(raws[i]->pmcid);
        print_script_sample(out, res.comm_name(samples[i].comm), *raws[i], ev, period, width,
                            d.describe(*raws[i]));
    }
}

} // namespace hwpmc_tools
