// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU user-stack areas of PMC_F_USERSTACK sampling (issue 14's
 * follow-up): who creates them, what they cost, what frees them.  The
 * independent truth is /proc/vmallocinfo, where each vmalloc area is
 * listed with its size and the function that allocated it (the module's
 * ustack allocator, "[hwpmc]"); the parent, root, reads it while a child,
 * root or uid 65534, works:
 *
 *  - the first USERSTACK PMC creates one area per possible CPU of at least
 *    nsamples * max_user_stack bytes, a second one none; the areas stay
 *    while any USERSTACK PMC lives and are gone once the last is released,
 *    whether by PMCRELEASE, close() or the owner's exit;
 *  - a PMC whose copy is at most PMC_USTACK_SMALL bytes (hwpmc-record
 *    -g's) creates only the small tier's areas: nsamples *
 *    PMC_USTACK_SMALL bytes per possible CPU (rounded up to pages, and
 *    vmalloc's guard page), and the module's vmalloc memory grows by just
 *    that; small and large PMCs coexist, each tier's areas made by its
 *    first PMC and freed with its last, and both sample together, each
 *    sample's copy read from its own tier's area;
 *  - allocate/release cycles leave the module's vmalloc memory exactly as
 *    it was;
 *  - the areas are charged to the memory cgroup of the task that creates
 *    them (memory.stat "vmalloc") and uncharged when they go; a cgroup
 *    that cannot hold them all gets ENOMEM and no area is left;
 *  - one owner's release while another owner's USERSTACK sampler runs
 *    frees nothing: the sampler goes on getting stack copies;
 *  - releasing a USERSTACK sampler while it samples (PMCRELEASE of the
 *    running PMC, close(), exit) is clean: the areas go, the kernel log
 *    stays clean (the rig checks it; KASAN on the debug kernel).
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"
#include "hwpmc_ustack_util.h"

#include <grp.h>
#include <pthread.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#define NOBODY		65534
#define PERIOD_NS	100000		/* CLOCK.PROF at 10 kHz */
#define LOGPATH		"/tmp/hwpmc-ustack-area-test.log"
#define CGROOT		"/sys/fs/cgroup"
#define CG		CGROOT "/hwpmc-ustack-area-test"
#define PARAMS		"/sys/module/hwpmc/parameters/"

/* The module's user-stack areas in /proc/vmallocinfo. */
struct areas {
	int n;			/* how many */
	long min, max, bytes;	/* the smallest, largest, all of them */
	long hwpmc_bytes;	/* every vmalloc area of the module */
};

/*
 * The module's user-stack areas of more than @above bytes (0: all), in
 * @a; with @below, those of at most @above bytes in it.
 */
static int scan_split(struct areas *a, long above, struct areas *below)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	long size;

	memset(a, 0, sizeof(*a));
	if (below)
		memset(below, 0, sizeof(*below));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct areas *t = a;

		if (!strstr(line, "[hwpmc]") ||
		    sscanf(line, "%*s %ld", &size) != 1)
			continue;
		a->hwpmc_bytes += size;
		if (below)
			below->hwpmc_bytes += size;
		if (!strstr(line, "ustack"))
			continue;
		if (size <= above) {
			if (!below)
				continue;
			t = below;
		}
		if (!t->n || size < t->min)
			t->min = size;
		if (size > t->max)
			t->max = size;
		t->n++;
		t->bytes += size;
	}
	fclose(f);
	return 0;
}

static int scan_areas(struct areas *a)
{
	return scan_split(a, 0, NULL);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* CPUs in /sys/devices/system/cpu/possible ("0-3,5"). */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	char buf[256], *p, *tok;
	int n = 0, lo, hi;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	for (tok = strtok_r(buf, ",\n", &p); tok;
	     tok = strtok_r(NULL, ",\n", &p)) {
		if (sscanf(tok, "%d-%d", &lo, &hi) == 2)
			n += hi - lo + 1;
		else if (sscanf(tok, "%d", &lo) == 1)
			n++;
	}
	return n;
}

/* Bytes one CPU's area must hold. */
static long area_size(void)
{
	return read_long(PARAMS "nsamples") * read_long(PARAMS "max_user_stack");
}

/* A USERSTACK sampler copying @size bytes (0: the default). */
static int alloc_us_size(int fd, __u32 size, __u32 *id)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
		.pm_event = PMC_SOFT_CLOCK_PROF, .pm_mode = PMC_MODE_TS,
		.pm_flags = PMC_F_CALLCHAIN | PMC_F_USERSTACK,
		.pm_ustack_size = size, .pm_count = PERIOD_NS,
	};
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a);

	if (!err && id)
		*id = a.pm_pmcid;
	return err;
}

static int alloc_us(int fd, __u32 *id)
{
	return alloc_us_size(fd, 0, id);
}

/* A log file nobody else sees (a log may not be /dev/null). */
static int tmp_log(void)
{
	return open("/tmp", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
}

static int become(uid_t uid)
{
	if (!uid)
		return 0;
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid) || prctl(PR_SET_DUMPABLE, 1))
		return -1;
	return 0;
}

/* User-mode work with a marker in its frame. */
static void spin(double secs)
{
	hwpmc_marker_spin(secs, 200000);
}

/* Tell the parent step @step is done and wait for its go. */
static int step(struct hwpmc_child *me, __u64 step)
{
	__u64 v;

	return hwpmc_send_u64(me, step) || hwpmc_recv_u64(me, &v);
}

/*
 * The lifetime steps, as the uid in *arg: 1: one PMC; 2: two; 3: the
 * first released; 4: both released; 5: one more; 6: its owner closed;
 * 7: one more, then exit with it.
 */
static int lifetime_main(struct hwpmc_child *me, void *arg)
{
	__u32 a, b;
	int fd;

	if (become(*(uid_t *)arg))
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 2;
	if (alloc_us(fd, &a) || step(me, 1))
		return 3;
	if (alloc_us(fd, &b) || step(me, 2))
		return 4;
	if (hwpmc_release(fd, a) || step(me, 3))
		return 5;
	if (hwpmc_release(fd, b) || step(me, 4))
		return 6;
	if (alloc_us(fd, &a) || step(me, 5))
		return 7;
	close(fd);
	if (step(me, 6))
		return 8;
	fd = hwpmc_open();
	if (fd < 0 || alloc_us(fd, &a) || step(me, 7))
		return 9;
	return 0;	/* exits with the PMC */
}

static void lifetime(struct __test_metadata *_metadata, uid_t uid)
{
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	int ncpu = possible_cpus();
	long size = area_size();
	struct areas a, two = { 0 };
	__u64 v;

	ASSERT_LT(0, ncpu);
	ASSERT_LT(0, size);
	ASSERT_EQ(0, scan_areas(&a));
	ASSERT_EQ(0, a.n) TH_LOG("areas before any USERSTACK PMC: %d (%ld bytes)",
				  a.n, a.bytes);
	ASSERT_EQ(0, hwpmc_child_start(&c, lifetime_main, &uid));
	for (v = 1; v <= 7; v++) {
		__u64 got;

		ASSERT_EQ(0, hwpmc_recv_u64(&c, &got))
			TH_LOG("child failed before step %llu: %d",
			       (unsigned long long)v, hwpmc_child_wait(&c));
		ASSERT_EQ(v, got);
		ASSERT_EQ(0, scan_areas(&a));
		TH_LOG("uid %u, step %llu: %d areas, %ld bytes (smallest %ld)",
		       uid, (unsigned long long)v, a.n, a.bytes, a.min);
		switch (v) {
		case 1: case 5: case 7:
			/* One area per possible CPU, each big enough. */
			EXPECT_EQ(ncpu, a.n);
			EXPECT_LE(size, a.min);
			if (v == 1)
				two = a;
			break;
		case 2: case 3:
			/* The second PMC shares them. */
			EXPECT_EQ(two.n, a.n);
			EXPECT_EQ(two.bytes, a.bytes);
			break;
		case 4: case 6:
			/* The last one released, or its owner closed: gone. */
			EXPECT_EQ(0, a.n);
			break;
		}
		ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	}
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	/* The owner's exit released the last one. */
	ASSERT_EQ(0, scan_areas(&a));
	EXPECT_EQ(0, a.n);
}

TEST(lifetime_root)
{
	lifetime(_metadata, 0);
}

TEST(lifetime_nobody)
{
	lifetime(_metadata, NOBODY);
}

#define CYCLES	32

/* CYCLES allocate/release cycles, a sampler started in every other. */
static int cycles_fn(void *arg)
{
	int i, fd, logfd = tmp_log();
	__u32 id;

	fd = hwpmc_open();
	if (fd < 0 || logfd < 0)
		return 2;
	if (hwpmc_configure_log(fd, logfd))
		return 3;
	for (i = 0; i < CYCLES; i++) {
		if (alloc_us(fd, &id))
			return 4;
		if (i & 1) {
			if (hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id))
				return 5;
			spin(0.01);
		}
		if (hwpmc_release(fd, id))
			return 6;
	}
	if (hwpmc_closelog(fd))
		return 7;
	close(fd);
	close(logfd);
	return 0;
}

static void cycles(struct __test_metadata *_metadata, uid_t uid)
{
	struct areas before, after;
	pid_t pid;
	int st;

	ASSERT_EQ(0, scan_areas(&before));
	ASSERT_EQ(0, before.n);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(become(uid) ? 1 : cycles_fn(NULL));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st) TH_LOG("cycles failed: %#x", st);
	ASSERT_EQ(0, scan_areas(&after));
	TH_LOG("uid %u: the module's vmalloc bytes %ld before %d cycles, %ld after; %d areas after",
	       uid, before.hwpmc_bytes, CYCLES, after.hwpmc_bytes, after.n);
	EXPECT_EQ(0, after.n);
	EXPECT_EQ(before.hwpmc_bytes, after.hwpmc_bytes);
}

TEST(cycles_root)
{
	cycles(_metadata, 0);
}

TEST(cycles_nobody)
{
	cycles(_metadata, NOBODY);
}

/* --- the small tier ------------------------------------------------------ */

/*
 * The largest a small-tier area may be in /proc/vmallocinfo: its bytes
 * rounded up to pages, and the guard page vmalloc adds.
 */
static long small_area_max(void)
{
	long page = sysconf(_SC_PAGESIZE);
	long bytes = read_long(PARAMS "nsamples") * PMC_USTACK_SMALL;

	return (bytes + page - 1) / page * page + page;
}

/* The tiers told apart by size: the large one's areas are far bigger. */
static int tiers_apart(void)
{
	return area_size() > 2 * small_area_max();
}

/*
 * The small-tier steps, as the uid in *arg: 1: a PMC of PMC_USTACK_SMALL
 * bytes; 2: one of 8; 3: both released.
 */
static int small_main(struct hwpmc_child *me, void *arg)
{
	__u32 a, b;
	int fd;

	if (become(*(uid_t *)arg))
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 2;
	if (alloc_us_size(fd, PMC_USTACK_SMALL, &a) || step(me, 1))
		return 3;
	if (alloc_us_size(fd, 8, &b) || step(me, 2))
		return 4;
	if (hwpmc_release(fd, a) || hwpmc_release(fd, b) || step(me, 3))
		return 5;
	close(fd);
	return 0;
}

static void small_only(struct __test_metadata *_metadata, uid_t uid)
{
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	long want = read_long(PARAMS "nsamples") * PMC_USTACK_SMALL;
	struct areas before, large, small, first = { 0 };
	int ncpu = possible_cpus();
	__u64 v;

	ASSERT_LT(0, ncpu);
	ASSERT_LT(0, want);
	if (!tiers_apart())
		SKIP(return, "max_user_stack %ld too small to tell the tiers apart",
		     read_long(PARAMS "max_user_stack"));
	ASSERT_EQ(0, scan_areas(&before));
	ASSERT_EQ(0, before.n);
	ASSERT_EQ(0, hwpmc_child_start(&c, small_main, &uid));
	for (v = 1; v <= 3; v++) {
		__u64 got;

		ASSERT_EQ(0, hwpmc_recv_u64(&c, &got))
			TH_LOG("child failed before step %llu: %d",
			       (unsigned long long)v, hwpmc_child_wait(&c));
		ASSERT_EQ(v, got);
		ASSERT_EQ(0, scan_split(&large, small_area_max(), &small));
		TH_LOG("uid %u, step %llu: %d small areas (%ld-%ld bytes, %ld in all, %ld per CPU wanted), %d large; the module's vmalloc bytes %ld, %ld before",
		       uid, (unsigned long long)v, small.n, small.min,
		       small.max, small.bytes, want, large.n,
		       small.hwpmc_bytes, before.hwpmc_bytes);
		EXPECT_EQ(0, large.n);
		if (v == 3) {
			/* The last one released: gone, all of it. */
			EXPECT_EQ(0, small.n);
			EXPECT_EQ(before.hwpmc_bytes, small.hwpmc_bytes);
		} else {
			/* nsamples * PMC_USTACK_SMALL per possible CPU. */
			EXPECT_EQ(ncpu, small.n);
			EXPECT_LE(want, small.min);
			EXPECT_GE(small_area_max(), small.max);
			/* Nothing else: the module grew by them alone. */
			EXPECT_EQ(before.hwpmc_bytes + small.bytes,
				  small.hwpmc_bytes);
			if (v == 1)
				first = small;
			/* The second small PMC shares them. */
			EXPECT_EQ(first.bytes, small.bytes);
		}
		ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	}
	EXPECT_EQ(0, hwpmc_child_wait(&c));
}

TEST(small_tier_only_root)
{
	small_only(_metadata, 0);
}

TEST(small_tier_only_nobody)
{
	small_only(_metadata, NOBODY);
}

/*
 * Both tiers, as the uid in *arg; after each step the small and large
 * PMCs alive: 1: small A (1, 0); 2: large B (1, 1); 3: small C (2, 1);
 * 4: A released (1, 1); 5: B released (1, 0); 6: large D (1, 1); 7: C
 * released (0, 1); 8: the owner closed (0, 0).
 */
static int tiers_main(struct hwpmc_child *me, void *arg)
{
	__u32 a, b, c, d;
	int fd;

	if (become(*(uid_t *)arg))
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 2;
	if (alloc_us_size(fd, PMC_USTACK_SMALL, &a) || step(me, 1))
		return 3;
	if (alloc_us(fd, &b) || step(me, 2))
		return 4;
	if (alloc_us_size(fd, 16, &c) || step(me, 3))
		return 5;
	if (hwpmc_release(fd, a) || step(me, 4))
		return 6;
	if (hwpmc_release(fd, b) || step(me, 5))
		return 7;
	if (alloc_us_size(fd, PMC_USTACK_SMALL + 8, &d) || step(me, 6))
		return 8;
	if (hwpmc_release(fd, c) || step(me, 7))
		return 9;
	close(fd);
	return step(me, 8) ? 10 : 0;
}

static void tiers(struct __test_metadata *_metadata, uid_t uid)
{
	/* After each step: are there small, large PMCs? */
	static const int has_small[] = { 0, 1, 1, 1, 1, 1, 1, 0, 0 };
	static const int has_large[] = { 0, 0, 1, 1, 1, 0, 1, 1, 0 };
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	struct areas large, small, s0 = { 0 }, l0 = { 0 };
	int ncpu = possible_cpus();
	long size = area_size();
	__u64 v;

	ASSERT_LT(0, ncpu);
	if (!tiers_apart())
		SKIP(return, "max_user_stack %ld too small to tell the tiers apart",
		     read_long(PARAMS "max_user_stack"));
	ASSERT_EQ(0, scan_areas(&small));
	ASSERT_EQ(0, small.n);
	ASSERT_EQ(0, hwpmc_child_start(&c, tiers_main, &uid));
	for (v = 1; v <= 8; v++) {
		__u64 got;

		ASSERT_EQ(0, hwpmc_recv_u64(&c, &got))
			TH_LOG("child failed before step %llu: %d",
			       (unsigned long long)v, hwpmc_child_wait(&c));
		ASSERT_EQ(v, got);
		ASSERT_EQ(0, scan_split(&large, small_area_max(), &small));
		TH_LOG("uid %u, step %llu: %d small areas (%ld bytes), %d large (%ld bytes)",
		       uid, (unsigned long long)v, small.n, small.bytes,
		       large.n, large.bytes);
		EXPECT_EQ(has_small[v] ? ncpu : 0, small.n);
		EXPECT_EQ(has_large[v] ? ncpu : 0, large.n);
		if (has_large[v])
			EXPECT_LE(size, large.min);
		/* A tier's areas are never remade while it has a PMC. */
		if (has_small[v] && s0.n)
			EXPECT_EQ(s0.bytes, small.bytes);
		if (has_large[v] && l0.n)
			EXPECT_EQ(l0.bytes, large.bytes);
		if (has_small[v] && !s0.n)
			s0 = small;
		if (has_large[v] && !l0.n)
			l0 = large;
		ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	}
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	ASSERT_EQ(0, scan_areas(&small));
	EXPECT_EQ(0, small.n);
}

TEST(tiers_coexist_root)
{
	tiers(_metadata, 0);
}

TEST(tiers_coexist_nobody)
{
	tiers(_metadata, NOBODY);
}

/*
 * A small and a large sampler on one thread at once, as @uid: each
 * sample's copy is its PMC's size, and holds spin()'s marker (so was read
 * from the area its sampler wrote, not the other tier's).
 */
struct tierstats {
	__u32 small_id, large_id;
	__u64 text_lo, text_hi;		/* this program's code */
	int n[2], copied[2], in_text[2], marker[2], bad_size;
};

/* The executable mapping holding @addr (the child's too: a fork). */
static int text_of(__u64 addr, __u64 *lo, __u64 *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long a, b;
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && addr >= a &&
		    addr < b) {
			*lo = a;
			*hi = b;
			found = 1;
		}
	fclose(f);
	return found ? 0 : -1;
}

static int tiers_fn(const struct pmclog_header *h, void *arg)
{
	const struct pmclog_userstack *us = (const void *)h;
	struct tierstats *k = arg;
	__u64 w;
	__u32 i;
	int t;

	if (h->pl_type != PMCLOG_TYPE_USERSTACK)
		return 0;
	if (us->pl_pmcid != k->small_id && us->pl_pmcid != k->large_id) {
		k->bad_size++;
		return 0;
	}
	t = us->pl_pmcid == k->large_id;
	if (us->pl_size != (t ? PMC_USTACK_DEFAULT : PMC_USTACK_SMALL) ||
	    us->pl_copied > us->pl_size)
		k->bad_size++;
	if (!(us->pl_flags & PMCLOG_US_F_REGS))
		return 0;
	k->n[t]++;
	if (!us->pl_copied)
		return 0;
	k->copied[t]++;
	/* In this program's code (spin(), mostly): spin()'s frame at rsp. */
	w = us->pl_regs[PMCLOG_US_REG_RIP];
	if (w < k->text_lo || w >= k->text_hi)
		return 0;
	k->in_text[t]++;
	for (i = 0; i + 8 <= us->pl_copied; i += 8) {
		memcpy(&w, us->pl_stack + i, 8);
		if (w == MARKER) {
			k->marker[t]++;
			break;
		}
	}
	return 0;
}

/* The two samplers, ids back to the parent; the log to @arg[1]. */
static int both_main(struct hwpmc_child *me, void *arg)
{
	int *cfg = arg;		/* uid, logfd */
	__u32 s, l;
	int fd;

	if (become(cfg[0]))
		return 1;
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_configure_log(fd, cfg[1]) ||
	    alloc_us_size(fd, PMC_USTACK_SMALL, &s) ||
	    alloc_us_size(fd, PMC_USTACK_DEFAULT, &l))
		return 2;
	if (hwpmc_attach(fd, s, 0) || hwpmc_attach(fd, l, 0) ||
	    hwpmc_start(fd, s) || hwpmc_start(fd, l))
		return 3;
	/* Its clock looked at seldom: the samples are in spin()'s loop. */
	hwpmc_marker_spin(0.3, 2000000);
	if (hwpmc_stop(fd, s) || hwpmc_stop(fd, l) || hwpmc_closelog(fd))
		return 4;
	close(fd);
	return hwpmc_send_u64(me, ((__u64)l << 32) | s) ? 5 : 0;
}

static void both_sample(struct __test_metadata *_metadata, uid_t uid)
{
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	struct tierstats k = { 0 };
	struct areas a;
	int cfg[2], t;
	size_t len;
	char *buf;
	__u64 v;

	ASSERT_EQ(0, text_of((uintptr_t)both_sample, &k.text_lo, &k.text_hi));
	ASSERT_EQ(0, scan_areas(&a));
	ASSERT_EQ(0, a.n);
	cfg[0] = uid;
	cfg[1] = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0666);
	ASSERT_LE(0, cfg[1]);
	ASSERT_EQ(0, fchown(cfg[1], uid, uid));
	ASSERT_EQ(0, hwpmc_child_start(&c, both_main, cfg));
	close(cfg[1]);
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v))
		TH_LOG("the samplers failed: %d", hwpmc_child_wait(&c));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	k.small_id = (__u32)v;
	k.large_id = v >> 32;
	buf = hwpmc_slurp(LOGPATH, &len);
	unlink(LOGPATH);
	ASSERT_NE(NULL, buf);
	ASSERT_LT(0, hwpmc_for_each_record(buf, len, tiers_fn, &k));
	free(buf);
	TH_LOG("uid %u: small (%u bytes): %d samples with registers, %d with a copy, %d of them in the program's code, %d with spin()'s marker; large (%u bytes): %d, %d, %d, %d; %d bad",
	       uid, PMC_USTACK_SMALL, k.n[0], k.copied[0], k.in_text[0],
	       k.marker[0], PMC_USTACK_DEFAULT, k.n[1], k.copied[1],
	       k.in_text[1], k.marker[1], k.bad_size);
	EXPECT_EQ(0, k.bad_size);
	for (t = 0; t < 2; t++) {
		EXPECT_LE(50, k.n[t]);
		/* All but a sample taken at a migration (registers only). */
		EXPECT_LE(k.n[t] * 9 / 10, k.copied[t]);
	}
	/*
	 * spin()'s marker is 48 bytes above its rsp, within the small copy:
	 * the samples in the program's code (spin(), but for its calls) have
	 * it; those in its clock_gettime() (libc, the vDSO, the system call:
	 * 4-41% in the TCG guest with the clock looked at every 200,000
	 * iterations, the most under KASAN; now every 2,000,000) are not
	 * counted.
	 */
	for (t = 0; t < 2; t++) {
		EXPECT_LE(k.copied[t] / 2, k.in_text[t]);
		EXPECT_LE(k.in_text[t] * 9 / 10, k.marker[t]);
	}
	ASSERT_EQ(0, scan_areas(&a));
	EXPECT_EQ(0, a.n);
}

TEST(tiers_sample_together_root)
{
	both_sample(_metadata, 0);
}

TEST(tiers_sample_together_nobody)
{
	both_sample(_metadata, NOBODY);
}

/* --- charged to the creator's memory cgroup ------------------------------ */

static long cg_vmalloc(void)
{
	return (long)hwpmc_file_key(CG "/memory.stat", "vmalloc");
}

static long cg_long(const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), CG "/%s", file);
	return read_long(path);
}

/*
 * In the cgroup: 1: the first USERSTACK PMC refused (its errno), under a
 * limit that holds all the areas but half of one; 2: allocated without
 * the limit; 3: released.
 */
static int charge_main(struct hwpmc_child *me, void *arg)
{
	__u32 id;
	__u64 v;
	int fd;

	if (become(*(uid_t *)arg))
		return 1;
	if (hwpmc_send_u64(me, 0) || hwpmc_recv_u64(me, &v))
		return 2;
	fd = hwpmc_open();
	if (fd < 0 || step(me, alloc_us(fd, &id)))
		return 3;
	if (alloc_us(fd, &id) || step(me, 2))
		return 4;
	if (hwpmc_release(fd, id) || step(me, 3))
		return 5;
	close(fd);
	return 0;
}

static void charged(struct __test_metadata *_metadata, uid_t uid)
{
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	long base, held, freed, need = area_size() * possible_cpus();
	struct areas a;
	char buf[32];
	__u64 v;

	if (access(CGROOT "/cgroup.controllers", R_OK))
		mount("none", CGROOT, "cgroup2", 0, NULL);
	if (access(CGROOT "/cgroup.controllers", R_OK))
		SKIP(return, "no cgroup2 file system");
	hwpmc_write_str(CGROOT "/cgroup.subtree_control", "+memory");
	rmdir(CG);
	ASSERT_EQ(0, mkdir(CG, 0755));
	if (cg_vmalloc() < 0 || cg_long("memory.current") < 0) {
		rmdir(CG);
		SKIP(return, "no memory controller with a vmalloc count");
	}
	ASSERT_EQ(0, scan_areas(&a));
	ASSERT_EQ(0, a.n);
	ASSERT_EQ(0, hwpmc_child_start(&c, charge_main, &uid));
	snprintf(buf, sizeof(buf), "%d\n", c.pid);
	ASSERT_EQ(0, hwpmc_write_str(CG "/cgroup.procs", buf));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	base = cg_vmalloc();
	/* Room for all the areas but half of the last one. */
	snprintf(buf, sizeof(buf), "%ld\n",
		 cg_long("memory.current") + need - area_size() / 2);
	ASSERT_EQ(0, hwpmc_write_str(CG "/memory.max", buf));
	ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	EXPECT_EQ(ENOMEM, v) TH_LOG("PMCALLOCATE over the cgroup's limit");
	ASSERT_EQ(0, scan_areas(&a));
	EXPECT_EQ(0, a.n) TH_LOG("areas left by the failed allocation");
	EXPECT_EQ(base, cg_vmalloc());
	ASSERT_EQ(0, hwpmc_write_str(CG "/memory.max", "max\n"));
	ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	ASSERT_EQ(2, v);
	held = cg_vmalloc();
	ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	ASSERT_EQ(3, v);
	freed = cg_vmalloc();
	ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	TH_LOG("uid %u: the cgroup's vmalloc %ld, with the areas %ld (+%ld, need %ld), after the release %ld",
	       uid, base, held, held - base, need, freed);
	EXPECT_LE(need, held - base);
	EXPECT_EQ(base, freed);
	usleep(100000);
	EXPECT_EQ(0, rmdir(CG));
}

TEST(charged_root)
{
	charged(_metadata, 0);
}

TEST(charged_nobody)
{
	charged(_metadata, NOBODY);
}

/* --- another owner's release under a running sampler -------------------- */

/* The sampler: samples itself into @logfd, waits, samples on; t0 back. */
static int keep_main(struct hwpmc_child *me, void *arg)
{
	int *cfg = arg;		/* uid, logfd */
	struct timespec ts;
	__u32 id;
	__u64 t0;
	int fd;

	if (become(cfg[0]))
		return 1;
	fd = hwpmc_open();
	if (fd < 0 || hwpmc_configure_log(fd, cfg[1]) || alloc_us(fd, &id))
		return 2;
	if (hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id))
		return 3;
	spin(0.05);
	if (step(me, 1))
		return 4;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	spin(0.3);
	if (hwpmc_stop(fd, id) || hwpmc_closelog(fd))
		return 5;
	close(fd);
	return hwpmc_send_u64(me, t0) ? 6 : 0;
}

/* The other owner: a USERSTACK PMC allocated, started, released. */
static int other_fn(void *arg)
{
	__u32 id;
	int fd = hwpmc_open();

	if (fd < 0 || alloc_us(fd, &id))
		return 2;
	if (hwpmc_release(fd, id))
		return 3;
	if (alloc_us(fd, &id))
		return 4;
	close(fd);
	return 0;
}

struct keepstats {
	__u64 t0;
	int after, copied, marker;
};

static int keep_fn(const struct pmclog_header *h, void *arg)
{
	const struct pmclog_userstack *us = (const void *)h;
	struct keepstats *k = arg;
	__u64 w;
	__u32 i;

	if (h->pl_type != PMCLOG_TYPE_USERSTACK || h->pl_time < k->t0 ||
	    !(us->pl_flags & PMCLOG_US_F_REGS))
		return 0;
	k->after++;
	if (!us->pl_copied)
		return 0;
	k->copied++;
	for (i = 0; i + 8 <= us->pl_copied; i += 8) {
		memcpy(&w, us->pl_stack + i, 8);
		if (w == MARKER) {
			k->marker++;
			break;
		}
	}
	return 0;
}

static void keeps(struct __test_metadata *_metadata, uid_t sampler,
		  uid_t other)
{
	struct hwpmc_child c = { .tx = -1, .rx = -1 };
	struct keepstats k = { 0 };
	struct areas a;
	int cfg[2];
	size_t len;
	char *buf;
	__u64 v;

	ASSERT_EQ(0, scan_areas(&a));
	ASSERT_EQ(0, a.n);
	cfg[0] = sampler;
	cfg[1] = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0666);
	ASSERT_LE(0, cfg[1]);
	ASSERT_EQ(0, fchown(cfg[1], sampler, sampler));
	ASSERT_EQ(0, hwpmc_child_start(&c, keep_main, cfg));
	close(cfg[1]);
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &v));
	ASSERT_EQ(1, v);
	/* Another owner's USERSTACK PMCs come and go meanwhile. */
	ASSERT_EQ(0, other == 0 ? other_fn(NULL) :
		  hwpmc_as_nobody(other_fn, NULL));
	ASSERT_EQ(0, scan_areas(&a));
	EXPECT_EQ(possible_cpus(), a.n) TH_LOG("the sampler's areas are gone");
	ASSERT_EQ(0, hwpmc_send_u64(&c, 0));
	ASSERT_EQ(0, hwpmc_recv_u64(&c, &k.t0));
	EXPECT_EQ(0, hwpmc_child_wait(&c));
	buf = hwpmc_slurp(LOGPATH, &len);
	unlink(LOGPATH);
	ASSERT_NE(NULL, buf);
	ASSERT_LT(0, hwpmc_for_each_record(buf, len, keep_fn, &k));
	free(buf);
	TH_LOG("sampler uid %u, other uid %u: after the other's release %d samples with registers, %d with a copy, %d with spin()'s marker",
	       sampler, other, k.after, k.copied, k.marker);
	EXPECT_LE(50, k.after);
	/* All but a sample taken at a migration (saved registers only). */
	EXPECT_LE(k.after * 9 / 10, k.copied);
	EXPECT_LE(k.copied * 9 / 10, k.marker);
	ASSERT_EQ(0, scan_areas(&a));
	EXPECT_EQ(0, a.n);
}

TEST(other_release_keeps_areas_root_sampler)
{
	keeps(_metadata, 0, NOBODY);
}

TEST(other_release_keeps_areas_nobody_sampler)
{
	keeps(_metadata, NOBODY, 0);
}

/* --- release racing with sampling ---------------------------------------- */

#define RACES	24

static void *spin_thread(void *arg)
{
	spin(0.5);
	return NULL;
}

/*
 * Race @i: a USERSTACK sampler on itself while a thread spins, released
 * running after a short while: by PMCRELEASE, close(), or exit.
 */
static int race_fn(void *arg)
{
	int i = *(int *)arg, fd, logfd;
	pthread_t th;
	__u32 id;

	logfd = tmp_log();
	fd = hwpmc_open();
	if (logfd < 0 || fd < 0 || hwpmc_configure_log(fd, logfd) ||
	    alloc_us(fd, &id))
		return 2;
	if (hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id))
		return 3;
	if (pthread_create(&th, NULL, spin_thread, NULL))
		return 4;
	spin(0.002 * (i % 8));
	switch (i % 3) {
	case 0:
		if (hwpmc_release(fd, id))
			return 5;
		break;
	case 1:
		close(fd);
		break;
	default:
		_exit(0);	/* the exit releases it, the thread spinning */
	}
	_exit(0);
}

static void races(struct __test_metadata *_metadata, uid_t uid)
{
	struct areas a;
	int i, left = 0;

	for (i = 0; i < RACES; i++) {
		int st = uid ? hwpmc_as_nobody(race_fn, &i) : -1;

		if (!uid) {
			pid_t pid = fork();

			ASSERT_LE(0, pid);
			if (!pid)
				_exit(race_fn(&i));
			ASSERT_EQ(pid, waitpid(pid, &st, 0));
			st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		ASSERT_EQ(0, st) TH_LOG("race %d failed: %d", i, st);
		ASSERT_EQ(0, scan_areas(&a));
		left += a.n;
	}
	TH_LOG("uid %u: %d releases racing with sampling, areas left after them: %d",
	       uid, RACES, left);
	EXPECT_EQ(0, left);
}

/* Each race allocates and frees the areas: slow under KASAN and TCG. */
FIXTURE(race) {
	int unused;
};

FIXTURE_SETUP(race)
{
}

FIXTURE_TEARDOWN(race)
{
}

TEST_F_TIMEOUT(race, releases_racing_sampling_root, 600)
{
	races(_metadata, 0);
}

TEST_F_TIMEOUT(race, releases_racing_sampling_nobody, 600)
{
	races(_metadata, NOBODY);
}

TEST_HARNESS_MAIN
