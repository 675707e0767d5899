// SPDX-License-Identifier: GPL-2.0
/*
 * FreeBSD's perfmon(4), /dev/perfmon (kmod/iface/perfmon.c): every ioctl
 * and error of the page and of FreeBSD's driver.
 *
 * "plain": the module vm-run loaded, on a guest without a PMU: PMIOTSTAMP
 * works (root and nobody), every counter operation fails with ENXIO, one
 * writer at a time (EBUSY), and FreeBSD's sample program (built against
 * <machine/perfmon.h> with OS-level shims: selftests/compat) fails its
 * PMIOSETUP with ENXIO.  "model": the test flavor with the PMU model
 * (Intel, AMD PerfMonV2, AMD legacy): setup, get, start, stop, reset and
 * read against the model's registers, the sum over CPUs, EPERM / EINVAL /
 * EBUSY, rows shared with hwpmc and pctr, the writer's close letting its
 * counters go, nobody with and without the sysctls, and FreeBSD's sample
 * program running to the end.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_model_fixture.h"

#include <linux/perfmon.h>
#include <linux/pctr.h>

#define PM_DEV		"/dev/perfmon"
#define EV_INSTR	0xc0
#define SEL_EN		(1U << 22)
#define SEL_INT		(1U << 20)

static __u32 pm_val(__u8 event, __u8 unit, __u8 flags, __u8 mask)
{
	return event | unit << 8 | flags << 16 | (__u32)mask << 24;
}

static int pm_setup(int fd, int n, __u32 val)
{
	struct pmc p = { .pmc_num = n, .pmc_pmcu.pmcu_val = val };

	return ioctl(fd, PMIOSETUP, &p) ? errno : 0;
}

static int pm_get(int fd, int n, __u32 *val)
{
	struct pmc p = { .pmc_num = n };
	int err = ioctl(fd, PMIOGET, &p) ? errno : 0;

	if (!err && val)
		*val = p.pmc_pmcu.pmcu_val;
	return err;
}

static int pm_num(int fd, unsigned long cmd, int n)
{
	return ioctl(fd, cmd, &n) ? errno : 0;
}

static int pm_read(int fd, int n, __s64 *v)
{
	/* The padding as a FreeBSD program leaves it: garbage. */
	struct pmc_data d = { .pmcd_num = n, .__pmcd_pad = 0x5a5a };
	int err = ioctl(fd, PMIOREAD, &d) ? errno : 0;

	if (!err && v)
		*v = d.pmcd_value;
	return err;
}

static int pm_tstamp(int fd, struct pmc_tstamp *t)
{
	return ioctl(fd, PMIOTSTAMP, t) ? errno : 0;
}

/*
 * Run FreeBSD's sample program (selftests/compat/freebsd/perfmon.c) with
 * @args; its output in @out, its exit status returned (-1: not run).
 */
static int run_freebsd_perfmon(const char *args, char *out, size_t len)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *p;
	size_t got;
	int st;

	if (n < 0)
		return -1;
	exe[n] = 0;
	snprintf(cmd, sizeof(cmd), "%s/compat_freebsd_perfmon %s 2>&1",
		 dirname(exe), args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	got = fread(out, 1, len - 1, p);
	out[got] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* --- the plain guest: no counters ----------------------------------------- */

FIXTURE_SETUP(plain)
{
	plain_fixture_setup(_metadata, PM_DEV);
}

FIXTURE_TEARDOWN(plain)
{
}

/* PMIOTSTAMP: a rate in MHz and a rising TSC, to anyone, any descriptor. */
static int tstamp_works(void *arg)
{
	struct pmc_tstamp a, b;
	int fd = open(PM_DEV, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 10;
	if (pm_tstamp(fd, &a) || pm_tstamp(fd, &b))
		return 11;
	close(fd);
	if (a.pmct_rate <= 0 || b.pmct_value <= a.pmct_value)
		return 12;
	return 0;
}

TEST_F(plain, tstamp_always)
{
	EXPECT_EQ(0, tstamp_works(NULL));
	if (!geteuid())
		EXPECT_EQ(0, hwpmc_as_nobody(tstamp_works, NULL));
}

/* Every counter operation: ENXIO, before EPERM and EINVAL. */
static int ops_enxio(void *arg)
{
	int modes[] = { O_RDONLY, O_RDWR }, m, fd;
	__u32 v;

	for (m = 0; m < 2; m++) {
		fd = open(PM_DEV, modes[m] | O_CLOEXEC);
		if (fd < 0)
			return 20 + m;
		if (pm_setup(fd, 0, pm_val(EV_INSTR, 0, PMCF_USR, 0)) != ENXIO ||
		    pm_setup(fd, 9, 0) != ENXIO)
			return 30;
		if (pm_get(fd, 0, &v) != ENXIO || pm_read(fd, 0, NULL) != ENXIO)
			return 31;
		if (pm_num(fd, PMIOSTART, 0) != ENXIO ||
		    pm_num(fd, PMIOSTOP, 0) != ENXIO ||
		    pm_num(fd, PMIORESET, 0) != ENXIO)
			return 32;
		close(fd);
	}
	return 0;
}

TEST_F(plain, counter_ops_enxio)
{
	EXPECT_EQ(0, ops_enxio(NULL));
	if (!geteuid())
		EXPECT_EQ(0, hwpmc_as_nobody(ops_enxio, NULL));
}

/* One writer: a second open for writing is EBUSY until the first closes. */
TEST_F(plain, one_writer)
{
	int w = open(PM_DEV, O_RDWR | O_CLOEXEC), r, w2;

	ASSERT_LE(0, w);
	EXPECT_EQ(-1, open(PM_DEV, O_RDWR | O_CLOEXEC));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, open(PM_DEV, O_WRONLY | O_CLOEXEC));
	EXPECT_EQ(EBUSY, errno);
	r = open(PM_DEV, O_RDONLY | O_CLOEXEC);
	EXPECT_LE(0, r);
	close(w);
	w2 = open(PM_DEV, O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, w2);
	close(w2);
	close(r);
}

TEST_F(plain, bad_ioctl_and_pointer)
{
	int fd = open(PM_DEV, O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, _IO('5', 8), 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, PMIOTSTAMP, NULL));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

/* FreeBSD's sample program builds and runs: PMIOSETUP fails with ENXIO. */
TEST_F(plain, freebsd_sample_program)
{
	char out[4096];

	EXPECT_EQ(1, run_freebsd_perfmon("-u -l 2 0xc0", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "ioctl(PMIOSETUP)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, strerror(ENXIO))) TH_LOG("%s", out);
}

/* --- the PMU model -------------------------------------------------------- */

FIXTURE_SETUP(model)
{
	model_fixture_setup(_metadata, self, variant);
}

FIXTURE_TEARDOWN(model)
{
	model_fixture_teardown(self);
}

/*
 * FreeBSD's errors: a read-only descriptor may not set up, start, stop or
 * reset (EPERM); a counter number out of range is EINVAL; a counter not
 * set up is EBUSY to everything but PMIOSETUP; pin control is EINVAL.
 */
TEST_F(model, errors)
{
	int ro = open(PM_DEV, O_RDONLY | O_CLOEXEC);
	int rw = open(PM_DEV, O_RDWR | O_CLOEXEC);
	__u32 good = pm_val(EV_INSTR, 0, PMCF_USR, 0), v;
	int bad[] = { -1, NPMC, 1000 }, i;

	ASSERT_LE(0, ro);
	ASSERT_LE(0, rw);
	EXPECT_EQ(EPERM, pm_setup(ro, 0, good));
	EXPECT_EQ(EPERM, pm_num(ro, PMIOSTART, 0));
	EXPECT_EQ(EPERM, pm_num(ro, PMIOSTOP, 0));
	EXPECT_EQ(EPERM, pm_num(ro, PMIORESET, 0));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(EINVAL, pm_setup(rw, bad[i], good));
		EXPECT_EQ(EINVAL, pm_get(rw, bad[i], &v));
		EXPECT_EQ(EINVAL, pm_read(rw, bad[i], NULL));
		EXPECT_EQ(EINVAL, pm_num(rw, PMIOSTART, bad[i]));
		EXPECT_EQ(EINVAL, pm_num(rw, PMIOSTOP, bad[i]));
		EXPECT_EQ(EINVAL, pm_num(rw, PMIORESET, bad[i]));
	}
	EXPECT_EQ(EBUSY, pm_get(rw, 0, &v));
	EXPECT_EQ(EBUSY, pm_read(ro, 0, NULL));
	EXPECT_EQ(EBUSY, pm_num(rw, PMIOSTART, 0));
	EXPECT_EQ(EBUSY, pm_num(rw, PMIOSTOP, 0));
	EXPECT_EQ(EBUSY, pm_num(rw, PMIORESET, 0));
	EXPECT_EQ(EINVAL, pm_setup(rw, 0, pm_val(EV_INSTR, 0,
						 PMCF_USR | PMCF_PC, 0)));
	EXPECT_EQ(EBUSY, pm_get(rw, 0, &v));	/* a failed setup sets nothing */
	close(ro);
	close(rw);
}

/*
 * The whole life of a counter on the model: set up stopped, started with
 * the event select of the setup (plus enable and the driver's PMI), the
 * machine's count (the sum over CPUs), stopped, reset, running again.
 */
TEST_F(model, setup_start_stop_reset_read)
{
	__u8 flags = PMCF_USR | PMCF_E | PMCF_INV | PMCF_EN | PMCF_INT;
	__u32 val = pm_val(EV_INSTR, 0x01, flags, 2), v = 0;
	__u32 want = val & ~(PMCF_SYS_FLAGS << 16);
	__s64 c = -1;
	int fd = open(PM_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pm_setup(fd, 0, val));
	ASSERT_EQ(0, pm_get(fd, 0, &v));
	EXPECT_EQ(want, v);
	EXPECT_EQ(0, model_reg(self->cpu, "sel%d", 0));	/* not started */
	ASSERT_EQ(0, model_advance("usr 50"));
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(0, c);
	ASSERT_EQ(0, pm_num(fd, PMIOSTART, 0));
	EXPECT_EQ(want | SEL_EN | SEL_INT,
		  model_reg(self->cpu, "sel%d", 0) & 0xffffffff);
	ASSERT_EQ(0, model_advance("usr 1000"));
	ASSERT_EQ(0, model_advance("os 10"));	/* not counted: PMCF_OS unset */
	if (self->other >= 0) {
		ASSERT_EQ(0, hwpmc_pin_cpu(self->other));
		ASSERT_EQ(0, model_advance("usr 500"));
		ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
	}
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(self->other >= 0 ? 1500 : 1000, c);
	ASSERT_EQ(0, pm_num(fd, PMIOSTOP, 0));
	EXPECT_EQ(0, model_reg(self->cpu, "sel%d", 0));
	ASSERT_EQ(0, model_advance("usr 100"));
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(self->other >= 0 ? 1500 : 1000, c);
	ASSERT_EQ(0, pm_num(fd, PMIORESET, 0));
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(0, c);
	ASSERT_EQ(0, pm_num(fd, PMIOSTART, 0));
	ASSERT_EQ(0, model_advance("usr 7"));
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(7, c);
	/* Reset while running, as FreeBSD's driver allows. */
	ASSERT_EQ(0, pm_num(fd, PMIORESET, 0));
	ASSERT_EQ(0, model_advance("usr 3"));
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(3, c);
	/* A second setup starts over: stopped, zero. */
	ASSERT_EQ(0, pm_setup(fd, 0, pm_val(EV_INSTR, 0, PMCF_OS, 0)));
	ASSERT_EQ(0, model_advance("os 5"));
	ASSERT_EQ(0, pm_read(fd, 0, &c));
	EXPECT_EQ(0, c);
	close(fd);
}

/*
 * Rows: a counter set up shows in GETPMCINFO as a system-scope PMC of the
 * kernel (owner pid 0) on every CPU; hwpmc's system PMCs take the other
 * rows; a row held by hwpmc or by pctr is EBUSY to PMIOSETUP and the other
 * way round; the writer's close lets every counter go.
 */
TEST_F(model, rows_shared_and_writer_close)
{
	struct pmc_info info[64];
	__u32 n = 64, id, v;
	unsigned int fn = EV_INSTR | PCTR_U | PCTR_EN;
	int fd = open(PM_DEV, O_RDWR | O_CLOEXEC), h, pc, c;

	ASSERT_LE(0, fd);
	h = hwpmc_open();
	ASSERT_LE(0, h);
	pc = open("/dev/pctr", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, pc);
	ASSERT_EQ(0, pm_setup(fd, 0, pm_val(EV_INSTR, 0, PMCF_USR, 0)));
	for (c = 0; c < 2; c++) {
		int cpu = c ? self->other : self->cpu;

		if (cpu < 0)
			continue;
		n = 64;
		ASSERT_EQ(0, hwpmc_pmcinfo(h, cpu, info, &n));
		EXPECT_EQ(PMC_DISP_STANDALONE, info[self->first].pm_rowdisp);
		EXPECT_EQ(0, info[self->first].pm_ownerpid);
		EXPECT_EQ(PMC_MODE_SC, info[self->first].pm_mode);
		EXPECT_EQ(PMC_STATE_ALLOCATED, info[self->first].pm_state);
	}
	/* pctr's counter 0 is the same row: EBUSY; and the other way round. */
	EXPECT_EQ(-1, ioctl(pc, PCIOCS0, &fn));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, ioctl(pc, PCIOCS1, &fn));
	EXPECT_EQ(EBUSY, pm_setup(fd, 1, pm_val(EV_INSTR, 0, PMCF_USR, 0)));
	fn = 0;
	ASSERT_EQ(0, ioctl(pc, PCIOCS1, &fn));
	/* hwpmc takes row 1 first (row 0 is perfmon's): EBUSY to perfmon. */
	ASSERT_EQ(0, hwpmc_alloc(h, variant->class, EV_INSTR, PMC_MODE_SC, 0,
				 self->cpu, 0, &id));
	EXPECT_EQ(EBUSY, pm_setup(fd, 1, pm_val(EV_INSTR, 0, PMCF_USR, 0)));
	EXPECT_EQ(EBUSY, pm_get(fd, 1, &v));
	ASSERT_EQ(0, hwpmc_release(h, id));
	EXPECT_EQ(0, pm_setup(fd, 1, pm_val(EV_INSTR, 0, PMCF_USR, 0)));
	/* The writer's close: every counter let go, rows free. */
	close(fd);
	n = 64;
	ASSERT_EQ(0, hwpmc_pmcinfo(h, self->cpu, info, &n));
	EXPECT_EQ(PMC_DISP_FREE, info[self->first].pm_rowdisp);
	EXPECT_EQ(PMC_DISP_FREE, info[self->first + 1].pm_rowdisp);
	fd = open(PM_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(EBUSY, pm_get(fd, 0, &v));
	close(fd);
	close(pc);
	close(h);
}

struct nobody_case {
	int flags;		/* open flags */
	__u8 pmcf;		/* PMCF_USR or PMCF_OS: a setup; 0: none */
	int want_setup, want_read;
};

static int nobody_ops(void *arg)
{
	struct nobody_case *c = arg;
	struct pmc_tstamp t;
	int fd = open(PM_DEV, c->flags | O_CLOEXEC), err;

	if (fd < 0)
		return 100;
	if (pm_tstamp(fd, &t))
		return 101;
	if (c->pmcf) {
		err = pm_setup(fd, 0, pm_val(EV_INSTR, 0, c->pmcf, 0));
		if (err != c->want_setup)
			return 110 + err;
	}
	err = pm_read(fd, 0, NULL);
	close(fd);
	return err == c->want_read ? 0 : 150 + err;
}

/*
 * nobody: PMIOTSTAMP always; PMIOREAD of root's counter only with
 * unprivileged_syspmcs (EPERM); PMIOSETUP only with unprivileged_syspmcs
 * and unprivileged_hw, user mode only (EACCES for PMCF_OS).
 */
TEST_F(model, unprivileged)
{
	struct nobody_case c = { .flags = O_RDONLY };
	int fd = open(PM_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pm_setup(fd, 0, pm_val(EV_INSTR, 0, PMCF_USR, 0)));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYS, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_HW, 0));
	c.want_read = EPERM;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_ops, &c));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYS, 1));
	c.want_read = 0;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_ops, &c));
	close(fd);	/* root's counters go with its writer */

	c.flags = O_RDWR;
	c.pmcf = PMCF_USR;
	c.want_setup = EPERM;	/* unprivileged_hw 0 */
	c.want_read = EBUSY;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_ops, &c));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_HW, 1));
	c.pmcf = PMCF_OS;
	c.want_setup = EACCES;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_ops, &c));
	c.pmcf = PMCF_USR;
	c.want_setup = 0;
	c.want_read = 0;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_ops, &c));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYS, 0));
	c.want_setup = EPERM;
	c.want_read = EPERM;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_ops, &c));
}

/* FreeBSD's sample program runs to the end on the model. */
TEST_F(model, freebsd_sample_program)
{
	char out[8192];

	EXPECT_EQ(0, run_freebsd_perfmon("-u -l 3 0xc0", out, sizeof(out)))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "3: ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "total: ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "-MHz): ")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
