// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc's ioctl fuzzer (issue 12), syzkaller-style: random sequences of
 * every PMC_OP_* with mutated arguments, from several processes and
 * threads at once, as root and as uid 65534, with fork/exec/exit churn,
 * descriptors closed, duplicated and passed between processes
 * (SCM_RIGHTS), children killed in the middle of their operations, CPU 1
 * taken offline and back, and logs going to pipes, sockets and files that
 * fail.  Every answer must be an errno the operation documents (ops.c);
 * an operation that runs too long is a hang; at the end every descriptor
 * is closed, every child reaped, and the module's reference count, its
 * log writer threads and (where the kernel has it) kmemleak must be back
 * to where they were, and the module must unload.
 *
 *   fuzz_test [--ops N] [--seed S] [--procs P] [--threads T]
 *             [--hang SECS] [--logwait SECS] [--seconds SECS] [--no-unload]
 *
 * --seconds stops the operations after SECS (the end checks still run).
 * --model MODEL loads the test flavor (build/<release>/test/hwpmc.ko) with
 * pmu_model=MODEL (intel, intel-nofw, amd, amd-ext, amd-legacy) and
 * kernel.hwpmc.unprivileged_hw=1, so the hardware classes, RDPMC and the
 * PMI are fuzzed too (their counters advanced by the root workers), and
 * the release module with its defaults is loaded again at the end.
 *
 * Defaults: HWPMC_FUZZ_OPS or 200000 operations, a seed from the clock
 * (HWPMC_FUZZ_SEED), 4 worker processes (2 root, 2 uid 65534) of 3
 * threads.  The seed is printed first; the operations each thread issues
 * follow from it alone (what the kernel answers also depends on how the
 * threads interleave).  On a failure the seed and the last operations of
 * the failing thread are printed.  Output is kselftest TAP (one test), so
 * selftests/run counts it; exit 0 pass, 1 fail, 4 skip.
 *
 * Layout of a run: the supervisor (this process, root) sets up the shared
 * area, a full tmpfs and the SCM_RIGHTS ring, forks the worker processes
 * and watches every thread's operation in flight (the watchdog).  Each
 * worker has a descriptor table shared by its threads, a reader thread
 * that drains the pipes and sockets its logs go to (the "stalled" ones
 * only when the watchdog asks: a log drain waiting on a reader that never
 * reads is the caller's doing, not a hang), and forks children that run a
 * few operations, exec, exit, or wait to be killed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <execinfo.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/hwpmc.h>

#include "fuzz.h"
#include "hwpmc_util.h"

#define NOBODY		65534
#define MAXPROCS	8
#define MAXTHREADS	8
#define NERR		140
#define UNSTALL_NS	500000000ULL	/* a drain waits this long: unstall */
/*
 * A log operation still waiting after logwait_secs (60, --logwait) waits
 * on a sink nobody can drain any more (its reader's process is gone, or
 * it is in flight in the SCM_RIGHTS ring): that is the caller's doing, so
 * its process is killed instead (counted and reported), and the wait must
 * end on SIGKILL within KILLED_NS.  Both well below the kernel's 120 s
 * hung-task report.  --logwait 0: no kill, such a wait is a hang.
 */
#define KILLED_NS	20000000000ULL

/* Operations that are not ioctls, recorded after the PMC_OP_* ones. */
enum {
	M_OPEN = 32, M_CLOSE, M_DUP, M_SINK, M_FORK, M_KILL, M_REAP, M_SEND,
	M_RECV, M_CPU, M_MMAP, M_TRUNC, M_BADCMD, M_ADVANCE, M_END,
};

static const char *const meta_names[] = {
	"open", "close", "dup", "sink", "fork", "kill", "reap", "sendfd",
	"recvfd", "cpu1", "mmap", "truncate", "badcmd", "advance",
};

/* Everything the processes share (MAP_SHARED). */
struct fuzz_shm {
	uint64_t seed;
	uint64_t ops_total;
	_Atomic uint64_t ops_done;
	_Atomic int stop;
	_Atomic int failed;
	_Atomic uint32_t unstall_gen;
	_Atomic uint64_t hist[PMC_OP_MAX + 1][NERR];	/* errno counts */
	_Atomic uint64_t meta[M_END - M_OPEN];
	_Atomic uint64_t busy_ns[M_END];	/* time spent per operation */
	_Atomic int print_lock;
	int nprocs, nthreads;
	pid_t procpid[MAXPROCS];
	_Atomic int killed[MAXPROCS];	/* by the watchdog: a stalled log op */
	_Atomic int reaped[MAXPROCS];	/* pid no longer ours to look at */
	_Atomic int nkilled;
	struct fuzz_slot slots[MAXPROCS * MAXTHREADS];
};

struct fuzz_proc {
	int index;
	bool root;
	pthread_mutex_t lock;		/* fds, kids, zombies */
	_Atomic uint32_t gen;		/* bumped by every close */
	struct fuzz_fd fds[FUZZ_MAXFD];
	pid_t kids[FUZZ_MAXKIDS];
	int nkids;
	pid_t dead[8];			/* reaped children: stale pids */
	int ndead;
	int zombies[FUZZ_MAXFD * 2];	/* peers for the reader to close */
	int nzombies;
	int send_sock, recv_sock;	/* the SCM_RIGHTS ring */
};

static struct fuzz_shm *shm;
static struct fuzz_proc *self;
static char workdir[64];
static char fulldir[96];
static bool have_fulltmpfs;
static int hang_secs = 300;
static int logwait_secs = 60;		/* --logwait: see KILLED_NS */
static int max_secs;			/* --seconds: stop early (0: never) */
static const char *model;		/* --model: the test flavor's PMU model */
#define MODEL_ADVANCE "/sys/kernel/debug/hwpmc-model/advance"
#define UNPRIV_HW "/proc/sys/kernel/hwpmc/unprivileged_hw"
static bool cpu1_hotplug;
static bool in_child;			/* a forked child: one thread, no reader */
static _Atomic bool drain_all;		/* the end: the reader drains every sink */

__thread int fuzz_cur_fdi = -1;

/* Per-thread special memory: unmapped, read-only and straddling pages. */
static __thread char *pg_none;		/* PROT_NONE */
static __thread char *pg_ro;		/* PROT_READ */
static __thread char *pg_edge;		/* RW page followed by pg_edge_none */
static __thread char *bigbuf;		/* embedded arrays */
#define BIGBUF	(16 * 4096)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* printf without stdio's locks (safe in forked children). */
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0 && write(STDOUT_FILENO, buf, n) < 0)
		return;
}

static const char *op_name(unsigned int op)
{
	if (op <= PMC_OP_MAX)
		return fuzz_ops[op].name;
	if (op >= M_OPEN && op < M_END)
		return meta_names[op - M_OPEN];
	return "?";
}

static void print_ring(struct fuzz_slot *s)
{
	uint64_t n = atomic_load(&s->nrec), i;
	char hex[FUZZ_ARGMAX * 2 + 1];

	say("# last %d operations of process %d (uid %d), thread %d:\n",
	    (int)(n < FUZZ_RING ? n : FUZZ_RING), (int)s->pid, (int)s->uid,
	    s->index);
	for (i = n > FUZZ_RING ? n - FUZZ_RING : 0; i < n; i++) {
		struct fuzz_rec *r = &s->ring[i % FUZZ_RING];
		unsigned int k;

		for (k = 0; k < r->argsz; k++)
			snprintf(hex + 2 * k, 3, "%02x", r->arg[k]);
		hex[2 * r->argsz] = 0;
		say("#   %6" PRIu64 " %-16s fd=%-3d cmd=%#010x ptr=%#" PRIx64
		    " -> %d%s%s arg=%s\n", r->seq, op_name(r->op), r->fd,
		    r->cmd, r->ptr, r->res, r->res < 0 ? " " : "",
		    r->res < 0 ? strerror(-r->res) : "", hex);
	}
}

/* Report a failure once, with the seed and the last operations. */
static void fuzz_fail(struct fuzz_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int z = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_store(&shm->stop, 1);
	if (atomic_exchange(&shm->failed, 1))
		return;			/* one report is enough */
	while (!atomic_compare_exchange_weak(&shm->print_lock, &z, 1))
		z = 0;
	say("# FUZZ FAILURE (seed %" PRIu64 "): %s\n", shm->seed, msg);
	if (c && c->slot)
		print_ring(c->slot);
	say("# reproduce: fuzz_test --seed %" PRIu64 " --ops %" PRIu64
	    " --procs %d --threads %d\n", shm->seed, shm->ops_total,
	    shm->nprocs, shm->nthreads);
	atomic_store(&shm->print_lock, 0);
}

static struct fuzz_rec *rec_begin(struct fuzz_ctx *c, unsigned int op, int fd)
{
	struct fuzz_slot *s = c->slot;
	struct fuzz_rec *r = &s->ring[atomic_load(&s->nrec) % FUZZ_RING];

	memset(r, 0, sizeof(*r));
	r->seq = c->seq;
	r->op = op;
	r->fd = fd;
	r->res = 0;
	atomic_store(&s->cur_op, op);
	atomic_store(&s->start_ns, now_ns());
	return r;
}

static void rec_end(struct fuzz_ctx *c, struct fuzz_rec *r, int res)
{
	uint64_t st = atomic_load(&c->slot->start_ns);

	r->res = res;
	if (st && r->op < M_END)
		atomic_fetch_add(&shm->busy_ns[r->op], now_ns() - st);
	atomic_store(&c->slot->start_ns, 0);
	atomic_fetch_add(&c->slot->nrec, 1);
}

/* --- descriptors ------------------------------------------------------- */

static int fd_add(int fd, int kind, int peer)
{
	int i;

	for (i = 0; i < FUZZ_MAXFD; i++) {
		if (self->fds[i].kind == FK_FREE) {
			memset(&self->fds[i], 0, sizeof(self->fds[i]));
			self->fds[i].fd = fd;
			self->fds[i].kind = kind;
			self->fds[i].peer = peer;
			return i;
		}
	}
	return -1;
}

/*
 * Take entry @i out of the table (lock held) and return its descriptor,
 * which the caller closes after dropping the lock: the last close of
 * /dev/hwpmc flushes its log, for up to 10 s, and the reader must not
 * wait for that.  The entry's read end or peer goes to the reader.
 */
static int fd_take(int i)
{
	struct fuzz_fd *f = &self->fds[i];
	int fd = f->fd;

	if (f->kind == FK_FREE)
		return -1;
	atomic_fetch_add(&self->gen, 1);
	if (f->peer >= 0 && !in_child)
		self->zombies[self->nzombies++] = f->peer;
	else if (f->peer >= 0)
		close(f->peer);
	f->kind = FK_FREE;
	f->peer = -1;
	return fd;
}

/* A random entry of kind @kind (-1: any), or -1.  Lock held. */
static int fd_pick(struct fuzz_ctx *c, int kind)
{
	int i, n = 0, pick[FUZZ_MAXFD];

	for (i = 0; i < FUZZ_MAXFD; i++)
		if (self->fds[i].kind != FK_FREE &&
		    (kind < 0 || self->fds[i].kind == kind))
			pick[n++] = i;
	return n ? pick[rnd(&c->rng, n)] : -1;
}

/* --- the helpers of ops.c ---------------------------------------------- */

int32_t fuzz_pick_pid(struct fuzz_ctx *c)
{
	int32_t pid = 0;

	pthread_mutex_lock(&self->lock);
	switch (rnd(&c->rng, 12)) {
	case 0:
	case 1:
	case 2:
		pid = PMC_PID_SELF;
		break;
	case 3:
		pid = getpid();
		break;
	case 4:
	case 5:
	case 6:
		pid = self->nkids ? self->kids[rnd(&c->rng, self->nkids)] : 0;
		break;
	case 7:
		pid = self->ndead ? self->dead[rnd(&c->rng, self->ndead)] : -1;
		break;
	case 8:		/* another worker: root's, nobody's */
		pid = shm->procpid[rnd(&c->rng, shm->nprocs)];
		break;
	case 9:
		pid = one_in(&c->rng, 2) ? 1 : getppid();
		break;
	case 10:
		pid = -(int32_t)rnd(&c->rng, 3) - 1;
		break;
	default:
		pid = one_in(&c->rng, 2) ? 0x7fffffff :
		      (int32_t)rng_next(&c->rng);
	}
	pthread_mutex_unlock(&self->lock);
	return pid;
}

uint32_t fuzz_pick_id(struct fuzz_ctx *c, int fdi)
{
	struct fuzz_fd *f = fdi >= 0 ? &self->fds[fdi] : NULL;

	switch (rnd(&c->rng, 10)) {
	case 0:
		return (uint32_t)rng_next(&c->rng);
	case 1:
		return one_in(&c->rng, 2) ? 0 : 0x80000000U;
	case 2:
	case 3:
	case 4:
		if (f && f->nids)
			return f->ids[rnd(&c->rng, f->nids)];
		/* fall through */
	default:
		return 1 + rnd(&c->rng, 6);
	}
}

uint32_t fuzz_pick_cpu(struct fuzz_ctx *c)
{
	switch (rnd(&c->rng, 10)) {
	case 0:
		return PMC_CPU_ANY;
	case 1:
		return 2 + rnd(&c->rng, 4);
	case 2:
		return (uint32_t)rng_next(&c->rng);
	case 3:
	case 4:
	case 5:
		return 1;
	default:
		return 0;
	}
}

int32_t fuzz_pick_logfd(struct fuzz_ctx *c)
{
	int i, fd;

	switch (rnd(&c->rng, 12)) {
	case 0:
		return -1;
	case 1:
		return one_in(&c->rng, 2) ? -2 : (int32_t)rng_next(&c->rng);
	case 2:
		return 900 + rnd(&c->rng, 100);		/* not open */
	case 3:		/* any descriptor: /dev/hwpmc, a read end... */
		pthread_mutex_lock(&self->lock);
		i = fd_pick(c, -1);
		fd = i < 0 ? -1 : one_in(&c->rng, 3) && self->fds[i].peer >= 0 ?
		     self->fds[i].peer : self->fds[i].fd;
		pthread_mutex_unlock(&self->lock);
		return fd;
	default:	/* a sink */
		pthread_mutex_lock(&self->lock);
		i = fd_pick(c, FK_FILE + rnd(&c->rng, FK_NKINDS - FK_FILE));
		if (i < 0)
			i = fd_pick(c, -1);
		fd = i < 0 ? -1 : self->fds[i].fd;
		pthread_mutex_unlock(&self->lock);
		return fd;
	}
}

uint64_t fuzz_pick_uptr(struct fuzz_ctx *c, size_t size)
{
	switch (rnd(&c->rng, 16)) {
	case 0:
		return (uintptr_t)pg_none;
	case 1:
		return (uintptr_t)pg_ro;
	case 2:		/* runs into an unmapped page */
		return (uintptr_t)pg_edge + 4096 - 64;
	case 3:
		return 0xffff888000000000ULL + rnd(&c->rng, 4096);
	case 4:
		return (uintptr_t)bigbuf + 1 + rnd(&c->rng, 7);	/* unaligned */
	default:
		return (uintptr_t)bigbuf + BIGBUF - (size < BIGBUF ? size : BIGBUF);
	}
}

void fuzz_reserved(struct fuzz_ctx *c, void *p, size_t n)
{
	if (n && one_in(&c->rng, 25))
		((uint8_t *)p)[rnd(&c->rng, n)] = 1 + rnd(&c->rng, 255);
}

void fuzz_note_id(struct fuzz_ctx *c, int fdi, uint32_t id)
{
	struct fuzz_fd *f;

	if (fdi < 0)
		return;
	pthread_mutex_lock(&self->lock);
	f = &self->fds[fdi];
	if (f->kind == FK_HWPMC) {
		if (f->nids < FUZZ_MAXIDS)
			f->ids[f->nids++] = id;
		else
			f->ids[rnd(&c->rng, FUZZ_MAXIDS)] = id;
	}
	pthread_mutex_unlock(&self->lock);
}

/* --- the ioctls -------------------------------------------------------- */

static unsigned int pick_ioctl(struct fuzz_ctx *c)
{
	/* Weights: the PMC life cycle more often than the queries. */
	static const uint8_t w[PMC_OP_MAX + 1] = {
		[PMC_OP_CONFIGURELOG] = 4, [PMC_OP_FLUSHLOG] = 2,
		[PMC_OP_GETCPUINFO] = 1, [PMC_OP_GETDRIVERSTATS] = 1,
		[PMC_OP_GETMODULEVERSION] = 1, [PMC_OP_GETPMCINFO] = 3,
		[PMC_OP_PMCADMIN] = 2, [PMC_OP_PMCALLOCATE] = 14,
		[PMC_OP_PMCATTACH] = 8, [PMC_OP_PMCDETACH] = 4,
		[PMC_OP_PMCGETMSR] = 2, [PMC_OP_PMCRELEASE] = 6,
		[PMC_OP_PMCRW] = 8, [PMC_OP_PMCSETCOUNT] = 4,
		[PMC_OP_PMCSTART] = 10, [PMC_OP_PMCSTOP] = 6,
		[PMC_OP_WRITELOG] = 4, [PMC_OP_CLOSELOG] = 1,
		[PMC_OP_GETDYNEVENTINFO] = 2, [PMC_OP_GETCAPS] = 3,
		[PMC_OP_GETREADSLOT] = 2,
	};
	unsigned int total = 0, i, r;

	for (i = 0; i <= PMC_OP_MAX; i++)
		total += w[i];
	r = rnd(&c->rng, total);
	for (i = 0; i <= PMC_OP_MAX; i++) {
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return 0;
}

/* Put the argument at @where: true if the kernel can read and write it. */
static void *place_arg(struct fuzz_ctx *c, struct fuzz_arg *a, size_t size)
{
	unsigned int k = rnd(&c->rng, 64);

	if (!size || k > 5)
		return a->buf.bytes;
	switch (k) {
	case 0:
		a->bad_ptr = true;
		return NULL;
	case 1:
		a->bad_ptr = true;
		return pg_none;
	case 2:
		a->bad_ptr = true;
		return (void *)(uintptr_t)0xffff888000001000ULL;
	case 3:		/* the struct's tail runs into an unmapped page */
		a->bad_ptr = true;
		memcpy(pg_edge + 4096 - size / 2, a->buf.bytes, size / 2);
		return pg_edge + 4096 - size / 2;
	default:	/* read-only */
		if (mprotect(pg_ro, 4096, PROT_READ | PROT_WRITE))
			return a->buf.bytes;
		memcpy(pg_ro, a->buf.bytes, size);
		mprotect(pg_ro, 4096, PROT_READ);
		a->ro_ptr = true;
		return pg_ro;
	}
}

static void do_open(struct fuzz_ctx *c);

static void do_ioctl(struct fuzz_ctx *c, unsigned int opi)
{
	const struct fuzz_op *op = &fuzz_ops[opi];
	struct fuzz_arg a;
	struct fuzz_rec *r;
	int fdi, fd = -1, kind = FK_FREE, err;
	uint32_t gen;
	const char *msg;
	long ret;

	memset(&a, 0, sizeof(a));
	pthread_mutex_lock(&self->lock);
	fdi = one_in(&c->rng, 20) ? fd_pick(c, -1) : fd_pick(c, FK_HWPMC);
	if (fdi >= 0) {
		fd = self->fds[fdi].fd;
		kind = self->fds[fdi].kind;
	}
	gen = atomic_load(&self->gen);
	pthread_mutex_unlock(&self->lock);
	if (fdi < 0 && !one_in(&c->rng, 50)) {
		do_open(c);			/* nothing open: open first */
		return;
	}
	fuzz_cur_fdi = kind == FK_HWPMC ? fdi : -1;
	if (op->gen)
		op->gen(c, a.buf.bytes);
	a.cmd = op->cmd;
	a.ptr = place_arg(c, &a, op->size);

	r = rec_begin(c, opi, fd);
	r->cmd = (uint32_t)a.cmd;
	r->ptr = (uintptr_t)a.ptr;
	r->argsz = op->size < FUZZ_ARGMAX ? op->size : FUZZ_ARGMAX;
	memcpy(r->arg, a.buf.bytes, r->argsz);
	ret = ioctl(fd, a.cmd, a.ptr);
	err = ret < 0 ? errno : 0;
	rec_end(c, r, -err);
	atomic_fetch_add(&shm->hist[opi][err < NERR ? err : NERR - 1], 1);

	if (kind != FK_HWPMC)
		return;		/* another file's ioctl: not ours to judge */
	if (atomic_load(&self->gen) != gen && (err == EBADF || err == ENOTTY))
		return;		/* closed (and reused) meanwhile */
	if (err && !fuzz_errno_ok(op, err)) {
		fuzz_fail(c, "%s answered %s (%d), which it does not document",
			  op->name, strerror(err), err);
		return;
	}
	if (err)
		return;
	if (a.bad_ptr && op->size)
		fuzz_fail(c, "%s succeeded with an invalid argument pointer %p",
			  op->name, a.ptr);
	else if (a.ro_ptr && (_IOC_DIR(a.cmd) & _IOC_READ))
		fuzz_fail(c, "%s succeeded writing its result to read-only memory",
			  op->name);
	else if (op->check && (msg = op->check(c, a.ptr, fuzz_cur_fdi)))
		fuzz_fail(c, "%s", msg);
}

/* An ioctl number that is not hwpmc's: ENOTTY, always. */
static void do_badcmd(struct fuzz_ctx *c)
{
	const struct fuzz_op *op = &fuzz_ops[rnd(&c->rng, fuzz_nops)];
	unsigned long cmd = op->cmd;
	struct fuzz_rec *r;
	unsigned int i;
	int fdi, fd, err;
	uint32_t gen;

	switch (rnd(&c->rng, 5)) {
	case 0:
		cmd ^= (unsigned long)(1 + rnd(&c->rng, 255)) << _IOC_SIZESHIFT;
		break;
	case 1:
		cmd = _IOC(rnd(&c->rng, 4), HWPMC_IOC_MAGIC,
			   PMC_OP_MAX + 1 + rnd(&c->rng, 200), _IOC_SIZE(cmd));
		break;
	case 2:
		cmd ^= (unsigned long)(1 + rnd(&c->rng, 3)) << _IOC_DIRSHIFT;
		break;
	case 3:
		cmd ^= (unsigned long)(1 + rnd(&c->rng, 255)) << _IOC_TYPESHIFT;
		break;
	default:
		cmd = (uint32_t)rng_next(&c->rng);
	}
	for (i = 0; i < fuzz_nops; i++)
		if (fuzz_ops[i].cmd == cmd)
			return;		/* a real one by chance */
	pthread_mutex_lock(&self->lock);
	fdi = fd_pick(c, FK_HWPMC);
	fd = fdi >= 0 ? self->fds[fdi].fd : -1;
	gen = atomic_load(&self->gen);
	pthread_mutex_unlock(&self->lock);
	if (fdi < 0)
		return;
	r = rec_begin(c, M_BADCMD, fd);
	r->cmd = (uint32_t)cmd;
	err = ioctl(fd, cmd, bigbuf) < 0 ? errno : 0;
	rec_end(c, r, -err);
	if (err != ENOTTY && !(atomic_load(&self->gen) != gen && err == EBADF))
		fuzz_fail(c, "ioctl %#lx (not hwpmc's) answered %d, not ENOTTY",
			  cmd, err);
}

/* --- the other operations ---------------------------------------------- */

static void meta_count(unsigned int m)
{
	atomic_fetch_add(&shm->meta[m - M_OPEN], 1);
}

static void do_open(struct fuzz_ctx *c)
{
	struct fuzz_rec *r = rec_begin(c, M_OPEN, -1);
	int fd = open(HWPMC_DEV, O_RDWR | (one_in(&c->rng, 2) ? O_CLOEXEC : 0));
	int err = fd < 0 ? errno : 0;

	rec_end(c, r, fd < 0 ? -err : fd);
	if (fd < 0) {
		/* EMFILE: kernel.hwpmc.max_owners_per_user or RLIMIT_NOFILE. */
		if (err != EMFILE && err != ENFILE && err != ENOMEM && err != EINTR)
			fuzz_fail(c, "open(%s) answered %s", HWPMC_DEV,
				  strerror(err));
		return;
	}
	pthread_mutex_lock(&self->lock);
	if (fd_add(fd, FK_HWPMC, -1) < 0)
		close(fd);
	pthread_mutex_unlock(&self->lock);
}

static void do_close(struct fuzz_ctx *c)
{
	struct fuzz_rec *r;
	int i, fd = -1;

	pthread_mutex_lock(&self->lock);
	i = fd_pick(c, one_in(&c->rng, 2) ? FK_HWPMC : -1);
	if (i >= 0)
		fd = fd_take(i);
	pthread_mutex_unlock(&self->lock);
	if (fd < 0)
		return;
	r = rec_begin(c, M_CLOSE, fd);
	close(fd);
	rec_end(c, r, 0);
}

static void do_dup(struct fuzz_ctx *c)
{
	int i, fd;

	pthread_mutex_lock(&self->lock);
	i = fd_pick(c, FK_HWPMC);
	if (i >= 0) {
		fd = fcntl(self->fds[i].fd, F_DUPFD_CLOEXEC, 3);
		if (fd >= 0 && fd_add(fd, FK_HWPMC, -1) < 0)
			close(fd);
	}
	pthread_mutex_unlock(&self->lock);
}

/* A log sink of a random kind (lock not held). */
static void do_sink(struct fuzz_ctx *c)
{
	int kind = FK_FILE + rnd(&c->rng, FK_NKINDS - FK_FILE);
	int fd = -1, peer = -1, p[2];
	char path[160];

	switch (kind) {
	case FK_FILE:
	case FK_RDONLY:
		snprintf(path, sizeof(path), "%s/log.%d.%" PRIu64, workdir,
			 (int)getpid(), c->seq);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0 && kind == FK_RDONLY) {
			close(fd);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		unlink(path);
		break;
	case FK_FULL:
		if (have_fulltmpfs) {
			snprintf(path, sizeof(path), "%s/f.%d.%" PRIu64, fulldir,
				 (int)getpid(), c->seq);
			fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			unlink(path);
		}
		if (fd < 0)
			fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
		break;
	case FK_PIPE:
	case FK_PIPE_STALLED:
		if (pipe2(p, O_CLOEXEC))
			return;
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		if (one_in(&c->rng, 4))
			fcntl(p[1], F_SETFL, O_NONBLOCK);
		fd = p[1];
		peer = p[0];
		break;
	case FK_SOCK:
	case FK_SOCK_STALLED:
	case FK_SOCK_CLOSED:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
			return;
		fcntl(p[1], F_SETFL, O_NONBLOCK);
		fd = p[0];
		peer = p[1];
		if (kind == FK_SOCK_CLOSED) {
			close(peer);
			peer = -1;
		}
		break;
	default:
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		if (peer >= 0)
			close(peer);
		return;
	}
	pthread_mutex_lock(&self->lock);
	if (fd_add(fd, kind, peer) < 0) {
		close(fd);
		if (peer >= 0)
			close(peer);
	}
	pthread_mutex_unlock(&self->lock);
}

static void reap(struct fuzz_ctx *c)
{
	pid_t pid;
	int st, i;

	while ((pid = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		pthread_mutex_lock(&self->lock);
		for (i = 0; i < self->nkids; i++) {
			if (self->kids[i] == pid) {
				self->kids[i] = self->kids[--self->nkids];
				break;
			}
		}
		self->dead[self->ndead++ % 8] = pid;
		if (self->ndead > 8)
			self->ndead = 8;
		pthread_mutex_unlock(&self->lock);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 1 && c)
			fuzz_fail(NULL, "child %d of process %d failed", pid,
				  (int)getpid());
	}
}

static void do_kill(struct fuzz_ctx *c)
{
	pid_t pid = 0;

	pthread_mutex_lock(&self->lock);
	if (self->nkids)
		pid = self->kids[rnd(&c->rng, self->nkids)];
	pthread_mutex_unlock(&self->lock);
	if (pid > 0)
		kill(pid, SIGKILL);
}

static void one_op(struct fuzz_ctx *c);

/* A child: a few operations, an exec, an exit, or a wait to be killed. */
static void child_main(struct fuzz_ctx *c)
{
	static struct fuzz_slot slot;	/* its own, unwatched */
	unsigned int n, mode = rnd(&c->rng, 8);

	in_child = true;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	slot = *c->slot;
	atomic_store(&slot.start_ns, 0);
	slot.pid = getpid();
	c->slot = &slot;
	self->nkids = 0;
	alarm(30);			/* a child never outlives a stall */
	switch (mode) {
	case 0:
		_exit(0);
	case 1:
		execl("/bin/true", "true", (char *)NULL);
		_exit(0);
	case 2:
		pause();
		_exit(0);
	default:
		for (n = 1 + rnd(&c->rng, 30); n && !atomic_load(&shm->stop); n--)
			one_op(c);
		if (one_in(&c->rng, 3))
			execl("/bin/true", "true", (char *)NULL);
		_exit(atomic_load(&shm->failed) ? 1 : 0);
	}
}

static void do_fork(struct fuzz_ctx *c)
{
	struct fuzz_rec *r;
	pid_t pid;

	if (c->child)
		return;
	reap(c);
	pthread_mutex_lock(&self->lock);
	if (self->nkids >= FUZZ_MAXKIDS) {
		pthread_mutex_unlock(&self->lock);
		do_kill(c);
		return;
	}
	r = rec_begin(c, M_FORK, -1);
	pid = fork();
	if (pid == 0) {
		pthread_mutex_unlock(&self->lock);
		rec_end(c, r, 0);
		c->child = true;
		c->rng.s ^= 0x5851f42d4c957f2dULL;
		child_main(c);
	}
	if (pid > 0)
		self->kids[self->nkids++] = pid;
	pthread_mutex_unlock(&self->lock);
	rec_end(c, r, pid);
}

static void do_send(struct fuzz_ctx *c)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b = 'f';
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	int i, fd = -1;

	pthread_mutex_lock(&self->lock);
	i = fd_pick(c, FK_HWPMC);
	if (i >= 0) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &self->fds[i].fd, sizeof(int));
		sendmsg(self->send_sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (one_in(&c->rng, 2))
			fd = fd_take(i);	/* passed on, not kept */
	}
	pthread_mutex_unlock(&self->lock);
	if (fd >= 0)
		close(fd);
}

static void do_recv(struct fuzz_ctx *c)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)], b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(self->recv_sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
		return;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		pthread_mutex_lock(&self->lock);
		if (fd_add(fd, FK_HWPMC, -1) < 0)
			close(fd);
		pthread_mutex_unlock(&self->lock);
	}
}

/* CPU 1 offline and back (root, worker 0 only). */
static void do_cpu(struct fuzz_ctx *c)
{
	static pthread_mutex_t cpu_lock = PTHREAD_MUTEX_INITIALIZER;
	struct fuzz_rec *r;
	int fd, res;

	if (!cpu1_hotplug || self->index != 0 || c->child)
		return;
	pthread_mutex_lock(&cpu_lock);
	fd = open("/sys/devices/system/cpu/cpu1/online", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		r = rec_begin(c, M_CPU, fd);
		res = write(fd, "0", 1) == 1;
		if (res)
			usleep(1000 * rnd(&c->rng, 50));
		res = write(fd, "1", 1) == 1 ? 1 : -errno;
		rec_end(c, r, res);
		close(fd);
		if (res < 0)
			fuzz_fail(c, "CPU 1 did not come back online: %s",
				  strerror(-res));
	}
	pthread_mutex_unlock(&cpu_lock);
}

/* Executable mappings come and go (MAP_IN/MAP_OUT for samplers). */
static void do_mmap(struct fuzz_ctx *c)
{
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	void *p;
	char *q;

	if (fd < 0)
		return;
	p = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	q = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q != MAP_FAILED) {		/* page faults for SOFT */
		for (fd = 0; fd < 65536; fd += 4096)
			q[fd] = 1;
		munmap(q, 65536);
	}
	if (p != MAP_FAILED)
		munmap(p, 8192);
}

/* The PMU model's counters advance on this CPU (root, --model). */
static void do_advance(struct fuzz_ctx *c)
{
	char buf[64];
	int fd, len;

	if (!model || !c->root)
		return;
	fd = open(MODEL_ADVANCE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%s %llu", one_in(&c->rng, 3) ? "os" : "usr",
		       one_in(&c->rng, 20) ? (1ULL << 47) - 1 :
		       (unsigned long long)rnd(&c->rng, 1000000) + 1);
	if (write(fd, buf, len) < 0)
		len = 0;
	close(fd);
}

/* Keep the log files in /tmp from growing without bound. */
static void do_trunc(struct fuzz_ctx *c)
{
	int i;

	pthread_mutex_lock(&self->lock);
	i = fd_pick(c, FK_FILE);
	if (i >= 0 && ftruncate(self->fds[i].fd, 0))
		i = -1;
	pthread_mutex_unlock(&self->lock);
}

/*
 * One operation: 84% ioctls, the rest churn.  Per 10,000: the weights
 * below; CPU 1 hotplug is rarest (it takes a good part of a second in an
 * emulated guest).
 */
static void one_op(struct fuzz_ctx *c)
{
	unsigned int k = rnd(&c->rng, 10000);

	c->seq++;
	if (k < 8400) {
		do_ioctl(c, pick_ioctl(c));
		return;
	}
	k -= 8400;
	if (k < 250) {
		do_open(c);
		meta_count(M_OPEN);
	} else if (k < 450) {
		do_close(c);
		meta_count(M_CLOSE);
	} else if (k < 500) {
		do_dup(c);
		meta_count(M_DUP);
	} else if (k < 750) {
		do_sink(c);
		meta_count(M_SINK);
	} else if (k < 800) {
		do_fork(c);
		meta_count(M_FORK);
	} else if (k < 850) {
		do_kill(c);
		meta_count(M_KILL);
	} else if (k < 950) {
		reap(c);
		meta_count(M_REAP);
	} else if (k < 1100) {
		do_send(c);
		meta_count(M_SEND);
	} else if (k < 1250) {
		do_recv(c);
		meta_count(M_RECV);
	} else if (k < 1251) {
		if (one_in(&c->rng, 2)) {
			do_cpu(c);
			meta_count(M_CPU);
		}
	} else if (k < 1350) {
		do_mmap(c);
		meta_count(M_MMAP);
	} else if (k < 1400) {
		do_trunc(c);
		meta_count(M_TRUNC);
	} else if (k < 1450 && model) {
		do_advance(c);
		meta_count(M_ADVANCE);
	} else {
		do_badcmd(c);
		meta_count(M_BADCMD);
	}
}

/* --- threads and processes --------------------------------------------- */

static void thread_memory(void)
{
	char *p = mmap(NULL, 4 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		abort();
	pg_none = p;
	pg_ro = p + 4096;
	pg_edge = p + 2 * 4096;		/* followed by p + 3 pages: none */
	mprotect(pg_ro, 4096, PROT_READ);
	mprotect(pg_edge, 4096, PROT_READ | PROT_WRITE);
	bigbuf = mmap(NULL, BIGBUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bigbuf == MAP_FAILED)
		abort();
}

struct thread_arg {
	struct fuzz_ctx ctx;
	pthread_t tid;
};

static void *worker_thread(void *p)
{
	struct fuzz_ctx *c = &((struct thread_arg *)p)->ctx;

	thread_memory();
	while (!atomic_load(&shm->stop)) {
		if (atomic_fetch_add(&shm->ops_done, 1) >= shm->ops_total)
			break;
		one_op(c);
	}
	return NULL;
}

/*
 * The reader: drains the pipes and sockets the logs write to, the stalled
 * ones only for a while after the watchdog asked (a drain has waited on
 * them), and closes the read ends of closed sinks.
 */
static void *reader_thread(void *unused)
{
	static char buf[65536];
	struct pollfd pfd[FUZZ_MAXFD];
	uint32_t seen = atomic_load(&shm->unstall_gen);
	uint64_t unstall_until = 0;
	int i, n;

	for (;;) {
		if (atomic_load(&shm->unstall_gen) != seen) {
			seen = atomic_load(&shm->unstall_gen);
			unstall_until = now_ns() + 1000000000ULL;
		}
		pthread_mutex_lock(&self->lock);
		for (i = 0; i < self->nzombies; i++)
			close(self->zombies[i]);
		self->nzombies = 0;
		for (i = n = 0; i < FUZZ_MAXFD; i++) {
			struct fuzz_fd *f = &self->fds[i];
			bool stalled = f->kind == FK_PIPE_STALLED ||
				       f->kind == FK_SOCK_STALLED;

			if (f->kind == FK_FREE || f->peer < 0)
				continue;
			if (stalled && now_ns() > unstall_until &&
			    !atomic_load(&drain_all))
				continue;
			pfd[n].fd = f->peer;
			pfd[n].events = POLLIN;
			n++;
		}
		pthread_mutex_unlock(&self->lock);
		if (poll(pfd, n, 20) <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				while (read(pfd[i].fd, buf, sizeof(buf)) > 0)
					;
	}
	return NULL;
}

static void drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		say("# cannot become uid %d: %s\n", NOBODY, strerror(errno));
		exit(1);
	}
	/* Dumpable, as a process that never changed uid: peers may attach. */
	prctl(PR_SET_DUMPABLE, 1);
}

/* A fuzzer bug, not the kernel's: say where, for the report. */
static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *u = uc;
	void *bt[32];
	int n = backtrace(bt, 32);

	say("# fuzz_test process %d: signal %d at %p, ip %#llx, sp %#llx\n",
	    (int)getpid(), sig, si->si_addr,
	    (unsigned long long)u->uc_mcontext.gregs[REG_RIP],
	    (unsigned long long)u->uc_mcontext.gregs[REG_RSP]);
	backtrace_symbols_fd(bt, n, STDOUT_FILENO);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int worker_main(int index, bool root, int socks[][2])
{
	struct thread_arg ta[MAXTHREADS];
	pthread_t reader;
	int i, t, st, failed_kids = 0;
	uint64_t deadline;
	pid_t pid;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	{
		struct sigaction sa = { .sa_sigaction = crash_handler,
					.sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGABRT, &sa, NULL);
	}
	self = calloc(1, sizeof(*self));
	self->index = index;
	self->root = root;
	pthread_mutex_init(&self->lock, NULL);
	for (i = 0; i < FUZZ_MAXFD; i++)
		self->fds[i].peer = -1;
	/* The ring: send to the next worker, receive from the previous. */
	self->send_sock = socks[(index + 1) % shm->nprocs][0];
	self->recv_sock = socks[index][1];
	for (i = 0; i < shm->nprocs; i++) {
		if (socks[i][0] != self->send_sock)
			close(socks[i][0]);
		if (socks[i][1] != self->recv_sock)
			close(socks[i][1]);
	}
	if (!root)
		drop_privileges();
	pthread_create(&reader, NULL, reader_thread, NULL);
	for (t = 0; t < shm->nthreads; t++) {
		struct fuzz_slot *s = &shm->slots[index * shm->nthreads + t];
		struct fuzz_ctx *c = &ta[t].ctx;

		s->pid = getpid();
		s->uid = getuid();
		s->index = t;
		memset(c, 0, sizeof(*c));
		c->rng.s = shm->seed ^ (0x9e3779b97f4a7c15ULL * (index * 64 + t + 1));
		rng_next(&c->rng);
		c->proc = self;
		c->slot = s;
		c->root = root;
		pthread_create(&ta[t].tid, NULL, worker_thread, &ta[t]);
	}
	for (t = 0; t < shm->nthreads; t++)
		pthread_join(ta[t].tid, NULL);

	/* The end: children killed and reaped, every descriptor closed. */
	pthread_mutex_lock(&self->lock);
	for (i = 0; i < self->nkids; i++)
		kill(self->kids[i], SIGKILL);
	pthread_mutex_unlock(&self->lock);
	deadline = now_ns() + 60ULL * 1000000000ULL;
	while ((pid = waitpid(-1, &st, __WALL | WNOHANG)) >= 0) {
		if (pid > 0) {
			if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
				failed_kids++;
			continue;
		}
		if (now_ns() > deadline) {
			fuzz_fail(NULL, "process %d: a child killed 60 s ago is not gone",
				  (int)getpid());
			break;
		}
		usleep(10000);
	}
	if (failed_kids)
		fuzz_fail(NULL, "%d children of process %d failed", failed_kids,
			  (int)getpid());
	/* Logs drain into the stalled sinks too, or see them closed. */
	atomic_store(&drain_all, true);
	for (i = 0; i < FUZZ_MAXFD; i++) {
		int fd;

		pthread_mutex_lock(&self->lock);
		fd = fd_take(i);
		pthread_mutex_unlock(&self->lock);
		if (fd >= 0)
			close(fd);
	}
	close(self->send_sock);
	close(self->recv_sock);
	/* The reader closes the last read ends, then stops. */
	while (1) {
		pthread_mutex_lock(&self->lock);
		i = self->nzombies;
		pthread_mutex_unlock(&self->lock);
		if (!i)
			break;
		usleep(10000);
	}
	pthread_cancel(reader);
	pthread_join(reader, NULL);
	return atomic_load(&shm->failed) ? 1 : 0;
}

/* --- the supervisor ---------------------------------------------------- */

static long read_long(const char *path)
{
	char buf[64];
	long v = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		v = strtol(buf, NULL, 10);
	}
	return v;
}

/* Kernel threads of the log writer pool (hwpmc-logw/N). */
static int count_log_writers(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[64];
	int n = 0, fd;
	ssize_t len;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (len > 0) {
			comm[len] = 0;
			n += !strncmp(comm, "hwpmc-logw", 10);
		}
	}
	closedir(d);
	return n;
}

/* Does @op wait for its log to drain (into a sink the caller drains)? */
static bool is_log_wait(uint32_t op)
{
	return op == PMC_OP_FLUSHLOG || op == PMC_OP_CLOSELOG ||
	       op == PMC_OP_CONFIGURELOG;
}

/* The state letter of process @pid, '?' when it is gone. */
static char proc_state(pid_t pid)
{
	return hwpmc_thread_state(pid, pid);
}

static void kill_all_workers(void)
{
	int i;

	for (i = 0; i < shm->nprocs; i++)
		kill(shm->procpid[i], SIGKILL);
}

/*
 * Watch every thread's operation in flight: every UNSTALL_NS that one
 * waits, the stalled sinks get drained for a while (a log drain waits on
 * them by design); a log operation past LOGWAIT_NS has its process killed,
 * which must end it; anything past hang_secs is a hang.
 */
static void *watchdog(void *unused)
{
	uint64_t unstalled[MAXPROCS * MAXTHREADS] = { 0 };
	uint64_t killed_at[MAXPROCS] = { 0 };
	uint64_t t0 = now_ns(), last = t0;
	int i, n = shm->nprocs * shm->nthreads;

	while (atomic_load(&shm->stop) != 2) {
		uint64_t now = now_ns();

		if (now - last >= 60000000000ULL) {
			uint64_t done = atomic_load(&shm->ops_done);

			last = now;
			say("# progress: %" PRIu64 " operations in %.0f s (%.0f/s)\n",
			    done, (now - t0) / 1e9, done / ((now - t0) / 1e9));
		}
		if (max_secs && now - t0 >= (uint64_t)max_secs * 1000000000ULL &&
		    !atomic_load(&shm->stop)) {
			say("# --seconds %d: stopping after %" PRIu64 " operations\n",
			    max_secs, (uint64_t)atomic_load(&shm->ops_done));
			atomic_store(&shm->stop, 1);
		}

		for (i = 0; i < shm->nprocs; i++) {
			if (!killed_at[i] || atomic_load(&shm->reaped[i]) ||
			    proc_state(shm->procpid[i]) == 'Z' ||
			    proc_state(shm->procpid[i]) == '?')
				continue;
			if (now - killed_at[i] > KILLED_NS) {
				fuzz_fail(NULL, "hang: process %d, killed %llu s ago while a log operation waited, is still there (state %c): the wait is not killable",
					  (int)shm->procpid[i],
					  (unsigned long long)(KILLED_NS / 1000000000ULL),
					  proc_state(shm->procpid[i]));
				kill_all_workers();
				return NULL;
			}
		}

		for (i = 0; i < n; i++) {
			struct fuzz_slot *s = &shm->slots[i];
			uint64_t st = atomic_load(&s->start_ns);
			int proc = i / shm->nthreads;
			uint32_t op;

			if (!st || now < st || killed_at[proc])
				continue;
			if (now - st > UNSTALL_NS &&
			    now - unstalled[i] > UNSTALL_NS) {
				unstalled[i] = now;
				atomic_fetch_add(&shm->unstall_gen, 1);
			}
			op = atomic_load(&s->cur_op);
			if (logwait_secs && is_log_wait(op) &&
			    now - st > (uint64_t)logwait_secs * 1000000000ULL) {
				say("# watchdog: %s of process %d has waited %llu s for its log to drain (a sink nobody can drain, or a lost wakeup): SIGKILL to the process\n",
				    op_name(op), (int)s->pid,
				    (unsigned long long)((now - st) / 1000000000ULL));
				atomic_fetch_add(&shm->nkilled, 1);
				atomic_store(&shm->killed[proc], 1);
				killed_at[proc] = now;
				kill(shm->procpid[proc], SIGKILL);
				continue;
			}
			if (now - st > (uint64_t)hang_secs * 1000000000ULL) {
				struct fuzz_ctx c = { .slot = s };

				fuzz_fail(&c, "hang: %s of process %d has run for more than %d s",
					  op_name(op), (int)s->pid, hang_secs);
				kill_all_workers();
				return NULL;
			}
		}
		usleep(100000);
	}
	return NULL;
}

static int cpu1_set_online(int on)
{
	int fd = open("/sys/devices/system/cpu/cpu1/online", O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (read_long("/sys/devices/system/cpu/cpu1/online") != on &&
	    write(fd, on ? "1" : "0", 1) != 1)
		err = errno;
	close(fd);
	return err;
}

/* Every row enabled again on every CPU (PMCADMIN of the root workers). */
static void rows_enable(void)
{
	struct pmc_op_getcpuinfo ci;
	struct pmc_op_pmcadmin a;
	unsigned int cpu, row;
	int fd = open(HWPMC_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	memset(&ci, 0, sizeof(ci));
	if (!ioctl(fd, HWPMC_IOC_GETCPUINFO, &ci)) {
		for (cpu = 0; cpu < ci.pm_ncpu; cpu++) {
			for (row = 0; row < ci.pm_npmc; row++) {
				memset(&a, 0, sizeof(a));
				a.pm_cpu = cpu;
				a.pm_pmcid = row;
				a.pm_state = PMC_STATE_FREE;
				ioctl(fd, HWPMC_IOC_PMCADMIN, &a);
			}
		}
	}
	close(fd);
}

/* kmemleak's reports that name hwpmc (-1: no kmemleak here). */
static int kmemleak_hwpmc(void)
{
	static char buf[1 << 20];
	const char *path = "/sys/kernel/debug/kmemleak";
	int fd = open(path, O_RDWR | O_CLOEXEC), n = 0;
	ssize_t len, total = 0;
	char *p;

	if (fd < 0)
		return -1;
	if (write(fd, "scan", 4) != 4) {
		close(fd);
		return -1;
	}
	close(fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (total < (ssize_t)sizeof(buf) - 1 &&
	       (len = read(fd, buf + total, sizeof(buf) - 1 - total)) > 0)
		total += len;
	close(fd);
	buf[total] = 0;
	for (p = buf; (p = strstr(p, "unreferenced object")); p++) {
		char *end = strstr(p + 1, "unreferenced object");

		if (end)
			*end = 0;
		if (strstr(p, "hwpmc")) {
			n++;
			say("# kmemleak: %.400s\n", p);
		}
		if (end)
			*end = 'u';
	}
	return n;
}

/*
 * The kernel log since @fd was opened (/dev/kmsg, at its end): lines of
 * warning level or worse are printed; those that name hwpmc or one of
 * its threads fail the run (vm-run fails on every WARNING, BUG or oops
 * itself; this catches the quieter ones).
 */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static int kmsg_check(int fd)
{
	char line[2048];
	int bad = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, line, sizeof(line) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		int prio;
		char *text;

		if (n <= 0)
			continue;	/* overwritten lines: go on */
		line[n] = 0;
		prio = atoi(line) & 7;
		text = strchr(line, ';');
		text = text ? text + 1 : line;
		if (prio > 4)
			continue;	/* notice, info, debug */
		say("# kernel log: %.300s", text);
		if (strstr(text, "hwpmc"))
			bad++;
	}
	close(fd);
	return bad;
}

static void usage(void)
{
	say("usage: fuzz_test [--ops N] [--seed S] [--procs P] [--threads T] [--hang SECS] [--logwait SECS] [--seconds SECS] [--model MODEL] [--no-unload]\n");
	exit(2);
}

static void print_stats(double secs)
{
	unsigned int op, e;
	uint64_t ioctls = 0;

	say("# operation        calls        ok  ms/call errnos\n");
	for (op = 0; op <= PMC_OP_MAX; op++) {
		char line[600];
		int len;
		uint64_t calls = 0;

		for (e = 0; e < NERR; e++)
			calls += atomic_load(&shm->hist[op][e]);
		ioctls += calls;
		len = snprintf(line, sizeof(line), "# %-16s %9" PRIu64 " %9" PRIu64 " %8.3f",
			       fuzz_ops[op].name, calls,
			       (uint64_t)atomic_load(&shm->hist[op][0]),
			       calls ? atomic_load(&shm->busy_ns[op]) / 1e6 / calls : 0.0);
		for (e = 1; e < NERR && len < (int)sizeof(line) - 40; e++) {
			uint64_t v = atomic_load(&shm->hist[op][e]);

			if (v)
				len += snprintf(line + len, sizeof(line) - len,
						" %s:%" PRIu64, strerrorname_np(e) ?: "?", v);
		}
		say("%s\n", line);
	}
	say("# other (calls, ms in all):");
	for (op = M_OPEN; op < M_END; op++)
		say(" %s %" PRIu64 " %.0f", meta_names[op - M_OPEN],
		    (uint64_t)atomic_load(&shm->meta[op - M_OPEN]),
		    atomic_load(&shm->busy_ns[op]) / 1e6);
	{
		uint64_t done = atomic_load(&shm->ops_done);

		if (done > shm->ops_total)
			done = shm->ops_total;
		say("\n# %" PRIu64 " operations (%" PRIu64 " ioctls) in %.1f s: %.0f ops/s\n",
		    done, ioctls, secs, done / (secs > 0 ? secs : 1));
	}
}

int main(int argc, char **argv)
{
	uint64_t ops = 200000, seed = 0, t0;
	int nprocs = 4, nthreads = 3, socks[MAXPROCS][2], i, st, fails = 0;
	bool unload = true, seeded = false;
	long refcnt0, refcnt = -1;
	int writers0, writers = 0, leaks, kmsg;
	pthread_t wd;
	const char *env;

	setvbuf(stdout, NULL, _IONBF, 0);
	if ((env = getenv("HWPMC_FUZZ_OPS")) && *env)
		ops = strtoull(env, NULL, 0);
	if ((env = getenv("HWPMC_FUZZ_SEED")) && *env) {
		seed = strtoull(env, NULL, 0);
		seeded = true;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-unload")) {
			unload = false;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--ops"))
			ops = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[++i], NULL, 0), seeded = true;
		else if (!strcmp(argv[i], "--procs"))
			nprocs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads"))
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hang"))
			hang_secs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--logwait"))
			logwait_secs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds"))
			max_secs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--model"))
			model = argv[++i];
		else
			usage();
	}
	if (nprocs < 1 || nprocs > MAXPROCS || nthreads < 1 ||
	    nthreads > MAXTHREADS || !ops || hang_secs < 1 ||
	    logwait_secs < 0)
		usage();
	if (!seeded)
		seed = now_ns() ^ ((uint64_t)getpid() << 32);

	say("TAP version 13\n1..1\n");
	say("# hwpmc fuzz: seed %" PRIu64 ", %" PRIu64 " operations, %d processes (%d root, %d uid %d) x %d threads\n",
	    seed, ops, nprocs, (nprocs + 1) / 2, nprocs / 2, NOBODY, nthreads);
	if (geteuid() != 0 || access(HWPMC_DEV, R_OK | W_OK)) {
		say("ok 1 # SKIP needs root and %s (the module loaded)\n", HWPMC_DEV);
		say("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return 1;
	shm->seed = seed;
	shm->ops_total = ops;
	shm->nprocs = nprocs;
	shm->nthreads = nthreads;

	/* Where logs go: /tmp, and a tmpfs that is full from the start. */
	snprintf(workdir, sizeof(workdir), "/tmp/hwpmc-fuzz.%d", (int)getpid());
	mkdir(workdir, 01777);
	chmod(workdir, 01777);
	snprintf(fulldir, sizeof(fulldir), "%s/full", workdir);
	mkdir(fulldir, 0755);
	if (!mount("hwpmc-fuzz", fulldir, "tmpfs", 0, "size=16k,mode=1777")) {
		char path[200];
		static char junk[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/filler", fulldir);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		while (fd >= 0 && write(fd, junk, sizeof(junk)) > 0)
			;
		if (fd >= 0)
			close(fd);
		have_fulltmpfs = true;
	}
	cpu1_hotplug = access("/sys/devices/system/cpu/cpu1/online", W_OK) == 0;
	say("# logs: files, pipes and sockets (drained, stalled, closed), %s, read-only files; CPU 1 hotplug: %s\n",
	    have_fulltmpfs ? "a full tmpfs" : "/dev/full", cpu1_hotplug ? "yes" : "no");

	if (model) {
		char params[64];
		int err = hwpmc_module_unload_wait();

		snprintf(params, sizeof(params), "pmu_model=%s", model);
		if ((err && err != ENOENT) || (err = hwpmc_module_load("test/", params)) ||
		    hwpmc_sysctl_set(UNPRIV_HW, 1)) {
			say("not ok 1 hwpmc fuzz: cannot load test/hwpmc.ko %s: %s\n",
			    params, strerror(err));
			say("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
			return 1;
		}
		say("# the test flavor with %s, kernel.hwpmc.unprivileged_hw=1\n", params);
	}
	kmsg = kmsg_open();
	refcnt0 = read_long("/sys/module/hwpmc/refcnt");
	writers0 = count_log_writers();
	leaks = kmemleak_hwpmc();	/* old reports: not this run's */
	for (i = 0; i < nprocs; i++)
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			       0, socks[i]))
			return 1;

	t0 = now_ns();
	for (i = 0; i < nprocs; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(worker_main(i, i % 2 == 0, socks));
		shm->procpid[i] = pid;
	}
	for (i = 0; i < nprocs; i++) {
		close(socks[i][0]);
		close(socks[i][1]);
	}
	pthread_create(&wd, NULL, watchdog, NULL);
	for (i = 0; i < nprocs; i++) {
		if (waitpid(shm->procpid[i], &st, 0) < 0)
			st = -1;
		atomic_store(&shm->reaped[i], 1);
		if (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL &&
		    atomic_load(&shm->killed[i]))
			continue;	/* the watchdog's doing, and it ended */
		if (st || !WIFEXITED(st)) {
			if (!atomic_load(&shm->failed))
				fuzz_fail(NULL, "worker %d ended with status %#x",
					  i, st);
		}
	}
	atomic_store(&shm->stop, 2);
	pthread_join(wd, NULL);
	print_stats((now_ns() - t0) / 1e9);
	say("# watchdog: %d worker(s) killed in a log wait that did not end\n",
	    atomic_load(&shm->nkilled));

	/* Back to where we started: CPU 1 online, every row enabled. */
	if (cpu1_hotplug && cpu1_set_online(1))
		fuzz_fail(NULL, "CPU 1 cannot be brought back online");
	rows_enable();
	if (have_fulltmpfs)
		umount2(fulldir, MNT_DETACH);
	rmdir(fulldir);
	rmdir(workdir);

	/* No leak: the module's references and writers back to baseline. */
	for (i = 0; i < 300; i++) {
		refcnt = read_long("/sys/module/hwpmc/refcnt");
		writers = count_log_writers();
		if (refcnt == refcnt0 && writers == writers0)
			break;
		usleep(100000);
	}
	say("# module refcnt %ld (baseline %ld), log writer threads %d (baseline %d)\n",
	    refcnt, refcnt0, writers, writers0);
	if (refcnt != refcnt0)
		fuzz_fail(NULL, "module reference count %ld, not back to %ld",
			  refcnt, refcnt0), fails++;
	if (writers != writers0)
		fuzz_fail(NULL, "%d log writer threads left (baseline %d)",
			  writers, writers0), fails++;
	i = kmsg_check(kmsg);
	if (i)
		fuzz_fail(NULL, "%d kernel log line(s) of warning level naming hwpmc", i);
	leaks = kmemleak_hwpmc();
	if (leaks < 0) {
		say("# kmemleak: not in this kernel (a debug kernel has it)\n");
	} else {
		sleep(6);	/* kmemleak reports what two scans agree on */
		leaks = kmemleak_hwpmc();
		say("# kmemleak: %d leak(s) naming hwpmc\n", leaks);
		if (leaks > 0)
			fuzz_fail(NULL, "kmemleak reports %d leak(s) in hwpmc", leaks);
	}
	if ((unload || model) && !atomic_load(&shm->failed)) {
		int err = hwpmc_module_unload_wait();

		say("# unload: %s\n", err ? strerror(err) : "ok");
		if (err)
			fuzz_fail(NULL, "the module does not unload: %s", strerror(err));
		else if ((err = hwpmc_module_load("", "")))
			fuzz_fail(NULL, "the module does not load again: %s",
				  strerror(err));
	}
	if (atomic_load(&shm->failed)) {
		say("not ok 1 hwpmc fuzz (seed %" PRIu64 ")\n", seed);
		say("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	say("ok 1 hwpmc fuzz (seed %" PRIu64 ")\n", seed);
	say("# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n");
	return 0;
}
