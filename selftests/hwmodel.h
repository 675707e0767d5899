/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86 hardware backend end to end on the PMU model, on both vendors'
 * register layouts: what the hwmodel_*_test binaries share.  Each test of
 * the "hw" fixture runs once per layout (its variants): the fixture
 * unloads the release module and loads the test flavor
 * (build/<release>/test/hwpmc.ko) with pmu_model=intel, intel-nofw, amd
 * (PerfMonV2), amd-ext (PerfCtrExtCore, no global MSRs) or amd-legacy (4
 * K7 counters), unless that model is loaded already; every binary loads
 * the release module again with default parameters when it exits (a
 * destructor).  So each test sets up what it needs, and runs alone
 * (-r hw.VARIANT.TEST, -t TEST) or in any order.  They must run as root
 * with nothing else holding /dev/hwpmc open.
 *
 *   hwmodel_count_test   counting: rows, event selects, exact counts in
 *                        system and process scope, fixed counters, writes,
 *                        wraps, context switches
 *   hwmodel_sample_test  sampling: exact sample counts, simultaneous and
 *                        staggered overflows, period limits, process scope
 *   hwmodel_nmi_test     the PMI handler: stale overflow status, the
 *                        throttle, NMIs that are no PMI
 *   hwmodel_rdpmc_test   PMCGETMSR and user RDPMC: what leaks and what not,
 *                        perf's setting, fork, lazy CPUs
 *   hwmodel_priv_test    unprivileged owners: AnyThread, unprivileged_hw,
 *                        user mode only, period floors
 *   hwmodel_module_test  the model's own self-test, no reservation conflict,
 *                        the release module back after the test flavor
 *
 * Around every test of the fixture no NMI may be lost, none unknown to
 * the kernel, none wrongly claimed and no sample dropped (nmi_mark() in
 * the setup, nmi_check() in the teardown).
 *
 * The model's counters move only when a test writes "N", "usr N" or
 * "os N" to /sys/kernel/debug/hwpmc-model/advance: every counter enabled
 * on the writing CPU advances by N user-mode (or kernel-mode) events, so
 * the test pins itself and knows exactly what every PMC must read.  Each
 * write is a system call, between which the test may be switched out (and
 * hwpmc then folds its process PMCs' counters): "N xK" makes K advances
 * of N in one write with no switch between them.  A
 * counter that wraps with its interrupt enabled raises a real NMI, which
 * hwpmc's PMI handler takes as a sample; /sys/kernel/debug/hwpmc-model/state
 * shows the registers, so the tests also check the layouts (event selects,
 * fixed-counter control nibbles, global control and status).
 *
 * Reservation conflicts with perf: Linux's perf finds no PMU in the guest
 * (CPUID leaf 0AH is zero, AMD PerfCtrCore absent), so neither it nor the
 * NMI watchdog ever reserves a counter.  hwmodel_module_test asserts the
 * other half: no hardware row reads as unavailable, and the counters
 * hwpmc reserved are returned (allocation works again after release and
 * after a reload).  hwreserve_test plays perf's part with the test
 * flavor's hwpmc-test/hold_perfctr and checks EBUSY and pm_unavailable.
 */
#ifndef HWMODEL_H
#define HWMODEL_H

#include "kselftest_harness.h"
#include "hwpmc_log_util.h"
#include "hwpmc_model_util.h"

#include <grp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define EV_INSTR	0xc0	/* instructions retired, both vendors */
#define WIDTH		48
#define MASK48		((1ULL << WIDTH) - 1)
#define HALF		((1ULL << 47) - 1)	/* largest single advance */
/*
 * A counting PMC's counter starts at minus the longest period (and the PMI
 * sets it back there): it holds START + the events since.
 */
#define START		(-variant->max_period & MASK48)

#define CAPS_BASE	(PMC_CAP_INTERRUPT | PMC_CAP_USER | PMC_CAP_SYSTEM | \
			 PMC_CAP_READ | PMC_CAP_WRITE)
#define CAPS_GP		(CAPS_BASE | PMC_CAP_EDGE | PMC_CAP_THRESHOLD | \
			 PMC_CAP_INVERT | PMC_CAP_QUALIFIER)

/* Event-select bits, the same on both vendors. */
#define SEL_USR		(1ULL << 16)
#define SEL_OS		(1ULL << 17)
#define SEL_INT		(1ULL << 20)
#define SEL_EN		(1ULL << 22)
/* The model's LVTPC: NMI delivery, unmasked (delivery sets 0x10000). */
#define LVTPC_NMI	0x400
#define SYSCTL_UNPRIV_HW "/proc/sys/kernel/hwpmc/unprivileged_hw"
#define SYSCTL_MIN_PERIOD "/proc/sys/kernel/hwpmc/min_hw_period"

/*
 * --- the module and the model --------------------------------------------
 * hwpmc_model_util.h loads the test flavor (model_use()), puts the release
 * module back (model_restore_release(), and at exit), advances the
 * counters (model_advance(), ADV() below) and reads the registers
 * (model_get(), model_reg(), mget() below).
 */

/* @key ("ctr0", "nmis_sent") of @cpu, ~0 if absent. */
static inline __u64 mget(int cpu, const char *key)
{
	__u64 v = ~0ULL;

	model_get(cpu, key, &v);
	return v;
}

/*
 * Samples a sampling PMC with period @period takes over @n advances of
 * @step (the model and the driver: the counter starts at -period, an
 * advance that reaches zero overflows once and the counter is reloaded).
 */
static inline int expected_samples(__u64 period, __u64 step, int n)
{
	__s64 c = -(__s64)period;
	int s = 0;

	while (n--) {
		c += step;
		if (c >= 0) {
			s++;
			c = -(__s64)period;
		}
	}
	return s;
}

/*
 * This thread's context switches so far.  A process PMC is unloaded at
 * each (its counter folded into its count, reloaded when the thread comes
 * back): a test that needs the counter untouched between two points
 * compares this before and after.
 */
static inline long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* --- logs ---------------------------------------------------------------- */

struct cc_count {
	__u32 pmcid;
	int n, wrong_cpu, wrong_pid, kernel;
	__u32 cpu;
	pid_t pid;
};

static inline int cc_fn(const struct pmclog_header *h, void *arg)
{
	const struct pmclog_callchain *cc = (const void *)h;
	struct cc_count *c = arg;

	if (h->pl_type != PMCLOG_TYPE_CALLCHAIN || cc->pl_pmcid != c->pmcid)
		return 0;
	c->n++;
	if (c->cpu != PMC_CPU_ANY && cc->pl_cpu != c->cpu)
		c->wrong_cpu++;
	if (c->pid && cc->pl_pid != (__u32)c->pid)
		c->wrong_pid++;
	if (cc->pl_nkernel)
		c->kernel++;
	return 0;
}

/* CALLCHAIN records of @pmcid in the log at @path; -1 if malformed. */
static inline int count_samples(const char *path, struct cc_count *c)
{
	size_t len;
	char *buf = hwpmc_slurp(path, &len);
	int n;

	if (!buf)
		return -1;
	n = hwpmc_for_each_record(buf, len, cc_fn, c);
	free(buf);
	return n < 0 ? -1 : c->n;
}

/* --- the fixture: one variant per vendor layout ------------------------ */

/* --- NMI accounting, checked around every test ------------------------- */

#define NMI_MAX_CPUS	64

/* What the model and the driver had counted when the test started. */
struct nmi_marks {
	__u64 lost[NMI_MAX_CPUS], masked[NMI_MAX_CPUS];
	__u64 foreign;		/* NMIs that were no PMI, all CPUs */
	__u64 ignored;		/* GETDRIVERSTATS pm_intr_ignored */
	__u64 dropped;		/* GETDRIVERSTATS pm_samples_dropped */
	int kmsg;		/* /dev/kmsg, at its end */
};

static inline __u64 nmi_foreign(int ncpu)
{
	__u64 v, sum = 0;
	int c;

	for (c = 0; c < ncpu; c++)
		if (!model_get(c, "nmis_foreign", &v))
			sum += v;
	return sum;
}

static inline void nmi_mark(struct __test_metadata *_metadata, int fd,
			    int ncpu, struct nmi_marks *m)
{
	struct pmc_op_getdriverstats s;
	int c;

	for (c = 0; c < ncpu && c < NMI_MAX_CPUS; c++) {
		if (model_get(c, "nmis_lost", &m->lost[c]))
			continue;	/* offline */
		m->masked[c] = mget(c, "pmis_masked");
	}
	m->foreign = nmi_foreign(ncpu);
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s));
	m->ignored = s.pm_intr_ignored;
	m->dropped = s.pm_samples_dropped;
	m->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, m->kmsg);
	lseek(m->kmsg, 0, SEEK_END);
}

/*
 * Since nmi_mark(): no NMI the model sent got lost, no PMI found the
 * LVTPC masked (the handler unmasks it), every NMI hwpmc ignored was no
 * PMI, no sample was dropped, and the kernel saw no unknown NMI.
 */
static inline void nmi_check(struct __test_metadata *_metadata, int fd,
			     int ncpu, struct nmi_marks *m)
{
	struct pmc_op_getdriverstats s;
	char rec[2048];
	int c, unknown = 0;
	ssize_t n;

	for (c = 0; c < ncpu && c < NMI_MAX_CPUS; c++) {
		__u64 lost;

		if (model_get(c, "nmis_lost", &lost))
			continue;	/* offline */
		EXPECT_EQ(m->lost[c], lost) TH_LOG("cpu %d: NMIs lost", c);
		EXPECT_EQ(m->masked[c], mget(c, "pmis_masked"))
			TH_LOG("cpu %d: PMIs found the LVTPC masked", c);
		EXPECT_LE(mget(c, "nmis_sent"), mget(c, "nmis_seen"));
	}
	ASSERT_EQ(0, hwpmc_driverstats(fd, &s));
	EXPECT_LE(s.pm_intr_ignored - m->ignored,
		  nmi_foreign(ncpu) - m->foreign);
	EXPECT_EQ(m->dropped, s.pm_samples_dropped);
	while ((n = read(m->kmsg, rec, sizeof(rec) - 1)) > 0 ||
	       (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = 0;
		if (strstr(rec, "NMI received for unknown reason") ||
		    strstr(rec, "Dazed and confused"))
			unknown++;
	}
	close(m->kmsg);
	EXPECT_EQ(0, unknown);
}


FIXTURE(hw) {
	int fd;
	int cpu;		/* where the test runs and advances */
	int other;		/* another online CPU, or -1 */
	int ncpu;		/* possible CPUs (GETCPUINFO) */
	__u32 gp_first;		/* first row of the programmable class */
	__u32 fixed_first;
	char log[64];
	struct nmi_marks nmi;	/* NMI accounting before the test */
};

FIXTURE_VARIANT(hw) {
	const char *model;		/* pmu_model= */
	__u32 cputype;
	__u32 gp_class;			/* programmable counters */
	const char *gp_name;
	__u32 ngp;
	__u32 gp_caps;
	__u32 nfixed;			/* Intel fixed counters (IAF) */
	__u64 max_period;		/* the longest sampling period */
	bool global;			/* global control and status MSRs */
};

FIXTURE_VARIANT_ADD(hw, intel) {
	.model = "intel",
	.cputype = PMC_CPU_INTEL_ARCH,
	.gp_class = PMC_CLASS_IAP,
	.gp_name = "IAP",
	.ngp = 4,
	.gp_caps = CAPS_GP | PMC_CAP_ANYTHREAD,
	.nfixed = 3,
	.max_period = (1ULL << 47) - 1,
	.global = true,
};

/* Before Sandy Bridge: a counter is written 32 bits sign-extended. */
FIXTURE_VARIANT_ADD(hw, intel_nofw) {
	.model = "intel-nofw",
	.cputype = PMC_CPU_INTEL_ARCH,
	.gp_class = PMC_CLASS_IAP,
	.gp_name = "IAP",
	.ngp = 4,
	.gp_caps = CAPS_GP | PMC_CAP_ANYTHREAD,
	.nfixed = 3,
	.max_period = (1ULL << 31) - 1,
	.global = true,
};

FIXTURE_VARIANT_ADD(hw, amd) {
	.model = "amd",
	.cputype = PMC_CPU_AMD_V2,
	.gp_class = PMC_CLASS_K8,
	.gp_name = "K8",
	.ngp = 6,
	.gp_caps = CAPS_GP,
	.nfixed = 0,
	.max_period = (1ULL << 47) - 1,
	.global = true,
};

/* PerfCtrExtCore without PerfMonV2 (family 15h to Zen 3): no global MSRs. */
FIXTURE_VARIANT_ADD(hw, amd_ext) {
	.model = "amd-ext",
	.cputype = PMC_CPU_AMD_EXT,
	.gp_class = PMC_CLASS_K8,
	.gp_name = "K8",
	.ngp = 6,
	.gp_caps = CAPS_GP,
	.nfixed = 0,
	.max_period = (1ULL << 47) - 1,
};

/* The 4 legacy counters (K8, family 10h): no global MSRs. */
FIXTURE_VARIANT_ADD(hw, amd_legacy) {
	.model = "amd-legacy",
	.cputype = PMC_CPU_AMD_K8,
	.gp_class = PMC_CLASS_K8,
	.gp_name = "K8",
	.ngp = 4,
	.gp_caps = CAPS_GP,
	.nfixed = 0,
	.max_period = (1ULL << 47) - 1,
};


FIXTURE_SETUP(hw)
{
	struct pmc_op_getcpuinfo ci;
	const struct pmc_classinfo *c;
	char why[256] = "";
	cpu_set_t set;
	int i;

	self->fd = -1;
	if (geteuid())
		SKIP(return, "needs root: it loads the test flavor of the module");
	ASSERT_EQ(0, model_use(variant->model, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	self->cpu = self->other = -1;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (self->cpu >= 0 && self->other < 0)
			self->other = self->cpu;
		self->cpu = i;
	}
	ASSERT_LE(0, self->cpu);
	ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hwpmc_cpuinfo(self->fd, &ci));
	self->ncpu = ci.pm_ncpu;
	c = hwpmc_classinfo(&ci, variant->gp_class);
	ASSERT_TRUE(c != NULL) TH_LOG("no %s class on model-%s",
				      variant->gp_name, variant->model);
	self->gp_first = c->pm_firstrow;
	c = hwpmc_classinfo(&ci, PMC_CLASS_IAF);
	self->fixed_first = c ? c->pm_firstrow : 0;
	snprintf(self->log, sizeof(self->log), "/tmp/hwmodel-%d.log",
		 getpid());
	nmi_mark(_metadata, self->fd, self->ncpu, &self->nmi);
}

FIXTURE_TEARDOWN(hw)
{
	struct pmc_op_getcpuinfo ci;
	__u32 r, c;
	int fd;

	/* Every test: no NMI lost, none unknown, none wrongly claimed. */
	if (self->fd >= 0)
		nmi_check(_metadata, self->fd, self->ncpu, &self->nmi);
	if (self->fd >= 0)
		close(self->fd);
	unlink(self->log);
	/* Rows a failed test left disabled. */
	fd = hwpmc_open();
	if (fd >= 0 && !hwpmc_cpuinfo(fd, &ci)) {
		for (c = 0; c < ci.pm_ncpu; c++)
			for (r = 0; r < variant->ngp; r++)
				hwpmc_admin(fd, c, self->gp_first + r,
					    PMC_STATE_FREE);
	}
	if (fd >= 0)
		close(fd);
}

#define ADV(...) ASSERT_EQ(0, model_advance(__VA_ARGS__))

static inline __u64 rd(struct __test_metadata *_metadata, int fd, __u32 id)
{
	__u64 v = ~0ULL;

	EXPECT_EQ(0, hwpmc_read(fd, id, &v));
	return v;
}

/* The row @row of @cpu, as GETPMCINFO describes it. */
static inline int row_info(int fd, int cpu, __u32 row, struct pmc_info *out)
{
	struct pmc_info info[256];
	__u32 n = 256;
	int err = hwpmc_pmcinfo(fd, cpu, info, &n);

	if (err)
		return err;
	if (row >= n)
		return ERANGE;
	*out = info[row];
	return 0;
}

static inline int configure_log(int fd, const char *path)
{
	int logfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int err;

	if (logfd < 0)
		return errno;
	err = hwpmc_configure_log(fd, logfd);
	close(logfd);
	return err;
}

/* Allocate @config on this CPU's first row, start it: its event select. */
static inline __u64 sel_of(struct __test_metadata *_metadata, int fd, int cpu,
		    __u32 class, __u32 event, __u64 config)
{
	__u64 sel = ~0ULL;
	__u32 id;

	int err = hwpmc_alloc_cfg(fd, class, event, config, PMC_MODE_SC, 0,
				  cpu, 0, &id);

	EXPECT_EQ(0, err) TH_LOG("config 0x%llx", (unsigned long long)config);
	if (err)
		return sel;
	EXPECT_EQ(0, hwpmc_start(fd, id));
	sel = mget(cpu, "sel0");
	EXPECT_EQ(0, hwpmc_release(fd, id));
	EXPECT_EQ(0, mget(cpu, "sel0"));
	return sel;
}

/* A child that advances its CPU's counters by what the parent sends. */
static inline int adv_worker(struct hwpmc_child *c, void *arg)
{
	__u64 usr, os, err;

	hwpmc_close_fds_except(c->tx, c->rx, -1);
	for (;;) {
		if (hwpmc_recv_u64(c, &usr))
			return 1;
		if (!usr)
			return 0;
		if (hwpmc_recv_u64(c, &os))
			return 1;
		err = model_advance("usr %llu", (unsigned long long)usr);
		if (!err && os)
			err = model_advance("os %llu",
					    (unsigned long long)os);
		if (hwpmc_send_u64(c, err))
			return 1;
	}
}

#endif /* HWMODEL_H */
