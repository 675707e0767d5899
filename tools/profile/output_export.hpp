// SPDX-License-Identifier: GPL-2.0
// Outputs for other tools' consumers, address by address: perf script's
// text (hwpmc-report --script: FlameGraph's stackcollapse-perf.pl,
// speedscope, the Firefox Profiler) and pprof's gzipped protobuf profile
// (hwpmc-report --pprof: go tool pprof, Pyroscope, Parca).
#pragma once

#include "locations.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hwpmc_tools {

// --- output_script.cpp ---------------------------------------------------

// One sample as `perf script` prints it by default:
//   comm pid/tid [cpu] secs.usecs: period event:
//   <TAB>        address symbol+0xoff (dso)      one line per frame, innermost first
//   (blank line)
// event_width pads the event name as perf pads it (the longest name).
void print_script_sample(FILE *out, const std::string &comm, const raw_sample &r,
                         const std::string &event, uint64_t period, int event_width,
                         const std::vector<address_info> &frames);

// Every sample of `raws` (resolved as `samples`, the same order: their
// command names) in perf script's text, events named as the log names them.
void print_script(FILE *out, const log_data &data, const resolver &res, address_describer &d,
                  const std::vector<const raw_sample *> &raws, const std::vector<sample> &samples);

// --- output_pprof.cpp ----------------------------------------------------

// A pprof profile built sample by sample.  Each event gives two sample
// types: "<event>_samples" (count) and "<event>" (its period's unit:
// nanoseconds for CLOCK.PROF, else count: samples x period).  Samples carry
// labels pid and tid (numbers) and cpu and comm (strings: pprof drops a
// numeric label of 0).
class pprof_builder {
public:
    struct event {
        std::string name;
        uint64_t period = 0;      // events (or ns) per sample; 0: unknown
        bool nanoseconds = false; // CLOCK.PROF
    };
    explicit pprof_builder(std::vector<event> events, debug_info &dbg);
    ~pprof_builder();
    pprof_builder(const pprof_builder &) = delete;
    pprof_builder &operator=(const pprof_builder &) = delete;

    void set_time(int64_t wallclock_ns, int64_t duration_ns);
    void add(size_t event_index, const std::string &comm, const raw_sample &r,
             const std::vector<address_info> &frames);

    // The serialized Profile message (not compressed).
    std::string serialize() const;
    // Write it gzipped to `path` ("-": standard output); false with *err.
    bool write(const std::string &path, std::string *err) const;

    uint64_t samples() const noexcept { return samples_; }

private:
    struct impl;
    std::unique_ptr<impl> p_;
    uint64_t samples_ = 0;
};

// The samples as a pprof profile written to `path` (gzipped; "-": standard
// output), one pair of sample types per event of the log (in name order);
// false with *err on a write error.
bool write_pprof(const std::string &path, const log_data &data, const resolver &res,
                 address_describer &d, const std::vector<const raw_sample *> &raws,
                 const std::vector<sample> &samples, std::string *err);

} // namespace hwpmc_tools
