// SPDX-License-Identifier: GPL-2.0
/*
 * bench_read: the cost of one read, in nanoseconds of guest time, for each
 * variant named on the command line (make bench runs it under QEMU's
 * -icount, where guest time is proportional to instructions executed).
 *
 *   bench_read [-n ITERATIONS] VARIANT...
 *
 * Variants:
 *   getppid                a null system call (the floor)
 *   null-ioctl             GETMODULEVERSION on /dev/hwpmc
 *   enotty-ioctl           an ioctl /dev/hwpmc refuses at once (ENOTTY: not
 *                          its magic): the floor of any ioctl into it
 *   pmcrw:EVENT            the raw PMCRW ioctl on a process-scope counting
 *                          PMC attached to this process (TSC: system scope,
 *                          CPU 0)
 *   pmc_read:EVENT         pmc_read() through libhwpmc, same PMC (which
 *                          reads the read page where the PMC has a slot:
 *                          SOFT but CLOCK.PROF, TSC with an invariant TSC)
 *   page:EVENT             the read page read directly (the uapi header's
 *                          reader), same PMC, on an owner that mapped its
 *                          page first: no system call
 *   perf:task-clock        read() of a perf software counter on this process
 *   perf:context-switches
 * EVENT: SCHED.SWITCH, CLOCK.PROF, PAGE_FAULT.ALL, SYSCALL.ENTER, TSC.
 *
 * Prints one line per variant: "read VARIANT NS_PER_READ".  Exit status 0,
 * or 1 with a message when a variant cannot be set up (its line is then
 * "read VARIANT -").
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <x86intrin.h>
#include <linux/perf_event.h>
#include <linux/hwpmc.h>
#include <hwpmc/pmc.h>

static long iterations = 200000;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct soft_event {
	const char *name;
	uint32_t class, event, mode;
};

static const struct soft_event events[] = {
	{ "SCHED.SWITCH", PMC_CLASS_SOFT, PMC_SOFT_SCHED_SWITCH, PMC_MODE_TC },
	{ "CLOCK.PROF", PMC_CLASS_SOFT, PMC_SOFT_CLOCK_PROF, PMC_MODE_TC },
	{ "PAGE_FAULT.ALL", PMC_CLASS_SOFT, PMC_SOFT_PAGE_FAULT_ALL, PMC_MODE_TC },
	{ "SYSCALL.ENTER", PMC_CLASS_SOFT, PMC_SOFT_SYSCALL_ENTER, PMC_MODE_TC },
	{ "TSC", PMC_CLASS_TSC, 0, PMC_MODE_SC },
};

static const struct soft_event *find_event(const char *name)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i].name, name))
			return &events[i];
	return NULL;
}

/* Time @fn over the iterations; @fn returns nonzero on failure. */
static double time_loop(int (*fn)(void *), void *arg)
{
	uint64_t t0, t1;

	for (long i = 0; i < iterations / 10; i++)	/* warm up */
		if (fn(arg))
			return -1;
	t0 = now_ns();
	for (long i = 0; i < iterations; i++)
		if (fn(arg))
			return -1;
	t1 = now_ns();
	return (double)(t1 - t0) / (double)iterations;
}

static int do_getppid(void *arg)
{
	(void)arg;
	return syscall(SYS_getppid) < 0;
}

struct ioctl_ctx {
	int fd;
	uint32_t id;
};

static int do_null_ioctl(void *arg)
{
	struct ioctl_ctx *c = arg;
	struct pmc_op_getmoduleversion v;

	memset(&v, 0, sizeof(v));
	return ioctl(c->fd, HWPMC_IOC_GETMODULEVERSION, &v) != 0;
}

static int do_enotty_ioctl(void *arg)
{
	struct ioctl_ctx *c = arg;

	return ioctl(c->fd, _IO('x', 0), NULL) != -1 || errno != ENOTTY;
}

static int do_pmcrw(void *arg)
{
	struct ioctl_ctx *c = arg;
	struct pmc_op_pmcrw rw = { .pm_pmcid = c->id,
				   .pm_flags = PMC_F_OLDVALUE };

	return ioctl(c->fd, HWPMC_IOC_PMCRW, &rw) != 0;
}

static int do_pmc_read(void *arg)
{
	pmc_value_t v;

	return pmc_read(*(pmc_id_t *)arg, &v) != 0;
}

struct page_ctx {
	const struct hwpmc_readpage *page;
	uint32_t slot, gen;
};

/* The uapi header's reader; nonzero when the page does not answer. */
static int do_page_read(void *arg)
{
	const struct page_ctx *c = arg;
	const struct hwpmc_readslot *s = &c->page->rp_slots[c->slot];
	uint64_t ctl, v;

	ctl = __atomic_load_n(&s->rs_ctl, __ATOMIC_ACQUIRE);
	if (HWPMC_RS_GEN(ctl) != c->gen ||
	    !(ctl & (HWPMC_RS_VALUE | HWPMC_RS_TSC)))
		return 1;
	v = __atomic_load_n(&s->rs_value, __ATOMIC_ACQUIRE);
	if (ctl & HWPMC_RS_TSC) {
		_mm_lfence();
		v += __rdtsc();
	}
	__asm__ volatile("" : : "r"(v));
	return __atomic_load_n(&s->rs_ctl, __ATOMIC_ACQUIRE) != ctl;
}

static int do_perf_read(void *arg)
{
	uint64_t v;

	return read(*(int *)arg, &v, sizeof(v)) != sizeof(v);
}

static int raw_alloc(int fd, const struct soft_event *ev, uint32_t *id)
{
	struct pmc_op_pmcallocate a;
	struct pmc_op_pmcattach at;
	struct pmc_op_simple s;

	memset(&a, 0, sizeof(a));
	a.pm_class = ev->class;
	a.pm_event = ev->event;
	a.pm_mode = ev->mode;
	a.pm_cpu = ev->mode == PMC_MODE_SC ? 0 : PMC_CPU_ANY;
	if (ioctl(fd, HWPMC_IOC_PMCALLOCATE, &a))
		return -1;
	*id = a.pm_pmcid;
	if (ev->mode == PMC_MODE_TC) {
		memset(&at, 0, sizeof(at));
		at.pm_pmcid = *id;
		at.pm_pid = PMC_PID_SELF;
		if (ioctl(fd, HWPMC_IOC_PMCATTACH, &at))
			return -1;
	}
	memset(&s, 0, sizeof(s));
	s.pm_pmcid = *id;
	return ioctl(fd, HWPMC_IOC_PMCSTART, &s);
}

static int lib_alloc(const char *name, const struct soft_event *ev,
		     pmc_id_t *id)
{
	static int inited;

	if (!inited && pmc_init())
		return -1;
	inited = 1;
	if (pmc_allocate(name, ev->mode, 0,
			 ev->mode == PMC_MODE_SC ? 0 : PMC_CPU_ANY, id, 0))
		return -1;
	if (ev->mode == PMC_MODE_TC && pmc_attach(*id, 0))
		return -1;
	return pmc_start(*id);
}

static int perf_open(const char *name)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	if (!strcmp(name, "task-clock"))
		attr.config = PERF_COUNT_SW_TASK_CLOCK;
	else if (!strcmp(name, "context-switches"))
		attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	else
		return -1;
	attr.exclude_kernel = 0;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static double run_variant(const char *v)
{
	static int fd = -1;
	const char *colon = strchr(v, ':');
	const struct soft_event *ev;

	if (!strcmp(v, "getppid"))
		return time_loop(do_getppid, NULL);
	if (fd < 0)
		fd = open("/dev/hwpmc", O_RDWR);
	if (!strcmp(v, "null-ioctl")) {
		struct ioctl_ctx c = { .fd = fd };

		return fd < 0 ? -1 : time_loop(do_null_ioctl, &c);
	}
	if (!strcmp(v, "enotty-ioctl")) {
		struct ioctl_ctx c = { .fd = fd };

		return fd < 0 ? -1 : time_loop(do_enotty_ioctl, &c);
	}
	if (!colon)
		return -1;
	if (!strncmp(v, "perf:", 5)) {
		int pfd = perf_open(colon + 1);
		double r;

		if (pfd < 0)
			return -1;
		r = time_loop(do_perf_read, &pfd);
		close(pfd);
		return r;
	}
	ev = find_event(colon + 1);
	if (!ev)
		return -1;
	if (!strncmp(v, "pmcrw:", 6)) {
		struct ioctl_ctx c = { .fd = fd };
		struct pmc_op_simple s;
		double r;

		if (fd < 0 || raw_alloc(fd, ev, &c.id))
			return -1;
		r = time_loop(do_pmcrw, &c);
		memset(&s, 0, sizeof(s));
		s.pm_pmcid = c.id;
		ioctl(fd, HWPMC_IOC_PMCSTOP, &s);
		ioctl(fd, HWPMC_IOC_PMCRELEASE, &s);
		return r;
	}
	if (!strncmp(v, "page:", 5)) {
		struct pmc_op_getreadslot gs;
		struct pmc_op_simple s;
		struct page_ctx c;
		uint32_t id;
		double r;
		void *m;
		int pfd = open("/dev/hwpmc", O_RDWR);

		/* The page first: PMCs allocated after it get slots. */
		m = pfd < 0 ? MAP_FAILED :
		    mmap(NULL, HWPMC_READPAGE_SIZE, PROT_READ, MAP_SHARED, pfd,
			 HWPMC_READPAGE_OFFSET);
		if (m == MAP_FAILED || raw_alloc(pfd, ev, &id)) {
			if (pfd >= 0)
				close(pfd);
			return -1;
		}
		memset(&gs, 0, sizeof(gs));
		gs.pm_pmcid = id;
		if (ioctl(pfd, HWPMC_IOC_GETREADSLOT, &gs)) {
			munmap(m, HWPMC_READPAGE_SIZE);
			close(pfd);
			return -1;
		}
		c.page = m;
		c.slot = gs.pm_slot;
		c.gen = gs.pm_gen;
		r = time_loop(do_page_read, &c);
		memset(&s, 0, sizeof(s));
		s.pm_pmcid = id;
		ioctl(pfd, HWPMC_IOC_PMCSTOP, &s);
		munmap(m, HWPMC_READPAGE_SIZE);
		close(pfd);
		return r;
	}
	if (!strncmp(v, "pmc_read:", 9)) {
		pmc_id_t id;
		double r;

		if (lib_alloc(colon + 1, ev, &id))
			return -1;
		r = time_loop(do_pmc_read, &id);
		pmc_stop(id);
		pmc_release(id);
		return r;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		switch (opt) {
		case 'n':
			iterations = strtol(optarg, NULL, 0);
			if (iterations < 10) {
				fprintf(stderr, "bench_read: -n: at least 10\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: bench_read [-n ITERATIONS] VARIANT...\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	for (int i = optind; i < argc; i++) {
		double ns = run_variant(argv[i]);

		if (ns < 0) {
			fprintf(stderr, "bench_read: %s: %s\n", argv[i],
				strerror(errno));
			printf("read %s -\n", argv[i]);
			rc = 1;
		} else {
			printf("read %s %.1f\n", argv[i], ns);
		}
		fflush(stdout);
	}
	return rc;
}
