// SPDX-License-Identifier: GPL-2.0
#include "run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace hwpmc_tools {

char proc_state(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string s;
    std::getline(f, s);
    size_t p = s.rfind(')');
    return p != std::string::npos && p + 2 < s.size() ? s[p + 2] : 0;
}

bool stopped_child::fork(const char *prog, const std::vector<std::string> &cmd) {
    int go[2], err[2];
    if (pipe2(go, O_CLOEXEC) < 0) {
        std::fprintf(stderr, "%s: pipe: %s\n", prog, std::strerror(errno));
        return false;
    }
    if (pipe2(err, O_CLOEXEC) < 0) {
        std::fprintf(stderr, "%s: pipe: %s\n", prog, std::strerror(errno));
        close(go[0]);
        close(go[1]);
        return false;
    }
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
        std::fprintf(stderr, "%s: fork: %s\n", prog, std::strerror(errno));
        for (int fd : {go[0], go[1], err[0], err[1]})
            close(fd);
        return false;
    }
    if (pid == 0) {
        close(go[1]);
        close(err[0]);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGQUIT})
            signal(sig, SIG_DFL);
        char ch;
        ssize_t n;
        while ((n = read(go[0], &ch, 1)) < 0 && errno == EINTR) {
        }
        if (n != 1)
            _exit(127); // the tool gave up
        close(go[0]);
        std::vector<char *> argv;
        for (const auto &a : cmd)
            argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execvp(argv[0], argv.data());
        int e = errno;
        if (write(err[1], &e, sizeof(e)) < 0) {
            // the tool sees EOF and the exit status
        }
        _exit(e == ENOENT ? 127 : 126);
    }
    close(go[0]);
    close(err[1]);
    pid_ = pid;
    go_fd_ = go[1];
    err_fd_ = err[0];
    return true;
}

bool stopped_child::waiting() const {
    char st = proc_state(pid_);
    if (st != 'S')
        return st == 0; // gone: nothing to wait for
    std::ifstream f("/proc/" + std::to_string(pid_) + "/wchan");
    std::string w;
    std::getline(f, w);
    return w.empty() || w == "0" || w.find("pipe") != std::string::npos;
}

void stopped_child::wait_until_waiting(double seconds) const {
    const double deadline = monotonic_seconds() + seconds;
    long nap = 20;
    while (!waiting() && monotonic_seconds() < deadline) {
        struct timespec ts = {0, nap * 1000};
        nanosleep(&ts, nullptr);
        nap = std::min(nap * 2, 2000L);
    }
}

int stopped_child::release() {
    char b = 1;
    if (write(go_fd_, &b, 1) != 1) {
        // the child died before exec: waitpid tells
    }
    close(go_fd_);
    go_fd_ = -1;
    int e = 0;
    ssize_t n;
    while ((n = read(err_fd_, &e, sizeof(e))) < 0 && errno == EINTR) {
    }
    close(err_fd_);
    err_fd_ = -1;
    return n == static_cast<ssize_t>(sizeof(e)) ? e : 0;
}

int stopped_child::start(const char *prog, const std::vector<std::string> &cmd) {
    int e = release();
    if (!e)
        return 0;
    std::fprintf(stderr, "%s: cannot run '%s': %s\n", prog, cmd[0].c_str(), std::strerror(e));
    int ws;
    while (waitpid(pid_, &ws, 0) < 0 && errno == EINTR) {
    }
    return e == ENOENT ? 127 : 126;
}

void stopped_child::abandon() {
    if (go_fd_ < 0) // released (or never forked): the caller waits for it
        return;
    close(go_fd_); // the child exits on EOF
    go_fd_ = -1;
    if (err_fd_ >= 0)
        close(err_fd_);
    err_fd_ = -1;
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

int exit_status_of(int wstatus) {
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

int pidfd_open(pid_t pid) {
    return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

double monotonic_seconds() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

namespace signals {

namespace {
int wake_pipe[2] = {-1, -1};
volatile sig_atomic_t got_stop_signal = 0;
volatile sig_atomic_t child_pid = 0;

void on_signal(int sig, siginfo_t *si, void *) {
    int saved = errno;
    if (sig != SIGCHLD) {
        got_stop_signal = sig;
        if (child_pid > 0 && si && si->si_code <= 0)
            kill(child_pid, sig);
    }
    char c = 0;
    if (write(wake_pipe[1], &c, 1) < 0) {
        // full: a wake-up is pending anyway
    }
    errno = saved;
}
} // namespace

void setup(const char *prog) {
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        std::fprintf(stderr, "%s: pipe: %s\n", prog, std::strerror(errno));
        std::exit(1);
    }
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD})
        sigaction(sig, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

int wake_fd() {
    return wake_pipe[0];
}

void drain() {
    char buf[64];
    while (read(wake_pipe[0], buf, sizeof(buf)) > 0) {
    }
}

int stop_signal() {
    return got_stop_signal;
}

void reset() {
    drain();
    got_stop_signal = 0;
}

void forward_to(pid_t pid) {
    child_pid = pid;
}

} // namespace signals

run_watch::run_watch(pid_t command, const std::vector<pid_t> &pids) : command_(command) {
    if (command_ > 0)
        return;
    pids_ = pids;
    for (pid_t p : pids_) {
        int fd = pidfd_open(p);
        if (fd >= 0) {
            pidfds_.push_back(fd);
            alive_++;
        } else {
            poll_pids_ = true; // an old kernel, or not ours to open
        }
    }
}

run_watch::~run_watch() {
    for (int fd : pidfds_)
        if (fd >= 0)
            close(fd);
}

run_watch::end run_watch::check() {
    if (command_ > 0) {
        if (!reaped_) {
            pid_t w = wait4(command_, &wstatus_, WNOHANG, &ru_);
            reaped_ = w == command_ || (w < 0 && errno == ECHILD); // ECHILD: reaped already
        }
        return reaped_ ? end::command : end::none;
    }
    if (!pids_.empty()) {
        if (poll_pids_) {
            bool any = false;
            for (pid_t p : pids_)
                any |= kill(p, 0) == 0 || errno == EPERM;
            if (!any)
                return end::processes;
        } else if (alive_ == 0) {
            return end::processes;
        }
    }
    return signals::stop_signal() ? end::signal : end::none;
}

run_watch::end run_watch::wait(double until) {
    for (;;) {
        end e = check();
        if (e != end::none)
            return e;
        double t = monotonic_seconds();
        if (deadline_ > 0 && t >= deadline_) {
            deadline_ = 0;
            if (command_ <= 0)
                return end::timeout;
            kill(command_, SIGTERM);
            continue;
        }
        if (until > 0 && t >= until)
            return end::none;
        double wake = until;
        if (deadline_ > 0)
            wake = wake > 0 ? std::min(wake, deadline_) : deadline_;
        int timeout = wake > 0 ? static_cast<int>(std::ceil((wake - t) * 1000)) : -1;
        if (poll_pids_ && (timeout < 0 || timeout > 100))
            timeout = 100;
        std::vector<struct pollfd> fds;
        fds.push_back({signals::wake_fd(), POLLIN, 0});
        for (int fd : pidfds_)
            if (fd >= 0)
                fds.push_back({fd, POLLIN, 0});
        if (poll(fds.data(), fds.size(), timeout) <= 0)
            continue;
        if (fds[0].revents)
            signals::drain();
        for (size_t i = 1; i < fds.size(); i++) {
            if (!fds[i].revents)
                continue;
            for (auto &fd : pidfds_)
                if (fd == fds[i].fd) {
                    close(fd);
                    fd = -1;
                    alive_--;
                }
        }
    }
}

} // namespace hwpmc_tools
