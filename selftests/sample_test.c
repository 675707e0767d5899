// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling with the SOFT class: CLOCK.PROF at rates from 1 Hz to 10 kHz,
 * samples with the right PMC and process, user PCs in the hot function,
 * user callchains through frame pointers, kernel callchains, and nothing
 * lost silently under overload (taken = logged + dropped).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define LOGPATH "/tmp/hwpmc-sample-test.log"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

/* The hot path: outer -> middle -> hot, never inlined. */
__attribute__((noinline)) void hot(double secs)
{
	double t0 = cpu_now();
	unsigned long i = 0;

	while (cpu_now() - t0 < secs)
		for (i = 0; i < 20000; i++)
			sink += i;
}

__attribute__((noinline)) void middle(double secs)
{
	hot(secs);
	sink++;
}

__attribute__((noinline)) void outer(double secs)
{
	middle(secs);
	sink++;
}

/* A child that waits for "go", runs @fn(secs), exits. */
static pid_t spawn(int *go, double secs, void (*fn)(double))
{
	pid_t pid = hwpmc_fork_gated(go);

	if (pid)
		return pid;
	fn(secs);
	_exit(0);
}

struct samples {
	__u32 pmcid;
	pid_t pid;
	int n, wrong_pid, user, in_hot, chain_ok, kernel;
	__u64 dropped, throttled;
	int ncc_all;
};

static int count_fn(const struct pmclog_header *h, void *arg)
{
	struct samples *s = arg;
	const struct pmclog_callchain *cc = (const void *)h;
	unsigned int i, u;

	if (hwpmc_add_drops(h, &s->dropped, &s->throttled))
		return 0;
	if (h->pl_type != PMCLOG_TYPE_CALLCHAIN)
		return 0;
	s->ncc_all++;
	if (cc->pl_pmcid != s->pmcid)
		return 0;
	s->n++;
	if (s->pid && cc->pl_pid != (__u32)s->pid)
		s->wrong_pid++;
	if (cc->pl_flags & PMCLOG_CC_F_USER)
		s->user++;
	if (cc->pl_nkernel)
		s->kernel++;
	u = cc->pl_nkernel;	/* first user PC */
	if (u < cc->pl_npc && hwpmc_pc_in_fn(cc->pl_pc[u], (void *)hot)) {
		s->in_hot++;
		/* hot's caller is middle, middle's caller is outer. */
		i = u + 1;
		if (i + 1 < cc->pl_npc &&
		    hwpmc_pc_in_fn(cc->pl_pc[i], (void *)middle) &&
		    hwpmc_pc_in_fn(cc->pl_pc[i + 1], (void *)outer))
			s->chain_ok++;
	}
	return 0;
}

static int read_samples(struct samples *s)
{
	size_t len;
	char *buf = hwpmc_slurp(LOGPATH, &len);
	int n;

	if (!buf)
		return -1;
	n = hwpmc_for_each_record(buf, len, count_fn, s);
	free(buf);
	return n;
}

FIXTURE(smp) {
	int fd, logfd;
};

FIXTURE_SETUP(smp)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->logfd);
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, self->logfd));
}

FIXTURE_TEARDOWN(smp)
{
	close(self->fd);
	close(self->logfd);
	unlink(LOGPATH);
}

/* Sample a busy child at @hz for @secs of CPU; check count and places. */
static void prof_rate(struct __test_metadata *_metadata,
		      FIXTURE_DATA(smp) *self, double hz, double secs,
		      __u32 flags)
{
	struct samples s = { 0 };
	__u64 cpu_ns = 0;
	__u32 id, cnt;
	double expect;
	int go, status;
	pid_t pid;

	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_TS, flags, PMC_CPU_ANY,
				 (__u64)(1e9 / hz), &id));
	/* A counting twin measures the CPU time the samples cover. */
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_CLOCK_PROF, 0, &cnt));
	pid = spawn(&go, secs, outer);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, pid));
	ASSERT_EQ(0, hwpmc_attach(self->fd, cnt, pid));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ASSERT_EQ(0, hwpmc_start(self->fd, cnt));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, hwpmc_read(self->fd, cnt, &cpu_ns));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	s.pmcid = id;
	s.pid = pid;
	ASSERT_LT(0, read_samples(&s));
	expect = cpu_ns / 1e9 * hz;
	TH_LOG("%.0f Hz over %.3f s CPU: %d samples (expected %.1f), %d in hot(), %d with outer>middle>hot",
	       hz, cpu_ns / 1e9, s.n, expect, s.in_hot, s.chain_ok);
	/*
	 * Samples taken = logged + dropped.  An emulated CPU on a loaded host
	 * can stall long enough that more periods fall due at once than the
	 * sampler takes at once (SOFT_BURST, 64; the rest are throttled), so
	 * the lower bound is loose; the upper one is not.
	 */
	if (hz <= 1) {
		/*
		 * One period a second never outruns that debt: each full
		 * period of CPU time is a sample (one may still be due when
		 * the child exits, and the two clocks may differ by a tick).
		 */
		ASSERT_LE(4, (int)expect);
		EXPECT_GE(s.n, (int)expect - 1);
		EXPECT_LE(s.n + (int)s.dropped, (int)expect + 2);
	} else {
		EXPECT_GE(s.n + (int)s.dropped, (int)(expect * 0.4) - 1);
		EXPECT_LE(s.n + (int)s.dropped, (int)(expect * 1.3) + 1);
		EXPECT_GE(s.n, (int)(expect * 0.3) - 1);
	}
	EXPECT_EQ(0, s.wrong_pid);
	/*
	 * A busy loop in user mode: most samples are in hot() (an emulated
	 * CPU spends a good part of its time in interrupts).  Not on the
	 * debug kernel, whose interrupt paths take 35-80% of a busy task's
	 * time under emulation (20-66% of its samples in hot() there, the
	 * rest in the kernel, where it was): a fifth at least.
	 */
	if (hz > 1) {
		EXPECT_GE(s.in_hot, hwpmc_debug_kernel() ? s.n / 5 : s.n / 2);
	} else if (!hwpmc_debug_kernel()) {
		/* A handful of samples, too few for a share. */
		EXPECT_LE(1, s.in_hot);
	}
	if (flags & PMC_F_CALLCHAIN)
		EXPECT_GE(s.chain_ok, s.in_hot * 9 / 10);

	close(go);
}

TEST_F(smp, clock_prof_1hz)
{
	prof_rate(_metadata, self, 1, 5.2, 0);
}

TEST_F(smp, clock_prof_100hz)
{
	prof_rate(_metadata, self, 100, 0.5, 0);
}

TEST_F(smp, clock_prof_1khz_callchain)
{
	prof_rate(_metadata, self, 1000, 0.5, PMC_F_CALLCHAIN);
}

TEST_F(smp, clock_prof_10khz)
{
	prof_rate(_metadata, self, 10000, 0.3, PMC_F_CALLCHAIN);
}

/* Every Nth system call is a sample, with the PC of the call site. */
TEST_F(smp, every_n_syscalls)
{
	struct samples s = { 0 };
	__u32 id;
	int i, n = 5000, every = 100;

	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT,
				 PMC_SOFT_SYSCALL_ENTER, PMC_MODE_TS, 0,
				 PMC_CPU_ANY, every, &id));
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, 0));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	s.pmcid = id;
	s.pid = getpid();
	ASSERT_LT(0, read_samples(&s));
	TH_LOG("%d samples of %d syscalls every %d", s.n, n, every);
	EXPECT_GE(s.n, n / every);
	EXPECT_LE(s.n, n / every + 5);
	EXPECT_EQ(s.n, s.user);		/* sys_enter: user registers */
	EXPECT_EQ(0, s.wrong_pid);
}

static void kernel_busy(double secs)
{
	double t0 = cpu_now();
	char buf[65536];
	int fd = open("/dev/zero", O_RDONLY);

	while (cpu_now() - t0 < secs)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

/* System-wide CLOCK.PROF while a CPU runs kernel code: kernel chains. */
TEST_F(smp, system_sampling_kernel_callchains)
{
	struct samples s = { 0 };
	cpu_set_t set;
	__u32 id;
	int go, status;
	pid_t pid;

	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				 PMC_MODE_SS, PMC_F_CALLCHAIN, 0, 1000000, &id));
	pid = spawn(&go, 0.4, kernel_busy);
	ASSERT_LT(0, pid);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(pid, sizeof(set), &set));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	ASSERT_EQ(1, write(go, "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	s.pmcid = id;
	ASSERT_LT(0, read_samples(&s));
	TH_LOG("%d samples on CPU 0, %d with kernel frames", s.n, s.kernel);
	EXPECT_GE(s.n, 100);
	/* read(/dev/zero) spends most of its time clearing user memory. */
	EXPECT_GE(s.kernel, s.n / 4);
	close(go);
}

struct flusher {
	int fd, stop, flushes;
};

static void *keep_flushing(void *arg)
{
	struct flusher *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		hwpmc_flushlog(f->fd);
		f->flushes++;
	}
	return NULL;
}

/*
 * Overload a tiny ring on purpose: every sample is logged or counted,
 * once, while FLUSHLOG (another thread) reports drops concurrently with
 * the drainer.
 */
TEST(overload_taken_is_logged_plus_dropped)
{
	struct pmc_op_getdriverstats a, b;
	struct samples s = { 0 };
	struct flusher f = { 0 };
	pthread_t thr;
	int fd, logfd, i;
	__u32 id;

	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(fd, logfd));
	ASSERT_EQ(0, hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_SYSCALL_ENTER,
				 PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 1,
				 &id));
	ASSERT_EQ(0, hwpmc_attach(fd, id, 0));
	ASSERT_EQ(0, hwpmc_ioctl_err(fd, HWPMC_IOC_GETDRIVERSTATS, &a));
	ASSERT_EQ(0, hwpmc_start(fd, id));
	f.fd = fd;
	ASSERT_EQ(0, pthread_create(&thr, NULL, keep_flushing, &f));
	for (i = 0; i < 200000; i++)
		syscall(SYS_getppid);
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thr, NULL);
	ASSERT_EQ(0, hwpmc_stop(fd, id));
	ASSERT_EQ(0, hwpmc_closelog(fd));
	ASSERT_EQ(0, hwpmc_ioctl_err(fd, HWPMC_IOC_GETDRIVERSTATS, &b));
	s.pmcid = id;
	s.pid = getpid();
	ASSERT_LT(0, read_samples(&s));
	TH_LOG("%d concurrent flushes", f.flushes);
	TH_LOG("taken %llu, logged %d, dropped %llu, throttled %llu (DROPNOTIFY), dropped %llu, throttled %llu (stats)",
	       (unsigned long long)(b.pm_samples_taken - a.pm_samples_taken),
	       s.ncc_all, (unsigned long long)s.dropped,
	       (unsigned long long)s.throttled,
	       (unsigned long long)(b.pm_samples_dropped - a.pm_samples_dropped),
	       (unsigned long long)(b.pm_samples_throttled - a.pm_samples_throttled));
	EXPECT_EQ(b.pm_samples_taken - a.pm_samples_taken,
		  (__u64)s.ncc_all + s.dropped + s.throttled);
	EXPECT_EQ(b.pm_samples_dropped - a.pm_samples_dropped, s.dropped);
	EXPECT_EQ(b.pm_samples_throttled - a.pm_samples_throttled,
		  s.throttled);
	/*
	 * The point was to overload: something must have been dropped, or
	 * throttled (at most max_sample_rate / HZ samples per CPU a tick).
	 */
	EXPECT_LT(0, s.dropped + s.throttled);
	close(fd);
	close(logfd);
	unlink(LOGPATH);
}

static int last_type_fn(const struct pmclog_header *h, void *arg)
{
	int *t = arg;

	t[0] = h->pl_type;
	if (h->pl_type == PMCLOG_TYPE_CALLCHAIN)
		t[1]++;
	return 0;
}

/*
 * An owner killed with sampling running and its log active: what it
 * sampled is flushed, the log ends with CLOSELOG, and the module can be
 * unloaded afterwards (the rig checks that).
 */
TEST(owner_killed_while_sampling)
{
	int ready[2], t[2] = { 0 }, status, logfd, i;
	long long c0;
	size_t len;
	char c, *buf;
	pid_t pid;

	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = hwpmc_open();
		__u32 id;

		if (fd < 0 || hwpmc_configure_log(fd, logfd) ||
		    hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF,
				PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY,
				1000000, &id) ||
		    hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		outer(100);		/* until killed */
		_exit(3);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* 50 ms of its CPU time from the start (50 periods), 10 s at most. */
	c0 = hwpmc_proc_cputime(pid);
	for (i = 0; i < 1000 && hwpmc_proc_cputime(pid) < c0 + 50000000; i++)
		usleep(10000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	buf = hwpmc_slurp(LOGPATH, &len);
	ASSERT_NE(NULL, buf);
	EXPECT_LT(0, hwpmc_for_each_record(buf, len, last_type_fn, t));
	EXPECT_EQ(PMCLOG_TYPE_CLOSELOG, t[0]);
	EXPECT_LT(10, t[1]) TH_LOG("%d samples reached the log", t[1]);
	free(buf);
	close(logfd);
	unlink(LOGPATH);
}

/* Write to each page of @p with a frame pointer that points nowhere. */
static void touch_with_bad_fp(char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4096)
		__asm__ volatile("mov %%rbp, %%r11\n\t"
				 "mov $0x10, %%rbp\n\t"
				 "movb $1, (%0)\n\t"
				 "mov %%r11, %%rbp"
				 : : "r"(p + off) : "r11", "memory");
}

static long faults_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * A PAGE_FAULT sampler with callchains, a sample every fault, and faults
 * taken with a frame pointer that points at an unmapped address: the
 * callchain walk's own fault (copy_from_user_nofault) is no fault of the
 * process.  hwpmc counted it, sampled again, walked again, faulted
 * again, until the kernel stack overflowed (fuzz_test found it).  A
 * counting PAGE_FAULT PMC counts no more faults than getrusage() saw.
 */
TEST(page_fault_sampler_bad_frame_pointer)
{
	struct pmc_op_getdriverstats a, b;
	int fd, logfd, npages = 64;
	long f0, f1;
	__u64 counted = 0;
	__u32 id, cid;
	char *p;

	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(fd, logfd));
	ASSERT_EQ(0, hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_ALL,
				 PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 1,
				 &id));
	ASSERT_EQ(0, hwpmc_soft_tc(fd, PMC_SOFT_PAGE_FAULT_ALL, 0, &cid));
	ASSERT_EQ(0, hwpmc_attach(fd, id, 0));
	ASSERT_EQ(0, hwpmc_attach(fd, cid, 0));
	p = mmap(NULL, npages * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, hwpmc_ioctl_err(fd, HWPMC_IOC_GETDRIVERSTATS, &a));
	f0 = faults_now();
	ASSERT_EQ(0, hwpmc_start(fd, cid));
	ASSERT_EQ(0, hwpmc_start(fd, id));
	touch_with_bad_fp(p, npages * 4096);
	ASSERT_EQ(0, hwpmc_stop(fd, id));
	ASSERT_EQ(0, hwpmc_stop(fd, cid));
	f1 = faults_now();
	ASSERT_EQ(0, hwpmc_ioctl_err(fd, HWPMC_IOC_GETDRIVERSTATS, &b));
	ASSERT_EQ(0, hwpmc_read(fd, cid, &counted));
	TH_LOG("%llu faults counted, %ld in getrusage, %llu samples taken",
	       (unsigned long long)counted, f1 - f0,
	       (unsigned long long)(b.pm_samples_taken - a.pm_samples_taken));
	EXPECT_LE((__u64)npages, counted);
	EXPECT_GE((__u64)(f1 - f0), counted);
	EXPECT_LE((__u64)npages, b.pm_samples_taken - a.pm_samples_taken);
	ASSERT_EQ(0, hwpmc_closelog(fd));
	munmap(p, npages * 4096);
	close(fd);
	close(logfd);
	unlink(LOGPATH);
}

TEST_HARNESS_MAIN
