// SPDX-License-Identifier: GPL-2.0
// hwpmc-report: the flat profile and the call graphs, as text laid out
// like `perf report --stdio`.
#include "output.hpp"

#include <algorithm>
#include <cstring>

namespace hwpmc_tools {

namespace {

std::string percent(uint64_t n, uint64_t total) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f%%",
                  total ? 100.0 * static_cast<double>(n) / static_cast<double>(total) : 0.0);
    return buf;
}

double share(uint64_t n, uint64_t total) {
    return total ? 100.0 * static_cast<double>(n) / static_cast<double>(total) : 0.0;
}

// A call tree under its entry, as perf draws it:
//
//            |
//            ---hot
//               middle
//               |
//               |--60.00%--outer
//               |          main
//               |
//                --40.00%--other
struct graph_printer {
    FILE *out;
    const call_tree &t;
    const resolver &res;
    uint64_t total;
    double limit;

    const std::string &name(uint32_t n) const { return res.frame(t.nodes[n].frame).name; }

    void kids(uint32_t n, const std::string &indent) const {
        std::vector<uint32_t> ks = t.sorted_kids(n);
        // Branches below the limit are left out (and said so).
        uint64_t hidden = 0;
        std::vector<uint32_t> shown;
        for (uint32_t k : ks) {
            if (share(t.nodes[k].count, total) < limit)
                hidden += t.nodes[k].count;
            else
                shown.push_back(k);
        }
        if (shown.size() == 1 && hidden == 0 && t.nodes[shown[0]].count == t.nodes[n].count) {
            std::fprintf(out, "%s%s\n", indent.c_str(), name(shown[0]).c_str());
            kids(shown[0], indent);
            return;
        }
        for (size_t i = 0; i < shown.size(); i++) {
            bool last = i + 1 == shown.size() && hidden == 0;
            std::string pct = percent(t.nodes[shown[i]].count, total);
            std::fprintf(out, "%s|\n", indent.c_str());
            std::fprintf(out, "%s%s%s--%s\n", indent.c_str(), last ? " --" : "|--", pct.c_str(),
                         name(shown[i]).c_str());
            kids(shown[i], indent + (last ? " " : "|") + std::string(pct.size() + 4, ' '));
        }
        if (hidden) {
            std::fprintf(out, "%s|\n", indent.c_str());
            std::fprintf(out, "%s --%s--[below %.2f%%]\n", indent.c_str(),
                         percent(hidden, total).c_str(), limit);
        }
    }

    void print(const std::string &indent) const {
        std::fprintf(out, "%s|\n%s---%s\n", indent.c_str(), indent.c_str(), name(0).c_str());
        kids(0, indent + "   ");
        std::fprintf(out, "\n");
    }
};

} // namespace

void print_profile(FILE *out, const profile &p, const resolver &res, const text_options &o) {
    std::vector<const profile::entry *> es = p.sorted(o.by_children);
    const auto &keys = p.keys();
    // Column widths: the widest value (or title) of each key but the last.
    std::vector<size_t> width(keys.size());
    for (size_t i = 0; i < keys.size(); i++)
        width[i] = std::strlen(sort_key_title(keys[i]));
    std::vector<const profile::entry *> shown;
    for (const auto *e : es) {
        if (share(o.by_children ? e->children : e->self, p.total()) < o.percent_limit)
            continue;
        if (!o.by_children && e->self == 0 && o.graph != graph_mode::callees)
            continue; // only ever a caller: it has no line of its own
        if (o.max_entries && shown.size() == o.max_entries)
            break;
        shown.push_back(e);
        for (size_t i = 0; i < keys.size(); i++)
            width[i] = std::max(width[i], p.column(*e, keys[i]).size());
    }
    if (o.header) {
        std::fprintf(out, "# %8s  %8s  %8s", "Children", "Self", "Samples");
        for (size_t i = 0; i < keys.size(); i++)
            std::fprintf(out, "  %-*s", i + 1 < keys.size() ? static_cast<int>(width[i]) : 0,
                         sort_key_title(keys[i]));
        std::fprintf(out, "\n# %8s  %8s  %8s", "........", "........", "........");
        for (size_t i = 0; i < keys.size(); i++)
            std::fprintf(out, "  %s", std::string(width[i], '.').c_str());
        std::fprintf(out, "\n#\n");
    }
    for (const auto *e : shown) {
        std::fprintf(out, "  %8s  %8s  %8llu", percent(e->children, p.total()).c_str(),
                     percent(e->self, p.total()).c_str(),
                     static_cast<unsigned long long>(o.by_children ? e->children : e->self));
        for (size_t i = 0; i < keys.size(); i++) {
            std::string v = p.column(*e, keys[i]);
            if (i + 1 < keys.size())
                std::fprintf(out, "  %-*s", static_cast<int>(width[i]), v.c_str());
            else
                std::fprintf(out, "  %s", v.c_str());
        }
        std::fprintf(out, "\n");
        if (o.graph == graph_mode::none)
            continue;
        call_tree t = o.graph == graph_mode::callers ? callers_of(p, *e) : callees_of(p, *e);
        if (t.nodes[0].count == 0)
            continue;
        graph_printer g{out, t, res, p.total(), o.percent_limit};
        g.print(std::string(34, ' '));
    }
}

} // namespace hwpmc_tools
