// SPDX-License-Identifier: BSD-2-Clause
// pmc_read() with RDPMC on the test module's PMU model (run by
// selftests/hwtools_test.sh in the guest, with pmu_model=intel and amd;
// skipped elsewhere).  The kernel really grants RDPMC (CR4.PCE) and the
// counter really holds the count modulo 2^48; only the instruction is
// replaced, by a read of the model's register through debugfs, because
// QEMU's TCG has no RDPMC (#UD).
#include "capi_state.hpp"
#include "ops.hpp"
#include "pin_cpu.hpp"
#include "rdpmc.hpp"

#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sched.h>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

const char *const model_dir = "/sys/kernel/debug/hwpmc-model";

// The model's register `key` on `cpu` (its state file), or ~0.
uint64_t model_reg(int cpu, const std::string &key) {
    std::ifstream f(std::string(model_dir) + "/state");
    std::string line;
    bool in = false;
    while (std::getline(f, line)) {
        if (line.rfind("cpu ", 0) == 0) {
            in = line == "cpu " + std::to_string(cpu);
            continue;
        }
        if (in && line.rfind(key + " ", 0) == 0)
            return std::stoull(line.substr(key.size() + 1), nullptr, 0);
    }
    return ~0ULL;
}

unsigned model_reads = 0;

// RDPMC as the model answers it: the calling CPU's counter.
uint64_t model_rdpmc(uint32_t index) {
    model_reads++;
    const std::string key = index & (1U << 30) ? "fixed" + std::to_string(index & 0x3fffffff)
                                               : "ctr" + std::to_string(index);
    return model_reg(sched_getcpu(), key);
}

bool advance(const char *what) {
    std::ofstream f(std::string(model_dir) + "/advance");
    f << what;
    f.flush();
    return static_cast<bool>(f);
}

uint64_t ioctl_count(pmc_id_t id) {
    pmc_value_t v = ~0ULL;
    EXPECT_EQ(hwpmc::detail::op_rw(hwpmc::detail::capi_fd(), id, PMC_F_OLDVALUE, &v), 0);
    return v;
}

class ModelRdpmc : public ::testing::Test {
protected:
    hwpmc::detail::rdpmc_fn saved = nullptr;
    std::unique_ptr<pin_to_cpu> pin;
    void SetUp() override {
        if (access(model_dir, F_OK) != 0 || access("/dev/hwpmc", F_OK) != 0)
            GTEST_SKIP() << "no PMU model (selftests/hwtools_test.sh loads the test module "
                            "with pmu_model=...)";
        pin = std::make_unique<pin_to_cpu>(0);
        ASSERT_TRUE(pin->ok()) << strerror(errno);
        ASSERT_EQ(pmc_init(), 0) << strerror(errno);
        saved = hwpmc::detail::rdpmc_reader();
        hwpmc::detail::rdpmc_reader() = model_rdpmc;
        model_reads = 0;
    }
    void TearDown() override {
        if (saved)
            hwpmc::detail::rdpmc_reader() = saved;
        hwpmc::detail::capi_reset();
    }
};

TEST_F(ModelRdpmc, ReadsTheCountByRdpmcWhileGranted) {
    pmc_id_t id = PMC_ID_INVALID;
    ASSERT_EQ(pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), 0) << pmc_errmsg();
    uint32_t width = 0;
    ASSERT_EQ(pmc_width(id, &width), 0);
    EXPECT_EQ(width, 48u);
    ASSERT_EQ(pmc_attach(id, PMC_PID_SELF), 0);
    uint32_t msr = ~0U;
    ASSERT_EQ(pmc_get_msr(id, &msr), 0) << strerror(errno);
    ASSERT_EQ(pmc_start(id), 0);
    pmc_value_t v = ~0ULL;
    ASSERT_EQ(pmc_read(id, &v), 0); // the ioctl: the upper bits
    EXPECT_EQ(model_reads, 0u);
    const uint64_t v0 = v;
    ASSERT_TRUE(advance("usr 100"));
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(model_reads, 1u);
    EXPECT_EQ(v, v0 + 100);
    EXPECT_EQ(v, ioctl_count(id));
    // Past 2^48 events: the counter wraps, the count read by RDPMC does
    // not (read at least every 2^47 events).  The kernel, which folds the
    // counter only when it reads it (or the thread is switched out), has
    // the same count modulo 2^48.
    const uint64_t half = (1ULL << 47) - 1, mask48 = (1ULL << 48) - 1;
    for (int i = 0; i < 3; i++) {
        ASSERT_TRUE(advance(("usr " + std::to_string(half)).c_str()));
        ASSERT_EQ(pmc_read(id, &v), 0);
    }
    EXPECT_EQ(model_reads, 4u);
    EXPECT_EQ(v, v0 + 100 + 3 * half);
    EXPECT_GT(v, 1ULL << 48);
    const uint64_t k = ioctl_count(id);
    EXPECT_EQ(k & mask48, v & mask48);
    // Detached from its owner: revoked (RDPMC would fault), the ioctl reads.
    ASSERT_TRUE(advance("usr 7"));
    ASSERT_EQ(pmc_detach(id, PMC_PID_SELF), 0);
    ASSERT_EQ(pmc_read(id, &v), 0);
    EXPECT_EQ(v, k + 7);
    EXPECT_EQ(model_reads, 4u);
    ASSERT_EQ(pmc_stop(id), 0);
    ASSERT_EQ(pmc_release(id), 0);
}

TEST_F(ModelRdpmc, NotQualifyingReadsByIoctl) {
    // With PMC_F_DESCENDANTS the kernel refuses PMCGETMSR (EINVAL).
    pmc_id_t id = PMC_ID_INVALID;
    ASSERT_EQ(pmc_allocate("instructions", PMC_MODE_TC, PMC_F_DESCENDANTS, PMC_CPU_ANY, &id, 0), 0);
    ASSERT_EQ(pmc_attach(id, PMC_PID_SELF), 0);
    uint32_t msr = 0;
    EXPECT_EQ(pmc_get_msr(id, &msr), -1);
    EXPECT_EQ(errno, EINVAL);
    ASSERT_EQ(pmc_start(id), 0);
    pmc_value_t a = 0, b = 0;
    ASSERT_EQ(pmc_read(id, &a), 0);
    ASSERT_TRUE(advance("usr 50"));
    ASSERT_EQ(pmc_read(id, &b), 0);
    EXPECT_EQ(b, a + 50);
    EXPECT_EQ(model_reads, 0u);
    ASSERT_EQ(pmc_stop(id), 0);
    ASSERT_EQ(pmc_release(id), 0);
}

} // namespace
