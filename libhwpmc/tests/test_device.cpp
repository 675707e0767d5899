// SPDX-License-Identifier: BSD-2-Clause
// Integration tests of the C and C++ APIs against the real kernel module:
// they run in the guest (scripts/vm-run ... ctest -R Device) and skip where
// /dev/hwpmc is absent.  Only TSC and SOFT, which need no PMU.
#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

bool have_device() {
    const char *path = std::getenv("HWPMC_DEVICE");
    struct stat st;
    return ::stat(path != nullptr ? path : "/dev/hwpmc", &st) == 0 && S_ISCHR(st.st_mode);
}

void spin(std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    volatile unsigned long sink = 0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 10000; ++i)
            sink = sink + static_cast<unsigned long>(i);
}

class DeviceC : public ::testing::Test {
protected:
    void SetUp() override {
        if (!have_device())
            GTEST_SKIP() << "no /dev/hwpmc (the module is not loaded here)";
        ASSERT_EQ(pmc_init(), 0) << std::strerror(errno);
    }
    static pmc_id_t alloc(const char *spec, pmc_mode mode, int cpu = PMC_CPU_ANY,
                          uint64_t count = 0) {
        pmc_id_t id = PMC_ID_INVALID;
        EXPECT_EQ(pmc_allocate(spec, mode, 0, cpu, &id, count), 0)
            << spec << ": " << std::strerror(errno) << " " << pmc_errmsg();
        return id;
    }
};

TEST_F(DeviceC, CpuInfo) {
    const struct pmc_cpuinfo *ci = nullptr;
    ASSERT_EQ(pmc_cpuinfo(&ci), 0);
    EXPECT_GT(ci->pm_ncpu, 0u);
    EXPECT_EQ(pmc_ncpu(), static_cast<int>(ci->pm_ncpu));
    EXPECT_EQ(pmc_npmc(0), static_cast<int>(ci->pm_npmc));
    bool tsc = false, soft = false;
    for (uint32_t i = 0; i < ci->pm_nclass; ++i) {
        tsc |= ci->pm_classes[i].pm_class == PMC_CLASS_TSC;
        soft |= ci->pm_classes[i].pm_class == PMC_CLASS_SOFT;
        EXPECT_NE(pmc_name_of_class(static_cast<pmc_class>(ci->pm_classes[i].pm_class)), nullptr);
    }
    EXPECT_TRUE(tsc);
    EXPECT_TRUE(soft);
    EXPECT_NE(pmc_name_of_cputype(ci->pm_cputype), nullptr);
}

TEST_F(DeviceC, SoftCountingOnSelf) {
    const pmc_id_t other = alloc("SOFT-SCHED.SWITCH", PMC_MODE_TC);
    const pmc_id_t id = alloc("SOFT-CLOCK.PROF", PMC_MODE_TC);
    ASSERT_EQ(pmc_attach(id, getpid()), 0) << std::strerror(errno);
    ASSERT_EQ(pmc_start(id), 0) << std::strerror(errno);
    spin(std::chrono::milliseconds(50));
    ASSERT_EQ(pmc_stop(id), 0);
    pmc_value_t v = 0, again = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_GT(v, 1000000u); // nanoseconds of CPU time
    ASSERT_EQ(pmc_read(id, &again), 0);
    EXPECT_EQ(again, v); // stopped
    uint32_t caps = 0, width = 0;
    EXPECT_EQ(pmc_capabilities(id, &caps), 0);
    EXPECT_TRUE(caps & PMC_CAP_READ);
    EXPECT_EQ(pmc_width(id, &width), 0);
    EXPECT_EQ(width, 64u);
    EXPECT_EQ(pmc_detach(id, getpid()), 0) << std::strerror(errno);
    EXPECT_EQ(pmc_release(id), 0);
    errno = 0;
    EXPECT_EQ(pmc_start(id), -1); // a stale handle: EINVAL
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_release(other), 0);
    errno = 0;
    EXPECT_EQ(pmc_start(id), -1); // no PMC at all: ESRCH (hwpmc(4))
    EXPECT_EQ(errno, ESRCH);
}

TEST_F(DeviceC, WriteThenRead) {
    const pmc_id_t id = alloc("SOFT-PAGE_FAULT.ALL", PMC_MODE_TC);
    ASSERT_EQ(pmc_write(id, 1000), 0) << std::strerror(errno);
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_rw(id, 2000, &v), 0) << std::strerror(errno);
    EXPECT_EQ(v, 1000u);
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 2000u);
    EXPECT_EQ(pmc_release(id), 0);
}

TEST_F(DeviceC, SystemTsc) {
    const pmc_id_t id = alloc("tsc", PMC_MODE_SC, 0);
    ASSERT_EQ(pmc_start(id), 0) << std::strerror(errno);
    pmc_value_t a = 0, b = 0;
    ASSERT_EQ(pmc_read(id, &a), 0);
    spin(std::chrono::milliseconds(5));
    ASSERT_EQ(pmc_read(id, &b), 0);
    EXPECT_GT(b, a);
    EXPECT_EQ(pmc_stop(id), 0);
    EXPECT_EQ(pmc_release(id), 0);
}

TEST_F(DeviceC, SamplingPeriod) {
    const pmc_id_t id = alloc("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_CPU_ANY, 1000000);
    EXPECT_EQ(pmc_set(id, 500000), 0) << std::strerror(errno);
    EXPECT_EQ(pmc_release(id), 0);
}

TEST_F(DeviceC, PmcInfo) {
    struct pmc_pmcinfo *pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(0, &pi), 0) << std::strerror(errno);
    EXPECT_EQ(pi->pm_cpu, 0);
    EXPECT_EQ(static_cast<int>(pi->pm_npmc), pmc_npmc(0));
    ASSERT_GT(pi->pm_npmc, 0u);
    EXPECT_STREQ(pi->pm_pmcs[0].pm_name, "TSC-0");
    for (uint32_t r = 0; r < pi->pm_npmc; ++r)
        EXPECT_NE(pmc_name_of_disposition(static_cast<pmc_disp>(pi->pm_pmcs[r].pm_rowdisp)),
                  nullptr)
            << r;
    std::free(pi);
}

TEST_F(DeviceC, EventNames) {
    const char **names = nullptr;
    int n = 0;
    ASSERT_EQ(pmc_event_names_of_class(PMC_CLASS_SOFT, &names, &n), 0);
    bool prof = false;
    for (int i = 0; i < n; ++i)
        prof |= std::string(names[i]) == "CLOCK.PROF";
    std::free(names);
    EXPECT_TRUE(prof);
    EXPECT_STREQ(pmc_name_of_event(PMC_EV_SOFT_CLOCK_PROF), "CLOCK.PROF");
}

TEST_F(DeviceC, BadSpecifier) {
    pmc_id_t id = 0;
    errno = 0;
    EXPECT_EQ(pmc_allocate("SOFT-CLOCK.PROFF", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_NE(std::string(pmc_errmsg()).find("SOFT-CLOCK.PROF"), std::string::npos);
}

TEST_F(DeviceC, LogFile) {
    char path[] = "/tmp/hwpmc-log-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    ASSERT_EQ(pmc_configure_logfile(fd), 0) << std::strerror(errno);
    EXPECT_EQ(pmc_writelog(0x1234), 0) << std::strerror(errno);
    EXPECT_EQ(pmc_flush_logfile(), 0) << std::strerror(errno);
    EXPECT_EQ(pmc_close_logfile(), 0) << std::strerror(errno);
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    EXPECT_GT(st.st_size, 0);
    close(fd);
}

TEST_F(DeviceC, DriverStats) {
    struct pmc_driverstats ds {};
    ASSERT_EQ(pmc_get_driver_stats(&ds), 0) << std::strerror(errno);
    EXPECT_GT(ds.pm_syscalls, 0u);
}

TEST_F(DeviceC, DisableEnableRow) {
    const int row = pmc_npmc(0) - 1; // the last SOFT row
    if (pmc_disable(0, row) < 0) {
        if (errno == EPERM)
            GTEST_SKIP() << "PMCADMIN needs privilege";
        FAIL() << std::strerror(errno);
    }
    struct pmc_pmcinfo *pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(0, &pi), 0);
    EXPECT_EQ(pi->pm_pmcs[row].pm_enabled, 0u);
    EXPECT_EQ(pi->pm_pmcs[row].pm_state, static_cast<uint32_t>(PMC_STATE_DISABLED));
    std::free(pi);
    EXPECT_EQ(pmc_enable(0, row), 0) << std::strerror(errno);
}

class DeviceCxx : public ::testing::Test {
protected:
    void SetUp() override {
        if (!have_device())
            GTEST_SKIP() << "no /dev/hwpmc (the module is not loaded here)";
    }
};

TEST_F(DeviceCxx, CountsAndReleases) {
    hwpmc::device dev = hwpmc::device::open();
    EXPECT_EQ(HWPMC_VERSION_TO_MAJOR(dev.module_version()), HWPMC_VERSION_MAJOR);
    EXPECT_FALSE(dev.soft_events().empty());
    uint64_t value = 0;
    {
        hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
        p.attach();
        p.start();
        spin(std::chrono::milliseconds(20));
        value = p.read();
    } // stopped and released here
    EXPECT_GT(value, 0u);
    const auto rows = dev.pmcinfo(0);
    EXPECT_FALSE(rows.empty());
}

TEST_F(DeviceCxx, ErrorsCarryErrno) {
    hwpmc::device dev = hwpmc::device::open();
    EXPECT_THROW(dev.allocate("cyclez", PMC_MODE_TC), hwpmc::spec_error);
    try {
        dev.allocate("tsc", PMC_MODE_TC, 0, 0); // process scope with a CPU
        FAIL() << "no exception";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code().value(), EINVAL);
    }
}

} // namespace
