// SPDX-License-Identifier: GPL-2.0
// A measured run, as hwpmc-stat, hwpmc-record and hwpmc-top make one: the
// command forked stopped (so that PMCs are attached before it execs), the
// signals that end a run, and the wait for its end.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace hwpmc_tools {

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
    // Is the child asleep on its pipe (or gone)?  Where /proc has no wchan,
    // any sleep counts.
    bool waiting() const;
    // Wait (up to `seconds`) until waiting(): its wait on the pipe then
    // happens before counting starts.  It is at once, unless the machine
    // is very busy.
    void wait_until_waiting(double seconds = 30) const;
    // Let it exec: 0 once exec succeeded, else exec's errno (the child has
    // then exited 127 or 126; wait for it with waitpid()).
    int release();
    // release(), telling why exec failed: 0, or the exit status for it
    // (127 not found, 126 not executable) with the child reaped.
    int start(const char *prog, const std::vector<std::string> &cmd);
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

// The state letter of /proc/PID/stat ('S': sleeping), or 0 if gone.
char proc_state(pid_t pid);

int pidfd_open(pid_t pid);
double monotonic_seconds();

// SIGINT, SIGTERM, SIGHUP and SIGCHLD write to a pipe that a poll(2) loop
// watches; SIGPIPE is ignored.  What a process sends (kill(1)) goes on to
// the forwarded child; what the terminal sends reaches it anyway.
namespace signals {
void setup(const char *prog);
int wake_fd();              // poll it for POLLIN
void drain();               // empty the pipe
int stop_signal();          // the last SIGINT/SIGTERM/SIGHUP, or 0
void reset();               // forget it (and drain), before another run
void forward_to(pid_t pid); // 0: nobody
} // namespace signals

// What ends a run: the command's exit (it is reaped, with its resource
// usage), the exit of every process given with -p, or, without a command,
// a stop signal (with one, signals go on to the command and its exit ends
// the run).  Needs signals::setup().
class run_watch {
public:
    enum class end {
        none,
        command,
        processes,
        signal,
        timeout
    };

    // `command`: the released command, or -1; `pids`: processes to outlive
    // (ignored with a command).
    run_watch(pid_t command, const std::vector<pid_t> &pids);
    ~run_watch();
    run_watch(const run_watch &) = delete;
    run_watch &operator=(const run_watch &) = delete;

    // At monotonic time `t` the run is over: a command gets SIGTERM (and
    // its exit ends the run); without one, wait() returns end::timeout.
    void set_deadline(double t) noexcept { deadline_ = t; }

    // Sleep until monotonic_seconds() reaches `until` (end::none; 0: no
    // limit) or the run ends (what ended it).
    end wait(double until);
    int wstatus() const noexcept { return wstatus_; }
    const struct rusage &usage() const noexcept { return ru_; }

private:
    end check();

    pid_t command_;
    double deadline_ = 0;
    bool reaped_ = false;
    std::vector<pid_t> pids_;
    std::vector<int> pidfds_; // -1 once that process exited
    size_t alive_ = 0;        // pidfds not yet fired
    bool poll_pids_ = false;  // some pid had no pidfd: poll with kill(pid, 0)
    int wstatus_ = 0;
    struct rusage ru_ {};
};

} // namespace hwpmc_tools
