// SPDX-License-Identifier: BSD-2-Clause
// The C++ API against the fake kernel.
#include "fake_kernel.hpp"
#include "pmclog_builder.hpp"

#include <hwpmc/hwpmc.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <optional>
#include <span>
#include <string>
#include <vector>

using hwpmc::testing::fake_kernel;

namespace {

class Cxx : public ::testing::Test {
protected:
    fake_kernel &k = fake_kernel::instance();
    void SetUp() override { k.install(); }
    void TearDown() override { k.uninstall(); }
};

int error_of(auto f) {
    try {
        f();
    } catch (const std::system_error &e) {
        return e.code().value();
    }
    return 0;
}

TEST(CxxNoDevice, OpenFailsWithErrno) {
    EXPECT_EQ(error_of([] { hwpmc::device::open("/nonexistent/hwpmc"); }), ENOENT);
    EXPECT_EQ(error_of([] { hwpmc::device::open("/dev/null"); }), ENOTTY);
}

TEST_F(Cxx, OpenReadsCpuInfoAndSoftEvents) {
    hwpmc::device dev = hwpmc::device::open();
    EXPECT_GE(dev.fd(), 0);
    EXPECT_EQ(dev.module_version(), static_cast<uint32_t>(HWPMC_VERSION));
    EXPECT_EQ(dev.cpuinfo().pm_ncpu, 2u);
    ASSERT_EQ(dev.soft_events().size(), 4u);
    EXPECT_EQ(dev.soft_events()[1].name, "CLOCK.PROF");
    EXPECT_EQ(dev.soft_events()[1].code, 1u);
}

TEST_F(Cxx, VersionMismatchIsEPROTO) {
    k.version = HWPMC_VERSION_MAKE(HWPMC_VERSION_MAJOR + 1, 0, 0);
    EXPECT_EQ(error_of([] { hwpmc::device::open(); }), EPROTO);
}

TEST_F(Cxx, PmcStopsAndReleasesItselfOnDestruction) {
    hwpmc::device dev = hwpmc::device::open();
    {
        hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
        EXPECT_TRUE(p);
        EXPECT_EQ(p.cls(), PMC_CLASS_SOFT);
        EXPECT_EQ(p.mode(), PMC_MODE_TC);
        p.attach();
        p.start();
        EXPECT_TRUE(k.pmcs.at(p.id()).running);
        EXPECT_EQ(p.read(), 1000u);
        EXPECT_EQ(k.pmcs.size(), 1u);
    }
    EXPECT_TRUE(k.pmcs.empty());
}

TEST_F(Cxx, AllocateWithUserStack) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_F_CALLCHAIN | PMC_F_USERSTACK,
                                -1, 100000, 4096);
    const auto &a = k.pmcs.at(p.id()).alloc;
    EXPECT_EQ(a.pm_flags, static_cast<uint32_t>(PMC_F_CALLCHAIN | PMC_F_USERSTACK));
    EXPECT_EQ(a.pm_ustack_size, 4096u);
    EXPECT_EQ(a.pm_count, 100000u);
    // The five-argument form asks for no stack size.
    hwpmc::pmc q = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_F_USERSTACK, -1, 100000);
    EXPECT_EQ(k.pmcs.at(q.id()).alloc.pm_ustack_size, 0u);
    // The module's EINVAL for a bad size comes through.
    EXPECT_EQ(error_of([&] {
                  dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_F_USERSTACK, -1, 100000, 12);
              }),
              EINVAL);
    EXPECT_EQ(error_of([&] { dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, 0, -1, 100000, 8); }),
              EINVAL);
}

// The C++ reader hands USERSTACK records out as the C one does.
TEST_F(Cxx, LogReaderUserStack) {
    using namespace hwpmc::test;
    bytes log = initialize();
    append(log, callchain(5, 1, 100, {0x401234}));
    append(log, userstack(5, 1, 100, bytes{1, 2, 3}, 512));
    hwpmc::log_reader r(
        std::span<const std::byte>(reinterpret_cast<const std::byte *>(log.data()), log.size()));
    int n = 0;
    for (const pmclog_ev &ev : r) {
        if (ev.pl_type != PMCLOG_TYPE_USERSTACK)
            continue;
        ++n;
        EXPECT_EQ(ev.pl_u.pl_us.pl_copied, 3u);
        EXPECT_EQ(ev.pl_u.pl_us.pl_size, 512u);
        EXPECT_EQ(ev.pl_u.pl_us.pl_stack[2], 3);
        EXPECT_EQ(ev.pl_u.pl_us.pl_regs[PMCLOG_US_REG_RIP], 0x401234u);
    }
    EXPECT_EQ(n, 1);
}

TEST_F(Cxx, ReadWriteExchange) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("tsc", PMC_MODE_SC, 0, 1, 5);
    EXPECT_EQ(k.pmcs.at(p.id()).alloc.pm_cpu, 1u);
    EXPECT_EQ(p.read(), 5u);
    p.write(9);
    EXPECT_EQ(p.exchange(11), 9u);
    EXPECT_EQ(p.read(), 11u);
    p.set_count(3);
    EXPECT_EQ(k.pmcs.at(p.id()).alloc.pm_count, 3u);
    EXPECT_EQ(p.capabilities(), static_cast<uint32_t>(PMC_CAP_READ));
    EXPECT_EQ(p.width(), 64u);
    EXPECT_EQ(p.msr(), 0x40000000u + p.id());
    p.start();
    EXPECT_EQ(error_of([&] { p.write(1); }), EBUSY);
    p.stop();
    EXPECT_EQ(error_of([&] { p.stop(); }), EINVAL); // errno passes through
}

TEST_F(Cxx, BadSpecifierThrowsSpecError) {
    hwpmc::device dev = hwpmc::device::open();
    try {
        dev.allocate("SOFT-CLOCK.PROFF", PMC_MODE_TC);
        FAIL() << "no exception";
    } catch (const hwpmc::spec_error &e) {
        EXPECT_EQ(e.code().value(), EINVAL);
        EXPECT_NE(std::string(e.what()).find("SOFT-CLOCK.PROF"), std::string::npos) << e.what();
    }
    // A refusal by the kernel is a plain system_error, not a spec_error.
    try {
        dev.allocate("tsc", PMC_MODE_SC, 0, 7);
        FAIL() << "no exception";
    } catch (const hwpmc::spec_error &) {
        FAIL() << "spec_error for a kernel refusal";
    } catch (const std::system_error &e) {
        EXPECT_EQ(e.code().value(), EINVAL);
    }
}

TEST_F(Cxx, MoveTransfersOwnership) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc a = dev.allocate("tsc", PMC_MODE_SC, 0, 0);
    const pmc_id_t id = a.id();
    hwpmc::pmc b = std::move(a);
    EXPECT_FALSE(a); // NOLINT(bugprone-use-after-move): testing it
    EXPECT_EQ(b.id(), id);
    EXPECT_EQ(error_of([&] { a.start(); }), EBADF);
    hwpmc::pmc c = dev.allocate("SOFT-CLOCK.HARD", PMC_MODE_TC);
    c = std::move(b); // releases c's PMC
    EXPECT_EQ(k.pmcs.size(), 1u);
    EXPECT_EQ(c.id(), id);

    hwpmc::device dev2 = std::move(dev);
    EXPECT_EQ(dev.fd(), -1); // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(error_of([&] { dev.flush_log(); }), EBADF);
    EXPECT_GE(dev2.fd(), 0);
}

TEST_F(Cxx, PmcOutlivesItsDevice) {
    std::optional<hwpmc::pmc> p;
    {
        hwpmc::device dev = hwpmc::device::open();
        p.emplace(dev.allocate("tsc", PMC_MODE_SC, 0, 0));
    }
    EXPECT_EQ(p->read(), 0u); // the descriptor stays open for the PMC
    p.reset();
    EXPECT_TRUE(k.pmcs.empty());
}

TEST_F(Cxx, ExplicitRelease) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("tsc", PMC_MODE_SC, 0, 0);
    p.release();
    EXPECT_FALSE(p);
    EXPECT_TRUE(k.pmcs.empty());
    EXPECT_EQ(error_of([&] { p.read(); }), EBADF);
    p.release(); // no-op
}

TEST_F(Cxx, DeviceOperations) {
    hwpmc::device dev = hwpmc::device::open();
    EXPECT_EQ(dev.pmcinfo(0).size(), 19u);
    EXPECT_EQ(error_of([&] { dev.pmcinfo(5); }), EINVAL);
    EXPECT_GT(dev.driver_stats().pm_syscalls, 0u);
    dev.disable(0, 2);
    EXPECT_EQ((k.admin[{0, 2}]), static_cast<uint32_t>(PMC_STATE_DISABLED));
    dev.enable(0, 2);
    dev.configure_log(7);
    dev.write_log(99);
    dev.flush_log();
    dev.close_log();
    EXPECT_EQ(error_of([&] { dev.close_log(); }), ENOENT);
    EXPECT_EQ(k.userdata, std::vector<uint32_t>{99});
}

} // namespace
