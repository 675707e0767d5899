// SPDX-License-Identifier: BSD-2-Clause
// Integration tests of the C and C++ APIs against the real kernel module:
// they run in the guest (scripts/vm-run ... ctest -R Device) and skip where
// /dev/hwpmc is absent.  Only TSC and SOFT, which need no PMU.
#include "pin_cpu.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

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

// The row of CPU `cpu` holding this process's system-scope PMC of class
// `cls` (GETPMCINFO names the owner of system PMCs only), or -1.
int own_row(const struct pmc_pmcinfo *pi, pmc_class cls) {
    for (uint32_t r = 0; r < pi->pm_npmc; ++r)
        if (pi->pm_pmcs[r].pm_class == static_cast<uint32_t>(cls) &&
            pi->pm_pmcs[r].pm_ownerpid == getpid())
            return static_cast<int>(r);
    return -1;
}

TEST_F(DeviceC, SamplingPeriod) {
    // A process-scope sampler: PMCSETCOUNT while it is not running.
    const pmc_id_t tid = alloc("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_CPU_ANY, 1000000);
    EXPECT_EQ(pmc_set(tid, 500000), 0) << std::strerror(errno);
    errno = 0;
    EXPECT_EQ(pmc_set(tid, 0), -1); // a sampling period of 0
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_release(tid), 0);

    // A system sampler on CPU 0: GETPMCINFO shows its period.
    const pmc_id_t id = alloc("SOFT-CLOCK.PROF", PMC_MODE_SS, 0, 1000000);
    struct pmc_pmcinfo *pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(0, &pi), 0) << std::strerror(errno);
    int row = own_row(pi, PMC_CLASS_SOFT);
    ASSERT_GE(row, 0);
    EXPECT_EQ(pi->pm_pmcs[row].pm_reloadcount, 1000000u);
    EXPECT_EQ(pi->pm_pmcs[row].pm_mode, static_cast<uint32_t>(PMC_MODE_SS));
    EXPECT_EQ(pi->pm_pmcs[row].pm_event, static_cast<uint32_t>(PMC_EV_SOFT_CLOCK_PROF));
    EXPECT_EQ(pi->pm_pmcs[row].pm_state, static_cast<uint32_t>(PMC_STATE_ALLOCATED));
    std::free(pi);
    ASSERT_EQ(pmc_set(id, 250000), 0) << std::strerror(errno);
    pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(0, &pi), 0);
    EXPECT_EQ(own_row(pi, PMC_CLASS_SOFT), row);
    EXPECT_EQ(pi->pm_pmcs[row].pm_reloadcount, 250000u);
    std::free(pi);
    EXPECT_EQ(pmc_release(id), 0);
    pi = nullptr;
    ASSERT_EQ(pmc_pmcinfo(0, &pi), 0);
    EXPECT_EQ(own_row(pi, PMC_CLASS_SOFT), -1);
    EXPECT_EQ(pi->pm_pmcs[row].pm_state, static_cast<uint32_t>(PMC_STATE_FREE));
    EXPECT_EQ(pi->pm_pmcs[row].pm_reloadcount, 0u);
    std::free(pi);
}

TEST_F(DeviceC, GetMsrSoft) {
    // README "Where Linux differs", selftests/ERRORS.md #33: a class
    // without RDPMC (SOFT) says EOPNOTSUPP where FreeBSD says ENOSYS...
    const pmc_id_t id = alloc("SOFT-CLOCK.PROF", PMC_MODE_TC);
    ASSERT_EQ(pmc_attach(id, getpid()), 0) << std::strerror(errno);
    uint32_t msr = 0xdeadbeef;
    errno = 0;
    EXPECT_EQ(pmc_get_msr(id, &msr), -1);
    EXPECT_EQ(errno, EOPNOTSUPP);
    EXPECT_EQ(msr, 0xdeadbeefu); // untouched
    // ...and reads still go through the kernel, which counts.
    ASSERT_EQ(pmc_start(id), 0) << std::strerror(errno);
    spin(std::chrono::milliseconds(10));
    ASSERT_EQ(pmc_stop(id), 0);
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_GT(v, 0u);
    // #30: not attached to its owner alone (here: to nobody): EINVAL,
    // checked before the class.
    ASSERT_EQ(pmc_detach(id, getpid()), 0) << std::strerror(errno);
    errno = 0;
    EXPECT_EQ(pmc_get_msr(id, &msr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_release(id), 0);
    // A system PMC: EINVAL.
    const pmc_id_t sys = alloc("SOFT-CLOCK.PROF", PMC_MODE_SC, 0);
    errno = 0;
    EXPECT_EQ(pmc_get_msr(sys, &msr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(pmc_release(sys), 0);
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

// The errno a std::system_error thrown by `f` carries, or -1.
template <typename F>
int errno_of(F &&f) {
    try {
        f();
    } catch (const std::system_error &e) {
        return e.code().value();
    }
    return -1;
}

// GETPMCINFO rows of CPU 0 with class `cls` owned by this process.
std::vector<int> own_rows(const std::vector<pmc_info> &rows, pmc_class cls) {
    std::vector<int> out;
    for (size_t r = 0; r < rows.size(); ++r)
        if (rows[r].pm_class == static_cast<uint32_t>(cls) && rows[r].pm_ownerpid == getpid())
            out.push_back(static_cast<int>(r));
    return out;
}

int count_disp(const std::vector<pmc_info> &rows, pmc_class cls, pmc_disp disp) {
    int n = 0;
    for (const pmc_info &r : rows)
        n +=
            r.pm_class == static_cast<uint32_t>(cls) && r.pm_rowdisp == static_cast<uint32_t>(disp);
    return n;
}

uint64_t cpu_ns(const struct rusage &ru) {
    return (static_cast<uint64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000000u +
           (static_cast<uint64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1000u;
}

TEST_F(DeviceCxx, ProcessCountingOnSelf) {
    hwpmc::device dev = hwpmc::device::open();
    // SYSCALL.ENTER counts exactly the system calls the target makes.
    hwpmc::pmc p = dev.allocate("SOFT-SYSCALL.ENTER", PMC_MODE_TC);
    ASSERT_TRUE(p);
    EXPECT_EQ(p.cls(), PMC_CLASS_SOFT);
    EXPECT_EQ(p.mode(), PMC_MODE_TC);
    EXPECT_EQ(p.capabilities(), static_cast<uint32_t>(PMC_CAP_READ));
    EXPECT_EQ(p.width(), 64u);
    p.attach();
    EXPECT_EQ(errno_of([&] { p.attach(); }), EEXIST); // already a target
    p.start();
    constexpr int kCalls = 1000;
    for (int i = 0; i < kCalls; ++i)
        (void)syscall(SYS_getppid);
    p.stop();
    const uint64_t n = p.read();
    EXPECT_GE(n, static_cast<uint64_t>(kCalls));
    EXPECT_LE(n, static_cast<uint64_t>(kCalls) + 16); // start's return, stop
    EXPECT_EQ(p.read(), n);                           // stopped: no more
    // The row shows a process-scope PMC (THREAD disposition).
    EXPECT_EQ(count_disp(dev.pmcinfo(0), PMC_CLASS_SOFT, PMC_DISP_THREAD), 1);
    p.detach();
    // Detached from its only target: PMCSTART has nothing to count (ESRCH),
    // the count survives.
    EXPECT_EQ(errno_of([&] { p.start(); }), ESRCH);
    EXPECT_EQ(p.read(), n);
    // A second detach: the process is not monitored by hwpmc any more.
    EXPECT_EQ(errno_of([&] { p.detach(); }), ESRCH);
    p.attach(); // usable again
    p.start();
    p.stop();
    EXPECT_GT(p.read(), n);
}

TEST_F(DeviceCxx, AttachForkedChild) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        spin(std::chrono::milliseconds(40));
        _exit(0);
    }
    close(go[0]);
    p.attach(child);
    // Another PMC of ours detaching a monitored process it does not
    // monitor: EINVAL; a process hwpmc does not monitor at all: ESRCH.
    hwpmc::pmc q = dev.allocate("SOFT-SCHED.SWITCH", PMC_MODE_TC);
    EXPECT_EQ(errno_of([&] { q.detach(child); }), EINVAL);
    EXPECT_EQ(errno_of([&] { q.detach(); }), ESRCH);
    p.start();
    // This process spins too: none of it is the child's.
    spin(std::chrono::milliseconds(30));
    ASSERT_EQ(write(go[1], "x", 1), 1);
    close(go[1]);
    int status = 0;
    struct rusage ru {};
    ASSERT_EQ(wait4(child, &status, 0, &ru), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // The child exited: its count stays, and it is within the child's CPU
    // time (rusage has microseconds; the count starts after fork).
    const uint64_t ns = p.read();
    EXPECT_GT(ns, 1000000u);
    EXPECT_LE(ns, cpu_ns(ru) + 2000000u) << "child CPU " << cpu_ns(ru) << " ns";
    // Its only target is gone: detached from all of them.
    p.stop();
    EXPECT_EQ(errno_of([&] { p.start(); }), ESRCH);
    EXPECT_EQ(errno_of([&] { p.attach(child); }), ESRCH); // no such process now
}

TEST_F(DeviceCxx, ReadWriteExchange) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("SOFT-PAGE_FAULT.ALL", PMC_MODE_TC, 0, -1, 77);
    EXPECT_EQ(p.read(), 77u); // the initial count
    p.write(1000);
    EXPECT_EQ(p.read(), 1000u);
    EXPECT_EQ(p.exchange(2000), 1000u);
    EXPECT_EQ(p.read(), 2000u);
    p.set_count(3000); // PMCSETCOUNT on a counting PMC writes the count
    EXPECT_EQ(p.read(), 3000u);
    p.attach();
    p.start();
    EXPECT_EQ(errno_of([&] { p.write(5); }), EBUSY);
    EXPECT_EQ(errno_of([&] { (void)p.exchange(5); }), EBUSY);
    EXPECT_EQ(errno_of([&] { p.set_count(5); }), EBUSY);
    // Fault 64 fresh pages in while it runs.
    constexpr size_t kPages = 64, kPage = 4096;
    void *mem =
        mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    for (size_t i = 0; i < kPages; ++i)
        static_cast<volatile char *>(mem)[i * kPage] = 1;
    p.stop();
    munmap(mem, kPages * kPage);
    const uint64_t now = p.read();
    EXPECT_GE(now, 3000u + kPages);
    EXPECT_LT(now, 3000u + 100 * kPages);
    EXPECT_EQ(p.exchange(0), now);
    EXPECT_EQ(p.read(), 0u);
}

TEST_F(DeviceCxx, SystemTscAndSoft) {
    hwpmc::device dev = hwpmc::device::open();
    {
        hwpmc::pmc tsc = dev.allocate("tsc", PMC_MODE_SC, 0, 0);
        EXPECT_EQ(tsc.cls(), PMC_CLASS_TSC);
        EXPECT_EQ(tsc.capabilities(), static_cast<uint32_t>(PMC_CAP_READ));
        EXPECT_EQ(tsc.width(), 64u);
        // A TSC write is accepted and ignored (FreeBSD); it cannot be
        // attached (system scope).
        EXPECT_EQ(errno_of([&] { tsc.write(1); }), -1); // -1: no error
        EXPECT_EQ(errno_of([&] { tsc.set_count(1); }), -1);
        EXPECT_EQ(errno_of([&] { tsc.attach(); }), EINVAL);
        EXPECT_EQ(errno_of([&] { (void)tsc.msr(); }), EINVAL); // not process-private
        // A shared row: ALLOCATED, with no single owner.
        auto rows = dev.pmcinfo(0);
        ASSERT_FALSE(rows.empty());
        EXPECT_STREQ(rows[0].pm_name, "TSC-0");
        EXPECT_EQ(rows[0].pm_state, static_cast<uint32_t>(PMC_STATE_ALLOCATED));
        EXPECT_EQ(rows[0].pm_rowdisp, static_cast<uint32_t>(PMC_DISP_STANDALONE));
        tsc.start();
        const uint64_t a = tsc.read();
        spin(std::chrono::milliseconds(5));
        const uint64_t b = tsc.read();
        EXPECT_GT(b, a);
        tsc.stop();
    } // released here
    auto rows = dev.pmcinfo(0);
    EXPECT_EQ(rows[0].pm_state, static_cast<uint32_t>(PMC_STATE_FREE));
    EXPECT_EQ(rows[0].pm_rowdisp, static_cast<uint32_t>(PMC_DISP_FREE));

    int row = -1;
    {
        hwpmc::pmc s = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_SC, 0, 0);
        rows = dev.pmcinfo(0);
        const auto mine = own_rows(rows, PMC_CLASS_SOFT);
        ASSERT_EQ(mine.size(), 1u);
        row = mine[0];
        EXPECT_EQ(rows[row].pm_state, static_cast<uint32_t>(PMC_STATE_ALLOCATED));
        EXPECT_EQ(rows[row].pm_mode, static_cast<uint32_t>(PMC_MODE_SC));
        EXPECT_EQ(rows[row].pm_event, static_cast<uint32_t>(PMC_EV_SOFT_CLOCK_PROF));
        EXPECT_EQ(rows[row].pm_rowdisp, static_cast<uint32_t>(PMC_DISP_STANDALONE));
        s.start();
        EXPECT_EQ(dev.pmcinfo(0)[row].pm_state, static_cast<uint32_t>(PMC_STATE_RUNNING));
        {
            // It counts CPU 0's profiling ticks, so be busy there until one
            // lands (a tick is 1-10 ms; 2 s bounds a stalled clock).
            const pin_to_cpu on0(0);
            ASSERT_TRUE(on0.ok()) << std::strerror(errno);
            const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            while (s.read() == 0 && std::chrono::steady_clock::now() < end)
                spin(std::chrono::milliseconds(5));
        }
        const uint64_t v = s.read(); // CPU 0's busy time, running
        EXPECT_GT(v, 0u) << "no profiling tick on CPU 0 in 2 s of spinning there";
        s.stop();
        EXPECT_EQ(dev.pmcinfo(0)[row].pm_state, static_cast<uint32_t>(PMC_STATE_STOPPED));
        const uint64_t w = s.read();
        EXPECT_GE(w, v);
        EXPECT_EQ(s.read(), w); // stopped
        // release() reports, then the handle is spent (EBADF, no ioctl).
        s.release();
        EXPECT_FALSE(s);
        EXPECT_EQ(errno_of([&] { (void)s.read(); }), EBADF);
        EXPECT_EQ(errno_of([&] { s.release(); }), -1); // a no-op
        rows = dev.pmcinfo(0);
        EXPECT_EQ(rows[row].pm_state, static_cast<uint32_t>(PMC_STATE_FREE));
        EXPECT_EQ(rows[row].pm_ownerpid, -1);
        EXPECT_EQ(rows[row].pm_mode, static_cast<uint32_t>(PMC_MODE_INVALID));
    }
    {
        // Destruction of a running PMC stops and releases it.
        hwpmc::pmc s = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_SC, 0, 0);
        s.start();
        hwpmc::pmc moved = std::move(s);
        EXPECT_FALSE(s);
        ASSERT_TRUE(moved);
        ASSERT_EQ(own_rows(dev.pmcinfo(0), PMC_CLASS_SOFT).size(), 1u);
    }
    EXPECT_TRUE(own_rows(dev.pmcinfo(0), PMC_CLASS_SOFT).empty());
    EXPECT_EQ(count_disp(dev.pmcinfo(0), PMC_CLASS_SOFT, PMC_DISP_STANDALONE), 0);
}

TEST_F(DeviceCxx, SamplingSetCount) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_SS, 0, 0, 1000000);
    EXPECT_EQ(p.mode(), PMC_MODE_SS);
    EXPECT_EQ(p.capabilities(), static_cast<uint32_t>(PMC_CAP_READ | PMC_CAP_INTERRUPT));
    auto mine = own_rows(dev.pmcinfo(0), PMC_CLASS_SOFT);
    ASSERT_EQ(mine.size(), 1u);
    const int row = mine[0];
    EXPECT_EQ(dev.pmcinfo(0)[row].pm_reloadcount, 1000000u);
    p.set_count(123456);
    EXPECT_EQ(dev.pmcinfo(0)[row].pm_reloadcount, 123456u);
    EXPECT_EQ(errno_of([&] { p.set_count(0); }), EINVAL);
    EXPECT_EQ(dev.pmcinfo(0)[row].pm_reloadcount, 123456u); // unchanged
    // PMCRW is for counting modes only; sampling needs a log to start
    // (EDOOFUS: EBADFD here).
    EXPECT_EQ(errno_of([&] { (void)p.read(); }), EINVAL);
    EXPECT_EQ(errno_of([&] { p.start(); }), HWPMC_EDOOFUS);
    // A sampling PMC needs a period.
    EXPECT_EQ(errno_of([&] { (void)dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TS); }), EINVAL);
    p.release();
    EXPECT_EQ(dev.pmcinfo(0)[row].pm_reloadcount, 0u);
    EXPECT_EQ(dev.pmcinfo(0)[row].pm_state, static_cast<uint32_t>(PMC_STATE_FREE));
}

TEST_F(DeviceCxx, GetMsrSoft) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
    // Not attached to its owner alone: EINVAL (ERRORS.md #30).
    EXPECT_EQ(errno_of([&] { (void)p.msr(); }), EINVAL);
    p.attach();
    // SOFT has no RDPMC: EOPNOTSUPP (FreeBSD: ENOSYS; ERRORS.md #33).
    try {
        (void)p.msr();
        FAIL() << "PMCGETMSR on SOFT succeeded";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code(), std::errc::operation_not_supported);
        EXPECT_NE(std::string(e.what()).find("PMCGETMSR"), std::string::npos) << e.what();
    }
    // No RDPMC was granted: reads still count through the kernel, and the
    // PMC may still be attached elsewhere (no EPERM as after a granted MSR).
    p.start();
    spin(std::chrono::milliseconds(10));
    const uint64_t a = p.read();
    spin(std::chrono::milliseconds(10));
    EXPECT_GT(p.read(), a);
    p.stop();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    EXPECT_EQ(errno_of([&] { p.attach(child); }), -1);
    p.detach(child);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}

TEST_F(DeviceCxx, AdminEnableDisable) {
    hwpmc::device dev = hwpmc::device::open();
    auto rows = dev.pmcinfo(0);
    const int row = static_cast<int>(rows.size()) - 1; // the last SOFT row
    ASSERT_EQ(rows[row].pm_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
    ASSERT_EQ(rows[row].pm_enabled, 1u);
    try {
        dev.disable(0, row);
    } catch (const std::system_error &e) {
        if (e.code().value() == EPERM)
            GTEST_SKIP() << "PMCADMIN needs privilege";
        throw;
    }
    struct reenable {
        hwpmc::device &d;
        int r;
        ~reenable() {
            try {
                d.enable(0, r);
            } catch (...) {
            }
        }
    } guard{dev, row};
    rows = dev.pmcinfo(0);
    EXPECT_EQ(rows[row].pm_enabled, 0u);
    EXPECT_EQ(rows[row].pm_state, static_cast<uint32_t>(PMC_STATE_DISABLED));
    EXPECT_EQ(rows[row].pm_rowdisp, static_cast<uint32_t>(PMC_DISP_STANDALONE));
    dev.disable(0, row); // idempotent
    dev.enable(0, row);
    rows = dev.pmcinfo(0);
    EXPECT_EQ(rows[row].pm_enabled, 1u);
    EXPECT_EQ(rows[row].pm_state, static_cast<uint32_t>(PMC_STATE_FREE));
    EXPECT_EQ(rows[row].pm_rowdisp, static_cast<uint32_t>(PMC_DISP_FREE));
    // Bad arguments, and a row that a system PMC holds.
    EXPECT_EQ(errno_of([&] { dev.disable(0, static_cast<int>(rows.size())); }), EINVAL);
    EXPECT_EQ(errno_of([&] { dev.enable(dev.cpuinfo().pm_ncpu + 1000, row); }), EINVAL);
    {
        hwpmc::pmc s = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_SC, 0, 0);
        const auto mine = own_rows(dev.pmcinfo(0), PMC_CLASS_SOFT);
        ASSERT_EQ(mine.size(), 1u);
        EXPECT_EQ(errno_of([&] { dev.disable(0, mine[0]); }), EBUSY);
    }
    {
        // A row process-scope PMCs use cannot be disabled.
        hwpmc::pmc t = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
        rows = dev.pmcinfo(0);
        int used = -1;
        for (size_t r = 0; r < rows.size(); ++r)
            if (rows[r].pm_rowdisp == static_cast<uint32_t>(PMC_DISP_THREAD))
                used = static_cast<int>(r);
        ASSERT_GE(used, 0);
        EXPECT_EQ(errno_of([&] { dev.disable(0, used); }), EBUSY);
    }
}

TEST_F(DeviceCxx, DriverStats) {
    hwpmc::device dev = hwpmc::device::open();
    const pmc_op_getdriverstats before = dev.driver_stats();
    EXPECT_EQ(errno_of([&] { dev.flush_log(); }), EINVAL); // no log: a failed ioctl
    const pmc_op_getdriverstats after = dev.driver_stats();
    // The failed FLUSHLOG and the first GETDRIVERSTATS at least.
    EXPECT_GE(after.pm_syscalls, before.pm_syscalls + 2);
    EXPECT_GE(after.pm_syscall_errors, before.pm_syscall_errors + 1);
    EXPECT_LT(after.pm_syscall_errors, after.pm_syscalls);
}

// Read a whole log from `fd` (at its start) with the C++ record iterator.
std::vector<pmclog_ev> read_log(int fd) {
    std::vector<pmclog_ev> evs;
    hwpmc::log_reader log(fd);
    for (const pmclog_ev &ev : log) {
        evs.push_back(ev);
        evs.back().pl_data = nullptr; // valid until the next record only
    }
    EXPECT_EQ(log.state(), PMCLOG_EOF);
    return evs;
}

TEST_F(DeviceCxx, LogToPipe) {
    hwpmc::device dev = hwpmc::device::open();
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    // Without a log: EINVAL for each log operation.
    EXPECT_EQ(errno_of([&] { dev.write_log(1); }), EINVAL);
    EXPECT_EQ(errno_of([&] { dev.flush_log(); }), EINVAL);
    EXPECT_EQ(errno_of([&] { dev.close_log(); }), EINVAL);
    EXPECT_EQ(errno_of([&] { dev.configure_log(-1); }), EINVAL);
    EXPECT_EQ(errno_of([&] { dev.configure_log(-7); }), EBADF);
    EXPECT_EQ(errno_of([&] { dev.configure_log(dev.fd()); }), EINVAL); // the device itself
    EXPECT_EQ(errno_of([&] { dev.configure_log(fds[0]); }), EBADF);    // not for writing
    // The reader runs while the kernel writes.
    std::vector<pmclog_ev> evs;
    std::thread reader([&] { evs = read_log(fds[0]); });
    dev.configure_log(fds[1]);
    close(fds[1]); // the kernel holds its own reference
    EXPECT_EQ(errno_of([&] { dev.configure_log(fds[0]); }), EBUSY);
    dev.write_log(0xC0FFEE);
    dev.write_log(42);
    dev.flush_log();
    dev.close_log(); // CLOSELOG, then the kernel lets go of the pipe: EOF
    reader.join();
    close(fds[0]);
    ASSERT_GE(evs.size(), 4u);
    EXPECT_EQ(evs.front().pl_type, PMCLOG_TYPE_INITIALIZE);
    EXPECT_EQ(evs.front().pl_u.pl_i.pl_ncpu, dev.cpuinfo().pm_ncpu);
    std::vector<uint32_t> user;
    for (const pmclog_ev &ev : evs)
        if (ev.pl_type == PMCLOG_TYPE_USERDATA) {
            user.push_back(ev.pl_u.pl_u.pl_userdata);
            EXPECT_EQ(ev.pl_u.pl_u.pl_pid, getpid());
        }
    EXPECT_EQ(user, (std::vector<uint32_t>{0xC0FFEE, 42}));
    EXPECT_EQ(evs.back().pl_type, PMCLOG_TYPE_CLOSELOG);
    EXPECT_EQ(evs.back().pl_count, evs.size());
    // The log is gone.
    EXPECT_EQ(errno_of([&] { dev.write_log(1); }), EINVAL);
}

TEST_F(DeviceCxx, SamplingLogToFile) {
    hwpmc::device dev = hwpmc::device::open();
    char path[] = "/tmp/hwpmc-cxxlog-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    const pmc_op_getdriverstats before = dev.driver_stats();
    hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, 0, -1, 1000000);
    p.set_count(500000); // before the log: PMCALLOCATE shows the new period
    p.attach();
    dev.configure_log(fd);
    p.start();
    EXPECT_EQ(errno_of([&] { p.set_count(1000000); }), EBUSY);
    spin(std::chrono::milliseconds(60));
    p.stop();
    dev.write_log(7);
    dev.flush_log();
    dev.close_log();
    const pmc_op_getdriverstats after = dev.driver_stats();
    struct stat st {};
    ASSERT_EQ(fstat(fd, &st), 0);
    ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
    const std::vector<pmclog_ev> evs = read_log(fd);
    close(fd);
    ASSERT_GE(evs.size(), 4u);
    EXPECT_EQ(evs.front().pl_type, PMCLOG_TYPE_INITIALIZE);
    EXPECT_EQ(evs.back().pl_type, PMCLOG_TYPE_CLOSELOG);
    bool alloc = false, attach = false, user = false;
    size_t samples = 0;
    for (const pmclog_ev &ev : evs) {
        switch (ev.pl_type) {
        case PMCLOG_TYPE_PMCALLOCATE:
            if (ev.pl_u.pl_a.pl_pmcid == p.id()) {
                alloc = true;
                EXPECT_EQ(ev.pl_u.pl_a.pl_rate, 500000u);
                EXPECT_EQ(ev.pl_u.pl_a.pl_mode, static_cast<uint32_t>(PMC_MODE_TS));
                EXPECT_EQ(ev.pl_u.pl_a.pl_class, static_cast<uint32_t>(PMC_CLASS_SOFT));
            }
            break;
        case PMCLOG_TYPE_PMCATTACH:
            attach |= ev.pl_u.pl_t.pl_pmcid == p.id() && ev.pl_u.pl_t.pl_pid == getpid();
            break;
        case PMCLOG_TYPE_CALLCHAIN:
            EXPECT_EQ(ev.pl_u.pl_cc.pl_pmcid, p.id());
            EXPECT_EQ(ev.pl_u.pl_cc.pl_pid, static_cast<uint32_t>(getpid()));
            EXPECT_GE(ev.pl_u.pl_cc.pl_npc, 1u);
            ++samples;
            break;
        case PMCLOG_TYPE_USERDATA:
            user = ev.pl_u.pl_u.pl_userdata == 7u;
            break;
        default:
            break;
        }
    }
    EXPECT_TRUE(alloc);
    EXPECT_TRUE(attach);
    EXPECT_TRUE(user);
    EXPECT_GE(samples, 1u);
    EXPECT_GE(after.pm_samples_taken, before.pm_samples_taken + samples);
    EXPECT_GE(after.pm_log_bytes, before.pm_log_bytes + static_cast<uint64_t>(st.st_size));
}

} // namespace
