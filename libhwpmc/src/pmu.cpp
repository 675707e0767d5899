// SPDX-License-Identifier: BSD-2-Clause
// FreeBSD's pmc_pmu_* family (libpmc_pmu_util.c), served from libpfm4's
// tables of the CPU's core PMU instead of FreeBSD's JSON event tables.
#include "spec/event_spec.hpp"
#include "spec/pfm_source.hpp"

#include <hwpmc/pmc.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <strings.h>

using namespace hwpmc::detail;

namespace {

// FreeBSD matches names with strcasestr(3).
bool contains_nocase(const std::string &hay, const char *needle) {
    if (needle == nullptr)
        return true;
    const std::size_t n = std::strlen(needle);
    if (n > hay.size())
        return false;
    for (std::size_t i = 0; i + n <= hay.size(); ++i)
        if (strncasecmp(hay.c_str() + i, needle, n) == 0)
            return true;
    return false;
}

// pmcstat -s/-p without events: FreeBSD's six counters, by their generic
// aliases (which pmc_allocate() knows on Intel and AMD alike).
const char *stat_mode_names[] = {
    "cycles", "instructions", "branches", "branch-misses", "cache-references", "cache-misses",
};

} // namespace

extern "C" {

int pmc_pmu_enabled(void) {
    return pfm_source::instance().has_core_pmu() ? 1 : 0;
}

void pmc_pmu_print_counters(const char *filter) {
    for (const auto &name : pfm_source::instance().names())
        if (contains_nocase(name, filter))
            std::printf("\t%s\n", name.c_str());
}

void pmc_pmu_print_counter_desc(const char *ev) {
    for (const auto &[name, desc] : pfm_source::instance().described())
        if (contains_nocase(name, ev) && !desc.empty())
            std::printf("%s:\t%s\n", name.c_str(), desc.c_str());
}

void pmc_pmu_print_counter_desc_long(const char *ev) {
    pmc_pmu_print_counter_desc(ev);
}

void pmc_pmu_print_counter_full(const char *ev) {
    for (const auto &[name, desc] : pfm_source::instance().described()) {
        if (!contains_nocase(name, ev))
            continue;
        std::printf("name: %s\n", name.c_str());
        if (!desc.empty())
            std::printf("desc: %s\n", desc.c_str());
        std::string why;
        if (const auto hw = pfm_source::instance().lookup(name, &why)) {
            std::printf("event: 0x%llx\n", static_cast<unsigned long long>(hw->evtsel));
            std::printf("pmu: %s\n", hw->amd ? "amd" : "intel");
        }
    }
}

uint64_t pmc_pmu_sample_rate_get(const char *ev) {
    std::string why;
    if (ev == nullptr || !pfm_source::instance().lookup(ev, &why))
        return PMC_PMU_DEFAULT_SAMPLE_COUNT;
    return PMC_PMU_SAMPLE_COUNT;
}

int pmc_pmu_pmcallocate(const char *ev, struct pmc_op_pmcallocate *pm) {
    if (!pfm_source::instance().has_core_pmu())
        return EOPNOTSUPP;
    if (ev == nullptr || pm == nullptr)
        return ENOENT;
    std::string why;
    const auto hw = pfm_source::instance().lookup(ev, &why);
    if (!hw)
        return ENOENT;
    uint64_t sel = hw->evtsel;
    const uint32_t modes = pm->pm_caps & (PMC_CAP_USER | PMC_CAP_SYSTEM);
    sel &= ~(evtsel::usr | evtsel::os);
    if (modes == 0 || modes == (PMC_CAP_USER | PMC_CAP_SYSTEM))
        sel |= evtsel::usr | evtsel::os;
    else
        sel |= (modes & PMC_CAP_USER) ? evtsel::usr : evtsel::os;
    pm->pm_class = hw->amd ? PMC_CLASS_K8 : PMC_CLASS_IAP;
    pm->pm_event = static_cast<uint32_t>((sel & 0xff) | ((sel >> 32) & 0xf) << 8);
    pm->pm_config = sel & evtsel::config_mask;
    pm->pm_config1 = 0;
    pm->pm_caps |= PMC_CAP_READ | PMC_CAP_WRITE;
    if (((sel >> evtsel::umask_shift) & 0xff) != 0)
        pm->pm_caps |= PMC_CAP_QUALIFIER;
    return 0;
}

const char *pmc_pmu_event_get_by_idx(const char *, int idx) {
    static thread_local std::string name;
    const auto names = pfm_source::instance().names();
    if (idx < 0 || static_cast<std::size_t>(idx) >= names.size())
        return nullptr;
    name = names[static_cast<std::size_t>(idx)];
    return name.c_str();
}

int pmc_pmu_idx_get_by_event(const char *, const char *ev) {
    if (ev == nullptr)
        return -1;
    const auto names = pfm_source::instance().names();
    for (std::size_t i = 0; i < names.size(); ++i)
        if (strcasecmp(names[i].c_str(), ev) == 0)
            return static_cast<int>(i);
    return -1;
}

int pmc_pmu_stat_mode(const char ***names) {
    if (names == nullptr || !pfm_source::instance().has_core_pmu())
        return EOPNOTSUPP;
    *names = stat_mode_names;
    return 0;
}

} // extern "C"
