// SPDX-License-Identifier: BSD-2-Clause
// pmc_init() without a usable /dev/hwpmc: -1 with errno, nothing leaked,
// and the other calls keep saying "not initialized" (ENXIO).
#include <hwpmc/pmc.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

std::size_t open_fds() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator("/proc/self/fd"))
        ++n;
    return n;
}

class InitWithoutDevice : public ::testing::Test {
protected:
    void TearDown() override { unsetenv("HWPMC_DEVICE"); }

    // Runs pmc_init() against `path`; returns its errno.
    static int init_errno(const char *path) {
        setenv("HWPMC_DEVICE", path, 1);
        const std::size_t before = open_fds();
        errno = 0;
        const int rc = pmc_init();
        const int err = errno;
        EXPECT_EQ(rc, -1);
        EXPECT_EQ(open_fds(), before) << "pmc_init() leaked a file descriptor";
        return err;
    }
};

TEST_F(InitWithoutDevice, MissingDeviceIsENOENT) {
    EXPECT_EQ(init_errno("/nonexistent/hwpmc"), ENOENT);
}

TEST_F(InitWithoutDevice, NotAnHwpmcDeviceIsENOTTY) {
    // /dev/null opens, but knows none of the ioctls.
    EXPECT_EQ(init_errno("/dev/null"), ENOTTY);
}

TEST_F(InitWithoutDevice, DirectoryFailsWithOpenErrno) {
    EXPECT_EQ(init_errno("/"), EISDIR);
}

TEST_F(InitWithoutDevice, FailedInitCanBeRetried) {
    EXPECT_EQ(init_errno("/nonexistent/hwpmc"), ENOENT);
    EXPECT_EQ(init_errno("/dev/null"), ENOTTY);
}

TEST_F(InitWithoutDevice, DefaultPathWithoutModule) {
    if (std::filesystem::exists("/dev/hwpmc"))
        GTEST_SKIP() << "/dev/hwpmc exists here";
    unsetenv("HWPMC_DEVICE");
    errno = 0;
    EXPECT_EQ(pmc_init(), -1);
    EXPECT_EQ(errno, ENOENT);
}

TEST(NotInitialized, QueriesFailWithENXIO) {
    errno = 0;
    EXPECT_EQ(pmc_ncpu(), -1);
    EXPECT_EQ(errno, ENXIO);
    errno = 0;
    EXPECT_EQ(pmc_npmc(0), -1);
    EXPECT_EQ(errno, ENXIO);
    const struct pmc_cpuinfo *ci = nullptr;
    errno = 0;
    EXPECT_EQ(pmc_cpuinfo(&ci), -1);
    EXPECT_EQ(errno, ENXIO);
    EXPECT_EQ(ci, nullptr);
}

} // namespace
