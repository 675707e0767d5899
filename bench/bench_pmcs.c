// SPDX-License-Identifier: GPL-2.0
/*
 * bench_pmcs: what a PMC costs as their number grows, hwpmc against perf,
 * for make bench's "scale" part (issue 21):
 *
 *   bench_pmcs hwpmc|perf N...     (N ascending, at most 65,536)
 *   bench_pmcs owners K
 *
 * The counters are process-scope counting SCHED.SWITCH PMCs (perf:
 * context-switches), 16 on each of ceil(N/16) sleeping child processes,
 * since a process is the target of at most one hwpmc PMC per row and the
 * SOFT class has 16 rows; hwpmc's come from ceil(N/16) owners (opens of
 * /dev/hwpmc) of this process.  One counter is PMCALLOCATE, PMCATTACH and
 * PMCSTART (perf: one perf_event_open()).  As the count grows to each N,
 * prints
 *
 *   pmcs TOOL alloc N NS     guest ns per counter made, from the previous
 *                            N (or 0) to this one
 *   pmcs TOOL read N NS      one read of the first counter (PMCRW; perf:
 *                            read()) while N exist
 *   pmcs TOOL mem N BYTES    kernel memory per counter: /proc/meminfo's
 *                            Slab, VmallocUsed and Percpu, folded first
 *                            (vm.stat_refresh), against before the first
 *                            counter (the children already made)
 *
 * and after all are closed, once the kernel's memory has settled (closed
 * files and RCU callbacks free after close()):
 *
 *   pmcs TOOL left BYTES        Slab and VmallocUsed not given back, in all
 *   pmcs TOOL leftpercpu BYTES  Percpu not given back (its allocator keeps
 *                               the pages of freed areas)
 *
 * "owners K" opens /dev/hwpmc K times and prints "pmcs owners mem K
 * BYTES" per open and the two "pmcs owners left..." lines after closing
 * them.  The memory before is taken once it has settled too.
 * Root only (vm.stat_refresh; hwpmc's per-user limits do not apply to
 * CAP_PERFMON).  Exit 1 with a message when a step fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "bench_kids.h"
#include "hwpmc_util.h"

#define PER_TARGET	16	/* SOFT rows: hwpmc PMCs one process can have */
#define MAX_PMCS	65536
#define READS		20000

static pid_t *kids;
static long nkids;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void kill_kids(void)
{
	bench_kill_kids(kids, nkids);
	nkids = 0;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "bench_pmcs: %s: %s\n", what, strerror(err));
	kill_kids();
	return 1;
}

/* @n children that sleep until they are killed. */
static int make_kids(long n)
{
	kids = calloc((size_t)n, sizeof(*kids));
	if (!kids)
		return ENOMEM;
	for (nkids = 0; nkids < n; nkids++) {
		pid_t p = fork();

		if (p < 0)
			return errno;
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		kids[nkids] = p;
	}
	return 0;
}

/*
 * The kernel's memory in bytes, after folding every CPU's pending counts
 * (vm.stat_refresh): /proc/meminfo's Slab and VmallocUsed, and apart
 * from them Percpu, whose allocator keeps the pages of freed areas for
 * later ones.
 */
struct kmem {
	long long heap, percpu;
};

static int kmem(struct kmem *m)
{
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");
	long long slab, vmalloc, percpu;

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	slab = hwpmc_file_key("/proc/meminfo", "Slab:");
	vmalloc = hwpmc_file_key("/proc/meminfo", "VmallocUsed:");
	percpu = hwpmc_file_key("/proc/meminfo", "Percpu:");
	if (slab < 0 || vmalloc < 0 || percpu < 0)
		return EIO;
	m->heap = (slab + vmalloc) * 1024;
	m->percpu = percpu * 1024;
	return 0;
}

static long long kmem_all(const struct kmem *m)
{
	return m->heap + m->percpu;
}

/*
 * The kernel's memory once what was freed before is gone (closed files,
 * RCU callbacks: perf's and hwpmc's frees finish after close()): read
 * until it moves by less than 64 KB in 200 ms, for at most 10 s.
 */
static int kmem_settled(struct kmem *m)
{
	struct kmem prev;
	int i, err = kmem(m);

	for (i = 0; !err && i < 50; i++) {
		prev = *m;
		usleep(200000);
		err = kmem(m);
		if (!err && llabs(kmem_all(m) - kmem_all(&prev)) < 65536)
			break;
	}
	return err;
}

/* What is left of @base's memory after a release: "left" and Percpu. */
static int print_left(const char *tool, const struct kmem *base)
{
	struct kmem now;
	int err = kmem_settled(&now);

	if (err)
		return err;
	printf("pmcs %s left %lld\n", tool, now.heap - base->heap);
	printf("pmcs %s leftpercpu %lld\n", tool, now.percpu - base->percpu);
	return 0;
}

struct counters {
	bool perf;
	int *fds;	/* hwpmc: one owner per PER_TARGET; perf: one a counter */
	uint32_t *ids;	/* hwpmc: the PMCs' ids */
	long n;
};

/* Counter @i, on child i / PER_TARGET: 0 or the errno. */
static int make_one(struct counters *c, long i)
{
	pid_t target = kids[i / PER_TARGET];
	int fd, err;

	if (c->perf) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(a),
			.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
		};

		fd = (int)syscall(SYS_perf_event_open, &a, target, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return errno;
		c->fds[i] = fd;
		return 0;
	}
	if (i % PER_TARGET == 0) {
		fd = hwpmc_open();
		if (fd < 0)
			return errno;
		c->fds[i / PER_TARGET] = fd;
	}
	fd = c->fds[i / PER_TARGET];
	err = hwpmc_soft_tc(fd, PMC_SOFT_SCHED_SWITCH, 0, &c->ids[i]);
	if (!err)
		err = hwpmc_attach(fd, c->ids[i], target);
	if (!err)
		err = hwpmc_start(fd, c->ids[i]);
	return err;
}

static int read_first(const struct counters *c)
{
	__u64 v;

	if (c->perf)
		return read(c->fds[0], &v, sizeof(v)) == sizeof(v) ? 0 : EIO;
	return hwpmc_read(c->fds[0], c->ids[0], &v);
}

static void close_all(struct counters *c)
{
	long i, nfds = c->perf ? c->n : (c->n + PER_TARGET - 1) / PER_TARGET;

	for (i = 0; i < nfds; i++)
		close(c->fds[i]);
	c->n = 0;
}

static int run_counters(const char *tool, long *ns, int nn)
{
	struct counters c = { .perf = !strcmp(tool, "perf") };
	long max = ns[nn - 1], i;
	struct kmem base, now;
	uint64_t t0;
	int k, err;

	err = make_kids((max + PER_TARGET - 1) / PER_TARGET);
	if (err)
		return die("fork", err);
	c.fds = calloc((size_t)max, sizeof(*c.fds));
	c.ids = calloc((size_t)max, sizeof(*c.ids));
	if (!c.fds || !c.ids)
		return die("memory", ENOMEM);
	if ((err = kmem_settled(&base)))
		return die("/proc/meminfo", err);
	for (k = 0; k < nn; k++) {
		long from = c.n;

		t0 = now_ns();
		for (i = from; i < ns[k]; i++, c.n++) {
			err = make_one(&c, i);
			if (err)
				return die(c.perf ? "perf_event_open" :
					   "PMCALLOCATE, PMCATTACH, PMCSTART",
					   err);
		}
		printf("pmcs %s alloc %ld %.0f\n", tool, ns[k],
		       (double)(now_ns() - t0) / (double)(ns[k] - from));
		for (i = 0; i < READS / 10; i++)
			if ((err = read_first(&c)))
				return die("read", err);
		t0 = now_ns();
		for (i = 0; i < READS; i++)
			if ((err = read_first(&c)))
				return die("read", err);
		printf("pmcs %s read %ld %.1f\n", tool, ns[k],
		       (double)(now_ns() - t0) / READS);
		if ((err = kmem(&now)))
			return die("/proc/meminfo", err);
		printf("pmcs %s mem %ld %.0f\n", tool, ns[k],
		       (double)(kmem_all(&now) - kmem_all(&base)) /
		       (double)ns[k]);
		fflush(stdout);
	}
	close_all(&c);
	if ((err = print_left(tool, &base)))
		return die("/proc/meminfo", err);
	kill_kids();
	return 0;
}

static int run_owners(long k)
{
	int *fds = calloc((size_t)k, sizeof(*fds)), err;
	struct kmem base, now;
	long i;

	if (!fds)
		return die("memory", ENOMEM);
	if ((err = kmem_settled(&base)))
		return die("/proc/meminfo", err);
	for (i = 0; i < k; i++) {
		fds[i] = hwpmc_open();
		if (fds[i] < 0)
			return die("open /dev/hwpmc", errno);
	}
	if ((err = kmem(&now)))
		return die("/proc/meminfo", err);
	printf("pmcs owners mem %ld %.0f\n", k,
	       (double)(kmem_all(&now) - kmem_all(&base)) / (double)k);
	for (i = 0; i < k; i++)
		close(fds[i]);
	if ((err = print_left("owners", &base)))
		return die("/proc/meminfo", err);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_pmcs hwpmc|perf N... (ascending, 1 to %d)\n"
			"       bench_pmcs owners K\n", MAX_PMCS);
	return 2;
}

int main(int argc, char **argv)
{
	struct rlimit rl = { MAX_PMCS + 1024, MAX_PMCS + 1024 };
	long ns[32];
	int nn = 0, i;

	if (argc < 3 || argc - 2 > 32)
		return usage();
	for (i = 2; i < argc; i++) {
		char *end;

		ns[nn] = strtol(argv[i], &end, 10);
		if (*end || ns[nn] < 1 || ns[nn] > MAX_PMCS ||
		    (nn && ns[nn] <= ns[nn - 1]))
			return usage();
		nn++;
	}
	/* Without the privilege to raise it: as far as the hard limit. */
	if (setrlimit(RLIMIT_NOFILE, &rl) && (getrlimit(RLIMIT_NOFILE, &rl) ||
	    (rl.rlim_cur = rl.rlim_max, setrlimit(RLIMIT_NOFILE, &rl))))
		return die("RLIMIT_NOFILE", errno);
	if (!strcmp(argv[1], "owners"))
		return nn == 1 ? run_owners(ns[0]) : usage();
	if (strcmp(argv[1], "hwpmc") && strcmp(argv[1], "perf"))
		return usage();
	return run_counters(argv[1], ns, nn);
}
