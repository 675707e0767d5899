// SPDX-License-Identifier: GPL-2.0
// hwpmc-stat's output: the rows of a measurement (summed over CPUs, or one
// per CPU with -A; means over -r runs), their derived figures (CPUs
// utilized, insn per cycle, GHz, rates), and the printer of the three
// formats: human (perf stat's), CSV (-x SEP) and JSON (-j).
#pragma once

#include "events.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace hwpmc_stat {

struct row {
    size_t ev;
    int cpu;                     // -1: the process, or the sum of the CPUs
    std::vector<uint64_t> runs;  // one value per run
    double mean = 0, rel_sd = 0; // rel_sd: stddev of the mean, % of the mean
};

// The mean and the standard deviation of the mean, in % of the mean.
void fill_stats(std::vector<double> xs, double *mean, double *rel_sd);

// What a PMC counts: its event (index into options::events) and CPU (-1:
// process scope).
struct slot {
    size_t ev;
    int cpu;
};

// Rows to print, from per-run values of the PMCs `slots`: per CPU (-A) or
// summed.
std::vector<row> make_rows(const options &o, const std::vector<slot> &slots,
                           const std::vector<std::vector<uint64_t>> &runs);

struct metric {
    double value = 0;
    std::string unit;
};

// The derived figure of `r`, from the rows of the same scope and CPU.
std::optional<metric> metric_of(const options &o, const row &r, const std::vector<row> &rows,
                                double elapsed);

class printer {
public:
    printer(FILE *out, const options &o) : out_(out), o_(o) {}
    bool mixed() const;
    std::string event_name(const event_req &e) const;
    // The value in the event's unit, for -x and -j.
    std::string value_text(const event_req &e, const row &r) const;
    std::string field(const std::string &s) const;
    static std::string json_str(const std::string &s);
    void header(const std::string &what);
    // The counters; `interval` >= 0: a row of -I (seconds since the start).
    void counters(const std::vector<row> &rows, double elapsed, double interval = -1);
    void interval_header();
    void footer(const std::vector<double> &elapsed, const std::vector<double> &user,
                const std::vector<double> &sys, int exit_status, bool command);

private:
    void human_row(const event_req &e, const row &r, const std::optional<metric> &m,
                   double interval);
    void csv_row(const event_req &e, const row &r, const std::optional<metric> &m, double elapsed,
                 double interval);
    void json_row(const event_req &e, const row &r, const std::optional<metric> &m, double elapsed,
                  double interval);
    FILE *out_;
    const options &o_;
};

} // namespace hwpmc_stat
