// SPDX-License-Identifier: BSD-2-Clause
// pmc_name_of_*(3): FreeBSD's names (the enumerator without its prefix).
#include <hwpmc/pmc.h>

#include <bit>
#include <cerrno>
#include <iterator>

namespace {

template <typename E>
struct named {
    E value;
    const char *name;
};

constexpr named<pmc_class> class_names[] = {
    {PMC_CLASS_TSC, "TSC"}, {PMC_CLASS_K8, "K8"},     {PMC_CLASS_IAF, "IAF"},
    {PMC_CLASS_IAP, "IAP"}, {PMC_CLASS_SOFT, "SOFT"},
};

constexpr named<pmc_cputype> cputype_names[] = {
    {PMC_CPU_GENERIC, "GENERIC"},
    {PMC_CPU_INTEL_ARCH, "INTEL_ARCH"},
    {PMC_CPU_AMD_K8, "AMD_K8"},
    {PMC_CPU_AMD_EXT, "AMD_EXT"},
    {PMC_CPU_AMD_V2, "AMD_V2"},
    // FreeBSD's other CPU types (never reported by the module).
    {PMC_CPU_AMD_K7, "AMD_K7"},
    {PMC_CPU_INTEL_P5, "INTEL_P5"},
    {PMC_CPU_INTEL_P6, "INTEL_P6"},
    {PMC_CPU_INTEL_CL, "INTEL_CL"},
    {PMC_CPU_INTEL_PII, "INTEL_PII"},
    {PMC_CPU_INTEL_PIII, "INTEL_PIII"},
    {PMC_CPU_INTEL_PM, "INTEL_PM"},
    {PMC_CPU_INTEL_PIV, "INTEL_PIV"},
    {PMC_CPU_INTEL_CORE, "INTEL_CORE"},
    {PMC_CPU_INTEL_CORE2, "INTEL_CORE2"},
    {PMC_CPU_INTEL_CORE2EXTREME, "INTEL_CORE2EXTREME"},
    {PMC_CPU_INTEL_ATOM, "INTEL_ATOM"},
    {PMC_CPU_INTEL_COREI7, "INTEL_COREI7"},
    {PMC_CPU_INTEL_WESTMERE, "INTEL_WESTMERE"},
    {PMC_CPU_INTEL_SANDYBRIDGE, "INTEL_SANDYBRIDGE"},
    {PMC_CPU_INTEL_XSCALE, "INTEL_XSCALE"},
    {PMC_CPU_MIPS_24K, "MIPS_24K"},
    {PMC_CPU_MIPS_OCTEON, "MIPS_OCTEON"},
    {PMC_CPU_PPC_7450, "PPC_7450"},
};

constexpr named<pmc_mode> mode_names[] = {
    {PMC_MODE_SS, "SS"},
    {PMC_MODE_SC, "SC"},
    {PMC_MODE_TS, "TS"},
    {PMC_MODE_TC, "TC"},
};

constexpr named<pmc_state> state_names[] = {
    {PMC_STATE_DISABLED, "DISABLED"},   {PMC_STATE_FREE, "FREE"},
    {PMC_STATE_ALLOCATED, "ALLOCATED"}, {PMC_STATE_STOPPED, "STOPPED"},
    {PMC_STATE_RUNNING, "RUNNING"},     {PMC_STATE_DELETED, "DELETED"},
};

// FreeBSD's table names UNKNOWN too, but its range check stops at THREAD.
constexpr named<pmc_disp> disposition_names[] = {
    {PMC_DISP_STANDALONE, "STANDALONE"},
    {PMC_DISP_FREE, "FREE"},
    {PMC_DISP_THREAD, "THREAD"},
};

constexpr named<pmc_caps> capability_names[] = {
    {PMC_CAP_INTERRUPT, "INTERRUPT"}, {PMC_CAP_USER, "USER"},
    {PMC_CAP_SYSTEM, "SYSTEM"},       {PMC_CAP_EDGE, "EDGE"},
    {PMC_CAP_THRESHOLD, "THRESHOLD"}, {PMC_CAP_READ, "READ"},
    {PMC_CAP_WRITE, "WRITE"},         {PMC_CAP_INVERT, "INVERT"},
    {PMC_CAP_QUALIFIER, "QUALIFIER"}, {PMC_CAP_PRECISE, "PRECISE"},
    {PMC_CAP_TAGGING, "TAGGING"},     {PMC_CAP_CASCADE, "CASCADE"},
    {PMC_CAP_SYSWIDE, "SYSWIDE"},     {PMC_CAP_DOMWIDE, "DOMWIDE"},
    {PMC_CAP_ANYTHREAD, "ANYTHREAD"},
};

template <typename E, std::size_t N>
const char *lookup(const named<E> (&table)[N], E value) {
    for (const auto &entry : table)
        if (entry.value == value)
            return entry.name;
    errno = EINVAL;
    return nullptr;
}

} // namespace

extern "C" {

const char *pmc_name_of_class(enum pmc_class pc) {
    return lookup(class_names, pc);
}

const char *pmc_name_of_cputype(enum pmc_cputype cp) {
    return lookup(cputype_names, cp);
}

const char *pmc_name_of_mode(enum pmc_mode pm) {
    return lookup(mode_names, pm);
}

const char *pmc_name_of_state(enum pmc_state ps) {
    return lookup(state_names, ps);
}

const char *pmc_name_of_disposition(enum pmc_disp pd) {
    return lookup(disposition_names, pd);
}

const char *pmc_name_of_capability(enum pmc_caps c) {
    // Exactly one capability bit, as FreeBSD.
    if (!std::has_single_bit(static_cast<uint32_t>(c))) {
        errno = EINVAL;
        return nullptr;
    }
    return lookup(capability_names, c);
}

} // extern "C"
