// SPDX-License-Identifier: BSD-2-Clause
// pmc_read() through the read page (module 1.6): with a slot that answers,
// no PMCRW; whenever the page cannot answer (no page, no slot, a stopped
// or untargeted PMC, a released one, a generation that is not the PMC's),
// PMCRW with its value and its errors.  The fake kernel keeps the page.
#include "capi_fixture.hpp"
#include "readpage.hpp"

#include <hwpmc/hwpmc.hpp>

#include <gtest/gtest.h>

using namespace hwpmc::detail;

namespace hwpmc::testing {
namespace {

uint64_t fake_tsc() {
    return 5000;
}

class readpage_test : public capi_test {
protected:
    void SetUp() override {
        capi_test::SetUp();
        k.readpage = true;
        k.route_mapping();
    }
    void TearDown() override {
        capi_test::TearDown();
        fake_kernel::restore_mapping();
        rdtsc_reader() = saved_tsc;
    }
    pmc_id_t counting(const char *spec, bool attach = true) {
        pmc_id_t id = 0;
        EXPECT_EQ(pmc_allocate(spec, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 7), 0);
        if (attach) {
            EXPECT_EQ(pmc_attach(id, 0), 0);
        }
        return id;
    }
    rdtsc_fn saved_tsc = rdtsc_reader();
};

TEST_F(readpage_test, running_soft_pmc_is_read_from_the_page) {
    init();
    const pmc_id_t id = counting("SOFT-SYSCALL.ENTER");
    ASSERT_EQ(pmc_start(id), 0);
    const unsigned before = k.rw_calls;
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 1007u); // what PMCRW would say
    EXPECT_EQ(k.rw_calls, before);
    // The kernel's count moves: the page follows, still no PMCRW.
    k.pmcs[id].value = 40;
    k.sync_page();
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 1040u);
    EXPECT_EQ(k.rw_calls, before);
}

TEST_F(readpage_test, allocated_pmc_with_a_target_reads_its_initial_count) {
    init();
    const pmc_id_t id = counting("SOFT-PAGE_FAULT.ALL");
    const unsigned before = k.rw_calls;
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 7u);
    EXPECT_EQ(k.rw_calls, before);
}

TEST_F(readpage_test, page_that_cannot_answer_sends_to_pmcrw) {
    init();
    // No target: PMCRW (which raises SIGIO in the kernel).
    const pmc_id_t lone = counting("SOFT-SYSCALL.ENTER", false);
    pmc_value_t v = 0;
    unsigned before = k.rw_calls;
    ASSERT_EQ(pmc_read(lone, &v), 0);
    EXPECT_EQ(k.rw_calls, before + 1);
    // Stopped: PMCRW.
    const pmc_id_t id = counting("SOFT-SYSCALL.ENTER");
    ASSERT_EQ(pmc_start(id), 0);
    ASSERT_EQ(pmc_stop(id), 0);
    before = k.rw_calls;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 7u);
    EXPECT_EQ(k.rw_calls, before + 1);
    // CLOCK.PROF has no slot: PMCRW.
    const pmc_id_t prof = counting("SOFT-CLOCK.PROF");
    before = k.rw_calls;
    ASSERT_EQ(pmc_read(prof, &v), 0);
    EXPECT_EQ(k.rw_calls, before + 1);
}

TEST_F(readpage_test, released_pmc_gets_pmcrws_error) {
    init();
    const pmc_id_t id = counting("SOFT-SYSCALL.ENTER");
    ASSERT_EQ(pmc_start(id), 0);
    // Released behind the library's back (another thread's view): the
    // generation is gone from the page, so PMCRW answers, EINVAL.
    pmc_op_simple s{};
    s.pm_pmcid = id;
    ASSERT_EQ(k.ioctl(HWPMC_IOC_PMCRELEASE, &s), 0);
    pmc_value_t v = 0;
    errno = 0;
    EXPECT_EQ(pmc_read(id, &v), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(readpage_test, another_generation_in_the_slot_is_not_read) {
    init();
    const pmc_id_t id = counting("SOFT-SYSCALL.ENTER");
    ASSERT_EQ(pmc_start(id), 0);
    // The slot now says another PMC's generation.
    hwpmc_readslot &s = k.page.rp_slots[(id - 1) % HWPMC_READPAGE_NSLOTS];
    s.rs_ctl = (static_cast<uint64_t>(id + 64) << 32) | HWPMC_RS_VALUE;
    s.rs_value = 99;
    pmc_value_t v = 0;
    EXPECT_FALSE(readpage_read(&k.page, (id - 1) % HWPMC_READPAGE_NSLOTS, id, &v));
    const unsigned before = k.rw_calls;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 1007u);
    EXPECT_EQ(k.rw_calls, before + 1);
}

TEST_F(readpage_test, tsc_is_rdtsc_plus_the_offset) {
    init();
    rdtsc_reader() = fake_tsc;
    pmc_id_t id = 0;
    ASSERT_EQ(pmc_allocate("tsc", PMC_MODE_SC, 0, 0, &id, 0), 0);
    const unsigned before = k.rw_calls;
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 5000u);
    EXPECT_EQ(k.rw_calls, before);
}

TEST_F(readpage_test, no_tsc_slot_reads_by_pmcrw) {
    k.tsc_slots = false;
    init();
    pmc_id_t id = 0;
    ASSERT_EQ(pmc_allocate("tsc", PMC_MODE_SC, 0, 0, &id, 0), 0);
    const unsigned before = k.rw_calls;
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(k.rw_calls, before + 1);
}

TEST_F(readpage_test, no_page_reads_by_pmcrw) {
    k.readpage = false; // an older module: no mmap, no GETREADSLOT
    init();
    const pmc_id_t id = counting("SOFT-SYSCALL.ENTER");
    ASSERT_EQ(pmc_start(id), 0);
    const unsigned before = k.rw_calls;
    pmc_value_t v = 0;
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, 1007u);
    EXPECT_EQ(k.rw_calls, before + 1);
}

TEST_F(readpage_test, cxx_pmc_reads_its_devices_page) {
    auto dev = hwpmc::device::open();
    auto p = dev.allocate("SOFT-SYSCALL.ENTER", PMC_MODE_TC, 0, -1, 7);
    p.attach();
    p.start();
    unsigned before = k.rw_calls;
    EXPECT_EQ(p.read(), 1007u);
    EXPECT_EQ(k.rw_calls, before);
    p.stop(); // the page cannot answer: PMCRW
    before = k.rw_calls;
    EXPECT_EQ(p.read(), 7u);
    EXPECT_EQ(k.rw_calls, before + 1);
    // No slot (CLOCK.PROF): PMCRW.
    auto prof = dev.allocate("SOFT-CLOCK.PROF", PMC_MODE_TC, 0, -1, 0);
    prof.attach();
    before = k.rw_calls;
    (void)prof.read();
    EXPECT_EQ(k.rw_calls, before + 1);
}

TEST_F(readpage_test, reader_rejects_out_of_range_and_empty_slots) {
    hwpmc_readpage page{};
    uint64_t v = 0;
    EXPECT_FALSE(readpage_read(&page, HWPMC_READPAGE_NSLOTS, 1, &v));
    EXPECT_FALSE(readpage_read(&page, 0, 0, &v));             // free slot, ctl 0
    page.rp_slots[3].rs_ctl = static_cast<uint64_t>(9) << 32; // no answer
    EXPECT_FALSE(readpage_read(&page, 3, 9, &v));
    page.rp_slots[3].rs_ctl |= HWPMC_RS_VALUE;
    page.rp_slots[3].rs_value = 12;
    EXPECT_TRUE(readpage_read(&page, 3, 9, &v));
    EXPECT_EQ(v, 12u);
}

} // namespace
} // namespace hwpmc::testing
