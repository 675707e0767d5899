// SPDX-License-Identifier: BSD-2-Clause
// Hardware events by libpfm4 name, for the core PMU libpfm4 detects (or the
// one LIBPFM_FORCE_PMU names).
#pragma once

#include "event_spec.hpp"

#include <utility>

namespace hwpmc::detail {

class pfm_source final : public hw_event_source {
public:
    // The process-wide instance; libpfm4 is initialized on first use.
    static pfm_source &instance();

    std::optional<hw_event> lookup(const std::string &name, std::string *why) override;
    std::vector<std::string> names() override;
    // The core PMU's events with libpfm4's description, in names()' order.
    std::vector<std::pair<std::string, std::string>> described();
    // Whether libpfm4 knows the CPU's core PMU.
    bool has_core_pmu();

    // Re-read the environment (LIBPFM_FORCE_PMU): for tests.
    void reinitialize();

private:
    pfm_source() = default;
    bool ensure_initialized(std::string *why);

    bool initialized_ = false;
    int init_error_ = 0;
};

} // namespace hwpmc::detail
