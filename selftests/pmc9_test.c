// SPDX-License-Identifier: GPL-2.0
/*
 * NetBSD's pmc(9) in-kernel API (kmod/iface/pmc9.c), through the client
 * module built beside hwpmc.ko (kmod/pmc9client: hwpmc_pmc9_client.ko),
 * which this test loads and drives through its debugfs file.
 *
 * "soft": the test flavor without a model (the plain guest: SOFT rows only,
 * or the machine's hardware rows first where it has a PMU): the
 * counter list and types, a process's SYSCALL.ENTER counter (configure,
 * enable, disable, running, configured, PMC_ENABLED), fork (the child's
 * counter starts at zero and runs, the parent's own count leaves it out),
 * exit (PMC_VALUE_FLAGS_CHILDREN adds it), pmc_accumulate, kernel counters
 * (counting every process, EBUSY to processes, owner pid 0 in GETPMCINFO),
 * the errors.  "model": the same on the PMU model's hardware counters,
 * with exact counts (the test advances the model's counters itself).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_model_util.h"

#define CLIENT_CMD	"/sys/kernel/debug/hwpmc-pmc9-client/cmd"
#define EV_INSTR	0xc0
#define PMC_VALUE_FLAGS_CHILDREN 1

static char client_out[512];

/*
 * Run a client command: its "ret N" (N), 0 for "value V" (*v = V) and for
 * the "info" line (in client_out).
 */
static int __attribute__((format(printf, 2, 3)))
client(__u64 *v, const char *fmt, ...)
{
	char cmd[128];
	va_list ap;
	int fd, ret = -1000;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fd = open(CLIENT_CMD, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -2000 - errno;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		close(fd);
		return -3000;
	}
	n = pread(fd, client_out, sizeof(client_out) - 1, 0);
	close(fd);
	if (n <= 0)
		return -4000;
	client_out[n] = 0;
	if (sscanf(client_out, "ret %d", &ret) == 1)
		return ret;
	if (v && sscanf(client_out, "value %llu", (unsigned long long *)v) == 1)
		return 0;
	return strncmp(client_out, "n ", 2) ? ret : 0;	/* "info" */
}

/* Load the client module (built with the test flavor only). */
static int client_load(void)
{
	char path[PATH_MAX];
	int fd, err;

	if (!access(CLIENT_CMD, F_OK))
		return 0;
	err = hwpmc_module_file("test/", path, sizeof(path));
	if (err)
		return err;
	/* hwpmc_module_file() named hwpmc.ko: the client is beside it. */
	strcpy(strrchr(path, '/') + 1, "hwpmc_pmc9_client.ko");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	err = syscall(SYS_finit_module, fd, "", 0) ? errno : 0;
	close(fd);
	return err;
}

static void client_unload(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, "hwpmc_pmc9_client", O_NONBLOCK) ||
		    errno == ENOENT)
			return;
		usleep(50000);
	}
}

/* Before the release module comes back at exit: no client holds hwpmc. */
static void __attribute__((constructor)) unload_client_at_exit(void)
{
	model_at_exit = client_unload;
}

/* Counter list of the loaded module: hardware rows first, then SOFT. */
struct rows {
	__u32 nhw, nsoft, hwclass, cputype;
};

static int get_rows(struct rows *r)
{
	struct pmc_op_getcpuinfo ci;
	int fd = hwpmc_open();

	if (fd < 0)
		return errno;
	memset(r, 0, sizeof(*r));
	r->hwclass = PMC_CLASS_IAP;
	if (hwpmc_class_firstrow(fd, PMC_CLASS_IAP, &r->nhw) < 0) {
		r->nhw = 0;
		r->hwclass = PMC_CLASS_K8;
		if (hwpmc_class_firstrow(fd, PMC_CLASS_K8, &r->nhw) < 0)
			r->nhw = 0;
	}
	hwpmc_class_firstrow(fd, PMC_CLASS_SOFT, &r->nsoft);
	if (!hwpmc_cpuinfo(fd, &ci))
		r->cputype = ci.pm_cputype;
	close(fd);
	return 0;
}

/* --- the SOFT rows ----------------------------------------------------- */

FIXTURE(soft) {
	struct rows r;
	int ctr;		/* the first SOFT counter */
};

FIXTURE_SETUP(soft)
{
	char why[256] = "";

	if (geteuid())
		SKIP(return, "needs root: it loads the client module");
	/* The test flavor without a model: the plain guest's classes. */
	client_unload();
	ASSERT_EQ(0, model_use("", why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, client_load());
	ASSERT_EQ(0, get_rows(&self->r));
	ASSERT_NE(0, self->r.nsoft);
	self->ctr = self->r.nhw;
}

FIXTURE_TEARDOWN(soft)
{
	client_unload();
}

/* pmc_get_num_counters, pmc_get_counter_type (and -1). */
TEST_F(soft, counters_and_types)
{
	char want[256];
	int len, i;

	ASSERT_EQ(0, client(NULL, "info"));
	len = snprintf(want, sizeof(want), "n %u cputype %u types",
		       self->r.nhw + self->r.nsoft, self->r.cputype);
	for (i = 0; i < (int)(self->r.nhw + self->r.nsoft); i++)
		len += snprintf(want + len, sizeof(want) - len, "%s%u",
				i ? "," : " ",
				i < (int)self->r.nhw ? self->r.hwclass
						     : PMC_CLASS_SOFT);
	EXPECT_EQ(0, strncmp(client_out, want, strlen(want)))
		TH_LOG("got '%s' want '%s'", client_out, want);
}

/* Bad counters, flags and tasks; a task never configured: ENOENT. */
TEST_F(soft, errors)
{
	int n = self->r.nhw + self->r.nsoft, me = getpid();
	__u64 v;

	EXPECT_EQ(-EINVAL, client(NULL, "conf %d %d %d 0 0", me, n,
				  PMC_SOFT_SYSCALL_ENTER));
	EXPECT_EQ(-EINVAL, client(NULL, "conf %d -2 %d 0 0", me,
				  PMC_SOFT_SYSCALL_ENTER));
	EXPECT_EQ(-EINVAL, client(NULL, "conf %d %d 99 0 0", me, self->ctr));
	EXPECT_EQ(-ENOENT, client(&v, "get %d %d 0", me, self->ctr));
	EXPECT_EQ(-ENOENT, client(NULL, "enable %d %d", me, self->ctr));
	EXPECT_EQ(-ENOENT, client(NULL, "disable %d %d", me, self->ctr));
	EXPECT_EQ(0, client(NULL, "running %d %d", me, self->ctr));
	EXPECT_EQ(0, client(NULL, "configured %d %d", me, self->ctr));
	EXPECT_EQ(-ESRCH, client(NULL, "get 999999 %d 0", self->ctr));
	EXPECT_EQ(-ENOENT, client(&v, "get 0 %d 0", self->ctr));
	EXPECT_EQ(-ENOENT, client(NULL, "kfree %d", self->ctr));
	EXPECT_EQ(-EINVAL, client(NULL, "kalloc %d 0 0", n));
	EXPECT_EQ(-EINVAL, client(NULL, "prof_start %d %d 0 0",
				  self->ctr, PMC_SOFT_CLOCK_HARD));
	EXPECT_EQ(-EINVAL, client(NULL, "prof_start %d %d 0 1", n,
				  PMC_SOFT_CLOCK_HARD));
	EXPECT_EQ(-ENOENT, client(NULL, "prof_stop %d", self->ctr));
}

#define SLACK	64	/* the client's own syscalls around a burst */

/*
 * A process's counter: configured (stopped), enabled (counts its
 * syscalls), disabled (stops); fork: the child counts from zero, apart
 * from the parent; exit: PMC_VALUE_FLAGS_CHILDREN adds what it counted.
 */
TEST_F(soft, process_counter_fork_exit)
{
	int me = getpid(), ctr = self->ctr, p[2], st;
	__u64 v0, v1, v2, vc, child_v = 0;
	pid_t pid;

	ASSERT_EQ(0, client(NULL, "conf %d %d %d 0 0", me, ctr,
			    PMC_SOFT_SYSCALL_ENTER));
	EXPECT_EQ(1, client(NULL, "configured %d %d", me, ctr));
	EXPECT_EQ(0, client(NULL, "running %d %d", me, ctr));
	hwpmc_burn_syscalls(1000);
	ASSERT_EQ(0, client(&v0, "get %d %d 0", me, ctr));
	EXPECT_EQ(0, v0);
	ASSERT_EQ(0, client(NULL, "enable %d %d", me, ctr));
	EXPECT_EQ(1, client(NULL, "running %d %d", me, ctr));
	EXPECT_EQ(1, client(NULL, "enabled %d", me));
	hwpmc_burn_syscalls(1000);
	ASSERT_EQ(0, client(&v1, "get %d %d 0", me, ctr));
	EXPECT_LE(1000, v1);
	EXPECT_GE(1000 + SLACK, v1);

	/* The child: its own counter from zero, running. */
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		__u64 a = 99, b = 0;

		close(p[0]);
		if (client(&a, "get %d %d 0", getpid(), ctr))
			_exit(10);
		hwpmc_burn_syscalls(5000);
		if (client(&b, "get %d %d 0", getpid(), ctr))
			_exit(11);
		if (write(p[1], &b, sizeof(b)) != sizeof(b))
			_exit(12);
		_exit(a < SLACK && b >= 5000 && b < 5000 + 2 * SLACK ? 0 : 13);
	}
	close(p[1]);
	ASSERT_EQ(sizeof(child_v), read(p[0], &child_v, sizeof(child_v)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("child: status 0x%x, counted %llu", st,
		       (unsigned long long)child_v);
	ASSERT_EQ(0, client(&v2, "get %d %d 0", me, ctr));
	EXPECT_GE(v1 + 3 * SLACK, v2) TH_LOG("the child's count is not ours");
	ASSERT_EQ(0, client(&vc, "get %d %d %d", me, ctr,
			    PMC_VALUE_FLAGS_CHILDREN));
	EXPECT_LE(v2 + child_v, vc);
	EXPECT_GE(v2 + child_v + 4 * SLACK, vc);
	/* pmc_accumulate of a child counted with us: nothing to add. */
	EXPECT_EQ(0, client(NULL, "accumulate %d %d", me, me));

	ASSERT_EQ(0, client(NULL, "disable %d %d", me, ctr));
	EXPECT_EQ(0, client(NULL, "running %d %d", me, ctr));
	ASSERT_EQ(0, client(&v1, "get %d %d 0", me, ctr));
	hwpmc_burn_syscalls(1000);
	ASSERT_EQ(0, client(&v2, "get %d %d 0", me, ctr));
	EXPECT_GE(v1 + SLACK, v2);
	/* Configured again: from its reset value. */
	ASSERT_EQ(0, client(NULL, "conf %d %d %d 0 1000000", me, ctr,
			    PMC_SOFT_SYSCALL_ENTER));
	ASSERT_EQ(0, client(&v1, "get %d %d 0", me, ctr));
	EXPECT_EQ(1000000, v1);
}

/*
 * A kernel counter counts every process (here: the syscalls of a child
 * the test does not configure), takes its row from processes (EBUSY),
 * shows in GETPMCINFO as a system PMC of pid 0, and gives it back.
 */
TEST_F(soft, kernel_counter)
{
	int me = getpid(), ctr = self->ctr + 1, h, st;
	struct pmc_info info[64];
	__u32 n = 64;
	__u64 a, b;
	pid_t pid;
	int first;

	ASSERT_EQ(0, client(NULL, "kalloc %d %d 0 0", ctr,
			    PMC_SOFT_SYSCALL_ENTER));
	EXPECT_EQ(-EBUSY, client(NULL, "kalloc %d %d 0 0", ctr,
				 PMC_SOFT_SYSCALL_ENTER));
	EXPECT_EQ(1, client(NULL, "running %d %d", me, ctr));
	EXPECT_EQ(1, client(NULL, "configured %d %d", me, ctr));
	EXPECT_EQ(1, client(NULL, "enabled %d", me));
	EXPECT_EQ(-EBUSY, client(NULL, "conf %d %d %d 0 0", me, ctr,
				 PMC_SOFT_SYSCALL_ENTER));
	h = hwpmc_open();
	ASSERT_LE(0, h);
	first = hwpmc_class_firstrow(h, PMC_CLASS_SOFT, NULL);
	ASSERT_EQ(0, hwpmc_pmcinfo(h, 0, info, &n));
	EXPECT_EQ(0, info[first + 1].pm_ownerpid);
	EXPECT_EQ(PMC_MODE_SC, info[first + 1].pm_mode);
	EXPECT_EQ(PMC_DISP_STANDALONE, info[first + 1].pm_rowdisp);
	ASSERT_EQ(0, client(&a, "get 0 %d 0", ctr));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		hwpmc_burn_syscalls(20000);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, client(&b, "get 0 %d 0", ctr));
	EXPECT_LE(a + 20000, b);
	ASSERT_EQ(0, client(NULL, "kfree %d", ctr));
	n = 64;
	ASSERT_EQ(0, hwpmc_pmcinfo(h, 0, info, &n));
	EXPECT_EQ(-1, info[first + 1].pm_ownerpid);
	EXPECT_EQ(0, client(NULL, "conf %d %d %d 0 0", me, ctr,
			    PMC_SOFT_SYSCALL_ENTER));
	close(h);
}

#define PROFILE	"/sys/kernel/debug/hwpmc-profile"

struct ksym {
	unsigned long addr;
	char name[64];
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's text symbols (t/T) of /proc/kallsyms, sorted; their count. */
static int read_ksyms(struct ksym **out, unsigned long *stext)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct ksym *v = NULL;
	int n = 0, cap = 0;
	char line[256], type, name[64], mod[64];
	unsigned long addr;

	*stext = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		mod[0] = 0;
		if (sscanf(line, "%lx %c %63s %63s", &addr, &type, name, mod) < 3 ||
		    mod[0] || (type != 't' && type != 'T'))
			continue;
		if (!strcmp(name, "_stext"))
			*stext = addr;
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				break;
		}
		v[n].addr = addr;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		n++;
	}
	fclose(f);
	if (!v)
		return -1;
	qsort(v, n, sizeof(*v), ksym_cmp);
	*out = v;
	return n;
}

static const char *ksym_of(struct ksym *v, int n, unsigned long addr)
{
	int lo = 0, hi = n - 1, mid;

	if (n <= 0 || addr < v[0].addr)
		return "?";
	while (lo < hi) {
		mid = (lo + hi + 1) / 2;
		if (v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return v[lo].name;
}

/*
 * pmc_start_profiling on CLOCK.HARD (every tick, every CPU) while this
 * process makes syscalls: the debugfs profile, in /proc/profile's format,
 * has the bucket size first, hits, and hits in the syscall path (the known
 * hot path); readprofile (util-linux) reads it with /proc/kallsyms as its
 * map; a second start is EBUSY, stop twice ENOENT, a write zeroes it.
 */
TEST_F(soft, kernel_profiling)
{
	static unsigned int prof[1 << 22];
	unsigned long stext, total = 0, hot = 0;
	struct ksym *syms = NULL;
	int fd, nsyms, i, st;
	char out[8192];
	ssize_t n;
	FILE *p;
	__u64 t0;

	fd = open(PROFILE, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		EXPECT_EQ(1, write(fd, "0", 1));
		close(fd);
	}
	ASSERT_EQ(0, client(NULL, "prof_start %d %d 0 1", self->ctr + 2,
			    PMC_SOFT_CLOCK_HARD));
	EXPECT_EQ(-EBUSY, client(NULL, "prof_start %d %d 0 1", self->ctr + 2,
				 PMC_SOFT_CLOCK_HARD));
	t0 = hwpmc_clock_ns(CLOCK_MONOTONIC);
	while (hwpmc_clock_ns(CLOCK_MONOTONIC) - t0 < 2000000000ULL)
		hwpmc_burn_syscalls(1000);
	ASSERT_EQ(0, client(NULL, "prof_stop %d", self->ctr + 2));
	EXPECT_EQ(-ENOENT, client(NULL, "prof_stop %d", self->ctr + 2));

	fd = open(PROFILE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	n = read(fd, prof, sizeof(prof));
	close(fd);
	ASSERT_LT(8, n);
	EXPECT_EQ(16, prof[0]);
	nsyms = read_ksyms(&syms, &stext);
	ASSERT_LT(0, nsyms);
	ASSERT_NE(0, stext);
	for (i = 1; i < n / 4; i++) {
		const char *name;

		if (!prof[i])
			continue;
		total += prof[i];
		name = ksym_of(syms, nsyms, stext + (unsigned long)(i - 1) * 16);
		if (strstr(name, "syscall") || strstr(name, "getppid") ||
		    strstr(name, "SYSCALL"))
			hot += prof[i];
	}
	free(syms);
	EXPECT_LT(0, total);
	EXPECT_LT(0, hot) TH_LOG("%lu kernel samples, none in the syscall path",
				 total);

	/* readprofile reads it, /proc/kallsyms as its map. */
	p = popen("readprofile -p " PROFILE " -m /proc/kallsyms 2>&1", "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n > 0 ? n : 0] = 0;
	st = pclose(p);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "total")) TH_LOG("%s", out);

	/* A write zeroes it. */
	fd = open(PROFILE, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, write(fd, "0", 1));
	close(fd);
	fd = open(PROFILE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	n = read(fd, prof, sizeof(prof));
	close(fd);
	for (i = 1, total = 0; i < n / 4; i++)
		total += prof[i];
	EXPECT_EQ(0, total);
}

/* --- the PMU model: hardware counters, exact counts --------------------- */

FIXTURE(model) {
	struct rows r;
	int cpu, other;
};

FIXTURE_VARIANT(model) {
	const char *model;
};

FIXTURE_VARIANT_ADD(model, intel) {
	.model = "intel",
};

FIXTURE_VARIANT_ADD(model, amd) {
	.model = "amd",
};

FIXTURE_SETUP(model)
{
	char why[256] = "";

	if (geteuid())
		SKIP(return, "needs root: it loads the test flavor of the module");
	client_unload();
	ASSERT_EQ(0, model_use(variant->model, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_EQ(0, client_load());
	ASSERT_EQ(0, get_rows(&self->r));
	ASSERT_LE(2, self->r.nhw);
	model_cpus(&self->cpu, &self->other);
	ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
}

FIXTURE_TEARDOWN(model)
{
	client_unload();
}

/*
 * Hardware counter 0 of this process: counts only while enabled, only its
 * own mode; the child's counter starts at zero and its count comes back
 * with PMC_VALUE_FLAGS_CHILDREN; counter 1 as a kernel counter counts for
 * everyone and is EBUSY to processes.
 */
TEST_F(model, hardware_counters)
{
	int me = getpid(), st;
	__u64 v, a, b;
	pid_t pid;

	ASSERT_EQ(0, client(NULL, "conf %d 0 %d %llu 0", me, EV_INSTR,
			    (unsigned long long)PMC_X86_CONFIG_USR));
	ASSERT_EQ(0, model_advance("usr 100"));
	ASSERT_EQ(0, client(&v, "get %d 0 0", me));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, client(NULL, "enable %d 0", me));
	ASSERT_EQ(0, model_advance("usr 1000"));
	ASSERT_EQ(0, model_advance("os 77"));
	ASSERT_EQ(0, client(&v, "get %d 0 0", me));
	EXPECT_EQ(1000, v);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		__u64 c = 1;

		if (client(&c, "get %d 0 0", getpid()) || c)
			_exit(10);
		if (model_advance("usr 300"))
			_exit(11);
		if (client(&c, "get %d 0 0", getpid()) || c != 300)
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("0x%x", st);
	ASSERT_EQ(0, client(&v, "get %d 0 0", me));
	EXPECT_EQ(1000, v);
	ASSERT_EQ(0, client(&v, "get %d 0 %d", me, PMC_VALUE_FLAGS_CHILDREN));
	EXPECT_EQ(1300, v);
	ASSERT_EQ(0, client(NULL, "disable %d 0", me));
	ASSERT_EQ(0, model_advance("usr 5"));
	ASSERT_EQ(0, client(&v, "get %d 0 0", me));
	EXPECT_EQ(1000, v);

	ASSERT_EQ(0, client(NULL, "kalloc 1 %d %llu 0", EV_INSTR,
			    (unsigned long long)PMC_X86_CONFIG_USR));
	EXPECT_EQ(-EBUSY, client(NULL, "conf %d 1 %d 0 0", me, EV_INSTR));
	ASSERT_EQ(0, client(&a, "get 0 1 0"));
	ASSERT_EQ(0, model_advance("usr 400"));
	if (self->other >= 0) {
		ASSERT_EQ(0, hwpmc_pin_cpu(self->other));
		ASSERT_EQ(0, model_advance("usr 40"));
		ASSERT_EQ(0, hwpmc_pin_cpu(self->cpu));
	}
	ASSERT_EQ(0, client(&b, "get 0 1 0"));
	EXPECT_EQ(self->other >= 0 ? 440 : 400, b - a);
	ASSERT_EQ(0, client(NULL, "kfree 1"));
	EXPECT_EQ(0, client(NULL, "conf %d 1 %d 0 0", me, EV_INSTR));
}

TEST_HARNESS_MAIN
