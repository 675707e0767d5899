// SPDX-License-Identifier: GPL-2.0
/*
 * System scope, rows and administration: row dispositions exactly as
 * hwpmc(4) "PMC ROW DISPOSITIONS", GETPMCINFO, PMCADMIN, the TSC class,
 * SOFT system counting, the SOFT event list, driver statistics, and CPU
 * hotplug while PMCs count.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <x86intrin.h>

#define MAXROWS 64

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Back to every CPU. */
static void unpin(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

FIXTURE(sys) {
	int fd;
	int soft_first;
	__u32 soft_n;
	int tsc_row;
	struct pmc_info info[MAXROWS];
	__u32 n;
};

FIXTURE_SETUP(sys)
{
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	self->soft_first = hwpmc_class_firstrow(self->fd, PMC_CLASS_SOFT,
						&self->soft_n);
	self->tsc_row = hwpmc_class_firstrow(self->fd, PMC_CLASS_TSC, NULL);
	ASSERT_LE(0, self->soft_first);
	ASSERT_LE(0, self->tsc_row);
}

FIXTURE_TEARDOWN(sys)
{
	close(self->fd);
	/* A test that failed with CPU 1 offline leaves it online again. */
	if (!access("/sys/devices/system/cpu/cpu1/online", F_OK))
		hwpmc_cpu_set_online(1, 1);
}

static struct pmc_info *row_info(struct __test_metadata *_metadata,
				 FIXTURE_DATA(sys) *self, int cpu, int row)
{
	self->n = MAXROWS;
	if (hwpmc_pmcinfo(self->fd, cpu, self->info, &self->n))
		return NULL;
	return row < (int)self->n ? &self->info[row] : NULL;
}

TEST_F(sys, pmcinfo_names_and_free_rows)
{
	struct pmc_op_getpmcinfo g = { .pm_cpu = 0 };
	struct pmc_info *pi;
	__u32 r;

	/* Count query, then too small a buffer: E2BIG with the count. */
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETPMCINFO, &g));
	EXPECT_EQ(1 + self->soft_n, g.pm_npmc);
	g.pm_info = (__u64)(uintptr_t)self->info;
	g.pm_npmc = 1;
	EXPECT_EQ(E2BIG, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETPMCINFO, &g));
	EXPECT_EQ(1 + self->soft_n, g.pm_npmc);

	pi = row_info(_metadata, self, 0, self->tsc_row);
	ASSERT_NE(NULL, pi);
	EXPECT_STREQ("TSC-0", pi->pm_name);
	EXPECT_EQ(PMC_CLASS_TSC, pi->pm_class);
	for (r = 0; r < self->soft_n; r++) {
		char want[32];

		pi = &self->info[self->soft_first + r];
		snprintf(want, sizeof(want), "SOFT-%u", r);
		EXPECT_STREQ(want, pi->pm_name);
		EXPECT_EQ(PMC_CLASS_SOFT, pi->pm_class);
		EXPECT_EQ(1, pi->pm_enabled);
		EXPECT_EQ(PMC_DISP_FREE, pi->pm_rowdisp);
		EXPECT_EQ(PMC_STATE_FREE, pi->pm_state);
		EXPECT_EQ(-1, pi->pm_ownerpid);
		EXPECT_EQ(PMC_MODE_INVALID, pi->pm_mode);
	}
}

/* FREE -> THREAD with a process PMC; FREE -> STANDALONE with a system one;
 * a THREAD row is never given to a system PMC and vice versa.
 */
TEST_F(sys, row_dispositions)
{
	struct pmc_info *pi;
	__u32 tc, sc, r, tc_row = ~0u, sc_row = ~0u;

	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &tc));
	ASSERT_EQ(0, row_info(_metadata, self, 0, 0) ? 0 : -1);
	for (r = 0; r < self->n; r++)
		if (self->info[r].pm_rowdisp == PMC_DISP_THREAD)
			tc_row = r;
	ASSERT_NE(~0u, tc_row);
	/* The process PMC's row shows THREAD on every CPU. */
	pi = row_info(_metadata, self, 1, tc_row);
	if (pi)
		EXPECT_EQ(PMC_DISP_THREAD, pi->pm_rowdisp);

	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SCHED_SWITCH, 0, &sc));
	ASSERT_EQ(0, row_info(_metadata, self, 0, 0) ? 0 : -1);
	for (r = 0; r < self->n; r++)
		if (self->info[r].pm_ownerpid == getpid())
			sc_row = r;
	ASSERT_NE(~0u, sc_row);
	EXPECT_NE(tc_row, sc_row);
	pi = &self->info[sc_row];
	EXPECT_EQ(PMC_DISP_STANDALONE, pi->pm_rowdisp);
	EXPECT_EQ(PMC_STATE_ALLOCATED, pi->pm_state);
	EXPECT_EQ(PMC_MODE_SC, pi->pm_mode);
	EXPECT_EQ(HWPMC_EV_GLOBAL(PMC_CLASS_SOFT, PMC_SOFT_SCHED_SWITCH),
		  pi->pm_event);
	ASSERT_EQ(0, hwpmc_start(self->fd, sc));
	pi = row_info(_metadata, self, 0, sc_row);
	ASSERT_NE(NULL, pi);
	EXPECT_EQ(PMC_STATE_RUNNING, pi->pm_state);

	/* Released: both rows are FREE again. */
	ASSERT_EQ(0, hwpmc_release(self->fd, sc));
	ASSERT_EQ(0, hwpmc_release(self->fd, tc));
	pi = row_info(_metadata, self, 0, sc_row);
	ASSERT_NE(NULL, pi);
	EXPECT_EQ(PMC_DISP_FREE, self->info[sc_row].pm_rowdisp);
	EXPECT_EQ(PMC_DISP_FREE, self->info[tc_row].pm_rowdisp);
	EXPECT_EQ(-1, self->info[sc_row].pm_ownerpid);
}

/* A row disabled on one CPU is STANDALONE: no process PMC may use it, and
 * no system PMC on that CPU; enabling returns it.
 */
TEST_F(sys, admin_disable_enable)
{
	__u32 r, ids[MAXROWS], n = 0, i;
	int row = self->soft_first;
	struct pmc_info *pi;

	ASSERT_EQ(0, hwpmc_admin(self->fd, 0, row, PMC_STATE_DISABLED));
	/* Idempotent. */
	ASSERT_EQ(0, hwpmc_admin(self->fd, 0, row, PMC_STATE_DISABLED));
	pi = row_info(_metadata, self, 0, row);
	ASSERT_NE(NULL, pi);
	EXPECT_EQ(0, pi->pm_enabled);
	EXPECT_EQ(PMC_STATE_DISABLED, pi->pm_state);
	EXPECT_EQ(PMC_DISP_STANDALONE, pi->pm_rowdisp);

	/* Process PMCs: only soft_n - 1 rows available now. */
	for (r = 0; r < self->soft_n; r++) {
		if (hwpmc_soft_tc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &ids[n]))
			break;
		n++;
	}
	EXPECT_EQ(self->soft_n - 1, n);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, hwpmc_release(self->fd, ids[i]));

	/* System PMCs on CPU 0 skip the disabled row. */
	n = 0;
	for (r = 0; r < self->soft_n; r++) {
		if (hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &ids[n]))
			break;
		n++;
	}
	EXPECT_EQ(self->soft_n - 1, n);
	pi = row_info(_metadata, self, 0, row);
	ASSERT_NE(NULL, pi);
	EXPECT_EQ(-1, pi->pm_ownerpid);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, hwpmc_release(self->fd, ids[i]));

	ASSERT_EQ(0, hwpmc_admin(self->fd, 0, row, PMC_STATE_FREE));
	pi = row_info(_metadata, self, 0, row);
	ASSERT_NE(NULL, pi);
	EXPECT_EQ(1, pi->pm_enabled);
	EXPECT_EQ(PMC_DISP_FREE, pi->pm_rowdisp);
}

/* TSC: one shared row; two owners read it; a read is the TSC. */
TEST_F(sys, tsc_shared_and_reads_rdtsc)
{
	int other = hwpmc_open();
	__u32 a, b;
	__u64 v1, v2, t0, t1;
	struct pmc_op_caps caps;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, hwpmc_alloc(self->fd, PMC_CLASS_TSC, 0, PMC_MODE_SC, 0,
				 0, 0, &a));
	ASSERT_EQ(0, hwpmc_alloc(other, PMC_CLASS_TSC, 0, PMC_MODE_SC, 0, 0,
				 0, &b));
	ASSERT_EQ(0, hwpmc_start(self->fd, a));
	t0 = __rdtsc();
	ASSERT_EQ(0, hwpmc_read(self->fd, a, &v1));
	ASSERT_EQ(0, hwpmc_read(other, b, &v2));
	t1 = __rdtsc();
	EXPECT_LE(t0, v1);
	EXPECT_LE(v1, v2);
	EXPECT_LE(v2, t1);
	caps.pm_pmcid = a;
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETCAPS, &caps));
	EXPECT_EQ(PMC_CAP_READ, caps.pm_caps);
	/* Sampling and process scope do not exist for the TSC. */
	EXPECT_EQ(EINVAL, hwpmc_alloc(self->fd, PMC_CLASS_TSC, 0, PMC_MODE_SS,
				      0, 0, 100, &a));
	close(other);
}

/* SOFT system counting: syscalls made on CPU 0 are counted by CPU 0's PMC
 * and not by CPU 1's.
 */
TEST_F(sys, soft_system_counts_per_cpu)
{
	__u32 c0, c1;
	__u64 v0 = 0, v1 = 0;
	int i, n = 20000;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SYSCALL_ENTER, 0, &c0));
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SYSCALL_ENTER, 1, &c1));
	ASSERT_EQ(0, pin_to(0));
	ASSERT_EQ(0, hwpmc_start(self->fd, c0));
	ASSERT_EQ(0, hwpmc_start(self->fd, c1));
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	ASSERT_EQ(0, hwpmc_stop(self->fd, c0));
	ASSERT_EQ(0, hwpmc_stop(self->fd, c1));
	ASSERT_EQ(0, hwpmc_read(self->fd, c0, &v0));
	ASSERT_EQ(0, hwpmc_read(self->fd, c1, &v1));
	TH_LOG("cpu0 %llu cpu1 %llu", (unsigned long long)v0,
	       (unsigned long long)v1);
	EXPECT_GE(v0, (__u64)n);
	/* CPU 1 saw only the background's syscalls, far fewer. */
	EXPECT_LT(v1, (__u64)n / 2);
	/* A stopped PMC no longer counts. */
	for (i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	ASSERT_EQ(0, hwpmc_read(self->fd, c0, &v1));
	EXPECT_EQ(v0, v1);
	unpin();
}

/* CLOCK.PROF (system): non-idle CPU time of the CPU, in ns. */
TEST_F(sys, soft_system_clock_prof_busy_cpu)
{
	__u32 id;
	__u64 v = 0;
	double t0, t1;
	volatile unsigned long spin = 0;

	ASSERT_EQ(0, pin_to(0));
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_PROF, 0, &id));
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	t0 = now_s();
	while (now_s() - t0 < 0.5)
		spin++;
	t1 = now_s();
	ASSERT_EQ(0, hwpmc_read(self->fd, id, &v));
	TH_LOG("busy %.3f s, CLOCK.PROF %.3f s", t1 - t0, v / 1e9);
	/* The CPU was busy the whole time, with us or others. */
	EXPECT_GE(v / 1e9, (t1 - t0) * 0.8);
	EXPECT_LE(v / 1e9, (t1 - t0) * 1.2 + 0.05);
	unpin();
}

/* CLOCK.HARD (system): ticks at HZ, also on an idle CPU. */
TEST_F(sys, soft_system_clock_hard_ticks)
{
	__u32 id;
	__u64 v = 0;
	double t0, t1;
	long hz = 250;

	/*
	 * On CPU 0, whose ticks it counts; the clock read before the start
	 * and after the stop, so that a stall between them only adds time.
	 */
	ASSERT_EQ(0, pin_to(0));
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 0, &id));
	t0 = now_s();
	ASSERT_EQ(0, hwpmc_start(self->fd, id));
	usleep(400000);
	ASSERT_EQ(0, hwpmc_stop(self->fd, id));
	t1 = now_s();
	unpin();
	ASSERT_EQ(0, hwpmc_read(self->fd, id, &v));
	TH_LOG("%.3f s, %llu ticks", t1 - t0, (unsigned long long)v);
	/*
	 * Debian's kernels run at HZ=250.  An emulated CPU on a loaded host
	 * loses ticks, so only the upper bound is tight.
	 */
	EXPECT_GE(v, (__u64)((t1 - t0) * hz * 0.2));
	EXPECT_LE(v, (__u64)((t1 - t0) * hz * 1.1 + 2));
}

TEST_F(sys, dyn_event_list)
{
	static const char *const names[] = {
		"CLOCK.HARD", "CLOCK.PROF", "PAGE_FAULT.ALL", "PAGE_FAULT.READ",
		"PAGE_FAULT.WRITE", "SCHED.SWITCH", "SCHED.MIGRATE",
		"SYSCALL.ENTER",
	};
	struct pmc_dyn_event_descr ev[16];
	struct pmc_op_getdyneventinfo g = { .pm_class = PMC_CLASS_SOFT };
	unsigned int i;

	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDYNEVENTINFO, &g));
	ASSERT_EQ(PMC_SOFT_NEVENTS, g.pm_nevent);
	g.pm_events = (__u64)(uintptr_t)ev;
	g.pm_nevent = 2;
	EXPECT_EQ(E2BIG, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDYNEVENTINFO, &g));
	g.pm_nevent = 16;
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDYNEVENTINFO, &g));
	ASSERT_EQ(PMC_SOFT_NEVENTS, g.pm_nevent);
	for (i = 0; i < PMC_SOFT_NEVENTS; i++) {
		EXPECT_STREQ(names[i], ev[i].pm_ev_name);
		EXPECT_EQ(i, ev[i].pm_ev_code);
	}
	g.pm_class = PMC_CLASS_TSC;
	EXPECT_EQ(EINVAL, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDYNEVENTINFO, &g));
}

TEST_F(sys, driver_stats_count_calls)
{
	struct pmc_op_getdriverstats a, b;
	__u64 v;

	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDRIVERSTATS, &a));
	EXPECT_EQ(ESRCH, hwpmc_read(self->fd, 1, &v));
	ASSERT_EQ(0, hwpmc_ioctl_err(self->fd, HWPMC_IOC_GETDRIVERSTATS, &b));
	EXPECT_LE(a.pm_syscalls + 2, b.pm_syscalls);
	EXPECT_LE(a.pm_syscall_errors + 1, b.pm_syscall_errors);
	EXPECT_EQ(0, b.pm_reserved[0]);
}

/*
 * Hotplug: offline CPU 1 while a system PMC counts on CPU 0 and a process
 * PMC counts this process; both keep counting, CPU 1's system PMC keeps
 * its value, and everything works again once CPU 1 is back.
 */
TEST_F(sys, hotplug_while_counting)
{
	__u32 s0, s1, p;
	__u64 a0, a1, ap, b0, b1, bp;
	int i, round, err;

	if (sysconf(_SC_NPROCESSORS_CONF) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_SYSCALL_ENTER, 0, &s0));
	ASSERT_EQ(0, hwpmc_soft_sc(self->fd, PMC_SOFT_CLOCK_HARD, 1, &s1));
	ASSERT_EQ(0, hwpmc_soft_tc(self->fd, PMC_SOFT_SYSCALL_ENTER, 0, &p));
	ASSERT_EQ(0, hwpmc_start(self->fd, s0));
	ASSERT_EQ(0, hwpmc_start(self->fd, s1));
	ASSERT_EQ(0, hwpmc_start(self->fd, p));
	ASSERT_EQ(0, pin_to(0));
	for (round = 0; round < 3; round++) {
		/* Two CPUs as root (the rig): CPU 1 can be taken offline. */
		err = hwpmc_cpu_set_online(1, 0);
		ASSERT_EQ(0, err) TH_LOG("offlining CPU 1: %s", strerror(err));
		ASSERT_EQ(0, hwpmc_read(self->fd, s0, &a0));
		ASSERT_EQ(0, hwpmc_read(self->fd, s1, &a1));
		ASSERT_EQ(0, hwpmc_read(self->fd, p, &ap));
		for (i = 0; i < 2000; i++)
			syscall(SYS_getppid);
		usleep(50000);
		ASSERT_EQ(0, hwpmc_read(self->fd, s0, &b0));
		ASSERT_EQ(0, hwpmc_read(self->fd, s1, &b1));
		ASSERT_EQ(0, hwpmc_read(self->fd, p, &bp));
		EXPECT_GE(b0 - a0, 2000);
		EXPECT_GE(bp - ap, 2000);
		EXPECT_EQ(a1, b1);	/* no ticks on an offline CPU */
		ASSERT_EQ(0, hwpmc_cpu_set_online(1, 1));
		/* Ticking again (up to 2 s: the host may be slow to run it). */
		for (i = 0; i < 200; i++) {
			usleep(10000);
			ASSERT_EQ(0, hwpmc_read(self->fd, s1, &a1));
			if (a1 > b1)
				break;
		}
		EXPECT_GT(a1, b1);
	}
	unpin();
}

struct pmcinfo_call {
	int fd;
	void *buf;
	__u32 n;
	int err;
};

static void *pmcinfo_thread(void *arg)
{
	struct pmcinfo_call *c = arg;

	c->err = hwpmc_pmcinfo(c->fd, 0, c->buf, &c->n);
	return NULL;
}

/*
 * GETPMCINFO copies its rows out without the configuration lock: while
 * its copy-out waits on a page that userfaultfd holds back, another
 * owner can still allocate a PMC.
 */
TEST_F(sys, pmcinfo_slow_copyout_blocks_nobody)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 4 * page;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zp = { 0 };
	struct pmcinfo_call c = { .fd = self->fd };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg msg;
	pthread_t th;
	pid_t child;
	int uffd, status, i, done = 0;

	ASSERT_GE(len, MAXROWS * sizeof(struct pmc_info));
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	c.buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c.buf);
	reg.range.start = (uintptr_t)c.buf;
	reg.range.len = len;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	c.n = len / sizeof(struct pmc_info);
	ASSERT_EQ(0, pthread_create(&th, NULL, pmcinfo_thread, &c));
	/* The copy-out faults and waits. */
	pfd.fd = uffd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	EXPECT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	/* Meanwhile another owner configures: it must not wait. */
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		int fd = hwpmc_open();
		__u32 id;

		_exit(fd < 0 || hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0,
					      &id) ? 1 : 0);
	}
	for (i = 0; i < 500 && !done; i++) {
		if (waitpid(child, &status, WNOHANG) == child)
			done = 1;
		else
			usleep(10000);
	}
	EXPECT_TRUE(done) TH_LOG("PMCALLOCATE waited for GETPMCINFO's copy-out");
	/* Let the copy-out go on. */
	zp.range.start = (uintptr_t)c.buf;
	zp.range.len = len;
	ioctl(uffd, UFFDIO_ZEROPAGE, &zp);
	pthread_join(th, NULL);
	if (!done)
		ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, c.err);
	EXPECT_LT(0, c.n);
	EXPECT_NE(0, ((struct pmc_info *)c.buf)[0].pm_name[0]);
	close(uffd);
	munmap(c.buf, len);
}

TEST_HARNESS_MAIN
