// SPDX-License-Identifier: GPL-2.0
#include "printer.hpp"

#include "lib/numbers.hpp"

#include <algorithm>
#include <cmath>

namespace hwpmc_stat {

using hwpmc_tools::group_thousands;
using hwpmc_tools::thousands;
using role = hwpmc::event_role;

namespace {

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), f, v);
    return buf;
}

std::string group(const std::string &num, bool big) {
    return big ? group_thousands(num) : num;
}

} // namespace

void fill_stats(std::vector<double> xs, double *mean, double *rel_sd) {
    double n = static_cast<double>(xs.size()), sum = 0, sq = 0;
    for (double x : xs)
        sum += x;
    *mean = n ? sum / n : 0;
    for (double x : xs)
        sq += (x - *mean) * (x - *mean);
    double sd_mean = xs.size() > 1 ? std::sqrt(sq / (n - 1) / n) : 0;
    *rel_sd = *mean != 0 ? 100.0 * sd_mean / *mean : 0;
}

std::vector<row> make_rows(const options &o, const std::vector<slot> &slots,
                           const std::vector<std::vector<uint64_t>> &runs) {
    std::vector<row> rows;
    for (size_t e = 0; e < o.events.size(); e++) {
        std::vector<int> cpus;
        for (const auto &s : slots)
            if (s.ev == e)
                cpus.push_back(o.no_aggr ? s.cpu : -1);
        cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
        for (int cpu : cpus) {
            row r{e, cpu, {}};
            for (const auto &v : runs) {
                uint64_t sum = 0;
                for (size_t i = 0; i < slots.size(); i++)
                    if (slots[i].ev == e && (cpu < 0 || slots[i].cpu == cpu))
                        sum += v[i];
                r.runs.push_back(sum);
            }
            std::vector<double> xs(r.runs.begin(), r.runs.end());
            fill_stats(xs, &r.mean, &r.rel_sd);
            rows.push_back(r);
        }
    }
    return rows;
}

std::optional<metric> metric_of(const options &o, const row &r, const std::vector<row> &rows,
                                double elapsed) {
    const event_req &e = o.events[r.ev];
    auto find = [&](role k) -> const row * {
        for (const auto &x : rows)
            if (o.events[x.ev].role == k && o.events[x.ev].sc == e.sc && x.cpu == r.cpu)
                return &x;
        return nullptr;
    };
    const row *prof = find(role::clock_prof);
    if (e.role == role::clock_prof) {
        if (elapsed <= 0)
            return std::nullopt;
        return metric{r.mean / 1e9 / elapsed, "CPUs utilized"};
    }
    if (e.role == role::instructions) {
        const row *cyc = find(role::cycles);
        if (cyc && cyc->mean > 0)
            return metric{r.mean / cyc->mean, "insn per cycle"};
    }
    if (e.role == role::cycles && prof && prof->mean > 0)
        return metric{r.mean / prof->mean, "GHz"};
    double secs = prof && prof->mean > 0 ? prof->mean / 1e9 : elapsed;
    if (secs <= 0)
        return std::nullopt;
    double rate = r.mean / secs;
    static const struct {
        double f;
        const char *unit;
    } scales[] = {{1e9, "G/sec"}, {1e6, "M/sec"}, {1e3, "K/sec"}};
    for (auto &s : scales)
        if (rate >= s.f)
            return metric{rate / s.f, s.unit};
    return metric{rate, "/sec"};
}

bool printer::mixed() const {
    bool p = false, s = false;
    for (const auto &e : o_.events)
        (e.sc == scope::process ? p : s) = true;
    return p && s;
}

std::string printer::event_name(const event_req &e) const {
    if (!mixed())
        return e.name;
    return (e.sc == scope::process ? "p/" : "s/") + e.name;
}

std::string printer::value_text(const event_req &e, const row &r) const {
    if (e.role == role::clock_prof)
        return fmt("%.6f", r.mean / 1e6);
    if (r.runs.size() == 1)
        return std::to_string(r.runs[0]);
    return fmt("%.2f", r.mean);
}

std::string printer::field(const std::string &s) const {
    if (s.find(o_.sep) == std::string::npos && s.find('"') == std::string::npos)
        return s;
    std::string q = "\"";
    for (char ch : s)
        q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

std::string printer::json_str(const std::string &s) {
    std::string q = "\"";
    for (unsigned char ch : s) {
        if (ch == '"' || ch == '\\') {
            q += '\\';
            q += static_cast<char>(ch);
        } else if (ch < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
            q += buf;
        } else {
            q += static_cast<char>(ch);
        }
    }
    return q + "\"";
}

void printer::header(const std::string &what) {
    if (o_.fmt != format::human)
        return;
    std::fprintf(out_, "\n Performance counter stats for %s", what.c_str());
    if (o_.repeat > 1)
        std::fprintf(out_, " (%d runs)", o_.repeat);
    std::fprintf(out_, ":\n\n");
}

void printer::counters(const std::vector<row> &rows, double elapsed, double interval) {
    for (const auto &r : rows) {
        const event_req &e = o_.events[r.ev];
        auto m = metric_of(o_, r, rows, elapsed);
        switch (o_.fmt) {
        case format::human:
            human_row(e, r, m, interval);
            break;
        case format::csv:
            csv_row(e, r, m, elapsed, interval);
            break;
        case format::json:
            json_row(e, r, m, elapsed, interval);
            break;
        }
    }
    std::fflush(out_);
}

void printer::interval_header() {
    if (o_.fmt != format::human)
        return;
    if (o_.no_aggr)
        std::fprintf(out_, "#%14s %-6s %18s %-4s %s\n", "time", "CPU", "counts", "unit", "events");
    else
        std::fprintf(out_, "#%14s %18s %-4s %s\n", "time", "counts", "unit", "events");
}

void printer::footer(const std::vector<double> &elapsed, const std::vector<double> &user,
                     const std::vector<double> &sys, int exit_status, bool command) {
    double mean, rel;
    fill_stats(elapsed, &mean, &rel);
    if (o_.fmt == format::json) {
        std::string s = "{\"time-elapsed\" : " + fmt("%.9f", mean);
        if (elapsed.size() > 1)
            s += ", \"time-elapsed-variance\" : " + fmt("%.2f", rel);
        if (command) {
            double u, us, y, ys;
            fill_stats(user, &u, &us);
            fill_stats(sys, &y, &ys);
            s += ", \"user-time\" : " + fmt("%.6f", u) + ", \"system-time\" : " + fmt("%.6f", y);
        }
        s += ", \"runs\" : " + std::to_string(elapsed.size()) +
             ", \"exit-status\" : " + std::to_string(exit_status) + "}";
        std::fprintf(out_, "%s\n", s.c_str());
    }
    if (o_.fmt != format::human)
        return;
    if (elapsed.size() > 1)
        std::fprintf(out_, "\n  %16.9f +- %.9f seconds time elapsed  ( +- %5.2f%% )\n", mean,
                     mean * rel / 100, rel);
    else
        std::fprintf(out_, "\n  %16.9f seconds time elapsed\n", mean);
    if (command) {
        double u, us, y, ys;
        fill_stats(user, &u, &us);
        fill_stats(sys, &y, &ys);
        std::fprintf(out_, "\n  %16.9f seconds user\n  %16.9f seconds sys\n", u, y);
    }
    std::fprintf(out_, "\n");
    std::fflush(out_);
}

void printer::human_row(const event_req &e, const row &r, const std::optional<metric> &m,
                        double interval) {
    std::string line;
    if (interval >= 0)
        line += fmt("%15.9f ", interval);
    if (r.cpu >= 0) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "CPU%-4d", r.cpu);
        line += buf;
    }
    std::string value, unit = "    ";
    if (e.role == role::clock_prof) {
        value = group(fmt("%.2f", r.mean / 1e6), o_.big_num);
        unit = "msec";
    } else {
        value = group(fmt("%.0f", r.mean), o_.big_num);
        if (r.runs.size() == 1)
            value = o_.big_num ? thousands(r.runs[0]) : std::to_string(r.runs[0]);
    }
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%18s %s %-26s", value.c_str(), unit.c_str(),
                  event_name(e).c_str());
    line += buf;
    if (m) {
        const char *f = m->unit == "insn per cycle" ? "%9.2f" : "%9.3f";
        line += " # " + fmt(f, m->value) + " " + m->unit;
    }
    if (r.runs.size() > 1) {
        size_t pad = line.size() < 80 ? 80 - line.size() : 1;
        line += std::string(pad, ' ') + fmt("( +- %5.2f%% )", r.rel_sd);
    }
    std::fprintf(out_, "%s\n", line.c_str());
}

void printer::csv_row(const event_req &e, const row &r, const std::optional<metric> &m,
                      double elapsed, double interval) {
    std::vector<std::string> f;
    if (interval >= 0)
        f.push_back(fmt("%.9f", interval));
    if (r.cpu >= 0)
        f.push_back("CPU" + std::to_string(r.cpu));
    f.push_back(value_text(e, r));
    f.push_back(e.role == role::clock_prof ? "msec" : "");
    f.push_back(event_name(e));
    if (r.runs.size() > 1)
        f.push_back(fmt("%.2f%%", r.rel_sd));
    f.push_back(fmt("%.0f", elapsed * 1e9));
    f.push_back("100.00");
    f.push_back(m ? fmt("%.3f", m->value) : "");
    f.push_back(m ? m->unit : "");
    std::string line;
    for (size_t i = 0; i < f.size(); i++)
        line += (i ? o_.sep : "") + field(f[i]);
    std::fprintf(out_, "%s\n", line.c_str());
}

void printer::json_row(const event_req &e, const row &r, const std::optional<metric> &m,
                       double elapsed, double interval) {
    std::string s = "{";
    if (interval >= 0)
        s += "\"interval\" : " + fmt("%.9f", interval) + ", ";
    if (r.cpu >= 0)
        s += "\"cpu\" : " + std::to_string(r.cpu) + ", ";
    s += "\"counter-value\" : " + value_text(e, r);
    s += ", \"unit\" : " + json_str(e.role == role::clock_prof ? "msec" : "");
    s += ", \"event\" : " + json_str(event_name(e));
    s += ", \"scope\" : " + json_str(scope_word(e.sc));
    s += ", \"count\" : " + (r.runs.size() == 1 ? std::to_string(r.runs[0]) : fmt("%.2f", r.mean));
    if (r.runs.size() > 1)
        s += ", \"variance\" : " + fmt("%.2f", r.rel_sd);
    s += ", \"event-runtime\" : " + fmt("%.0f", elapsed * 1e9);
    s += ", \"pcnt-running\" : 100.00";
    if (m)
        s += ", \"metric-value\" : " + fmt("%.6f", m->value) +
             ", \"metric-unit\" : " + json_str(m->unit);
    s += "}";
    std::fprintf(out_, "%s\n", s.c_str());
}

} // namespace hwpmc_stat
