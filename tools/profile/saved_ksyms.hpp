// SPDX-License-Identifier: GPL-2.0
// The kernel symbols of a recording, saved with it: hwpmc-record appends,
// after the module's CLOSELOG, records holding the kernel symbols that
// name the kernel addresses of the log's samples (read from the recording
// machine's /proc/kallsyms when the log is closed), and hwpmc-report names
// kernel frames from them instead of reading and parsing the reporting
// machine's /proc/kallsyms (some 170,000 lines, most of a small report's
// time).  They are right for the kernel that ran, also when the log is
// read on another machine or after a reboot.
//
// The records' type, PMCLOG_TYPE_KSYMS (256), is above every type the
// module writes (include/uapi/linux/hwpmc.h reserves 256 and above for
// the tools): libhwpmc's reader and older tools skip them as records of a
// later minor version, so a log that carries them reads as before
// everywhere, and a log without them (older, or pmcstat -O) is reported
// with /proc/kallsyms as before.
//
// A record: struct pmclog_header (pl_type PMCLOG_TYPE_KSYMS, pl_len, pl_time
// the time of the last record before it), then u32 KSYMS_MAGIC, u32 the
// number of symbols, then per symbol u64 start, u16 name length, u16
// module length ("" for the kernel itself) and the two names without NULs;
// zero bytes pad the record to a multiple of 8.  A record holds at most
// ksyms_record_max bytes; more symbols take more records.
#pragma once

#include "symbolize.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hwpmc_tools {

inline constexpr uint32_t PMCLOG_TYPE_KSYMS = 256;
inline constexpr uint32_t KSYMS_MAGIC = 0x4d59534b; // "KSYM"
inline constexpr size_t ksyms_record_max = 256u << 10;

// The distinct kernel addresses (pl_pc[0..pl_nkernel)) of the CALLCHAIN
// records of the log in `fd` (a regular file, read from its start in
// place), sorted, and the time of its last record (if last_time); false if
// the log cannot be scanned to a clean end.
bool kernel_pcs_of_log(int fd, std::vector<uint64_t> *pcs, uint64_t *last_time = nullptr);

// The symbols of `ks` that kernel_symbols::find() gives for each address
// of `pcs` and for the address before it (a return address is looked up
// one byte back), in ks's order, each once: a kernel_symbols made of
// them alone finds the same symbol as `ks` for each of those addresses,
// or none where `ks` finds none.
std::vector<saved_ksym> needed_kernel_symbols(const kernel_symbols &ks,
                                              const std::vector<uint64_t> &pcs);

// The records holding `syms` (at time `t`), as bytes to append to a log.
std::vector<unsigned char> encode_ksyms_records(const std::vector<saved_ksym> &syms, uint64_t t);

// The symbols of one record (`p`, `len` bytes, header included) appended
// to *out; false (and *out unchanged) if it is not a well formed KSYMS
// record.
bool decode_ksyms_record(const unsigned char *p, size_t len, std::vector<saved_ksym> *out);

// hwpmc-record: the symbols the samples of the closed log in `path` need,
// from `kallsyms` (the machine's /proc/kallsyms), appended to the log as
// KSYMS records.  Nothing is appended when no sample has a kernel address,
// when `kallsyms` shows zero addresses (not root, kernel.kptr_restrict:
// the report then reads its own, as before) or cannot be read, or when
// the log cannot be scanned.  The number of symbols saved; -1 with *why
// set if the log could not be written.
long save_kernel_symbols(const std::string &path, const std::string &kallsyms, std::string *why);

} // namespace hwpmc_tools
