/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the hwpmc kselftests.  The tests are C because the
 * kernel's kselftest_harness.h is C-only.  Every helper returns 0 or the
 * errno the operation failed with, so tests can assert exact errnos.
 */
#ifndef HWPMC_SELFTEST_UTIL_H
#define HWPMC_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/hwpmc.h>
#include <linux/membarrier.h>

#define HWPMC_DEV "/dev/hwpmc"

/* --- the module ---------------------------------------------------------- */

/*
 * build/<release>/<sub>hwpmc.ko of the checkout this test was built in
 * (<top>/build/userland/selftests/<test>); @sub is "" (release) or "test/".
 */
static inline int hwpmc_module_file(const char *sub, char *buf, size_t len)
{
	char exe[PATH_MAX];
	struct utsname u;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0 || uname(&u))
		return ENOENT;
	exe[n] = 0;
	snprintf(buf, len, "%s/../../%s/%shwpmc.ko", dirname(exe), u.release,
		 sub);
	return access(buf, R_OK) ? errno : 0;
}

/*
 * Is this the project's debug kernel (scripts/debug-kernel: KASAN,
 * lockdep, kmemleak...)?  Its release ends in "-hwpmc-debug".  A test
 * whose figures are about time (where a busy task's time goes) may say
 * less there, never more: the kernel itself takes much of every CPU.
 */
static inline bool hwpmc_debug_kernel(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-hwpmc-debug");
}

/* Load that module with @params: 0, or the errno finit_module gave. */
static inline int hwpmc_module_load(const char *sub, const char *params)
{
	char path[PATH_MAX];
	int fd, err;

	err = hwpmc_module_file(sub, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	err = syscall(SYS_finit_module, fd, params, 0) ? errno : 0;
	close(fd);
	return err;
}

/* Unload hwpmc once: 0, EWOULDBLOCK while in use, ENOENT if not loaded. */
static inline int hwpmc_module_unload(void)
{
	return syscall(SYS_delete_module, "hwpmc", O_NONBLOCK) ? errno : 0;
}

/* Unload hwpmc, waiting (up to 5 s) for late closes to let go. */
static inline int hwpmc_module_unload_wait(void)
{
	int i, err = 0;

	for (i = 0; i < 100; i++) {
		err = hwpmc_module_unload();
		if (err != EWOULDBLOCK && err != EAGAIN && err != EBUSY)
			break;
		usleep(50000);
	}
	return err;
}

#define HWPMC_NO_TEST_FLAVOR \
	"the test flavor (build/<release>/test/hwpmc.ko) is not built"

/*
 * The test flavor with @params in place of the module the rig loaded: 0,
 * EBUSY (/dev/hwpmc still held open), ENOENT (the test flavor is not
 * built: the release module is loaded back), or finit_module's errno.
 */
static inline int hwpmc_test_flavor_load(const char *params)
{
	int err;

	if (hwpmc_module_unload_wait())
		return EBUSY;
	err = hwpmc_module_load("test/", params);
	if (err == ENOENT)
		hwpmc_module_load("", "");
	return err;
}

/* Back to the release module, as the rig loaded it. */
static inline void hwpmc_release_flavor_load(void)
{
	hwpmc_module_unload_wait();
	hwpmc_module_load("", "");
}

/* Open /dev/hwpmc; -1 with errno on failure. */
static inline int hwpmc_open(void)
{
	return open(HWPMC_DEV, O_RDWR | O_CLOEXEC);
}

/* ioctl returning 0 or the errno it failed with. */
static inline int hwpmc_ioctl_err(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static inline int hwpmc_alloc(int fd, __u32 class, __u32 event, __u32 mode,
			      __u32 flags, __u32 cpu, __u64 count, __u32 *id)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = cpu, .pm_class = class, .pm_event = event,
		.pm_mode = mode, .pm_flags = flags, .pm_count = count,
	};
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a);

	if (!err && id)
		*id = a.pm_pmcid;
	return err;
}

/* A process-scope counting SOFT PMC. */
static inline int hwpmc_soft_tc(int fd, __u32 event, __u32 flags, __u32 *id)
{
	return hwpmc_alloc(fd, PMC_CLASS_SOFT, event, PMC_MODE_TC, flags,
			   PMC_CPU_ANY, 0, id);
}

/* A system-scope counting SOFT PMC on @cpu. */
static inline int hwpmc_soft_sc(int fd, __u32 event, __u32 cpu, __u32 *id)
{
	return hwpmc_alloc(fd, PMC_CLASS_SOFT, event, PMC_MODE_SC, 0, cpu, 0,
			   id);
}

static inline int hwpmc_simple(int fd, unsigned long cmd, __u32 id)
{
	struct pmc_op_simple s = { .pm_pmcid = id };

	return hwpmc_ioctl_err(fd, cmd, &s);
}

static inline int hwpmc_start(int fd, __u32 id)
{
	return hwpmc_simple(fd, HWPMC_IOC_PMCSTART, id);
}

static inline int hwpmc_stop(int fd, __u32 id)
{
	return hwpmc_simple(fd, HWPMC_IOC_PMCSTOP, id);
}

static inline int hwpmc_release(int fd, __u32 id)
{
	return hwpmc_simple(fd, HWPMC_IOC_PMCRELEASE, id);
}

static inline int hwpmc_read(int fd, __u32 id, __u64 *value)
{
	struct pmc_op_pmcrw rw = { .pm_pmcid = id,
				   .pm_flags = PMC_F_OLDVALUE };
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw);

	if (!err)
		*value = rw.pm_value;
	return err;
}

static inline int hwpmc_write(int fd, __u32 id, __u64 value)
{
	struct pmc_op_pmcrw rw = { .pm_pmcid = id,
				   .pm_flags = PMC_F_NEWVALUE,
				   .pm_value = value };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCRW, &rw);
}

static inline int hwpmc_attach(int fd, __u32 id, pid_t pid)
{
	struct pmc_op_pmcattach a = { .pm_pmcid = id, .pm_pid = pid };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCATTACH, &a);
}

static inline int hwpmc_detach(int fd, __u32 id, pid_t pid)
{
	struct pmc_op_pmcattach a = { .pm_pmcid = id, .pm_pid = pid };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCDETACH, &a);
}

static inline int hwpmc_setcount(int fd, __u32 id, __u64 count)
{
	struct pmc_op_pmcsetcount s = { .pm_pmcid = id, .pm_count = count };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCSETCOUNT, &s);
}

/* Rows of @cpu into @info (capacity @n); returns errno. */
static inline int hwpmc_pmcinfo(int fd, __u32 cpu, struct pmc_info *info,
				__u32 *n)
{
	struct pmc_op_getpmcinfo g = { .pm_cpu = cpu, .pm_npmc = *n,
				       .pm_info = (__u64)(uintptr_t)info };
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_GETPMCINFO, &g);

	*n = g.pm_npmc;
	return err;
}

static inline int hwpmc_admin(int fd, __u32 cpu, __u32 row, __u32 state)
{
	struct pmc_op_pmcadmin a = { .pm_cpu = cpu, .pm_pmcid = row,
				     .pm_state = state };

	return hwpmc_ioctl_err(fd, HWPMC_IOC_PMCADMIN, &a);
}

/* First row of @class, or -1. */
static inline int hwpmc_class_firstrow(int fd, __u32 class, __u32 *nrows)
{
	struct pmc_op_getcpuinfo ci;
	__u32 i;

	if (hwpmc_ioctl_err(fd, HWPMC_IOC_GETCPUINFO, &ci))
		return -1;
	for (i = 0; i < ci.pm_nclass; i++) {
		if (ci.pm_classes[i].pm_class == class) {
			if (nrows)
				*nrows = ci.pm_classes[i].pm_num;
			return (int)ci.pm_classes[i].pm_firstrow;
		}
	}
	return -1;
}

/*
 * The number after @key on the first line of @path that starts with @key
 * and a blank ("ctxt" in /proc/stat, "vmalloc" in a cgroup's memory.stat),
 * or -1 (no such file or line, or no number there).
 */
static inline long long hwpmc_file_key(const char *path, const char *key)
{
	size_t n = strlen(key);
	char line[256], *end;
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, n) || (line[n] != ' ' && line[n] != '\t'))
			continue;
		errno = 0;
		v = strtoll(line + n, &end, 10);
		if (end == line + n || errno)
			v = -1;
		break;
	}
	fclose(f);
	return v;
}

/* "voluntary_ctxt_switches" + "nonvoluntary_ctxt_switches" of a task. */
static inline long long hwpmc_proc_ctxt_switches(const char *statuspath)
{
	char line[256];
	long long v, sum = 0;
	int found = 0;
	FILE *f = fopen(statuspath, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) {
			sum += v;
			found++;
		}
	}
	fclose(f);
	return found == 2 ? sum : -1;
}

/* CPU @cpu's local timer interrupts (/proc/interrupts LOC), or -1. */
static inline long long hwpmc_loc_irqs(int cpu)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[4096];
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		int i;

		while (*p == ' ')
			p++;
		if (strncmp(p, "LOC:", 4))
			continue;
		p += 4;
		for (i = 0; i <= cpu; i++) {
			v = strtoll(p, &end, 10);
			if (end == p) {
				v = -1;
				break;
			}
			p = end;
		}
		break;
	}
	fclose(f);
	return v;
}

/* --- process, thread and measurement helpers (proc/security/stress) --- */
#include <dirent.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/prctl.h>

/* Write or read exactly @len bytes; 0, the errno, or EPIPE at end of file. */
static inline int hwpmc_xwrite(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

static inline int hwpmc_xread(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * A child process with a pipe each way, for handshakes.  In the parent
 * tx/rx talk to the child; in the child (passed to its function) they talk
 * to the parent.
 */
struct hwpmc_child {
	pid_t pid;
	int tx;
	int rx;
};

/*
 * Fork a child that runs fn(child, arg) and _exit()s with its return
 * value (it must not return into the test harness).  0 or the errno.
 */
static inline int hwpmc_child_start(struct hwpmc_child *c,
				    int (*fn)(struct hwpmc_child *, void *),
				    void *arg)
{
	int down[2], up[2];

	if (pipe(down))
		return errno;
	if (pipe(up)) {
		int err = errno;

		close(down[0]);
		close(down[1]);
		return err;
	}
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		int err = errno;

		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		return err;
	}
	if (c->pid == 0) {
		struct hwpmc_child me = { .pid = getpid(), .tx = up[1],
					  .rx = down[0] };

		close(down[1]);
		close(up[0]);
		_exit(fn(&me, arg));
	}
	close(down[0]);
	close(up[1]);
	c->tx = down[1];
	c->rx = up[0];
	return 0;
}

static inline int hwpmc_send_u64(const struct hwpmc_child *c, __u64 v)
{
	return hwpmc_xwrite(c->tx, &v, sizeof(v));
}

static inline int hwpmc_recv_u64(const struct hwpmc_child *c, __u64 *v)
{
	return hwpmc_xread(c->rx, v, sizeof(*v));
}

/*
 * Close the pipes and reap the child.  Returns its exit status, 128 +
 * the signal that killed it, or -1 if it could not be reaped.
 */
static inline int hwpmc_child_wait(struct hwpmc_child *c)
{
	int status;

	if (c->tx >= 0)
		close(c->tx);
	if (c->rx >= 0)
		close(c->rx);
	c->tx = c->rx = -1;
	while (waitpid(c->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/* SIGKILL the child and reap it. */
static inline int hwpmc_child_kill(struct hwpmc_child *c)
{
	kill(c->pid, SIGKILL);
	return hwpmc_child_wait(c);
}

/* @n system calls that do nothing (getppid() is never cached). */
static inline void hwpmc_burn_syscalls(long n)
{
	while (n-- > 0)
		syscall(SYS_getppid);
}

/* Pin the calling thread to @cpu; 0 or the errno. */
static inline int hwpmc_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
}

/*
 * The test flavor's debugfs hwpmc-test/hold_cpu: the writer's CPU spins
 * with interrupts off (no IPI answered, no grace period ends) until 0 is
 * written or the milliseconds written have passed, as a vCPU its
 * hypervisor descheduled.  hold_gp: the same with preemption off and
 * interrupts on (no grace period ends; IPIs are answered).  Either file
 * reads the CPU held + 1 and lets it go on "0".
 */
#define HWPMC_HOLD_CPU	"/sys/kernel/debug/hwpmc-test/hold_cpu"
#define HWPMC_HOLD_GP	"/sys/kernel/debug/hwpmc-test/hold_gp"

/* The CPU held + 1, 0 for none, -1 on error. */
static inline int hwpmc_cpu_held(void)
{
	char buf[32] = "";
	int fd = open(HWPMC_HOLD_CPU, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

static inline __u64 hwpmc_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Burn @ns of the calling thread's CPU time in user mode. */
static inline void hwpmc_burn_cpu_ns(__u64 ns)
{
	static volatile __u64 sink;
	__u64 end = hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns, x = sink;

	while (hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
}

/*
 * The test flavor's debugfs hwpmc-test/hooks: the hooks whose probe the
 * kernel's tracepoints hold now, BIT(enum hwpmc_hook) of kmod/hwpmc.h.
 */
#define HWPMC_HOOKS		"/sys/kernel/debug/hwpmc-test/hooks"
#define HWPMC_HOOKBIT_SYS_ENTER	(1u << 0)
#define HWPMC_HOOKBIT_SWITCH	(1u << 4)
#define HWPMC_HOOKBIT_PROC	(1u << 5)

/* The hooks attached now (a mask) from an open hooks file, or -1. */
static inline long hwpmc_hooks_now(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 0);
}

/*
 * Wait (up to 120 s) until none of the hooks in @mask is attached (an
 * unused hook is detached after a linger): 0, the hooks of @mask still
 * attached, or -1 on error.  @busy: wait in user mode on the calling CPU
 * instead of asleep.  The linger is a global timer: on 6.9 and later
 * the timers of an idle CPU are run by a busy one, so while another CPU
 * is held with interrupts off only a caller that keeps its own CPU busy
 * sees the detach before that CPU is let go.
 */
static inline long hwpmc_hooks_wait_off_how(int fd, long mask, bool busy)
{
	long m = -1;
	int i;

	for (i = 0; i < 12000; i++) {
		m = hwpmc_hooks_now(fd);
		if (m < 0 || !(m & mask))
			return m < 0 ? -1 : 0;
		if (busy)
			hwpmc_burn_cpu_ns(10 * 1000 * 1000);
		else
			usleep(10 * 1000);
	}
	return m & mask;
}

static inline long hwpmc_hooks_wait_off(int fd, long mask)
{
	return hwpmc_hooks_wait_off_how(fd, mask, false);
}

/*
 * Wait (up to 100 s) until CPU @cpu is held: what hwpmc_cpu_held() then
 * says (@cpu + 1 once held).
 */
static inline int hwpmc_cpu_held_wait(int cpu)
{
	int i;

	for (i = 0; i < 100000 && hwpmc_cpu_held() != cpu + 1; i++)
		usleep(1000);
	return hwpmc_cpu_held();
}

/* Write @v to @path (a hold file): "0" lets the held CPU go.  0/errno. */
static inline int hwpmc_hold_write_at(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, v, strlen(v)) < 0)
		err = errno;
	close(fd);
	return err;
}

static inline int hwpmc_hold_write(const char *v)
{
	return hwpmc_hold_write_at(HWPMC_HOLD_CPU, v);
}

/*
 * A child that holds CPU @cpu through the hold file @path for @ms (a
 * string) or until let go, then exits 0 (1: could not pin, 2: the write
 * failed).  Its pid, -1 on error.
 */
static inline pid_t hwpmc_hold_cpu_at(const char *path, int cpu,
				      const char *ms)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (hwpmc_pin_cpu(cpu))
		_exit(1);
	_exit(hwpmc_hold_write_at(path, ms) ? 2 : 0);
}

/* The same with interrupts off (hold_cpu). */
static inline pid_t hwpmc_hold_cpu(int cpu, const char *ms)
{
	return hwpmc_hold_cpu_at(HWPMC_HOLD_CPU, cpu, ms);
}

/*
 * For a test that holds CPU 1: the caller pinned to CPU 0 and the test
 * flavor loaded (hwpmc_release_flavor_load() after).  0, ENODEV (fewer
 * than 2 CPUs), ENOENT (no test flavor), or the errno of the step.
 */
static inline int hwpmc_hold_setup(void)
{
	int err;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return ENODEV;
	err = hwpmc_pin_cpu(0) ?: hwpmc_test_flavor_load("");
	if (err)
		return err;
	/*
	 * A module load leaves work behind: the kernel frees the module's
	 * init sections from a worker after a grace period, flushing every
	 * CPU's TLB by IPI with preemption off.  Sent while CPU 1 is held
	 * with interrupts off, that IPI would stop CPU 0 too, and the whole
	 * machine with it.  Two grace periods (membarrier) see that worker
	 * past its wait, and a moment more past its flush (a second
	 * without membarrier).
	 */
	for (int i = 0; i < 2; i++)
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
			usleep(500 * 1000);
	usleep(200 * 1000);
	return 0;
}

/* voluntary + nonvoluntary context switches from an open status file. */
static inline long long hwpmc_status_switches(int fd)
{
	char buf[4096], *p;
	long long sum = 0;
	ssize_t n;
	int found = 0;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (p = buf; (p = strstr(p, "ctxt_switches:")); p++) {
		sum += strtoll(p + strlen("ctxt_switches:"), NULL, 10);
		found++;
	}
	return found == 2 ? sum : -1;
}

/* Rows of @class on @cpu whose disposition is @disp; -1 on error. */
static inline int hwpmc_count_rows(int fd, __u32 cpu, __u32 class,
				   __u32 disp)
{
	struct pmc_info info[256];
	__u32 n = 256, i;
	int count = 0;

	if (hwpmc_pmcinfo(fd, cpu, info, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (info[i].pm_class == class && info[i].pm_rowdisp == disp)
			count++;
	return count;
}

/*
 * The start of text file @path (a /proc or /sys file: one read), at most
 * @size - 1 bytes, NUL-terminated in @buf: its length, or -1 if it cannot
 * be opened or reads empty.
 */
static inline ssize_t hwpmc_read_text(const char *path, char *buf,
				      size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

/*
 * The switch gate as the test flavor shows it (debugfs, root): @v gets
 * the PMCs that need every switch, those that ask for a lookup of the
 * outgoing and of the incoming task's process, and the online CPUs with
 * a reason of their own.  0, or -1.
 */
#define HWPMC_SWITCH_GATE	"/sys/kernel/debug/hwpmc-test/switch_gate"
static inline int hwpmc_switch_gate_now(long long v[4])
{
	char buf[128];

	if (hwpmc_read_text(HWPMC_SWITCH_GATE, buf, sizeof(buf)) <= 0)
		return -1;
	return sscanf(buf, "%lld %lld %lld %lld", &v[0], &v[1], &v[2],
		      &v[3]) == 4 ? 0 : -1;
}

/* Read an integer sysctl, e.g. "/proc/sys/kernel/hwpmc/..."; -1 on error. */
static inline long hwpmc_sysctl_get(const char *path)
{
	char buf[32];

	if (hwpmc_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* Write an integer sysctl; 0 or the errno. */
static inline int hwpmc_sysctl_set(const char *path, long value)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	snprintf(buf, sizeof(buf), "%ld\n", value);
	if (write(fd, buf, strlen(buf)) < 0)
		err = errno;
	close(fd);
	return err;
}

/*
 * In a forked child: close every inherited file but stdio and @keep (-1
 * ends the list).  A child that keeps another child's pipe end hides that
 * child's exit; one that keeps an open /dev/hwpmc keeps that owner alive.
 */
static inline void hwpmc_close_fds_except(int keep, ...)
{
	int fd, k, keepers[8], n = 0;
	va_list ap;

	va_start(ap, keep);
	for (k = keep; k >= 0 && n < 8; k = va_arg(ap, int))
		keepers[n++] = k;
	va_end(ap);
	for (fd = 3; fd < 1024; fd++) {
		for (k = 0; k < n && keepers[k] != fd; k++)
			;
		if (k == n)
			close(fd);
	}
}

/* Write "0"/"1" to a CPU's online file; returns 0 or the errno. */
static inline int hwpmc_cpu_set_online(int cpu, int online)
{
	char path[96];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, online ? "1" : "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

/*
 * fork() a child that waits until the parent writes a byte to *go (so the
 * parent can attach PMCs first).  Returns 0 in the child once released
 * (it _exit()s if the parent goes away), the pid in the parent, -1 on
 * error.
 */
static inline pid_t hwpmc_fork_gated(int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		close(p[0]);
		return 0;
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/*
 * Become uid/gid 65534 ("nobody", no capabilities, no groups), dumpable
 * again (the uid change cleared it: others may attach).  0 or -1.
 */
static inline int hwpmc_become_nobody(void)
{
	return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	       setresuid(65534, 65534, 65534) ||
	       prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -1 : 0;
}

/*
 * For the tests that hold a CPU while an operation waits: another owner's
 * operations that take the global lock (open(), PMCALLOCATE, PMCRELEASE,
 * close() of /dev/hwpmc), as uid 65534 if @nobody, in a child
 * (hwpmc_child_start()) forked before the CPU is held.  It runs them on
 * the parent's first word, says 1 when they returned, and exits only on a
 * second word (once the CPU is let go: an exit's unmapping may flush TLBs
 * by IPI, which would say nothing of hwpmc).  0, or the failed step.
 */
static inline int hwpmc_other_owner(struct hwpmc_child *me, bool nobody)
{
	__u64 v;
	__u32 id;
	int fd;

	if (nobody && hwpmc_become_nobody())
		return 10;
	if (hwpmc_recv_u64(me, &v))
		return 9;
	fd = hwpmc_open();
	if (fd < 0)
		return 11;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id))
		return 12;
	if (hwpmc_release(fd, id))
		return 13;
	close(fd);
	if (hwpmc_send_u64(me, 1))
		return 14;
	return hwpmc_recv_u64(me, &v) ? 15 : 0;
}

/*
 * Run @fn(@arg) in a child as uid/gid 65534 ("nobody", no capabilities):
 * its return value (0..255), or -1 if the child did not exit normally.
 */
static inline int hwpmc_as_nobody(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(255);
		_exit(fn(arg) & 0xff);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * hwpmc_fork_gated() a child that runs @job(@res[1], @rel[0]) and
 * _exit()s with its value: a job that reports on the pipe @res and waits
 * on @rel.  The parent keeps @res[0] and @rel[1].  The pid in the parent,
 * -1 on error.
 */
static inline pid_t hwpmc_fork_gated_job(int *go, int res[2], int rel[2],
					 int (*job)(int out, int in))
{
	pid_t pid = hwpmc_fork_gated(go);

	if (pid < 0)
		return -1;
	if (!pid) {
		close(res[0]);
		close(rel[1]);
		_exit(job(res[1], rel[0]));
	}
	close(res[1]);
	close(rel[0]);
	return pid;
}

/*
 * The local timer interrupts of CPU 1 while a gated child runs @work() and
 * exits, with PMC @id of @fd attached to it and started (0: none; stopped
 * after); CPU 0's in *@cpu0 unless NULL.  Negative: a step failed (-1
 * fork, -2 attach, -3 start, -4 release, -5 wait, -6 no LOC line).
 */
static inline long long hwpmc_cpu1_irqs_during(int fd, __u32 id,
					       void (*work)(void),
					       long long *cpu0)
{
	long long a, b, a0 = 0, b0 = 0;
	int go, status;
	pid_t pid;

	pid = hwpmc_fork_gated(&go);
	if (pid < 0)
		return -1;
	if (!pid) {
		work();
		_exit(0);
	}
	if (id && hwpmc_attach(fd, id, pid))
		return -2;
	if (id && hwpmc_start(fd, id))
		return -3;
	a = hwpmc_loc_irqs(1);
	if (cpu0)
		a0 = hwpmc_loc_irqs(0);
	if (write(go, "g", 1) != 1)
		return -4;
	if (waitpid(pid, &status, 0) != pid)
		return -5;
	b = hwpmc_loc_irqs(1);
	if (cpu0)
		b0 = hwpmc_loc_irqs(0);
	close(go);
	if (id)
		hwpmc_stop(fd, id);
	if (cpu0)
		*cpu0 = b0 - a0;
	return a < 0 || b < 0 ? -6 : b - a;
}

/* --- x86 hardware classes (hwmodel_test, hwreal_test) --- */
#include <setjmp.h>

/* PMCALLOCATE with pm_config (x86: event-select bits, PMC_X86_CONFIG_*). */
static inline int hwpmc_alloc_cfg(int fd, __u32 class, __u32 event,
				  __u64 config, __u32 mode, __u32 flags,
				  __u32 cpu, __u64 count, __u32 *id)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = cpu, .pm_class = class, .pm_event = event,
		.pm_mode = mode, .pm_flags = flags, .pm_count = count,
		.pm_config = config,
	};
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a);

	if (!err && id)
		*id = a.pm_pmcid;
	return err;
}

static inline int hwpmc_cpuinfo(int fd, struct pmc_op_getcpuinfo *ci)
{
	memset(ci, 0, sizeof(*ci));
	return hwpmc_ioctl_err(fd, HWPMC_IOC_GETCPUINFO, ci);
}

/* The GETCPUINFO entry of @class, or NULL if the machine has none. */
static inline const struct pmc_classinfo *
hwpmc_classinfo(const struct pmc_op_getcpuinfo *ci, __u32 class)
{
	__u32 i;

	for (i = 0; i < ci->pm_nclass && i < PMC_CLASS_TABLE_SIZE; i++)
		if (ci->pm_classes[i].pm_class == class)
			return &ci->pm_classes[i];
	return NULL;
}

/* PMCGETMSR: the RDPMC index of a process PMC; 0 or the errno. */
static inline int hwpmc_getmsr(int fd, __u32 id, __u32 *index)
{
	struct pmc_op_getmsr g = { .pm_pmcid = id };
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCGETMSR, &g);

	if (!err && index)
		*index = g.pm_msr;
	return err;
}

static inline int hwpmc_driverstats(int fd, struct pmc_op_getdriverstats *s)
{
	memset(s, 0, sizeof(*s));
	return hwpmc_ioctl_err(fd, HWPMC_IOC_GETDRIVERSTATS, s);
}

static sigjmp_buf hwpmc_rdpmc_env;

static inline void hwpmc_rdpmc_signal(int sig)
{
	siglongjmp(hwpmc_rdpmc_env, sig);
}

/*
 * Execute RDPMC with ECX = @index in this thread.  Returns 0 with the
 * value in *@value, or the signal it raised: SIGSEGV (#GP: CR4.PCE clear,
 * RDPMC not granted, or a bad index) or SIGILL (#UD: QEMU's TCG emulates
 * no RDPMC, so a granted RDPMC faults this way in the guest).
 */
static inline int hwpmc_rdpmc_probe(__u32 index, __u64 *value)
{
	struct sigaction sa, old_ill, old_segv;
	volatile int sig;
	__u32 lo, hi;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = hwpmc_rdpmc_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old_ill);
	sigaction(SIGSEGV, &sa, &old_segv);
	sig = sigsetjmp(hwpmc_rdpmc_env, 1);
	if (!sig) {
		__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(index));
		*value = (__u64)hi << 32 | lo;
	}
	sigaction(SIGILL, &old_ill, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return sig;
}

/*
 * User namespaces from the rig.  hwpmc_write_str(): write @str to the file
 * at @path; 0 or the errno (uid_map, gid_map, setgroups).
 */
#include <sys/stat.h>

static inline int hwpmc_write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, str, strlen(str)) != (ssize_t)strlen(str))
		err = errno;
	close(fd);
	return err;
}

/*
 * A process in a chroot may not create user namespaces (EPERM), and the
 * test rig runs everything chrooted into the host's file system, while its
 * init stays in the initramfs (with /dev and /proc mounted).  Step out to
 * init's root when it differs from ours; elsewhere this does nothing.
 * 0 or the errno.
 */
static inline int hwpmc_leave_chroot(void)
{
	struct stat mine, init;

	if (stat("/", &mine) || stat("/proc/1/root/", &init))
		return errno;
	if (mine.st_dev == init.st_dev && mine.st_ino == init.st_ino)
		return 0;
	if (chdir("/proc/1/root/") || chroot(".") || chdir("/"))
		return errno;
	return 0;
}


/*
 * The state letter of thread @tid of process @pid ('?' if unknown), from
 * its status file: reading its stat (or wchan, stack, syscall) takes the
 * process's exec_update_lock, and so waits behind an exec that waits for
 * that lock.
 */
static inline char hwpmc_thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid,
		 (int)tid);
	if (hwpmc_read_text(path, buf, sizeof(buf)) < 0)
		return '?';
	p = strstr(buf, "\nState:\t");
	return p && p[8] ? p[8] : '?';
}

/*
 * The system call thread @tid of @pid is in, from its
 * /proc/PID/task/TID/syscall: its number, or -1 (the file's own) for a
 * thread blocked outside one; HWPMC_RUNNING for a thread that is runnable
 * or has not yet switched out of the sleep it entered (the file waits for
 * a sleeping one to be off its CPU before it answers anything else);
 * HWPMC_UNREADABLE if the file cannot be read.  Reading it takes @pid's
 * exec_update_lock: not for a process whose exec may wait for that lock
 * (see hwpmc_thread_state()).
 */
#define HWPMC_RUNNING		(-2L)
#define HWPMC_UNREADABLE	(-3L)

static inline long hwpmc_thread_syscall(pid_t pid, pid_t tid)
{
	char path[64], line[32];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
		 (int)tid);
	if (hwpmc_read_text(path, line, sizeof(line)) < 0)
		return HWPMC_UNREADABLE;
	if (!strncmp(line, "running", 7))
		return HWPMC_RUNNING;
	return strtol(line, NULL, 10);
}

/* Is every thread of @pid off its CPU, blocked?  1: yes; 0: not yet; -1: error. */
static inline int hwpmc_job_blocked(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int rc = 1;
	long nr;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (rc == 1 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		nr = hwpmc_thread_syscall(pid, atoi(de->d_name));
		if (nr == HWPMC_RUNNING)
			rc = 0;
		else if (nr == HWPMC_UNREADABLE)
			rc = -1;
	}
	closedir(d);
	return rc;
}

/* Wait (up to 10 s) until every thread of @pid is blocked: 0, or -1. */
static inline int hwpmc_wait_job_blocked(pid_t pid)
{
	int i, b = 0;

	for (i = 0; i < 10000 && !b; i++) {
		b = hwpmc_job_blocked(pid);
		if (!b)
			usleep(1000);
	}
	return b == 1 ? 0 : -1;
}

/*
 * Wait (up to @ms of CLOCK_MONOTONIC) until @look(@arg) holds on @times
 * looks in a row, @period_us apart: a steady state, not one passing on the
 * way (a page fault, a lock taken for a moment).  0 if it does, -1 if not
 * by then or if @look answers < 0 (an error).
 */
static inline int hwpmc_wait_steady(int (*look)(void *arg), void *arg,
				    int times, int period_us, int ms)
{
	__u64 end = hwpmc_clock_ns(CLOCK_MONOTONIC) + ms * 1000000ULL;
	int seen = 0, r;

	while (seen < times) {
		if (hwpmc_clock_ns(CLOCK_MONOTONIC) >= end)
			return -1;
		r = look(arg);
		if (r < 0)
			return -1;
		seen = r ? seen + 1 : 0;
		usleep(period_us);
	}
	return 0;
}

struct hwpmc_thread_look {
	pid_t pid, tid;
	long nr;
};

static inline int hwpmc_look_blocked(void *arg)
{
	const struct hwpmc_thread_look *t = arg;

	return hwpmc_thread_state(t->pid, t->tid) == 'D';
}

/*
 * Wait (up to @ms) until the thread sleeps uninterruptibly and stays so
 * for 300 ms (not a passing page fault or lock on its way).  0 if it does.
 */
static inline int hwpmc_wait_blocked(pid_t pid, pid_t tid, int ms)
{
	struct hwpmc_thread_look t = { pid, tid, 0 };

	return hwpmc_wait_steady(hwpmc_look_blocked, &t, 30, 10000, ms);
}

static inline int hwpmc_look_in_syscall(void *arg)
{
	const struct hwpmc_thread_look *t = arg;
	long nr = hwpmc_thread_syscall(t->pid, t->tid);

	return nr == HWPMC_UNREADABLE ? -1 : nr == t->nr;
}

/*
 * Wait (up to @ms) until thread @tid of @pid is blocked in system call
 * @nr and stays so for 300 ms (a wait for a lock, not a passing read of
 * its binary on the way).  0 if it does, -1 if not by then.  Takes @pid's
 * exec_update_lock (hwpmc_thread_syscall()).
 */
static inline int hwpmc_wait_in_syscall(pid_t pid, pid_t tid, long nr, int ms)
{
	struct hwpmc_thread_look t = { pid, tid, nr };

	return hwpmc_wait_steady(hwpmc_look_in_syscall, &t, 30, 10000, ms);
}

/*
 * Process @pid's CPU time as the scheduler accounts it (clock_getcpuclockid():
 * the sum of its threads' se.sum_exec_runtime, those gone included, and a
 * running thread's time up to its last tick or switch; /proc/PID/schedstat
 * would need CONFIG_SCHED_INFO, which the debug kernel lacks), ns; -1 on
 * error.
 */
static inline long long hwpmc_proc_cputime(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return -1;
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Run @fn(@arg) in a child; its exit code (fn's value & 0xff), or -1. */
static inline int hwpmc_run_in_child(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg) & 0xff);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

#endif
