// SPDX-License-Identifier: BSD-2-Clause
// pmc_read() and hwpmc::pmc::read() with RDPMC: when they use it instead of
// the ioctl, and how a width-bit reading becomes the 64-bit count.  RDPMC
// itself is replaced (rdpmc_reader()): the fake kernel grants nothing real.
#include "capi_state.hpp"
#include "fake_kernel.hpp"
#include "rdpmc.hpp"

#include <hwpmc/hwpmc.hpp>
#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <sys/wait.h>
#include <unistd.h>

using hwpmc::detail::rdpmc_extend;
using hwpmc::detail::rdpmc_reader;
using hwpmc::testing::fake_kernel;

namespace {

constexpr uint64_t mask48 = (1ULL << 48) - 1;

TEST(RdpmcExtend, AddsHowFarTheCounterWent) {
    EXPECT_EQ(rdpmc_extend(1000, 1500, 48), 1500u);
    // The upper bits come from the previous count.
    EXPECT_EQ(rdpmc_extend((5ULL << 48) + 10, 25, 48), (5ULL << 48) + 25);
    // The counter wrapped since.
    EXPECT_EQ(rdpmc_extend((5ULL << 48) + mask48 - 4, 6, 48), (6ULL << 48) + 6);
    // Bits above the width (a sign-extending CPU) are ignored.
    EXPECT_EQ(rdpmc_extend(1000, 0xffff000000000000ULL | 1500, 48), 1500u);
    // Half the range ahead is the most it can tell.
    EXPECT_EQ(rdpmc_extend(0, mask48 / 2, 48), mask48 / 2);
    EXPECT_EQ(rdpmc_extend(~0ULL - 5, 2, 64), 2u); // 64-bit: modulo 2^64
}

TEST(RdpmcExtend, NeverGoesBackwards) {
    // Another CPU's counter, loaded before the last count was credited.
    EXPECT_EQ(rdpmc_extend(1500, 1400, 48), 1500u);
    EXPECT_EQ(rdpmc_extend((3ULL << 48) + 5, mask48 - 5, 48), (3ULL << 48) + 5);
}

// The reader the tests put in place of RDPMC.
struct fake_rdpmc {
    static inline uint64_t value = 0;
    static inline unsigned calls = 0;
    static inline uint32_t index = 0;
    static uint64_t read(uint32_t idx) {
        calls++;
        index = idx;
        return value;
    }
};

class Rdpmc : public ::testing::Test {
protected:
    fake_kernel &k = fake_kernel::instance();
    hwpmc::detail::rdpmc_fn saved = nullptr;

    void SetUp() override {
        hwpmc::detail::capi_reset();
        k.install();
        saved = rdpmc_reader();
        rdpmc_reader() = fake_rdpmc::read;
        fake_rdpmc::calls = 0;
        fake_rdpmc::value = 0;
        ASSERT_EQ(pmc_init(), 0);
    }
    void TearDown() override {
        rdpmc_reader() = saved;
        hwpmc::detail::capi_reset();
        k.uninstall();
    }
    // A process counting PMC on the owner, started; with its RDPMC index
    // when `grant`.
    pmc_id_t counting(bool grant, uint32_t *msr = nullptr, pmc_mode mode = PMC_MODE_TC) {
        pmc_id_t id = PMC_ID_INVALID;
        EXPECT_EQ(pmc_allocate("SOFT-CLOCK.PROF", mode, 0, PMC_CPU_ANY, &id, 0), 0);
        EXPECT_EQ(pmc_attach(id, PMC_PID_SELF), 0);
        uint32_t m = 0;
        if (grant) {
            EXPECT_EQ(pmc_get_msr(id, &m), 0);
        }
        if (msr)
            *msr = m;
        EXPECT_EQ(pmc_start(id), 0);
        return id;
    }
    pmc_value_t read(pmc_id_t id) {
        pmc_value_t v = ~0ULL;
        EXPECT_EQ(pmc_read(id, &v), 0);
        return v;
    }
};

TEST_F(Rdpmc, NotGrantedReadsByIoctl) {
    const pmc_id_t id = counting(false);
    EXPECT_EQ(read(id), 1000u); // the fake kernel's running count
    EXPECT_EQ(read(id), 1000u);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
}

TEST_F(Rdpmc, GrantedReadsByRdpmcAfterOneIoctl) {
    uint32_t msr = 0;
    const pmc_id_t id = counting(true, &msr);
    EXPECT_EQ(msr, 0x40000000u + id);
    // The first read gives the upper bits: the ioctl's.
    unsigned calls = k.calls;
    EXPECT_EQ(read(id), 1000u);
    EXPECT_EQ(k.calls, calls + 1);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
    // Then RDPMC alone, with the index PMCGETMSR gave.
    calls = k.calls;
    fake_rdpmc::value = 1700;
    EXPECT_EQ(read(id), 1700u);
    fake_rdpmc::value = 2500;
    EXPECT_EQ(read(id), 2500u);
    EXPECT_EQ(fake_rdpmc::calls, 2u);
    EXPECT_EQ(fake_rdpmc::index, msr);
    EXPECT_EQ(k.calls, calls);
}

// pmc_read() looks at RDPMC only once some PMC has it (issue 17: no lock
// or lookup otherwise); a grant later still takes the ioctl first.
TEST_F(Rdpmc, GrantAfterIoctlReadsTakesTheIoctlFirst) {
    const pmc_id_t id = counting(false);
    EXPECT_EQ(read(id), 1000u);
    uint32_t msr = 0;
    ASSERT_EQ(pmc_get_msr(id, &msr), 0);
    unsigned calls = k.calls;
    EXPECT_EQ(read(id), 1000u); // no base yet: the ioctl's
    EXPECT_EQ(k.calls, calls + 1);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
    fake_rdpmc::value = 1300;
    EXPECT_EQ(read(id), 1300u);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
}

TEST_F(Rdpmc, OtherPmcGrantedThisOneReadsByIoctl) {
    const pmc_id_t granted = counting(true);
    const pmc_id_t other = counting(false);
    EXPECT_EQ(read(granted), 1000u);
    fake_rdpmc::value = 1100;
    EXPECT_EQ(read(granted), 1100u);
    const unsigned calls = k.calls, rdpmcs = fake_rdpmc::calls;
    EXPECT_EQ(read(other), 1000u);
    EXPECT_EQ(read(other), 1000u);
    EXPECT_EQ(k.calls, calls + 2);
    EXPECT_EQ(fake_rdpmc::calls, rdpmcs);
}

TEST_F(Rdpmc, RefusedGrantReadsByIoctl) {
    k.getmsr_errno = EINVAL; // e.g. attached to another process too
    pmc_id_t id = PMC_ID_INVALID;
    ASSERT_EQ(pmc_allocate("SOFT-CLOCK.PROF", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), 0);
    uint32_t msr = 0;
    EXPECT_EQ(pmc_get_msr(id, &msr), -1);
    EXPECT_EQ(errno, EINVAL);
    ASSERT_EQ(pmc_start(id), 0);
    read(id);
    read(id);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
}

TEST_F(Rdpmc, StoppedReadsByIoctlAndRestartTakesTheIoctlFirst) {
    const pmc_id_t id = counting(true);
    read(id);
    fake_rdpmc::value = 1200;
    EXPECT_EQ(read(id), 1200u);
    ASSERT_EQ(pmc_stop(id), 0);
    EXPECT_EQ(read(id), 0u); // the fake kernel's stopped count
    ASSERT_EQ(pmc_start(id), 0);
    EXPECT_EQ(read(id), 1000u);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
    fake_rdpmc::value = 1001;
    EXPECT_EQ(read(id), 1001u);
    EXPECT_EQ(fake_rdpmc::calls, 2u);
}

TEST_F(Rdpmc, NewValueTakesTheIoctlFirst) {
    const pmc_id_t id = counting(true);
    read(id);
    ASSERT_EQ(pmc_stop(id), 0);
    ASSERT_EQ(pmc_write(id, 5000), 0);
    ASSERT_EQ(pmc_start(id), 0);
    EXPECT_EQ(read(id), 6000u); // ioctl: 5000 + the fake's 1000
    fake_rdpmc::value = 6100;
    EXPECT_EQ(read(id), 6100u);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
    ASSERT_EQ(pmc_stop(id), 0);
    pmc_value_t old = 0;
    ASSERT_EQ(pmc_rw(id, 7000, &old), 0);
    ASSERT_EQ(pmc_start(id), 0);
    EXPECT_EQ(read(id), 8000u);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
}

TEST_F(Rdpmc, DetachedFromItsOwnerReadsByIoctl) {
    const pmc_id_t id = counting(true);
    read(id);
    fake_rdpmc::value = 1100;
    EXPECT_EQ(read(id), 1100u);
    ASSERT_EQ(pmc_detach(id, PMC_PID_SELF), 0); // the kernel revokes RDPMC
    read(id);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
    // Attached again: not granted until pmc_get_msr() again.
    ASSERT_EQ(pmc_attach(id, PMC_PID_SELF), 0);
    read(id);
    read(id);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
}

TEST_F(Rdpmc, SamplingPmcReadsByIoctl) {
    // Its counter holds what is left of its period, not its count.
    const pmc_id_t id = counting(true, nullptr, PMC_MODE_TS);
    read(id);
    read(id);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
}

TEST_F(Rdpmc, ReleasedAndReallocatedIdIsNotGranted) {
    const pmc_id_t id = counting(true);
    read(id);
    ASSERT_EQ(pmc_stop(id), 0);
    ASSERT_EQ(pmc_release(id), 0);
    k.next_id = id; // the same id again
    const pmc_id_t id2 = counting(false);
    ASSERT_EQ(id2, id);
    read(id2);
    read(id2);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
}

TEST_F(Rdpmc, ForkedChildReadsByIoctl) {
    // The grant is the parent's (its mm): the child would fault.
    const pmc_id_t id = counting(true);
    read(id);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        pmc_value_t v = 0;
        const bool ok = pmc_read(id, &v) == 0 && fake_rdpmc::calls == 0 && v == 1000;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    fake_rdpmc::value = 1300;
    EXPECT_EQ(read(id), 1300u); // still RDPMC in the parent
}

TEST_F(Rdpmc, CxxReadUsesRdpmcOnceMsrGranted) {
    hwpmc::device dev = hwpmc::device::open();
    hwpmc::pmc p = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC);
    p.attach();
    p.start();
    EXPECT_EQ(p.read(), 1000u);
    EXPECT_EQ(p.read(), 1000u);
    EXPECT_EQ(fake_rdpmc::calls, 0u);
    const uint32_t msr = p.msr();
    EXPECT_EQ(p.read(), 1000u); // the ioctl's, for the upper bits
    fake_rdpmc::value = 1234;
    EXPECT_EQ(p.read(), 1234u);
    EXPECT_EQ(fake_rdpmc::calls, 1u);
    EXPECT_EQ(fake_rdpmc::index, msr);
    // A moved-to pmc keeps it.
    hwpmc::pmc q = std::move(p);
    fake_rdpmc::value = 1300;
    EXPECT_EQ(q.read(), 1300u);
    q.stop();
    EXPECT_EQ(q.read(), 0u);
    q.start();
    q.read();
    q.detach();
    q.read();
    q.read();
    EXPECT_EQ(fake_rdpmc::calls, 2u);
}

} // namespace
