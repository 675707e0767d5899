// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 hardware classes on real counters: instructions retired by a
 * loop of known length within 0.1% of the exact count, cycles that never
 * go backwards, samples at a period that land in the hot loop, and user
 * RDPMC reading the PMC's count after PMCGETMSR.
 *
 * Every test SKIPs where GETCPUINFO lists no IAP or K8 class (a virtual
 * machine without a PMU, such as the QEMU guests of selftests/run), where
 * the test flavor's PMU model stands in for the hardware (its counters
 * only move when a test says so), or where perf (the NMI watchdog) holds
 * the counters.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <sched.h>

#define NO_PMU "no hardware PMU (CPUID leaf 0AH / AMD PerfMon absent): this test needs real counters"
#define MODEL_DIR "/sys/kernel/debug/hwpmc-model"

/* The loop: 2 instructions per iteration (dec, jnz); @n must not be 0. */
static void __attribute__((noipa)) spin(unsigned long n)
{
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+c"(n) : : "cc");
}

/* The same loop between two labels, for the sampling test. */
extern const char hwreal_hot_begin[], hwreal_hot_end[];

static void __attribute__((noipa)) hot(unsigned long n)
{
	__asm__ volatile(".globl hwreal_hot_begin\n"
			 "hwreal_hot_begin:\n\t"
			 "dec %0\n\t"
			 "jnz hwreal_hot_begin\n"
			 ".globl hwreal_hot_end\n"
			 "hwreal_hot_end:\n"
			 : "+c"(n) : : "cc");
}

/* The test flavor loaded with pmu_model=intel|amd? */
static int pmu_model_loaded(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/module/hwpmc/parameters/pmu_model", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] && buf[0] != '\n';
}

/* perf's rdpmc setting 2: RDPMC is allowed to every process anyway. */
static int rdpmc_always(void)
{
	return hwpmc_sysctl_get("/sys/bus/event_source/devices/cpu/rdpmc") == 2 ||
	       hwpmc_sysctl_get("/sys/bus/event_source/devices/cpu_core/rdpmc") == 2;
}

FIXTURE(real) {
	int fd;
	int intel;
	__u32 gp_class;		/* IAP or K8 */
	__u32 width;
	__u32 ev_instr;		/* instructions retired */
	__u32 ev_cycles;	/* core cycles */
	char log[64];
};

FIXTURE_SETUP(real)
{
	struct pmc_op_getcpuinfo ci;
	const struct pmc_classinfo *c;

	self->fd = -1;
	snprintf(self->log, sizeof(self->log), "/tmp/hwreal-%d.log", getpid());
	if (!access(MODEL_DIR, F_OK) || pmu_model_loaded())
		SKIP(return, "the test flavor's PMU model is loaded, not real counters: %s",
		     NO_PMU);
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s (is hwpmc loaded?)", HWPMC_DEV,
				      strerror(errno));
	ASSERT_EQ(0, hwpmc_cpuinfo(self->fd, &ci));
	c = hwpmc_classinfo(&ci, PMC_CLASS_IAP);
	self->intel = c != NULL;
	if (!c)
		c = hwpmc_classinfo(&ci, PMC_CLASS_K8);
	if (!c)
		SKIP(return, NO_PMU);
	self->gp_class = c->pm_class;
	self->width = c->pm_width;
	self->ev_instr = 0xc0;		/* both vendors */
	self->ev_cycles = self->intel ? 0x3c : 0x76;
	/* Stay on one CPU: fewer migrations, steadier counts. */
	ASSERT_EQ(0, hwpmc_pin_cpu(sched_getcpu()));
}

FIXTURE_TEARDOWN(real)
{
	if (self->fd >= 0)
		close(self->fd);
	unlink(self->log);
}

/* PMCALLOCATE that SKIPs the test if perf holds the counters. */
#define ALLOC_OR_SKIP(...) do {						\
	int __err = hwpmc_alloc_cfg(__VA_ARGS__);			\
									\
	if (__err == EBUSY)						\
		SKIP(return, "the counters are in use by perf (the NMI watchdog?): sysctl kernel.nmi_watchdog=0 frees them"); \
	ASSERT_EQ(0, __err);						\
} while (0)

/* Events counted by @id across spin(@n), between two reads. */
static __u64 measure(int fd, __u32 id, unsigned long n, int *err)
{
	__u64 a = 0, b = 0;

	*err = hwpmc_read(fd, id, &a);
	spin(n);
	if (!*err)
		*err = hwpmc_read(fd, id, &b);
	return b - a;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Median of five measurements. */
static __u64 median_measure(int fd, __u32 id, unsigned long n, int *err)
{
	__u64 m[5];
	int i;

	for (i = 0; i < 5; i++) {
		m[i] = measure(fd, id, n, err);
		if (*err)
			return 0;
	}
	qsort(m, 5, sizeof(m[0]), cmp_u64);
	return m[2];
}

static void check_instructions(struct __test_metadata *_metadata, int fd,
			       __u32 id, const char *what)
{
	const unsigned long n = 10000000, small = 1000;
	__u64 big, base, want = 2 * n;
	double err_pct;
	int err;

	ASSERT_EQ(0, hwpmc_start(fd, id));
	spin(1000);				/* warm up */
	base = median_measure(fd, id, small, &err);
	ASSERT_EQ(0, err);
	big = median_measure(fd, id, n, &err);
	ASSERT_EQ(0, err);
	err_pct = 100.0 * ((double)big - (double)want) / want;
	TH_LOG("%s: spin(%lu) retired %llu user instructions (exact %llu, %+.4f%%); spin(%lu): %llu",
	       what, n, (unsigned long long)big, (unsigned long long)want,
	       err_pct, small, (unsigned long long)base);
	/* Within 0.1% of the exact count, and of it plus the overhead. */
	EXPECT_GE(big, want - want / 1000);
	EXPECT_LE(big, want + want / 1000);
	EXPECT_GE(big - base, (want - 2 * small) - want / 1000);
	EXPECT_LE(big - base, (want - 2 * small) + want / 1000);
	ASSERT_EQ(0, hwpmc_stop(fd, id));
}

TEST_F_TIMEOUT(real, instructions_retired_within_0_1_percent, 120)
{
	__u32 id, fx;

	ALLOC_OR_SKIP(self->fd, self->gp_class, self->ev_instr,
		      PMC_X86_CONFIG_USR, PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id);
	check_instructions(_metadata, self->fd, id,
			   self->intel ? "IAP 0xc0" : "K8 0xc0");
	if (self->intel) {
		ALLOC_OR_SKIP(self->fd, PMC_CLASS_IAF, 0, PMC_X86_CONFIG_USR,
			      PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &fx);
		check_instructions(_metadata, self->fd, fx, "IAF-0");
	}
}

static void check_monotonic(struct __test_metadata *_metadata, int fd,
			    __u32 id, const char *what)
{
	const unsigned long n = 1000000;
	__u64 prev = 0, v = 0, first, before, after;
	int i, back = 0;

	ASSERT_EQ(0, hwpmc_start(fd, id));
	ASSERT_EQ(0, hwpmc_read(fd, id, &first));
	prev = first;
	for (i = 0; i < 2000; i++) {
		if (i % 100 == 0)
			sched_yield();
		spin(i + 1);
		ASSERT_EQ(0, hwpmc_read(fd, id, &v));
		if (v < prev)
			back++;
		prev = v;
	}
	EXPECT_EQ(0, back);
	EXPECT_LT(first, v);
	/* A dependent dec per iteration: at least a cycle each. */
	ASSERT_EQ(0, hwpmc_read(fd, id, &before));
	spin(n);
	ASSERT_EQ(0, hwpmc_read(fd, id, &after));
	TH_LOG("%s: %llu cycles over 2000 reads, %llu for spin(%lu)", what,
	       (unsigned long long)(v - first),
	       (unsigned long long)(after - before), n);
	EXPECT_LE(n - n / 10, after - before);
	ASSERT_EQ(0, hwpmc_stop(fd, id));
}

TEST_F_TIMEOUT(real, cycles_monotonic, 120)
{
	__u32 id, fx;

	ALLOC_OR_SKIP(self->fd, self->gp_class, self->ev_cycles,
		      PMC_X86_CONFIG_USR, PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id);
	check_monotonic(_metadata, self->fd, id,
			self->intel ? "IAP 0x3c" : "K8 0x76");
	if (self->intel) {
		ALLOC_OR_SKIP(self->fd, PMC_CLASS_IAF, 1, PMC_X86_CONFIG_USR,
			      PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &fx);
		check_monotonic(_metadata, self->fd, fx, "IAF-1");
	}
}

struct hot_samples {
	__u32 pmcid;
	int n, user, in_hot, wrong_pid;
	pid_t pid;
	__u64 dropped;
};

static int hot_fn(const struct pmclog_header *h, void *arg)
{
	const struct pmclog_callchain *cc = (const void *)h;
	struct hot_samples *s = arg;
	__u64 pc;

	if (h->pl_type == PMCLOG_TYPE_DROPNOTIFY) {
		s->dropped += ((const struct pmclog_dropnotify *)h)->pl_samples;
		return 0;
	}
	if (h->pl_type != PMCLOG_TYPE_CALLCHAIN || cc->pl_pmcid != s->pmcid)
		return 0;
	s->n++;
	if (cc->pl_pid != (__u32)s->pid)
		s->wrong_pid++;
	if (!(cc->pl_flags & PMCLOG_CC_F_USER) || cc->pl_nkernel >= cc->pl_npc)
		return 0;
	s->user++;
	pc = cc->pl_pc[cc->pl_nkernel];
	/* The PC after the overflowing instruction (skid: a few bytes). */
	if (pc >= (__u64)(uintptr_t)hwreal_hot_begin &&
	    pc <= (__u64)(uintptr_t)hwreal_hot_end + 16)
		s->in_hot++;
	return 0;
}

TEST_F_TIMEOUT(real, samples_land_in_the_hot_loop, 120)
{
	const unsigned long n = 500000000;
	const __u64 period = 1000003;
	struct hot_samples s = { 0 };
	int logfd, want;
	size_t len;
	char *buf;
	__u32 id;

	logfd = open(self->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_configure_log(self->fd, logfd));
	close(logfd);
	ALLOC_OR_SKIP(self->fd, self->gp_class, self->ev_instr,
		      PMC_X86_CONFIG_USR, PMC_MODE_TS, PMC_F_CALLCHAIN,
		      PMC_CPU_ANY, period, &id);
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	hot(n);
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	ASSERT_EQ(0, hwpmc_flushlog(self->fd));
	buf = hwpmc_slurp(self->log, &len);
	ASSERT_TRUE(buf != NULL);
	s.pmcid = id;
	s.pid = getpid();
	ASSERT_LE(0, hwpmc_for_each_record(buf, len, hot_fn, &s));
	free(buf);
	want = (int)(2 * n / period);
	TH_LOG("%d samples (about %d expected, %llu dropped), %d in user mode, %d in the loop [%p, %p)",
	       s.n, want, (unsigned long long)s.dropped, s.user, s.in_hot,
	       hwreal_hot_begin, hwreal_hot_end);
	EXPECT_GE(s.n + (int)s.dropped, want - want / 10);
	EXPECT_LE(s.n + (int)s.dropped, want + want / 10 + 2);
	EXPECT_EQ(0, s.wrong_pid);
	EXPECT_GE(s.in_hot, s.n - s.n / 20);	/* 95% */
}

/*
 * PMCGETMSR on real hardware: RDPMC in this process reads the PMC's
 * count (modulo the counter width), between two PMCRW reads.
 */
TEST_F_TIMEOUT(real, rdpmc_reads_the_count, 120)
{
	__u64 mask = self->width >= 64 ? ~0ULL : (1ULL << self->width) - 1;
	__u64 before, r = 0, after;
	__u32 id, idx;
	int i, sig;

	ALLOC_OR_SKIP(self->fd, self->gp_class, self->ev_instr,
		      PMC_X86_CONFIG_USR, PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id);
	ASSERT_EQ(0, hwpmc_attach(self->fd, id, PMC_PID_SELF));
	ASSERT_EQ(0, hwpmc_getmsr(self->fd, id, &idx));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	for (i = 0; i < 100; i++) {
		spin(10000);
		ASSERT_EQ(0, hwpmc_read(self->fd, id, &before));
		sig = hwpmc_rdpmc_probe(idx, &r);
		ASSERT_EQ(0, sig) TH_LOG("rdpmc(%#x): signal %d", idx, sig);
		ASSERT_EQ(0, hwpmc_read(self->fd, id, &after));
		if (i == 99 || (r & mask) < (before & mask) ||
		    (r & mask) > (after & mask))
			TH_LOG("PMCRW %llu, RDPMC %llu, PMCRW %llu",
			       (unsigned long long)before,
			       (unsigned long long)(r & mask),
			       (unsigned long long)after);
		/* The reads straddle the RDPMC (no wrap this early). */
		EXPECT_LE(before & mask, r & mask);
		EXPECT_GE(after & mask, r & mask);
	}
	ASSERT_EQ(0, hwpmc_release(self->fd, id));
	if (!rdpmc_always())
		EXPECT_EQ(SIGSEGV, hwpmc_rdpmc_probe(idx, &r));
}

TEST_HARNESS_MAIN
