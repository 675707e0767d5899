// SPDX-License-Identifier: GPL-2.0
/*
 * The read page (uapi 1.6): an owner's mmap() of /dev/hwpmc, from which
 * its process-scope counting SOFT PMCs (every event but CLOCK.PROF) and
 * its TSC PMCs are read without a system call.  The truth is PMCRW: a
 * page read, a PMCRW, a page read, with nothing in between but the
 * PMCRW's own system call, bracket it exactly (SYSCALL.ENTER counts that
 * call: the PMCRW is one above the first page read, the second equals
 * it).  The page takes no system call: a SYSCALL.ENTER PMC of another
 * owner (no page) counts none across a thousand page reads.  Mapping it
 * writable or executable fails (EPERM; mprotect: EACCES), another length
 * or offset is EINVAL; a mapping keeps its open (and owner) past a close,
 * so a user pins no more pages than max_owners_per_user allows it owners;
 * the page is not inherited across fork(), and
 * holds its own owner's PMCs only; past HWPMC_READPAGE_NSLOTS PMCs, PMCRW
 * alone (GETREADSLOT: ENOENT) still reads right; a slot freed and reused
 * has a new generation, which a reader of the old one sees.  As root and
 * as uid 65534.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <x86intrin.h>

#define PAGE_SZ		HWPMC_READPAGE_SIZE
#define ROUNDS		200

static void *rp_map(int fd, int prot, int flags, off_t off, size_t len)
{
	return mmap(NULL, len, prot, flags, fd, off);
}

static struct hwpmc_readpage *rp_map_ro(int fd)
{
	void *p = rp_map(fd, PROT_READ, MAP_SHARED, HWPMC_READPAGE_OFFSET,
			 PAGE_SZ);

	return p == MAP_FAILED ? NULL : p;
}

static int rp_slot(int fd, __u32 id, __u32 *slot, __u32 *gen)
{
	struct pmc_op_getreadslot a = { .pm_pmcid = id };
	int err = hwpmc_ioctl_err(fd, HWPMC_IOC_GETREADSLOT, &a);

	if (!err) {
		*slot = a.pm_slot;
		*gen = a.pm_gen;
	}
	return err;
}

/*
 * The uapi header's reader: 0 and the count, or -1 (use PMCRW: the slot
 * is not this generation's, or cannot answer now).
 */
static int rp_read(const struct hwpmc_readpage *p, __u32 slot, __u32 gen,
		   __u64 *v)
{
	const struct hwpmc_readslot *s = &p->rp_slots[slot];
	__u64 ctl, val;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		ctl = __atomic_load_n(&s->rs_ctl, __ATOMIC_ACQUIRE);
		if (HWPMC_RS_GEN(ctl) != gen ||
		    !(ctl & (HWPMC_RS_VALUE | HWPMC_RS_TSC)))
			return -1;
		val = __atomic_load_n(&s->rs_value, __ATOMIC_ACQUIRE);
		if (ctl & HWPMC_RS_TSC) {
			_mm_lfence();
			val += __rdtsc();
		}
		if (__atomic_load_n(&s->rs_ctl, __ATOMIC_ACQUIRE) == ctl) {
			*v = val;
			return 0;
		}
	}
	return -1;
}

/* Some of each SOFT event of this process. */
static char *work_mem;

static void work(unsigned int i)
{
	char *m;

	getppid();
	if (i % 8 == 0)
		sched_yield();
	if (i % 16 == 0)
		usleep(100);	/* a switch, and with 2 CPUs some migrations */
	if (i % 4 == 0) {
		m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			work_mem = m;
			(void)*(volatile char *)m;	/* read fault */
			m[4096] = 1;			/* write fault */
			munmap(m, 8192);
		}
	}
}

static const __u32 events[] = {
	PMC_SOFT_CLOCK_HARD, PMC_SOFT_PAGE_FAULT_ALL,
	PMC_SOFT_PAGE_FAULT_READ, PMC_SOFT_PAGE_FAULT_WRITE,
	PMC_SOFT_SCHED_SWITCH, PMC_SOFT_SCHED_MIGRATE,
	PMC_SOFT_SYSCALL_ENTER,
};
#define NEV	(sizeof(events) / sizeof(events[0]))

/*
 * Every SOFT event counted, attached to the caller: page, PMCRW, page
 * bracket each other while the process works; allocated (before start)
 * it is the initial count; stopped or without a target the page says
 * PMCRW; released, the slot is free.  0 or a step (1-9), 20 (out of
 * order), 21 (SYSCALL.ENTER not exact), 22 (a state answered wrongly).
 */
static int run_events(void *arg)
{
	struct hwpmc_readpage *p;
	__u32 id[NEV], slot[NEV], gen[NEV], unatt, us, ug;
	__u64 a, b, c, moved[NEV] = { 0 };
	unsigned int e, r;
	int fd;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	fd = hwpmc_open();
	if (fd < 0)
		return 1;
	p = rp_map_ro(fd);
	if (!p || p->rp_version != HWPMC_READPAGE_VERSION ||
	    p->rp_nslots != HWPMC_READPAGE_NSLOTS ||
	    p->rp_slot_size != sizeof(struct hwpmc_readslot))
		return 2;
	for (e = 0; e < NEV; e++) {
		if (hwpmc_alloc(fd, PMC_CLASS_SOFT, events[e], PMC_MODE_TC, 0,
				PMC_CPU_ANY, 1000 + e, &id[e]) ||
		    hwpmc_attach(fd, id[e], 0) ||
		    rp_slot(fd, id[e], &slot[e], &gen[e]) || !gen[e])
			return 3;
		/* Allocated and attached: its initial count. */
		if (rp_read(p, slot[e], gen[e], &a) || a != 1000 + e)
			return 22;
		if (hwpmc_start(fd, id[e]))
			return 4;
	}
	/* Not attached: PMCRW (which raises SIGIO) answers. */
	if (hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &unatt) ||
	    rp_slot(fd, unatt, &us, &ug) || !rp_read(p, us, ug, &a))
		return 22;
	for (r = 0; r < ROUNDS; r++) {
		work(r);
		for (e = 0; e < NEV; e++) {
			if (rp_read(p, slot[e], gen[e], &a) ||
			    hwpmc_read(fd, id[e], &b) ||
			    rp_read(p, slot[e], gen[e], &c))
				return 5;
			if (a > b || b > c)
				return 20;
			if (events[e] == PMC_SOFT_SYSCALL_ENTER &&
			    (b != a + 1 || c != b))
				return 21;
			moved[e] = c;
		}
	}
	fprintf(stderr, "#   %s: after %d rounds:", arg ? "uid 65534" : "root",
		ROUNDS);
	for (e = 0; e < NEV; e++)
		fprintf(stderr, " %llu", (unsigned long long)moved[e] - 1000 - e);
	fprintf(stderr, " (CLOCK.HARD FAULT.ALL .READ .WRITE SWITCH MIGRATE SYSCALL)\n");
	/* The events this process certainly had. */
	if (moved[1] <= 1001 || moved[3] <= 1003 || moved[4] <= 1004 ||
	    moved[6] <= 1006 + ROUNDS)
		return 20;
	/* Stopped: PMCRW answers (and waits for the credits in flight). */
	for (e = 0; e < NEV; e++) {
		if (hwpmc_stop(fd, id[e]))
			return 6;
		if (!rp_read(p, slot[e], gen[e], &a))
			return 22;
	}
	/* Released: the slot is free. */
	if (hwpmc_release(fd, id[0]) ||
	    __atomic_load_n(&p->rp_slots[slot[0]].rs_ctl, __ATOMIC_ACQUIRE))
		return 22;
	close(fd);
	return 0;
}

/* Run @fn as root and as uid 65534. */
static void both(struct __test_metadata *_metadata, int (*fn)(void *))
{
	static int tag;

	EXPECT_EQ(0, hwpmc_run_in_child(fn, NULL));
	EXPECT_EQ(0, hwpmc_as_nobody(fn, &tag));
}

FIXTURE(rp) {
	int unused;
};

FIXTURE_SETUP(rp)
{
	if (access(HWPMC_DEV, F_OK))
		SKIP(return, "/dev/hwpmc missing: the module is not loaded");
}

FIXTURE_TEARDOWN(rp)
{
}

TEST_F_TIMEOUT(rp, every_soft_event_equals_pmcrw, 300)
{
	both(_metadata, run_events);
}

/*
 * A thousand page reads take no system call: a SYSCALL.ENTER PMC of a
 * second owner without a page counts the PMCRW before and after only.
 * 0, a step (1-5), 20 (the truth counted more).
 */
static int run_nosyscall(void *arg)
{
	struct hwpmc_readpage *p;
	__u32 id, truth, slot, gen;
	__u64 t0, t1, v, sum = 0;
	int fd, fd2, i;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	fd = hwpmc_open();
	fd2 = hwpmc_open();
	if (fd < 0 || fd2 < 0)
		return 1;
	p = rp_map_ro(fd);
	if (!p || hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id) ||
	    hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id) ||
	    rp_slot(fd, id, &slot, &gen))
		return 2;
	if (hwpmc_soft_tc(fd2, PMC_SOFT_SYSCALL_ENTER, 0, &truth) ||
	    hwpmc_attach(fd2, truth, 0) || hwpmc_start(fd2, truth))
		return 3;
	if (hwpmc_read(fd2, truth, &t0))
		return 4;
	for (i = 0; i < 1000; i++) {
		if (rp_read(p, slot, gen, &v))
			return 5;
		sum += v;
	}
	if (hwpmc_read(fd2, truth, &t1))
		return 4;
	fprintf(stderr, "#   %s: 1000 page reads (sum %llu): %llu system calls counted across them (the PMCRW after)\n",
		arg ? "uid 65534" : "root", (unsigned long long)sum,
		(unsigned long long)(t1 - t0));
	close(fd2);
	close(fd);
	return t1 - t0 == 1 ? 0 : 20;
}

TEST_F_TIMEOUT(rp, page_read_takes_no_system_call, 120)
{
	both(_metadata, run_nosyscall);
}

static sigjmp_buf probe_env;

static void probe_sig(int sig)
{
	siglongjmp(probe_env, sig);
}

/* Write a byte at @addr: 0, or the signal it raised. */
static int probe_write(volatile char *addr)
{
	struct sigaction sa = { .sa_handler = probe_sig }, o1, o2;
	int sig;

	sigaction(SIGSEGV, &sa, &o1);
	sigaction(SIGBUS, &sa, &o2);
	sig = sigsetjmp(probe_env, 1);
	if (!sig)
		*addr = 1;
	sigaction(SIGSEGV, &o1, NULL);
	sigaction(SIGBUS, &o2, NULL);
	return sig;
}

/*
 * No writable, executable, other-length or other-offset mapping; a
 * read-only one can not be made writable, and a write faults.  0, or the
 * check that failed (10 + its number).
 */
static int run_writable(void *arg)
{
	void *m;
	int fd;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	fd = hwpmc_open();
	if (fd < 0)
		return 1;
	m = rp_map(fd, PROT_READ | PROT_WRITE, MAP_SHARED, 0, PAGE_SZ);
	if (m != MAP_FAILED || errno != EPERM)
		return 11;
	m = rp_map(fd, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0, PAGE_SZ);
	if (m != MAP_FAILED || errno != EPERM)
		return 12;
	m = rp_map(fd, PROT_READ | PROT_EXEC, MAP_SHARED, 0, PAGE_SZ);
	if (m != MAP_FAILED || errno != EPERM)
		return 13;
	m = rp_map(fd, PROT_READ, MAP_SHARED, PAGE_SZ, PAGE_SZ);
	if (m != MAP_FAILED || errno != EINVAL)
		return 14;
	m = rp_map(fd, PROT_READ, MAP_SHARED, 0, 2 * PAGE_SZ);
	if (m != MAP_FAILED || errno != EINVAL)
		return 15;
	m = rp_map(fd, PROT_READ, MAP_SHARED, 0, PAGE_SZ);
	if (m == MAP_FAILED)
		return 16;
	if (!mprotect(m, PAGE_SZ, PROT_READ | PROT_WRITE) || errno != EACCES)
		return 17;
	if (!mprotect(m, PAGE_SZ, PROT_READ | PROT_EXEC) || errno != EACCES)
		return 18;
	if (probe_write(m) != SIGSEGV)
		return 19;
	/* Zeroed but for the header: nothing of anyone's yet. */
	if (((struct hwpmc_readpage *)m)->rp_slots[0].rs_ctl ||
	    ((struct hwpmc_readpage *)m)->rp_reserved[0])
		return 20;
	munmap(m, PAGE_SZ);
	close(fd);
	return 0;
}

TEST_F(rp, mapping_is_read_only)
{
	both(_metadata, run_writable);
}

/*
 * Close of the open while the page is mapped: the mapping keeps the open,
 * so its owner and PMC live on until the unmap: the slot still answers
 * and counts.  A fork()'s child has no mapping.  0, a step (1-5), 20 (the
 * slot no longer answers or counts), 21 (the child has it), 22 (the
 * parent lost it).
 */
static int run_close_fork(void *arg)
{
	struct hwpmc_readpage *p;
	__u32 id, slot, gen;
	__u64 v;
	int fd, st;
	pid_t pid;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	fd = hwpmc_open();
	if (fd < 0)
		return 1;
	p = rp_map_ro(fd);
	if (!p || hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &id) ||
	    hwpmc_attach(fd, id, 0) || hwpmc_start(fd, id) ||
	    rp_slot(fd, id, &slot, &gen) || rp_read(p, slot, gen, &v))
		return 2;
	pid = fork();
	if (pid < 0)
		return 3;
	if (!pid) {
		/* Not mapped here: msync() says ENOMEM. */
		_exit(!msync(p, PAGE_SZ, MS_ASYNC) || errno != ENOMEM ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 4;
	if (WEXITSTATUS(st))
		return 21;
	if (rp_read(p, slot, gen, &v))
		return 22;
	close(fd);
	/* The mapping holds the open: the PMC still counts, in the page. */
	{
		__u64 v2 = 0;

		getppid();
		if ((__atomic_load_n(&p->rp_flags, __ATOMIC_ACQUIRE) &
		     HWPMC_RP_F_GONE) || rp_read(p, slot, gen, &v2) ||
		    v2 <= v)
			return 20;
	}
	if (munmap(p, PAGE_SZ))
		return 5;
	return 0;
}

#define MAX_OWNERS	"/proc/sys/kernel/hwpmc/max_owners_per_user"
#define NCAP		8

/*
 * A user cannot pin more pages than it may have owners (uid 65534): open,
 * mmap(), close, again: the mappings keep their opens, so the open past
 * the cap (NCAP, set by the test) fails with EMFILE; once unmapped, the opens are
 * gone and one more open works.  0, a step, 20 (no cap met), 21 (the
 * opens did not go with the mappings).
 */
static int run_pin_pages(void *arg)
{
	struct hwpmc_readpage *p[NCAP + 4];
	int i, n, fd, err = 0;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	for (n = 0; n < NCAP + 4; n++) {
		fd = hwpmc_open();
		if (fd < 0) {
			err = errno;
			break;
		}
		p[n] = rp_map_ro(fd);
		close(fd);
		if (!p[n])
			return 1;
	}
	if (n != NCAP || err != EMFILE)
		return 20;
	for (i = 0; i < n; i++)
		if (munmap(p[i], PAGE_SZ))
			return 2;
	fd = hwpmc_open();
	if (fd < 0)
		return 21;
	close(fd);
	return 0;
}

TEST_F(rp, pages_are_bounded_by_owners)
{
	long old = hwpmc_sysctl_get(MAX_OWNERS);

	if (geteuid())
		SKIP(return, "needs root to set %s", MAX_OWNERS);
	ASSERT_LT(0, old);
	ASSERT_EQ(0, hwpmc_sysctl_set(MAX_OWNERS, NCAP));
	/* As uid 65534: root (CAP_SYS_ADMIN) is exempt from the cap. */
	EXPECT_EQ(0, hwpmc_as_nobody(run_pin_pages, &old));
	hwpmc_sysctl_set(MAX_OWNERS, old);
}

TEST_F(rp, survives_close_and_is_not_inherited)
{
	both(_metadata, run_close_fork);
}

/*
 * Two owners have two pages: a second open's page is another, with none
 * of the first's PMCs: only its own PMC's slot (not attached: no answer,
 * value 0) is in use there, while the first's counts.  GETREADSLOT of an
 * owner without PMCs: ESRCH.  0, a step, 20 (the first's slot does not
 * count), 21 (the second sees anything else).
 */
static int run_two_owners(void *arg)
{
	struct hwpmc_readpage *p1, *p2;
	__u32 id, slot, gen, id2, s2, g2;
	unsigned int i;
	int fd1, fd2;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	fd1 = hwpmc_open();
	fd2 = hwpmc_open();
	if (fd1 < 0 || fd2 < 0)
		return 1;
	p1 = rp_map_ro(fd1);
	p2 = rp_map_ro(fd2);
	if (!p1 || !p2)
		return 2;
	if (hwpmc_soft_tc(fd1, PMC_SOFT_SYSCALL_ENTER, 0, &id) ||
	    hwpmc_attach(fd1, id, 0) || hwpmc_start(fd1, id) ||
	    rp_slot(fd1, id, &slot, &gen))
		return 3;
	if (rp_slot(fd2, id, &s2, &g2) != ESRCH)
		return 21;
	if (hwpmc_soft_tc(fd2, PMC_SOFT_SYSCALL_ENTER, 0, &id2) ||
	    rp_slot(fd2, id2, &s2, &g2))
		return 4;
	getppid();
	if (!p1->rp_slots[slot].rs_value || !p1->rp_slots[slot].rs_ctl)
		return 20;
	for (i = 0; i < HWPMC_READPAGE_NSLOTS; i++)
		if (p2->rp_slots[i].rs_value ||
		    (p2->rp_slots[i].rs_ctl &&
		     (i != s2 || p2->rp_slots[i].rs_ctl != (__u64)g2 << 32)))
			return 21;
	close(fd1);
	close(fd2);
	munmap(p1, PAGE_SZ);
	munmap(p2, PAGE_SZ);
	return 0;
}

TEST_F(rp, owners_do_not_share)
{
	both(_metadata, run_two_owners);
}

/*
 * More PMCs than slots: an owner has at most one process-scope PMC per
 * SOFT row (16), so the slots are filled with TSC PMCs (system scope, a
 * shared row).  The first HWPMC_READPAGE_NSLOTS PMCs allocated after the
 * page get one, the rest ENOENT, and PMCRW reads those right: a SOFT
 * SYSCALL.ENTER PMC allocated before the page was mapped (no slot either),
 * attached to the caller and started, counts 5 getppid() and its read's
 * own call; a TSC PMC without a slot reads between two page reads of one
 * with.  A slot freed is reused, after a grace period, with a new
 * generation; a reader of the old one is sent to PMCRW.  Needs TSC slots
 * (see tsc_brackets_pmcrw): 4 without.  Pinned to CPU 0.  0, a step,
 * or 31-38 (the check that failed, in order).
 */
#define NSOFT	15
#define NPMC	(HWPMC_READPAGE_NSLOTS + 4)

static int run_exhaust(void *arg)
{
	struct hwpmc_readpage *p;
	__u32 id[NPMC], slot[NPMC], gen[NPMC], early, s, g;
	unsigned int i, nslot = 0, tries;
	__u64 w, a, b, c;
	int fd, err;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	if (hwpmc_pin_cpu(0))
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 1;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, 0, &early))
		return 2;
	p = rp_map_ro(fd);
	if (!p || rp_slot(fd, early, &s, &g) != ENOENT)
		return 31;
	if (!(p->rp_flags & HWPMC_RP_F_TSC))
		return 4;
	for (i = 0; i < NPMC; i++) {
		if (i < NSOFT)
			err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id[i]);
		else
			err = hwpmc_alloc(fd, PMC_CLASS_TSC, 0, PMC_MODE_SC, 0,
					  0, 0, &id[i]);
		if (err)
			return 3;
		err = rp_slot(fd, id[i], &slot[i], &gen[i]);
		if (!err)
			nslot++;
		else if (err != ENOENT || i < HWPMC_READPAGE_NSLOTS)
			return 32;
	}
	if (nslot != HWPMC_READPAGE_NSLOTS)
		return 33;
	if (hwpmc_attach(fd, early, 0) || hwpmc_start(fd, early))
		return 4;
	for (i = 0; i < 5; i++)
		getppid();
	if (hwpmc_read(fd, early, &w))
		return 5;
	if (w != 6)
		return 34;
	if (rp_read(p, slot[NSOFT], gen[NSOFT], &a) ||
	    hwpmc_read(fd, id[NPMC - 1], &b) ||
	    rp_read(p, slot[NSOFT], gen[NSOFT], &c) || a >= b || b >= c)
		return 35;
	/* Release a slotted one; its slot comes back with another gen. */
	if (hwpmc_release(fd, id[0]))
		return 6;
	if (!rp_read(p, slot[0], gen[0], &w))
		return 36;
	for (tries = 0; tries < 250; tries++) {
		if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id[0]))
			return 7;
		if (!rp_slot(fd, id[0], &s, &g))
			break;
		if (hwpmc_release(fd, id[0]))
			return 7;
		usleep(20000);	/* a grace period */
	}
	if (tries == 250 || s != slot[0] || g == gen[0])
		return 37;
	if (hwpmc_attach(fd, id[0], 0))
		return 8;
	if (!rp_read(p, slot[0], gen[0], &w) || rp_read(p, s, g, &w) ||
	    w != 0)
		return 38;
	fprintf(stderr, "#   %s: %u slots, the next PMCs ENOENT; a slot reused after %u tries, generation %u -> %u\n",
		arg ? "uid 65534" : "root", nslot, tries, gen[0], g);
	close(fd);
	munmap(p, PAGE_SZ);
	return 0;
}

/*
 * GETREADSLOT's errors: EINVAL for a handle the owner does not have or a
 * reserved field not zero; ENOENT for a PMC with no slot (CLOCK.PROF, a
 * sampling PMC, and any PMC while the owner has no page).  0 or 10 + the
 * check that failed.
 */
static int run_getslot_errors(void *arg)
{
	struct pmc_op_getreadslot a = { 0 };
	__u32 id, prof, ts, s, g;
	struct hwpmc_readpage *p;
	int fd;

	if (arg && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 9;
	fd = hwpmc_open();
	if (fd < 0)
		return 1;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id))
		return 2;
	if (rp_slot(fd, id, &s, &g) != ENOENT)	/* no page yet */
		return 11;
	p = rp_map_ro(fd);
	if (!p)
		return 3;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id) ||
	    hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &prof) ||
	    hwpmc_alloc(fd, PMC_CLASS_SOFT, PMC_SOFT_SCHED_SWITCH,
			PMC_MODE_TS, 0, PMC_CPU_ANY, 1000, &ts))
		return 4;
	if (rp_slot(fd, id, &s, &g))
		return 12;
	if (rp_slot(fd, prof, &s, &g) != ENOENT)
		return 13;
	if (rp_slot(fd, ts, &s, &g) != ENOENT)
		return 14;
	if (rp_slot(fd, 12345, &s, &g) != EINVAL)
		return 15;
	a.pm_pmcid = id;
	a.pm_reserved = 1;
	if (hwpmc_ioctl_err(fd, HWPMC_IOC_GETREADSLOT, &a) != EINVAL)
		return 16;
	if (hwpmc_release(fd, id) || rp_slot(fd, id, &s, &g) != EINVAL)
		return 17;
	close(fd);
	munmap(p, PAGE_SZ);
	return 0;
}

TEST_F(rp, getreadslot_errors)
{
	both(_metadata, run_getslot_errors);
}

/*
 * TSC: the page's answer is RDTSC, bracketing PMCRW's (pinned to CPU 0:
 * a guest's vCPUs' TSCs may differ).  0, a step, 4 (no TSC slots), 20
 * (out of order).
 */
static int run_tsc(void *arg)
{
	struct hwpmc_readpage *p;
	__u32 id, slot, gen;
	__u64 a, b, c;
	int fd, r, err;

	if (hwpmc_pin_cpu(0))
		return 1;
	fd = hwpmc_open();
	if (fd < 0)
		return 1;
	p = rp_map_ro(fd);
	if (!p)
		return 2;
	if (!(p->rp_flags & HWPMC_RP_F_TSC))
		return 4;
	err = hwpmc_alloc(fd, PMC_CLASS_TSC, 0, PMC_MODE_SC, 0, 0, 0, &id);
	if (err || rp_slot(fd, id, &slot, &gen))
		return 3;
	for (r = 0; r < ROUNDS; r++) {
		if (rp_read(p, slot, gen, &a) || hwpmc_read(fd, id, &b) ||
		    rp_read(p, slot, gen, &c))
			return 5;
		if (a >= b || b >= c)
			return 20;
	}
	close(fd);
	return 0;
}

/*
 * Run @fn (4: no TSC slots) as root and as uid 65534 where TSC PMCs get
 * slots.  Where the TSC is not invariant (QEMU's TCG), the test flavor's
 * test_readpage_tsc=1 lets the page answer anyway (its TSC is one clock
 * for every vCPU), and the release module is loaded back after.  uid
 * 65534 may have system-scope PMCs meanwhile (unprivileged_syspmcs).
 */
static void with_tsc_slots(struct __test_metadata *_metadata,
			   int (*fn)(void *))
{
	static const char *sysctl = "/proc/sys/kernel/hwpmc/unprivileged_syspmcs";
	static int tag;
	int rc = hwpmc_run_in_child(fn, NULL), rn;
	bool reloaded = false;
	long old;

	if (rc == 4 && !hwpmc_module_unload_wait()) {
		reloaded = true;
		if (hwpmc_module_load("test/", "test_readpage_tsc=1")) {
			hwpmc_module_load("", "");
			SKIP(return, "no invariant TSC here (HWPMC_RP_F_TSC clear) and no test module to pretend one");
		}
		fprintf(stderr, "#   no invariant TSC: the test module with test_readpage_tsc=1\n");
		rc = hwpmc_run_in_child(fn, NULL);
	}
	if (rc == 4) {
		if (reloaded) {
			hwpmc_module_unload_wait();
			hwpmc_module_load("", "");
		}
		SKIP(return, "no TSC here (HWPMC_RP_F_TSC clear): TSC PMCs get no slot");
	}
	EXPECT_EQ(0, rc);
	old = hwpmc_sysctl_get(sysctl);
	if (old == 0)
		hwpmc_sysctl_set(sysctl, 1);
	rn = hwpmc_as_nobody(fn, &tag);
	if (old == 0)
		hwpmc_sysctl_set(sysctl, 0);
	EXPECT_EQ(0, rn);
	if (reloaded) {
		hwpmc_module_unload_wait();
		hwpmc_module_load("", "");	/* the release module, as the rig loaded it */
	}
}

TEST_F(rp, tsc_brackets_pmcrw)
{
	with_tsc_slots(_metadata, run_tsc);
}

TEST_F_TIMEOUT(rp, slots_run_out_to_pmcrw, 120)
{
	with_tsc_slots(_metadata, run_exhaust);
}

TEST_HARNESS_MAIN
