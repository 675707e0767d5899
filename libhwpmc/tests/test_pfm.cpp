// SPDX-License-Identifier: BSD-2-Clause
// Hardware event names through the real libpfm4, for the PMU models forced
// with LIBPFM_FORCE_PMU (independent of the machine running the tests).
#include "spec/event_spec.hpp"
#include "spec/pfm_source.hpp"
#include "spec/soft_events.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace hwpmc::detail;

namespace {

constexpr uint64_t USR = 1 << 16, OS = 1 << 17;

// libpfm4 cannot switch PMU models within a process (pfm_terminate() leaves
// the models it activated active), so every check runs in a child process
// that initializes libpfm4 afresh with LIBPFM_FORCE_PMU=pmu.  This binary
// never initializes libpfm4 in the parent.  `check` returns "" or what
// went wrong.
void with_pmu(const char *pmu, const std::function<std::string()> &check) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        setenv("LIBPFM_FORCE_PMU", pmu, 1);
        const std::string err = check();
        if (!err.empty() && write(fds[1], err.data(), err.size()) < 0)
            _exit(2);
        _exit(err.empty() ? 0 : 1);
    }
    close(fds[1]);
    std::string msg;
    char buf[256];
    for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;)
        msg.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_EQ(msg, "") << "with LIBPFM_FORCE_PMU=" << pmu;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "with LIBPFM_FORCE_PMU=" << pmu;
}

spec_result parse(const char *spec, alias_set set) {
    spec_context ctx;
    ctx.aliases = set;
    ctx.soft = default_soft_events();
    ctx.pfm = &pfm_source::instance();
    return parse_event_spec(spec, ctx);
}

// "" if `spec` encodes as `want`, else why not.
std::string expect(const char *spec, alias_set set, const event_encoding &want) {
    const spec_result r = parse(spec, set);
    if (!r.encoding)
        return std::string(spec) + ": " + r.error;
    const event_encoding &g = *r.encoding;
    if (g == want)
        return "";
    char buf[256];
    std::snprintf(buf, sizeof(buf),
                  "%s: got class %u event %#x config %#llx config1 %#llx caps %#x", spec,
                  static_cast<unsigned>(g.cls), g.event, static_cast<unsigned long long>(g.config),
                  static_cast<unsigned long long>(g.config1), g.caps);
    return buf;
}

// "" if `spec` fails with an error containing `part`.
std::string expect_error(const char *spec, alias_set set, const char *part) {
    const spec_result r = parse(spec, set);
    if (r.encoding)
        return std::string(spec) + ": unexpectedly accepted";
    if (r.error.find(part) == std::string::npos)
        return std::string(spec) + ": error \"" + r.error + "\" lacks \"" + part + "\"";
    return "";
}

constexpr uint32_t U = PMC_CAP_USER, S = PMC_CAP_SYSTEM, Q = PMC_CAP_QUALIFIER, I = PMC_CAP_INVERT,
                   T = PMC_CAP_THRESHOLD;
constexpr auto intel = alias_set::intel_arch;

TEST(Pfm, IntelSkylakeProgrammable) {
    with_pmu("skl", [] {
        return expect("INST_RETIRED:ANY_P", intel, {PMC_CLASS_IAP, 0xc0, USR | OS, 0, U | S}) +
               expect("INST_RETIRED:ANY_P:u,cmask=1,inv", intel,
                      {PMC_CLASS_IAP, 0xc0, USR | (1ull << 23) | (1ull << 24), 0, U | I | T});
    });
}

// libpfm4 encodes an extra register (MSR_OFFCORE_RSP_0) for this event; the
// module does not program it (pm_config1 is reserved), so the parser says so.
TEST(Pfm, IntelOffcoreNeedsAnExtraRegister) {
    with_pmu("skl", [] {
        return expect_error("OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS", intel,
                            "needs an extra event register (OFFCORE_RSP)");
    });
}

TEST(Pfm, IntelFixedCounterEvent) {
    with_pmu("icl", [] {
        return expect("INST_RETIRED:ANY", intel, {PMC_CLASS_IAF, 0, USR | OS, 0, U | S});
    });
}

TEST(Pfm, AmdZen) {
    with_pmu("amd64_fam17h_zen1", [] {
        return expect("RETIRED_INSTRUCTIONS:u", alias_set::amd_zen,
                      {PMC_CLASS_K8, 0xc0, USR, 0, U});
    });
}

TEST(Pfm, WrongVendor) {
    with_pmu("amd64_fam19h_zen4",
             [] { return expect_error("RETIRED_INSTRUCTIONS", intel, "another vendor"); });
}

TEST(Pfm, UnknownNameSuggestsPfmNames) {
    with_pmu("skl", [] { return expect_error("INST_RETIRD", intel, "INST_RETIRED"); });
}

TEST(Pfm, NamesOfTheForcedPmu) {
    with_pmu("skl", []() -> std::string {
        const auto names = pfm_source::instance().names();
        if (std::find(names.begin(), names.end(), "INST_RETIRED") == names.end())
            return "INST_RETIRED missing";
        if (std::find(names.begin(), names.end(), "RETIRED_INSTRUCTIONS") != names.end())
            return "an AMD event among skl's";
        return "";
    });
}

} // namespace
