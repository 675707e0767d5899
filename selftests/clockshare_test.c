// SPDX-License-Identifier: GPL-2.0
/*
 * Process-scope CLOCK.PROF PMCs on one process share its clock: the switch
 * hook adds a stint's CPU time once to the process, whatever the number of
 * such PMCs (issue 21), and each PMC takes its share from the moment it
 * starts, up to its stop or its target's detach.  Three PMCs, two of one
 * owner and one of another, on one job that burns 40 ms of CPU time per
 * phase and blocks between phases; each PMC's count after each phase
 * against the job's CPU clock (clock_getcpuclockid()) over that PMC's own
 * windows, within 0.5%:
 *
 *   phase   1     2     3      4     5
 *   A       run   run   stop   run   run
 *   B       -     run   run    run   detached
 *   C       run   run   run    run   run      (the other owner)
 *
 * A stopped PMC and a detached one keep exactly the count they had (the
 * job is blocked: nothing is in flight).  As root and as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define PHASE_NS	40000000ull	/* the job's CPU time per phase */
#define NPHASES		5

/* The job: a phase per byte on @in, a byte back on @out when done. */
static void job(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1) {
		hwpmc_burn_cpu_ns(PHASE_NS);
		if (write(out, &c, 1) != 1)
			break;
	}
	_exit(0);
}

struct share {
	int fd, fd2, to, from;
	__u32 a, b, c;
	pid_t pid;
	long long t[NPHASES + 1];	/* the job's CPU time after each */
};

/*
 * The job's CPU clock and @n PMCs' counts at one moment when it is
 * blocked: the clock read around the PMCs' reads did not move.  0 or -1.
 */
static int quiet(struct share *s, long long *clk, int n, const int *fds,
		 const __u32 *ids, __u64 *v)
{
	long long before, after;
	int tries, i;

	for (tries = 0; tries < 1000; tries++) {
		if (hwpmc_wait_job_blocked(s->pid))
			return -1;
		before = hwpmc_proc_cputime(s->pid);
		for (i = 0; i < n; i++)
			if (hwpmc_read(fds[i], ids[i], &v[i]))
				return -1;
		after = hwpmc_proc_cputime(s->pid);
		if (before >= 0 && before == after) {
			*clk = after;
			return 0;
		}
	}
	return -1;
}

/* One phase of the job, to its end (it blocked again). */
static int phase(struct share *s)
{
	char c = 'p';

	if (write(s->to, &c, 1) != 1 || read(s->from, &c, 1) != 1)
		return -1;
	return hwpmc_wait_job_blocked(s->pid);
}

/* |@got - @want| within 0.5% of @want. */
static bool near(__u64 got, long long want)
{
	double d = (double)got - (double)want;

	return want > 0 && d <= 0.005 * want && d >= -0.005 * want;
}

/*
 * PMC k's count @v[k] against @want[k]: exactly (@exact[k]) or within 0.5%.
 * Exit codes: 1..19 a step failed; 20 + 3 * phase + k: PMC k (0 A, 1 B,
 * 2 C) off after that phase.
 */
static int check(int ph, const __u64 *v, const long long *want,
		 const bool *exact)
{
	int k;

	for (k = 0; k < 3; k++) {
		printf("# phase %d: %c %llu ns, expected %s%lld\n", ph, 'A' + k,
		       (unsigned long long)v[k], exact[k] ? "exactly " : "",
		       want[k]);
		if (exact[k] ? v[k] != (__u64)want[k] : !near(v[k], want[k]))
			return 20 + 3 * ph + k;
	}
	fflush(stdout);
	return 0;
}

static int run(void *arg)
{
	int down[2], up[2], rc, ph;
	struct share s = { 0 };
	long long want[3], *t = s.t, clk;
	bool exact[3];
	__u64 v[3], a_stop = 0, b_gone = 0;
	int fds[3];
	__u32 ids[3];

	signal(SIGIO, SIG_IGN);		/* B's PMC has no target after 5 */
	/* setresuid() made a uid 65534 caller non-dumpable: not its job. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 1;
	if (pipe(down) || pipe(up))
		return 1;
	s.pid = fork();
	if (s.pid < 0)
		return 2;
	if (!s.pid) {
		close(down[1]);
		close(up[0]);
		job(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	s.to = down[1];
	s.from = up[0];
	s.fd = hwpmc_open();
	s.fd2 = hwpmc_open();
	if (s.fd < 0 || s.fd2 < 0)
		return 3;
	if (hwpmc_soft_tc(s.fd, PMC_SOFT_CLOCK_PROF, 0, &s.a) ||
	    hwpmc_soft_tc(s.fd, PMC_SOFT_CLOCK_PROF, 0, &s.b) ||
	    hwpmc_soft_tc(s.fd2, PMC_SOFT_CLOCK_PROF, 0, &s.c))
		return 4;
	if (hwpmc_attach(s.fd, s.a, s.pid) || hwpmc_attach(s.fd, s.b, s.pid) ||
	    hwpmc_attach(s.fd2, s.c, s.pid))
		return 5;
	fds[0] = s.fd;
	fds[1] = s.fd;
	fds[2] = s.fd2;
	ids[0] = s.a;
	ids[1] = s.b;
	ids[2] = s.c;
	if (hwpmc_wait_job_blocked(s.pid))
		return 6;
	if (hwpmc_start(s.fd, s.a) || hwpmc_start(s.fd2, s.c))
		return 7;
	if (quiet(&s, &t[0], 3, fds, ids, v))
		return 8;
	for (ph = 1; ph <= NPHASES; ph++) {
		if (phase(&s))
			return 9;
		if (quiet(&s, &t[ph], 3, fds, ids, v))
			return 10;
		clk = t[ph];
		/* A: all but phase 3; B: phases 2-4; C: all. */
		want[0] = ph < 3 ? clk - t[0] : ph == 3 ? (long long)a_stop :
			  (long long)a_stop + (clk - t[3]);
		exact[0] = ph == 3;
		want[1] = ph < 2 ? 0 : ph < 5 ? clk - t[1] : (long long)b_gone;
		exact[1] = ph < 2 || ph == 5;
		want[2] = clk - t[0];
		exact[2] = false;
		rc = check(ph, v, want, exact);
		if (rc)
			return rc;
		if (ph == 1 && hwpmc_start(s.fd, s.b))
			return 11;
		if (ph == 2) {
			a_stop = v[0];
			if (hwpmc_stop(s.fd, s.a) ||
			    hwpmc_read(s.fd, s.a, &v[0]) || v[0] != a_stop)
				return 12;
		}
		if (ph == 3 && hwpmc_start(s.fd, s.a))
			return 13;
		if (ph == 4) {
			b_gone = v[1];
			if (hwpmc_detach(s.fd, s.b, s.pid) ||
			    hwpmc_read(s.fd, s.b, &v[1]) || v[1] != b_gone)
				return 14;
		}
	}
	close(s.to);
	if (waitpid(s.pid, &rc, 0) != s.pid || !WIFEXITED(rc) ||
	    WEXITSTATUS(rc))
		return 15;
	close(s.fd);
	close(s.fd2);
	return 0;
}

FIXTURE(share) {
	int unused;
};

FIXTURE_SETUP(share)
{
}

FIXTURE_TEARDOWN(share)
{
}

TEST_F_TIMEOUT(share, pmcs_count_their_own_windows_of_one_clock, 300)
{
	int rc;

	rc = hwpmc_run_in_child(run, NULL);
	EXPECT_EQ(0, rc) TH_LOG("root: step %d failed (20 + 3 * phase + k: PMC k, A B C, off after that phase)",
				rc);
	rc = hwpmc_as_nobody(run, NULL);
	EXPECT_EQ(0, rc) TH_LOG("uid 65534: step %d failed (as above)", rc);
}

TEST_HARNESS_MAIN
