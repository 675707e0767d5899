// SPDX-License-Identifier: GPL-2.0
// hwpmc-report: folded stacks (the input of flamegraph.pl and of most
// flame graph viewers) and an SVG flame graph drawn here: the command at
// the bottom, callers below callees, each box as wide as its samples, with
// a <title> tooltip (name, samples, percentage) per box.
#include "output.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>

namespace hwpmc_tools {

namespace {

// Folded-stack names may hold neither ';' (the separator) nor a newline.
std::string folded_name(const frame_info &f) {
    std::string n = f.name;
    for (auto &c : n)
        if (c == ';' || c == '\n')
            c = ':';
    if (f.kernel)
        n += "_[k]";
    return n;
}

std::string xml_escape(const std::string &s) {
    std::string o;
    o.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&':
            o += "&amp;";
            break;
        case '<':
            o += "&lt;";
            break;
        case '>':
            o += "&gt;";
            break;
        case '"':
            o += "&quot;";
            break;
        case '\'':
            o += "&apos;";
            break;
        default:
            // XML 1.0 has no other control characters
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
                o += '?';
            else
                o += c;
        }
    }
    return o;
}

// The tree drawn: names at each level, root first.
struct flame_node {
    std::string name;
    int kind = 0; // 0 user, 1 kernel, 2 command, 3 root
    uint64_t count = 0;
    std::vector<flame_node> kids;

    flame_node &child(const std::string &n, int k) {
        for (auto &c : kids)
            if (c.name == n && c.kind == k)
                return c;
        kids.push_back({n, k, 0, {}});
        return kids.back();
    }
    int depth() const {
        int d = 0;
        for (const auto &c : kids)
            d = std::max(d, c.depth());
        return d + 1;
    }
};

// A stable colour per name, in flamegraph.pl's palettes: "hot" for user
// code, orange for the kernel, grey for commands and the root.
std::string colour(const std::string &name, int kind) {
    uint32_t h = 2166136261u;
    for (unsigned char c : name)
        h = (h ^ c) * 16777619u;
    double v1 = static_cast<double>(h & 0xff) / 255.0,
           v2 = static_cast<double>((h >> 8) & 0xff) / 255.0,
           v3 = static_cast<double>((h >> 16) & 0xff) / 255.0;
    int r, g, b;
    switch (kind) {
    case 1: // kernel
        r = 190 + static_cast<int>(65 * v1);
        g = 90 + static_cast<int>(65 * v2);
        b = 0 + static_cast<int>(30 * v3);
        break;
    case 2: // command
    case 3:
        r = g = b = 180 + static_cast<int>(40 * v1);
        break;
    default:
        r = 205 + static_cast<int>(50 * v3);
        g = static_cast<int>(230 * v1);
        b = static_cast<int>(55 * v2);
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "rgb(%d,%d,%d)", r, g, b);
    return buf;
}

} // namespace

std::map<std::string, uint64_t> folded_stacks(const profile &p, const resolver &res) {
    std::map<std::string, uint64_t> out;
    for (const profile::chain &c : p.chains()) {
        std::string line = res.comm_name(c.comm);
        for (auto &ch : line)
            if (ch == ';')
                ch = ':';
        const auto fs = p.frames(c);
        for (auto it = fs.rbegin(); it != fs.rend(); ++it)
            line += ";" + folded_name(res.frame(*it));
        out[line] += c.count;
    }
    return out;
}

void print_folded(FILE *out, const std::map<std::string, uint64_t> &stacks) {
    for (const auto &[stack, n] : stacks)
        std::fprintf(out, "%s %llu\n", stack.c_str(), static_cast<unsigned long long>(n));
}

bool write_flamegraph(const std::string &path, const profile &p, const resolver &res,
                      const std::string &title, const std::string &subtitle) {
    flame_node root{"all", 3, 0, {}};
    // The chains in the order of their first samples, as the samples came.
    for (const profile::chain &c : p.chains()) {
        root.count += c.count;
        flame_node *n = &root.child(res.comm_name(c.comm), 2);
        n->count += c.count;
        const auto fs = p.frames(c);
        for (auto it = fs.rbegin(); it != fs.rend(); ++it) {
            const frame_info &f = res.frame(*it);
            n = &n->child(f.name, f.kernel ? 1 : 0);
            n->count += c.count;
        }
    }
    const double width = 1200, pad = 10, frame_h = 16, top = 60, bottom = 36;
    const double min_width = 0.1; // px: thinner boxes are left out
    int depth = root.depth();
    double height = top + depth * frame_h + bottom;
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f)
        return false;
    std::fprintf(
        f,
        "<?xml version=\"1.0\" standalone=\"no\"?>\n"
        "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
        "xmlns=\"http://www.w3.org/2000/svg\">\n"
        "<style type=\"text/css\">\n"
        "  text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
        "  .title { font-size: 17px; text-anchor: middle; }\n"
        "  .subtitle { font-size: 12px; text-anchor: middle; fill: rgb(90,90,90); }\n"
        "  g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
        "</style>\n"
        "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(248,248,240)\"/>\n"
        "<text class=\"title\" x=\"%.0f\" y=\"24\">%s</text>\n"
        "<text class=\"subtitle\" x=\"%.0f\" y=\"44\">%s</text>\n",
        width, height, width, height, width, height, width / 2, xml_escape(title).c_str(),
        width / 2, xml_escape(subtitle).c_str());
    const double total = static_cast<double>(root.count ? root.count : 1);
    const double scale = (width - 2 * pad) / total;
    std::function<void(const flame_node &, double, int)> draw = [&](const flame_node &n, double x,
                                                                    int level) {
        double w = static_cast<double>(n.count) * scale;
        if (w < min_width)
            return;
        double y = height - bottom - (level + 1) * frame_h;
        char pct[32];
        std::snprintf(pct, sizeof(pct), "%.2f%%", 100.0 * static_cast<double>(n.count) / total);
        std::string name = xml_escape(n.name);
        std::fprintf(f,
                     "<g>\n<title>%s (%llu sample%s, %s)</title>\n"
                     "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                     "rx=\"2\" ry=\"2\"/>\n",
                     name.c_str(), static_cast<unsigned long long>(n.count),
                     n.count == 1 ? "" : "s", pct, x, y, w, frame_h - 1,
                     colour(n.name, n.kind).c_str());
        // As much of the name as fits (7 px a character), cut with "..".
        size_t fit = static_cast<size_t>((w - 6) / 7);
        if (fit >= 3) {
            std::string label = n.name;
            if (label.size() > fit)
                label = label.substr(0, fit - 2) + "..";
            std::fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">%s</text>\n", x + 3, y + 11.5,
                         xml_escape(label).c_str());
        }
        std::fprintf(f, "</g>\n");
        std::vector<const flame_node *> kids;
        for (const auto &c : n.kids)
            kids.push_back(&c);
        // Alphabetical, as flamegraph.pl: the x axis is not time.
        std::sort(kids.begin(), kids.end(),
                  [](const flame_node *a, const flame_node *b) { return a->name < b->name; });
        double cx = x;
        for (const auto *c : kids) {
            draw(*c, cx, level + 1);
            cx += static_cast<double>(c->count) * scale;
        }
    };
    draw(root, pad, 0);
    std::fprintf(f, "</svg>\n");
    bool ok = !std::ferror(f);
    int err = errno;
    if (std::fclose(f) != 0 || !ok) {
        errno = ok ? errno : err;
        return false;
    }
    return true;
}

} // namespace hwpmc_tools
