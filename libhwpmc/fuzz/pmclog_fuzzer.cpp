// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the pmclog decoder (pmclog_feed/pmclog_read), with the
// invariants every answer must satisfy:
//  - it ends in PMCLOG_EOF or PMCLOG_ERROR (EBADMSG or EPROTO), never
//    wanting data once the input ended, never crashing or reading outside
//    the input (ASan);
//  - each record returned lies inside the input, in order, is a known
//    type, has a valid length, its pl_data equals the input's bytes there,
//    and its strings and counts are within bounds;
//  - the same input fed in pieces (sizes drawn from the input) decodes to
//    exactly the same records and ending.
#include "pmclog_builder.hpp"

#include <hwpmc/pmclog.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const char *what, const std::string &detail = {}) {
    std::fprintf(stderr, "invariant broken: %s %s\n", what, detail.c_str());
    std::abort();
}

bool terminated(const char *s, size_t n) {
    return std::memchr(s, 0, n) != nullptr;
}

void check_event(const struct pmclog_ev &ev, const uint8_t *data, size_t size, uint64_t &next_off,
                 size_t &last_count) {
    const std::string d = hwpmc::test::describe(ev);
    if (ev.pl_offset < 0 || static_cast<uint64_t>(ev.pl_offset) < next_off)
        die("record offsets out of order", d);
    if (ev.pl_len < static_cast<int>(sizeof(struct pmclog_header)) || ev.pl_len % 8 != 0 ||
        ev.pl_len > (1 << 20))
        die("bad length", d);
    const auto off = static_cast<uint64_t>(ev.pl_offset);
    if (off + static_cast<uint64_t>(ev.pl_len) > size)
        die("record beyond the input", d);
    if (std::memcmp(ev.pl_data, data + off, static_cast<size_t>(ev.pl_len)) != 0)
        die("pl_data differs from the input", d);
    if (ev.pl_count <= last_count)
        die("pl_count does not grow", d);
    if (last_count == 0 && (ev.pl_type != PMCLOG_TYPE_INITIALIZE || off != 0))
        die("first record not INITIALIZE at 0", d);
    if (ev.pl_type < 1 || ev.pl_type > PMCLOG_TYPE_MAX)
        die("unknown type returned", d);
    if (ev.pl_ts.tv_nsec < 0 || ev.pl_ts.tv_nsec >= 1000000000)
        die("bad timestamp", d);
    const auto &u = ev.pl_u;
    switch (ev.pl_type) {
    case PMCLOG_TYPE_CALLCHAIN:
        if (u.pl_cc.pl_npc > PMC_CALLCHAIN_DEPTH_MAX || u.pl_cc.pl_nkernel > u.pl_cc.pl_npc ||
            static_cast<size_t>(ev.pl_len) !=
                sizeof(struct pmclog_callchain) + u.pl_cc.pl_npc * sizeof(uint64_t))
            die("callchain counts", d);
        if ((u.pl_cc.pl_cpumode == PMCLOG_CPUMODE_USER) !=
            (PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(u.pl_cc.pl_cpuflags) != 0))
            die("cpumode and cpuflags disagree", d);
        break;
    case PMCLOG_TYPE_PMCALLOCATE:
        if (u.pl_a.pl_evname != u.pl_a.pl_name || !terminated(u.pl_a.pl_name, PMC_NAME_MAX))
            die("event name", d);
        break;
    case PMCLOG_TYPE_PMCATTACH:
        if (!terminated(u.pl_t.pl_pathname, PATH_MAX))
            die("path", d);
        break;
    case PMCLOG_TYPE_PROCEXEC:
        if (!terminated(u.pl_x.pl_pathname, PATH_MAX))
            die("path", d);
        break;
    case PMCLOG_TYPE_MAP_IN:
        if (!terminated(u.pl_mi.pl_pathname, PATH_MAX))
            die("path", d);
        break;
    case PMCLOG_TYPE_INITIALIZE:
        if (HWPMC_VERSION_TO_MAJOR(u.pl_i.pl_version) != PMCLOG_VERSION_MAJOR)
            die("version", d);
        break;
    default:
        break;
    }
    next_off = off + static_cast<uint64_t>(ev.pl_len);
    last_count = ev.pl_count;
}

struct result {
    std::vector<std::string> events;
    enum pmclog_state end = PMCLOG_OK;
    int err = 0;
    std::string msg;
};

// Decode `data`, fed in pieces of the given sizes (cycled), then the end.
result decode(const uint8_t *data, size_t size, const std::vector<size_t> &pieces) {
    result r;
    void *p = pmclog_open(PMCLOG_FD_NONE);
    if (p == nullptr)
        die("pmclog_open");
    struct pmclog_ev ev;
    uint64_t next_off = 0;
    size_t last_count = 0;
    size_t at = 0, i = 0;
    bool ended = false;
    for (;;) {
        const int rc = pmclog_read(p, &ev);
        if (rc == 0) {
            if (ev.pl_state != PMCLOG_OK)
                die("rc 0 without PMCLOG_OK");
            check_event(ev, data, size, next_off, last_count);
            r.events.push_back(hwpmc::test::describe(ev));
            continue;
        }
        if (ev.pl_state == PMCLOG_REQUIRE_DATA) {
            if (ended)
                die("wants data after the end");
            if (at == size) {
                if (pmclog_feed(p, nullptr, 0) != 0)
                    die("feed end");
                ended = true;
                continue;
            }
            const size_t n = std::min(pieces[i++ % pieces.size()], size - at);
            if (pmclog_feed(p, reinterpret_cast<char *>(const_cast<uint8_t *>(data + at)),
                            static_cast<int>(n)) != 0)
                die("feed");
            at += n;
            continue;
        }
        r.end = ev.pl_state;
        if (r.end == PMCLOG_ERROR) {
            r.err = errno;
            r.msg = pmclog_errmsg(p);
            if (r.err != EBADMSG && r.err != EPROTO)
                die("unexpected errno", r.msg);
            if (r.msg.empty())
                die("error without a message");
        } else if (r.end != PMCLOG_EOF) {
            die("bad final state");
        }
        break;
    }
    // Sticky.
    const int rc = pmclog_read(p, &ev);
    if (rc != -1 || ev.pl_state != r.end)
        die("end state not kept");
    pmclog_close(p);
    return r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 24))
        return 0;
    const result whole = decode(data, size, {size == 0 ? 1 : size});
    // Piece sizes from the input itself, 1 to 64 bytes.
    std::vector<size_t> pieces;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size && pieces.size() < 16; ++i) {
        h = (h ^ data[i]) * 16777619u;
        if (i % 7 == 6)
            pieces.push_back(1 + h % 64);
    }
    if (pieces.empty())
        pieces.push_back(1);
    for (const auto &split : {pieces, std::vector<size_t>{1}}) {
        const result r = decode(data, size, split);
        if (r.events != whole.events || r.end != whole.end || r.err != whole.err ||
            r.msg != whole.msg)
            die("a split input decodes differently");
    }
    return 0;
}
