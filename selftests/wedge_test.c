// SPDX-License-Identifier: GPL-2.0
/*
 * No wait a user controls happens under a global lock: while one owner's
 * PMCATTACH waits for a target that its user has stalled, every other
 * owner's PMCALLOCATE, PMCSTART, PMCRW and close() go on, and the stalled
 * PMCATTACH ends on SIGKILL.
 *
 * The stall, built from user space only: a perf event on the target T is
 * read into a buffer whose page userfaultfd holds back, so perf_read()
 * sleeps holding T's perf context mutex; a second perf_event_open(T) then
 * holds T's exec_update_lock for reading while it waits for that mutex;
 * T execs, and its exec waits for exec_update_lock for writing.  Any new
 * reader of T's exec_update_lock (PMCATTACH's check) now waits until the
 * userfaultfd page is given, as long as the user likes.
 *
 * Runs the attacher (and T) as root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <poll.h>
#include <pthread.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>

#define BOUND_MS	2000

static int perf_open(pid_t pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return syscall(SYS_perf_event_open, &attr, pid, -1, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

static int become(uid_t uid)
{
	if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid)))
		return 1;
	return prctl(PR_SET_DUMPABLE, 1) ? 1 : 0;
}

/* Wait up to @ms for @pid; 1 if it exited (status in *status). */
static int wait_bounded(pid_t pid, int ms, int *status)
{
	int i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		usleep(10000);
	}
	return 0;
}

struct reader {
	int fd;
	void *buf;
	ssize_t n;
};

static void *read_thread(void *arg)
{
	struct reader *r = arg;

	r->n = read(r->fd, r->buf, sizeof(__u64));
	return NULL;
}

struct opener {
	pid_t pid;
	pid_t tid;	/* the opening thread's, once it runs */
	int fd;
};

static void *open_thread(void *arg)
{
	struct opener *o = arg;

	__atomic_store_n(&o->tid, gettid(), __ATOMIC_RELEASE);
	o->fd = perf_open(o->pid);
	return NULL;
}

/* A fresh owner: allocate, start (on itself), read, close. */
static int other_owner(void)
{
	__u32 id;
	__u64 v;
	int fd = hwpmc_open();

	if (fd < 0)
		return 10;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id))
		return 11;
	if (hwpmc_start(fd, id))
		return 12;
	if (hwpmc_read(fd, id, &v))
		return 13;
	return close(fd) ? 14 : 0;
}

static void stalled_attach(struct __test_metadata *_metadata, uid_t uid)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zp = { 0 };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg msg;
	struct reader r = { 0 };
	struct opener o = { 0 };
	pthread_t rth, oth;
	int go[2], ready[2], uffd, status, done, i;
	pid_t t, attacher, other;
	char c = 0;

	/* T: waits, then execs (and its exec waits). */
	ASSERT_EQ(0, pipe(go));
	t = fork();
	ASSERT_LE(0, t);
	if (!t) {
		close(go[1]);
		if (become(uid) || read(go[0], &c, 1) != 1)
			_exit(20);
		execl("/bin/true", "true", (char *)NULL);
		_exit(21);
	}
	close(go[0]);
	/* perf_read() of T's event, stalled in its copy-out. */
	r.fd = perf_open(t);
	ASSERT_LE(0, r.fd) TH_LOG("perf_event_open: %s", strerror(errno));
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	r.buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.buf);
	reg.range.start = (uintptr_t)r.buf;
	reg.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, pthread_create(&rth, NULL, read_thread, &r));
	pfd.fd = uffd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	/* perf_event_open(T): holds exec_update_lock, waits for the mutex. */
	o.pid = t;
	ASSERT_EQ(0, pthread_create(&oth, NULL, open_thread, &o));
	for (i = 0; i < 10000 && !__atomic_load_n(&o.tid, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	ASSERT_EQ(0, hwpmc_wait_in_syscall(getpid(), o.tid,
					   SYS_perf_event_open, 5000))
		TH_LOG("perf_event_open(T) did not block");
	/* T execs: waits for exec_update_lock for writing. */
	ASSERT_EQ(1, write(go[1], &c, 1));
	/* Its state (from its status file, which takes none of T's locks). */
	ASSERT_EQ(0, hwpmc_wait_blocked(t, t, 5000))
		TH_LOG("T's exec did not block");

	/* The attacher: stuck in PMCATTACH to T. */
	ASSERT_EQ(0, pipe(ready));
	attacher = fork();
	ASSERT_LE(0, attacher);
	if (!attacher) {
		int fd;
		__u32 id;

		close(ready[0]);
		if (become(uid))
			_exit(30);
		fd = hwpmc_open();
		if (fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id))
			_exit(31);
		if (write(ready[1], &c, 1) != 1)
			_exit(32);
		_exit(hwpmc_attach(fd, id, t) ? 33 : 34);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	done = wait_bounded(attacher, 500, &status);
	EXPECT_FALSE(done) TH_LOG("the stall did not happen (attacher exited %d)",
				  WEXITSTATUS(status));

	/* Meanwhile another owner of the same user goes on. */
	other = fork();
	ASSERT_LE(0, other);
	if (!other)
		_exit(become(uid) ? 40 : other_owner());
	done = wait_bounded(other, BOUND_MS, &status);
	EXPECT_TRUE(done) TH_LOG("another owner's ioctls or close waited for the stalled PMCATTACH");
	if (done)
		EXPECT_EQ(0, WEXITSTATUS(status));

	/* The stalled PMCATTACH is killable, and its close completes. */
	if (!wait_bounded(attacher, 0, &status)) {
		kill(attacher, SIGKILL);
		EXPECT_TRUE(wait_bounded(attacher, BOUND_MS, &status))
			TH_LOG("SIGKILL did not end the stalled PMCATTACH");
	}

	/* Let everything go. */
	zp.range.start = (uintptr_t)r.buf;
	zp.range.len = page;
	ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
	pthread_join(rth, NULL);
	pthread_join(oth, NULL);
	EXPECT_EQ(sizeof(__u64), r.n);
	if (o.fd >= 0)
		close(o.fd);
	close(r.fd);
	close(go[1]);
	if (!done)
		waitpid(other, &status, 0);
	waitpid(attacher, &status, 0);
	EXPECT_EQ(t, waitpid(t, &status, 0));
	close(uffd);
	munmap(r.buf, page);
}

TEST(stalled_attach_blocks_nobody_root)
{
	if (geteuid())
		SKIP(return, "needs root (userfaultfd of kernel copies)");
	stalled_attach(_metadata, 0);
}

TEST(stalled_attach_blocks_nobody_uid65534)
{
	if (geteuid())
		SKIP(return, "needs root (userfaultfd of kernel copies)");
	stalled_attach(_metadata, 65534);
}

/*
 * A long walk yields: as uid 65534, PMC_F_DESCENDANTS on a process with
 * NDESC children checks each child as a PMCATTACH would (the LSM's word
 * included: a procfs lookup each) and reschedules as it goes, so the
 * guest's soft-lockup and RCU-stall detectors (which fail the run) stay
 * quiet; every child is attached.
 */
#define NDESC	1000

static int detach_children(int fd, __u32 id, pid_t parent)
{
	char cmd[128];
	int kid, n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "pgrep -P %d", parent);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%d", &kid) == 1)
		n += hwpmc_detach(fd, id, kid) == 0;
	pclose(f);
	return n;
}

/* A fixture only for its time limit (a plain TEST() has 30 s). */
FIXTURE(wide) {
	int dummy;
};

FIXTURE_SETUP(wide)
{
}

FIXTURE_TEARDOWN(wide)
{
}

/* 300 s: the debug kernel takes over 30 s to fork and attach them all. */
TEST_F_TIMEOUT(wide, many_descendants_as_uid65534, 300)
{
	int go[2], fd, i, attached = 0, status;
	pid_t parent;
	__u32 id;
	char c;

	if (geteuid())
		SKIP(return, "needs root (to become 65534)");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, become(65534));
	parent = fork();
	ASSERT_LE(0, parent);
	if (!parent) {
		close(go[1]);
		for (i = 0; i < NDESC; i++) {
			pid_t kid = fork();

			if (kid < 0)
				_exit(1);
			if (!kid) {
				/* Ends when the parent's pipe closes. */
				if (read(go[0], &c, 1) < 0)
					_exit(2);
				_exit(0);
			}
		}
		if (read(go[0], &c, 1) < 0)
			_exit(3);
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	/* All forked: its children are the processes of uid 65534 but us. */
	for (i = 0; i < 600; i++) {
		char cmd[128];
		FILE *f;
		int n = 0;

		snprintf(cmd, sizeof(cmd), "pgrep -c -P %d", parent);
		f = popen(cmd, "r");
		if (f) {
			if (fscanf(f, "%d", &n) != 1)
				n = 0;
			pclose(f);
		}
		if (n >= NDESC)
			break;
		usleep(100000);
	}
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, PMC_F_DESCENDANTS,
				   &id));
	ASSERT_EQ(0, hwpmc_attach(fd, id, parent));
	/* Each child: detached (0) means it was attached. */
	attached = detach_children(fd, id, parent);
	EXPECT_EQ(NDESC, attached);
	close(fd);
	close(go[1]);
	EXPECT_EQ(parent, waitpid(parent, &status, 0));
}

TEST_HARNESS_MAIN
