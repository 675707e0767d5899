// SPDX-License-Identifier: BSD-2-Clause
#include "pfm_source.hpp"

#include <perfmon/pfmlib.h>

#include <cstring>
#include <mutex>
#include <string_view>

namespace hwpmc::detail {

namespace {

std::mutex pfm_lock; // libpfm4 keeps global state

bool core_pmu(pfm_pmu_t pmu, bool *amd) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(pmu, &info) != PFM_SUCCESS || !info.is_present ||
        info.type != PFM_PMU_TYPE_CORE)
        return false;
    if (amd != nullptr)
        *amd = std::string_view(info.name).starts_with("amd64");
    return true;
}

} // namespace

pfm_source &pfm_source::instance() {
    static pfm_source source;
    return source;
}

bool pfm_source::ensure_initialized(std::string *why) {
    if (!initialized_) {
        init_error_ = pfm_initialize();
        initialized_ = true;
    }
    if (init_error_ != PFM_SUCCESS) {
        if (why != nullptr)
            *why = std::string("libpfm4: ") + pfm_strerror(init_error_);
        return false;
    }
    return true;
}

void pfm_source::reinitialize() {
    std::lock_guard lock(pfm_lock);
    if (initialized_ && init_error_ == PFM_SUCCESS)
        pfm_terminate();
    initialized_ = false;
}

std::optional<hw_event> pfm_source::lookup(const std::string &name, std::string *why) {
    std::lock_guard lock(pfm_lock);
    if (!ensure_initialized(why))
        return std::nullopt;
    uint64_t codes[4] = {};
    pfm_pmu_encode_arg_t arg;
    std::memset(&arg, 0, sizeof(arg));
    arg.size = sizeof(arg);
    arg.codes = codes;
    arg.count = 4;
    const int rc = pfm_get_os_event_encoding(name.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
    if (rc != PFM_SUCCESS) {
        *why = pfm_strerror(rc);
        return std::nullopt;
    }
    pfm_event_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    bool amd = false;
    if (pfm_get_event_info(arg.idx, PFM_OS_NONE, &info) != PFM_SUCCESS ||
        !core_pmu(info.pmu, &amd)) {
        *why = "not an event of the CPU's core PMU";
        return std::nullopt;
    }
    return hw_event{amd, codes[0], arg.count > 1 ? codes[1] : 0};
}

std::vector<std::pair<std::string, std::string>> pfm_source::described() {
    std::lock_guard lock(pfm_lock);
    std::vector<std::pair<std::string, std::string>> out;
    if (!ensure_initialized(nullptr))
        return out;
    int pmu;
    pfm_for_all_pmus(pmu) {
        const auto p = static_cast<pfm_pmu_t>(pmu);
        pfm_pmu_info_t pinfo;
        std::memset(&pinfo, 0, sizeof(pinfo));
        pinfo.size = sizeof(pinfo);
        if (!core_pmu(p, nullptr) || pfm_get_pmu_info(p, &pinfo) != PFM_SUCCESS)
            continue;
        for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
            pfm_event_info_t info;
            std::memset(&info, 0, sizeof(info));
            info.size = sizeof(info);
            if (pfm_get_event_info(i, PFM_OS_NONE, &info) == PFM_SUCCESS)
                out.emplace_back(info.name, info.desc != nullptr ? info.desc : "");
        }
    }
    return out;
}

std::vector<std::string> pfm_source::names() {
    std::vector<std::string> out;
    for (auto &e : described())
        out.push_back(std::move(e.first));
    return out;
}

bool pfm_source::has_core_pmu() {
    std::lock_guard lock(pfm_lock);
    if (!ensure_initialized(nullptr))
        return false;
    int pmu;
    pfm_for_all_pmus(pmu) {
        if (core_pmu(static_cast<pfm_pmu_t>(pmu), nullptr))
            return true;
    }
    return false;
}

} // namespace hwpmc::detail
