// SPDX-License-Identifier: GPL-2.0
/*
 * hwmodel_rdpmc_test: PMCGETMSR and user-mode RDPMC on the PMU model:
 * the index and the counts it reads, counters cleared on unload, perf's
 * rdpmc setting, no inheritance across fork, and revocation on CPUs
 * that hold the mm lazily (hwmodel.h: the model, the fixture and its
 * layouts).
 */
#define _GNU_SOURCE
#include "hwmodel.h"

/*
 * PMCGETMSR: the RDPMC index of a process PMC attached only to its owner
 * (IAP-n: n, K8-n: n, IAF-n: 1 << 30 | n); EINVAL for a system PMC, one
 * with descendants, one attached to another process or not attached; a
 * later attach is EPERM.  RDPMC in this process: #GP (SIGSEGV) while not
 * granted; once granted, QEMU's TCG raises #UD (SIGILL) (real hardware
 * reads the counter); #GP again once the PMC is released or detached.
 */
TEST_F_TIMEOUT(hw, getmsr_and_rdpmc, 120)
{
	__u32 id, id2, fx = 0, bad, idx = ~0U, idx2 = ~0U, fidx = ~0U;
	struct hwpmc_child ch = { 0 };
	__u64 v, pmcval;
	int sig;

	EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(0, &v));
	ASSERT_EQ(0, hwpmc_child_start(&ch, adv_worker, NULL));

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	EXPECT_EQ(EINVAL, hwpmc_getmsr(self->fd, id, &idx));	/* no target */
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	EXPECT_EQ(0, idx);			/* the first row */
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	EXPECT_EQ(0, idx);
	sig = hwpmc_rdpmc_probe(idx, &v);
	EXPECT_TRUE(sig == SIGILL || sig == 0) TH_LOG("rdpmc: signal %d", sig);
	/* It no longer qualifies for more targets. */
	EXPECT_EQ(EPERM, hwpmc_attach(self->fd, id, ch.pid));

	/* Counting goes on; the register holds the PMC's count (RDPMC). */
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ADV("123");
	usleep(2000);				/* switched out and in */
	ADV("os 4");
	pmcval = rd(_metadata, self->fd, id);
	EXPECT_EQ(127, pmcval);
	EXPECT_EQ(pmcval & MASK48, mget(self->cpu, "ctr0"));

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id2));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id2, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id2, &idx2));
	EXPECT_EQ(1, idx2);
	if (variant->nfixed) {
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 2, 0,
					     PMC_MODE_TC, 0, PMC_CPU_ANY, 0,
					     &fx));
		ASSERT_EQ(0, hwpmc_attach(self->fd, fx, PMC_PID_SELF));
		ASSERT_EQ(0, hwpmc_getmsr(self->fd, fx, &fidx));
		EXPECT_EQ(1U << 30 | 2, fidx);
	}

	/* Not qualifying. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_SC, 0, self->cpu, 0, &bad));
	EXPECT_EQ(EINVAL, hwpmc_getmsr(self->fd, bad, &idx));
	ASSERT_EQ(0, hwpmc_release(self->fd, bad));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, PMC_F_DESCENDANTS,
				     PMC_CPU_ANY, 0, &bad));
	ASSERT_EQ(0, hwpmc_attach(self->fd, bad, PMC_PID_SELF));
	EXPECT_EQ(EINVAL, hwpmc_getmsr(self->fd, bad, &idx));
	ASSERT_EQ(0, hwpmc_release(self->fd, bad));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &bad));
	ASSERT_EQ(0, hwpmc_attach(self->fd, bad, ch.pid));
	EXPECT_EQ(EINVAL, hwpmc_getmsr(self->fd, bad, &idx));
	ASSERT_EQ(0, hwpmc_attach(self->fd, bad, PMC_PID_SELF));
	EXPECT_EQ(EINVAL, hwpmc_getmsr(self->fd, bad, &idx));
	ASSERT_EQ(0, hwpmc_release(self->fd, bad));

	/* Released: id2 (and fx) still grant RDPMC to this process. */
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	sig = hwpmc_rdpmc_probe(idx2, &v);
	EXPECT_TRUE(sig == SIGILL || sig == 0) TH_LOG("rdpmc: signal %d", sig);
	if (fx)
		ASSERT_EQ(0, hwpmc_release(self->fd, fx));
	/* Detached from its owner: revoked too, and it stays its owner's. */
	ASSERT_EQ(0, hwpmc_detach(self->fd, id2, PMC_PID_SELF));
	EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(idx2, &v));
	EXPECT_EQ(EPERM, hwpmc_attach(self->fd, id2, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_release(self->fd, id2));
	/* Attached, but no GETMSR yet: not granted; then granted. */
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(0, &v));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	sig = hwpmc_rdpmc_probe(idx, &v);
	EXPECT_TRUE(sig == SIGILL || sig == 0) TH_LOG("rdpmc: signal %d", sig);
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(idx, &v));
	ASSERT_EQ(0, hwpmc_send_u64(&ch, 0));
	EXPECT_EQ(0, hwpmc_child_wait(&ch));
}

/*
 * RDPMC leaks nothing: whenever hwpmc unloads a PMC from a CPU (its
 * process switched out or moved away, the PMC stopped), that counter is
 * zero and its event select off before anything else runs there, so a
 * process that may use RDPMC never reads what another PMC counted; also
 * a counter that held its owner's count for RDPMC.  The counts stay
 * exact (they were credited before the counter was cleared).
 */
TEST_F_TIMEOUT(hw, unload_clears_the_counter, 120)
{
	__u32 id, fx = 0, idx;
	long sw;
	__u64 v;

	if (self->other < 0)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	if (variant->nfixed) {
		ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, PMC_CLASS_IAF, 0, 0,
					     PMC_MODE_TC, 0, PMC_CPU_ANY, 0,
					     &fx));
		ASSERT_EQ(0, hwpmc_attach(self->fd, fx, PMC_PID_SELF));
		ASSERT_EQ(0, hwpmc_start(self->fd, fx));
	}
	/*
	 * A context switch between the advance and the read reloads the
	 * counter at START (the count is put aside, and checked below): on a
	 * PREEMPT_RT kernel, where kernel threads preempt often, it happens.
	 */
	sw = thread_switches();
	ADV("1000");
	v = mget(self->cpu, "ctr0");
	if (thread_switches() == sw) {
		EXPECT_EQ((START + 1000) & MASK48, v);
	} else {
		TH_LOG("switched out after the advance: counter %llu", v);
	}
	EXPECT_NE(0, mget(self->cpu, "sel0"));

	/* Moved to another CPU: unloaded here, counter and select cleared. */
	ASSERT_EQ(0, hwpmc_pin_cpu(self->other));
	EXPECT_EQ(0, mget(self->cpu, "ctr0"));
	EXPECT_EQ(0, mget(self->cpu, "sel0"));
	if (fx) {
		EXPECT_EQ(0, mget(self->cpu, "fixed0"));
		EXPECT_EQ(0, mget(self->cpu, "fixed_ctrl") & 0xf);
	}
	EXPECT_EQ(1000, rd(_metadata, self->fd, id));
	if (fx)
		EXPECT_EQ(1000, rd(_metadata, self->fd, fx));

	/* Back, then stopped: cleared as well. */
	ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
	ADV("500");
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	EXPECT_EQ(0, mget(self->cpu, "ctr0"));
	EXPECT_EQ(0, mget(self->cpu, "sel0"));
	EXPECT_EQ(1500, rd(_metadata, self->fd, id));
	if (fx) {
		ASSERT_EQ(0, hwpmc_stop(self->fd, fx));
		EXPECT_EQ(0, mget(self->cpu, "fixed0"));
		ASSERT_EQ(0, hwpmc_release(self->fd, fx));
	}

	/* A counter that holds its owner's count (RDPMC) too. */
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ADV("77");
	EXPECT_EQ(1577, mget(self->cpu, "ctr0"));
	ASSERT_EQ(0, hwpmc_pin_cpu(self->other));
	EXPECT_EQ(0, mget(self->cpu, "ctr0"));
	EXPECT_EQ(0, mget(self->cpu, "sel0"));
	ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
	EXPECT_EQ(1577, mget(self->cpu, "ctr0"));	/* loaded again */
	EXPECT_EQ(1577, rd(_metadata, self->fd, id));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(0, mget(self->cpu, "ctr0"));
}

/*
 * A counting PMC whose counter holds its count (PMCGETMSR) raises no PMI:
 * hwpmc sees its wraps only in the counter itself, when it folds the
 * counter into the PMC's count, at a read and when the thread is switched
 * out (<hwpmc/pmc.h>).  Fewer than 2^48 events between two folds count
 * exactly, however often the counter wraps in all; 2^48 or more between
 * two folds leave the count short by 2^48.  So three advances of HALF
 * read 3 * HALF modulo 2^48 when nothing folds between them (one write,
 * "x3": no switch), and exactly 3 * HALF when the thread is switched out
 * (a sleep) or reads the PMC between them.
 */
TEST_F_TIMEOUT(hw, held_count_folds_modulo_width, 120)
{
	const __u64 low = (3 * HALF) & MASK48;
	/* A load writes all 48 bits (not 32 sign-extended: intel-nofw). */
	bool fw = variant->max_period == MASK48 >> 1;
	__u32 id, idx;
	long sw;
	int i;

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));

	/* No fold between the advances: 2^48 events are lost. */
	ADV("%llu x3", HALF);
	if (fw)
		EXPECT_EQ(low, mget(self->cpu, "ctr0"));
	EXPECT_EQ(low, rd(_metadata, self->fd, id));

	/*
	 * Switched out after each advance: each folded, none lost.  (A sleep
	 * whose timer expires before the thread blocks switches nothing:
	 * sleep until a switch came.)
	 */
	for (i = 0; i < 3; i++) {
		ADV("%llu", HALF);
		sw = thread_switches();
		do
			usleep(1000);
		while (thread_switches() == sw);
	}
	EXPECT_EQ(low + 3 * HALF, rd(_metadata, self->fd, id));

	/* Read after each advance: the same. */
	for (i = 0; i < 3; i++) {
		ADV("%llu", HALF);
		EXPECT_EQ(low + (4 + i) * HALF, rd(_metadata, self->fd, id));
	}
	/* No PMI was taken: the counter held the count all along. */
	if (fw)
		EXPECT_EQ((low + 6 * HALF) & MASK48, mget(self->cpu, "ctr0"));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
}

/* What hwpmc reads as perf's /sys/devices/cpu/rdpmc ("real": the file). */
static int set_perf_rdpmc(const char *v)
{
	int fd = open(MODEL_DIR "/perf_rdpmc", O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		err = errno;
	close(fd);
	return err;
}

/*
 * perf's rdpmc setting is honoured: 0 (RDPMC never) makes PMCGETMSR fail
 * with EPERM, and so does a setting that cannot be read (fail closed); 1
 * and 2 grant it.  CR4.PCE is set on the CPU that runs the granted
 * process.  (The guest's perf has no PMU, so no /sys/devices/cpu/rdpmc:
 * "real" reads as 1, as the kernel then behaves.)
 */
TEST_F_TIMEOUT(hw, rdpmc_honours_perf_setting, 120)
{
	static const char *const refuse[] = { "0", "fail" };
	static const char *const grant[] = { "1", "2", "real" };
	__u32 id, idx;
	unsigned int i;
	__u64 v;
	int sig;

	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, set_perf_rdpmc(refuse[i]));
		EXPECT_EQ(EPERM, hwpmc_getmsr(self->fd, id, &idx))
			TH_LOG("perf_rdpmc %s", refuse[i]);
		EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(0, &v));
		EXPECT_EQ(0, mget(self->cpu, "cr4_pce"));
	}
	/* Refused, it may still be attached elsewhere: nothing was handed out. */
	ASSERT_EQ(0, hwpmc_detach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, set_perf_rdpmc(grant[i]));
		ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx))
			TH_LOG("perf_rdpmc %s", grant[i]);
		EXPECT_EQ(1, mget(self->cpu, "cr4_pce"));
		sig = hwpmc_rdpmc_probe(idx, &v);
		EXPECT_TRUE(sig == SIGILL || sig == 0) TH_LOG("rdpmc: signal %d", sig);
	}
	/* Set to 0 once granted: PMCGETMSR is refused again. */
	ASSERT_EQ(0, set_perf_rdpmc("0"));
	EXPECT_EQ(EPERM, hwpmc_getmsr(self->fd, id, &idx));
	ASSERT_EQ(0, set_perf_rdpmc("real"));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(0, &v));
	EXPECT_EQ(0, mget(self->cpu, "cr4_pce"));
}

/* Child of a granted process: its RDPMC and its CPU's PCE (bits). */
static int fork_probe(int cpu)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid) {
		__u64 v, pce = 0;
		int sig = hwpmc_rdpmc_probe(0, &v);

		/* debugfs: root only (uid 65534 has the RDPMC probe). */
		if (!geteuid() && model_get(cpu, "cr4_pce", &pce))
			pce = 9;
		_exit((sig == SIGSEGV ? 0 : 1) | (pce == 0 ? 0 : 2));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Granted in @fd's owner (this process): RDPMC allowed here, not in a
 * forked child (#GP, CR4.PCE clear while it runs), and still here after.
 * 0, or the step that failed (no harness assertion: it also runs in a
 * child of the test).
 */
static int rdpmc_fork_check(int fd, __u32 class, int cpu)
{
	__u32 id, idx;
	__u64 v;
	int sig, err = 0;

	if (hwpmc_alloc_cfg(fd, class, EV_INSTR, 0, PMC_MODE_TC, 0,
			    PMC_CPU_ANY, 0, &id))
		return 10;
	if (hwpmc_attach(fd, id, PMC_PID_SELF) ||
	    hwpmc_getmsr(fd, id, &idx))
		return 11;
	sig = hwpmc_rdpmc_probe(idx, &v);
	if (sig != SIGILL && sig)
		err = 12;		/* not granted here */
	else
		err = fork_probe(cpu);	/* 1: RDPMC in the child, 2: PCE */
	sig = hwpmc_rdpmc_probe(idx, &v);
	if (!err && sig != SIGILL && sig)
		err = 13;		/* the fork took it from the parent */
	if (hwpmc_release(fd, id))
		err = err ? err : 14;
	return err;
}

/*
 * The grant is the process's: a forked child (root's, and an
 * unprivileged user's) cannot use RDPMC.
 */
TEST_F_TIMEOUT(hw, rdpmc_not_inherited, 120)
{
	struct hwpmc_child c;

	EXPECT_EQ(0, rdpmc_fork_check(self->fd, variant->gp_class, self->cpu))
		TH_LOG("as root: 1 = RDPMC allowed in the child, 2 = its CR4.PCE set");
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 1));
	c.pid = fork();
	ASSERT_LE(0, c.pid);
	if (!c.pid) {
		int fd;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(200);
		fd = hwpmc_open();
		if (fd < 0)
			_exit(201);
		_exit(rdpmc_fork_check(fd, variant->gp_class, self->cpu));
	}
	c.tx = c.rx = -1;
	EXPECT_EQ(0, hwpmc_child_wait(&c)) TH_LOG("as uid 65534");
	EXPECT_EQ(0, hwpmc_sysctl_set(SYSCTL_UNPRIV_HW, 0));
}

struct lazy_thread {
	int cpu;
	int ready[2], go[2];
	int sig_before, sig_after;
	__u32 idx;
};

static void *lazy_thread_fn(void *p)
{
	struct lazy_thread *t = p;
	__u64 v;
	char c = 0;

	hwpmc_pin_cpu(t->cpu);
	t->sig_before = hwpmc_rdpmc_probe(t->idx, &v);
	if (write(t->ready[1], &c, 1) != 1 || read(t->go[0], &c, 1) != 1)
		return NULL;
	t->sig_after = hwpmc_rdpmc_probe(t->idx, &v);
	return NULL;
}

/*
 * Revoked while a CPU holds the process's mm lazily (a thread of it ran
 * there and sleeps; the idle task borrows its mm): CR4.PCE is cleared
 * there too, so when the thread comes back to that CPU (the same mm: no
 * switch_mm() update) it gets #GP.
 */
TEST_F_TIMEOUT(hw, rdpmc_revoked_on_lazy_cpus, 120)
{
	struct lazy_thread t = { .cpu = self->other };
	pthread_t th;
	__u32 id;
	char c = 0;

	if (self->other < 0)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pipe(t.ready));
	ASSERT_EQ(0, pipe(t.go));
	ASSERT_EQ(0, hwpmc_alloc_cfg(self->fd, variant->gp_class, EV_INSTR, 0,
				     PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &t.idx));
	ASSERT_EQ(0, pthread_create(&th, NULL, lazy_thread_fn, &t));
	ASSERT_EQ(1, read(t.ready[0], &c, 1));
	usleep(50 * 1000);		/* the thread sleeps, its CPU idles */
	TH_LOG("cpu %d while the thread sleeps: cr4_pce %llu", self->other,
	       (unsigned long long)mget(self->other, "cr4_pce"));
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	EXPECT_EQ(0, mget(self->other, "cr4_pce"));
	ASSERT_EQ(1, write(t.go[1], &c, 1));
	pthread_join(th, NULL);
	EXPECT_TRUE(t.sig_before == SIGILL || t.sig_before == 0)
		TH_LOG("granted: signal %d", t.sig_before);
	EXPECT_EQ(SIGSEGV, t.sig_after);
}

TEST_HARNESS_MAIN
