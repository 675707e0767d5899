// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: the log file.  Records are appended to the owner's current buffer
 * (from any context but NMI: the sample rings carry NMI samples here); a
 * full buffer waits on the log until a writer of the pool writes it to the
 * configured file, pipe or socket with the credentials of whoever
 * configured the log, and returns it to a pool shared by all logs
 * (nbuffers per CPU, of logbuffersize KB each, allocated while any log
 * exists).
 *
 * What one user can take is bounded (see the README's threat model):
 *  - writers: a pool of kernel.hwpmc.log_writers threads (hwpmc-logw/N,
 *    started with the first log, stopped with the last) writes every log,
 *    one buffer of one log at a time per thread.  A write that blocks (a
 *    pipe nobody reads, a stalled FUSE file) while other logs wait is
 *    interrupted after HWPMC_WRITE_SLICE and its log goes to the back of
 *    the queue with what it wrote so far kept: no log holds a writer for
 *    ever while another waits;
 *  - logs: kernel.hwpmc.max_logs_per_user open logs per real uid for
 *    owners without CAP_PERFMON (EMFILE beyond);
 *  - buffers: a log of an owner without CAP_PERFMON holds at most
 *    kernel.hwpmc.log_buffer_share percent of the pool, and never takes
 *    the last kernel.hwpmc.log_buffer_reserve percent, which only
 *    privileged logs use.  A record that finds no buffer is dropped and
 *    counted (DROPNOTIFY), so taken = logged + dropped stays exact.
 *
 * A write error stops the log: the error is kept and returned by the next
 * FLUSHLOG, the owner gets SIGIO, and later records are counted as dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/cred.h>
#include <linux/kthread.h>
#include <linux/irq_work.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>
#include <asm/tsc.h>

#include "hwpmc.h"

/* How long a blocked write may hold a writer that another log waits for. */
#define HWPMC_WRITE_SLICE	(HZ / 10)

struct hwpmc_logbuf {
	struct list_head node;
	size_t used;
	size_t done;			/* bytes of it written already */
	char data[];
};

struct hwpmc_writer;

struct hwpmc_log {
	raw_spinlock_t lock;		/* the fields below, buffers */
	struct hwpmc_logbuf *cur;	/* being filled */
	struct list_head full;		/* waiting for a writer */
	struct hwpmc_logbuf *wbuf;	/* being written (maybe in part) */
	bool stopped;			/* accepts no more records */
	int error;			/* first write error, sticky */
	u64 drop_samples, drop_records;	/* not yet in a DROPNOTIFY */
	u64 drop_throttled;		/* ditto: samples throttled */

	unsigned int nbufs;		/* buffers held; hwpmc_pool_lock */
	bool priv;			/* configured with CAP_PERFMON */
	bool counted;			/* in hwpmc_user_logs; hwpmc_sx */
	kuid_t uid;			/* real uid of the configurer */

	/* The writer pool, under hwpmc_runq_lock. */
	struct list_head rnode;		/* in hwpmc_runq */
	bool queued;			/* in hwpmc_runq */
	struct hwpmc_writer *writer;	/* writing it now, or NULL */
	bool dead;			/* being destroyed: never queued again */

	struct file *file;
	const struct cred *cred;	/* the configurer's, for writing */
	struct pid *owner;
	struct pid_namespace *pid_ns;	/* the owner's: pids in records */
	struct irq_work kick;		/* queues it from anywhere */
	wait_queue_head_t idle;		/* flushers wait for the writers */
	struct rcu_head rcu;
};

/* A writer of the pool. */
struct hwpmc_writer {
	struct task_struct *task;
	struct hwpmc_log *log;		/* being written; hwpmc_runq_lock */
	struct timer_list slice;	/* preempts a write others wait for */
};

/* The buffer pool, shared by all logs; allocated while any log exists. */
static DEFINE_RAW_SPINLOCK(hwpmc_pool_lock);
static LIST_HEAD(hwpmc_pool);
static unsigned int hwpmc_pool_size;	/* buffers; under hwpmc_sx */
static unsigned int hwpmc_pool_nfree;	/* under hwpmc_pool_lock */
static unsigned int hwpmc_pool_users;	/* logs; under hwpmc_sx */

/* The writers; started with the pool. */
static DEFINE_RAW_SPINLOCK(hwpmc_runq_lock);
static LIST_HEAD(hwpmc_runq);		/* logs with buffers to write */
static DECLARE_WAIT_QUEUE_HEAD(hwpmc_runq_wait);
static struct hwpmc_writer *hwpmc_writers;
static unsigned int hwpmc_nwriters;	/* under hwpmc_sx */

/* Open logs per real uid of owners without CAP_PERFMON; hwpmc_sx. */
static DEFINE_XARRAY(hwpmc_user_logs);

static size_t hwpmc_logbuf_size(void)
{
	return (size_t)hwpmc_logbuffersize * 1024 - sizeof(struct hwpmc_logbuf);
}

static void hwpmc_log_queue(struct hwpmc_log *log);
static int hwpmc_writer_fn(void *arg);

/*
 * The slice timer of a writer, armed while it writes: when other logs
 * wait for a writer, or the log is being destroyed, the write (blocked, or
 * just long) is interrupted; the log goes to the back of the queue with
 * what was written kept.  Otherwise the write may take as long as it
 * needs.  Softirq context.
 */
static void hwpmc_writer_slice(struct timer_list *t)
{
	struct hwpmc_writer *w = from_timer(w, t, slice);
	unsigned long flags;
	bool preempt;

	raw_spin_lock_irqsave(&hwpmc_runq_lock, flags);
	preempt = w->log && (w->log->dead || !list_empty(&hwpmc_runq));
	raw_spin_unlock_irqrestore(&hwpmc_runq_lock, flags);
	if (preempt)
		send_sig(SIGKILL, w->task, 1);
	else
		mod_timer(&w->slice, jiffies + HWPMC_WRITE_SLICE);
}

static void hwpmc_writers_stop(void)
{
	unsigned int i;

	lockdep_assert_held(&hwpmc_sx);
	for (i = 0; i < hwpmc_nwriters; i++) {
		kthread_stop(hwpmc_writers[i].task);
		del_timer_sync(&hwpmc_writers[i].slice);
		put_task_struct(hwpmc_writers[i].task);
	}
	kfree(hwpmc_writers);
	hwpmc_writers = NULL;
	hwpmc_nwriters = 0;
}

/* Start the pool's writers (kernel.hwpmc.log_writers of them). */
static int hwpmc_writers_start(void)
{
	unsigned int i, n = clamp(READ_ONCE(hwpmc_log_writers), 1, 64);
	struct hwpmc_writer *w;

	lockdep_assert_held(&hwpmc_sx);
	hwpmc_writers = kcalloc(n, sizeof(*hwpmc_writers), GFP_KERNEL);
	if (!hwpmc_writers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		w = &hwpmc_writers[i];
		timer_setup(&w->slice, hwpmc_writer_slice, 0);
		w->task = kthread_create(hwpmc_writer_fn, w, "hwpmc-logw/%u", i);
		if (IS_ERR(w->task)) {
			/* hwpmc(4): helper creation failed: EAGAIN. */
			hwpmc_writers_stop();
			return -EAGAIN;
		}
		get_task_struct(w->task);
		hwpmc_nwriters++;
		wake_up_process(w->task);
	}
	return 0;
}

static void hwpmc_pool_free(void)
{
	struct hwpmc_logbuf *b, *tmp;

	list_for_each_entry_safe(b, tmp, &hwpmc_pool, node) {
		list_del(&b->node);
		kvfree(b);
	}
	hwpmc_pool_nfree = 0;
	hwpmc_pool_size = 0;
}

/*
 * The first log allocates the pool and starts the writers.  The pool is
 * shared by every user, so it is not charged to this caller's memory
 * cgroup; its size is fixed by the nbuffers and logbuffersize tunables.
 */
static int hwpmc_pool_get(void)
{
	unsigned int i, n = hwpmc_nbuffers * num_possible_cpus();
	struct hwpmc_logbuf *b;
	int err;

	lockdep_assert_held(&hwpmc_sx);
	if (hwpmc_pool_users++)
		return 0;
	for (i = 0; i < n; i++) {
		b = kvmalloc(hwpmc_logbuffersize * 1024, GFP_KERNEL);
		if (!b) {
			err = -ENOMEM;
			goto fail;
		}
		list_add(&b->node, &hwpmc_pool);
	}
	hwpmc_pool_size = n;
	hwpmc_pool_nfree = n;
	err = hwpmc_writers_start();
	if (!err)
		return 0;
fail:
	hwpmc_pool_free();
	hwpmc_pool_users--;
	return err;
}

static void hwpmc_pool_put(void)
{
	lockdep_assert_held(&hwpmc_sx);
	if (--hwpmc_pool_users)
		return;
	hwpmc_writers_stop();
	hwpmc_pool_free();
}

/*
 * A free buffer for @log, or NULL: a log of an unprivileged owner holds at
 * most its share of the pool and leaves the reserve alone.  With @try,
 * ERR_PTR(-EBUSY) (nothing counted) while another CPU holds the pool's
 * lock.  Any context but NMI.
 */
static struct hwpmc_logbuf *hwpmc_buf_alloc(struct hwpmc_log *log, bool try)
{
	struct hwpmc_logbuf *b = NULL;
	unsigned int size = READ_ONCE(hwpmc_pool_size);
	unsigned int share = max(1U, size * READ_ONCE(hwpmc_log_buffer_share) / 100);
	unsigned int reserve = size * READ_ONCE(hwpmc_log_buffer_reserve) / 100;
	unsigned long flags;

	if (!try)
		raw_spin_lock_irqsave(&hwpmc_pool_lock, flags);
	else if (!raw_spin_trylock_irqsave(&hwpmc_pool_lock, flags))
		return ERR_PTR(-EBUSY);
	hwpmc_stat_inc(buffer_requests);
	if (log->priv || (log->nbufs < share && hwpmc_pool_nfree > reserve))
		b = list_first_entry_or_null(&hwpmc_pool, struct hwpmc_logbuf,
					     node);
	if (b) {
		list_del(&b->node);
		hwpmc_pool_nfree--;
		log->nbufs++;
	}
	raw_spin_unlock_irqrestore(&hwpmc_pool_lock, flags);
	if (b) {
		b->used = 0;
		b->done = 0;
	} else {
		hwpmc_stat_inc(buffer_requests_failed);
	}
	return b;
}

static void hwpmc_buf_free(struct hwpmc_log *log, struct hwpmc_logbuf *b)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hwpmc_pool_lock, flags);
	list_add(&b->node, &hwpmc_pool);
	hwpmc_pool_nfree++;
	log->nbufs--;
	raw_spin_unlock_irqrestore(&hwpmc_pool_lock, flags);
}

static void hwpmc_log_kick(struct irq_work *w)
{
	hwpmc_log_queue(container_of(w, struct hwpmc_log, kick));
}

/* Hand the current buffer to the writers.  log->lock held. */
static void hwpmc_log_ship(struct hwpmc_log *log)
{
	lockdep_assert_held(&log->lock);
	if (log->cur && log->cur->used) {
		list_add_tail(&log->cur->node, &log->full);
		log->cur = NULL;
		irq_work_queue(&log->kick);
	}
}

/*
 * Reserve @len bytes (a multiple of 8) for a record of @type and fill its
 * header; the rest is zeroed, or, with @filled, left for the caller, who
 * writes every byte of it, and the header's time.  Returns the record
 * with log->lock held (release it with hwpmc_log_commit()), or NULL when
 * the record is dropped (counted), or, with @try, ERR_PTR(-EBUSY) while
 * another CPU holds the log's lock or the buffer pool's (nothing
 * reserved or counted).  Any context but NMI; takes only raw spinlocks
 * and allocates nothing.
 */
static void *__hwpmc_log_reserve(struct hwpmc_log *log, u32 type, u32 len,
				 unsigned long *flags, bool filled, bool try)
{
	struct pmclog_header *h;

	if (!try)
		raw_spin_lock_irqsave(&log->lock, *flags);
	else if (hwpmc_test_log_busy(HWPMC_TEST_BUSY_SAMPLE) ||
		 !raw_spin_trylock_irqsave(&log->lock, *flags))
		return ERR_PTR(-EBUSY);
	if (log->stopped || len > hwpmc_logbuf_size())
		goto drop;
	if (log->cur && log->cur->used + len > hwpmc_logbuf_size())
		hwpmc_log_ship(log);
	if (!log->cur) {
		struct hwpmc_logbuf *b = hwpmc_buf_alloc(log, try);

		if (IS_ERR(b)) {
			/* Nothing reserved; no current buffer is a state. */
			raw_spin_unlock_irqrestore(&log->lock, *flags);
			return b;
		}
		if (!b)
			goto drop;
		log->cur = b;
	}
	h = (struct pmclog_header *)(log->cur->data + log->cur->used);
	log->cur->used += len;
	if (!filled)
		memset(h + 1, 0, len - sizeof(*h));
	h->pl_type = type;
	h->pl_len = len;
	if (!filled)
		h->pl_time = ktime_get_mono_fast_ns();
	/*
	 * Held until hwpmc_log_commit(): sparse cannot follow a lock that a
	 * function returns conditionally, so it is handed over out of its
	 * sight here and taken back in hwpmc_log_commit().
	 */
	__release(&log->lock);
	return h;
drop:
	if (type == PMCLOG_TYPE_CALLCHAIN)
		log->drop_samples++;
	else
		log->drop_records++;
	raw_spin_unlock_irqrestore(&log->lock, *flags);
	return NULL;
}

void *hwpmc_log_reserve(struct hwpmc_log *log, u32 type, u32 len,
			unsigned long *flags)
{
	return __hwpmc_log_reserve(log, type, len, flags, false, false);
}

/*
 * As hwpmc_log_reserve(), for a caller that writes the whole record and
 * its time (the samples, taken earlier: no byte is written twice and no
 * clock read for nothing).  Any context but NMI.
 */
void *hwpmc_log_reserve_filled(struct hwpmc_log *log, u32 type, u32 len,
			       unsigned long *flags)
{
	return __hwpmc_log_reserve(log, type, len, flags, true, false);
}

/* As hwpmc_log_reserve(), but never waits (as the one below). */
static void *hwpmc_log_try_reserve(struct hwpmc_log *log, u32 type, u32 len,
				   unsigned long *flags)
{
	return __hwpmc_log_reserve(log, type, len, flags, false, true);
}

/*
 * As hwpmc_log_reserve_filled(), but never waits: ERR_PTR(-EBUSY) while
 * another CPU holds the log's lock (nothing reserved, nothing counted).
 * For a sampler in hard interrupt context, which must not spin on a lock
 * another CPU holds, maybe for long: a virtual CPU its hypervisor stopped
 * inside the section, or many CPUs sampling into one log.
 */
void *hwpmc_log_try_reserve_filled(struct hwpmc_log *log, u32 type, u32 len,
				   unsigned long *flags)
{
	return __hwpmc_log_reserve(log, type, len, flags, true, true);
}

void hwpmc_log_commit(struct hwpmc_log *log, unsigned long flags)
{
	__acquire(&log->lock);	/* hwpmc_log_reserve() took it */
	raw_spin_unlock_irqrestore(&log->lock, flags);
}

/*
 * @nr, a pid of the initial namespace, as the log's owner sees it (the pid
 * namespace of the process that opened /dev/hwpmc): 0 when that process
 * cannot see it.  RCU held; any context but NMI.
 */
u32 hwpmc_log_pid(const struct hwpmc_log *log, pid_t nr)
{
	struct pid *pid;

	if (log->pid_ns == &init_pid_ns || nr <= 0)
		return nr;
	pid = find_pid_ns(nr, &init_pid_ns);
	return pid ? pid_nr_ns(pid, log->pid_ns) : 0;
}

/*
 * Write a DROPNOTIFY if anything was dropped since the last one: samples
 * that found a full ring (counted in the owner) and records that found no
 * buffer (counted in the log), and samples not taken because their CPU
 * was throttled (counted in the owner).  The counters are read and zeroed
 * under the lock that holds the record's reservation, so concurrent
 * callers (the drainer, FLUSHLOG, log removal) never report the same drops
 * twice and none is lost: taken = logged + dropped + throttled.  With
 * @try, nothing waits for the lock: while another CPU holds it, the owner's
 * counts are given back for a later call.
 */
static void __hwpmc_log_dropnotify(struct hwpmc_owner *po,
				   struct hwpmc_log *log, bool try)
{
	struct pmclog_dropnotify *r;
	unsigned long flags;
	u64 ring = atomic64_xchg(&po->ring_drops, 0);
	u64 thr = atomic64_xchg(&po->throttled, 0);
	bool none;

	if (!try) {
		raw_spin_lock_irqsave(&log->lock, flags);
	} else if (hwpmc_test_log_busy(HWPMC_TEST_BUSY_DROPS) ||
		   !raw_spin_trylock_irqsave(&log->lock, flags)) {
		atomic64_add(ring, &po->ring_drops);
		atomic64_add(thr, &po->throttled);
		return;
	}
	log->drop_samples += ring;
	log->drop_throttled += thr;
	none = !log->drop_samples && !log->drop_records &&
	       !log->drop_throttled;
	raw_spin_unlock_irqrestore(&log->lock, flags);
	if (none)
		return;
	/* A failed reservation leaves the counters for the next one. */
	if (try)
		r = hwpmc_log_try_reserve(log, PMCLOG_TYPE_DROPNOTIFY,
					  sizeof(*r), &flags);
	else
		r = hwpmc_log_reserve(log, PMCLOG_TYPE_DROPNOTIFY, sizeof(*r),
				      &flags);
	if (IS_ERR_OR_NULL(r))
		return;
	if (!log->drop_samples && !log->drop_records &&
	    !log->drop_throttled) {
		/* Another caller reported them: give the record back. */
		log->cur->used -= sizeof(*r);
	} else {
		r->pl_samples = log->drop_samples;
		r->pl_records = log->drop_records;
		r->pl_throttled = log->drop_throttled;
		log->drop_samples = 0;
		log->drop_records = 0;
		log->drop_throttled = 0;
	}
	hwpmc_log_commit(log, flags);
}

/*
 * Has @po or @log drops that no DROPNOTIFY reported yet?  A hint, read
 * without the log's lock (a caller that sees none now sees them at its
 * next call, or the log's flush or removal reports them).  Any context.
 */
bool hwpmc_log_drops_pending(struct hwpmc_owner *po, struct hwpmc_log *log)
{
	if (atomic64_read(&po->ring_drops) || atomic64_read(&po->throttled))
		return true;
	/* Racy by design: written under log->lock, read here as a hint. */
	return data_race(log->drop_samples || log->drop_records ||
			 log->drop_throttled);
}

void hwpmc_log_dropnotify(struct hwpmc_owner *po, struct hwpmc_log *log)
{
	__hwpmc_log_dropnotify(po, log, false);
}

/*
 * As hwpmc_log_dropnotify(), for a sampler in hard interrupt context: never
 * waits for the log's lock (hwpmc_log_try_reserve_filled()); while another
 * CPU holds it the drops stay counted for the next caller.
 */
void hwpmc_log_try_dropnotify(struct hwpmc_owner *po, struct hwpmc_log *log)
{
	__hwpmc_log_dropnotify(po, log, true);
}

/*
 * Write what is left of buffer @b.  Returns 0, -EINTR when interrupted (by
 * the slice timer, the log's destruction or a signal sent from outside;
 * what was written stays written, in b->done), or the write's error.
 */
static int hwpmc_log_write(struct hwpmc_log *log, struct hwpmc_logbuf *b)
{
	const struct cred *old = override_creds(log->cred);
	ssize_t n;
	int err = 0;

	while (b->done < b->used) {
		loff_t pos = log->file->f_pos;

		if (signal_pending(current)) {
			err = -EINTR;
			break;
		}
		n = kernel_write(log->file, b->data + b->done,
				 b->used - b->done, &pos);
		if (n > 0) {
			log->file->f_pos = pos;
			b->done += n;
			hwpmc_stat_add(log_bytes, n);
			continue;
		}
		if (n == -EAGAIN) {
			/* A non-blocking descriptor: wait for room. */
			schedule_timeout_interruptible(msecs_to_jiffies(10));
			continue;
		}
		if (n == -EINTR || n == -ERESTARTSYS || n == -ERESTARTNOINTR ||
		    n == -ERESTARTNOHAND) {
			err = -EINTR;
			break;
		}
		err = n ? n : -ENOSPC;
		break;
	}
	revert_creds(old);
	return err;
}

/* Queue @log for the writers (it has buffers to write).  Any context. */
static void hwpmc_log_queue(struct hwpmc_log *log)
{
	unsigned long flags;
	bool wake = false;

	raw_spin_lock_irqsave(&hwpmc_runq_lock, flags);
	if (!log->queued && !log->writer && !log->dead) {
		list_add_tail(&log->rnode, &hwpmc_runq);
		log->queued = true;
		wake = true;
	}
	raw_spin_unlock_irqrestore(&hwpmc_runq_lock, flags);
	if (wake)
		wake_up(&hwpmc_runq_wait);
}

/* The first log waiting for a writer, now @w's. */
static struct hwpmc_log *hwpmc_runq_pop(struct hwpmc_writer *w)
{
	struct hwpmc_log *log;
	unsigned long flags;

	raw_spin_lock_irqsave(&hwpmc_runq_lock, flags);
	log = list_first_entry_or_null(&hwpmc_runq, struct hwpmc_log, rnode);
	if (log) {
		list_del(&log->rnode);
		log->queued = false;
		log->writer = w;
		w->log = log;
	}
	raw_spin_unlock_irqrestore(&hwpmc_runq_lock, flags);
	return log;
}

static bool hwpmc_log_pending(struct hwpmc_log *log)
{
	unsigned long flags;
	bool pending;

	raw_spin_lock_irqsave(&log->lock, flags);
	pending = log->wbuf || !list_empty(&log->full);
	raw_spin_unlock_irqrestore(&log->lock, flags);
	return pending;
}

/*
 * One turn of writer @w on @log: (the rest of) one buffer, so that logs
 * take turns.  A log whose write failed drops its buffers unwritten.
 */
static void hwpmc_log_turn(struct hwpmc_writer *w, struct hwpmc_log *log)
{
	struct hwpmc_logbuf *b;
	unsigned long flags;
	int err;

	raw_spin_lock_irqsave(&log->lock, flags);
	b = log->wbuf;
	if (!b) {
		b = list_first_entry_or_null(&log->full, struct hwpmc_logbuf,
					     node);
		if (b) {
			list_del(&b->node);
			log->wbuf = b;
		}
	}
	err = log->error;
	raw_spin_unlock_irqrestore(&log->lock, flags);
	if (!b)
		return;
	if (!err) {
		mod_timer(&w->slice, jiffies + HWPMC_WRITE_SLICE);
		err = hwpmc_log_write(log, b);
		del_timer_sync(&w->slice);
		if (err == -EINTR)
			return;		/* preempted: the rest at its next turn */
	} else {
		err = 0;		/* stopped by an error: drop it */
	}
	raw_spin_lock_irqsave(&log->lock, flags);
	log->wbuf = NULL;
	if (err && !log->error) {
		log->error = err;
		log->stopped = true;
	} else {
		err = 0;
	}
	raw_spin_unlock_irqrestore(&log->lock, flags);
	hwpmc_buf_free(log, b);
	if (err) {
		pr_debug("log write failed: %d; logging stopped\n", err);
		hwpmc_signal_pid(log->owner, SIGIO);
	}
}

/* A writer of the pool: takes the logs in turn, one buffer each. */
static int hwpmc_writer_fn(void *arg)
{
	struct hwpmc_writer *w = arg;
	struct hwpmc_log *log;
	unsigned long flags;

	/* The slice timer interrupts a blocked write with SIGKILL. */
	allow_signal(SIGKILL);
	while (!kthread_should_stop()) {
		/*
		 * A signal left pending (the slice timer's, or one sent from
		 * outside: root may SIGKILL this thread) would end every
		 * wait below at once, and the writer would spin: forget it.
		 */
		flush_signals(current);
		log = hwpmc_runq_pop(w);
		if (!log) {
			wait_event_interruptible(hwpmc_runq_wait,
						 !list_empty(&hwpmc_runq) ||
						 kthread_should_stop());
			continue;
		}
		hwpmc_log_turn(w, log);
		/* Without a writer the log may be freed, after RCU. */
		rcu_read_lock();
		raw_spin_lock_irqsave(&hwpmc_runq_lock, flags);
		log->writer = NULL;
		w->log = NULL;
		raw_spin_unlock_irqrestore(&hwpmc_runq_lock, flags);
		if (hwpmc_log_pending(log))
			hwpmc_log_queue(log);	/* to the back of the queue */
		wake_up_all(&log->idle);
		rcu_read_unlock();
	}
	flush_signals(current);
	return 0;
}

static bool hwpmc_log_drained(struct hwpmc_log *log)
{
	return !hwpmc_log_pending(log);
}

/* Ship the current buffer and have the writers take it. */
static void hwpmc_log_push(struct hwpmc_log *log)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&log->lock, flags);
	hwpmc_log_ship(log);
	raw_spin_unlock_irqrestore(&log->lock, flags);
	hwpmc_log_queue(log);
}

/*
 * Ship the current buffer and wait until the writers have written all.
 * @timeout in jiffies (MAX_SCHEDULE_TIMEOUT: until done or a fatal
 * signal).  Returns false if it gave up.
 */
static bool hwpmc_log_drain(struct hwpmc_log *log, long timeout)
{
	hwpmc_log_push(log);
	return wait_event_killable_timeout(log->idle, hwpmc_log_drained(log),
					   timeout) > 0;
}

/*
 * A log operation's unbounded drain (FLUSHLOG, CLOSELOG, de-configure),
 * with the owner's log_lock held: as hwpmc_log_drain(), but it also ends
 * when the owner is shut down (hwpmc_log_owner_abort()), so that the
 * shutdown, which needs log_lock, never waits for a reader that does not
 * read.  Returns 0 when drained, -EINTR on a fatal signal, -ESRCH when
 * the owner was shut down meanwhile.
 */
static int hwpmc_log_drain_op(struct hwpmc_owner *po, struct hwpmc_log *log)
{
	long left;

	lockdep_assert_held(&po->log_lock);
	hwpmc_log_push(log);
	/*
	 * Either hwpmc_log_owner_abort() sees this log (and wakes it), or
	 * the condition, checked after prepare_to_wait()'s barrier, sees
	 * log_abort.
	 */
	rcu_assign_pointer(po->log_waiting, log);
	left = wait_event_killable_timeout(log->idle,
					   hwpmc_log_drained(log) ||
					   READ_ONCE(po->log_abort),
					   MAX_SCHEDULE_TIMEOUT);
	RCU_INIT_POINTER(po->log_waiting, NULL);
	if (left < 0)
		return -EINTR;
	return hwpmc_log_drained(log) ? 0 : -ESRCH;
}

static void hwpmc_log_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct hwpmc_log, rcu));
}

/*
 * Stop accepting records, drain (or abort), wait for the writer that may
 * still be on it (its slice timer interrupts it), give its buffers back
 * and its references up.
 */
static void hwpmc_log_destroy(struct hwpmc_owner *po, struct hwpmc_log *log,
			      long timeout)
{
	struct hwpmc_logbuf *b, *tmp;
	unsigned long flags;
	bool drained;
	int err;

	if (timeout == MAX_SCHEDULE_TIMEOUT) {
		/* An operation's: until drained or killed. */
		err = hwpmc_log_drain_op(po, log);
		/* Shut down meanwhile: what the shutdown would give it. */
		drained = err == -ESRCH ?
			  hwpmc_log_drain(log, HWPMC_LOG_SHUTDOWN_WAIT) : !err;
	} else {
		drained = hwpmc_log_drain(log, timeout);
	}
	if (!drained) {
		/* A reader that never reads must not hang its owner. */
		raw_spin_lock_irqsave(&log->lock, flags);
		if (!log->error)
			log->error = -EINTR;
		raw_spin_unlock_irqrestore(&log->lock, flags);
	}
	raw_spin_lock_irqsave(&log->lock, flags);
	log->stopped = true;
	raw_spin_unlock_irqrestore(&log->lock, flags);
	/* No new kick now: the one in flight still queues it. */
	irq_work_sync(&log->kick);
	raw_spin_lock_irqsave(&hwpmc_runq_lock, flags);
	log->dead = true;
	if (log->queued) {
		list_del(&log->rnode);
		log->queued = false;
	}
	raw_spin_unlock_irqrestore(&hwpmc_runq_lock, flags);
	wait_event(log->idle, !READ_ONCE(log->writer));
	/* Whatever was not written goes back unwritten. */
	if (log->wbuf)
		hwpmc_buf_free(log, log->wbuf);
	list_for_each_entry_safe(b, tmp, &log->full, node) {
		list_del(&b->node);
		hwpmc_buf_free(log, b);
	}
	if (log->cur)
		hwpmc_buf_free(log, log->cur);
	log->wbuf = NULL;
	log->cur = NULL;
	fput(log->file);
	put_cred(log->cred);
	put_pid(log->owner);
	put_pid_ns(log->pid_ns);
}

static void hwpmc_log_initialize(struct hwpmc_log *log)
{
	struct pmclog_initialize *r;
	unsigned long flags;

	r = hwpmc_log_reserve(log, PMCLOG_TYPE_INITIALIZE, sizeof(*r), &flags);
	if (!r)
		return;
	r->pl_version = PMCLOG_VERSION;
	r->pl_cputype = hwpmc_cputype();
	r->pl_tsc_freq = (u64)tsc_khz * 1000;
	r->pl_wallclock = ktime_get_real_ns() -
			  (ktime_get_mono_fast_ns() - r->pl_hdr.pl_time);
	r->pl_ncpu = nr_cpu_ids;
	r->pl_pagesize = PAGE_SIZE;
	hwpmc_log_commit(log, flags);
}

/*
 * Count a new log against its configurer's real uid: EMFILE beyond
 * kernel.hwpmc.max_logs_per_user (CAP_PERFMON is not counted).
 */
static int hwpmc_user_logs_get(struct hwpmc_log *log)
{
	unsigned long uid = __kuid_val(log->uid), n;
	void *cur;
	int err;

	lockdep_assert_held(&hwpmc_sx);
	if (log->priv)
		return 0;
	cur = xa_load(&hwpmc_user_logs, uid);
	n = cur ? xa_to_value(cur) : 0;
	if (n >= READ_ONCE(hwpmc_max_logs_per_user))
		return -EMFILE;
	err = xa_err(xa_store(&hwpmc_user_logs, uid, xa_mk_value(n + 1),
			      GFP_KERNEL));
	if (!err)
		log->counted = true;
	return err;
}

static void hwpmc_user_logs_put(struct hwpmc_log *log)
{
	unsigned long uid = __kuid_val(log->uid), n;
	void *cur;

	lockdep_assert_held(&hwpmc_sx);
	if (!log->counted)
		return;
	log->counted = false;
	cur = xa_load(&hwpmc_user_logs, uid);
	n = cur ? xa_to_value(cur) : 0;
	if (n <= 1)
		xa_erase(&hwpmc_user_logs, uid);
	else	/* replaces an entry: allocates nothing */
		xa_store(&hwpmc_user_logs, uid, xa_mk_value(n - 1), GFP_KERNEL);
}

/*
 * The log operations serialize on the owner's log_lock and take hwpmc_sx
 * only for the moments they change PMCs or publish the log, so a writer
 * stalled on a slow pipe never blocks other owners.
 */
static struct hwpmc_log *hwpmc_owner_log(struct hwpmc_owner *po)
{
	return rcu_dereference_protected(po->log,
					 lockdep_is_held(&po->log_lock));
}

/* CONFIGURELOG with a descriptor. */
static int hwpmc_log_configure(struct hwpmc_owner *po, int fd)
{
	struct hwpmc_log *log;
	struct file *file;
	int err;

	if (hwpmc_owner_log(po))
		return -EBUSY;
	file = fget(fd);
	if (!file)
		return -EBADF;
	if (!(file->f_mode & FMODE_WRITE)) {
		fput(file);
		return -EBADF;
	}
	/*
	 * A log on /dev/hwpmc would hold an owner's file, maybe its own:
	 * that owner's last close would never come, leaking its PMCs and
	 * this log.  A file the writer cannot write is no log either:
	 * kernel_write() takes only files with ->write_iter and without
	 * ->write (/dev/null and /dev/full have both: every write would fail
	 * with EINVAL and a "kernel write not supported" line in the kernel
	 * log).
	 */
	if (hwpmc_is_device_file(file) || !(file->f_mode & FMODE_CAN_WRITE) ||
	    !file->f_op->write_iter || file->f_op->write) {
		fput(file);
		return -EINVAL;
	}
	log = kzalloc(sizeof(*log), GFP_KERNEL_ACCOUNT);
	if (!log) {
		fput(file);
		return -ENOMEM;
	}
	raw_spin_lock_init(&log->lock);
	INIT_LIST_HEAD(&log->full);
	INIT_LIST_HEAD(&log->rnode);
	init_waitqueue_head(&log->idle);
	init_irq_work(&log->kick, hwpmc_log_kick);
	log->priv = hwpmc_priv_system();
	log->uid = current_uid();
	mutex_lock(&hwpmc_sx);
	/* An owner whose opener exited gets no new log (nor PMCs). */
	err = po->dead ? -ESRCH : hwpmc_user_logs_get(log);
	if (!err) {
		err = hwpmc_pool_get();
		if (err)
			hwpmc_user_logs_put(log);
	}
	mutex_unlock(&hwpmc_sx);
	if (err) {
		kfree(log);
		fput(file);
		return err;
	}
	log->file = file;
	log->cred = get_current_cred();
	log->owner = get_pid(po->pid);
	log->pid_ns = get_pid_ns(po->pid_ns);
	hwpmc_log_initialize(log);
	/*
	 * Published with the records of the PMCs and targets that exist.  An
	 * opener's exit from here on shuts the owner down after this returns
	 * (it takes log_lock, held here), and so removes this log too.
	 */
	hwpmc_log_publish(po, log);
	return 0;
}

/*
 * Take the log away from its owner and end it: PMCs that need a log are
 * stopped, their samples drained into it, @closelog written if asked,
 * then it is flushed (for at most @timeout) and freed.  Returns the kept
 * write error.
 */
static int hwpmc_log_remove(struct hwpmc_owner *po, bool closelog,
			    long timeout)
{
	struct hwpmc_log *log = hwpmc_owner_log(po);
	struct pmclog_closelog *r;
	unsigned long flags;
	int err;

	mutex_lock(&hwpmc_sx);
	/* PMCSTART of a PMC that needs the log fails from now on. */
	po->log_closing = true;
	hwpmc_stop_log_pmcs(po);
	mutex_unlock(&hwpmc_sx);
	/* Samplers that still see those PMCs running finish first. */
	synchronize_rcu();
	hwpmc_samples_drain();
	hwpmc_log_dropnotify(po, log);
	if (closelog) {
		/* CLOSELOG is the last record: the log stops with it. */
		r = hwpmc_log_reserve(log, PMCLOG_TYPE_CLOSELOG, sizeof(*r),
				      &flags);
		if (r) {
			log->stopped = true;
			hwpmc_log_commit(log, flags);
		} else {
			raw_spin_lock_irqsave(&log->lock, flags);
			log->stopped = true;
			raw_spin_unlock_irqrestore(&log->lock, flags);
		}
	}
	mutex_lock(&hwpmc_sx);
	RCU_INIT_POINTER(po->log, NULL);
	po->log_closing = false;
	mutex_unlock(&hwpmc_sx);
	/* Hooks that still see the log finish before it is drained. */
	synchronize_rcu();
	hwpmc_log_destroy(po, log, timeout);
	err = READ_ONCE(log->error);
	mutex_lock(&hwpmc_sx);
	hwpmc_user_logs_put(log);
	hwpmc_pool_put();
	mutex_unlock(&hwpmc_sx);
	call_rcu(&log->rcu, hwpmc_log_free_rcu);
	return err == -EINTR ? 0 : err;
}

/* PMC_OP_CONFIGURELOG: a descriptor configures, -1 de-configures. */
int hwpmc_op_configurelog(struct hwpmc_owner *po,
			  struct pmc_op_configurelog *a)
{
	int err;

	if (a->pm_flags || !HWPMC_RESERVED_ZERO(a->pm_reserved))
		return -EINVAL;
	if (a->pm_logfd < -1)
		return -EBADF;
	if (mutex_lock_killable(&po->log_lock))
		return -EINTR;
	if (a->pm_logfd == -1) {
		if (hwpmc_owner_log(po))
			err = hwpmc_log_remove(po, false, MAX_SCHEDULE_TIMEOUT);
		else
			err = -EINVAL;	/* de-configure without a log */
	} else if (mutex_lock_killable(&po->lock)) {
		err = -EINTR;
	} else {
		/* The owner's lock keeps its PMCs as they are logged. */
		err = hwpmc_log_configure(po, a->pm_logfd);
		mutex_unlock(&po->lock);
	}
	mutex_unlock(&po->log_lock);
	return err;
}

/* PMC_OP_CLOSELOG: a CLOSELOG record, then as de-configure. */
int hwpmc_op_closelog(struct hwpmc_owner *po, void *unused)
{
	int err = -EINVAL;

	if (mutex_lock_killable(&po->log_lock))
		return -EINTR;
	if (hwpmc_owner_log(po))
		err = hwpmc_log_remove(po, true, MAX_SCHEDULE_TIMEOUT);
	mutex_unlock(&po->log_lock);
	return err;
}

/* PMC_OP_FLUSHLOG: write out everything, return any kept error. */
int hwpmc_op_flushlog(struct hwpmc_owner *po, void *unused)
{
	struct hwpmc_log *log;
	int err = -EINVAL;

	if (mutex_lock_killable(&po->log_lock))
		return -EINTR;
	log = hwpmc_owner_log(po);
	if (log) {
		hwpmc_samples_drain();
		hwpmc_log_dropnotify(po, log);
		err = hwpmc_log_drain_op(po, log) ?: READ_ONCE(log->error);
	}
	mutex_unlock(&po->log_lock);
	return err;
}

/*
 * The owner is being shut down: a log operation of it that waits for its
 * log to drain (hwpmc_log_drain_op()) stops waiting and lets log_lock go.
 * Process context.  The log waited on is freed only after an RCU grace
 * period (hwpmc_log_remove()).
 */
void hwpmc_log_owner_abort(struct hwpmc_owner *po)
{
	struct hwpmc_log *log;

	WRITE_ONCE(po->log_abort, true);
	/* Pairs with the barrier in the waiter's prepare_to_wait(). */
	smp_mb();
	rcu_read_lock();
	log = rcu_dereference(po->log_waiting);
	if (log)
		wake_up_all(&log->idle);
	rcu_read_unlock();
}

/*
 * Owner gone (last close, opener's exit): flush what can be flushed, in
 * bounded time.  The caller holds log_lock.
 */
void hwpmc_log_owner_release(struct hwpmc_owner *po)
{
	lockdep_assert_held(&po->log_lock);
	if (hwpmc_owner_log(po))
		hwpmc_log_remove(po, true, HWPMC_LOG_SHUTDOWN_WAIT);
}

/* PMC_OP_WRITELOG: a USERDATA record; EINVAL without a log. */
int hwpmc_op_writelog(struct hwpmc_owner *po, struct pmc_op_writelog *a)
{
	struct pmclog_userdata *r;
	struct hwpmc_log *log;
	unsigned long flags;
	int err = 0;

	if (a->pm_reserved)
		return -EINVAL;
	if (mutex_lock_killable(&po->log_lock))
		return -EINTR;
	log = hwpmc_owner_log(po);
	if (!log) {
		err = -EINVAL;
	} else {
		r = hwpmc_log_reserve(log, PMCLOG_TYPE_USERDATA, sizeof(*r),
				      &flags);
		if (r) {
			r->pl_userdata = a->pm_userdata;
			r->pl_pid = task_tgid_nr_ns(current, log->pid_ns);
			hwpmc_log_commit(log, flags);
		} else {
			err = READ_ONCE(log->error) ?: -ENOBUFS;
		}
	}
	mutex_unlock(&po->log_lock);
	return err;
}

/* Bytes a record with a string of @slen (without NUL) takes. */
u32 hwpmc_log_strlen(size_t fixed, size_t slen)
{
	return ALIGN(fixed + slen + 1, 8);
}

/* The log of @po for a record from any context; under rcu_read_lock(). */
static struct hwpmc_log *hwpmc_log_of(struct hwpmc_owner *po)
{
	return rcu_dereference(po->log);
}

/* "SOFT-CLOCK.PROF", "TSC", "IAP-event=0xc0,umask=0x0": what a PMC counts. */
static void hwpmc_pmc_name(const struct hwpmc_pmc *pm, char *buf, size_t len)
{
	const struct hwpmc_class_ops *ops = pm->cls->ops;
	const char *ev = ops->event_name ? ops->event_name(pm->event) : NULL;

	if (ops->describe)
		ops->describe(pm, buf, len);
	else if (ev)
		snprintf(buf, len, "%s-%s", ops->name, ev);
	else
		snprintf(buf, len, "%s", ops->name);
}

/* PMCALLOCATE, when the owner has a log.  hwpmc_sx held. */
void hwpmc_log_pmcallocate(struct hwpmc_pmc *pm)
{
	struct pmclog_pmcallocate *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(pm->po);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_PMCALLOCATE, sizeof(*r),
				    &flags) : NULL;
	if (r) {
		r->pl_pmcid = pm->id;
		r->pl_class = pm->cls->ops->class;
		r->pl_event = pm->event;
		r->pl_mode = pm->mode;
		r->pl_flags = pm->flags;
		r->pl_cpu = pm->cpu;
		r->pl_rate = pm->reload;
		hwpmc_pmc_name(pm, r->pl_name, sizeof(r->pl_name));
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

/* A record carrying a path: reserve, fill the fixed part, copy @path. */
static void *hwpmc_log_reserve_path(struct hwpmc_log *log, u32 type,
				    size_t fixed, const char *path,
				    unsigned long *flags)
{
	size_t slen = path ? strnlen(path, PMCLOG_PATH_MAX - 1) : 0;
	char *r = hwpmc_log_reserve(log, type, hwpmc_log_strlen(fixed, slen),
				    flags);

	if (r && slen)
		memcpy(r + fixed, path, slen);
	return r;
}

/* PMCATTACH of @pm to process @pid running @path (may be NULL). */
void hwpmc_log_pmcattach(struct hwpmc_pmc *pm, pid_t pid, const char *path)
{
	struct pmclog_pmcattach *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(pm->po);
	r = log ? hwpmc_log_reserve_path(log, PMCLOG_TYPE_PMCATTACH,
					 sizeof(*r), path, &flags) : NULL;
	if (r) {
		r->pl_pmcid = pm->id;
		r->pl_pid = hwpmc_log_pid(log, pid);
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

void hwpmc_log_pmcdetach(struct hwpmc_pmc *pm, pid_t pid)
{
	struct pmclog_pmcdetach *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(pm->po);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_PMCDETACH, sizeof(*r),
				    &flags) : NULL;
	if (r) {
		r->pl_pmcid = pm->id;
		r->pl_pid = hwpmc_log_pid(log, pid);
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

/*
 * Process records, written from the scheduler and process hooks
 * (tracepoint context, possibly under the runqueue lock): no sleeping, no
 * allocation, raw spinlocks only.
 */
void hwpmc_log_proccsw(struct hwpmc_pmc *pm, pid_t pid, pid_t tid, u64 value)
{
	struct pmclog_proccsw *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(pm->po);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_PROCCSW, sizeof(*r),
				    &flags) : NULL;
	if (r) {
		r->pl_pmcid = pm->id;
		r->pl_pid = hwpmc_log_pid(log, pid);
		r->pl_tid = hwpmc_log_pid(log, tid);
		r->pl_cpu = raw_smp_processor_id();
		r->pl_value = value;
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

void hwpmc_log_procexit(struct hwpmc_pmc *pm, pid_t pid, u64 value)
{
	struct pmclog_procexit *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(pm->po);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_PROCEXIT, sizeof(*r),
				    &flags) : NULL;
	if (r) {
		r->pl_pmcid = pm->id;
		r->pl_pid = hwpmc_log_pid(log, pid);
		r->pl_value = value;
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

void hwpmc_log_procfork(struct hwpmc_owner *po, pid_t ppid, pid_t pid)
{
	struct pmclog_procfork *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(po);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_PROCFORK, sizeof(*r),
				    &flags) : NULL;
	if (r) {
		r->pl_ppid = hwpmc_log_pid(log, ppid);
		r->pl_pid = hwpmc_log_pid(log, pid);
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

/* PROCEXEC into @po's log, for PMC @pmcid (PMC_ID_INVALID: any). */
void hwpmc_log_procexec_id(struct hwpmc_owner *po, u32 pmcid, pid_t pid,
			   u64 base, const char *path)
{
	struct pmclog_procexec *r;
	struct hwpmc_log *log;
	unsigned long flags;

	rcu_read_lock();
	log = hwpmc_log_of(po);
	r = log ? hwpmc_log_reserve_path(log, PMCLOG_TYPE_PROCEXEC, sizeof(*r),
					 path, &flags) : NULL;
	if (r) {
		r->pl_pid = hwpmc_log_pid(log, pid);
		r->pl_pmcid = pmcid;
		r->pl_base = base;
		hwpmc_log_commit(log, flags);
	}
	rcu_read_unlock();
}

void hwpmc_log_procexec(struct hwpmc_pmc *pm, pid_t pid, u64 base,
			const char *path)
{
	hwpmc_log_procexec_id(pm->po, pm->id, pid, base, path);
}
