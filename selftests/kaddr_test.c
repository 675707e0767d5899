// SPDX-License-Identifier: GPL-2.0
/*
 * No kernel addresses for unprivileged owners: a process-scope sampler on
 * itself (SOFT PAGE_FAULT.ALL at period 1 and CLOCK.PROF at 10 kHz, both
 * with PMC_F_CALLCHAIN) while the process runs kernel code (read() from
 * /dev/zero into fresh pages: page faults taken in kernel mode).
 *
 *  - as uid 65534: no record holds a kernel address (no CALLCHAIN program
 *    counter, MAP_IN range or PROCEXEC base in the kernel half), no
 *    kernel frames; the samples taken in the kernel are marked
 *    PMCLOG_CC_F_KERNEL_HIDDEN and start at the user-mode PC;
 *  - as root: kernel frames are there, nothing is hidden;
 *  - kernel.hwpmc.unprivileged_kernel=1 gives uid 65534 kernel frames only
 *    while perf_event_paranoid <= 1 and kptr_restrict == 0.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define LOGPATH		"/tmp/hwpmc-kaddr-test.log"
#define SYSCTL_UK	"/proc/sys/kernel/hwpmc/unprivileged_kernel"
#define SYSCTL_PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define SYSCTL_KPTR	"/proc/sys/kernel/kptr_restrict"
#define NOBODY		65534
/* Of 2048 kernel-mode faults, at least (the 256-entry ring may drop some). */
#define MIN_SAMPLES	200

/* The kernel half of the x86-64 address space: the top bit set. */
static int is_kernel_addr(__u64 a)
{
	return a >> 63;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Kernel work of the caller: page faults in kernel mode, and CPU time. */
static void kernel_work(void)
{
	size_t len = 4 << 20, done;
	char buf[65536];
	double t0;
	int fd = open("/dev/zero", O_RDONLY), round;

	if (fd < 0)
		return;
	for (round = 0; round < 2; round++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		for (done = 0; done < len;) {
			ssize_t n = read(fd, p + done, len - done);

			if (n <= 0)
				break;
			done += n;
		}
		munmap(p, len);
	}
	t0 = cpu_now();
	while (cpu_now() - t0 < 0.3)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

/*
 * In a child: become @uid (unless 0), sample itself into @logfd during
 * kernel_work(), close the log.  Exit status 0, or the step that failed.
 */
static int sampler(int logfd, uid_t uid)
{
	__u32 pf, prof;
	int fd;

	if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
		return 10;
	fd = hwpmc_open();
	if (fd < 0)
		return 11;
	if (hwpmc_configure_log(fd, logfd))
		return 12;
	if (hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_ALL,
			PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 1, &pf))
		return 13;
	if (hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF, PMC_MODE_TS,
			PMC_F_CALLCHAIN, PMC_CPU_ANY, 100000, &prof))
		return 14;
	if (hwpmc_attach(fd, pf, 0) || hwpmc_attach(fd, prof, 0))
		return 15;
	if (hwpmc_start(fd, pf) || hwpmc_start(fd, prof))
		return 16;
	kernel_work();
	if (hwpmc_stop(fd, pf) || hwpmc_stop(fd, prof))
		return 17;
	if (hwpmc_closelog(fd))
		return 18;
	close(fd);
	return 0;
}

struct kstats {
	int cc;			/* CALLCHAIN records */
	int with_kernel;	/* with pl_nkernel > 0 */
	int hidden;		/* PMCLOG_CC_F_KERNEL_HIDDEN */
	int hidden_user_pc;	/* ... that still have the user PC */
	int kaddr;		/* kernel addresses anywhere */
	int kaddr_hidden;	/* ... in a record marked hidden */
	int maps;		/* MAP_IN records */
};

static int kstats_fn(const struct pmclog_header *h, void *arg)
{
	struct kstats *k = arg;
	unsigned int i;

	switch (h->pl_type) {
	case PMCLOG_TYPE_CALLCHAIN: {
		const struct pmclog_callchain *cc = (const void *)h;
		int bad = 0;

		k->cc++;
		if (cc->pl_nkernel)
			k->with_kernel++;
		for (i = 0; i < cc->pl_npc; i++)
			bad += is_kernel_addr(cc->pl_pc[i]);
		k->kaddr += bad;
		if (cc->pl_flags & PMCLOG_CC_F_KERNEL_HIDDEN) {
			k->hidden++;
			k->kaddr_hidden += bad + cc->pl_nkernel;
			if (cc->pl_npc && !is_kernel_addr(cc->pl_pc[0]))
				k->hidden_user_pc++;
		}
		break;
	}
	case PMCLOG_TYPE_MAP_IN: {
		const struct pmclog_map_in *m = (const void *)h;

		k->maps++;
		k->kaddr += is_kernel_addr(m->pl_start) +
			    is_kernel_addr(m->pl_end - 1);
		break;
	}
	case PMCLOG_TYPE_MAP_OUT: {
		const struct pmclog_map_out *m = (const void *)h;

		k->kaddr += is_kernel_addr(m->pl_start) +
			    is_kernel_addr(m->pl_end - 1);
		break;
	}
	case PMCLOG_TYPE_PROCEXEC:
		k->kaddr += is_kernel_addr(((const struct pmclog_procexec *)h)->pl_base);
		break;
	}
	return 0;
}

/* Run sampler() as @uid in a child; the log's statistics. */
static int run_as(uid_t uid, struct kstats *k)
{
	int logfd, status;
	size_t len;
	char *buf;
	pid_t pid;

	memset(k, 0, sizeof(*k));
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(sampler(logfd, uid));
	close(logfd);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
	buf = hwpmc_slurp(LOGPATH, &len);
	unlink(LOGPATH);
	if (!buf)
		return -1;
	if (hwpmc_for_each_record(buf, len, kstats_fn, k) <= 0) {
		free(buf);
		return -1;
	}
	free(buf);
	return 0;
}

static void log_kstats(struct __test_metadata *_metadata, const char *who,
		       const struct kstats *k)
{
	TH_LOG("%s: %d samples, %d with kernel frames, %d hidden (%d with the user PC), %d kernel addresses, %d MAP_IN",
	       who, k->cc, k->with_kernel, k->hidden, k->hidden_user_pc,
	       k->kaddr, k->maps);
}

/* The sysctls this test changes, put back after each test. */
FIXTURE(kaddr) {
	long uk, paranoid, kptr;
};

FIXTURE_SETUP(kaddr)
{
	self->uk = hwpmc_sysctl_get(SYSCTL_UK);
	self->paranoid = hwpmc_sysctl_get(SYSCTL_PARANOID);
	self->kptr = hwpmc_sysctl_get(SYSCTL_KPTR);
	ASSERT_LE(0, self->paranoid);
	ASSERT_LE(0, self->kptr);
}

FIXTURE_TEARDOWN(kaddr)
{
	if (self->uk >= 0)
		hwpmc_sysctl_set(SYSCTL_UK, self->uk);
	hwpmc_sysctl_set(SYSCTL_PARANOID, self->paranoid);
	hwpmc_sysctl_set(SYSCTL_KPTR, self->kptr);
}

/* The default: uid 65534 sees no kernel address, whatever perf allows. */
TEST_F(kaddr, nobody_sees_no_kernel_address)
{
	struct kstats k;

	/* Even with perf and kptr_restrict wide open. */
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_PARANOID, -1));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_KPTR, 0));
	ASSERT_EQ(0, run_as(NOBODY, &k));
	log_kstats(_metadata, "uid 65534", &k);
	EXPECT_LE(MIN_SAMPLES, k.cc);		/* 2 x 1024 faults of 4 KiB pages */
	EXPECT_EQ(0, k.with_kernel);
	EXPECT_EQ(0, k.kaddr);
	EXPECT_LE(MIN_SAMPLES, k.hidden);	/* the faults in read() at least */
	/* Attributed to the user-mode registers: the PC of the syscall. */
	EXPECT_LE(k.hidden * 9 / 10, k.hidden_user_pc);
	EXPECT_LT(0, k.maps);
}

/* Root (CAP_PERFMON) sees the kernel frames, nothing is hidden. */
TEST_F(kaddr, root_sees_kernel_frames)
{
	struct kstats k;

	ASSERT_EQ(0, run_as(0, &k));
	log_kstats(_metadata, "root", &k);
	EXPECT_LE(MIN_SAMPLES, k.cc);
	EXPECT_LE(MIN_SAMPLES, k.with_kernel);
	EXPECT_EQ(0, k.hidden);
	EXPECT_LT(0, k.kaddr);
}

/*
 * unprivileged_kernel=1 lets uid 65534 see kernel frames only while perf
 * would (perf_event_paranoid <= 1) and kptr_restrict is 0.
 */
TEST_F(kaddr, unprivileged_kernel_sysctl)
{
	struct kstats k;

	ASSERT_EQ(0, self->uk) TH_LOG("kernel.hwpmc.unprivileged_kernel missing or not 0 by default");
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_KPTR, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_PARANOID, 1));
	ASSERT_EQ(EINVAL, hwpmc_sysctl_set(SYSCTL_UK, 2));

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UK, 1));
	ASSERT_EQ(0, run_as(NOBODY, &k));
	log_kstats(_metadata, "sysctl 1, paranoid 1, kptr_restrict 0", &k);
	EXPECT_LE(MIN_SAMPLES, k.with_kernel);
	EXPECT_EQ(0, k.hidden);
	EXPECT_LT(0, k.kaddr);

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_PARANOID, 2));
	ASSERT_EQ(0, run_as(NOBODY, &k));
	log_kstats(_metadata, "sysctl 1, paranoid 2", &k);
	EXPECT_EQ(0, k.with_kernel);
	EXPECT_EQ(0, k.kaddr);
	EXPECT_LE(MIN_SAMPLES, k.hidden);

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_PARANOID, 1));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_KPTR, 1));
	ASSERT_EQ(0, run_as(NOBODY, &k));
	log_kstats(_metadata, "sysctl 1, paranoid 1, kptr_restrict 1", &k);
	EXPECT_EQ(0, k.with_kernel);
	EXPECT_EQ(0, k.kaddr);
	EXPECT_LE(MIN_SAMPLES, k.hidden);

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_KPTR, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_UK, 0));
	ASSERT_EQ(0, run_as(NOBODY, &k));
	log_kstats(_metadata, "sysctl 0, paranoid 1, kptr_restrict 0", &k);
	EXPECT_EQ(0, k.with_kernel);
	EXPECT_EQ(0, k.kaddr);
	EXPECT_LE(MIN_SAMPLES, k.hidden);
}

TEST_HARNESS_MAIN
