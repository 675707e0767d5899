// SPDX-License-Identifier: BSD-2-Clause
// pin_to_cpu: runs the calling thread on one CPU for the object's lifetime,
// then gives back the mask it had (a system-scope PMC counts only its own
// CPU; the PMU model's registers are per CPU).  Shared by the tests that
// run in the guest (test_device.cpp, test_model.cpp).
#pragma once

#include <sched.h>

class pin_to_cpu {
public:
    explicit pin_to_cpu(int cpu) {
        ok_ = sched_getaffinity(0, sizeof(old_), &old_) == 0;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        ok_ = ok_ && sched_setaffinity(0, sizeof(set), &set) == 0;
    }
    ~pin_to_cpu() {
        if (ok_)
            (void)sched_setaffinity(0, sizeof(old_), &old_);
    }
    pin_to_cpu(const pin_to_cpu &) = delete;
    pin_to_cpu &operator=(const pin_to_cpu &) = delete;
    bool ok() const { return ok_; }

private:
    cpu_set_t old_{};
    bool ok_ = false;
};
