// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: more than a thousand descendants forking and exiting while
 * counted with PMC_F_DESCENDANTS, several owners at once on shared and
 * private targets, operations issued concurrently from threads of one
 * owner, attach and detach racing with forks and exits, and owners and
 * targets dying in any order.  Every operation's result is checked, and at
 * the end every row is free again; the rig then checks the kernel log and
 * unloads the module.
 *
 * The per-event hooks (sys_enter, the page-fault and migration
 * tracepoints) are attached while some PMC needs them, and attaching or
 * detaching a tracepoint patches kernel text (static keys, via int3).
 * Under QEMU's multi-threaded TCG, the test rig, that patching crashes
 * ("Oops: int3") or hangs the guest about once per thousand patchings,
 * with or without hwpmc loaded (toggling the same tracepoints through
 * tracefs does it too).  So each test here holds "pin" PMCs of those
 * events for its whole run: the churn below never patches text, and the
 * hooks' attach and detach are left to the other tests.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NSOFT 16

static int wait_ok(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, __WALL) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Reap whatever children are left (orphans come to a subreaper). */
static void reap_all(void)
{
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static int has_input(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* Counters shared by every process of a test (MAP_SHARED). */
struct shared {
	atomic_long processes;	/* descendants created */
	atomic_long stop;	/* ask churners to stop */
};

static struct shared *shared_new(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	memset(s, 0, sizeof(*s));
	return s;
}

/* A short-lived descendant: counts itself, makes @k calls, exits. */
static pid_t spawn_leaf(struct shared *sh, long k, int grandchild)
{
	pid_t pid = fork();

	if (pid == 0) {
		atomic_fetch_add(&sh->processes, 1);
		hwpmc_burn_syscalls(k);
		if (grandchild && !wait_ok(spawn_leaf(sh, k, 0)))
			_exit(1);
		_exit(0);
	}
	return pid;
}

/* Fork @n leaves, @live at a time, every @gc-th with a grandchild. */
static int fork_wave(struct shared *sh, int n, int live, long k, int gc)
{
	int started = 0, running = 0, ok = 1, status;

	while (started < n || running) {
		if (started < n && running < live) {
			if (spawn_leaf(sh, k, gc && started % gc == 0) < 0)
				return 0;
			started++;
			running++;
			continue;
		}
		if (wait(&status) < 0)
			return 0;
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			ok = 0;
	}
	return ok;
}

/* ------------------------------------------- a thousand descendants */

#define BRANCHES	4
#define LEAVES		250	/* per branch */
#define LEAF_CALLS	20

struct tree_arg {
	struct shared *sh;
};

/*
 * The target: on "go" it forks BRANCHES branch processes, each forking
 * LEAVES leaves four at a time, every fourth leaf with a grandchild.
 * Answers the number of descendants created.
 */
static int tree_target(struct hwpmc_child *me, void *arg)
{
	struct tree_arg *ta = arg;
	pid_t branch[BRANCHES];
	__u64 go;
	int i, ok = 1;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	if (hwpmc_send_u64(me, 0) || hwpmc_recv_u64(me, &go))
		return 1;
	for (i = 0; i < BRANCHES; i++) {
		branch[i] = fork();
		if (branch[i] == 0) {
			atomic_fetch_add(&ta->sh->processes, 1);
			_exit(fork_wave(ta->sh, LEAVES, 4, LEAF_CALLS, 4) ? 0
									  : 1);
		}
		if (branch[i] < 0)
			return 2;
	}
	for (i = 0; i < BRANCHES; i++)
		ok &= wait_ok(branch[i]);
	if (hwpmc_send_u64(me, ok ? atomic_load(&ta->sh->processes) : 0))
		return 3;
	hwpmc_recv_u64(me, &go);
	return 0;
}

/* A counter of /proc/stat or /proc/vmstat ("ctxt ", "pgfault "); -1 if none. */
static long long proc_counter(const char *path, const char *key)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtoll(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct reader {
	int fd;
	__u32 id[4];
	int n;
	atomic_int stop;
	long reads, errors, backwards;
};

/* Read the PMCs over and over while they count: no errors, and a
 * running count never goes down. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	__u64 last[4] = { 0 }, v;
	int i;

	while (!atomic_load(&r->stop)) {
		for (i = 0; i < r->n; i++) {
			if (hwpmc_read(r->fd, r->id[i], &v)) {
				r->errors++;
				continue;
			}
			if (v < last[i])
				r->backwards++;
			last[i] = v;
			r->reads++;
		}
	}
	return NULL;
}

/* The pins: one PMC per event with a hook of its own, never attached. */
static const __u32 pin_events[] = { PMC_SOFT_SYSCALL_ENTER,
				    PMC_SOFT_PAGE_FAULT_ALL,
				    PMC_SOFT_SCHED_MIGRATE };
#define NPIN ((int)(sizeof(pin_events) / sizeof(pin_events[0])))
#define NFREE (NSOFT - NPIN)	/* rows free while the pins are held */

FIXTURE(stress) {
	int fd;
	int pin;
};

FIXTURE_SETUP(stress)
{
	int i;

	self->fd = hwpmc_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(NSOFT, hwpmc_count_rows(self->fd, 0, PMC_CLASS_SOFT,
					  PMC_DISP_FREE));
	self->pin = hwpmc_open();
	ASSERT_LE(0, self->pin);
	for (i = 0; i < NPIN; i++)
		ASSERT_EQ(0, hwpmc_soft_tc(self->pin, pin_events[i], 0, NULL));
}

FIXTURE_TEARDOWN(stress)
{
	close(self->fd);
	close(self->pin);
}

/* Every SOFT row but the pins' free, and a fresh owner can take them. */
static void check_all_free(struct __test_metadata *_metadata)
{
	int fd = hwpmc_open(), i;
	__u32 id;

	ASSERT_LE(0, fd);
	EXPECT_EQ(NFREE, hwpmc_count_rows(fd, 0, PMC_CLASS_SOFT,
					  PMC_DISP_FREE));
	EXPECT_EQ(NPIN, hwpmc_count_rows(fd, 0, PMC_CLASS_SOFT,
					 PMC_DISP_THREAD));
	for (i = 0; i < NFREE; i++)
		EXPECT_EQ(0, hwpmc_soft_sc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	EXPECT_EQ(EINVAL, hwpmc_soft_sc(fd, PMC_SOFT_SCHED_SWITCH, 0, &id));
	close(fd);
}

TEST_F_TIMEOUT(stress, thousand_descendants, 600)
{
	static const __u32 ev[4] = { PMC_SOFT_SYSCALL_ENTER,
				     PMC_SOFT_SCHED_SWITCH,
				     PMC_SOFT_CLOCK_PROF,
				     PMC_SOFT_PAGE_FAULT_ALL };
	struct tree_arg ta = { .sh = shared_new() };
	struct reader rd = { .fd = self->fd, .n = 4 };
	struct hwpmc_child t;
	pthread_t th;
	__u64 ready, nproc, v[4], t0, t1;
	long long ctxt0, ctxt1, pgf0, pgf1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i;

	ASSERT_NE(NULL, ta.sh);
	ASSERT_EQ(0, hwpmc_child_start(&t, tree_target, &ta));
	ASSERT_EQ(0, hwpmc_recv_u64(&t, &ready));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, hwpmc_soft_tc(self->fd, ev[i], PMC_F_DESCENDANTS,
					   &rd.id[i]));
		ASSERT_EQ(0, hwpmc_attach(self->fd, rd.id[i], t.pid));
		ASSERT_EQ(0, hwpmc_start(self->fd, rd.id[i]));
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_main, &rd));
	/* Started above: what the system did from here bounds the counts. */
	ctxt0 = proc_counter("/proc/stat", "ctxt ");
	pgf0 = proc_counter("/proc/vmstat", "pgfault ");
	t0 = hwpmc_clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, hwpmc_send_u64(&t, 1));
	ASSERT_EQ(0, hwpmc_recv_u64(&t, &nproc));
	atomic_store(&rd.stop, 1);
	pthread_join(th, NULL);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, hwpmc_stop(self->fd, rd.id[i]));
		ASSERT_EQ(0, hwpmc_read(self->fd, rd.id[i], &v[i]));
	}
	t1 = hwpmc_clock_ns(CLOCK_MONOTONIC);
	ctxt1 = proc_counter("/proc/stat", "ctxt ");
	pgf1 = proc_counter("/proc/vmstat", "pgfault ");
	ASSERT_LE(0, ctxt0);
	ASSERT_LE(0, pgf0);
	TH_LOG("%llu descendants: SYSCALL.ENTER %llu SCHED.SWITCH %llu "
	       "CLOCK.PROF %.1f ms PAGE_FAULT.ALL %llu; %ld concurrent reads",
	       (unsigned long long)nproc, (unsigned long long)v[0],
	       (unsigned long long)v[1], v[2] / 1e6, (unsigned long long)v[3],
	       rd.reads);
	EXPECT_EQ(BRANCHES * (1 + LEAVES + (LEAVES + 3) / 4), nproc);
	EXPECT_LE(1000, nproc);
	EXPECT_EQ(0, rd.errors);
	EXPECT_EQ(0, rd.backwards);
	/* Every descendant's calls were counted, and they are kept. */
	EXPECT_LE(nproc * LEAF_CALLS, v[0]);
	/*
	 * ...once: each process adds its fork (in its parent), wait and exit
	 * to its LEAF_CALLS, a handful; a process counted twice adds 20.
	 */
	EXPECT_GE(nproc * (LEAF_CALLS + 8) + 64, v[0]);
	EXPECT_LT(0, v[1]);
	/* No more switches than the whole system made meanwhile. */
	EXPECT_GE(ctxt1 - ctxt0, (long long)v[1])
		TH_LOG("system: %lld switches", ctxt1 - ctxt0);
	EXPECT_LT(0, v[2]);
	/* No more CPU time than every CPU for the whole run (+ a tick). */
	EXPECT_GE((t1 - t0 + 10000000ULL) * ncpu, v[2])
		TH_LOG("%.1f ms x %ld CPUs", (t1 - t0) / 1e6, ncpu);
	/* A forked child writes to its copied stack at least once. */
	EXPECT_LE(nproc, v[3]);
	EXPECT_GE(pgf1 - pgf0, (long long)v[3])
		TH_LOG("system: %lld page faults", pgf1 - pgf0);
	ASSERT_EQ(0, hwpmc_send_u64(&t, 0));
	EXPECT_EQ(0, hwpmc_child_wait(&t));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, hwpmc_release(self->fd, rd.id[i]));
	check_all_free(_metadata);
	munmap(ta.sh, sizeof(*ta.sh));
}

/* ---------------------------------------------------- several owners */

/* A shared target: on each command n > 0 it makes n calls and forks 20
 * children of 100 calls each, then answers; 0 ends it. */
static int shared_target(struct hwpmc_child *me, void *arg)
{
	struct shared *sh = arg;
	__u64 n;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	if (hwpmc_send_u64(me, 0))
		return 1;
	while (!hwpmc_recv_u64(me, &n) && n) {
		hwpmc_burn_syscalls(n);
		if (!fork_wave(sh, 20, 4, 100, 0))
			return 2;
		if (hwpmc_send_u64(me, 1))
			return 3;
	}
	return 0;
}

/* A private target: sleeps and forks until its owner dies. */
static void private_target(void)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);

	for (;;) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		nanosleep(&ts, NULL);
	}
}

struct owner_arg {
	pid_t shared;
};

/*
 * One of several owners.  A = SYSCALL.ENTER on the shared target with
 * descendants, B = SCHED.SWITCH on a private target, C = CLOCK.PROF on
 * itself (attached by PMCSTART).  Phase 1 measures the shared target;
 * phase 2 churns through operations, each result checked against what
 * the owner knows of its PMCs.  Exit status 0, or the failing step.
 */
static int owner_main(struct hwpmc_child *me, void *arg)
{
	struct owner_arg *oa = arg;
	int fd, i, attached = 1, running = 1;
	pid_t priv;
	__u32 a, b, c;
	__u64 cmd, v, w;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	priv = fork();
	if (priv == 0)
		private_target();
	fd = hwpmc_open();
	if (priv < 0 || fd < 0)
		return 10;
	if (hwpmc_soft_tc(fd, PMC_SOFT_SYSCALL_ENTER, PMC_F_DESCENDANTS, &a) ||
	    hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &b) ||
	    hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &c))
		return 11;
	if (hwpmc_attach(fd, a, oa->shared) || hwpmc_attach(fd, b, priv))
		return 12;
	if (hwpmc_start(fd, a) || hwpmc_start(fd, b) || hwpmc_start(fd, c))
		return 13;
	if (hwpmc_send_u64(me, 0) || hwpmc_recv_u64(me, &cmd))
		return 14;
	/* Phase 1: the test had the shared target work; report A. */
	if (hwpmc_stop(fd, a) || hwpmc_read(fd, a, &v))
		return 15;
	running = 0;
	if (hwpmc_send_u64(me, v) || hwpmc_recv_u64(me, &cmd))
		return 16;
	/* Phase 2: churn until told to stop (cmd 1: close; 2: just exit). */
	for (i = 0;; i++) {
		int err;

		switch (i % 6) {
		case 0:
			err = hwpmc_detach(fd, a, oa->shared);
			if (err != (attached ? 0 : ESRCH))
				return 20;
			attached = 0;
			break;
		case 1:
			if (hwpmc_attach(fd, a, oa->shared))
				return 21;
			attached = 1;
			if (hwpmc_attach(fd, a, oa->shared) != EEXIST)
				return 22;
			break;
		case 2:
			err = attached ? hwpmc_start(fd, a) : 0;
			if (err)
				return 23;
			running = attached;
			break;
		case 3:
			if (hwpmc_read(fd, a, &v) || hwpmc_read(fd, b, &w))
				return 24;
			if (!running && (hwpmc_read(fd, a, &w) || w != v))
				return 25;
			break;
		case 4:
			if (hwpmc_stop(fd, a))
				return 26;
			running = 0;
			if (hwpmc_write(fd, a, 7) || hwpmc_read(fd, a, &v) ||
			    v != 7)
				return 27;
			break;
		case 5:
			if (hwpmc_release(fd, c))
				return 28;
			if (hwpmc_soft_tc(fd, PMC_SOFT_CLOCK_PROF, 0, &c) ||
			    hwpmc_start(fd, c))
				return 29;
			break;
		}
		if (has_input(me->rx))		/* the test has had enough */
			break;
	}
	if (hwpmc_recv_u64(me, &cmd))
		return 30;
	kill(priv, SIGKILL);
	waitpid(priv, NULL, 0);
	if (cmd == 1)
		close(fd);
	hwpmc_send_u64(me, i);
	return 0;
}

TEST_F_TIMEOUT(stress, several_owners, 240)
{
	const int nowners = 4;
	const __u64 n = 3000;
	struct shared *sh = shared_new();
	struct hwpmc_child s, o[4];
	struct owner_arg oa[4];
	__u64 v, done;
	int i;

	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, hwpmc_child_start(&s, shared_target, sh));
	ASSERT_EQ(0, hwpmc_recv_u64(&s, &v));
	for (i = 0; i < nowners; i++) {
		oa[i].shared = s.pid;
		ASSERT_EQ(0, hwpmc_child_start(&o[i], owner_main, &oa[i]));
	}
	for (i = 0; i < nowners; i++)
		ASSERT_EQ(0, hwpmc_recv_u64(&o[i], &v)) TH_LOG("owner %d", i);
	/* 4 owners x 3 PMCs: 12 more rows in use. */
	EXPECT_EQ(NPIN + 3 * nowners,
		  hwpmc_count_rows(self->fd, 0, PMC_CLASS_SOFT,
				   PMC_DISP_THREAD));

	/* Phase 1: everyone counts the shared target's work. */
	ASSERT_EQ(0, hwpmc_send_u64(&s, n));
	ASSERT_EQ(0, hwpmc_recv_u64(&s, &done));
	for (i = 0; i < nowners; i++) {
		ASSERT_EQ(0, hwpmc_send_u64(&o[i], 1));
		ASSERT_EQ(0, hwpmc_recv_u64(&o[i], &v)) TH_LOG("owner %d", i);
		TH_LOG("owner %d: %llu calls of the shared target and its "
		       "children", i, (unsigned long long)v);
		EXPECT_LE(n + 20 * 100, v);
		EXPECT_GE(n + 20 * 100 + 20 * 16 + 64, v);
	}

	/* Phase 2: owners churn while the target works and forks. */
	for (i = 0; i < nowners; i++)
		ASSERT_EQ(0, hwpmc_send_u64(&o[i], 1));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, hwpmc_send_u64(&s, 200));
		ASSERT_EQ(0, hwpmc_recv_u64(&s, &done));
	}
	/* Owner 3 dies by SIGKILL mid-churn; 0 closes; 1 and 2 just exit. */
	kill(o[3].pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, hwpmc_child_wait(&o[3]));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, hwpmc_send_u64(&o[i], i == 0 ? 1 : 2));
		ASSERT_EQ(0, hwpmc_recv_u64(&o[i], &v)) TH_LOG("owner %d", i);
		TH_LOG("owner %d: %llu operations while churning", i,
		       (unsigned long long)v);
		EXPECT_EQ(0, hwpmc_child_wait(&o[i])) TH_LOG("owner %d", i);
	}
	ASSERT_EQ(0, hwpmc_send_u64(&s, 0));
	EXPECT_EQ(0, hwpmc_child_wait(&s));
	reap_all();
	check_all_free(_metadata);
	munmap(sh, sizeof(*sh));
}

/* ---------------------------------------- threads of a single owner */

/* A target forking short-lived children until killed. */
static int churn_target(struct hwpmc_child *me, void *arg)
{
	struct shared *sh = arg;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	if (hwpmc_send_u64(me, 0))
		return 1;
	while (!atomic_load(&sh->stop))
		fork_wave(sh, 8, 2, 10, 2);
	return 0;
}

struct worker {
	int fd;
	int index;
	pid_t target;
	int rounds;
	_Atomic int *stop;
	int failed_step;	/* 0: all went as expected */
	long ops;
};

#define FAIL_AT(step) do { w->failed_step = (step); return NULL; } while (0)

/* A thread's whole PMC life cycle, over and over. */
static void *lifecycle_worker(void *arg)
{
	struct worker *w = arg;
	__u32 id;
	__u64 v, v2;
	int i, err;

	for (i = 0; i < w->rounds; i++) {
		__u32 flags = i % 2 ? PMC_F_DESCENDANTS : 0;

		if (hwpmc_soft_tc(w->fd, (w->index + i) % PMC_SOFT_NEVENTS,
				  flags, &id))
			FAIL_AT(1);
		if (i % 3 == 0) {
			/* Never attached: PMCSTART attaches to the owner. */
			if (hwpmc_start(w->fd, id))
				FAIL_AT(2);
		} else {
			if (hwpmc_attach(w->fd, id, w->target))
				FAIL_AT(3);
			if (hwpmc_attach(w->fd, id, w->target) != EEXIST)
				FAIL_AT(4);
			if (hwpmc_start(w->fd, id))
				FAIL_AT(5);
		}
		if (hwpmc_read(w->fd, id, &v))
			FAIL_AT(6);
		if (hwpmc_write(w->fd, id, 1) != EBUSY)
			FAIL_AT(7);
		if (hwpmc_stop(w->fd, id))
			FAIL_AT(8);
		if (hwpmc_read(w->fd, id, &v) || hwpmc_read(w->fd, id, &v2) ||
		    v != v2)
			FAIL_AT(9);
		if (hwpmc_write(w->fd, id, 0) || hwpmc_read(w->fd, id, &v) || v)
			FAIL_AT(10);
		if (i % 3 && hwpmc_detach(w->fd, id, w->target))
			FAIL_AT(11);
		if (hwpmc_release(w->fd, id))
			FAIL_AT(12);
		/*
		 * Gone: EINVAL, or ESRCH while the owner has no PMC at all;
		 * 0 only if another thread got the same handle meanwhile.
		 */
		err = hwpmc_read(w->fd, id, &v);
		if (err != EINVAL && err != ESRCH && err != 0)
			FAIL_AT(13);
		w->ops += 14;
	}
	return NULL;
}

/* One long-lived PMC attached and detached again and again. */
static void *attach_worker(void *arg)
{
	struct worker *w = arg;
	__u32 id;
	__u64 v;

	if (hwpmc_soft_tc(w->fd, PMC_SOFT_SYSCALL_ENTER, PMC_F_DESCENDANTS,
			  &id))
		FAIL_AT(1);
	while (!atomic_load(w->stop)) {
		if (hwpmc_attach(w->fd, id, w->target))
			FAIL_AT(2);
		if (hwpmc_start(w->fd, id))
			FAIL_AT(3);
		if (hwpmc_read(w->fd, id, &v))
			FAIL_AT(4);
		if (hwpmc_detach(w->fd, id, w->target))
			FAIL_AT(5);
		if (hwpmc_start(w->fd, id) != ESRCH)
			FAIL_AT(6);	/* detached from all */
		if (hwpmc_stop(w->fd, id))
			FAIL_AT(7);
		w->ops += 7;
	}
	if (hwpmc_release(w->fd, id))
		FAIL_AT(8);
	return NULL;
}

/* Queries and bad requests in between. */
static void *query_worker(void *arg)
{
	struct worker *w = arg;
	struct pmc_op_getdriverstats st;
	struct pmc_info info[64];
	__u32 n;
	__u64 v;
	int err;

	while (!atomic_load(w->stop)) {
		n = 64;
		if (hwpmc_pmcinfo(w->fd, 0, info, &n))
			FAIL_AT(1);
		if (hwpmc_ioctl_err(w->fd, HWPMC_IOC_GETDRIVERSTATS, &st))
			FAIL_AT(2);
		err = hwpmc_read(w->fd, 1000000, &v);
		if (err != EINVAL && err != ESRCH)
			FAIL_AT(3);
		err = hwpmc_release(w->fd, 1000000);
		if (err != EINVAL && err != ESRCH)
			FAIL_AT(4);
		w->ops += 4;
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, threads_of_one_owner, 240)
{
	struct shared *sh = shared_new();
	struct hwpmc_child t;
	struct worker w[6];
	pthread_t th[6];
	_Atomic int stop = 0;
	__u64 v;
	long ops = 0;
	int i;

	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, hwpmc_child_start(&t, churn_target, sh));
	ASSERT_EQ(0, hwpmc_recv_u64(&t, &v));
	for (i = 0; i < 6; i++) {
		w[i] = (struct worker){ .fd = self->fd, .index = i,
					.target = t.pid, .rounds = 150,
					.stop = &stop };
		ASSERT_EQ(0, pthread_create(&th[i], NULL,
					    i < 4 ? lifecycle_worker :
					    i == 4 ? attach_worker :
					    query_worker, &w[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	atomic_store(&stop, 1);
	for (i = 4; i < 6; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 6; i++) {
		EXPECT_EQ(0, w[i].failed_step) TH_LOG("thread %d", i);
		ops += w[i].ops;
	}
	TH_LOG("%ld operations from 6 threads of one owner", ops);
	atomic_store(&sh->stop, 1);
	EXPECT_EQ(0, hwpmc_child_wait(&t));
	check_all_free(_metadata);
	munmap(sh, sizeof(*sh));
}

/* --------------------------------- owners and targets dying, en masse */

/* An owner counting a churning target with descendants until killed. */
static int doomed_owner(struct hwpmc_child *me, void *arg)
{
	pid_t target = (pid_t)(uintptr_t)arg;
	int fd, i;
	__u32 id[4];
	__u64 v;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	if (setpgid(0, target))
		return 9;
	fd = hwpmc_open();
	if (fd < 0)
		return 10;
	for (i = 0; i < 4; i++)
		if (hwpmc_soft_tc(fd, (2 * i + 1) % PMC_SOFT_NEVENTS,
				  PMC_F_DESCENDANTS, &id[i]) ||
		    hwpmc_attach(fd, id[i], target) || hwpmc_start(fd, id[i]))
			return 11;
	if (hwpmc_send_u64(me, 0))
		return 12;
	for (i = 0;; i++) {
		hwpmc_read(fd, id[i % 4], &v);
		if (i % 64 == 0) {
			/* Detach and reattach: walks racing with forks. */
			hwpmc_detach(fd, id[0], target);
			hwpmc_attach(fd, id[0], target);
		}
	}
}

static int doomed_target(struct hwpmc_child *me, void *arg)
{
	struct shared *sh = arg;

	hwpmc_close_fds_except(me->tx, me->rx, -1);
	setpgid(0, 0);
	if (hwpmc_send_u64(me, 0))
		return 1;
	for (;;)
		fork_wave(sh, 4, 4, 5, 2);
}

TEST_F_TIMEOUT(stress, owners_and_targets_dying, 240)
{
	struct shared *sh = shared_new();
	int i;

	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	for (i = 0; i < 40; i++) {
		struct hwpmc_child t, o[2];
		__u64 v;
		int k;

		ASSERT_EQ(0, hwpmc_child_start(&t, doomed_target, sh));
		ASSERT_EQ(0, hwpmc_recv_u64(&t, &v));
		for (k = 0; k < 2; k++) {
			ASSERT_EQ(0, hwpmc_child_start(&o[k], doomed_owner,
						       (void *)(uintptr_t)t.pid));
			ASSERT_EQ(0, hwpmc_recv_u64(&o[k], &v));
		}
		switch (i % 4) {
		case 0:
			kill(o[0].pid, SIGKILL);
			kill(o[1].pid, SIGKILL);
			kill(t.pid, SIGKILL);
			break;
		case 1:
			kill(t.pid, SIGKILL);
			kill(o[0].pid, SIGKILL);
			kill(o[1].pid, SIGKILL);
			break;
		case 2:
			kill(o[0].pid, SIGKILL);
			kill(t.pid, SIGKILL);
			kill(o[1].pid, SIGKILL);
			break;
		case 3:
			kill(-t.pid, SIGKILL);
			break;
		}
		EXPECT_EQ(128 + SIGKILL, hwpmc_child_wait(&t));
		EXPECT_EQ(128 + SIGKILL, hwpmc_child_wait(&o[0]));
		EXPECT_EQ(128 + SIGKILL, hwpmc_child_wait(&o[1]));
	}
	reap_all();
	TH_LOG("40 rounds; %ld descendants forked", atomic_load(&sh->processes));
	check_all_free(_metadata);
	munmap(sh, sizeof(*sh));
}

TEST_HARNESS_MAIN
