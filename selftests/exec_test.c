// SPDX-License-Identifier: GPL-2.0
/*
 * A process that execs a set-id program stops being watched by an owner
 * that could only watch it as its debugger (FreeBSD's pmc_process_exec
 * does the same).  An unprivileged owner counts the system calls of its
 * child while the child runs mount(8): once a plain copy (counted in full)
 * and once the real, set-uid mount (only the exec itself is counted).
 * With the test flavor of the module, a set-uid exec raced into PMCATTACH,
 * between its permission check and its link, is not counted either.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SETUID_MOUNT "/usr/bin/mount"
#define PLAIN_MOUNT "/tmp/hwpmc-exec-test-mount"
#define SETUID_SU "/usr/bin/su"
#define WINDOW_MS 1000

/* As uid/gid 65534: count SYSCALL.ENTER of a child that execs @prog. */
static long long count_exec(const char *prog)
{
	int go[2], fd, status;
	__u32 id;
	__u64 v = 0;
	pid_t child;
	char c = 0;

	if (pipe(go))
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		int null = open("/dev/null", O_WRONLY);

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(20);
		dup2(null, 1);
		execl(prog, prog, (char *)NULL);
		_exit(21);
	}
	close(go[0]);
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id) ||
	    hwpmc_attach(fd, id, child) || hwpmc_start(fd, id))
		return -2;
	if (write(go[1], &c, 1) != 1)
		return -3;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -4;
	if (hwpmc_read(fd, id, &v))
		return -5;
	close(fd);
	return (long long)v;
}

TEST(setid_exec_detaches_unprivileged_owner)
{
	struct stat st;
	pid_t pid;
	int status, p[2];
	long long counts[2];

	if (stat(SETUID_MOUNT, &st) || !(st.st_mode & S_ISUID))
		SKIP(return, "%s is not set-uid here", SETUID_MOUNT);
	ASSERT_EQ(0, system("cp " SETUID_MOUNT " " PLAIN_MOUNT " && chmod 755 " PLAIN_MOUNT));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		/* Changing uid made us non-dumpable; as a real user we are. */
		if (prctl(PR_SET_DUMPABLE, 1))
			_exit(3);
		counts[0] = count_exec(PLAIN_MOUNT);
		counts[1] = count_exec(SETUID_MOUNT);
		if (write(p[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ((ssize_t)sizeof(counts), read(p[0], counts, sizeof(counts)));
	unlink(PLAIN_MOUNT);
	TH_LOG("plain mount: %lld syscalls counted, set-uid mount: %lld",
	       counts[0], counts[1]);
	ASSERT_GT(counts[0], 20);	/* mount(8) makes many system calls */
	ASSERT_GE(counts[1], 1);	/* the execve itself */
	/* Only what the child did up to its exec: a handful of calls. */
	EXPECT_LT(counts[1], 16);
	EXPECT_LT(counts[1] * 8, counts[0]);
}

struct attach_call {
	int fd;
	__u32 id;
	pid_t pid;
	pid_t tid;	/* the attaching thread's, once it runs */
	int err;
};

static void *attach_thread(void *arg)
{
	struct attach_call *a = arg;

	__atomic_store_n(&a->tid, gettid(), __ATOMIC_RELEASE);
	a->err = hwpmc_attach(a->fd, a->id, a->pid);
	return NULL;
}

/* Is the attaching thread asleep uninterruptibly (hwpmc_wait_steady())? */
static int attacher_in_window(void *arg)
{
	struct attach_call *a = arg;
	pid_t tid = __atomic_load_n(&a->tid, __ATOMIC_ACQUIRE);

	return tid && hwpmc_thread_state(getpid(), tid) == 'D';
}

/*
 * As uid/gid 65534: PMCATTACH to a child that, while the attach sits
 * between its permission check and its link (the test module's window),
 * execs set-uid su, which then waits for a password on a pipe.  Once the
 * attach is done, the PMC runs while su checks the password it is given.
 * Returns what the PMC counted (negative: the failing step); *attach_err
 * gets PMCATTACH's result.
 */
static long long race_setid_exec(int *attach_err)
{
	struct attach_call a = { 0 };
	int go[2], pw[2], status;
	pthread_t th;
	__u64 v = 0;
	pid_t child;
	char c = 0;

	if (pipe(go) || pipe(pw))
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		int null = open("/dev/null", O_WRONLY);

		close(go[1]);
		close(pw[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(20);
		dup2(pw[0], 0);
		dup2(null, 1);
		dup2(null, 2);
		execl(SETUID_SU, "su", "-c", "true", "root", (char *)NULL);
		_exit(21);
	}
	close(go[0]);
	close(pw[0]);
	a.fd = hwpmc_open();
	a.pid = child;
	if (a.fd < 0 || hwpmc_soft_tc(a.fd, PMC_SOFT_SYSCALL_ENTER, 0, &a.id))
		return -2;
	if (pthread_create(&th, NULL, attach_thread, &a))
		return -3;
	/*
	 * The attach has checked the child (still ours) and waits in the
	 * window (msleep(): 'D', seen on 3 looks in a row, not a passing
	 * lock: on PREEMPT_RT a spinlock wait shows 'D' too): exec.  Looked
	 * for during a fifth of the window at most, then the exec goes
	 * anyway.
	 */
	hwpmc_wait_steady(attacher_in_window, &a, 3, 2000, WINDOW_MS / 5);
	if (write(go[1], &c, 1) != 1)
		return -4;
	pthread_join(th, NULL);
	*attach_err = a.err;
	/* Detached by the exec hook: ESRCH; else it counts su from here. */
	hwpmc_start(a.fd, a.id);
	if (write(pw[1], "x\n", 2) != 2)
		return -5;
	close(pw[1]);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -6;
	if (hwpmc_read(a.fd, a.id, &v))
		return -7;
	close(a.fd);
	return (long long)v;
}

FIXTURE(window) {
	int loaded;
};

FIXTURE_SETUP(window)
{
	char param[64];

	ASSERT_EQ(0, hwpmc_module_unload_wait()) TH_LOG("is /dev/hwpmc held open?");
	snprintf(param, sizeof(param), "test_attach_delay_ms=%d", WINDOW_MS);
	ASSERT_EQ(0, hwpmc_module_load("test/", param));
	self->loaded = 1;
}

FIXTURE_TEARDOWN(window)
{
	hwpmc_module_unload_wait();
	hwpmc_module_load("", "");	/* back to the release module, as the rig loaded it */
}

/*
 * A set-id exec racing with PMCATTACH: the check and the link happen under
 * the target's exec_update_lock, so the exec waits for the link and its
 * hook then drops the unprivileged owner's target.  Without that, the
 * exec would pass unseen between them and the owner would count su.
 */
TEST_F(window, setid_exec_during_attach_is_not_counted)
{
	struct stat st;
	long long r[2];
	pid_t pid;
	int status, p[2];

	if (stat(SETUID_SU, &st) || !(st.st_mode & S_ISUID))
		SKIP(return, "%s is not set-uid here", SETUID_SU);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int err = -1;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		if (prctl(PR_SET_DUMPABLE, 1))
			_exit(3);
		r[0] = race_setid_exec(&err);
		r[1] = err;
		if (write(p[1], r, sizeof(r)) != sizeof(r))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ((ssize_t)sizeof(r), read(p[0], r, sizeof(r)));
	TH_LOG("attach: %s; counted after it: %lld", strerror((int)r[1]), r[0]);
	/* The check ran before the exec: the attach itself succeeded. */
	ASSERT_EQ(0, r[1]);
	ASSERT_LE(0, r[0]);
	/* Nothing of su: the child made no call between link and exec. */
	EXPECT_GE(2, r[0]);
}

TEST_HARNESS_MAIN
