// SPDX-License-Identifier: GPL-2.0
/*
 * Process records in the log: PMC_F_LOG_PROCEXIT carries exactly what
 * PMCRW reports, the PMC_F_LOG_PROCCSW records of a target add up to its
 * count, and PMC_F_DESCENDANTS logs PROCFORK and PROCEXEC of the tree.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LOGPATH "/tmp/hwpmc-logproc-test.log"

struct tally {
	__u32 pmcid;
	__u64 csw_sum;
	int ncsw;
	int nexit;
	__u64 exit_value;
	__u32 exit_pid;
	int nfork, nexec;
	__u32 fork_pids[64];
	char exec_path[256];
};

static int tally_fn(const struct pmclog_header *h, void *arg)
{
	struct tally *t = arg;

	switch (h->pl_type) {
	case PMCLOG_TYPE_PROCCSW: {
		const struct pmclog_proccsw *r = (const void *)h;

		if (r->pl_pmcid == t->pmcid) {
			t->csw_sum += r->pl_value;
			t->ncsw++;
		}
		break;
	}
	case PMCLOG_TYPE_PROCEXIT: {
		const struct pmclog_procexit *r = (const void *)h;

		if (r->pl_pmcid == t->pmcid) {
			t->nexit++;
			t->exit_value += r->pl_value;
			t->exit_pid = r->pl_pid;
		}
		break;
	}
	case PMCLOG_TYPE_PROCFORK: {
		const struct pmclog_procfork *r = (const void *)h;

		if (t->nfork < 64)
			t->fork_pids[t->nfork] = r->pl_pid;
		t->nfork++;
		break;
	}
	case PMCLOG_TYPE_PROCEXEC: {
		const struct pmclog_procexec *r = (const void *)h;

		if (r->pl_pmcid == t->pmcid) {
			t->nexec++;
			snprintf(t->exec_path, sizeof(t->exec_path), "%s",
				 r->pl_path);
		}
		break;
	}
	}
	return 0;
}

static int tally_log(struct tally *t)
{
	size_t len;
	char *buf = hwpmc_slurp(LOGPATH, &len);
	int n;

	if (!buf)
		return -1;
	n = hwpmc_for_each_record(buf, len, tally_fn, t);
	free(buf);
	return n;
}

static void *worker(void *arg)
{
	int i;

	for (i = 0; i < 200; i++) {
		syscall(SYS_getppid);
		if (i % 20 == 0)
			usleep(1000);
	}
	return NULL;
}

/* A child that waits for "go", runs 3 threads that syscall and sleep. */
static pid_t spawn_worker(int *go)
{
	pthread_t th[3];
	pid_t pid = hwpmc_fork_gated(go);
	int i;

	if (pid)
		return pid;
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	worker(NULL);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

FIXTURE(lp) {
	int fd, logfd;
};

FIXTURE_SETUP(lp)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->logfd);
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
}

FIXTURE_TEARDOWN(lp)
{
	close(self->fd);
	close(self->logfd);
	unlink(LOGPATH);
}

/* PROCEXIT equals PMCRW; PROCCSW records add up to the same. */
static void exit_and_csw(struct __test_metadata *_metadata,
			 FIXTURE_DATA(lp) *self, __u32 event)
{
	struct tally t = { 0 };
	__u64 total;
	int go, status;
	__u32 id;
	pid_t pid;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, event,
				   PMC_F_LOG_PROCCSW | PMC_F_LOG_PROCEXIT, &id));
	pid = spawn_worker(&go);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, pid));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, hwpmc_read(self->fd, id, &total));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	t.pmcid = id;
	ASSERT_LT(0, tally_log(&t));
	TH_LOG("event %u: PMCRW %llu, PROCEXIT %llu, %d PROCCSW adding to %llu",
	       event, (unsigned long long)total,
	       (unsigned long long)t.exit_value, t.ncsw,
	       (unsigned long long)t.csw_sum);
	/* Migrations depend on the scheduler; the others always happen. */
	if (event != PMC_SOFT_SCHED_MIGRATE)
		EXPECT_LT(0, total);
	EXPECT_EQ(1, t.nexit);
	EXPECT_EQ(pid, t.exit_pid);
	EXPECT_EQ(total, t.exit_value);
	EXPECT_LE(4, t.ncsw);		/* four threads switched at least */
	EXPECT_EQ(total, t.csw_sum);
	close(go);
}

TEST_F(lp, syscall_enter_exit_and_csw)
{
	exit_and_csw(_metadata, self, PMC_SOFT_SYSCALL_ENTER);
}

TEST_F(lp, sched_switch_exit_and_csw)
{
	exit_and_csw(_metadata, self, PMC_SOFT_SCHED_SWITCH);
}

TEST_F(lp, clock_prof_exit_and_csw)
{
	exit_and_csw(_metadata, self, PMC_SOFT_CLOCK_PROF);
}

TEST_F(lp, migrations_exit_and_csw)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	exit_and_csw(_metadata, self, PMC_SOFT_SCHED_MIGRATE);
}

/* PMC_F_DESCENDANTS: PROCFORK for each child, PROCEXEC with the path. */
TEST_F(lp, descendants_fork_and_exec)
{
	struct tally t = { 0 };
	__u32 id;
	int go, status, i;
	pid_t pid, kids[3];
	int p[2];

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SYSCALL_ENTER,
				   PMC_F_DESCENDANTS | PMC_F_LOG_PROCEXIT, &id));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < 3; i++) {
			kids[i] = fork();
			if (!kids[i]) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(2);
			}
		}
		for (i = 0; i < 3; i++)
			waitpid(kids[i], NULL, 0);
		_exit(0);
	}
	close(p[0]);
	go = p[1];
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, pid));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	t.pmcid = id;
	ASSERT_LT(0, tally_log(&t));
	EXPECT_EQ(3, t.nfork);
	EXPECT_EQ(3, t.nexec);
	EXPECT_NE(NULL, strstr(t.exec_path, "/true")) TH_LOG("%s", t.exec_path);
	EXPECT_EQ(4, t.nexit);	/* the three children and their parent */
	close(go);
}

TEST_HARNESS_MAIN
