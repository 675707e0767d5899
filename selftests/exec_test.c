// SPDX-License-Identifier: GPL-2.0
/*
 * A process that execs a set-id program stops being watched by an owner
 * that could only watch it as its debugger (FreeBSD's pmc_process_exec
 * does the same).  An unprivileged owner counts the system calls of its
 * child while the child runs mount(8): once a plain copy (counted in full)
 * and once the real, set-uid mount (only the exec itself is counted).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SETUID_MOUNT "/usr/bin/mount"
#define PLAIN_MOUNT "/tmp/hwpmc-exec-test-mount"

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

TEST_HARNESS_MAIN
