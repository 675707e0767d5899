/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpmc's ioctl fuzzer: what the driver (fuzz_test.c) and the operation
 * table (ops.c) share.  See fuzz_test.c for how a run is organized.
 */
#ifndef HWPMC_FUZZ_H
#define HWPMC_FUZZ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --- the random generator: splitmix64, deterministic from the seed ------ */

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline uint32_t rnd(struct rng *r, uint32_t n)
{
	return (uint32_t)(rng_next(r) % n);
}

/* True with probability 1/n. */
static inline bool one_in(struct rng *r, uint32_t n)
{
	return rnd(r, n) == 0;
}

/* --- the last operations of each thread, for a failure report ---------- */

#define FUZZ_RING	64	/* operations kept per thread */
#define FUZZ_ARGMAX	64	/* argument bytes kept per operation */

struct fuzz_rec {
	uint64_t seq;		/* the thread's operation number */
	uint16_t op;		/* index in fuzz_ops[] or FUZZ_META_* */
	int16_t fd;
	int32_t res;		/* 0, -errno, or a meta op's result */
	uint64_t ptr;		/* the argument pointer as passed */
	uint32_t cmd;
	uint8_t argsz;
	uint8_t arg[FUZZ_ARGMAX];
};

/* One thread's slot in the shared area: the watchdog reads it. */
struct fuzz_slot {
	pid_t pid;
	uid_t uid;
	int index;
	_Atomic uint64_t start_ns;	/* of the operation in flight, or 0 */
	_Atomic uint32_t cur_op;
	_Atomic uint64_t nrec;
	struct fuzz_rec ring[FUZZ_RING];
};

/* --- a process's descriptors ------------------------------------------- */

enum fuzz_fdkind {
	FK_FREE,
	FK_HWPMC,		/* an open of /dev/hwpmc (ours or received) */
	FK_FILE,		/* a log file in /tmp */
	FK_PIPE,		/* a pipe whose reader drains it */
	FK_PIPE_STALLED,	/* a pipe nobody reads (until unstalled) */
	FK_SOCK,		/* a stream socket whose peer drains it */
	FK_SOCK_STALLED,	/* a socket whose peer does not read */
	FK_SOCK_CLOSED,		/* a socket whose peer is closed */
	FK_FULL,		/* a file on a full tmpfs */
	FK_RDONLY,		/* a file open read-only */
	FK_DEVNULL,
	FK_NKINDS,
};

#define FUZZ_MAXFD	48
#define FUZZ_MAXIDS	8

struct fuzz_fd {
	int fd;
	int kind;
	int peer;		/* read end / peer socket, drained by the reader */
	uint32_t ids[FUZZ_MAXIDS];	/* PMC handles seen allocated */
	int nids;
};

#define FUZZ_MAXKIDS	16

struct fuzz_proc;

/* What a generator sees. */
struct fuzz_ctx {
	struct rng rng;
	struct fuzz_proc *proc;
	struct fuzz_slot *slot;
	bool root;
	bool child;		/* in a forked child: no threads but this one */
	uint64_t seq;
};

/* --- the operation table (ops.c) --------------------------------------- */

struct fuzz_arg {
	unsigned long cmd;	/* as issued (possibly a mutated one) */
	void *ptr;		/* as passed to ioctl() */
	bool bad_ptr;		/* ptr cannot be read or written */
	bool ro_ptr;		/* ptr is readable only */
	int hwpmc_fd;		/* the descriptor's kind is FK_HWPMC */
	union {
		uint8_t bytes[1024];	/* >= every argument (ops.c asserts) */
		uint64_t align;
	} buf;			/* the argument (ptr points here when good) */
};

struct fuzz_op {
	const char *name;
	unsigned long cmd;
	size_t size;
	/* Errnos the op may answer (0-terminated): ERRORS.md, the header. */
	const int *errnos;
	void (*gen)(struct fuzz_ctx *c, void *arg);
	/* After success: remember handles, check results.  NULL: nothing. */
	const char *(*check)(struct fuzz_ctx *c, const void *arg, int fdi);
};

extern const struct fuzz_op fuzz_ops[];
extern const unsigned int fuzz_nops;

/* Errnos any operation on a descriptor may answer (see ops.c). */
bool fuzz_errno_ok(const struct fuzz_op *op, int err);

/* --- helpers the table uses (fuzz_test.c) ------------------------------ */

/* A pid for PMCATTACH/PMCDETACH: valid, dead, foreign or nonsense. */
int32_t fuzz_pick_pid(struct fuzz_ctx *c);
/* A PMC handle of descriptor @fdi: known, plausible or nonsense. */
uint32_t fuzz_pick_id(struct fuzz_ctx *c, int fdi);
/* A CPU number: online, offline, too large, PMC_CPU_ANY. */
uint32_t fuzz_pick_cpu(struct fuzz_ctx *c);
/* A descriptor number for CONFIGURELOG: any kind, closed, -1, junk. */
int32_t fuzz_pick_logfd(struct fuzz_ctx *c);
/* A user pointer for an embedded array of @size bytes (GETPMCINFO...). */
uint64_t fuzz_pick_uptr(struct fuzz_ctx *c, size_t size);
/* Non-zero reserved bytes, now and then. */
void fuzz_reserved(struct fuzz_ctx *c, void *p, size_t n);
/* Remember handle @id as allocated on descriptor index @fdi. */
void fuzz_note_id(struct fuzz_ctx *c, int fdi, uint32_t id);

#endif /* HWPMC_FUZZ_H */
