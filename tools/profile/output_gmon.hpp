// SPDX-License-Identifier: GPL-2.0
// gprof(1) flat profiles, as FreeBSD's pmcstat -g writes them: for each
// event, one gmon.out file per executable image (DIR/EVENT/IMAGE.gmon), a
// histogram of the samples' program counters in the image's own (link-time)
// addresses, which GNU gprof reads next to the image:
//   gprof -b -p /usr/bin/prog DIR/SOFT-CLOCK.PROF/prog.gmon
#pragma once

#include "samples.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hwpmc_tools {

// One GMON_TAG_TIME_HIST record: bins of equal width over [low, high).
struct gmon_histogram {
    uint64_t low = 0, high = 0;
    std::vector<uint16_t> bins; // saturate at 65535
    uint32_t rate = 1;          // counts per dimension unit (samples per second)
    std::string dimen = "seconds";
    char abbrev = 's';
};

// The histogram of `vaddrs` with bins of `bin_bytes` bytes (a power of two),
// covering the lowest to the highest.  Empty `vaddrs`: no bins.
gmon_histogram gmon_histogram_of(const std::vector<uint64_t> &vaddrs, uint32_t bin_bytes = 4);

// The bytes of a GNU gmon.out file (binutils' gmon_out.h: the "gmon"
// header, version 1, and one histogram record; 64-bit addresses, this
// host's byte order) holding `h`.
std::string gmon_bytes(const gmon_histogram &h);

struct gmon_written {
    std::string path; // DIR/EVENT/IMAGE.gmon
    std::string image;
    uint64_t samples = 0;
};

struct gmon_summary {
    std::vector<gmon_written> files;
    uint64_t kernel = 0;   // samples whose PC was in the kernel: no file
    uint64_t unmapped = 0; // no mapping, no readable ELF file, or the vDSO
};

// Write the flat profiles of `raws` (the samples chosen for the report)
// under `dir` (created as needed).  CLOCK.PROF samples count in seconds
// (the sampling period is CPU time); other events in samples.  false with
// *err on a write error.
bool write_gmon_profiles(const std::string &dir, const log_data &data, symbolizer &sym,
                         const std::vector<const raw_sample *> &raws, gmon_summary *out,
                         std::string *err);

} // namespace hwpmc_tools
