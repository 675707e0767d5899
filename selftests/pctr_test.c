// SPDX-License-Identifier: GPL-2.0
/*
 * OpenBSD's pctr(4), /dev/pctr (kmod/iface/pctr.c): every ioctl and error
 * of the page.
 *
 * "plain": the module vm-run loaded, on a guest without a PMU: PCIOCRD
 * returns the TSC (to root and to nobody), PCIOCSx fails with ENODEV.
 * "model": the test flavor with the PMU model (Intel, AMD PerfMonV2, AMD
 * legacy layouts), the test pinned to one CPU whose counters it advances:
 * the function word lands in the event select, PCIOCRD reads the count,
 * EPERM (read-only descriptor), EINVAL (bad bits), a row held by hwpmc is
 * EBUSY to pctr and a row held by pctr is visible (owner pid 0) and
 * refused to hwpmc, a counter let go is cleared on every CPU, user RDPMC
 * follows the descriptor and perf's rdpmc setting, and what nobody may do
 * with and without kernel.hwpmc.unprivileged_syspmcs / unprivileged_hw.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_model_fixture.h"

#include <linux/pctr.h>

#define PCTR_DEV	"/dev/pctr"
#define EV_INSTR	0xc0	/* instructions retired, both vendors */
#define FN_USER		(EV_INSTR | PCTR_U | PCTR_EN)
#define FN_KERNEL	(EV_INSTR | PCTR_K | PCTR_EN)

static const unsigned long pcioc_set[PCTR_NUM] = {
	PCIOCS0, PCIOCS1, PCIOCS2, PCIOCS3,
};

static int pctr_rd(int fd, struct pctrst *st)
{
	memset(st, 0xa5, sizeof(*st));
	return ioctl(fd, PCIOCRD, st) ? errno : 0;
}

static int pctr_set(int fd, int n, unsigned int fn)
{
	return ioctl(fd, pcioc_set[n], &fn) ? errno : 0;
}

/* Every function back to 0 (the functions outlive their descriptors). */
static void pctr_clear_all(void)
{
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC), i;

	for (i = 0; fd >= 0 && i < PCTR_NUM; i++)
		pctr_set(fd, i, 0);
	if (fd >= 0)
		close(fd);
}

/*
 * Run a program built beside this test (@rel: relative to its directory:
 * "../tools/pctr", "compat_openbsd_pctr_equiv") with @args: its exit
 * status (-1: not run), its output in @out.
 */
static int run_prog(const char *rel, const char *args, char *out, size_t len)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *p;
	size_t got;
	int st;

	if (n < 0)
		return -1;
	exe[n] = 0;
	snprintf(cmd, sizeof(cmd), "%s/%s %s 2>&1", dirname(exe), rel, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	got = fread(out, 1, len - 1, p);
	out[got] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Counter @i's function and count in a pctr listing; 0 if found. */
static int listed(const char *out, int i, unsigned int *fn,
		  unsigned long long *count)
{
	char want[16];
	const char *l;

	snprintf(want, sizeof(want), "\n  %d  0x", i);
	l = strstr(out, want);
	if (!l || sscanf(l + strlen(want) - 2, "%x %llu", fn, count) != 2)
		return -1;
	return 0;
}

/* --- the plain guest: no counters ----------------------------------------- */

FIXTURE_SETUP(plain)
{
	plain_fixture_setup(_metadata, PCTR_DEV);
}

FIXTURE_TEARDOWN(plain)
{
}

static int tsc_reads(void *arg)
{
	struct pctrst a, b;
	int fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return 10;
	if (pctr_rd(fd, &a) || pctr_rd(fd, &b))
		return 11;
	close(fd);
	if (!a.pctr_tsc || b.pctr_tsc <= a.pctr_tsc)
		return 12;
	for (i = 0; i < PCTR_NUM; i++)
		if (a.pctr_fn[i] || a.pctr_hwc[i])
			return 13;
	return 0;
}

/* PCIOCRD: the TSC (rising), no function, no count; root and nobody. */
TEST_F(plain, tsc_always_readable)
{
	EXPECT_EQ(0, tsc_reads(NULL));
	if (!geteuid())
		EXPECT_EQ(0, hwpmc_as_nobody(tsc_reads, NULL));
}

/* What PCIOCSx gives nobody: ENODEV first, whatever the descriptor. */
static int set_enodev(void *arg)
{
	int modes[] = { O_RDONLY, O_RDWR }, m, n, fd;

	for (m = 0; m < 2; m++) {
		fd = open(PCTR_DEV, modes[m] | O_CLOEXEC);
		if (fd < 0)
			return 20 + m;
		for (n = 0; n < PCTR_NUM; n++) {
			if (pctr_set(fd, n, FN_USER) != ENODEV)
				return 30 + n;
			/* Bad bits too: no counters comes first. */
			if (pctr_set(fd, n, PCTR_FN_INVALID) != ENODEV)
				return 40 + n;
		}
		close(fd);
	}
	return 0;
}

/* PCIOCSx without counters: ENODEV (the page), read-only or not. */
TEST_F(plain, set_without_counters_enodev)
{
	EXPECT_EQ(0, set_enodev(NULL));
	if (!geteuid())
		EXPECT_EQ(0, hwpmc_as_nobody(set_enodev, NULL));
}

/* Not pctr's ioctl: ENOTTY; a bad pointer: EFAULT. */
TEST_F(plain, bad_ioctl_and_pointer)
{
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, _IO('c', 2), 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, PCIOCRD, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, PCIOCS0, NULL));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

/*
 * The pctr command and a program written for OpenBSD (selftests/compat)
 * print the TSC and no function; pctr -s fails with ENODEV, -l says this
 * CPU has no counters.
 */
TEST_F(plain, pctr_command_and_bsd_program)
{
	char out[4096], bsd[4096];
	unsigned long long v;
	unsigned int fn;
	int i;

	ASSERT_EQ(0, run_prog("../tools/pctr", "", out, sizeof(out)));
	ASSERT_EQ(0, run_prog("compat_openbsd_pctr_equiv", "", bsd,
			      sizeof(bsd))) TH_LOG("%s", bsd);
	EXPECT_EQ(0, strncmp(out, "tsc = ", 6)) TH_LOG("%s", out);
	EXPECT_EQ(0, strncmp(bsd, "tsc = ", 6)) TH_LOG("%s", bsd);
	for (i = 0; i < PCTR_NUM; i++) {
		ASSERT_EQ(0, listed(out, i, &fn, &v)) TH_LOG("%s", out);
		EXPECT_EQ(0, fn);
		EXPECT_EQ(0, v);
		ASSERT_EQ(0, listed(bsd, i, &fn, &v)) TH_LOG("%s", bsd);
		EXPECT_EQ(0, fn);
	}
	EXPECT_EQ(1, run_prog("../tools/pctr", "-s 0 -U -e 0xc0", out,
			      sizeof(out)));
	EXPECT_NE(NULL, strstr(out, strerror(ENODEV))) TH_LOG("%s", out);
	EXPECT_EQ(1, run_prog("../tools/pctr", "-l", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "no programmable counters")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_prog("../tools/pctr", "-s 7 -e 1", out, sizeof(out)));
}

/* --- the PMU model -------------------------------------------------------- */

FIXTURE_SETUP(model)
{
	if (model_fixture_setup(_metadata, self, variant))
		pctr_clear_all();
}

FIXTURE_TEARDOWN(model)
{
	pctr_clear_all();
	model_fixture_teardown(self);
	model_perf_rdpmc("real");
}

/*
 * The page's errors in its order: a read-only descriptor is EPERM (even
 * with bad bits), bits 19-21 are EINVAL; a good function is accepted.
 */
TEST_F(model, errors)
{
	int ro = open(PCTR_DEV, O_RDONLY | O_CLOEXEC);
	int rw = open(PCTR_DEV, O_RDWR | O_CLOEXEC), n;
	unsigned int bad[] = { 1u << 19, 1u << 20, 1u << 21 };

	ASSERT_LE(0, ro);
	ASSERT_LE(0, rw);
	for (n = 0; n < PCTR_NUM; n++) {
		EXPECT_EQ(EPERM, pctr_set(ro, n, FN_USER));
		EXPECT_EQ(EPERM, pctr_set(ro, n, FN_USER | bad[0]));
	}
	for (n = 0; n < 3; n++)
		EXPECT_EQ(EINVAL, pctr_set(rw, 0, FN_USER | bad[n]));
	EXPECT_EQ(0, pctr_set(rw, 0, FN_USER));
	EXPECT_EQ(0, pctr_set(rw, 0, 0));
	close(ro);
	close(rw);
}

/*
 * Counting: the function word is the event select (enabled, no PMI: the
 * counter holds the count), PCIOCRD reads user and kernel counts exactly,
 * the functions outlive the descriptor, and a counter let go is cleared.
 */
TEST_F(model, count_read_and_release)
{
	unsigned int fu = FN_USER, fk = FN_KERNEL;
	unsigned int fx = EV_INSTR | (0x0f << PCTR_UM_SHIFT) | PCTR_U |
			  PCTR_E | PCTR_I | (2u << PCTR_CM_SHIFT) | PCTR_EN;
	struct pctrst st;
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pctr_set(fd, 0, fu));
	ASSERT_EQ(0, pctr_set(fd, 1, fk));
	ASSERT_EQ(0, pctr_set(fd, 2, fx));
	EXPECT_EQ(fu, model_reg(self->cpu, "sel%d", 0) & 0xffffffff);
	EXPECT_EQ(fk, model_reg(self->cpu, "sel%d", 1) & 0xffffffff);
	EXPECT_EQ(fx, model_reg(self->cpu, "sel%d", 2) & 0xffffffff);
	if (self->other >= 0)
		EXPECT_EQ(fu, model_reg(self->other, "sel%d", 0) & 0xffffffff);
	ASSERT_EQ(0, model_advance("usr 1000"));
	ASSERT_EQ(0, model_advance("os 300"));
	EXPECT_EQ(1000, model_reg(self->cpu, "ctr%d", 0));
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(fu, st.pctr_fn[0]);
	EXPECT_EQ(fk, st.pctr_fn[1]);
	EXPECT_EQ(fx, st.pctr_fn[2]);
	EXPECT_EQ(0, st.pctr_fn[3]);
	EXPECT_EQ(1000, st.pctr_hwc[0]);
	EXPECT_EQ(300, st.pctr_hwc[1]);
	EXPECT_EQ(1000, st.pctr_hwc[2]);
	EXPECT_EQ(0, st.pctr_hwc[3]);
	EXPECT_NE(0, st.pctr_tsc);
	close(fd);

	/* The functions outlive the descriptor: read them back read-only. */
	fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, model_advance("usr 5"));
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(fu, st.pctr_fn[0]);
	EXPECT_EQ(1005, st.pctr_hwc[0]);
	EXPECT_EQ(300, st.pctr_hwc[1]);
	close(fd);

	/* Let go: the register is cleared on every CPU; a new one starts at 0. */
	fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pctr_set(fd, 0, 0));
	EXPECT_EQ(0, model_reg(self->cpu, "ctr%d", 0));
	EXPECT_EQ(0, model_reg(self->cpu, "sel%d", 0));
	if (self->other >= 0)
		EXPECT_EQ(0, model_reg(self->other, "ctr%d", 0));
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(0, st.pctr_fn[0]);
	EXPECT_EQ(0, st.pctr_hwc[0]);
	ASSERT_EQ(0, pctr_set(fd, 1, fu));	/* reprogrammed: from 0 */
	EXPECT_EQ(0, model_reg(self->cpu, "ctr%d", 1));
	ASSERT_EQ(0, model_advance("usr 7"));
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(7, st.pctr_hwc[1]);
	close(fd);
}

/* A function without PCTR_EN, or without PCTR_U and PCTR_K, counts nothing
 * and holds no row; PCIOCRD still shows it. */
TEST_F(model, disabled_function_holds_no_row)
{
	unsigned int fns[] = { EV_INSTR | PCTR_U, EV_INSTR | PCTR_EN };
	struct pmc_info info[64];
	struct pctrst st;
	__u32 n = 64;
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC), i, h;

	ASSERT_LE(0, fd);
	h = hwpmc_open();
	ASSERT_LE(0, h);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pctr_set(fd, 0, fns[i]));
		ASSERT_EQ(0, model_advance("usr 10"));
		ASSERT_EQ(0, pctr_rd(fd, &st));
		EXPECT_EQ(fns[i], st.pctr_fn[0]);
		EXPECT_EQ(0, st.pctr_hwc[0]);
		EXPECT_EQ(0, model_reg(self->cpu, "sel%d", 0));
		n = 64;
		ASSERT_EQ(0, hwpmc_pmcinfo(h, self->cpu, info, &n));
		EXPECT_EQ(PMC_DISP_FREE, info[self->first].pm_rowdisp);
	}
	close(h);
	close(fd);
}

/*
 * Rows are shared with hwpmc: pctr's shows in GETPMCINFO (system scope,
 * owner pid 0: the kernel), running, and hwpmc's system PMCs take the
 * other rows until none is left (EINVAL, hwpmc(4)'s "no suitable PMC");
 * a row hwpmc holds, system or process scope, is EBUSY to pctr.
 */
TEST_F(model, rows_shared_with_hwpmc)
{
	struct pmc_info info[64];
	__u32 n = 64, id, ids[16], r;
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC), h;

	ASSERT_LE(0, fd);
	h = hwpmc_open();
	ASSERT_LE(0, h);
	ASSERT_EQ(0, pctr_set(fd, 0, FN_USER));
	ASSERT_EQ(0, hwpmc_pmcinfo(h, self->cpu, info, &n));
	EXPECT_EQ(PMC_DISP_STANDALONE, info[self->first].pm_rowdisp);
	EXPECT_EQ(0, info[self->first].pm_ownerpid);
	EXPECT_EQ(PMC_MODE_SC, info[self->first].pm_mode);
	EXPECT_EQ(PMC_STATE_RUNNING, info[self->first].pm_state);
	EXPECT_EQ(HWPMC_EV_GLOBAL(variant->class, EV_INSTR),
		  info[self->first].pm_event);
	/* hwpmc's system PMCs get the other rows, then none. */
	for (r = 1; r < self->nrows; r++)
		ASSERT_EQ(0, hwpmc_alloc(h, variant->class, EV_INSTR,
					 PMC_MODE_SC, 0, self->cpu, 0, &ids[r]));
	EXPECT_EQ(EINVAL, hwpmc_alloc(h, variant->class, EV_INSTR,
				      PMC_MODE_SC, 0, self->cpu, 0, &id));
	/* ... and its process PMCs none of them: standalone rows. */
	EXPECT_EQ(EINVAL, hwpmc_alloc(h, variant->class, EV_INSTR,
				      PMC_MODE_TC, 0, PMC_CPU_ANY, 0, &id));
	/* hwpmc holds row 1 on this CPU: EBUSY to pctr. */
	EXPECT_EQ(EBUSY, pctr_set(fd, 1, FN_USER));
	for (r = 1; r < self->nrows; r++)
		ASSERT_EQ(0, hwpmc_release(h, ids[r]));
	EXPECT_EQ(0, pctr_set(fd, 1, FN_USER));
	EXPECT_EQ(0, pctr_set(fd, 1, 0));
	/* A process PMC on every free row: EBUSY to pctr, then free again. */
	for (r = 1; r < self->nrows; r++)
		ASSERT_EQ(0, hwpmc_alloc(h, variant->class, EV_INSTR,
					 PMC_MODE_TC, 0, PMC_CPU_ANY, 0,
					 &ids[r]));
	EXPECT_EQ(EBUSY, pctr_set(fd, 1, FN_USER));
	EXPECT_EQ(0, pctr_rd(fd, &(struct pctrst){ 0 }));
	for (r = 1; r < self->nrows; r++)
		ASSERT_EQ(0, hwpmc_release(h, ids[r]));
	EXPECT_EQ(0, pctr_set(fd, 1, FN_USER));
	/* pctr let go of row 0: hwpmc may have it. */
	EXPECT_EQ(0, pctr_set(fd, 0, 0));
	n = 64;
	ASSERT_EQ(0, hwpmc_pmcinfo(h, self->cpu, info, &n));
	EXPECT_EQ(PMC_DISP_FREE, info[self->first].pm_rowdisp);
	EXPECT_EQ(-1, info[self->first].pm_ownerpid);
	ASSERT_EQ(0, hwpmc_alloc(h, variant->class, EV_INSTR, PMC_MODE_SC, 0,
				 self->cpu, 0, &id));
	EXPECT_EQ(0, hwpmc_release(h, id));
	close(h);
	close(fd);
}

static int rdpmc_sig(void)
{
	__u64 v;

	return hwpmc_rdpmc_probe(0, &v);
}

/* RDPMC works here: 0, or SIGILL under TCG, which has no RDPMC. */
#define EXPECT_RDPMC_OK() do {						\
	int s_ = rdpmc_sig();						\
	EXPECT_TRUE(s_ == 0 || s_ == SIGILL) TH_LOG("rdpmc: signal %d", s_); \
} while (0)

/*
 * User RDPMC: granted to the process of a privileged open, for as long as
 * that descriptor is open, unless perf's rdpmc setting is 0; not to a
 * forked child; CR4.PCE follows on this CPU.
 */
TEST_F(model, rdpmc_follows_descriptor_and_perf)
{
	const char *refuse[] = { "0", "fail" };
	int fd, i, st;
	pid_t pid;

	ASSERT_EQ(0, model_perf_rdpmc("1"));
	EXPECT_EQ(SIGSEGV, rdpmc_sig());
	fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, model_reg(self->cpu, "cr4_pce", 0));
	EXPECT_RDPMC_OK();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(rdpmc_sig() == SIGSEGV ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("a forked child may not RDPMC");
	close(fd);
	EXPECT_EQ(SIGSEGV, rdpmc_sig());
	EXPECT_EQ(0, model_reg(self->cpu, "cr4_pce", 0));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, model_perf_rdpmc(refuse[i]));
		fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		EXPECT_EQ(SIGSEGV, rdpmc_sig()) TH_LOG("perf_rdpmc %s", refuse[i]);
		close(fd);
	}
}

struct nobody_case {
	unsigned int fn;
	__u64 want_hwc1;	/* root's counter 1 as nobody reads it */
};

/* As nobody: open read-write, set counter 0 to @fn, read counter 1. */
static int nobody_set(void *arg)
{
	struct nobody_case *c = arg;
	struct pctrst st;
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC), err;

	if (fd < 0)
		return 100;
	if (pctr_rd(fd, &st) || !st.pctr_tsc)
		return 101;
	if (st.pctr_hwc[1] != c->want_hwc1)
		return 102;
	err = pctr_set(fd, 0, c->fn);
	close(fd);
	return err;
}

static int nobody_rdpmc(void *arg)
{
	int fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC), s;

	if (fd < 0)
		return 100;
	s = rdpmc_sig();
	close(fd);
	return s;
}

/*
 * nobody: the TSC always; the counts, and setting a function, only as
 * system-scope hwpmc PMCs allow (unprivileged_syspmcs, and unprivileged_hw
 * for a hardware counter; user mode only: PCTR_K is EACCES); RDPMC only
 * with both.
 */
TEST_F(model, unprivileged)
{
	struct nobody_case c = { .fn = FN_USER, .want_hwc1 = 0 };
	int fd = open(PCTR_DEV, O_RDWR | O_CLOEXEC), s;
	struct pctrst st;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, model_perf_rdpmc("1"));
	ASSERT_EQ(0, pctr_set(fd, 1, FN_USER));
	ASSERT_EQ(0, model_advance("usr 42"));

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYS, 0));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_HW, 0));
	EXPECT_EQ(EPERM, hwpmc_as_nobody(nobody_set, &c));
	EXPECT_EQ(SIGSEGV, hwpmc_as_nobody(nobody_rdpmc, NULL));

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYS, 1));
	c.want_hwc1 = 42;
	EXPECT_EQ(EPERM, hwpmc_as_nobody(nobody_set, &c));
	EXPECT_EQ(SIGSEGV, hwpmc_as_nobody(nobody_rdpmc, NULL));

	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_HW, 1));
	c.fn = FN_KERNEL;
	EXPECT_EQ(EACCES, hwpmc_as_nobody(nobody_set, &c));
	c.fn = FN_USER;
	EXPECT_EQ(0, hwpmc_as_nobody(nobody_set, &c));
	s = hwpmc_as_nobody(nobody_rdpmc, NULL);
	EXPECT_TRUE(s == 0 || s == SIGILL) TH_LOG("rdpmc: %d", s);
	/* nobody's function stays after its exit, as root's would. */
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(FN_USER, st.pctr_fn[0]);
	close(fd);
}

/*
 * The pctr command programs a counter from its command line (an event
 * number or a name of -l), prints it, and lets it go with -d; the program
 * written for OpenBSD prints the same functions and counts.
 */
TEST_F(model, pctr_command_and_bsd_program)
{
	char out[1 << 16], bsd[4096];
	unsigned long long v, vb;
	unsigned int fn, fnb, want = EV_INSTR | PCTR_U | PCTR_EN;
	struct pctrst st;
	int fd, i;

	ASSERT_EQ(0, run_prog("../tools/pctr", "-s 0 -U -e 0xc0", out,
			      sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(0, run_prog("../tools/pctr", "-s 2 -K -E -c 1 -m 0x01 -e 0x3c",
			      out, sizeof(out))) TH_LOG("%s", out);
	fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(want, st.pctr_fn[0]);
	EXPECT_EQ(0x3c | 0x0100 | PCTR_K | PCTR_E | PCTR_EN |
		  1u << PCTR_CM_SHIFT, st.pctr_fn[2]);
	close(fd);
	ASSERT_EQ(0, model_advance("usr 1000"));
	ASSERT_EQ(0, run_prog("../tools/pctr", "", out, sizeof(out)));
	ASSERT_EQ(0, run_prog("compat_openbsd_pctr_equiv", "", bsd,
			      sizeof(bsd))) TH_LOG("%s", bsd);
	for (i = 0; i < PCTR_NUM; i++) {
		ASSERT_EQ(0, listed(out, i, &fn, &v)) TH_LOG("%s", out);
		ASSERT_EQ(0, listed(bsd, i, &fnb, &vb)) TH_LOG("%s", bsd);
		EXPECT_EQ(fn, fnb);
		EXPECT_EQ(v, vb);
	}
	ASSERT_EQ(0, listed(out, 0, &fn, &v));
	EXPECT_EQ(want, fn);
	EXPECT_EQ(1000, v);
	EXPECT_NE(NULL, strstr(out, "usr,en event=0xc0")) TH_LOG("%s", out);
	/* Errors explained: kernel mode as nobody with the sysctls. */
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_SYS, 1));
	ASSERT_EQ(0, hwpmc_sysctl_set(SYSCTL_HW, 1));
	ASSERT_EQ(0, run_prog("../tools/pctr", "-s 0 -d", out, sizeof(out)));
	/* -l: this CPU's events, through libhwpmc (libpfm4). */
	i = run_prog("../tools/pctr", "-l", out, sizeof(out));
	EXPECT_EQ(0, i) TH_LOG("%s", out);
	EXPECT_NE(0, strlen(out));
	fd = open(PCTR_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pctr_rd(fd, &st));
	EXPECT_EQ(0, st.pctr_fn[0]);
	close(fd);
}

TEST_HARNESS_MAIN
