// SPDX-License-Identifier: GPL-2.0
#include "lib/pctr.hpp"

#include <cinttypes>
#include <cstdio>

namespace hwpmc_tools::pctr {

bool function_word(const request &r, uint32_t *fn, std::string *why) {
    if (r.disable) {
        *fn = 0;
        return true;
    }
    if (r.event > 0xff) {
        *why = "the event select is 8 bits (0-0xff)";
        return false;
    }
    if (r.umask > 0xff) {
        *why = "the unit mask is 8 bits (0-0xff)";
        return false;
    }
    if (r.cmask > 0xff) {
        *why = "the counter mask is 8 bits (0-0xff)";
        return false;
    }
    uint32_t f = r.event | r.umask << PCTR_UM_SHIFT | r.cmask << PCTR_CM_SHIFT | PCTR_EN;
    if (r.any)
        f |= PCTR_UM_A;
    if (r.mesi)
        f |= PCTR_UM_MESI;
    if (r.user || !r.kernel)
        f |= PCTR_U;
    if (r.kernel || !r.user)
        f |= PCTR_K;
    if (r.edge)
        f |= PCTR_E;
    if (r.invert)
        f |= PCTR_I;
    *fn = f;
    return true;
}

std::string describe(uint32_t fn) {
    if (!fn)
        return "-";
    std::string s;
    const struct {
        uint32_t bit;
        const char *name;
    } flags[] = {
        {PCTR_U, "usr"}, {PCTR_K, "os"}, {PCTR_E, "edge"}, {PCTR_I, "inv"}, {PCTR_EN, "en"}};
    for (const auto &f : flags) {
        if (!(fn & f.bit))
            continue;
        if (!s.empty())
            s += ',';
        s += f.name;
    }
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%sevent=0x%02x umask=0x%02x cmask=%u", s.empty() ? "" : " ",
                  fn & 0xff, (fn >> PCTR_UM_SHIFT) & 0xff, fn >> PCTR_CM_SHIFT);
    return s + buf;
}

std::string format_status(const struct pctrst &st, unsigned ncounters) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "tsc = %" PRIu64 "\n", static_cast<uint64_t>(st.pctr_tsc));
    std::string out = buf;
    for (unsigned i = 0; i < ncounters && i < PCTR_NUM; i++) {
        std::snprintf(buf, sizeof(buf), "  %u  0x%08x  %20" PRIu64 "  %s\n", i, st.pctr_fn[i],
                      static_cast<uint64_t>(st.pctr_hwc[i]), describe(st.pctr_fn[i]).c_str());
        out += buf;
    }
    return out;
}

} // namespace hwpmc_tools::pctr
