// SPDX-License-Identifier: BSD-2-Clause
// Issue 18: FreeBSD programs on libhwpmc.  The compat include directory's
// layouts translated to the Linux ABI (freebsd_shim.c is written against
// them; the fake kernel sees the Linux side), pmc_raw_op(), pmc_owner_fd(),
// GETPMCINFO's global event numbers, and the pmc_pmu_* family on libpfm4.
#include "capi_fixture.hpp"
#include "capi_state.hpp"
#include "fake_kernel.hpp"
#include "freebsd_shim.h"
#include "ops.hpp"

#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using hwpmc::testing::fake_kernel;

namespace {

// FreeBSD's flags of the compat <sys/pmc.h> (not in <linux/hwpmc.h>).
constexpr uint32_t kFreeBsdUserCallchain = 0x100; // PMC_F_USERCALLCHAIN
constexpr uint32_t kFreeBsdEvPmu = 0x200;         // PMC_F_EV_PMU

class BsdCompat : public hwpmc::testing::capi_test {};

TEST_F(BsdCompat, RawOpNeedsInitAndAKnownOp) {
    pmc_op_simple s{};
    errno = 0;
    EXPECT_EQ(pmc_raw_op(PMC_OP_PMCSTART, &s), -1);
    EXPECT_EQ(errno, ENXIO);
    EXPECT_EQ(pmc_owner_fd(), -1);
    init();
    EXPECT_GE(pmc_owner_fd(), 0);
    EXPECT_EQ(pmc_raw_op(PMC_OP_MAX + 1, &s), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_raw_op(PMC_OP_PMCSTART, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_raw_op(PMC_OP_FLUSHLOG, nullptr), -1); // no log: the kernel's EINVAL
}

TEST_F(BsdCompat, RawAllocateIsTheLibrarysPmc) {
    init();
    pmc_op_pmcallocate a{};
    a.pm_cpu = PMC_CPU_ANY;
    a.pm_class = PMC_CLASS_SOFT;
    a.pm_event = PMC_SOFT_CLOCK_PROF;
    a.pm_mode = PMC_MODE_TC;
    a.pm_count = 42;
    ASSERT_EQ(pmc_raw_op(PMC_OP_PMCALLOCATE, &a), 0) << std::strerror(errno);
    // The pmc(3) calls work on it, pmc_width() too.
    uint32_t width = 0;
    EXPECT_EQ(pmc_width(a.pm_pmcid, &width), 0);
    pmc_value_t v = 0;
    EXPECT_EQ(pmc_read(a.pm_pmcid, &v), 0);
    EXPECT_EQ(v, 42u);
    pmc_op_simple s{};
    s.pm_pmcid = a.pm_pmcid;
    EXPECT_EQ(pmc_raw_op(PMC_OP_PMCRELEASE, &s), 0);
    EXPECT_EQ(k.pmcs.count(a.pm_pmcid), 0u);
    EXPECT_EQ(pmc_width(a.pm_pmcid, &width), -1);
}

TEST_F(BsdCompat, FreeBsdAllocateSoftAndTsc) {
    init();
    uint32_t id = 0;
    ASSERT_EQ(fb_allocate(PMC_CLASS_SOFT, PMC_EV_SOFT_SYSCALL_ENTER, PMC_MODE_TC,
                          PMC_F_DESCENDANTS | kFreeBsdUserCallchain | kFreeBsdEvPmu, PMC_CPU_ANY, 0,
                          0, &id),
              0);
    ASSERT_EQ(k.pmcs.count(id), 1u);
    EXPECT_EQ(k.pmcs[id].alloc.pm_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
    EXPECT_EQ(k.pmcs[id].alloc.pm_event, static_cast<uint32_t>(PMC_SOFT_SYSCALL_ENTER));
    // The FreeBSD-only flags are dropped, the others kept.
    EXPECT_EQ(k.pmcs[id].alloc.pm_flags, static_cast<uint32_t>(PMC_F_DESCENDANTS));
    // An event of another class: EINVAL before the kernel.
    EXPECT_EQ(fb_allocate(PMC_CLASS_TSC, PMC_EV_SOFT_CLOCK_PROF, PMC_MODE_SC, 0, 0, 0, 0, &id),
              EINVAL);
    EXPECT_EQ(fb_allocate(PMC_CLASS_TSC, PMC_EV_TSC_TSC, PMC_MODE_SC, 0, 0, 0, 0, &id), 0);
    // A FreeBSD class this port lacks (IBS: 0x20 in the compat header).
    EXPECT_EQ(fb_allocate(0x20, 0, PMC_MODE_SC, 0, 0, 0, 0, &id), EINVAL);
}

TEST_F(BsdCompat, FreeBsdAttachRwAndSimpleOps) {
    init();
    uint32_t id = 0;
    ASSERT_EQ(
        fb_allocate(PMC_CLASS_SOFT, PMC_EV_SOFT_CLOCK_HARD, PMC_MODE_TC, 0, PMC_CPU_ANY, 0, 0, &id),
        0);
    EXPECT_EQ(fb_attach(id, 1234), 0);
    ASSERT_EQ(k.pmcs[id].targets.size(), 1u);
    EXPECT_EQ(k.pmcs[id].targets[0], 1234);
    EXPECT_EQ(fb_simple(PMC_OP_PMCSTART, id), 0);
    EXPECT_TRUE(k.pmcs[id].running);
    EXPECT_EQ(fb_simple(PMC_OP_PMCSTOP, id), 0);
    uint64_t v = 77;
    EXPECT_EQ(fb_rw(id, PMC_F_NEWVALUE, &v), 0);
    v = 0;
    EXPECT_EQ(fb_rw(id, PMC_F_OLDVALUE, &v), 0);
    EXPECT_EQ(v, 77u);
    uint32_t version = 0;
    EXPECT_EQ(fb_version(&version), 0);
    EXPECT_EQ(version, static_cast<uint32_t>(HWPMC_VERSION));
    unsigned calls = 0;
    EXPECT_EQ(fb_stats(&calls), 0);
    EXPECT_EQ(fb_simple(PMC_OP_PMCRELEASE, id), 0);
    EXPECT_EQ(k.pmcs.count(id), 0u);
    EXPECT_TRUE(fb_constants_ok());
}

TEST_F(BsdCompat, FreeBsdHardwareClasses) {
    k.hw_classes = true;
    init();
    uint32_t id = 0;
    // IAP: event 0xc0, umask 0x01, usr, interrupt (dropped), enable (dropped).
    const uint64_t iap = 0xc0 | 0x01 << 8 | 1ull << 16 | 1ull << 20 | 1ull << 22;
    ASSERT_EQ(fb_allocate(PMC_CLASS_IAP, 0, PMC_MODE_TC, 0, PMC_CPU_ANY, iap, 0, &id), 0);
    EXPECT_EQ(k.pmcs[id].alloc.pm_event, 0xc0u);
    EXPECT_EQ(k.pmcs[id].alloc.pm_config, 0x01ull << 8 | 1ull << 16);
    EXPECT_EQ(fb_allocate(PMC_CLASS_IAP, 0, PMC_MODE_TC, 0, PMC_CPU_ANY, iap, 1, &id), EINVAL)
        << "pm_iap_rsp (OFFCORE_RSP) is not supported";
    // IAF: pm_ev names the counter, the flags usr/os/any.
    ASSERT_EQ(fb_allocate(PMC_CLASS_IAF, PMC_EV_MAKE(PMC_CLASS_IAF, 1), PMC_MODE_TC, 0, PMC_CPU_ANY,
                          0x2 /* IAF_USR */, 0, &id),
              0);
    EXPECT_EQ(k.pmcs[id].alloc.pm_event, 1u);
    EXPECT_EQ(k.pmcs[id].alloc.pm_config, 1ull << 16);
    // K8: only with PMC_F_EV_PMU and the core sub-class, as FreeBSD.
    const uint64_t k8 = (0x1c0 & 0xff) | 1ull << 32 | 0x03 << 8 | 1ull << 17; // event 0x1c0
    EXPECT_EQ(fb_allocate(PMC_CLASS_K8, 0, PMC_MODE_TC, 0, PMC_CPU_ANY, k8, 0, &id), EINVAL);
    EXPECT_EQ(fb_allocate(PMC_CLASS_K8, 0, PMC_MODE_TC, kFreeBsdEvPmu, PMC_CPU_ANY, k8,
                          2 /* DATA_FABRIC */, &id),
              EINVAL);
    ASSERT_EQ(fb_allocate(PMC_CLASS_K8, 0, PMC_MODE_TC, kFreeBsdEvPmu, PMC_CPU_ANY, k8, 0, &id), 0);
    EXPECT_EQ(k.pmcs[id].alloc.pm_event, 0x1c0u);
    EXPECT_EQ(k.pmcs[id].alloc.pm_config, 0x03ull << 8 | 1ull << 17);
    EXPECT_EQ(k.pmcs[id].alloc.pm_flags, 0u);
}

// GETPMCINFO: the global event number whatever the module's version.
TEST_F(BsdCompat, PmcinfoEventIsGlobal) {
    for (const uint32_t given :
         {static_cast<uint32_t>(PMC_SOFT_PAGE_FAULT_ALL),              // module 1.3
          HWPMC_EV_GLOBAL(PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_ALL)}) { // module 1.4
        hwpmc::detail::capi_reset();
        k.install();
        k.owned_row = 2;
        k.owned_event = given;
        init();
        struct pmc_pmcinfo *pi = nullptr;
        ASSERT_EQ(pmc_pmcinfo(0, &pi), 0);
        EXPECT_EQ(pi->pm_pmcs[2].pm_event, static_cast<uint32_t>(PMC_EV_SOFT_PAGE_FAULT_ALL));
        EXPECT_STREQ(pmc_name_of_event(static_cast<enum pmc_event>(pi->pm_pmcs[2].pm_event)),
                     "PAGE_FAULT.ALL");
        std::free(pi);
        // And through FreeBSD's layouts.
        uint32_t n = 0, events[64] = {}, classes[64] = {};
        ASSERT_EQ(fb_rows(0, &n, events, classes, 64), 0);
        ASSERT_GT(n, 2u);
        EXPECT_EQ(events[2], static_cast<uint32_t>(PMC_EV_SOFT_PAGE_FAULT_ALL));
        EXPECT_EQ(classes[2], static_cast<uint32_t>(PMC_CLASS_SOFT));
        EXPECT_STREQ(fb_name_of_event(events[2]), "PAGE_FAULT.ALL");
    }
}

TEST(BsdCompatNames, CpuTypes) {
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_INTEL_PIV), "INTEL_PIV");
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_AMD_K7), "AMD_K7");
    EXPECT_STREQ(pmc_name_of_cputype(PMC_CPU_AMD_V2), "AMD_V2");
    // No FreeBSD name reuses one of this port's numbers.
    EXPECT_NE(static_cast<uint32_t>(PMC_CPU_AMD_K7), static_cast<uint32_t>(PMC_CPU_GENERIC));
}

// pmc_pmu_* on libpfm4's tables of a forced PMU, in a child (libpfm4 reads
// LIBPFM_FORCE_PMU once).
template <typename F>
void in_child_with_pmu(const char *pmu, F f) {
    std::fflush(stdout);
    const pid_t p = fork();
    ASSERT_GE(p, 0);
    if (p == 0) {
        setenv("LIBPFM_FORCE_PMU", pmu, 1);
        _exit(f());
    }
    int status = 0;
    ASSERT_EQ(waitpid(p, &status, 0), p);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "with " << pmu << ": failed check " << WEXITSTATUS(status);
}

TEST(BsdCompatPmu, IntelTables) {
    in_child_with_pmu("skl", [] {
        if (pmc_pmu_enabled() != 1)
            return 1;
        const int idx = pmc_pmu_idx_get_by_event(nullptr, "INST_RETIRED");
        if (idx < 0)
            return 2;
        const char *name = pmc_pmu_event_get_by_idx(nullptr, idx);
        if (name == nullptr || strcasecmp(name, "INST_RETIRED") != 0)
            return 3;
        if (pmc_pmu_event_get_by_idx(nullptr, -1) != nullptr)
            return 4;
        if (pmc_pmu_sample_rate_get("INST_RETIRED:ANY_P") != PMC_PMU_SAMPLE_COUNT)
            return 5;
        if (pmc_pmu_sample_rate_get("no_such_event") != PMC_PMU_DEFAULT_SAMPLE_COUNT)
            return 6;
        pmc_op_pmcallocate a{};
        a.pm_caps = PMC_CAP_USER;
        if (pmc_pmu_pmcallocate("INST_RETIRED:ANY_P", &a) != 0)
            return 7;
        if (a.pm_class != PMC_CLASS_IAP || a.pm_event != 0xc0 ||
            (a.pm_config & (PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS)) != PMC_X86_CONFIG_USR ||
            !(a.pm_caps & PMC_CAP_READ))
            return 8;
        if (pmc_pmu_pmcallocate("no_such_event", &a) != ENOENT)
            return 9;
        const char **names = nullptr;
        if (pmc_pmu_stat_mode(&names) != 0 || names == nullptr || std::string(names[0]) != "cycles")
            return 10;
        return 0;
    });
}

TEST(BsdCompatPmu, AmdTables) {
    in_child_with_pmu("amd64_fam17h_zen1", [] {
        pmc_op_pmcallocate a{};
        if (pmc_pmu_pmcallocate("RETIRED_INSTRUCTIONS", &a) != 0)
            return 1;
        if (a.pm_class != PMC_CLASS_K8 || a.pm_event != 0xc0 ||
            (a.pm_config & (PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS)) !=
                (PMC_X86_CONFIG_USR | PMC_X86_CONFIG_OS))
            return 2;
        return 0;
    });
}

} // namespace
