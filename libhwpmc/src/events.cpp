// SPDX-License-Identifier: BSD-2-Clause
// pmc_event_names_of_class(3) and pmc_name_of_event(3).
#include "capi_state.hpp"
#include "cpu_family.hpp"
#include "spec/aliases.hpp"
#include "spec/pfm_source.hpp"
#include "spec/soft_events.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace hwpmc::detail;

namespace {

// Names handed out as const char * live here for the life of the process,
// as FreeBSD's static tables do.
const char *intern(const std::string &s) {
    static std::mutex lock;
    static std::set<std::string> strings;
    std::lock_guard guard(lock);
    return strings.insert(s).first->c_str();
}

bool initialized() {
    return hot().fd.load(std::memory_order_acquire) >= 0;
}

// The SOFT events of the session, or the header's before pmc_init().
std::vector<soft_event> soft_events() {
    if (initialized())
        return capi().info.soft;
    const auto d = default_soft_events();
    return {d.begin(), d.end()};
}

bool class_names(enum pmc_class cl, std::vector<const char *> *out) {
    switch (cl) {
    case PMC_CLASS_TSC:
        out->push_back("TSC");
        return true;
    case PMC_CLASS_SOFT:
        for (const auto &e : soft_events())
            out->push_back(intern(e.name));
        return true;
    case PMC_CLASS_IAF:
        if (initialized() && capi().info.aliases != alias_set::intel_arch)
            return true; // not an Intel CPU: no events
        for (auto n : iaf_event_names())
            out->push_back(intern(std::string(n)));
        return true;
    case PMC_CLASS_IAP:
    case PMC_CLASS_K8: {
        // The generic aliases, then the core PMU's libpfm4 events.
        const bool intel = cl == PMC_CLASS_IAP;
        const alias_set set = initialized() ? capi().info.aliases
                                            : (intel ? alias_set::intel_arch : alias_set::amd_zen);
        if ((set == alias_set::intel_arch) != intel)
            return true; // this CPU has no such class: no events
        for (auto a : alias_names())
            if (alias_lookup(set, a))
                out->push_back(intern(std::string(a)));
        for (const auto &n : pfm_source::instance().names())
            out->push_back(intern(n));
        return true;
    }
    }
    return false;
}

} // namespace

extern "C" {

int pmc_event_names_of_class(enum pmc_class cl, const char ***eventnames, int *nevents) {
    if (eventnames == nullptr || nevents == nullptr) {
        errno = EINVAL;
        return -1;
    }
    std::vector<const char *> names;
    if (!class_names(cl, &names)) {
        errno = EINVAL;
        return -1;
    }
    auto **array = static_cast<const char **>(std::malloc((names.size() + 1) * sizeof(char *)));
    if (array == nullptr)
        return -1; // ENOMEM
    std::copy(names.begin(), names.end(), array);
    array[names.size()] = nullptr;
    *eventnames = array;
    *nevents = static_cast<int>(names.size());
    return 0;
}

const char *pmc_name_of_event(enum pmc_event pe) {
    const uint32_t cls = PMC_EV_CLASS(pe);
    const uint32_t code = PMC_EV_CODE(pe);
    switch (cls) {
    case PMC_CLASS_TSC:
        if (code == 0)
            return "TSC";
        break;
    case PMC_CLASS_SOFT:
        for (const auto &e : soft_events())
            if (e.code == code)
                return intern(e.name);
        break;
    case PMC_CLASS_IAF:
        if (code < iaf_event_names().size())
            return intern(std::string(iaf_event_names()[code]));
        break;
    case PMC_CLASS_IAP:
    case PMC_CLASS_K8: {
        // The code alone (no unit mask): name it as a raw specifier.
        if (code > 0xfff)
            break;
        char buf[32];
        std::snprintf(buf, sizeof(buf), "event=0x%x", code);
        return intern(buf);
    }
    default:
        break;
    }
    errno = EINVAL;
    return nullptr;
}

const char *pmc_alias_of_event(enum pmc_cputype cputype, enum pmc_class cl, uint32_t event,
                               uint32_t umask) {
    const alias_set set = alias_set_for(cputype, x86_cpu_family());
    const bool intel = set == alias_set::intel_arch;
    if (set != alias_set::none && cl == (intel ? PMC_CLASS_IAP : PMC_CLASS_K8)) {
        for (auto name : alias_names()) {
            const auto code = alias_lookup(set, name);
            if (code && code->event == event && code->umask == umask)
                return intern(std::string(name));
        }
    }
    errno = EINVAL;
    return nullptr;
}

} // extern "C"
