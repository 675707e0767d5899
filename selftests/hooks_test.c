// SPDX-License-Identifier: GPL-2.0
/*
 * The hooks are attached only on demand (issue 17): a loaded module that
 * nobody uses has no probe on any tracepoint; an open of /dev/hwpmc
 * attaches the process hooks (fork, exit, exec: its opener's exit ends
 * it), a PMC the scheduler hook too; after the last of them goes and the
 * linger passes, none is left.  The truth is the tracepoints' own lists
 * of probes, shown by the test flavor's debugfs hwpmc-test/hooks (opened
 * as root, read by pread() as root and as uid 65534).  Then a new PMC on
 * hooks attached afresh counts exactly: SCHED.SWITCH as the target's
 * /proc/PID/status ctxt_switches, CLOCK.PROF as its CPU clock
 * (CLOCK_THREAD_CPUTIME_ID), each bracketed by reads before and after
 * its start and stop.
 * Two detach/attach cycles, as root and as uid 65534.  And an owner with
 * no PMC still ends with the exit of its opener (the exit hook is held by
 * the open).  No timing: the linger is waited for by polling.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sys/prctl.h>
#include <sys/wait.h>

/* The calling thread's CPU time (se.sum_exec_runtime, up to now). */
static long long runtime_ns(void)
{
	return (long long)hwpmc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

struct rounds {
	int fd;
	__u32 sw, prof;
};

/*
 * The target: starts and stops both PMCs itself (the owner's file is
 * inherited) and reads its switches and run time around that:
 * S0 | start | S1 ... sleeps and spins ... S2 | stop | S3.
 */
static int target(struct hwpmc_child *me, void *arg)
{
	struct rounds *r = arg;
	struct timespec ts = { 0, 1000 * 1000 };
	int st = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	long long s[8];
	volatile unsigned long spin = 0;
	__u64 go;
	int i, j;

	if (st < 0 || hwpmc_send_u64(me, 0))
		return 1;
	while (!hwpmc_recv_u64(me, &go) && go) {
		s[0] = hwpmc_status_switches(st);
		s[4] = runtime_ns();
		if (hwpmc_start(r->fd, r->sw) || hwpmc_start(r->fd, r->prof))
			return 2;
		s[1] = hwpmc_status_switches(st);
		s[5] = runtime_ns();
		for (i = 0; i < 20; i++) {
			nanosleep(&ts, NULL);
			for (j = 0; j < 20000; j++)
				spin++;
		}
		s[6] = runtime_ns();
		s[2] = hwpmc_status_switches(st);
		if (hwpmc_stop(r->fd, r->prof) || hwpmc_stop(r->fd, r->sw))
			return 3;
		s[7] = runtime_ns();
		s[3] = hwpmc_status_switches(st);
		if (hwpmc_xwrite(me->tx, s, sizeof(s)))
			return 4;
	}
	return 0;
}

/*
 * Count with hooks just attached: up to 8 rounds, until 3 are quiet (no
 * switch in the gaps around start and stop, where the count must be
 * exact).  0, or the step that failed.
 */
static int count_rounds(int fd, int hooks, int *quietp)
{
	struct rounds r = { .fd = fd };
	struct hwpmc_child t;
	long long s[8];
	int round, quiet = 0, bad = 0;
	__u64 v, p, ready;

	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &r.sw) ||
	    hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &r.prof))
		return 20;
	if ((hwpmc_hooks_now(hooks) & (HWPMC_HOOKBIT_SWITCH | HWPMC_HOOKBIT_PROC)) !=
	    (HWPMC_HOOKBIT_SWITCH | HWPMC_HOOKBIT_PROC))
		return 21;
	if (hwpmc_child_start(&t, target, &r) || hwpmc_recv_u64(&t, &ready))
		return 22;
	if (hwpmc_attach(fd, r.sw, t.pid) || hwpmc_attach(fd, r.prof, t.pid))
		return 23;
	for (round = 0; round < 8 && quiet < 3 && !bad; round++) {
		if (hwpmc_write(fd, r.sw, 0) || hwpmc_write(fd, r.prof, 0) ||
		    hwpmc_send_u64(&t, 1) || hwpmc_xread(t.rx, s, sizeof(s)) ||
		    hwpmc_read(fd, r.sw, &v) || hwpmc_read(fd, r.prof, &p)) {
			bad = 24;
			break;
		}
		/* Every switch and ns counted lies in the outer bracket,
		 * every one of the inner bracket is counted. */
		if (s[0] < 0 || (long long)v < s[2] - s[1] ||
		    (long long)v > s[3] - s[0])
			bad = 25;
		else if ((long long)p < s[6] - s[5] ||
			 (long long)p > s[7] - s[4])
			bad = 26;
		else if (s[2] - s[1] < 10)
			bad = 27;	/* the sleeps did not switch away */
		if (s[1] == s[0] && s[3] == s[2]) {
			quiet++;
			if ((long long)v != s[2] - s[1])
				bad = 28;
		}
		if (bad)
			fprintf(stderr, "# round %d: switches %lld..%lld counted %llu, ns %lld..%lld counted %llu\n",
				round, s[2] - s[1], s[3] - s[0],
				(unsigned long long)v, s[6] - s[5], s[7] - s[4],
				(unsigned long long)p);
	}
	hwpmc_send_u64(&t, 0);
	if (hwpmc_child_wait(&t) && !bad)
		bad = 29;
	if (hwpmc_release(fd, r.sw) || hwpmc_release(fd, r.prof))
		return bad ? bad : 30;
	*quietp = quiet;
	return bad;
}

/*
 * One cycle, as the caller's user: nothing attached; an open attaches the
 * process hooks only, a failed PMCALLOCATE nothing more; a PMC both; its release and the close leave them
 * attached for the linger only; then a PMC on hooks attached afresh
 * counts exactly.  0, or the step that failed.
 */
static int cycle(int hooks, int *quiet)
{
	int fd, err;
	__u32 id;

	if (hwpmc_hooks_wait_off(hooks, -1) != 0)
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 2;
	if (hwpmc_hooks_now(hooks) != HWPMC_HOOKBIT_PROC)
		return 3;
	/*
	 * An allocation bound to fail (a sampler without a period) attaches
	 * nothing, not even for the linger: its checks come first.
	 */
	if (hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_SYSCALL_ENTER, PMC_MODE_TS,
			0, PMC_CPU_ANY, 0, &id) != EINVAL)
		return 10;
	if (hwpmc_hooks_now(hooks) != HWPMC_HOOKBIT_PROC)
		return 11;
	/* CLOCK.HARD: no per-event hook of its own. */
	if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_HARD, 0, &id))
		return 4;
	if (hwpmc_hooks_now(hooks) != (HWPMC_HOOKBIT_SWITCH | HWPMC_HOOKBIT_PROC))
		return 5;
	if (hwpmc_release(fd, id))
		return 6;
	close(fd);
	if (hwpmc_hooks_wait_off(hooks, -1) != 0)
		return 7;
	fd = hwpmc_open();
	if (fd < 0)
		return 8;
	err = count_rounds(fd, hooks, quiet);
	close(fd);
	if (err)
		return err;
	return hwpmc_hooks_wait_off(hooks, -1) != 0 ? 9 : 0;
}

struct nobody_arg {
	int hooks;
	int quiet;
};

static int cycle_as_nobody(struct hwpmc_child *me, void *arg)
{
	struct nobody_arg *a = arg;
	int quiet = 0, err;

	if (hwpmc_become_nobody())
		return 40;
	err = cycle(a->hooks, &quiet);
	if (!err && hwpmc_send_u64(me, quiet))
		return 41;
	return err;
}

/*
 * The opener of an owner with no PMC exits; the child that inherited the
 * open gets ESRCH from PMCALLOCATE once the owner is shut down: the exit
 * hook, attached by the open alone, saw the opener go.  The test process
 * is the orphan's subreaper, so it collects its verdict: 0 or a step.
 */
static int orphan_as(bool nobody)
{
	int gate[2], fd, err, i, st, code = -1;
	pid_t opener, pid;
	char c;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return 49;
	fflush(stdout);
	opener = fork();
	if (opener < 0)
		return 50;
	if (!opener) {
		if (nobody && hwpmc_become_nobody())
			_exit(51);
		fd = hwpmc_open();
		if (fd < 0 || pipe(gate))
			_exit(52);
		pid = fork();
		if (pid < 0)
			_exit(53);
		if (pid)
			_exit(0);	/* the opener exits at once */
		close(gate[1]);
		/* EOF: the opener is gone (its end of the pipe with it). */
		if (read(gate[0], &c, 1) != 0)
			_exit(54);
		/* Shut down after the exit, in process context: poll. */
		for (i = 0; i < 500; i++) {
			err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, NULL);
			if (err == ESRCH)
				_exit(0);
			if (err)
				_exit(55);
			usleep(20000);
		}
		_exit(56);
	}
	if (waitpid(opener, &st, 0) != opener || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		code = 57;
	/* The orphan, reparented to this process. */
	pid = waitpid(-1, &st, 0);
	if (code < 0)
		code = pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 58;
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	return code;
}

FIXTURE(hooks) {
	int hooks;
};

FIXTURE_SETUP(hooks)
{
	int err;

	self->hooks = -1;
	err = hwpmc_test_flavor_load("");
	if (err == ENOENT)
		SKIP(return, HWPMC_NO_TEST_FLAVOR);
	ASSERT_EQ(0, err) TH_LOG("loading the test flavor: %s", strerror(err));
	self->hooks = open(HWPMC_HOOKS, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->hooks) TH_LOG("%s: %s", HWPMC_HOOKS, strerror(errno));
}

FIXTURE_TEARDOWN(hooks)
{
	if (self->hooks >= 0)
		close(self->hooks);
	hwpmc_release_flavor_load();
}

/* A module just loaded has attached nothing. */
TEST_F(hooks, none_at_load)
{
	EXPECT_EQ(0, hwpmc_hooks_now(self->hooks));
}

/* An owner with no PMC still ends with its opener's exit. */
TEST_F_TIMEOUT(hooks, owner_without_pmc_ends_with_its_opener, 300)
{
	ASSERT_EQ(0, hwpmc_hooks_wait_off(self->hooks, -1));
	EXPECT_EQ(0, orphan_as(false)) TH_LOG("root");
	ASSERT_EQ(0, hwpmc_hooks_wait_off(self->hooks, -1));
	EXPECT_EQ(0, orphan_as(true)) TH_LOG("uid 65534");
}

TEST_F_TIMEOUT(hooks, on_demand_root, 600)
{
	int quiet = 0, i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, cycle(self->hooks, &quiet))
			TH_LOG("root, cycle %d (hooks now 0x%lx)", i,
			       hwpmc_hooks_now(self->hooks));
		TH_LOG("root, cycle %d: %d quiet rounds, exact", i, quiet);
	}
}

TEST_F_TIMEOUT(hooks, on_demand_nobody, 600)
{
	struct nobody_arg a = { .hooks = self->hooks };
	struct hwpmc_child c;
	__u64 quiet;
	int i;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, hwpmc_child_start(&c, cycle_as_nobody, &a));
		EXPECT_EQ(0, hwpmc_recv_u64(&c, &quiet));
		ASSERT_EQ(0, hwpmc_child_wait(&c))
			TH_LOG("uid 65534, cycle %d (hooks now 0x%lx)", i,
			       hwpmc_hooks_now(self->hooks));
		TH_LOG("uid 65534, cycle %d: %llu quiet rounds, exact", i,
		       (unsigned long long)quiet);
	}
}

TEST_HARNESS_MAIN
