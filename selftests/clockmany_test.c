// SPDX-License-Identifier: GPL-2.0
/*
 * A process-scope CLOCK.PROF PMC with more targets than one batch of the
 * module's walks (64): its start, stop, detach and attach visit the
 * targets a batch at a time, dropping the global lock between batches, so
 * that a user with many processes holds it (with interrupts off) for a
 * batch only.  The count stays exact across the batches:
 *
 *   exact:  started on blocked processes, 0; stopped, or detached, the
 *           count does not move while every process burns CPU time, a
 *           kid forked while it is stopped too (linked, not counting:
 *           one that exits then adds nothing);
 *   0.5%:   running, the processes' CPU clocks over the running windows.
 *
 * Then the walks meet exits and forks: a thread starts and stops the PMC
 * in a loop while its processes exit and new ones are forked and linked
 * (PMC_F_DESCENDANTS), and the reads stay sane.  As root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define NKIDS		200		/* targets: NKIDS + the root */
#define BURN_NS		2000000ull	/* CPU time a kid burns per byte */
#define MOREKIDS	8		/* forked later, on request */

struct tree {
	pid_t root;
	pid_t kids[NKIDS + MOREKIDS];
	int n;				/* kids */
	int go, done;			/* bytes to burn, bytes burnt */
	int cmd;			/* to the root: close to end it */
	int out;			/* from the root: new kids' pids */
};

/* A kid: burn BURN_NS per byte read from @go, a byte back on @done. */
static void kid(int go, int done)
{
	char c;

	while (read(go, &c, 1) == 1) {
		hwpmc_burn_cpu_ns(BURN_NS);
		if (write(done, &c, 1) != 1)
			break;
	}
	_exit(0);
}

/*
 * The root: NKIDS kids, their pids to @out, then blocked on @cmd; when it
 * is closed, every kid is killed and reaped.  A 'f' on @cmd forks one
 * more kid (its pid to @out).
 */
static void root(struct tree *t, int go, int done, int cmd, int out)
{
	pid_t pid;
	char c;
	int i;

	for (i = 0; i < NKIDS; i++) {
		pid = fork();
		if (pid < 0)
			_exit(1);
		if (!pid)
			kid(go, done);
		t->kids[i] = pid;
	}
	if (hwpmc_xwrite(out, t->kids, NKIDS * sizeof(pid_t)))
		_exit(2);
	while (read(cmd, &c, 1) == 1) {
		pid = fork();
		if (!pid)
			kid(go, done);
		if (pid < 0 || hwpmc_xwrite(out, &pid, sizeof(pid)))
			_exit(3);
	}
	kill(0, SIGKILL);		/* the kids, in the root's group */
	_exit(0);
}

/* The tree, its kids blocked in read(). 0 or -1. */
static int tree_make(struct tree *t)
{
	int go[2], done[2], cmd[2], out[2], i;

	if (pipe(go) || pipe(done) || pipe(cmd) || pipe(out))
		return -1;
	t->root = fork();
	if (t->root < 0)
		return -1;
	if (!t->root) {
		setpgid(0, 0);
		close(cmd[1]);
		close(out[0]);
		root(t, go[0], done[1], cmd[0], out[1]);
	}
	close(go[0]);
	close(done[1]);
	close(cmd[0]);
	close(out[1]);
	t->go = go[1];
	t->done = done[0];
	t->cmd = cmd[1];
	t->out = out[0];
	t->n = NKIDS;
	if (hwpmc_xread(t->out, t->kids, NKIDS * sizeof(pid_t)))
		return -1;
	for (i = 0; i < NKIDS; i++)
		if (hwpmc_wait_job_blocked(t->kids[i]))
			return -1;
	return hwpmc_wait_job_blocked(t->root);
}

/* The root forks one more kid, blocked in read() on return.  0 or -1. */
static int tree_fork(struct tree *t)
{
	pid_t pid;

	if (t->n == NKIDS + MOREKIDS || write(t->cmd, "f", 1) != 1 ||
	    hwpmc_xread(t->out, &pid, sizeof(pid)))
		return -1;
	t->kids[t->n++] = pid;
	return hwpmc_wait_job_blocked(pid);
}

/*
 * The last kid forked is killed, and gone from the tree once it is a
 * zombie (its exit unlinked its target).  0 or -1.
 */
static int tree_kill_last(struct tree *t)
{
	pid_t pid = t->kids[t->n - 1];
	int i;

	if (t->n == NKIDS || kill(pid, SIGKILL))
		return -1;
	for (i = 0; i < 10000 && hwpmc_thread_state(pid, pid) != 'Z'; i++)
		usleep(1000);
	t->n--;
	return i < 10000 ? 0 : -1;
}

static void tree_end(struct tree *t)
{
	int st;

	close(t->cmd);
	close(t->go);
	close(t->done);
	close(t->out);
	waitpid(t->root, &st, 0);
}

/* The CPU time of the root and its kids, ns; -1 if one is gone. */
static long long tree_cputime(const struct tree *t)
{
	long long sum = hwpmc_proc_cputime(t->root), c;
	int i;

	for (i = 0; i < t->n && sum >= 0; i++) {
		c = hwpmc_proc_cputime(t->kids[i]);
		sum = c < 0 ? -1 : sum + c;
	}
	return sum;
}

/* Every kid burns BURN_NS once (some may burn twice, some not), then rests. */
static int tree_burn(struct tree *t)
{
	char buf[NKIDS];
	int i;

	memset(buf, 'b', sizeof(buf));
	if (hwpmc_xwrite(t->go, buf, sizeof(buf)) ||
	    hwpmc_xread(t->done, buf, sizeof(buf)))
		return -1;
	for (i = 0; i < t->n; i++)
		if (hwpmc_wait_job_blocked(t->kids[i]))
			return -1;
	return 0;
}

/*
 * The PMC's count and the tree's CPU time at one moment (every process
 * blocked: the clocks did not move around the read).  0 or -1.
 */
static int tree_quiet(const struct tree *t, int fd, __u32 id, __u64 *v,
		      long long *clk)
{
	long long before, after;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		before = tree_cputime(t);
		if (hwpmc_read(fd, id, v))
			return -1;
		after = tree_cputime(t);
		if (before >= 0 && before == after) {
			*clk = after;
			return 0;
		}
	}
	return -1;
}

static bool near(__u64 got, long long want)
{
	double d = (double)got - (double)want;

	return want > 0 && d <= 0.005 * want && d >= -0.005 * want;
}

static int dumpable(void)
{
	/* setresuid() made a uid 65534 caller non-dumpable: not its kids. */
	signal(SIGIO, SIG_IGN);		/* a PMC left without a target */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/*
 * Exit codes: 1..9 setup; 10 + step: the count off after that step (0
 * started, 1 burnt, 2 stopped, 3 two kids forked and all burnt stopped,
 * one of the new kids killed (its exit unlinks a target that must not
 * have counted), then all burnt again (the other counts from the
 * restart), 4 restarted and burnt, 5
 * detached, 6 burnt detached, 7 attached again and burnt).
 */
static int exact_run(void *arg)
{
	struct tree t;
	long long c0, c1, c2, c4, c5, c7;
	__u64 v, v1, v4, v5;
	__u32 id;
	int fd;

	(void)arg;
	if (dumpable() || tree_make(&t))
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 2;
	if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, PMC_F_DESCENDANTS, &id) ||
	    hwpmc_attach(fd, id, t.root))
		return 3;
	if (hwpmc_start(fd, id) || tree_quiet(&t, fd, id, &v, &c0))
		return 4;
	if (v != 0)
		return 10;
	if (tree_burn(&t) || tree_quiet(&t, fd, id, &v1, &c1))
		return 5;
	printf("# %d targets: %llu ns counted, %lld burnt\n", NKIDS + 1,
	       (unsigned long long)v1, c1 - c0);
	if (!near(v1, c1 - c0))
		return 11;
	if (hwpmc_stop(fd, id) || hwpmc_read(fd, id, &v))
		return 5;
	if (v != v1)
		return 12;
	if (tree_fork(&t) || tree_fork(&t) || tree_burn(&t) ||
	    tree_kill_last(&t) || hwpmc_read(fd, id, &v))
		return 5;
	if (v != v1)
		return 13;
	if (tree_burn(&t) || tree_quiet(&t, fd, id, &v, &c2))
		return 5;
	if (v != v1)
		return 13;
	if (hwpmc_start(fd, id) || tree_burn(&t) ||
	    tree_quiet(&t, fd, id, &v4, &c4))
		return 6;
	printf("# restarted: %llu ns counted, %lld expected\n",
	       (unsigned long long)v4, (long long)v1 + (c4 - c2));
	if (!near(v4, v1 + (c4 - c2)))
		return 14;
	if (hwpmc_detach(fd, id, t.root) || hwpmc_read(fd, id, &v))
		return 7;
	if (v != v4)
		return 15;
	if (tree_burn(&t) || tree_quiet(&t, fd, id, &v, &c5))
		return 7;
	if (v != v4)
		return 16;
	if (hwpmc_attach(fd, id, t.root) || tree_burn(&t) ||
	    tree_quiet(&t, fd, id, &v5, &c7))
		return 8;
	printf("# attached again: %llu ns counted, %lld expected\n",
	       (unsigned long long)v5, (long long)v4 + (c7 - c5));
	if (!near(v5, v4 + (c7 - c5)))
		return 17;
	if (hwpmc_release(fd, id))
		return 9;
	close(fd);
	tree_end(&t);
	return 0;
}

struct storm {
	int fd;
	__u32 id;
	int rounds, err;
};

static void *start_stop(void *arg)
{
	struct storm *s = arg;
	int i;

	for (i = 0; i < s->rounds && !s->err; i++)
		if (hwpmc_start(s->fd, s->id) || hwpmc_stop(s->fd, s->id))
			s->err = errno ? errno : -1;
	return NULL;
}

/*
 * Exit codes: 1..5 setup; 10 a start or stop failed; 11 a read failed; 13
 * forks or kills failed; 14 the count moved after the last stop, while
 * the kids burn: a target linked during a stop's walk, after it passed,
 * would go on counting.
 */
static int storm_run(void *arg)
{
	struct storm s = { .rounds = 300 };
	pthread_t th;
	struct tree t;
	__u64 v = 0, last = 0;
	pid_t pid;
	int i, rc = 0;

	(void)arg;
	if (dumpable() || tree_make(&t))
		return 1;
	s.fd = hwpmc_open();
	if (s.fd < 0)
		return 2;
	if (hwpmc_soft_tc(s.fd, PMC_SOFT_CLOCK_PROF, PMC_F_DESCENDANTS,
			  &s.id) || hwpmc_attach(s.fd, s.id, t.root))
		return 3;
	/* Every kid burning, many times over the storm. */
	for (i = 0; i < 20; i++) {
		char buf[NKIDS];

		memset(buf, 'b', sizeof(buf));
		if (hwpmc_xwrite(t.go, buf, sizeof(buf)))
			return 4;
	}
	if (pthread_create(&th, NULL, start_stop, &s))
		return 5;
	for (i = 0; i < NKIDS && !rc; i++) {
		if (kill(t.kids[i], SIGKILL) || write(t.cmd, "f", 1) != 1 ||
		    hwpmc_xread(t.out, &pid, sizeof(pid)))
			rc = 13;
		/* A read walks the targets too, against the batches. */
		if (!rc && hwpmc_read(s.fd, s.id, &v))
			rc = 11;
	}
	pthread_join(th, NULL);
	if (!rc && s.err)
		rc = 10;
	if (!rc && (hwpmc_read(s.fd, s.id, &last) || usleep(200000) ||
		    hwpmc_read(s.fd, s.id, &v) || v != last))
		rc = 14;
	printf("# %d exits and forks under %d starts and stops: %llu ns counted\n",
	       NKIDS, s.rounds, (unsigned long long)v);
	close(s.fd);
	tree_end(&t);
	return rc;
}

FIXTURE(many) {
	int unused;
};

FIXTURE_SETUP(many)
{
}

FIXTURE_TEARDOWN(many)
{
}

TEST_F_TIMEOUT(many, start_stop_detach_attach_are_exact_over_batches, 600)
{
	int rc;

	rc = hwpmc_run_in_child(exact_run, NULL);
	EXPECT_EQ(0, rc) TH_LOG("root: step %d failed (10 + step: the count off)",
				rc);
	rc = hwpmc_as_nobody(exact_run, NULL);
	EXPECT_EQ(0, rc) TH_LOG("uid 65534: step %d failed (as above)", rc);
}

TEST_F_TIMEOUT(many, walks_meet_exits_and_forks, 600)
{
	int rc;

	rc = hwpmc_run_in_child(storm_run, NULL);
	EXPECT_EQ(0, rc) TH_LOG("root: step %d failed", rc);
	rc = hwpmc_as_nobody(storm_run, NULL);
	EXPECT_EQ(0, rc) TH_LOG("uid 65534: step %d failed", rc);
}

TEST_HARNESS_MAIN
