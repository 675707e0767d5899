// SPDX-License-Identifier: BSD-2-Clause
// Writes the seed corpus of pmclog_fuzzer into the directory argv[1]:
// well-formed logs from the ABI structures, and a few broken ones.
#include "pmclog_builder.hpp"

#include <cstdio>
#include <string>

using namespace hwpmc::test;

namespace {

bool put(const std::string &dir, const char *name, const bytes &b) {
    const std::string path = dir + "/" + name;
    FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr)
        return false;
    const bool ok = std::fwrite(b.data(), 1, b.size(), f) == b.size();
    return std::fclose(f) == 0 && ok;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const bytes every = every_type_log();
    bytes samples = initialize();
    append(samples, pmcallocate(2, 0x13000001, "SOFT-CLOCK.PROF"));
    for (uint32_t i = 0; i < 8; ++i)
        append(samples, callchain(10 + i, 0x13000001, 100, std::vector<uint64_t>(i, 0x401000 + i),
                                  i / 3, i % 2 ? PMCLOG_CC_F_USER : 0, i));
    append(samples, closelog(99));
    bytes unknown = initialize();
    append(unknown, record(99, pmclog_closelog{}, 1, bytes(24, 0)));
    append(unknown, closelog(2));
    bool ok = put(dir, "every-type", every) && put(dir, "samples", samples) &&
              put(dir, "unknown-type", unknown) &&
              put(dir, "truncated", bytes(every.begin(), every.end() - 12)) &&
              put(dir, "version-2", initialize(1, HWPMC_VERSION_MAKE(2, 0, 0))) &&
              put(dir, "initialize-only", initialize());
    return ok ? 0 : 1;
}
