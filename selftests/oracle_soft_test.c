// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc's process-scope SOFT counts against an independent truth: a BPF
 * program (oracle_soft.bpf.c, loaded with libbpf from its bpftool
 * skeleton) that counts the same events from the same tracepoints, per
 * thread, without the module (issue 12).
 *
 * Every case runs one workload in a target process: system calls, read and
 * write page faults on fresh pages, sleeps (switches), threads pinned to
 * CPU 0 and CPU 1, moves between the CPUs (migrations); the "tree" cases
 * add a forked child that execs this binary again (a worker with threads
 * and a grandchild of its own); in one case the main thread exits first
 * and a thread it left behind ends the process.  An owner process -- root, or a child that
 * dropped to uid/gid 65534 -- forks the target, attaches one PMC per SOFT
 * event (SCHED.SWITCH, SCHED.MIGRATE, SYSCALL.ENTER, PAGE_FAULT.ALL/READ/
 * WRITE; with or without PMC_F_DESCENDANTS), starts them and lets the
 * target run; root loads the oracle and tracks the owner, hence the target
 * and everything the target creates from its first instruction on.
 *
 * Alignment.  The target waits in read() on a pipe until released.  The
 * PMCs start, and the oracle's baseline is taken, only once the oracle has
 * seen the target switch out in TASK_INTERRUPTIBLE (blocked in that read):
 * from then on both see the same events.  At the end, hwpmc stops counting
 * a process in its last thread's sched_process_exit; the oracle keeps a
 * thread's events after its own sched_process_exit apart, with their
 * times, and counts those of a thread that was not the last of its
 * process up to that process's last exit -- what hwpmc sees, provided a
 * process's other threads are gone before its last one exits (the
 * workload joins its threads and waits for them to leave /proc, or the
 * last thread waits for the exited main thread to be a zombie).
 *
 * Bound: none -- every count must agree exactly.  The tracepoints are the
 * same; only the moment each side starts and stops differs, and the above
 * makes those moments the same.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "hwpmc_util.h"

#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "oracle_soft.h"
#include "oracle_soft.skel.h"

#define WORKER_ARG	"--oracle-worker"
#define NOBODY		65534

static const struct {
	__u32 event;
	const char *name;
} events[ORACLE_NEV] = {
	[ORACLE_SWITCH]		= { PMC_SOFT_SCHED_SWITCH, "SCHED.SWITCH" },
	[ORACLE_MIGRATE]	= { PMC_SOFT_SCHED_MIGRATE, "SCHED.MIGRATE" },
	[ORACLE_SYSCALL]	= { PMC_SOFT_SYSCALL_ENTER, "SYSCALL.ENTER" },
	[ORACLE_PF_ALL]		= { PMC_SOFT_PAGE_FAULT_ALL, "PAGE_FAULT.ALL" },
	[ORACLE_PF_READ]	= { PMC_SOFT_PAGE_FAULT_READ, "PAGE_FAULT.READ" },
	[ORACLE_PF_WRITE]	= { PMC_SOFT_PAGE_FAULT_WRITE, "PAGE_FAULT.WRITE" },
};

static int ncpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

/* ------------------------------------------------------------ workload */

/* @n fresh pages: read each, then write each (read and write faults). */
static void touch_pages(int n)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i, sum = 0;

	if (p == MAP_FAILED)
		_exit(30);
	for (i = 0; i < n; i++)
		sum += p[i * pg];
	for (i = 0; i < n; i++)
		p[i * pg] = (char)sum;
	/* Fresh pages again, written first this time. */
	munmap((void *)p, n * pg);
	p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(31);
	for (i = 0; i < n; i++)
		p[i * pg] = 1;
	munmap((void *)p, n * pg);
}

static void sleeps(int n)
{
	struct timespec ts = { 0, 200 * 1000 };

	while (n-- > 0)
		nanosleep(&ts, NULL);
}

static void *thread_fn(void *arg)
{
	long cpu = (long)arg;

	if (cpu >= 0)
		hwpmc_pin_cpu(cpu);
	hwpmc_burn_syscalls(500);
	touch_pages(16);
	sleeps(10);
	return NULL;
}

/*
 * Two threads (on CPU 0 and CPU 1 where there are two), the main thread
 * moving between the CPUs meanwhile; the threads are joined and gone
 * before this returns.
 */
static void threads_and_moves(int moves)
{
	pthread_t th[2];
	int i, two = ncpus() >= 2;

	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, thread_fn,
				   (void *)(long)(two ? i : -1)))
			_exit(32);
	for (i = 0; i < moves && two; i++)
		hwpmc_pin_cpu(i % 2);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
}

/*
 * Wait until the joined threads have left /proc/self/task (released: their
 * exit is over), so that the main thread's exit is its process's last.
 */
static void wait_threads_gone(void)
{
	int i;

	/* ".", ".." and the main thread once the others are gone. */
	for (i = 0; i < 100000; i++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		int n = 0;

		if (!d)
			_exit(33);
		while ((e = readdir(d)))
			n++;
		closedir(d);
		if (n <= 3)
			return;
		sched_yield();
	}
	_exit(34);
}

static void work(int moves)
{
	hwpmc_burn_syscalls(1000);
	touch_pages(32);
	sleeps(20);
	threads_and_moves(moves);
	wait_threads_gone();
}

/* The exec'd worker: a thread, a grandchild, the same work. */
static int worker_main(void)
{
	pid_t pid;
	int status;

	work(10);
	pid = fork();
	if (pid < 0)
		return 40;
	if (!pid) {
		work(4);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 41;
	return 0;
}

/* The workloads of the target. */
enum {
	W_PROCESS,	/* the work */
	W_TREE,		/* the work, then a child that execs (the worker) */
	W_LEADER_FIRST,	/* the work; the main thread exits first, a thread
			 * it left behind ends the process */
};

static pid_t leader;

/* Once the main thread is a zombie: more work, then end the process. */
static void *last_thread_fn(void *arg)
{
	char path[64], buf[256], *p;
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", leader);
	for (i = 0; i < 100000; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			_exit(35);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			break;
		sched_yield();
	}
	hwpmc_burn_syscalls(700);
	touch_pages(8);
	sleeps(5);
	exit(0);
}

/* The target, once released. */
static int target_main(int workload)
{
	char exe[PATH_MAX];
	ssize_t len;
	pid_t pid;
	int status;

	work(20);
	if (workload == W_LEADER_FIRST) {
		pthread_t th;

		leader = getpid();
		if (pthread_create(&th, NULL, last_thread_fn, NULL))
			return 55;
		pthread_exit(NULL);
	}
	if (workload != W_TREE)
		return 0;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 50;
	exe[len] = 0;
	pid = fork();
	if (pid < 0)
		return 51;
	if (!pid) {
		touch_pages(8);
		execl(exe, exe, WORKER_ARG, (char *)NULL);
		_exit(52);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 53;
	return WEXITSTATUS(status) ? 54 : 0;
}

/* --------------------------------------------------------- the oracle */

/*
 * Does tracefs's format of @ev say @field is at @off with @size?  Its
 * lines read "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;".
 */
static int format_has(const char *ev, const char *field, size_t off,
		      size_t size)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };
	char path[256], line[512], decl[256];
	unsigned int i, o, s;
	FILE *f = NULL;
	int ok = 0;

	for (i = 0; i < 2 && !f; i++) {
		snprintf(path, sizeof(path), "%s/%s/format", roots[i], ev);
		f = fopen(path, "re");
	}
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *name, *p = strstr(line, "field:");

		if (!p || sscanf(p, "field:%255[^;];\toffset:%u;\tsize:%u;",
				 decl, &o, &s) != 3)
			continue;
		/* The declaration's last word, without an [N]. */
		p = strchr(decl, '[');
		if (p)
			*p = 0;
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl;
		if (strcmp(name, field))
			continue;
		ok = o == off && s == size;
		break;
	}
	fclose(f);
	return ok;
}

#define FMT(ev, type, field) \
	{ ev, #field, offsetof(type, field), sizeof(((type *)0)->field) }

static const char *formats_mismatch(void)
{
	static const struct {
		const char *ev, *field;
		size_t off, size;
	} f[] = {
		FMT("sched/sched_switch", struct tp_sched_switch, prev_pid),
		FMT("sched/sched_switch", struct tp_sched_switch, prev_state),
		FMT("sched/sched_switch", struct tp_sched_switch, next_pid),
		FMT("sched/sched_migrate_task", struct tp_sched_migrate_task, pid),
		FMT("sched/sched_process_fork", struct tp_sched_process_fork, parent_pid),
		FMT("sched/sched_process_fork", struct tp_sched_process_fork, child_pid),
		FMT("sched/sched_process_exit", struct tp_sched_process_exit, pid),
		FMT("raw_syscalls/sys_enter", struct tp_sys_enter, id),
		FMT("exceptions/page_fault_user", struct tp_page_fault, error_code),
		FMT("exceptions/page_fault_kernel", struct tp_page_fault, error_code),
	};
	static char msg[128];
	unsigned int i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!format_has(f[i].ev, f[i].field, f[i].off, f[i].size)) {
			snprintf(msg, sizeof(msg), "%s.%s", f[i].ev, f[i].field);
			return msg;
		}
	return NULL;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int oracle_get(struct oracle_soft *o, pid_t tid, struct oracle_task *t)
{
	__u32 key = tid;

	return bpf_map__lookup_elem(o->maps.tasks, &key, sizeof(key), t,
				    sizeof(*t), 0) ? -errno : 0;
}

static int oracle_track(struct oracle_soft *o, pid_t tid)
{
	struct oracle_task t = { .tid = tid };
	__u32 key = tid;

	return bpf_map__update_elem(o->maps.tasks, &key, sizeof(key), &t,
				    sizeof(t), BPF_NOEXIST) ? -errno : 0;
}

/* Every record of the map (at most ORACLE_MAX_TASKS); their number. */
static int oracle_all(struct oracle_soft *o, struct oracle_task *all)
{
	__u32 key, next, *prev = NULL;
	int n = 0;

	while (n < ORACLE_MAX_TASKS &&
	       !bpf_map__get_next_key(o->maps.tasks, prev, &next, sizeof(next))) {
		key = next;
		prev = &key;
		if (!oracle_get(o, key, &all[n]))
			n++;
	}
	return n;
}

/* Is @t (in @all) @root or below it? */
static int below(const struct oracle_task *all, int n,
		 const struct oracle_task *t, __u32 root)
{
	int depth, i;

	for (depth = 0; depth < 64; depth++) {
		if (t->tid == root)
			return 1;
		for (i = 0; i < n; i++)
			if (all[i].tid == t->ptid)
				break;
		if (i == n)
			return 0;
		t = &all[i];
	}
	return 0;
}

/*
 * What hwpmc should have counted for the target @root (and, with @desc,
 * its descendants): each selected thread's events while it lived, plus
 * those after its exit that came before its process ended -- unless it
 * was its process's last thread, whose exit ended the process.  @base:
 * the target's record when the PMCs started.  Returns 0, or -1 if the
 * oracle lost a task (map full) or a thread's post-exit log overflowed.
 */
static int oracle_expect(const struct oracle_task *all, int n, __u32 root,
			 int desc, const struct oracle_task *base,
			 __u64 want[ORACLE_NEV], int *ntasks, int *nprocs)
{
	int i, j, e;

	memset(want, 0, sizeof(__u64) * ORACLE_NEV);
	*ntasks = *nprocs = 0;
	for (i = 0; i < n; i++) {
		const struct oracle_task *t = &all[i];
		__u64 stop = 0;
		int last = 1;

		if (desc ? !below(all, n, t, root) : t->tgid != root)
			continue;
		if (t->lost || t->npost > ORACLE_NPOST)
			return -1;
		(*ntasks)++;
		if (t->tid == t->tgid)
			(*nprocs)++;
		/* Its process's end: the last exit of a thread of it. */
		for (j = 0; j < n; j++)
			if (all[j].tgid == t->tgid && all[j].exit_ns > stop)
				stop = all[j].exit_ns;
		for (j = 0; j < n; j++)
			if (all[j].tgid == t->tgid && all[j].tid != t->tid &&
			    all[j].exit_ns >= t->exit_ns)
				last = 0;
		for (e = 0; e < ORACLE_NEV; e++)
			want[e] += t->n[e] - (t->tid == root ? base->n[e] : 0);
		if (last)
			continue;
		for (j = 0; j < (int)t->npost; j++)
			if (t->post_ns[j] < stop && t->post_ev[j] < ORACLE_NEV)
				want[t->post_ev[j]]++;
	}
	return 0;
}

/* ------------------------------------------------------- the owner */

/*
 * The owner: (drops to 65534 and) waits for root to track it, forks the
 * target, reports its pid, waits for "attach", attaches and starts one
 * PMC per event, releases the target, reaps it, and reports the counts.
 * Pipes: @rx from root, @tx to root.  Exit status: 0 or where it failed.
 */
static int owner_main(int rx, int tx, int uid, int desc, int workload)
{
	__u64 v[ORACLE_NEV], word;
	__u32 id[ORACLE_NEV];
	int go, fd, e, status;
	pid_t target;

	/* (Changing credentials made it non-dumpable, hence not
	 * ptrace-readable: dumpable again, as any process of 65534 is.) */
	if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid) || prctl(PR_SET_DUMPABLE, 1)))
		return 60;
	if (hwpmc_xread(rx, &word, sizeof(word)))	/* tracked */
		return 61;
	target = hwpmc_fork_gated(&go);
	if (target < 0)
		return 62;
	if (!target) {
		close(rx);
		close(tx);
		_exit(target_main(workload));
	}
	word = target;
	if (hwpmc_xwrite(tx, &word, sizeof(word)) ||
	    hwpmc_xread(rx, &word, sizeof(word)))	/* attach */
		return 63;
	fd = hwpmc_open();
	if (fd < 0)
		return 64;
	for (e = 0; e < ORACLE_NEV; e++) {
		int err = hwpmc_soft_tc(fd, events[e].event,
					desc ? PMC_F_DESCENDANTS : 0, &id[e]);

		if (err) {
			fprintf(stderr, "# owner (uid %d): allocating %s: %s\n",
				uid, events[e].name, strerror(err));
			return 65;
		}
		err = hwpmc_attach(fd, id[e], target);
		if (err) {
			fprintf(stderr, "# owner (uid %d): attaching %s: %s\n",
				uid, events[e].name, strerror(err));
			return 65;
		}
	}
	for (e = 0; e < ORACLE_NEV; e++)
		if (hwpmc_start(fd, id[e]))
			return 66;
	if (write(go, "g", 1) != 1)
		return 67;
	if (waitpid(target, &status, 0) != target || !WIFEXITED(status))
		return 68;
	if (WEXITSTATUS(status))
		return 100 + WEXITSTATUS(status);
	for (e = 0; e < ORACLE_NEV; e++)
		if (hwpmc_read(fd, id[e], &v[e]))
			return 69;
	if (hwpmc_xwrite(tx, v, sizeof(v)))
		return 70;
	close(fd);
	return 0;
}

/* ------------------------------------------------------------- tests */

FIXTURE(oracle) {
	struct oracle_soft *o;
};

FIXTURE_SETUP(oracle)
{
	const char *bad;
	int err;

	self->o = NULL;
	if (geteuid())
		SKIP(return, "needs root (to load the BPF oracle)");
	bad = formats_mismatch();
	if (bad)
		SKIP(return, "tracepoint field %s is not where the oracle reads it (or tracefs is not mounted)",
		     bad);
	libbpf_set_print(libbpf_quiet);
	self->o = oracle_soft__open_and_load();
	if (!self->o)
		SKIP(return, "cannot load the BPF oracle: %s", strerror(errno));
	err = oracle_soft__attach(self->o);
	ASSERT_EQ(0, err) TH_LOG("attaching the oracle: %s", strerror(-err));
}

FIXTURE_TEARDOWN(oracle)
{
	if (self->o)
		oracle_soft__destroy(self->o);
}

/*
 * One comparison: the owner as @uid, PMC_F_DESCENDANTS if @desc, the
 * @workload (W_*).
 */
static void compare(struct __test_metadata *_metadata,
		    FIXTURE_DATA(oracle) *self, int uid, int desc, int workload)
{
	static struct oracle_task all[ORACLE_MAX_TASKS];
	struct oracle_task base;
	__u64 v[ORACLE_NEV], want[ORACLE_NEV], word;
	int down[2], up[2], status, i, n, e, ntasks, nprocs, agree = 0;
	pid_t owner, target;

	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	fflush(NULL);
	owner = fork();
	ASSERT_LE(0, owner);
	if (!owner) {
		close(down[1]);
		close(up[0]);
		_exit(owner_main(down[0], up[1], uid, desc, workload));
	}
	close(down[0]);
	close(up[1]);
	ASSERT_EQ(0, oracle_track(self->o, owner));
	word = 1;
	ASSERT_EQ(0, hwpmc_xwrite(down[1], &word, sizeof(word)));
	ASSERT_EQ(0, hwpmc_xread(up[0], &word, sizeof(word)))
		TH_LOG("the owner failed before forking the target");
	target = (pid_t)word;

	/* Wait for the target to block in read() (switched out in S). */
	for (i = 0; i < 60000; i++) {
		if (!oracle_get(self->o, target, &base) && !base.running &&
		    base.last_state == 1 && base.n[ORACLE_SWITCH])
			break;
		usleep(1000);
	}
	ASSERT_GT(60000, i) TH_LOG("the target never blocked");
	ASSERT_EQ(0, oracle_get(self->o, target, &base));

	ASSERT_EQ(0, hwpmc_xwrite(down[1], &word, sizeof(word)));	/* attach */
	i = hwpmc_xread(up[0], v, sizeof(v));
	ASSERT_EQ(owner, waitpid(owner, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("the owner failed: exit status %d (see owner_main)",
		       WEXITSTATUS(status));
	ASSERT_EQ(0, i);
	close(down[1]);
	close(up[0]);

	n = oracle_all(self->o, all);
	ASSERT_EQ(0, oracle_expect(all, n, target, desc, &base, want, &ntasks,
				   &nprocs))
		TH_LOG("the oracle lost a task (map full) or a thread had more than %d events after its exit",
		       ORACLE_NPOST);
	TH_LOG("uid %d, %s, %d threads in %d processes:", uid,
	       desc ? "descendants" : "the target only", ntasks, nprocs);
	for (e = 0; e < ORACLE_NEV; e++) {
		TH_LOG("  %-17s hwpmc %8llu  oracle %8llu%s", events[e].name,
		       (unsigned long long)v[e], (unsigned long long)want[e],
		       v[e] == want[e] ? "" : "  MISMATCH");
		agree += v[e] == want[e];
	}
	TH_LOG("agreement: %d of %d counts exact", agree, ORACLE_NEV);
	for (e = 0; e < ORACLE_NEV; e++)
		EXPECT_EQ(want[e], v[e]) TH_LOG("event %d (see the table above)", e);
	/* The comparison means something: every event happened. */
	EXPECT_LT(0, want[ORACLE_SWITCH]);
	EXPECT_LT(1000, want[ORACLE_SYSCALL]);
	EXPECT_LT(64, want[ORACLE_PF_WRITE]);
	EXPECT_LT(32, want[ORACLE_PF_READ]);
	EXPECT_EQ(want[ORACLE_PF_ALL],
		  want[ORACLE_PF_READ] + want[ORACLE_PF_WRITE]);
	if (ncpus() >= 2) {
		EXPECT_LT(0, want[ORACLE_MIGRATE]);
	}
	if (workload == W_LEADER_FIRST) {
		EXPECT_EQ(4, ntasks);
	} else {
		EXPECT_EQ(desc && workload == W_TREE ? 9 : 3, ntasks);
	}
	EXPECT_EQ(desc && workload == W_TREE ? 3 : 1, nprocs);
}

/* The target alone: threads, both CPUs, moves between them. */
TEST_F(oracle, process_root)
{
	compare(_metadata, self, 0, 0, W_PROCESS);
}

TEST_F(oracle, process_nobody)
{
	compare(_metadata, self, NOBODY, 0, W_PROCESS);
}

/* The main thread exits first; the last thread's exit ends the count. */
TEST_F(oracle, leader_exits_first_root)
{
	compare(_metadata, self, 0, 0, W_LEADER_FIRST);
}

/* With a child that execs and a grandchild, but no PMC_F_DESCENDANTS:
 * only the target's own events. */
TEST_F(oracle, tree_without_descendants_root)
{
	compare(_metadata, self, 0, 0, W_TREE);
}

/* PMC_F_DESCENDANTS: the target, its exec'd child, the grandchild, and
 * their threads. */
TEST_F(oracle, descendants_root)
{
	compare(_metadata, self, 0, 1, W_TREE);
}

TEST_F(oracle, descendants_nobody)
{
	compare(_metadata, self, NOBODY, 1, W_TREE);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], WORKER_ARG))
		return worker_main();
	return test_harness_run(argc, argv);
}
