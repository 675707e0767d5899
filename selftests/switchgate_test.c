// SPDX-License-Identifier: GPL-2.0
/*
 * The switch hook's gate (kmod/hwpmc_hooks.c, hwpmc_switch_wanted()) lets
 * through every switch that some PMC needs, also while other PMCs make
 * it look up the switched tasks' processes: system-scope SCHED.SWITCH
 * PMCs on every CPU count each switch of the machine, tasks nobody
 * monitors included.  The truth is the kernel's own count of switches,
 * /proc/stat's "ctxt" (the runqueues' nr_switches, which the scheduler
 * bumps where it fires sched_switch), read around each read of the PMCs:
 * the PMCs' sum moves by no less than ctxt moved between the inner reads
 * and by no more than between the outer ones.  The switches are those of
 * an unmonitored ping-pong pinned to one CPU, with (a) no process-scope
 * PMC anywhere, (b) process-scope SCHED.SWITCH and CLOCK.PROF PMCs
 * attached to a sleeping process elsewhere, (c) the same PMCs attached
 * to one of the ping-pong's two processes: each CPU's own reason (its
 * system-scope PMC) passes every switch whatever the process-scope
 * reasons say.  Those reasons (a lookup of the outgoing or the incoming
 * task's process) are what process-scope counts go through when no
 * system-scope PMC exists: hooks_test, oracle_soft_test and the clock
 * tests prove those counts exact.  Root: system-scope PMCs are the
 * administrator's.
 *
 * And the gate's reasons go when what raised them goes: with the test
 * flavor's view of the gate (debugfs hwpmc-test/switch_gate), its counts
 * and the CPUs with a reason of their own are 0 after load, up while
 * system- and process-scope SOFT PMCs run on a busy target, and 0 again
 * once they are released (a CLOCK.PROF timer stops at its next expiry),
 * as root and as uid 65534 (process scope only).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <signal.h>

#define ROUND_TRIPS	3000

/* The switches of every CPU since boot (/proc/stat's ctxt), or -1. */
static long long ctxt_now(void)
{
	return hwpmc_file_key("/proc/stat", "ctxt");
}

/*
 * A parent and a child bounce a byte @n times over two pipes, both pinned
 * to CPU 0: every round trip is two switches.  The child's pid goes to
 * @tell before the bouncing, which starts when @go says so.  0 or -1.
 */
static int pingpong(long n, int tell, int go)
{
	int ab[2], ba[2], status;
	cpu_set_t set;
	char c = 0, g;
	pid_t peer;
	long i;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (pipe(ab) || pipe(ba))
		return -1;
	peer = fork();
	if (peer < 0)
		return -1;
	if (peer == 0) {
		/* Its own ends only: the runner's exit is its EOF. */
		close(ab[1]);
		close(ba[0]);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(1);
		for (i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(2);
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	/* The caller attaches to the peer (or not), then says go. */
	if (write(tell, &peer, sizeof(peer)) != sizeof(peer) ||
	    read(go, &g, 1) != 1 || sched_setaffinity(0, sizeof(set), &set))
		goto fail;
	for (i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			goto fail;
	close(ab[1]);
	close(ba[0]);
	if (waitpid(peer, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
fail:
	kill(peer, SIGKILL);
	waitpid(peer, NULL, 0);
	return -1;
}

FIXTURE(gate) {
	int fd;
	int ncpu;
	__u32 *sys;	/* one system-scope PMC a CPU */
	__u32 sw, prof;
	pid_t sleeper;
};

FIXTURE_SETUP(gate)
{
	int c;

	self->fd = -1;
	self->sys = NULL;
	self->sleeper = -1;
	self->sw = self->prof = ~0u;
	if (geteuid())
		SKIP(return, "system-scope PMCs need root");
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, self->ncpu);
	self->sys = calloc(self->ncpu, sizeof(*self->sys));
	ASSERT_NE(NULL, self->sys);
	for (c = 0; c < self->ncpu; c++) {
		ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SCHED_SWITCH, c,
					   &self->sys[c]));
		ASSERT_EQ(0, hwpmc_start(self->fd, self->sys[c]));
	}
}

FIXTURE_TEARDOWN(gate)
{
	if (self->sleeper > 0) {
		kill(self->sleeper, SIGKILL);
		waitpid(self->sleeper, NULL, 0);
	}
	if (self->fd >= 0)
		close(self->fd);
	free(self->sys);
}

/* The system-scope PMCs' sum, or -1. */
static long long sys_sum(struct __test_metadata *_metadata,
			 FIXTURE_DATA(gate) *self)
{
	long long sum = 0;
	__u64 v;
	int c;

	for (c = 0; c < self->ncpu; c++) {
		if (hwpmc_read(self->fd, self->sys[c], &v))
			return -1;
		sum += (long long)v;
	}
	return sum;
}

/* Process-scope SCHED.SWITCH and CLOCK.PROF PMCs on @pid, started. */
static void monitor(struct __test_metadata *_metadata,
		    FIXTURE_DATA(gate) *self, pid_t pid)
{
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0,
				   &self->sw));
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_CLOCK_PROF, 0,
				   &self->prof));
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->sw, pid));
	ASSERT_EQ(0, hwpmc_attach(self->fd, self->prof, pid));
	ASSERT_EQ(0, hwpmc_start(self->fd, self->sw));
	ASSERT_EQ(0, hwpmc_start(self->fd, self->prof));
}

/*
 * The ping-pong in a child (so that the test's own process is never a
 * target), the PMCs read around it; @target: attach the process-scope
 * PMCs to the ping-pong's second process first.
 */
static void run(struct __test_metadata *_metadata, FIXTURE_DATA(gate) *self,
		bool target)
{
	long long a0, b0, a1, b1, v0, v1;
	int go[2], res[2], status;
	pid_t runner, peer = -1;
	__u64 sw = 0;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(res));
	runner = fork();
	ASSERT_LE(0, runner);
	if (runner == 0) {
		/* A test that fails before "go" closes go[1]: EOF here. */
		close(go[1]);
		close(res[0]);
		_exit(pingpong(ROUND_TRIPS, res[1], go[0]) ? 1 : 0);
	}
	close(go[0]);
	close(res[1]);
	go[0] = res[1] = -1;
	ASSERT_EQ(0, hwpmc_xread(res[0], &peer, sizeof(peer)));
	ASSERT_LT(0, peer);
	if (target)
		monitor(_metadata, self, peer);
	a0 = ctxt_now();
	v0 = sys_sum(_metadata, self);
	b0 = ctxt_now();
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(runner, waitpid(runner, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	a1 = ctxt_now();
	v1 = sys_sum(_metadata, self);
	b1 = ctxt_now();
	ASSERT_TRUE(a0 >= 0 && b0 >= 0 && a1 >= 0 && b1 >= 0);
	ASSERT_LE(0, v0);
	ASSERT_LE(0, v1);
	TH_LOG("switches: ctxt %lld..%lld, system-scope PMCs %lld",
	       a1 - b0, b1 - a0, v1 - v0);
	EXPECT_LE(a1 - b0, v1 - v0);
	EXPECT_GE(b1 - a0, v1 - v0);
	/* The ping-pong alone switched at least twice a round trip. */
	EXPECT_LE(2LL * ROUND_TRIPS, v1 - v0);
	if (target) {
		/*
		 * The peer blocked for the parent's byte every round trip but
		 * maybe the first (the byte can be there before it reads).
		 */
		ASSERT_EQ(0, hwpmc_read(self->fd, self->sw, &sw));
		EXPECT_LE((__u64)ROUND_TRIPS - 1, sw);
	}
	close(go[1]);
	close(res[0]);
}

TEST_F(gate, no_process_pmc)
{
	run(_metadata, self, false);
}

TEST_F(gate, process_pmcs_elsewhere)
{
	self->sleeper = fork();
	ASSERT_LE(0, self->sleeper);
	if (self->sleeper == 0) {
		pause();
		_exit(0);
	}
	monitor(_metadata, self, self->sleeper);
	run(_metadata, self, false);
}

TEST_F(gate, process_pmcs_on_one_side)
{
	run(_metadata, self, true);
}

/* Up to 10 s for every count to be 0: 0, or -1 (@v: the last look). */
static int gate_wait_zero(long long v[4])
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (hwpmc_switch_gate_now(v))
			return -1;
		if (!v[0] && !v[1] && !v[2] && !v[3])
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

/* A child that spins until killed: a target that runs. */
static pid_t spinner(void)
{
	pid_t pid = fork();

	if (pid == 0)
		for (;;)
			hwpmc_burn_cpu_ns(1000 * 1000);
	return pid;
}

/* What gate_raise() set up, for gate_drop(). */
struct raised {
	int fd;
	pid_t target;
};

/*
 * Process-scope SCHED.SWITCH and CLOCK.PROF PMCs (@sys: and system-scope
 * ones on every CPU) running on a spinning child: 0, or the step that
 * failed.
 */
static int gate_raise(bool sys, struct raised *r)
{
	__u32 sw, prof, id;
	int c, n;

	r->fd = hwpmc_open();
	if (r->fd < 0)
		return 2;
	r->target = spinner();
	if (r->target < 0)
		return 3;
	if (hwpmc_soft_tc(r->fd, PMC_SOFT_SCHED_SWITCH, 0, &sw) ||
	    hwpmc_soft_tc(r->fd, PMC_SOFT_CLOCK_PROF, 0, &prof) ||
	    hwpmc_attach(r->fd, sw, r->target) ||
	    hwpmc_attach(r->fd, prof, r->target) ||
	    hwpmc_start(r->fd, sw) || hwpmc_start(r->fd, prof))
		return 4;
	n = sys ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 0;
	for (c = 0; c < n; c++)
		if (hwpmc_soft_sc(r->fd, PMC_SOFT_SCHED_SWITCH, c, &id) ||
		    hwpmc_start(r->fd, id))
			return 5;
	usleep(50 * 1000);
	return 0;
}

/* Everything gate_raise() made gone: the target, the PMCs (the close). */
static void gate_drop(struct raised *r)
{
	if (r->target > 0) {
		kill(r->target, SIGKILL);
		waitpid(r->target, NULL, 0);
	}
	if (r->fd >= 0)
		close(r->fd);
}

/* As uid 65534: gate_raise(), tell @c, gate_drop() on its word. */
static int nobody_raise(struct hwpmc_child *c, void *arg)
{
	struct raised r = { .fd = -1, .target = -1 };
	__u64 go;
	int rc;

	if (hwpmc_become_nobody())
		return 1;
	rc = gate_raise(false, &r);
	if (hwpmc_send_u64(c, rc) || hwpmc_recv_u64(c, &go))
		rc = rc ? rc : 6;
	gate_drop(&r);
	return rc;
}

FIXTURE(counts) {
	bool loaded;
};

FIXTURE_SETUP(counts)
{
	int err;

	self->loaded = false;
	if (geteuid())
		SKIP(return, "loading the test flavor needs root");
	err = hwpmc_test_flavor_load("");
	if (err == ENOENT)
		SKIP(return, HWPMC_NO_TEST_FLAVOR);
	ASSERT_EQ(0, err) TH_LOG("loading the test flavor: %s", strerror(err));
	self->loaded = true;
}

FIXTURE_TEARDOWN(counts)
{
	if (self->loaded)
		hwpmc_release_flavor_load();
}

TEST_F(counts, none_left_after_release)
{
	struct raised r = { .fd = -1, .target = -1 };
	long long v[4] = { -1, -1, -1, -1 };
	struct hwpmc_child c = { .pid = -1, .tx = -1, .rx = -1 };
	__u64 rc = 1;
	int got;

	ASSERT_EQ(0, hwpmc_switch_gate_now(v));
	EXPECT_TRUE(!v[0] && !v[1] && !v[2] && !v[3])
		TH_LOG("at load: %lld %lld %lld %lld", v[0], v[1], v[2], v[3]);

	/* Root: process- and system-scope. */
	EXPECT_EQ(0, gate_raise(true, &r));
	got = hwpmc_switch_gate_now(v);
	gate_drop(&r);
	ASSERT_EQ(0, got);
	TH_LOG("root, running: every %lld prev %lld next %lld, %lld CPUs",
	       v[0], v[1], v[2], v[3]);
	EXPECT_EQ(0, v[0]);	/* no hardware PMC */
	EXPECT_EQ(1, v[1]);	/* SCHED.SWITCH */
	EXPECT_EQ(1, v[2]);	/* CLOCK.PROF */
	/* Every CPU has a system-scope SCHED.SWITCH PMC. */
	EXPECT_EQ(sysconf(_SC_NPROCESSORS_ONLN), v[3]);
	EXPECT_EQ(0, gate_wait_zero(v))
		TH_LOG("root, released: %lld %lld %lld %lld", v[0], v[1], v[2],
		       v[3]);

	/* uid 65534: process scope. */
	ASSERT_EQ(0, hwpmc_child_start(&c, nobody_raise, NULL));
	EXPECT_EQ(0, hwpmc_recv_u64(&c, &rc));
	EXPECT_EQ(0, rc);
	got = hwpmc_switch_gate_now(v);
	hwpmc_send_u64(&c, 1);
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	ASSERT_EQ(0, got);
	TH_LOG("uid 65534, running: every %lld prev %lld next %lld, %lld CPUs",
	       v[0], v[1], v[2], v[3]);
	EXPECT_EQ(1, v[1]);
	EXPECT_EQ(1, v[2]);
	EXPECT_EQ(0, gate_wait_zero(v))
		TH_LOG("uid 65534, released: %lld %lld %lld %lld", v[0], v[1],
		       v[2], v[3]);
}

TEST_HARNESS_MAIN
