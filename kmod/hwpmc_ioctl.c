// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the ioctl dispatcher.  One ioctl per PMC_OP_*; each case copies
 * its argument in, calls hwpmc_op_<name>(), and copies the result out.
 */
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>
#include <linux/string.h>
#include <linux/percpu.h>

#include "hwpmc.h"

static int hwpmc_op_getmoduleversion(struct hwpmc_owner *po,
				     struct pmc_op_getmoduleversion *a)
{
	u32 theirs = a->pm_version;

	if (a->pm_reserved)		/* a __u32: no memchr_inv() call */
		return -EINVAL;
	a->pm_version = HWPMC_VERSION;
	if (theirs && HWPMC_VERSION_TO_MAJOR(theirs) != HWPMC_VERSION_MAJOR)
		return -EPROTO;
	return 0;
}

static int hwpmc_op_getcpuinfo(struct hwpmc_owner *po,
			       struct pmc_op_getcpuinfo *a)
{
	unsigned int i;

	memset(a, 0, sizeof(*a));
	a->pm_cputype = hwpmc_cputype();
	a->pm_ncpu = nr_cpu_ids;
	a->pm_npmc = hwpmc_nrows();
	a->pm_nclass = hwpmc_nclasses();
	for (i = 0; i < a->pm_nclass; i++) {
		const struct hwpmc_class *c = hwpmc_class_at(i);
		struct pmc_classinfo *ci = &a->pm_classes[i];

		ci->pm_class = c->ops->class;
		ci->pm_caps = c->caps;
		ci->pm_width = c->width;
		ci->pm_num = c->nrows;
		ci->pm_firstrow = c->firstrow;
	}
	return 0;
}

/* The per-CPU statistics summed (a sum of counters still counting). */
static int hwpmc_op_getdriverstats(struct hwpmc_owner *po,
				   struct pmc_op_getdriverstats *a)
{
	struct hwpmc_stats t = { };
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		const struct hwpmc_stats *s = per_cpu_ptr(&hwpmc_stats, cpu);

		t.intr_ignored += READ_ONCE(s->intr_ignored);
		t.intr_processed += READ_ONCE(s->intr_processed);
		t.intr_bufferfull += READ_ONCE(s->intr_bufferfull);
		t.syscalls += READ_ONCE(s->syscalls);
		t.syscall_errors += READ_ONCE(s->syscall_errors);
		t.buffer_requests += READ_ONCE(s->buffer_requests);
		t.buffer_requests_failed += READ_ONCE(s->buffer_requests_failed);
		t.log_sweeps += READ_ONCE(s->log_sweeps);
		t.samples_taken += READ_ONCE(s->samples_taken);
		t.samples_dropped += READ_ONCE(s->samples_dropped);
		t.samples_throttled += READ_ONCE(s->samples_throttled);
		t.log_bytes += READ_ONCE(s->log_bytes);
		t.alloc_failed += READ_ONCE(s->alloc_failed);
	}
	memset(a, 0, sizeof(*a));
	a->pm_intr_ignored = t.intr_ignored;
	a->pm_intr_processed = t.intr_processed;
	a->pm_intr_bufferfull = t.intr_bufferfull;
	a->pm_syscalls = t.syscalls;
	a->pm_syscall_errors = t.syscall_errors;
	a->pm_buffer_requests = t.buffer_requests;
	a->pm_buffer_requests_failed = t.buffer_requests_failed;
	a->pm_log_sweeps = t.log_sweeps;
	a->pm_samples_taken = t.samples_taken;
	a->pm_samples_dropped = t.samples_dropped;
	a->pm_samples_throttled = t.samples_throttled;
	a->pm_log_bytes = t.log_bytes;
	a->pm_alloc_failed = t.alloc_failed;
	return 0;
}

static int hwpmc_op_getdyneventinfo(struct hwpmc_owner *po,
				    struct pmc_op_getdyneventinfo *a)
{
	const struct hwpmc_class *cls = hwpmc_class_find(a->pm_class);
	struct pmc_dyn_event_descr ev;
	struct pmc_dyn_event_descr __user *uev;
	u32 n = 0, i;

	if (!HWPMC_RESERVED_ZERO(a->pm_reserved))
		return -EINVAL;
	if (!cls || !cls->ops->event_name)
		return -EINVAL;
	while (cls->ops->event_name(n))
		n++;
	if (!a->pm_events) {
		a->pm_nevent = n;
		return 0;
	}
	if (a->pm_nevent < n) {
		a->pm_nevent = n;
		return -E2BIG;
	}
	uev = u64_to_user_ptr(a->pm_events);
	for (i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		strscpy(ev.pm_ev_name, cls->ops->event_name(i),
			sizeof(ev.pm_ev_name));
		ev.pm_ev_code = i;
		if (copy_to_user(&uev[i], &ev, sizeof(ev)))
			return -EFAULT;
	}
	a->pm_nevent = n;
	return 0;
}

/* Handlers take the copied-in argument. */
typedef int (*hwpmc_op_fn)(struct hwpmc_owner *po, void *arg);

/*
 * What the dispatcher holds around a handler.  HWPMC_LK_OWNER: the
 * owner's lock, for handlers that take hwpmc_sx themselves (or not at all)
 * because they wait for something a user controls; HWPMC_LK_ALL: the
 * owner's lock and hwpmc_sx.  The log operations lock themselves.  Every
 * lock is taken killably (hwpmc_sx, when a release dropped it to wait for
 * a grace period, is taken back unkillably: the release cannot be undone,
 * and nobody holds it across a wait a user controls).
 */
enum hwpmc_op_lock {
	HWPMC_LK_NONE,
	HWPMC_LK_OWNER,
	HWPMC_LK_ALL,
};

struct hwpmc_op_desc {
	unsigned int cmd;
	hwpmc_op_fn fn;
	enum hwpmc_op_lock lock;
};

#define HWPMC_OP(op, handler, lock) \
	[PMC_OP_##op] = { HWPMC_IOC_##op, (hwpmc_op_fn)(handler), HWPMC_LK_##lock }

static const struct hwpmc_op_desc hwpmc_ops[PMC_OP_MAX + 1] = {
	HWPMC_OP(CONFIGURELOG, hwpmc_op_configurelog, NONE),
	HWPMC_OP(FLUSHLOG, hwpmc_op_flushlog, NONE),
	HWPMC_OP(GETCPUINFO, hwpmc_op_getcpuinfo, NONE),
	HWPMC_OP(GETDRIVERSTATS, hwpmc_op_getdriverstats, NONE),
	HWPMC_OP(GETMODULEVERSION, hwpmc_op_getmoduleversion, NONE),
	/* Takes hwpmc_sx itself, but not while it copies out. */
	HWPMC_OP(GETPMCINFO, hwpmc_op_getpmcinfo, NONE),
	HWPMC_OP(PMCADMIN, hwpmc_op_pmcadmin, ALL),
	/* Takes hwpmc_sx itself, after attaching the hooks it needs. */
	HWPMC_OP(PMCALLOCATE, hwpmc_op_pmcallocate, OWNER),
	/* Waits for the target's exec_update_lock and mmap lock. */
	HWPMC_OP(PMCATTACH, hwpmc_op_pmcattach, OWNER),
	HWPMC_OP(PMCDETACH, hwpmc_op_pmcdetach, ALL),
	HWPMC_OP(PMCGETMSR, hwpmc_op_getmsr, ALL),
	/* Drops hwpmc_sx while it waits for a grace period. */
	HWPMC_OP(PMCRELEASE, hwpmc_op_pmcrelease, ALL),
	/* The owner's PMC, read or written: no global lock. */
	HWPMC_OP(PMCRW, hwpmc_op_pmcrw, OWNER),
	/* As PMCRW (may wait for a grace period since the PMC's stop). */
	HWPMC_OP(PMCSETCOUNT, hwpmc_op_pmcsetcount, OWNER),
	/* May attach (as PMCATTACH); takes hwpmc_sx itself. */
	HWPMC_OP(PMCSTART, hwpmc_op_pmcstart, OWNER),
	/* Waits for every CPU first (the class's sync); takes hwpmc_sx. */
	HWPMC_OP(PMCSTOP, hwpmc_op_pmcstop, OWNER),
	HWPMC_OP(WRITELOG, hwpmc_op_writelog, NONE),
	HWPMC_OP(CLOSELOG, hwpmc_op_closelog, NONE),
	HWPMC_OP(GETDYNEVENTINFO, hwpmc_op_getdyneventinfo, NONE),
	HWPMC_OP(GETCAPS, hwpmc_op_getcaps, OWNER),
	HWPMC_OP(GETREADSLOT, hwpmc_op_getreadslot, OWNER),
};

/*
 * Run @op's handler with the locks it needs.  Inlined into each caller:
 * where @op is a constant, its lock and its handler are too (a direct
 * call, no indirect branch).
 */
static __always_inline int hwpmc_op_call(const struct hwpmc_op_desc *op,
					 struct hwpmc_owner *po, void *a)
{
	int err;

	if (op->lock == HWPMC_LK_NONE)
		return op->fn(po, a);
	err = mutex_lock_killable(&po->lock);
	if (err)
		return err;
	if (op->lock == HWPMC_LK_ALL) {
		err = mutex_lock_killable(&hwpmc_sx);
		if (!err) {
			err = op->fn(po, a);
			mutex_unlock(&hwpmc_sx);
		}
	} else {
		err = op->fn(po, a);
	}
	mutex_unlock(&po->lock);
	return err;
}

/*
 * The hot operations' arguments (below: 8 and 16 bytes) move by 8-byte
 * words inside one user-access section: the range check, a speculation
 * barrier and the fault fixups of copy_from_user() and copy_to_user(),
 * without their out-of-line calls and byte-string moves (REP MOVSB, an
 * instruction a byte under QEMU's -icount).  True if all of it was
 * copied.
 */
static __always_inline bool hwpmc_arg_words(unsigned int size)
{
	return __builtin_constant_p(size) &&
	       (size == sizeof(u64) || size == 2 * sizeof(u64));
}

static __always_inline bool hwpmc_arg_in(void *a, const void __user *uarg,
					 unsigned int size)
{
	const u64 __user *from = uarg;
	u64 w[2];

	if (!hwpmc_arg_words(size))
		return !copy_from_user(a, uarg, size);
	might_fault();
	if (!user_access_begin(from, size))
		return false;
	unsafe_get_user(w[0], &from[0], fault);
	if (size > sizeof(u64))
		unsafe_get_user(w[1], &from[1], fault);
	user_access_end();
	memcpy(a, w, size);	/* @a may be 4-byte aligned */
	return true;
fault:
	user_access_end();
	return false;
}

static __always_inline bool hwpmc_arg_out(void __user *uarg, const void *a,
					  unsigned int size)
{
	u64 __user *to = uarg;
	u64 w[2];

	if (!hwpmc_arg_words(size))
		return !copy_to_user(uarg, a, size);
	memcpy(w, a, size);
	might_fault();
	if (!user_access_begin(to, size))
		return false;
	unsafe_put_user(w[0], &to[0], fault);
	if (size > sizeof(u64))
		unsafe_put_user(w[1], &to[1], fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * One operation: its argument (@size bytes at @a) copied in, the handler,
 * the result copied out on success and on the errors that carry one.
 * Inlined with a constant @size for the hot operations (below): the copies
 * then need no run-time object size check (hardened usercopy checks a
 * constant size at build time) and nothing larger than the argument is
 * cleared.
 */
static __always_inline long hwpmc_op_run(const struct hwpmc_op_desc *op,
					 struct hwpmc_owner *po,
					 void __user *uarg, void *a,
					 unsigned int size)
{
	unsigned int cmd = op->cmd;
	int err;

	hwpmc_stat_inc(syscalls);
	/* An _IOR argument starts zeroed; an _IOW one is all copied in. */
	if (!(_IOC_DIR(cmd) & _IOC_WRITE)) {
		memset(a, 0, size);
	} else if (!hwpmc_arg_in(a, uarg, size)) {
		err = -EFAULT;
		goto out;
	}
	err = hwpmc_op_call(op, po, a);
	/* Copy out on success, and on errors that carry a result. */
	if ((_IOC_DIR(cmd) & _IOC_READ) &&
	    (!err || err == -EPROTO || err == -E2BIG) &&
	    !hwpmc_arg_out(uarg, a, size))
		err = -EFAULT;
out:
	if (err)
		hwpmc_stat_inc(syscall_errors);
	return err;
}

/* The largest argument structure of any op. */
union hwpmc_op_args {
	struct pmc_op_getmoduleversion version;
	struct pmc_op_getcpuinfo cpuinfo;
	struct pmc_op_getpmcinfo pmcinfo;
	struct pmc_op_pmcadmin admin;
	struct pmc_op_pmcallocate allocate;
	struct pmc_op_pmcattach attach;
	struct pmc_op_simple simple;
	struct pmc_op_pmcrw rw;
	struct pmc_op_pmcsetcount setcount;
	struct pmc_op_getmsr getmsr;
	struct pmc_op_caps caps;
	struct pmc_op_configurelog configurelog;
	struct pmc_op_writelog writelog;
	struct pmc_op_getdriverstats stats;
	struct pmc_op_getdyneventinfo dynevents;
	struct pmc_op_getreadslot readslot;
};

/*
 * Every other operation (@cmd is one of hwpmc_ops[]), its argument in a
 * union of them all.
 */
static noinline long hwpmc_ioctl_any(struct hwpmc_owner *po, unsigned int cmd,
				     void __user *uarg)
{
	/* hwpmc_ioctl() checked it; no speculation past that check */
	unsigned int nr = array_index_nospec(_IOC_NR(cmd), PMC_OP_MAX + 1);
	unsigned int size = _IOC_SIZE(cmd);
	/*
	 * Each op uses the first @size bytes (its structure, which its
	 * command encodes), filled by hwpmc_op_run(), and nothing after
	 * them: not zeroed whole at every call (CONFIG_INIT_STACK_ALL_ZERO
	 * would, 544 bytes).
	 */
	union hwpmc_op_args a __uninitialized;

	if (WARN_ON_ONCE(size > sizeof(a))) {
		hwpmc_stat_inc(syscalls);
		hwpmc_stat_inc(syscall_errors);
		return -EINVAL;
	}
	return hwpmc_op_run(&hwpmc_ops[nr], po, uarg, &a, size);
}

/*
 * The reads (PMCRW, and GETMODULEVERSION, the null operation) take the
 * short way: an argument of their own type and size on the stack (the
 * union above is over 500 bytes, cleared at every call by the kernel's
 * stack initialization), copies by words (hwpmc_arg_in()), a direct
 * call to the handler.  Same checks, same errors as every other operation.
 */
long hwpmc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct hwpmc_owner *po = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case HWPMC_IOC_PMCRW: {
		struct pmc_op_pmcrw a;

		return hwpmc_op_run(&hwpmc_ops[PMC_OP_PMCRW], po, uarg, &a,
				    sizeof(a));
	}
	case HWPMC_IOC_GETMODULEVERSION: {
		struct pmc_op_getmoduleversion a;

		return hwpmc_op_run(&hwpmc_ops[PMC_OP_GETMODULEVERSION], po,
				    uarg, &a, sizeof(a));
	}
	}
	/* Not ours: refused before anything is cleared or counted. */
	if (_IOC_TYPE(cmd) != HWPMC_IOC_MAGIC || _IOC_NR(cmd) > PMC_OP_MAX ||
	    hwpmc_ops[array_index_nospec(_IOC_NR(cmd), PMC_OP_MAX + 1)].cmd !=
	    cmd)
		return -ENOTTY;
	return hwpmc_ioctl_any(po, cmd, uarg);
}
