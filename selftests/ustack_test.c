// SPDX-License-Identifier: GPL-2.0
/*
 * PMC_F_USERSTACK (module 1.5, log minor 3): each sample of a process
 * sampler on itself (SOFT CLOCK.PROF with PMC_F_CALLCHAIN) also carries
 * the user registers and a copy of the top of the user stack, as root and
 * as uid 65534:
 *
 *  - every CALLCHAIN of the PMC is followed by its USERSTACK (same time,
 *    pid, tid, PMC), and taken = logged + dropped + throttled holds with
 *    the bigger records (GETDRIVERSTATS against the log);
 *  - pl_size is what was asked (0: 8192), pl_copied <= pl_size, the
 *    record's length is the copy's, PMCLOG_US_F_SHORT iff short;
 *  - the registers are there whenever the callchain has a user PC (an
 *    exiting thread's last samples, after its mm is gone, have neither);
 *  - the registers are the sampled ones: rip equals the callchain's
 *    first user PC, rsp lies in the sampled thread's stack (the main
 *    thread's [stack]), rip mostly in the test program's text; the copy
 *    holds what the spinning function keeps on its stack (a marker);
 *  - a thread on a stack of our own, with a PROT_NONE page above it,
 *    gets short copies that end exactly at the top of its stack;
 *  - no register or copy start is a kernel address for uid 65534;
 *  - all of it too with a copy of PMC_USTACK_SMALL bytes, which goes
 *    through the small tier's stack areas;
 *  - bad sizes are EINVAL.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_log_util.h"
#include "hwpmc_ustack_util.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define LOGPATH		"/tmp/hwpmc-ustack-test.log"
#define NOBODY		65534
#define PERIOD_NS	100000		/* CLOCK.PROF at 10 kHz */
#define TSTACK		(64 * 1024)	/* the thread's own stack */
#define MIN_SAMPLES	100

/* What the sampled child tells the parent about itself. */
struct child_info {
	__u64 stack_lo, stack_hi;	/* main thread's [stack] */
	__u64 text_lo, text_hi;		/* the program's r-xp mapping */
	__u64 tstack_lo, tstack_hi;	/* the thread's stack */
	__u32 main_tid, thread_tid;
};

/* User-mode work with a marker in the frame, and a few system calls. */
static void spin(double secs)
{
	hwpmc_marker_spin(secs, 2000000);
}

static void *thread_fn(void *arg)
{
	struct child_info *ci = arg;

	ci->thread_tid = syscall(SYS_gettid);
	spin(0.15);
	return NULL;
}

static void find_maps(struct child_info *ci)
{
	char line[512], exe[256] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");

	if (n > 0)
		exe[n] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (strstr(line, "[stack]")) {
			ci->stack_lo = lo;
			ci->stack_hi = hi;
		} else if (!strcmp(perms, "r-xp") && exe[0] &&
			   strstr(line, exe)) {
			ci->text_lo = lo;
			ci->text_hi = hi;
		}
	}
	if (f)
		fclose(f);
}

static int alloc_us(int fd, __u32 flags, __u32 mode, __u32 size, __u32 *id)
{
	struct pmc_op_pmcallocate a = {
		.pm_cpu = PMC_CPU_ANY, .pm_class = PMC_CLASS_SOFT,
		.pm_event = PMC_SOFT_CLOCK_PROF, .pm_mode = mode,
		.pm_flags = flags, .pm_count = PERIOD_NS,
		.pm_ustack_size = size,
	};
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_PMCALLOCATE, &a);

	if (!err && id)
		*id = a.pm_pmcid;
	return err;
}

/*
 * In a child: become @uid (unless 0), sample itself with a stack copy of
 * @size into @logfd while the main thread and then a thread on its own
 * stack spin; tell the parent its maps through @out.  Exit status 0, or
 * the step that failed.
 */
static int sampler(int logfd, int out, uid_t uid, __u32 size)
{
	static struct child_info ci;
	pthread_attr_t attr;
	pthread_t th;
	char *ts;
	__u32 id;
	int fd;

	if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
		return 10;
	/* The thread's stack, resident, with an inaccessible page above. */
	ts = mmap(NULL, TSTACK + 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ts == MAP_FAILED || mprotect(ts + TSTACK, 4096, PROT_NONE))
		return 11;
	memset(ts, 0, TSTACK);
	ci.tstack_lo = (unsigned long)ts;
	ci.tstack_hi = (unsigned long)ts + TSTACK;
	ci.main_tid = syscall(SYS_gettid);
	find_maps(&ci);
	fd = hwpmc_open();
	if (fd < 0)
		return 12;
	if (hwpmc_configure_log(fd, logfd))
		return 13;
	if (alloc_us(fd, PMC_F_CALLCHAIN | PMC_F_USERSTACK, PMC_MODE_TS,
		     size, &id))
		return 14;
	if (hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id))
		return 15;
	spin(0.3);
	if (pthread_attr_init(&attr) ||
	    pthread_attr_setstack(&attr, ts, TSTACK) ||
	    pthread_create(&th, &attr, thread_fn, &ci) ||
	    pthread_join(th, NULL))
		return 16;
	if (hwpmc_stop(fd, id))
		return 17;
	if (hwpmc_closelog(fd))
		return 18;
	close(fd);
	if (write(out, &ci, sizeof(ci)) != sizeof(ci))
		return 19;
	return 0;
}

struct ustats {
	const struct child_info *ci;
	__u32 size;			/* expected pl_size */
	const struct pmclog_callchain *prev;	/* the record before */
	int cc, us;			/* CALLCHAIN, USERSTACK records */
	int unpaired;			/* USERSTACK not after its CALLCHAIN */
	int bad_len, bad_size, bad_short;
	int regs;			/* with PMCLOG_US_F_REGS */
	int noregs_user_pc;		/* without, but the chain has a user PC */
	int rip_mismatch;		/* rip != the first user PC */
	int kaddr;			/* rip or rsp in the kernel half */
	int main_n, main_rsp_in_stack;	/* main thread's samples */
	int main_in_text, main_marker;
	int main_user, main_user_in_text;	/* interrupted in user mode */
	int thr_n, thr_rsp_in_stack, thr_short, thr_short_at_top;
	__u64 dropped, throttled;
};

static int has_marker(const struct pmclog_userstack *us)
{
	__u64 v;
	__u32 i;

	for (i = 0; i + 8 <= us->pl_copied; i += 8) {
		memcpy(&v, us->pl_stack + i, 8);
		if (v == MARKER)
			return 1;
	}
	return 0;
}

static void tally_us(struct ustats *t, const struct pmclog_userstack *us)
{
	const struct pmclog_callchain *cc = t->prev;
	const struct child_info *ci = t->ci;
	__u64 rip = us->pl_regs[PMCLOG_US_REG_RIP];
	__u64 rsp = us->pl_regs[PMCLOG_US_REG_RSP];
	int in_text;

	t->us++;
	if (!cc || cc->pl_hdr.pl_time != us->pl_hdr.pl_time ||
	    cc->pl_pid != us->pl_pid || cc->pl_tid != us->pl_tid ||
	    cc->pl_pmcid != us->pl_pmcid) {
		t->unpaired++;
		cc = NULL;
	}
	if (us->pl_hdr.pl_len !=
	    ((sizeof(*us) + us->pl_copied + 7) & ~7UL))
		t->bad_len++;
	if (us->pl_size != t->size || us->pl_copied > us->pl_size)
		t->bad_size++;
	if (!!(us->pl_flags & PMCLOG_US_F_SHORT) !=
	    (us->pl_copied < us->pl_size))
		t->bad_short++;
	if (!(us->pl_flags & PMCLOG_US_F_REGS)) {
		/* Only where the task had no user state (exiting: no mm). */
		if (!cc || cc->pl_npc > cc->pl_nkernel)
			t->noregs_user_pc++;
		return;
	}
	t->regs++;
	if ((rip >> 63) || (rsp >> 63))
		t->kaddr++;
	if (cc && cc->pl_npc > cc->pl_nkernel &&
	    cc->pl_pc[cc->pl_nkernel] != rip)
		t->rip_mismatch++;
	in_text = rip >= ci->text_lo && rip < ci->text_hi;
	if (us->pl_tid == ci->main_tid) {
		t->main_n++;
		t->main_rsp_in_stack += rsp >= ci->stack_lo &&
					rsp < ci->stack_hi;
		t->main_in_text += in_text;
		if (cc && (cc->pl_flags & PMCLOG_CC_F_USER)) {
			t->main_user++;
			t->main_user_in_text += in_text;
		}
		t->main_marker += in_text && has_marker(us);
	} else if (us->pl_tid == ci->thread_tid) {
		t->thr_n++;
		t->thr_rsp_in_stack += rsp >= ci->tstack_lo &&
				       rsp < ci->tstack_hi;
		if (us->pl_flags & PMCLOG_US_F_SHORT) {
			t->thr_short++;
			t->thr_short_at_top += rsp + us->pl_copied ==
					       ci->tstack_hi;
		}
	}
}

static int ustats_fn(const struct pmclog_header *h, void *arg)
{
	struct ustats *t = arg;

	switch (h->pl_type) {
	case PMCLOG_TYPE_CALLCHAIN:
		t->cc++;
		break;
	case PMCLOG_TYPE_USERSTACK:
		tally_us(t, (const void *)h);
		break;
	case PMCLOG_TYPE_DROPNOTIFY:
		hwpmc_add_drops(h, &t->dropped, &t->throttled);
		break;
	}
	t->prev = h->pl_type == PMCLOG_TYPE_CALLCHAIN ? (const void *)h : NULL;
	return 0;
}

/* Run sampler() as @uid in a child; the log's statistics in @t. */
static void run_as(struct __test_metadata *_metadata, uid_t uid, __u32 size,
		   struct ustats *t)
{
	struct pmc_op_getdriverstats a, b;
	static struct child_info ci;
	int logfd, status, p[2], fd;
	size_t len;
	char *buf;
	pid_t pid;
	__u64 taken;

	memset(t, 0, sizeof(*t));
	t->ci = &ci;
	t->size = size ? size : PMC_USTACK_DEFAULT;
	fd = hwpmc_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(p));
	logfd = open(LOGPATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, logfd);
	ASSERT_EQ(0, hwpmc_driverstats(fd, &a));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(sampler(logfd, p[1], uid, size));
	close(logfd);
	close(p[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status) TH_LOG("sampler failed: %#x", status);
	ASSERT_EQ(sizeof(ci), read(p[0], &ci, sizeof(ci)));
	close(p[0]);
	ASSERT_EQ(0, hwpmc_driverstats(fd, &b));
	close(fd);
	buf = hwpmc_slurp(LOGPATH, &len);
	unlink(LOGPATH);
	ASSERT_NE(NULL, buf);
	ASSERT_LT(0, hwpmc_for_each_record(buf, len, ustats_fn, t))
		TH_LOG("the log does not parse");
	free(buf);
	taken = b.pm_samples_taken - a.pm_samples_taken;
	TH_LOG("uid %u, size %u: taken %llu, %d CALLCHAIN, %d USERSTACK (%d unpaired), %llu dropped, %llu throttled; %d with registers; main thread %d (rsp in [stack] %d, rip in text %d, marker %d); thread %d (rsp in its stack %d, short %d, ending at its top %d)",
	       uid, t->size, (unsigned long long)taken, t->cc, t->us,
	       t->unpaired, (unsigned long long)t->dropped,
	       (unsigned long long)t->throttled, t->regs, t->main_n,
	       t->main_rsp_in_stack, t->main_in_text, t->main_marker,
	       t->thr_n, t->thr_rsp_in_stack, t->thr_short,
	       t->thr_short_at_top);
	TH_LOG("main thread in user mode %d, rip in text %d", t->main_user,
	       t->main_user_in_text);
	/* Exact accounting with the bigger records. */
	EXPECT_EQ(taken, (__u64)t->cc + t->dropped + t->throttled);
	EXPECT_EQ(b.pm_samples_dropped - a.pm_samples_dropped, t->dropped);
	/* Every sample has its USERSTACK, right after its CALLCHAIN. */
	EXPECT_EQ(t->cc, t->us);
	EXPECT_EQ(0, t->unpaired);
	EXPECT_EQ(0, t->bad_len);
	EXPECT_EQ(0, t->bad_size);
	EXPECT_EQ(0, t->bad_short);
	EXPECT_EQ(0, t->kaddr);
	EXPECT_EQ(0, t->rip_mismatch);
	/*
	 * Registers whenever the task had a user state: all but the samples
	 * of the thread's exit (after its mm is gone), which have no user PC
	 * (how many depends on how long the exit takes: 8% of a 6.12 run's
	 * samples once under load, so no share is asserted).
	 */
	EXPECT_EQ(0, t->noregs_user_pc);
	EXPECT_LT(0, t->regs);
	EXPECT_LE(MIN_SAMPLES, t->main_n);
	EXPECT_EQ(t->main_n, t->main_rsp_in_stack);
	/*
	 * In user mode, mostly in spin() (the rest: hwpmc_thread_cpu_now() in libc); the
	 * samples in the kernel (hwpmc_thread_cpu_now()'s system call, which the time
	 * spent copying stacks under emulation inflates) are in libc.  How much
	 * is libc's varies with the host's load (78-99.8% in the text seen), so
	 * "mostly" is more than half: registers taken from the wrong place
	 * would put next to none in the text.
	 */
	EXPECT_LE(MIN_SAMPLES, t->main_user);
	EXPECT_LT(t->main_user / 2, t->main_user_in_text);
	/* spin()'s frame is in the copy of nearly every sample in spin(). */
	EXPECT_LE(t->main_in_text * 9 / 10, t->main_marker);
	EXPECT_LT(0, t->thr_n);
	EXPECT_EQ(t->thr_n, t->thr_rsp_in_stack);
	if (t->size > 4096) {
		/* Near the top of a 64 KiB stack: the copy stops there. */
		EXPECT_LE(t->thr_n * 9 / 10, t->thr_short);
	}
	EXPECT_EQ(t->thr_short, t->thr_short_at_top);
}

TEST(root_default_size)
{
	struct ustats t;

	run_as(_metadata, 0, 0, &t);
}

TEST(nobody_default_size)
{
	struct ustats t;

	run_as(_metadata, NOBODY, 0, &t);
}

TEST(nobody_small_copy)
{
	struct ustats t;

	run_as(_metadata, NOBODY, 512, &t);
}

TEST(root_small_copy)
{
	struct ustats t;

	run_as(_metadata, 0, 1024, &t);
}

/* The small tier's largest copy (hwpmc-record -g's): its own areas. */
TEST(root_small_tier)
{
	struct ustats t;

	run_as(_metadata, 0, PMC_USTACK_SMALL, &t);
}

TEST(nobody_small_tier)
{
	struct ustats t;

	run_as(_metadata, NOBODY, PMC_USTACK_SMALL, &t);
}

/* Sizes: multiples of 8 up to max_user_stack, the flag to use them. */
TEST(bad_sizes)
{
	long max = 0;
	FILE *f = fopen("/sys/module/hwpmc/parameters/max_user_stack", "r");
	int fd = hwpmc_open();

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%ld", &max));
	fclose(f);
	ASSERT_EQ(PMC_USTACK_DEFAULT, max) TH_LOG("max_user_stack's default");
	EXPECT_EQ(EINVAL, alloc_us(fd, PMC_F_USERSTACK, PMC_MODE_TS, 12, NULL));
	EXPECT_EQ(EINVAL, alloc_us(fd, PMC_F_USERSTACK, PMC_MODE_TS,
				   max + 8, NULL));
	EXPECT_EQ(EINVAL, alloc_us(fd, PMC_F_USERSTACK, PMC_MODE_TS,
				   0x80000000U, NULL));
	EXPECT_EQ(EINVAL, alloc_us(fd, 0, PMC_MODE_TS, 4096, NULL));
	EXPECT_EQ(EINVAL, alloc_us(fd, PMC_F_USERSTACK, PMC_MODE_TC, 0, NULL));
	EXPECT_EQ(0, alloc_us(fd, PMC_F_USERSTACK, PMC_MODE_TS, max, NULL));
	EXPECT_EQ(0, alloc_us(fd, PMC_F_USERSTACK, PMC_MODE_TS, 8, NULL));
	close(fd);
}

TEST_HARNESS_MAIN
