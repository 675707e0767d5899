// SPDX-License-Identifier: GPL-2.0
/*
 * An owner ends with the process that opened /dev/hwpmc: no reference loop
 * through its log file keeps it, its PMCs, a log writer or the module
 * alive once every process that could use it is gone.
 *
 * The loop: the log is configured on one end of a unix socketpair, and the
 * /dev/hwpmc descriptor is passed with SCM_RIGHTS into that same end's
 * receive queue; then the process closes everything and exits.  The log
 * holds the socket, the socket's queue holds the owner's file.  The
 * opener's exit must release the PMCs and close the log, which lets the
 * socket, then the owner's file and the module reference go.
 *
 * Also: what an open inherited by a child that outlives its opener can
 * still do (nothing that needs the owner: ESRCH).
 *
 * Each case runs as root and as the unprivileged user 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define NOBODY	65534

static long long now_ms(void)
{
	return hwpmc_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

/* /sys/module/hwpmc/refcnt, or -1. */
static long module_refcnt(void)
{
	return hwpmc_sysctl_get("/sys/module/hwpmc/refcnt");
}

/* Threads whose name starts with @prefix (log writers: "hwpmc-log"). */
static int count_threads(const char *prefix)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], name[64] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, prefix, strlen(prefix)))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* SOFT rows of CPU 0 held by process-scope PMCs, seen by a new owner. */
static int soft_thread_rows(void)
{
	int fd = hwpmc_open(), n;

	if (fd < 0)
		return -1;
	n = hwpmc_count_rows(fd, 0, PMC_CLASS_SOFT, PMC_DISP_THREAD);
	close(fd);
	return n;
}

static int become(uid_t uid)
{
	if (!uid)
		return 0;
	return setresgid(uid, uid, uid) || setresuid(uid, uid, uid);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : errno;
}

/*
 * The loop, in a child: a running process PMC that logs its context
 * switches, the log on sv[0], the owner's descriptor queued in sv[0].
 * Returns 0 or a step number.
 */
static int make_loop(uid_t uid)
{
	int fd, sv[2];
	__u32 id;

	hwpmc_close_fds_except(-1);
	if (become(uid))
		return 10;
	fd = hwpmc_open();
	if (fd < 0)
		return 11;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 12;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, PMC_F_LOG_PROCCSW, &id))
		return 13;
	if (hwpmc_attach(fd, id, 0))
		return 14;
	if (hwpmc_configure_log(fd, sv[0]))
		return 15;
	if (hwpmc_start(fd, id))
		return 16;
	/* sv[1] -> sv[0]: the descriptor waits in the log socket's queue. */
	if (send_fd(sv[1], fd))
		return 17;
	close(fd);
	close(sv[0]);
	close(sv[1]);
	return 0;
}

FIXTURE(owner) {
	long refcnt0;
	int rows0;
};

FIXTURE_VARIANT(owner) {
	uid_t uid;
};

FIXTURE_VARIANT_ADD(owner, root) {
	.uid = 0,
};

FIXTURE_VARIANT_ADD(owner, nobody) {
	.uid = NOBODY,
};

FIXTURE_SETUP(owner)
{
	long long end = now_ms() + 10000;

	/*
	 * The owners of earlier tests (20,000 in the memcg one) are shut
	 * down after their close, in process context: wait until nothing
	 * holds the module, so that their last references do not go
	 * inside this test's window (seen once: 1 at setup, 0 at the end).
	 */
	while ((module_refcnt() > 0 || count_threads("hwpmc-log") > 0) &&
	       now_ms() < end)
		usleep(50000);
	self->refcnt0 = module_refcnt();
	ASSERT_LE(0, self->refcnt0) TH_LOG("hwpmc is not loaded");
	self->rows0 = soft_thread_rows();
	ASSERT_LE(0, self->rows0);
}

FIXTURE_TEARDOWN(owner)
{
}

/*
 * Wait (up to @ms) until the module's reference count, the SOFT rows in
 * use and the log writer threads are back where they were.
 */
static int wait_released(long refcnt0, int rows0, int ms, long *refcnt,
			 int *rows, int *writers)
{
	long long end = now_ms() + ms;

	for (;;) {
		*refcnt = module_refcnt();
		*rows = soft_thread_rows();
		*writers = count_threads("hwpmc-log");
		if (*refcnt == refcnt0 && *rows == rows0 && !*writers)
			return 0;
		if (now_ms() >= end)
			return -1;
		usleep(50000);
	}
}

TEST_F(owner, scm_rights_loop_ends_with_the_opener)
{
	int status, rows, writers;
	long refcnt;
	pid_t child;

	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(make_loop(variant->uid));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("loop setup failed at step %d",
						 WEXITSTATUS(status));
	/*
	 * Nobody can reach that owner any more: its PMC, its log writer
	 * and the module reference of its file must all go.
	 */
	EXPECT_EQ(0, wait_released(self->refcnt0, self->rows0, 10000, &refcnt,
				   &rows, &writers))
		TH_LOG("module refcnt %ld (was %ld), SOFT rows in use %d (were %d), log writer threads %d",
		       refcnt, self->refcnt0, rows, self->rows0, writers);
	/* And the module could be unloaded: nothing holds it. */
	EXPECT_EQ(self->refcnt0, module_refcnt());
}

/*
 * An open inherited by a child that outlives the opener: the opener's
 * exit released the PMCs (their counts with them) and the log; the child
 * gets ESRCH for the PMC, for PMCALLOCATE and for CONFIGURELOG, EINVAL
 * for the log operations (no log), and the operations that need no owner
 * still work.  Exit codes of the child: 0 or a step number.
 */
static int orphan_child(int fd, __u32 id, int gate, int rows0)
{
	struct pmc_op_getmoduleversion v = { 0 };
	long long end = now_ms() + 10000;
	int p[2], err;
	__u64 value;
	char c;

	/* EOF: the opener is gone. */
	if (read(gate, &c, 1) != 0)
		return 20;
	/* Its owner is shut down after its exit, in process context. */
	while ((err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, NULL)) != ESRCH) {
		if (err || now_ms() >= end)
			return 21;
		usleep(20000);
	}
	if (hwpmc_read(fd, id, &value) != ESRCH)
		return 22;
	if (pipe(p))
		return 23;
	if (hwpmc_configure_log(fd, p[1]) != ESRCH)
		return 24;
	if (hwpmc_flushlog(fd) != EINVAL)
		return 25;
	if (hwpmc_ioctl_err(fd, HWPMC_IOC_GETMODULEVERSION, &v) ||
	    v.pm_version != HWPMC_VERSION)
		return 26;
	if (hwpmc_count_rows(fd, 0, PMC_CLASS_SOFT, PMC_DISP_THREAD) != rows0)
		return 27;
	return 0;
}

TEST_F(owner, inherited_open_outliving_its_opener_is_empty)
{
	int res[2], status;
	pid_t opener;
	char code = -1;

	ASSERT_EQ(0, pipe(res));
	fflush(stdout);
	opener = fork();
	ASSERT_LE(0, opener);
	if (!opener) {
		int fd, gate[2];
		__u32 id;
		pid_t orphan;

		close(res[0]);
		if (become(variant->uid))
			_exit(10);
		fd = hwpmc_open();
		if (fd < 0 || pipe(gate))
			_exit(11);
		if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id) ||
		    hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id))
			_exit(12);
		orphan = fork();
		if (orphan < 0)
			_exit(13);
		if (!orphan) {
			close(gate[1]);
			code = orphan_child(fd, id, gate[0], self->rows0);
			if (write(res[1], &code, 1) != 1)
				_exit(1);
			_exit(0);
		}
		_exit(0);	/* the opener exits; gate[1] closes with it */
	}
	close(res[1]);
	ASSERT_EQ(opener, waitpid(opener, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("opener failed at step %d",
						 WEXITSTATUS(status));
	ASSERT_EQ(1, read(res[0], &code, 1));
	EXPECT_EQ(0, code) TH_LOG("the orphan's check %d failed", code);
	close(res[0]);
}

/* --- memory: charged to the opener's memory cgroup --------------------- */

#define CGROOT	"/tmp/hwpmc-logowner-cg"
#define NOPENS	20000

static long cg_current(void)
{
	return hwpmc_sysctl_get(CGROOT "/t/memory.current");
}

/* Bytes charged for NOPENS opens of @path, as nobody; -1 on error. */
static long charge_of_opens(const char *path)
{
	static int fds[NOPENS];
	long m0, m1;
	int i;

	m0 = cg_current();
	for (i = 0; i < NOPENS; i++) {
		fds[i] = open(path, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			return -1;
	}
	m1 = cg_current();
	for (i = 0; i < NOPENS; i++)
		close(fds[i]);
	return m0 < 0 || m1 < 0 ? -1 : m1 - m0;
}

#define MAX_OWNERS "/proc/sys/kernel/hwpmc/max_owners_per_user"

static int memcg_child(int out)
{
	struct rlimit nofile = { NOPENS + 64, NOPENS + 64 };
	char pid[32];
	long v[3];
	int fd;

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	fd = open(CGROOT "/t/cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		return 10;
	close(fd);
	if (setrlimit(RLIMIT_NOFILE, &nofile) || become(NOBODY))
		return 11;
	/* Warm up: the descriptor table grows once, for both. */
	v[0] = charge_of_opens("/dev/null");
	v[1] = charge_of_opens("/dev/null");
	v[2] = charge_of_opens(HWPMC_DEV);
	if (v[0] < 0 || v[1] < 0 || v[2] < 0)
		return 12;
	return hwpmc_xwrite(out, v, sizeof(v)) ? 13 : 0;
}

/*
 * An owner's memory is the caller's: NOPENS opens of /dev/hwpmc cost the
 * caller's memory cgroup what opening /dev/null costs (the struct file
 * and descriptor) plus each owner's own structure.
 */
/* 60,000 opens and closes: over 30 s under KASAN and lockdep (TCG). */
FIXTURE(memcg) {
	int unused;
};

FIXTURE_SETUP(memcg)
{
}

FIXTURE_TEARDOWN(memcg)
{
}

TEST_F_TIMEOUT(memcg, owner_memory_is_charged_to_the_openers_memcg, 300)
{
	int res[2], status, mounted;
	long v[3], max_owners;
	pid_t child;

	if (geteuid())
		SKIP(return, "needs root to make a memory cgroup");
	mkdir(CGROOT, 0755);
	mounted = !mount("none", CGROOT, "cgroup2", 0, NULL);
	if (!mounted || hwpmc_xwrite(open(CGROOT "/cgroup.subtree_control",
					  O_WRONLY | O_CLOEXEC), "+memory", 7)) {
		if (mounted)
			umount(CGROOT);
		rmdir(CGROOT);
		SKIP(return, "no cgroup2 memory controller here");
	}
	ASSERT_EQ(0, mkdir(CGROOT "/t", 0755));
	ASSERT_EQ(0, pipe(res));
	/* The per-user cap on owners would stop the opens first. */
	max_owners = hwpmc_sysctl_get(MAX_OWNERS);
	if (max_owners >= 0)
		ASSERT_EQ(0, hwpmc_sysctl_set(MAX_OWNERS, NOPENS + 16));
	fflush(stdout);
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(res[0]);
		_exit(memcg_child(res[1]));
	}
	close(res[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	if (max_owners >= 0)
		hwpmc_sysctl_set(MAX_OWNERS, max_owners);
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, hwpmc_xread(res[0], v, sizeof(v)));
	close(res[0]);
	/* The owners are freed after RCU: the cgroup may take a moment. */
	for (int i = 0; i < 50 && rmdir(CGROOT "/t"); i++)
		usleep(100000);
	umount(CGROOT);
	rmdir(CGROOT);
	TH_LOG("%d opens: /dev/null %ld then %ld bytes, /dev/hwpmc %ld bytes",
	       NOPENS, v[0], v[1], v[2]);
	/* An owner is some hundred bytes: at least 128 more per open. */
	EXPECT_LE(v[1] + 128L * NOPENS, v[2]);
}

TEST_HARNESS_MAIN
