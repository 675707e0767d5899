// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: per-CPU sample rings.  A sample is taken in interrupt or NMI
 * context (or a tracepoint) on the CPU that saw the event and goes into
 * that CPU's ring without a lock; a worker drains the rings into the
 * owners' logs as CALLCHAIN records.  A sample that finds its ring full is
 * dropped and counted, globally (GETDRIVERSTATS) and for its owner (a
 * DROPNOTIFY record); so is a sample its CPU was too busy to take
 * (throttled): taken = logged + dropped + throttled always holds.
 *
 * A PMC_F_USERSTACK sample also holds the user registers and a copy of
 * the top of the user stack: the copy goes to one of the ring's stack
 * areas, the one of the PMC's tier (small copies, at most
 * PMC_USTACK_SMALL bytes, or large ones), one stride per slot.  The
 * drainer logs it as a USERSTACK record right after the CALLCHAIN, in the
 * same reservation.  A tier's areas live exactly as long as some
 * USERSTACK PMC of that tier does (see hwpmc_samples_ustack_get()).
 *
 * The rings are shared by every owner, but not first-come: while more
 * than one owner has sampling PMCs, each may hold at most half of a CPU's
 * ring (at least one slot), so that an owner sampling as fast as it can
 * cannot make another's samples find the ring full.
 *
 * A sample taken in hard interrupt context but not NMI (the SOFT class's
 * timers: CLOCK.PROF, CLOCK.HARD) is not queued: it is captured into its
 * CPU's scratch slot (one past the ring's, and a stack copy's room) and
 * logged at once, as perf writes its samples from its timer, so that it
 * costs no drainer, no wake-up and no second copy.  Hard interrupts do
 * not nest, and an NMI that comes meanwhile uses the ring.  A record the
 * log has no room for is dropped and counted as the drainer's are.  A
 * copy of the large tier is not made there (the scratch slot has a
 * small one's room): such a sample goes through the ring.  Nor does a
 * sampler wait for a log another CPU holds locked: that sample is moved
 * into the ring for the drainer.  Many CPUs sampling into one log would
 * otherwise queue on its lock, and a virtual CPU stopped by its
 * hypervisor inside the lock would hold the others' interrupts for as
 * long.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/vmalloc.h>
#include <linux/irq_work.h>
#include <linux/workqueue.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <asm/unwind.h>
#include <asm/local.h>

#include "hwpmc.h"

struct hwpmc_sample {
	struct hwpmc_pmc *pm;
	u32 pid, tid, cpu, flags, nkernel, npc;
	u64 time;
	int ready;			/* written last by the producer */
	u32 us_size;			/* USERSTACK: asked for; 0: none */
	u32 us_tier;			/* its area: HWPMC_US_* */
	u32 us_copied, us_flags;
	u64 us_regs[PMCLOG_US_NREGS];
	u64 pc[];			/* callchaindepth entries */
};

/* The user-stack tiers: a PMC's copies go to the areas of its tier. */
enum {
	HWPMC_US_SMALL,			/* copies of <= PMC_USTACK_SMALL bytes */
	HWPMC_US_LARGE,			/* larger ones, <= max_user_stack */
	HWPMC_US_TIERS
};

struct hwpmc_ring {
	local_t head;			/* slots reserved (this CPU only) */
	unsigned long tail;		/* slots drained (the drainer only) */
	char *slots;
	/* Per tier: the tier's stride per slot, or NULL. */
	char *ustack[HWPMC_US_TIERS];
	struct irq_work kick;
	/* The scratch slot's stack copy (small tier only). */
	char us_scratch[PMC_USTACK_SMALL] __aligned(8);
};

static DEFINE_PER_CPU(struct hwpmc_ring, hwpmc_rings);
static size_t hwpmc_slot_size;
static atomic_t hwpmc_sampling_owners;	/* owners with sampling PMCs */

/*
 * The user-stack areas, per tier: hwpmc_ustack_users[t] counts the live
 * PMC_F_USERSTACK PMCs of tier t (hwpmc_sx); while it is not 0 every
 * CPU's ring has an area of nsamples * hwpmc_ustack_stride[t] bytes for
 * it.  The stride is PMC_USTACK_SMALL for the small tier, and for the
 * large one the max_user_stack its areas were allocated with (the
 * tunable is read-only while the module is loaded, but the samplers and
 * the drainer index with the stride, not the tunable); written only
 * while the tier has no area and read by the samplers after the area's
 * pointer (acquire).
 */
static unsigned int hwpmc_ustack_users[HWPMC_US_TIERS];
static u32 hwpmc_ustack_stride[HWPMC_US_TIERS];

/* The tier of a PMC whose copies are @size bytes.  Any context, NMI too. */
static unsigned int hwpmc_ustack_tier(u32 size)
{
	return size <= PMC_USTACK_SMALL ? HWPMC_US_SMALL : HWPMC_US_LARGE;
}

/* @po allocated a sampling PMC (hwpmc_sx held). */
void hwpmc_sample_owner_add(struct hwpmc_owner *po)
{
	lockdep_assert_held(&hwpmc_sx);
	if (!po->nsamplers++)
		atomic_inc(&hwpmc_sampling_owners);
}

/* @po released one, and its samples were drained (hwpmc_sx held). */
void hwpmc_sample_owner_del(struct hwpmc_owner *po)
{
	lockdep_assert_held(&hwpmc_sx);
	if (!--po->nsamplers)
		atomic_dec(&hwpmc_sampling_owners);
}

/* The most slots of one CPU's ring one owner may hold.  Any context. */
static unsigned int hwpmc_ring_share(void)
{
	if (atomic_read(&hwpmc_sampling_owners) <= 1)
		return hwpmc_nsamples;
	return max(hwpmc_nsamples / 2, 1);
}

static DEFINE_MUTEX(hwpmc_drain_lock);	/* see hwpmc_main.c */
static void hwpmc_drain_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(hwpmc_drain_work, hwpmc_drain_fn);

/* A ring's samples wait at most this long for the drainer (20 ms). */
#define HWPMC_DRAIN_DELAY	max(HZ / 50, 1)

/*
 * Wake the drainer by batch, not per sample: when a ring holds a quarter
 * of its slots (@used), now; otherwise once, HWPMC_DRAIN_DELAY after the
 * first sample that finds no drain pending.  Samples are taken where the
 * workqueue may not be entered (NMI; the scheduler's tracepoints, under
 * the runqueue lock), so the ring's irq_work queues the work: one
 * self-interrupt per batch.  Any context, NMI included; no locks.
 */
static void hwpmc_drain_wake(struct hwpmc_ring *r, unsigned long used)
{
	bool batch = used >= max(hwpmc_nsamples / 4, 1);

	/* Pending already: soon enough, unless a batch waits for a timer. */
	if (delayed_work_pending(&hwpmc_drain_work) &&
	    (!batch || !timer_pending(&hwpmc_drain_work.timer)))
		return;
	irq_work_queue(&r->kick);
}

/* A sample of @pm lost to a full ring, or to its owner's full share. */
static void hwpmc_ring_drop(struct hwpmc_ring *r, struct hwpmc_pmc *pm)
{
	hwpmc_stat_inc(intr_bufferfull);
	hwpmc_stat_inc(samples_dropped);
	atomic64_inc(&pm->po->ring_drops);
	hwpmc_drain_wake(r, hwpmc_nsamples);
}

/* Slot @i of a ring; @i == hwpmc_nsamples: the CPU's scratch slot. */
static struct hwpmc_sample *hwpmc_slot_at(struct hwpmc_ring *r,
					  unsigned long i)
{
	return (struct hwpmc_sample *)(r->slots + i * hwpmc_slot_size);
}

static struct hwpmc_sample *hwpmc_slot(struct hwpmc_ring *r, unsigned long i)
{
	return hwpmc_slot_at(r, i % hwpmc_nsamples);
}

/* irq_work, in hard interrupt context: schedule the drainer. */
static void hwpmc_ring_kick(struct irq_work *w)
{
	struct hwpmc_ring *r = container_of(w, struct hwpmc_ring, kick);
	unsigned long used = local_read(&r->head) - READ_ONCE(r->tail);

	if (used >= max(hwpmc_nsamples / 4, 1))
		mod_delayed_work(system_unbound_wq, &hwpmc_drain_work, 0);
	else
		queue_delayed_work(system_unbound_wq, &hwpmc_drain_work,
				   HWPMC_DRAIN_DELAY);
}

/*
 * Reads of current's user memory for one sample (the stack copy's words,
 * the frames of the walk; the addresses checked below TASK_SIZE_MAX by
 * the caller), not faulting: the caller disabled page faults for the
 * whole sample (hwpmc_sample_take()), so that a word that is not there
 * fails at once.  The sample's first read (*@seen false) is
 * copy_from_user_nofault(), which also makes sure that the memory this
 * CPU sees is current's (not so in an NMI in the middle of a switch of
 * address spaces, nor during an EFI call); the sample's other reads, in
 * the same section without preemption, where that cannot change, are
 * plain loads in one user-access section: a few instructions a word
 * where the checked copy costs a few hundred (its hardened-usercopy
 * checks), as perf walks frames.  @n aligned 8-byte words at @src into
 * @dst: how many were read before the first that failed.  NMI context:
 * no locks.
 */
static __always_inline unsigned int hwpmc_user_words(u64 *dst,
						     const u64 __user *src,
						     unsigned int n,
						     bool *seen)
{
	unsigned int i = 0;

	if (unlikely(!*seen) && n) {
		if (copy_from_user_nofault(dst, src, sizeof(*dst)))
			return 0;
		*seen = true;
		i = 1;
	}
	if (i < n && user_read_access_begin(src + i, (n - i) * sizeof(*dst))) {
		for (; i < n; i++)
			unsafe_get_user(dst[i], src + i, fault);
fault:
		user_read_access_end();
	}
	return i;
}

/*
 * The kernel frames above @regs (kernel mode) into @s's PCs from @n, up
 * to @max: the new count.  Out of line, so that a user-mode sample does
 * not pay for the unwinder's state (which the kernel's stack
 * initialization zeroes at every call).  NMI context: no locks.
 */
static noinline unsigned int hwpmc_kernel_chain(struct hwpmc_sample *s,
						struct pt_regs *regs,
						unsigned int n,
						unsigned int max)
{
	struct unwind_state state;

	for (unwind_start(&state, current, regs, NULL);
	     !unwind_done(&state) && n < max; unwind_next_frame(&state)) {
		unsigned long addr = unwind_get_return_address(&state);

		if (!addr)
			break;
		if (n == 1 && addr == s->pc[0])
			continue;
		s->pc[n++] = addr;
	}
	return n;
}

/*
 * The callchain of the interrupted context: kernel frames (ORC unwinder)
 * when kernel mode was interrupted, then user frames by frame pointers,
 * read without faulting.  @kern false (the owner may not see kernel
 * addresses, pm->priv_kernel): a sample in kernel mode records only the
 * user-mode state the task entered the kernel from, marked
 * PMCLOG_CC_F_KERNEL_HIDDEN, and no address at or above TASK_SIZE_MAX is
 * ever recorded.  Runs in NMI context: no locks, no allocation.
 */
static void hwpmc_callchain(struct hwpmc_sample *s, struct pt_regs *regs,
			    bool chain, bool kern, bool *seen)
{
	unsigned int max = hwpmc_callchaindepth, n = 0;
	struct pt_regs *uregs = NULL;
	unsigned long fp;

	if (regs && !user_mode(regs) && !kern) {
		s->flags |= PMCLOG_CC_F_KERNEL_HIDDEN;
		if (current->mm && !(current->flags & PF_KTHREAD))
			uregs = task_pt_regs(current);
	} else if (regs && !user_mode(regs)) {
		s->pc[n++] = instruction_pointer(regs);
		if (chain)
			n = hwpmc_kernel_chain(s, regs, n, max);
		s->nkernel = n;
		if (current->mm && !(current->flags & PF_KTHREAD))
			uregs = task_pt_regs(current);
	} else {
		uregs = regs;
		s->flags |= PMCLOG_CC_F_USER;
	}
	if (uregs && n < max &&
	    (kern || instruction_pointer(uregs) < TASK_SIZE_MAX)) {
		s->pc[n++] = instruction_pointer(uregs);
		fp = uregs->bp;
		/*
		 * A 32-bit (compat) context has 4-byte frames: the 8-byte
		 * walk would read garbage.  Only its PC then; the code
		 * segment in the saved registers says which it is.
		 */
		while (chain && n < max && user_64bit_mode(uregs)) {
			/* A frame: the next frame pointer, the return address */
			u64 frame[2];

			if (!fp || (fp & (sizeof(long) - 1)) ||
			    fp >= TASK_SIZE_MAX - sizeof(frame))
				break;
			if (hwpmc_user_words(frame, (const u64 __user *)fp,
					     2, seen) != 2)
				break;
			if (!frame[1] || (!kern && frame[1] >= TASK_SIZE_MAX))
				break;
			s->pc[n++] = frame[1];
			if (frame[0] <= fp)
				break;
			fp = frame[0];
		}
		if (chain && n == max)
			s->flags |= PMCLOG_CC_F_TRUNCATED;
	}
	s->npc = n;
}

/*
 * The user-mode registers of current for a USERSTACK sample interrupted
 * at @regs (user or kernel mode), or NULL: a kernel thread, or an NMI
 * that came while the entry code was still saving them (its stack
 * pointer inside their frame, which is then only partly written; an
 * interrupt cannot come there).  NMI context: no locks.
 */
static struct pt_regs *hwpmc_user_regs(struct pt_regs *regs)
{
	struct pt_regs *u;

	if (regs && user_mode(regs))
		return regs;
	if (!current->mm || (current->flags & PF_KTHREAD))
		return NULL;
	u = task_pt_regs(current);
	if (in_nmi() && regs && regs->sp > (unsigned long)&u->r11 &&
	    regs->sp <= (unsigned long)(u + 1))
		return NULL;
	return u;
}

/*
 * The USERSTACK part of slot @idx (h % nsamples, or the scratch slot's
 * nsamples) of @r: the registers of @uregs in DWARF
 * order and up to @size bytes of the stack from its rsp, copied a page
 * at a time without faulting (a short copy stops at the first page that
 * fails) into the slot's stride of the area of @size's tier; @copy false
 * (@uregs are another task's): no copy.  @kern false: nothing at or
 * above TASK_SIZE_MAX is recorded as a PC or stack pointer.  NMI
 * context: no locks, no allocation (the area exists while the PMC does).
 */
static void hwpmc_ustack(struct hwpmc_sample *s, struct hwpmc_ring *r,
			 unsigned long idx, struct pt_regs *uregs, u32 size,
			 bool kern, bool copy, bool *seen)
{
	unsigned int tier = hwpmc_ustack_tier(size);
	bool scratch = idx == hwpmc_nsamples;	/* small tier only */
	unsigned long sp, addr, chunk;
	u32 done = 0, stride;
	char *dst = NULL;

	if (copy && scratch)
		dst = r->us_scratch;
	else if (copy)	/* Pairs with the release in hwpmc_samples_ustack_get(). */
		dst = smp_load_acquire(&r->ustack[tier]);

	s->us_size = size;
	s->us_tier = tier;
	s->us_copied = 0;
	s->us_flags = PMCLOG_US_F_SHORT;
	if (!uregs || !user_64bit_mode(uregs) ||
	    (!kern && (uregs->ip >= TASK_SIZE_MAX ||
		       uregs->sp >= TASK_SIZE_MAX))) {
		/* No registers: the record's are zero. */
		memset(s->us_regs, 0, sizeof(s->us_regs));
		return;
	}
	/*
	 * All 17 written below (no memset first): nothing of the slot's last
	 * sample may show, so a register added here is added to the ABI too.
	 */
	BUILD_BUG_ON(ARRAY_SIZE(s->us_regs) != 17);
	s->us_regs[0] = uregs->ax;
	s->us_regs[1] = uregs->dx;
	s->us_regs[2] = uregs->cx;
	s->us_regs[3] = uregs->bx;
	s->us_regs[4] = uregs->si;
	s->us_regs[5] = uregs->di;
	s->us_regs[6] = uregs->bp;
	s->us_regs[7] = uregs->sp;
	s->us_regs[8] = uregs->r8;
	s->us_regs[9] = uregs->r9;
	s->us_regs[10] = uregs->r10;
	s->us_regs[11] = uregs->r11;
	s->us_regs[12] = uregs->r12;
	s->us_regs[13] = uregs->r13;
	s->us_regs[14] = uregs->r14;
	s->us_regs[15] = uregs->r15;
	s->us_regs[16] = uregs->ip;
	s->us_flags |= PMCLOG_US_F_REGS;
	if (!dst)
		return;
	/*
	 * A slot holds the stride: the copy never exceeds it (the tier's
	 * stride is PMC_USTACK_SMALL or, for the large one, max_user_stack,
	 * which PMCALLOCATE keeps pm_ustack_size within; a copy cut here
	 * would be marked short, not overflow the slot).
	 */
	if (scratch) {
		stride = PMC_USTACK_SMALL;
	} else {
		stride = READ_ONCE(hwpmc_ustack_stride[tier]);
		dst += idx * stride;
	}
	size = min(size, stride);
	sp = uregs->sp;
	/*
	 * A small copy from an aligned stack pointer, below TASK_SIZE_MAX
	 * whole: 8 bytes at a time (hwpmc_user_words(): an aligned word never
	 * spans two pages, so the copy still stops at the first page that
	 * fails), without a checked copy's costs.  Otherwise a page at a
	 * time, checked.
	 */
	if (size <= PMC_USTACK_SMALL && IS_ALIGNED(sp, 8) &&
	    sp <= TASK_SIZE_MAX - size) {
		done = 8 * hwpmc_user_words((u64 *)dst,
					    (const u64 __user *)sp,
					    size / 8, seen);
		size = done;	/* short or whole: no more */
	}
	while (done < size) {
		addr = sp + done;
		if (addr < sp)
			break;
		chunk = min_t(unsigned long, size - done,
			      PAGE_SIZE - offset_in_page(addr));
		if (copy_from_user_nofault(dst + done, (void __user *)addr,
					   chunk))
			break;
		done += chunk;
	}
	s->us_copied = done;
	if (done == s->us_size)
		s->us_flags &= ~PMCLOG_US_F_SHORT;
}

static bool hwpmc_sample_log(struct hwpmc_sample *s, unsigned int cpu,
			     unsigned long idx, bool try);

/*
 * Copy @n 8-byte words: a sample's PCs or stack copy, a few dozen bytes,
 * where memcpy()'s string move has a start-up cost of its own.  The
 * READ_ONCE() keeps the compiler from turning the loop back into a
 * memcpy() call (or a string move) of its own.
 */
static __always_inline void hwpmc_copy_words(u64 *dst, const u64 *src,
					     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = READ_ONCE(src[i]);
}

/*
 * Reserve a slot of this CPU's ring @r for a sample of @pm: its index in
 * *@idx and the slots then in use in *@used; false when the owner's share
 * or the ring is full (the sample dropped and counted).  Any context, NMI
 * included: no locks.
 */
static bool hwpmc_ring_reserve(struct hwpmc_ring *r, struct hwpmc_pmc *pm,
			       unsigned long *idx, unsigned long *used)
{
	/* The owner's share first: released by the drainer. */
	atomic_t *mine = this_cpu_ptr(pm->po->ring_used);
	unsigned long h;

	if (atomic_inc_return(mine) > hwpmc_ring_share()) {
		atomic_dec(mine);
		hwpmc_ring_drop(r, pm);
		return false;
	}
	do {
		h = local_read(&r->head);
		*used = h - READ_ONCE(r->tail);
		if (*used >= hwpmc_nsamples) {
			atomic_dec(mine);
			hwpmc_ring_drop(r, pm);
			return false;
		}
	} while (local_cmpxchg(&r->head, h, h + 1) != h);
	*idx = h % hwpmc_nsamples;
	return true;
}

/* Slot @s of @r is complete: the drainer may take it.  Any context. */
static void hwpmc_ring_publish(struct hwpmc_ring *r, struct hwpmc_sample *s,
			       unsigned long used)
{
	/* Pairs with the drainer's smp_rmb() after it sees s->ready. */
	smp_wmb();
	WRITE_ONCE(s->ready, 1);
	hwpmc_drain_wake(r, used + 1);
}

/*
 * The scratch slot's sample, whose log another CPU holds locked: into
 * the ring, with its stack copy, for the drainer.  Hard interrupt
 * context: no waiting on another CPU.
 */
static void hwpmc_scratch_queue(struct hwpmc_ring *r)
{
	struct hwpmc_sample *scr = hwpmc_slot_at(r, hwpmc_nsamples), *s;
	unsigned long idx, used;
	char *area;

	if (!hwpmc_ring_reserve(r, scr->pm, &idx, &used))
		return;
	s = hwpmc_slot_at(r, idx);
	memcpy(s, scr, struct_size(scr, pc, scr->npc));
	WRITE_ONCE(s->ready, 0);
	if (s->us_copied) {
		/* Pairs with the release in hwpmc_samples_ustack_get(). */
		area = smp_load_acquire(&r->ustack[HWPMC_US_SMALL]);
		if (area) {
			memcpy(area + idx *
			       READ_ONCE(hwpmc_ustack_stride[HWPMC_US_SMALL]),
			       r->us_scratch, s->us_copied);
		} else {
			s->us_copied = 0;
			s->us_flags |= PMCLOG_US_F_SHORT;
		}
	}
	hwpmc_ring_publish(r, s, used);
}

/*
 * Take a sample of @task for @pm with the interrupted registers @regs
 * (NULL: only @task's user-mode state, if it is current): into this
 * CPU's ring, or, in hard interrupt context, straight into the log (see
 * the top of this file).  Callable in NMI context: takes no lock and
 * allocates nothing there (elsewhere only the log's raw spinlocks, and
 * in hard interrupt context only if free: never a wait on another CPU).
 */
void hwpmc_sample_take(struct hwpmc_pmc *pm, struct task_struct *task,
		       struct pt_regs *regs)
{
	struct hwpmc_ring *r = this_cpu_ptr(&hwpmc_rings);
	bool direct = in_hardirq() && !in_nmi() &&
		      READ_ONCE(pm->ustack_size) <= PMC_USTACK_SMALL;
	struct hwpmc_sample *s;
	unsigned long used = 0, idx;
	bool seen = false;	/* see hwpmc_user_words() */

	hwpmc_stat_inc(samples_taken);
	/* A kernel owner takes its samples itself (no log, no ring). */
	if (pm->po->ksample) {
		pm->po->ksample(pm, regs);
		return;
	}
	if (direct)
		idx = hwpmc_nsamples;
	else if (!hwpmc_ring_reserve(r, pm, &idx, &used))
		return;
	s = hwpmc_slot_at(r, idx);
	s->pm = pm;
	s->pid = task_tgid_nr(task);
	s->tid = task_pid_nr(task);
	s->cpu = raw_smp_processor_id();
	s->flags = 0;
	s->nkernel = 0;
	s->npc = 0;
	s->us_size = READ_ONCE(pm->ustack_size);
	s->us_tier = hwpmc_ustack_tier(s->us_size);
	s->us_copied = 0;
	s->us_flags = 0;
	s->time = ktime_get_mono_fast_ns();
	/* See hwpmc_user_words(). */
	pagefault_disable();
	if (task == current) {
		if (s->us_size)
			hwpmc_ustack(s, r, idx, hwpmc_user_regs(regs),
				     s->us_size, pm->priv_kernel, true, &seen);
		if (!regs && current->mm && !(current->flags & PF_KTHREAD))
			regs = task_pt_regs(current);
		hwpmc_callchain(s, regs, pm->flags & PMC_F_CALLCHAIN,
				pm->priv_kernel, &seen);
	} else if (task->mm && !(task->flags & PF_KTHREAD) &&
		   instruction_pointer(task_pt_regs(task)) < TASK_SIZE_MAX) {
		/* Another task (a migration): its user PC, no chain. */
		s->pc[0] = instruction_pointer(task_pt_regs(task));
		s->npc = 1;
		s->flags = PMCLOG_CC_F_USER;
		/* Its saved user registers; its stack is not ours to read. */
		if (s->us_size)
			hwpmc_ustack(s, r, idx, task_pt_regs(task),
				     s->us_size, pm->priv_kernel, false, &seen);
	} else if (s->us_size) {
		/* A kernel thread that is not current: nothing. */
		hwpmc_ustack(s, r, idx, NULL, s->us_size, pm->priv_kernel,
			     false, &seen);
	}
	pagefault_enable();
	if (direct) {
		if (!hwpmc_sample_log(s, s->cpu, idx, true))
			hwpmc_scratch_queue(r);
		return;
	}
	/* The slot is complete before the drainer may see it. */
	hwpmc_ring_publish(r, s, used);
}

/*
 * A sample of @pm that was due but not taken because its CPU is throttled
 * (it spent too long sampling): counted as taken, globally as throttled,
 * and for the owner's next DROPNOTIFY.  Callable in NMI context: no lock,
 * no allocation.
 */
void hwpmc_sample_throttled(struct hwpmc_pmc *pm)
{
	hwpmc_sample_throttled_n(pm, 1);
}

/* @n samples of @pm throttled at once.  NMI-safe as the above. */
void hwpmc_sample_throttled_n(struct hwpmc_pmc *pm, u64 n)
{
	hwpmc_stat_add(samples_taken, n);
	hwpmc_stat_add(samples_throttled, n);
	atomic64_add(n, &pm->po->throttled);
}

/*
 * The USERSTACK record of @s at @us (@len bytes, all written here), from
 * the stack copy of slot @idx of CPU @cpu's ring, in the area of the tier
 * the sampler copied into.  With the log's lock held, by the drainer (which
 * holds hwpmc_drain_lock) or by the sampler itself in hard interrupt
 * context (scratch slot), so the area cannot go meanwhile.
 */
static void hwpmc_sample_log_ustack(struct hwpmc_sample *s,
				    struct pmclog_userstack *us, u32 len,
				    struct pmclog_callchain *cc,
				    unsigned int cpu, unsigned long idx)
{
	struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);
	unsigned int tier = s->us_tier;
	char *area = tier < HWPMC_US_TIERS ? READ_ONCE(r->ustack[tier]) : NULL;
	u32 off = sizeof(*us);

	if (idx == hwpmc_nsamples) {
		/* The scratch slot's copy: its own room, offset 0. */
		area = r->us_scratch;
		idx = 0;
	}

	us->pl_hdr.pl_type = PMCLOG_TYPE_USERSTACK;
	us->pl_hdr.pl_len = len;
	us->pl_hdr.pl_time = s->time;
	us->pl_pid = cc->pl_pid;
	us->pl_tid = cc->pl_tid;
	us->pl_pmcid = s->pm->id;
	us->pl_flags = s->us_flags;
	us->pl_size = s->us_size;
	us->pl_copied = s->us_copied;
	memcpy(us->pl_regs, s->us_regs, sizeof(us->pl_regs));
	if (s->us_copied && area) {
		const void *src = area + idx *
				  READ_ONCE(hwpmc_ustack_stride[tier]);

		/* A copy is whole words but a page-wise one's last piece. */
		if (IS_ALIGNED(s->us_copied, 8) &&
		    s->us_copied <= PMC_USTACK_SMALL)
			hwpmc_copy_words((u64 *)us->pl_stack, src,
					 s->us_copied / 8);
		else
			memcpy(us->pl_stack, src, s->us_copied);
		off += s->us_copied;
	}
	/* The padding (and a copy that has no area any more). */
	memset((char *)us + off, 0, len - off);
}

/*
 * Log sample @s, in slot @idx of CPU @cpu's ring (or its scratch slot),
 * into its owner's log: a CALLCHAIN record and, for a USERSTACK PMC, a
 * USERSTACK one, or the sample is counted as dropped.  With @try, false
 * and nothing done while another CPU holds the log's lock.  Any context
 * but NMI.
 */
static bool hwpmc_sample_log(struct hwpmc_sample *s, unsigned int cpu,
			     unsigned long idx, bool try)
{
	struct pmclog_callchain *cc;
	struct hwpmc_log *log;
	unsigned long flags;
	u32 len = sizeof(*cc) + s->npc * sizeof(u64);
	u32 uslen = 0;

	if (s->us_size)
		uslen = ALIGN(sizeof(struct pmclog_userstack) + s->us_copied,
			      8);

	rcu_read_lock();
	log = rcu_dereference(s->pm->po->log);
	if (!log) {
		/* The log went away with the sample in flight. */
		hwpmc_stat_inc(samples_dropped);
		rcu_read_unlock();
		return true;
	}
	/* One reservation: both records are logged, or the sample dropped. */
	if (try) {
		cc = hwpmc_log_try_reserve_filled(log, PMCLOG_TYPE_CALLCHAIN,
						  len + uslen, &flags);
		if (IS_ERR(cc)) {
			rcu_read_unlock();
			return false;
		}
	} else {
		cc = hwpmc_log_reserve_filled(log, PMCLOG_TYPE_CALLCHAIN,
					      len + uslen, &flags);
	}
	if (cc) {
		cc->pl_hdr.pl_len = len;
		cc->pl_hdr.pl_time = s->time;
		cc->pl_pid = hwpmc_log_pid(log, s->pid);
		cc->pl_tid = hwpmc_log_pid(log, s->tid);
		cc->pl_pmcid = s->pm->id;
		cc->pl_cpu = s->cpu;
		cc->pl_flags = s->flags;
		cc->pl_nkernel = s->nkernel;
		cc->pl_npc = s->npc;
		cc->pl_reserved = 0;
		hwpmc_copy_words(cc->pl_pc, s->pc, s->npc);
		if (uslen)
			hwpmc_sample_log_ustack(s, (void *)((char *)cc + len),
						uslen, cc, cpu, idx);
		hwpmc_log_commit(log, flags);
	} else {
		hwpmc_stat_inc(samples_dropped);
	}
	if (hwpmc_log_drops_pending(s->pm->po, log)) {
		if (try)
			hwpmc_log_try_dropnotify(s->pm->po, log);
		else
			hwpmc_log_dropnotify(s->pm->po, log);
	}
	rcu_read_unlock();
	return true;
}

/*
 * Drain every CPU's ring into the logs.  Process context.  The PMCs named
 * by ready slots are valid: a PMC is only freed after a grace period and a
 * drain (hwpmc_pmc.c).
 */
void hwpmc_samples_drain(void)
{
	unsigned int cpu;

	mutex_lock(&hwpmc_drain_lock);
	hwpmc_stat_inc(log_sweeps);
	for_each_possible_cpu(cpu) {
		struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);

		for (;;) {
			struct hwpmc_sample *s = hwpmc_slot(r, r->tail);

			if (!READ_ONCE(s->ready))
				break;
			/* Read the slot only after seeing it ready. */
			smp_rmb();
			hwpmc_sample_log(s, cpu, r->tail % hwpmc_nsamples,
					 false);
			/* Its owner's share of this ring: one slot back. */
			atomic_dec(per_cpu_ptr(s->pm->po->ring_used, cpu));
			WRITE_ONCE(s->ready, 0);
			/* The slot is free only after it was read. */
			smp_store_release(&r->tail, r->tail + 1);
		}
	}
	mutex_unlock(&hwpmc_drain_lock);
}

static void hwpmc_drain_fn(struct work_struct *w)
{
	hwpmc_samples_drain();
}

int hwpmc_samples_init(void)
{
	unsigned int cpu;

	hwpmc_slot_size = ALIGN(sizeof(struct hwpmc_sample) +
				hwpmc_callchaindepth * sizeof(u64), 64);
	for_each_possible_cpu(cpu) {
		struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);

		/* The ring's slots and the scratch slot. */
		r->slots = vzalloc(hwpmc_slot_size * (hwpmc_nsamples + 1));
		if (!r->slots) {
			hwpmc_samples_fini();
			return -ENOMEM;
		}
		local_set(&r->head, 0);
		r->tail = 0;
		init_irq_work(&r->kick, hwpmc_ring_kick);
	}
	return 0;
}

/* No PMC is left: the rings are empty and nothing kicks them. */
void hwpmc_samples_fini(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);

		if (r->slots)
			irq_work_sync(&r->kick);
	}
	cancel_delayed_work_sync(&hwpmc_drain_work);
	for_each_possible_cpu(cpu) {
		struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);
		unsigned int t;

		vfree(r->slots);
		r->slots = NULL;
		for (t = 0; t < HWPMC_US_TIERS; t++) {
			vfree(r->ustack[t]);
			r->ustack[t] = NULL;
		}
	}
}

/*
 * Free every CPU's user-stack area of tier @tier.  Only when no sampler
 * of a PMC_F_USERSTACK PMC of that tier can run any more and every slot
 * such a sampler filled has been drained: nothing but the drainer (under
 * hwpmc_drain_lock, taken here) and those samplers reads the tier's
 * areas; the other tier's samplers never touch them.  hwpmc_sx held.
 */
static void hwpmc_samples_ustack_free(unsigned int tier)
{
	unsigned int cpu;

	lockdep_assert_held(&hwpmc_sx);
	mutex_lock(&hwpmc_drain_lock);
	for_each_possible_cpu(cpu) {
		struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);
		char *p = r->ustack[tier];

		WRITE_ONCE(r->ustack[tier], NULL);
		vfree(p);
	}
	mutex_unlock(&hwpmc_drain_lock);
}

/*
 * A PMC_F_USERSTACK PMC whose copies are @size bytes is about to be
 * allocated: the stack areas of its tier on every CPU's ring, allocated
 * by the first such PMC of the tier, counted by the others.  hwpmc_sx
 * held.
 *
 * Who pays: two tiers, so that small copies do not cost large areas.  A
 * PMC whose copy is at most PMC_USTACK_SMALL bytes (hwpmc-record -g's
 * 64-byte leaf copy) uses the small tier's areas, nsamples *
 * PMC_USTACK_SMALL bytes per possible CPU (16 KiB by default); a larger
 * one the large tier's, nsamples * max_user_stack bytes per possible CPU
 * (2 MiB by default).  Each tier is one set for the whole system however
 * many owners share it, bounded by root's load-time tunables
 * (max_user_stack=0 refuses the flag), and the two coexist.  They are
 * charged (GFP_KERNEL_ACCOUNT) to the memory cgroup of the task whose
 * PMCALLOCATE creates them, so a container's limit bounds what its users
 * make hwpmc allocate: beyond it PMCALLOCATE fails with ENOMEM, without
 * invoking the OOM killer or a warning (__GFP_RETRY_MAYFAIL,
 * __GFP_NOWARN: the request is optional and the user's to make), and
 * what was allocated goes.  A tier's areas are freed when the last
 * USERSTACK PMC of that tier, of any owner, is released
 * (hwpmc_samples_ustack_put()): no user can keep them past the PMCs that
 * use them.  The charge stays with the creator's cgroup while others'
 * PMCs keep the areas alive, as page cache stays with the cgroup that
 * first read it.
 */
int hwpmc_samples_ustack_get(u32 size)
{
	unsigned int cpu, tier = hwpmc_ustack_tier(size);
	u32 stride = tier == HWPMC_US_SMALL ? PMC_USTACK_SMALL :
					      hwpmc_max_user_stack;

	lockdep_assert_held(&hwpmc_sx);
	if (hwpmc_ustack_users[tier]) {
		hwpmc_ustack_users[tier]++;
		return 0;
	}
	/* The tier has no area, so no sampler reads its stride now. */
	WRITE_ONCE(hwpmc_ustack_stride[tier], stride);
	for_each_possible_cpu(cpu) {
		struct hwpmc_ring *r = per_cpu_ptr(&hwpmc_rings, cpu);
		char *p = __vmalloc((size_t)hwpmc_nsamples * stride,
				    GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				    __GFP_RETRY_MAYFAIL | __GFP_NOWARN);

		if (!p) {
			/* No USERSTACK PMC of the tier: none samples. */
			hwpmc_samples_ustack_free(tier);
			return -ENOMEM;
		}
		/* Seen whole, and with its stride, by the samplers. */
		smp_store_release(&r->ustack[tier], p);
	}
	hwpmc_ustack_users[tier] = 1;
	return 0;
}

/*
 * A PMC_F_USERSTACK PMC whose copies were @size bytes is gone: the last
 * one of its tier frees the tier's areas.  The caller guarantees that
 * this PMC can no longer be sampled (its class released it and a grace
 * period passed, which NMI handlers, interrupts and the hooks'
 * preemption-off sections all end within, so every sampler that saw it
 * has finished), and that the samples it took were drained
 * (hwpmc_pmc_finish()); or that it never ran.  The ring's irq_work and the
 * drain worker touch an area only for such samples.  hwpmc_sx held.
 */
void hwpmc_samples_ustack_put(u32 size)
{
	unsigned int tier = hwpmc_ustack_tier(size);

	lockdep_assert_held(&hwpmc_sx);
	if (WARN_ON_ONCE(!hwpmc_ustack_users[tier]) ||
	    --hwpmc_ustack_users[tier])
		return;
	hwpmc_samples_ustack_free(tier);
}
