// SPDX-License-Identifier: GPL-2.0
// Shared by the hwpmc tools: opening the driver with errors that say what
// to do, and small formatting helpers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hwpmc_tools {

// pmc_init(), or print why it failed (and what to do) and return false.
bool init_or_explain(const char *prog);

// Explain a failed operation: errno plus the likely cause and the fix.
void explain(const char *prog, const char *what, int err);

// 1234567 -> "1,234,567".
std::string thousands(std::uint64_t v);

// The loaded module's version ("1.0"), or "" when unknown.
std::string module_version();

// --- helpers of the sampling tools (hwpmc-record, hwpmc-top) -------------

// "0,2-3" -> {0,2,3} (sorted, unique); false if malformed or empty.
bool parse_cpu_list(const std::string &arg, std::vector<int> *cpus);

// {0,2,3} -> "0,2-3".
std::string cpu_list_string(const std::vector<int> &cpus);

// The online CPUs (/sys/devices/system/cpu/online), or 0..ncpu-1.
std::vector<int> online_cpus(int ncpu);

// A parameter of the loaded module (/sys/module/hwpmc/parameters/NAME),
// or "" when unknown.
std::string module_param(const char *name);

// 1536 -> "1.5 KiB".
std::string human_bytes(std::uint64_t bytes);

// A command forked stopped: the child waits on a pipe until release(), so
// that PMCs can be attached to it before it execs.
class stopped_child {
public:
    stopped_child() = default;
    stopped_child(const stopped_child &) = delete;
    stopped_child &operator=(const stopped_child &) = delete;
    ~stopped_child() { abandon(); }

    // Fork; the child resets the signals the tools catch and waits.  False
    // (with a message) if pipe(2) or fork(2) failed.
    bool fork(const char *prog, const std::vector<std::string> &cmd);
    // Wait (up to 2 s) until the child sleeps on the pipe.
    void wait_until_waiting() const;
    // Let it exec: 0 once exec succeeded, else exec's errno (the child has
    // then exited 127 or 126; wait for it with waitpid()).
    int release();
    // Kill it before exec and reap it.
    void abandon();

    pid_t pid() const noexcept { return pid_; }

private:
    pid_t pid_ = -1;
    int go_fd_ = -1;  // write a byte: exec
    int err_fd_ = -1; // exec's errno, or EOF once exec succeeded
};

// A wait status as an exit status: the code, or 128 + the signal.
int exit_status_of(int wstatus);

} // namespace hwpmc_tools
