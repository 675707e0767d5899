// SPDX-License-Identifier: BSD-2-Clause
// The pmclog reader on logs the real module writes (run in the guest by
// selftests/pmclog_test.sh; exits 77 without /dev/hwpmc).
//
//   pmclog-live DIR
//
// Samples itself with SOFT-CLOCK.PROF (process scope, callchains, 1 kHz)
// into a log file in DIR, then reads the file back with pmclog_open() on
// the descriptor, with pmclog_feed() in pieces and with hwpmc::log_reader,
// and does it again with the log going to a pipe that a thread reads while
// the module writes.  Prints one line per check, "check NAME: ok" or
// "check NAME: FAIL why", and "# ..." notes; exits 0 if every check passed.
#include "pmclog_builder.hpp"

#include <hwpmc/hwpmc.hpp>
#include <pmc.h>
#include <pmclog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <random>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

double cpu_now() {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

} // namespace

// The hot path the samples should land in: outer -> hot, never inlined,
// never a tail call, hot not a leaf (so it has a frame: GCC omits the frame
// pointer of leaves), exported so that dladdr() names them.
extern "C" {
__attribute__((noinline, visibility("default"))) uint64_t pmclog_live_hot(double cpu_seconds);
__attribute__((noinline, visibility("default"))) uint64_t pmclog_live_outer(double cpu_seconds);
}

uint64_t pmclog_live_hot(double cpu_seconds) {
    const double end = cpu_now() + cpu_seconds;
    uint64_t x = 1;
    while (cpu_now() < end) {
        for (int i = 0; i < 200000; ++i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            asm volatile("" : "+r"(x));
        }
    }
    return x;
}

uint64_t pmclog_live_outer(double cpu_seconds) {
    uint64_t x = pmclog_live_hot(cpu_seconds);
    asm volatile("" : "+r"(x));
    return x + 1;
}

namespace {

using hwpmc::test::describe;

constexpr uint64_t period_ns = 1000000; // 1 kHz
constexpr double spin_seconds = 0.4;

int failures = 0;

void check(const char *name, bool ok, const char *fmt = "", ...)
    __attribute__((format(printf, 3, 4)));

void check(const char *name, bool ok, const char *fmt, ...) {
    if (ok) {
        std::printf("check %s: ok\n", name);
        return;
    }
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    std::printf("check %s: FAIL %s\n", name, why);
    ++failures;
}

void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::printf("# ");
    std::vprintf(fmt, ap);
    std::printf("\n");
    va_end(ap);
}

struct decoded {
    std::vector<std::string> text; // describe() of each record
    std::vector<pmclog_ev> ev;     // copies (pl_data and pl_evname not to be used)
    enum pmclog_state end = PMCLOG_OK;
    int err = 0;
    std::string msg;
};

void keep(decoded &d, const pmclog_ev &ev) {
    d.text.push_back(describe(ev));
    d.ev.push_back(ev);
}

// pmclog_open() on a descriptor, read to the end.
decoded read_fd(int fd) {
    decoded d;
    void *p = pmclog_open(fd);
    if (p == nullptr) {
        d.end = PMCLOG_ERROR;
        d.err = errno;
        return d;
    }
    pmclog_ev ev;
    while (pmclog_read(p, &ev) == 0)
        keep(d, ev);
    d.end = ev.pl_state;
    d.err = ev.pl_state == PMCLOG_ERROR ? errno : 0;
    d.msg = pmclog_errmsg(p);
    pmclog_close(p);
    return d;
}

// pmclog_feed() in pieces of random sizes.
decoded read_fed(const std::vector<unsigned char> &log, unsigned seed) {
    decoded d;
    void *p = pmclog_open(PMCLOG_FD_NONE);
    std::mt19937 rng(seed);
    size_t at = 0;
    pmclog_ev ev;
    for (;;) {
        if (pmclog_read(p, &ev) == 0) {
            keep(d, ev);
            continue;
        }
        if (ev.pl_state != PMCLOG_REQUIRE_DATA)
            break;
        if (at == log.size()) {
            pmclog_feed(p, nullptr, 0);
            continue;
        }
        const size_t n = std::min<size_t>(1 + rng() % 4096, log.size() - at);
        std::vector<char> piece(log.begin() + static_cast<std::ptrdiff_t>(at),
                                log.begin() + static_cast<std::ptrdiff_t>(at + n));
        pmclog_feed(p, piece.data(), static_cast<int>(n));
        at += n;
    }
    d.end = ev.pl_state;
    d.err = ev.pl_state == PMCLOG_ERROR ? errno : 0;
    d.msg = pmclog_errmsg(p);
    pmclog_close(p);
    return d;
}

std::string exe_path() {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0)
        return {};
    return std::string(buf, static_cast<size_t>(n));
}

bool in_function(uint64_t pc, const char *name) {
    Dl_info info{};
    return dladdr(reinterpret_cast<void *>(pc), &info) != 0 && info.dli_sname != nullptr &&
           std::strcmp(info.dli_sname, name) == 0;
}

// The checks every complete log of one sampling session must pass.
// `other_tid`: a second thread of the process (its samples count too).
void check_session(const char *tag, const decoded &d, pmc_id_t id, double cpu_s,
                   pid_t other_tid = -1) {
    auto name = [tag](const char *what) { return std::string(tag) + "-" + what; };
    const pid_t pid = getpid();
    const pid_t tid = gettid();

    check(name("read").c_str(), d.end == PMCLOG_EOF, "ended with state %d errno %d: %s", d.end,
          d.err, d.msg.c_str());
    check(name("initialize-first").c_str(),
          !d.ev.empty() && d.ev[0].pl_type == PMCLOG_TYPE_INITIALIZE && d.ev[0].pl_offset == 0,
          "first record: %s", d.text.empty() ? "none" : d.text[0].c_str());
    if (d.ev.empty())
        return;
    {
        const auto &i = d.ev[0].pl_u.pl_i;
        const struct pmc_cpuinfo *ci = nullptr;
        pmc_cpuinfo(&ci);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        const long long skew = static_cast<long long>(now.tv_sec) - i.pl_ts.tv_sec;
        check(name("initialize-fields").c_str(),
              HWPMC_VERSION_TO_MAJOR(i.pl_version) == PMCLOG_VERSION_MAJOR && ci != nullptr &&
                  i.pl_arch == static_cast<uint32_t>(ci->pm_cputype) && i.pl_ncpu == ci->pm_ncpu &&
                  i.pl_pagesize == static_cast<uint32_t>(sysconf(_SC_PAGESIZE)) && skew >= 0 &&
                  skew < 3600,
              "%s (wall-clock skew %lld s)", d.text[0].c_str(), skew);
    }
    check(name("closelog-last").c_str(), d.ev.back().pl_type == PMCLOG_TYPE_CLOSELOG,
          "last record: %s", d.text.back().c_str());

    int allocs = 0, attaches = 0, userdata = 0, drops = 0;
    bool alloc_ok = false, attach_ok = false, map_ok = false;
    const std::string exe = exe_path();
    const auto hot = reinterpret_cast<uint64_t>(&pmclog_live_hot);
    size_t samples = 0, bad_samples = 0, in_hot = 0, via_outer = 0, user_first = 0;
    std::string bad;
    bool ts_ok = true, counts_ok = true;
    const auto t0 = d.ev.front().pl_ts, t1 = d.ev.back().pl_ts;
    auto before = [](const timespec &a, const timespec &b) {
        return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec);
    };
    off_t off = 0;
    for (size_t k = 0; k < d.ev.size(); ++k) {
        const pmclog_ev &ev = d.ev[k];
        counts_ok &= ev.pl_count == k + 1 && ev.pl_offset == off;
        off = ev.pl_offset + ev.pl_len;
        ts_ok &= before(t0, ev.pl_ts) && before(ev.pl_ts, t1);
        switch (ev.pl_type) {
        case PMCLOG_TYPE_PMCALLOCATE: {
            const auto &a = ev.pl_u.pl_a;
            ++allocs;
            alloc_ok = a.pl_pmcid == id && std::strcmp(a.pl_name, "SOFT-CLOCK.PROF") == 0 &&
                       a.pl_event == static_cast<uint32_t>(PMC_EV_SOFT_CLOCK_PROF) &&
                       a.pl_mode == static_cast<uint32_t>(PMC_MODE_TS) &&
                       (a.pl_flags & PMC_F_CALLCHAIN) && a.pl_rate == period_ns &&
                       a.pl_cpu == PMC_CPU_ANY;
            break;
        }
        case PMCLOG_TYPE_PMCATTACH:
            ++attaches;
            attach_ok = ev.pl_u.pl_t.pl_pmcid == id && ev.pl_u.pl_t.pl_pid == pid &&
                        exe == ev.pl_u.pl_t.pl_pathname;
            break;
        case PMCLOG_TYPE_MAP_IN: {
            const auto &m = ev.pl_u.pl_mi;
            map_ok |=
                m.pl_pid == pid && exe == m.pl_pathname && m.pl_start <= hot && hot < m.pl_end;
            break;
        }
        case PMCLOG_TYPE_USERDATA:
            userdata += ev.pl_u.pl_u.pl_userdata == 0x1234abcd && ev.pl_u.pl_u.pl_pid == pid;
            break;
        case PMCLOG_TYPE_DROPNOTIFY:
            drops += static_cast<int>(ev.pl_u.pl_dn.pl_samples + ev.pl_u.pl_dn.pl_records);
            break;
        case PMCLOG_TYPE_CALLCHAIN: {
            const auto &cc = ev.pl_u.pl_cc;
            ++samples;
            if (cc.pl_pmcid != id || cc.pl_pid != static_cast<uint32_t>(pid) ||
                (cc.pl_tid != static_cast<uint32_t>(tid) &&
                 cc.pl_tid != static_cast<uint32_t>(other_tid)) ||
                cc.pl_npc == 0) {
                if (bad_samples++ == 0)
                    bad = d.text[k];
                break;
            }
            if (cc.pl_cpumode != PMCLOG_CPUMODE_USER)
                break;
            ++user_first;
            if (!in_function(cc.pl_pc[0], "pmclog_live_hot"))
                break;
            ++in_hot;
            for (uint32_t f = 1; f < cc.pl_npc; ++f)
                if (in_function(cc.pl_pc[f], "pmclog_live_outer")) {
                    ++via_outer;
                    break;
                }
            break;
        }
        default:
            break;
        }
    }
    const double expect = cpu_s * 1e9 / static_cast<double>(period_ns);
    note("%s: %zu records, %zu samples (%.0f expected), %zu user, %zu in pmclog_live_hot, "
         "%zu of them called from pmclog_live_outer, %d dropped",
         tag, d.ev.size(), samples, expect, user_first, in_hot, via_outer, drops);
    check(name("counts-and-offsets").c_str(), counts_ok, "pl_count/pl_offset do not add up");
    check(name("timestamps").c_str(), ts_ok, "a record outside INITIALIZE..CLOSELOG time");
    check(name("pmcallocate").c_str(), allocs == 1 && alloc_ok, "%d PMCALLOCATE, fields %s", allocs,
          alloc_ok ? "ok" : "wrong");
    check(name("pmcattach").c_str(), attaches == 1 && attach_ok, "%d PMCATTACH, fields %s (exe %s)",
          attaches, attach_ok ? "ok" : "wrong", exe.c_str());
    check(name("map-in").c_str(), map_ok, "no MAP_IN of %s covering pmclog_live_hot", exe.c_str());
    check(name("userdata").c_str(), userdata == 1, "%d matching USERDATA", userdata);
    check(name("callchains").c_str(),
          bad_samples == 0 && static_cast<double>(samples) >= expect * 0.5 &&
              static_cast<double>(samples) <= expect * 1.5 + 2,
          "%zu samples for %.0f expected, %zu not of pmcid %#x pid %d tid %d (%s)", samples, expect,
          bad_samples, id, pid, tid, bad.c_str());
    check(name("callchain-frames").c_str(), in_hot * 2 >= samples && via_outer * 10 >= in_hot * 9,
          "%zu of %zu samples in pmclog_live_hot, %zu of them via pmclog_live_outer", in_hot,
          samples, via_outer);
}

// One sampling session logging to logfd: returns the PMC and the CPU time.
bool sample(int logfd, pmc_id_t *id, double *cpu_s) {
    if (pmc_allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, id, period_ns) <
        0) {
        check("allocate", false, "pmc_allocate: %s %s", std::strerror(errno), pmc_errmsg());
        return false;
    }
    // The log first, then the attach: PMCATTACH and the MAP_IN records of
    // the target are written at attach time.
    bool ok = pmc_configure_logfile(logfd) == 0 && pmc_attach(*id, 0) == 0;
    const double c0 = cpu_now();
    ok = ok && pmc_start(*id) == 0;
    if (ok)
        pmclog_live_outer(spin_seconds);
    ok = ok && pmc_stop(*id) == 0;
    *cpu_s = cpu_now() - c0;
    ok = ok && pmc_writelog(0x1234abcd) == 0 && pmc_close_logfile() == 0;
    if (!ok)
        check("sample", false, "%s", std::strerror(errno));
    pmc_release(*id);
    return ok;
}

void file_session(const std::string &dir) {
    const std::string path = dir + "/pmclog-live.log";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        check("file-open", false, "%s: %s", path.c_str(), std::strerror(errno));
        return;
    }
    pmc_id_t id;
    double cpu_s = 0;
    if (!sample(fd, &id, &cpu_s)) {
        close(fd);
        return;
    }
    struct stat st;
    fstat(fd, &st);
    note("file: %lld bytes, %.3f s CPU sampled", static_cast<long long>(st.st_size), cpu_s);
    lseek(fd, 0, SEEK_SET);
    const decoded d = read_fd(fd);
    check_session("file", d, id, cpu_s);

    // The same bytes, fed in random pieces and through the C++ reader.
    std::vector<unsigned char> bytes(static_cast<size_t>(st.st_size));
    const bool got = pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size());
    bool fed_ok = got;
    for (unsigned seed = 1; fed_ok && seed <= 5; ++seed) {
        const decoded f = read_fed(bytes, seed);
        fed_ok = f.text == d.text && f.end == PMCLOG_EOF;
    }
    check("file-fed-in-pieces", fed_ok, "pmclog_feed() in pieces decodes differently");
    std::vector<std::string> cxx;
    std::string cxx_err;
    try {
        hwpmc::log_reader r(std::as_bytes(std::span(bytes)));
        for (const pmclog_ev &ev : r)
            cxx.push_back(describe(ev));
        if (r.state() != PMCLOG_EOF)
            cxx_err = "state " + std::to_string(r.state());
    } catch (const std::system_error &e) {
        cxx_err = e.what();
    }
    check("file-cxx-reader", cxx == d.text && cxx_err.empty(), "log_reader: %zu records %s",
          cxx.size(), cxx_err.c_str());
    // Cut short: an error, never a crash.
    if (bytes.size() > 100) {
        const std::vector<unsigned char> cut(bytes.begin(), bytes.end() - 4);
        const decoded t = read_fed(cut, 7);
        check("file-truncated", t.end == PMCLOG_ERROR && t.err == EBADMSG,
              "a log without its last 4 bytes: state %d errno %d", t.end, t.err);
    }
    close(fd);
}

// The module writes into a pipe while a thread decodes it from the
// descriptor (pmclog_open(fd), blocking reads, records split across reads).
void pipe_session() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        check("pipe", false, "pipe2: %s", std::strerror(errno));
        return;
    }
    fcntl(fds[1], F_SETPIPE_SZ, 4096); // small: the reader must keep up
    decoded d;
    std::atomic<pid_t> reader_tid{-1};
    std::thread reader([&] {
        reader_tid = gettid();
        d = read_fd(fds[0]);
    });
    pmc_id_t id = PMC_ID_INVALID;
    double cpu_s = 0;
    bool ok = false;
    {
        // The module holds its own reference to the write end once
        // configured: close ours right after, so the reader sees EOF when
        // the log is closed.
        const int w = fds[1];
        if (pmc_allocate("SOFT-CLOCK.PROF", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, &id,
                         period_ns) == 0 &&
            pmc_configure_logfile(w) == 0) {
            close(w);
            const double c0 = cpu_now();
            ok = pmc_attach(id, 0) == 0 && pmc_start(id) == 0;
            if (ok)
                pmclog_live_outer(spin_seconds);
            ok = ok && pmc_stop(id) == 0;
            cpu_s = cpu_now() - c0;
            ok = ok && pmc_writelog(0x1234abcd) == 0 && pmc_close_logfile() == 0;
        } else {
            close(w);
        }
        if (id != PMC_ID_INVALID)
            pmc_release(id);
    }
    reader.join();
    close(fds[0]);
    check("pipe-session", ok, "sampling into a pipe failed: %s", std::strerror(errno));
    if (ok)
        check_session("pipe", d, id, cpu_s, reader_tid);
}

} // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    if (access("/dev/hwpmc", F_OK) != 0 && std::getenv("HWPMC_DEVICE") == nullptr) {
        note("no /dev/hwpmc: the module is not loaded");
        return 77;
    }
    if (pmc_init() < 0) {
        check("pmc_init", false, "%s", std::strerror(errno));
        return 1;
    }
    file_session(dir);
    pipe_session();
    note("%d checks failed", failures);
    return failures == 0 ? 0 : 1;
}
