// SPDX-License-Identifier: BSD-2-Clause
// The pmc(3) C API against the fake kernel: what each call sends and how
// it reports the answer.
#include "capi_fixture.hpp"
#include "capi_state.hpp"
#include "fake_kernel.hpp"

#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>

using hwpmc::testing::fake_kernel;

namespace {

std::size_t open_fds() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator("/proc/self/fd"))
        ++n;
    return n;
}

class CApi : public hwpmc::testing::capi_test {
protected:
    pmc_id_t allocate(const char *spec, pmc_mode mode = PMC_MODE_TC, int cpu = PMC_CPU_ANY,
                      uint64_t count = 0, uint32_t flags = 0) {
        pmc_id_t id = PMC_ID_INVALID;
        EXPECT_EQ(pmc_allocate(spec, mode, flags, cpu, &id, count), 0)
            << strerror(errno) << ": " << pmc_errmsg();
        return id;
    }
};

TEST_F(CApi, InitCachesCpuInfo) {
    init();
    const struct pmc_cpuinfo *ci = nullptr;
    ASSERT_EQ(pmc_cpuinfo(&ci), 0);
    EXPECT_EQ(ci->pm_cputype, PMC_CPU_GENERIC);
    EXPECT_EQ(ci->pm_ncpu, 2u);
    EXPECT_EQ(ci->pm_npmc, 19u);
    ASSERT_EQ(ci->pm_nclass, 2u);
    EXPECT_EQ(ci->pm_classes[0].pm_class, static_cast<uint32_t>(PMC_CLASS_TSC));
    EXPECT_EQ(ci->pm_classes[1].pm_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
    EXPECT_EQ(ci->pm_classes[1].pm_num, 16u);
    EXPECT_EQ(pmc_ncpu(), 2);
    EXPECT_EQ(pmc_npmc(1), 19);
    errno = 0;
    EXPECT_EQ(pmc_npmc(2), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_npmc(-1), -1);
    EXPECT_EQ(pmc_cpuinfo(nullptr), -1);
}

TEST_F(CApi, InitTwiceIsANoOp) {
    init();
    const unsigned calls = k.calls;
    EXPECT_EQ(pmc_init(), 0);
    EXPECT_EQ(k.calls, calls);
}

TEST_F(CApi, MajorVersionMismatchIsEPROTO) {
    k.version = HWPMC_VERSION_MAKE(HWPMC_VERSION_MAJOR + 1, 0, 0);
    const std::size_t before = open_fds();
    errno = 0;
    EXPECT_EQ(pmc_init(), -1);
    EXPECT_EQ(errno, EPROTO);
    EXPECT_EQ(open_fds(), before);
    EXPECT_EQ(pmc_ncpu(), -1); // still not initialized
    EXPECT_EQ(errno, ENXIO);
}

TEST_F(CApi, NewerMinorVersionIsAccepted) {
    k.version = HWPMC_VERSION_MAKE(HWPMC_VERSION_MAJOR, HWPMC_VERSION_MINOR + 3, 7);
    init();
}

TEST_F(CApi, AllocateCountingSoftPmc) {
    init();
    const pmc_id_t id = allocate("SOFT-CLOCK.PROF");
    ASSERT_TRUE(k.pmcs.count(id));
    const pmc_op_pmcallocate &a = k.pmcs[id].alloc;
    EXPECT_EQ(a.pm_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
    EXPECT_EQ(a.pm_event, static_cast<uint32_t>(PMC_SOFT_CLOCK_PROF));
    EXPECT_EQ(a.pm_mode, static_cast<uint32_t>(PMC_MODE_TC));
    EXPECT_EQ(a.pm_cpu, PMC_CPU_ANY);
    EXPECT_EQ(a.pm_caps, static_cast<uint32_t>(PMC_CAP_READ));
    EXPECT_EQ(a.pm_flags, 0u);
    EXPECT_EQ(a.pm_config, 0u);
}

TEST_F(CApi, AllocateSamplingAsksForInterrupts) {
    init();
    const pmc_id_t id = allocate("clock.prof", PMC_MODE_SS, 1, 100000, PMC_F_CALLCHAIN);
    const pmc_op_pmcallocate &a = k.pmcs[id].alloc;
    EXPECT_EQ(a.pm_cpu, 1u);
    EXPECT_EQ(a.pm_mode, static_cast<uint32_t>(PMC_MODE_SS));
    EXPECT_EQ(a.pm_count, 100000u);
    EXPECT_EQ(a.pm_flags, static_cast<uint32_t>(PMC_F_CALLCHAIN));
    EXPECT_EQ(a.pm_caps, static_cast<uint32_t>(PMC_CAP_READ | PMC_CAP_INTERRUPT));
}

TEST_F(CApi, OnlyMinusOneMeansAnyCpu) {
    init();
    EXPECT_EQ(k.pmcs[allocate("clock.prof", PMC_MODE_TC, -1)].alloc.pm_cpu, PMC_CPU_ANY);
    for (int cpu : {-2, INT_MIN}) {
        pmc_id_t id = PMC_ID_INVALID;
        errno = 0;
        EXPECT_EQ(pmc_allocate("clock.prof", PMC_MODE_SC, 0, cpu, &id, 0), -1) << cpu;
        EXPECT_EQ(errno, EINVAL) << cpu;
    }
    EXPECT_EQ(k.pmcs.size(), 1u);
}

TEST_F(CApi, BadSpecifierIsEINVALWithMessage) {
    init();
    pmc_id_t id = 0;
    errno = 0;
    EXPECT_EQ(pmc_allocate("SOFT-CLOCK.PRO", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    const std::string msg = pmc_errmsg();
    EXPECT_NE(msg.find("\"SOFT-CLOCK.PRO\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("SOFT-CLOCK.PROF"), std::string::npos) << msg;
    EXPECT_TRUE(k.pmcs.empty());
    allocate("tsc", PMC_MODE_SC, 0);
    EXPECT_STREQ(pmc_errmsg(), ""); // cleared by the next pmc_allocate()
}

TEST_F(CApi, KernelRefusalKeepsItsErrno) {
    init();
    pmc_id_t id = 0;
    errno = 0;
    // Process scope with a CPU: the kernel says EINVAL, no message.
    EXPECT_EQ(pmc_allocate("tsc", PMC_MODE_TC, 0, 1, &id, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_STREQ(pmc_errmsg(), "");
    EXPECT_EQ(pmc_allocate("tsc", static_cast<pmc_mode>(7), 0, 0, &id, 0), -1);
    EXPECT_EQ(pmc_allocate(nullptr, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), -1);
    EXPECT_EQ(pmc_allocate("tsc", PMC_MODE_TC, 0, PMC_CPU_ANY, nullptr, 0), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(CApi, SoftEventsComeFromTheKernel) {
    init();
    pmc_id_t id = 0;
    // The fake kernel offers no SCHED.SWITCH.
    EXPECT_EQ(pmc_allocate("SOFT-SCHED.SWITCH", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    allocate("SOFT-SYSCALL.ENTER");
}

TEST_F(CApi, SoftEventsFallBackToTheHeader) {
    k.dyn_events = false;
    init();
    const pmc_id_t id = allocate("SOFT-SCHED.SWITCH");
    EXPECT_EQ(k.pmcs[id].alloc.pm_event, static_cast<uint32_t>(PMC_SOFT_SCHED_SWITCH));
}

TEST_F(CApi, HardwareEventsNeedAPmu) {
    init(); // PMC_CPU_GENERIC
    pmc_id_t id = 0;
    EXPECT_EQ(pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(pmc_errmsg()).find("hardware PMU"), std::string::npos);
}

TEST_F(CApi, Lifecycle) {
    init();
    const pmc_id_t id = allocate("SOFT-CLOCK.PROF", PMC_MODE_TC, PMC_CPU_ANY, 5);
    EXPECT_EQ(pmc_attach(id, 0), 0);
    EXPECT_EQ(k.pmcs[id].targets, std::vector<int32_t>{0});
    EXPECT_EQ(pmc_start(id), 0);
    EXPECT_TRUE(k.pmcs[id].running);
    pmc_value_t v = 0;
    EXPECT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 1005u);
    errno = 0;
    EXPECT_EQ(pmc_write(id, 1), -1); // the fake refuses writes while running
    EXPECT_EQ(errno, EBUSY);
    EXPECT_EQ(pmc_stop(id), 0);
    EXPECT_EQ(pmc_write(id, 40), 0);
    EXPECT_EQ(pmc_rw(id, 50, &v), 0);
    EXPECT_EQ(v, 40u);
    EXPECT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 50u);
    EXPECT_EQ(pmc_set(id, 777), 0);
    EXPECT_EQ(k.pmcs[id].alloc.pm_count, 777u);
    uint32_t caps = 0, width = 0, msr = 0;
    EXPECT_EQ(pmc_capabilities(id, &caps), 0);
    EXPECT_EQ(caps, static_cast<uint32_t>(PMC_CAP_READ));
    EXPECT_EQ(pmc_width(id, &width), 0);
    EXPECT_EQ(width, 64u);
    EXPECT_EQ(pmc_get_msr(id, &msr), 0);
    EXPECT_EQ(msr, 0x40000000u + id);
    EXPECT_EQ(pmc_detach(id, 0), 0);
    EXPECT_EQ(pmc_release(id), 0);
    EXPECT_TRUE(k.pmcs.empty());
    errno = 0;
    EXPECT_EQ(pmc_width(id, &width), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_start(id), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_read(id, nullptr), -1);
}

// A read interrupted by a signal is made again, and gives the value; an
// error other than EINTR reaches the caller with its errno.
TEST_F(CApi, ReadRetriesAfterEintr) {
    init();
    const pmc_id_t id = allocate("SOFT-CLOCK.PROF", PMC_MODE_TC, PMC_CPU_ANY, 5);
    ASSERT_EQ(pmc_attach(id, 0), 0);
    ASSERT_EQ(pmc_start(id), 0);
    k.rw_calls = 0;
    k.eintr_next = 3;
    pmc_value_t v = 0;
    EXPECT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 1005u);
    EXPECT_EQ(k.rw_calls, 4u);
    EXPECT_EQ(k.eintr_next, 0u);
    v = 7;
    errno = 0;
    EXPECT_EQ(pmc_read(id + 1000, &v), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(v, 7u);
    k.eintr_next = 1;
    errno = 0;
    EXPECT_EQ(pmc_read(id + 1000, &v), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(v, 7u);
}

TEST_F(CApi, LogOperations) {
    init();
    EXPECT_EQ(pmc_configure_logfile(5), 0);
    EXPECT_EQ(k.logfd, 5);
    EXPECT_EQ(pmc_writelog(0xfeed), 0);
    EXPECT_EQ(k.userdata, std::vector<uint32_t>{0xfeed});
    EXPECT_EQ(pmc_flush_logfile(), 0);
    EXPECT_EQ(k.flushes, 1u);
    EXPECT_EQ(pmc_close_logfile(), 0);
    errno = 0;
    EXPECT_EQ(pmc_flush_logfile(), -1);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_EQ(pmc_configure_logfile(-1), 0);
}

TEST_F(CApi, DriverStats) {
    init();
    struct pmc_driverstats ds {};
    ASSERT_EQ(pmc_get_driver_stats(&ds), 0);
    EXPECT_GT(ds.pm_syscalls, 0u);
    EXPECT_EQ(ds.pm_intr_processed, UINT_MAX); // clamped, not wrapped
    EXPECT_EQ(ds.pm_samples_taken, 7u);
    EXPECT_EQ(pmc_get_driver_stats(nullptr), -1);
}

TEST_F(CApi, EnableDisable) {
    init();
    EXPECT_EQ(pmc_disable(1, 3), 0);
    EXPECT_EQ((k.admin[{1, 3}]), static_cast<uint32_t>(PMC_STATE_DISABLED));
    EXPECT_EQ(pmc_enable(1, 3), 0);
    EXPECT_EQ((k.admin[{1, 3}]), static_cast<uint32_t>(PMC_STATE_FREE));
    errno = 0;
    EXPECT_EQ(pmc_enable(-1, 3), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(CApi, PmcInfo) {
    init();
    struct pmc_pmcinfo *pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(1, &pi), 0);
    EXPECT_EQ(pi->pm_cpu, 1);
    ASSERT_EQ(pi->pm_npmc, 19u);
    EXPECT_STREQ(pi->pm_pmcs[0].pm_name, "TSC-0");
    EXPECT_STREQ(pi->pm_pmcs[18].pm_name, "SOFT-17");
    EXPECT_EQ(pi->pm_pmcs[3].pm_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
    std::free(pi);
    errno = 0;
    EXPECT_EQ(pmc_pmcinfo(2, &pi), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(CApi, PmcInfoRetriesWhenRowsGrow) {
    init();
    k.grow_rows_once = 2;
    struct pmc_pmcinfo *pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(0, &pi), 0);
    EXPECT_EQ(pi->pm_npmc, 19u);
    std::free(pi);
}

TEST_F(CApi, EventNamesOfClass) {
    init();
    const char **names = nullptr;
    int n = 0;
    ASSERT_EQ(pmc_event_names_of_class(PMC_CLASS_SOFT, &names, &n), 0);
    ASSERT_EQ(n, 4);
    EXPECT_STREQ(names[1], "CLOCK.PROF");
    EXPECT_STREQ(names[3], "SYSCALL.ENTER");
    std::free(names);
    ASSERT_EQ(pmc_event_names_of_class(PMC_CLASS_TSC, &names, &n), 0);
    ASSERT_EQ(n, 1);
    EXPECT_STREQ(names[0], "TSC");
    std::free(names);
    ASSERT_EQ(pmc_event_names_of_class(PMC_CLASS_IAF, &names, &n), 0);
    EXPECT_EQ(n, 0); // not an Intel CPU
    std::free(names);
    errno = 0;
    EXPECT_EQ(pmc_event_names_of_class(static_cast<pmc_class>(1), &names, &n), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(CApi, NameOfEvent) {
    init();
    EXPECT_STREQ(pmc_name_of_event(PMC_EV_TSC_TSC), "TSC");
    EXPECT_STREQ(pmc_name_of_event(PMC_EV_SOFT_CLOCK_PROF), "CLOCK.PROF");
    EXPECT_STREQ(pmc_name_of_event(PMC_EV_MAKE(PMC_CLASS_SOFT, 2)), "PAGE_FAULT.ALL");
    EXPECT_STREQ(pmc_name_of_event(PMC_EV_MAKE(PMC_CLASS_IAF, 1)), "CPU_CLK_UNHALTED_CORE");
    EXPECT_STREQ(pmc_name_of_event(PMC_EV_MAKE(PMC_CLASS_IAP, 0xc0)), "event=0xc0");
    errno = 0;
    EXPECT_EQ(pmc_name_of_event(PMC_EV_SOFT_SCHED_SWITCH), nullptr); // not offered here
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_name_of_event(PMC_EV_MAKE(PMC_CLASS_TSC, 1)), nullptr);
}

TEST_F(CApi, EverythingNeedsInit) {
    pmc_id_t id = 0;
    pmc_value_t v = 0;
    uint32_t u = 0;
    struct pmc_driverstats ds;
    struct pmc_pmcinfo *pi = nullptr;
    const auto enxio = [](int rc) { return rc == -1 && errno == ENXIO; };
    EXPECT_TRUE(enxio(pmc_allocate("tsc", PMC_MODE_SC, 0, 0, &id, 0)));
    EXPECT_TRUE(enxio(pmc_attach(1, 0)));
    EXPECT_TRUE(enxio(pmc_detach(1, 0)));
    EXPECT_TRUE(enxio(pmc_start(1)));
    EXPECT_TRUE(enxio(pmc_stop(1)));
    EXPECT_TRUE(enxio(pmc_read(1, &v)));
    EXPECT_TRUE(enxio(pmc_write(1, 0)));
    EXPECT_TRUE(enxio(pmc_rw(1, 0, &v)));
    EXPECT_TRUE(enxio(pmc_set(1, 0)));
    EXPECT_TRUE(enxio(pmc_release(1)));
    EXPECT_TRUE(enxio(pmc_capabilities(1, &u)));
    EXPECT_TRUE(enxio(pmc_width(1, &u)));
    EXPECT_TRUE(enxio(pmc_get_msr(1, &u)));
    EXPECT_TRUE(enxio(pmc_configure_logfile(3)));
    EXPECT_TRUE(enxio(pmc_flush_logfile()));
    EXPECT_TRUE(enxio(pmc_close_logfile()));
    EXPECT_TRUE(enxio(pmc_writelog(1)));
    EXPECT_TRUE(enxio(pmc_get_driver_stats(&ds)));
    EXPECT_TRUE(enxio(pmc_enable(0, 0)));
    EXPECT_TRUE(enxio(pmc_disable(0, 0)));
    EXPECT_TRUE(enxio(pmc_pmcinfo(0, &pi)));
    EXPECT_EQ(k.calls, 0u);
}

} // namespace
