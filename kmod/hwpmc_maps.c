// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc: MAP_IN / MAP_OUT records, so that every sampled user address can
 * be resolved to a file and an offset.  Logged:
 *  - for a process-scope PMC's target when it is attached;
 *  - for every process when a system-scope sampling PMC starts;
 *  - after an exec, for the new image (a task_work in the exec'ing task,
 *    which first writes the PROCEXEC records: naming the file needs
 *    process context, see hwpmc_maps_exec());
 *  - after an mmap() with PROT_EXEC (shared libraries loaded with dlopen)
 *    and a munmap(), from the sys_exit hook (a task_work again, since
 *    walking the address space needs the mmap lock).
 * Each record goes to every log that is interested in the process: the
 * owners of PMCs attached to it and of running system sampling PMCs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/workqueue.h>
#include <linux/ptrace.h>
#include <linux/binfmts.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <asm/unistd.h>
#include <asm/syscall.h>
#include <asm/compat.h>

#include "hwpmc.h"

#define HWPMC_MAPS_MAXLOGS	8

/* Running system-scope sampling PMCs; hwpmc_sx for writers, RCU reads. */
static LIST_HEAD(hwpmc_sys_samplers);
static DEFINE_SPINLOCK(hwpmc_sys_samplers_lock);

void hwpmc_maps_sys_sampler_add(struct hwpmc_pmc *pm)
{
	spin_lock(&hwpmc_sys_samplers_lock);
	list_add_rcu(&pm->ss_node, &hwpmc_sys_samplers);
	spin_unlock(&hwpmc_sys_samplers_lock);
}

void hwpmc_maps_sys_sampler_del(struct hwpmc_pmc *pm)
{
	spin_lock(&hwpmc_sys_samplers_lock);
	list_del_rcu(&pm->ss_node);
	spin_unlock(&hwpmc_sys_samplers_lock);
}

/* Add @o to the set @po[0..*n) once, if it has a log. */
static void hwpmc_add_owner(struct hwpmc_owner **po, unsigned int *n,
			    struct hwpmc_owner *o)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (po[i] == o)
			return;
	if (*n < HWPMC_MAPS_MAXLOGS && hwpmc_has_log(o))
		po[(*n)++] = o;
}

/*
 * The owners interested in @task's process: those of PMCs attached to it
 * and those of system sampling PMCs.  RCU held; returns how many, each
 * once.
 */
static unsigned int hwpmc_interested(struct task_struct *task,
				     struct hwpmc_owner **po, bool sys)
{
	struct hwpmc_process *pp = hwpmc_proc_find(task->signal);
	struct hwpmc_target *pt;
	struct hwpmc_pmc *pm;
	unsigned int n = 0;

	if (pp)
		list_for_each_entry_rcu(pt, &pp->targets, pp_node)
			hwpmc_add_owner(po, &n, pt->pm->po);
	if (sys)
		list_for_each_entry_rcu(pm, &hwpmc_sys_samplers, ss_node)
			if (hwpmc_running(pm))
				hwpmc_add_owner(po, &n, pm->po);
	return n;
}

static void hwpmc_log_map_in(struct hwpmc_owner *po, pid_t pid,
			     struct vm_area_struct *vma, const char *path)
{
	struct pmclog_map_in *r;
	struct hwpmc_log *log;
	unsigned long flags;
	size_t slen = strnlen(path, PMCLOG_PATH_MAX - 1);

	log = rcu_dereference(po->log);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_MAP_IN,
				    hwpmc_log_strlen(sizeof(*r), slen),
				    &flags) : NULL;
	if (!r)
		return;
	r->pl_pid = hwpmc_log_pid(log, pid);
	r->pl_start = vma->vm_start;
	r->pl_end = vma->vm_end;
	r->pl_pgoff = vma->vm_file ? (u64)vma->vm_pgoff << PAGE_SHIFT : 0;
	memcpy(r->pl_path, path, slen);
	hwpmc_log_commit(log, flags);
}

static void hwpmc_log_map_out(struct hwpmc_owner *po, pid_t pid,
			      unsigned long start, unsigned long end)
{
	struct pmclog_map_out *r;
	struct hwpmc_log *log;
	unsigned long flags;

	log = rcu_dereference(po->log);
	r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_MAP_OUT, sizeof(*r),
				    &flags) : NULL;
	if (!r)
		return;
	r->pl_pid = hwpmc_log_pid(log, pid);
	r->pl_start = start;
	r->pl_end = end;
	hwpmc_log_commit(log, flags);
}

/*
 * The vDSO's code: the mapping that starts at mm->context.vdso (x86).  It
 * has no file; its MAP_IN names it "[vdso]", at offset 0 of its image.
 */
static bool hwpmc_vma_is_vdso(struct vm_area_struct *vma)
{
	return vma->vm_start == (unsigned long)vma->vm_mm->context.vdso;
}

static bool hwpmc_vma_is_code(struct vm_area_struct *vma)
{
	return (vma->vm_flags & VM_EXEC) &&
	       (vma->vm_file || hwpmc_vma_is_vdso(vma));
}

/* MAP_IN of one mapping, to @po or (NULL) every interested owner. */
static void hwpmc_maps_log_vma(struct hwpmc_owner *po, struct task_struct *task,
			       struct vm_area_struct *vma, char *buf)
{
	struct hwpmc_owner *set[HWPMC_MAPS_MAXLOGS];
	unsigned int i, n = 1;
	char *path = vma->vm_file ? d_path(&vma->vm_file->f_path, buf, PATH_MAX) :
				    "[vdso]";

	if (IS_ERR(path))
		return;
	/* Owner pointers are only used inside this RCU section. */
	rcu_read_lock();
	if (po)
		set[0] = po;
	else
		n = hwpmc_interested(task, set, true);
	for (i = 0; i < n; i++)
		hwpmc_log_map_in(set[i], task_tgid_nr(task), vma, path);
	rcu_read_unlock();
}

/*
 * MAP_IN for the executable file mappings of @task's @mm (all of them, or
 * the one containing @addr when @addr is non-zero), to @po or, when @po is
 * NULL, to every interested owner.  Process context: takes the mmap lock.
 */
static void hwpmc_maps_log_mm(struct hwpmc_owner *po, struct task_struct *task,
			      struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma;
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL_ACCOUNT);

	if (!buf)
		return;
	/*
	 * The mm may be stalled by its owner (a thread holding the lock for
	 * writing while it waits on a FUSE or userfaultfd fault): callers
	 * hold no global lock here, and a fatal signal ends the wait.
	 */
	if (mmap_read_lock_killable(mm)) {
		kfree(buf);
		return;
	}
	if (addr) {
		vma = find_vma(mm, addr);
		if (vma && vma->vm_start <= addr && hwpmc_vma_is_code(vma))
			hwpmc_maps_log_vma(po, task, vma, buf);
	} else {
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma)
			if (hwpmc_vma_is_code(vma))
				hwpmc_maps_log_vma(po, task, vma, buf);
	}
	mmap_read_unlock(mm);
	kfree(buf);
}

/* MAP_IN of @task's code mappings into @po's log (PMCATTACH). */
void hwpmc_maps_log_task(struct hwpmc_owner *po, struct task_struct *task)
{
	struct mm_struct *mm;

	if (!hwpmc_has_log(po))
		return;
	mm = get_task_mm(task);
	if (!mm)
		return;
	hwpmc_maps_log_mm(po, task, mm, 0);
	mmput(mm);
}

/*
 * MAP_IN of every process into @po's log (system sampling starts).  The
 * owner's lock at most is held (never hwpmc_sx).
 */
void hwpmc_maps_log_all(struct hwpmc_owner *po)
{
	struct task_struct *p;
	struct pid **pids;
	unsigned int i, n = 0, max = 0;

	if (!hwpmc_has_log(po))
		return;
	rcu_read_lock();
	for_each_process(p)
		max++;
	rcu_read_unlock();
	max += 64;		/* room for what forks meanwhile */
	pids = kvcalloc(max, sizeof(*pids), GFP_KERNEL_ACCOUNT);
	if (!pids)
		return;
	rcu_read_lock();
	for_each_process(p) {
		if (n == max)
			break;
		if (p->mm && !(p->flags & PF_KTHREAD))
			pids[n++] = get_pid(task_tgid(p));
	}
	rcu_read_unlock();
	for (i = 0; i < n; i++) {
		struct task_struct *t = NULL;

		/* A long walk: it yields, and a fatal signal ends it. */
		if (!fatal_signal_pending(current))
			t = get_pid_task(pids[i], PIDTYPE_TGID);
		if (t) {
			hwpmc_maps_log_task(po, t);
			put_task_struct(t);
		}
		put_pid(pids[i]);
		cond_resched();
	}
	kvfree(pids);
}

/* Deferred to the task itself, which may then take its mmap lock. */
struct hwpmc_maps_work {
	struct callback_head cb;
	unsigned long addr;		/* 0: the whole address space */
	struct file *exec;		/* the file exec'd: PROCEXEC first */
	u64 base;			/* its image's start_code */
	bool scan;			/* then the mappings */
};

static void hwpmc_exec_log(struct task_struct *task, u64 base,
			   const char *path);

/*
 * The PROCEXEC records of current's exec of @file.  Process context: the
 * path is resolved here because d_path() may take rename_lock and
 * mount_lock (sleeping locks on PREEMPT_RT) and the fs's seqcount, which
 * the exec tracepoint (preemption off) must not.  A task that is exiting
 * (killed during its exec, its exit records maybe already written) gets
 * none.
 */
static void hwpmc_maps_exec_log(struct file *file, u64 base)
{
	char *buf, *path;

	if (current->flags & PF_EXITING)
		return;
	buf = __getname();	/* PATH_MAX, from the kernel's names cache */
	if (!buf) {
		hwpmc_stat_inc(alloc_failed);
		return;
	}
	path = d_path(&file->f_path, buf, PATH_MAX);
	if (IS_ERR(path)) {
		/* Too long: its last component at least. */
		snprintf(buf, PATH_MAX, "%pD", file);
		path = buf;
	}
	hwpmc_exec_log(current, base, path);
	__putname(buf);
}

/*
 * The work holds a reference on the module (hwpmc_maps_queue()): the
 * task may run it long after the hooks are gone, so the module text must
 * stay until it has.
 */
static void hwpmc_maps_work_fn(struct callback_head *cb)
{
	struct hwpmc_maps_work *w = container_of(cb, struct hwpmc_maps_work,
						 cb);

	if (w->exec) {
		hwpmc_maps_exec_log(w->exec, w->base);
		fput(w->exec);
	}
	if (w->scan && current->mm)
		hwpmc_maps_log_mm(NULL, current, current->mm, w->addr);
	kfree(w);
	/* Last, so that it is a tail call: nothing of ours runs after it. */
	module_put(THIS_MODULE);
}

/*
 * The hooks that queue a scan run in tracepoint context (preemption off),
 * where PREEMPT_RT allows no allocation: they take a work from a reserve,
 * filled in process context (when a sampling PMC is allocated, and by a
 * work item when it runs low).  An empty reserve loses the scan (counted
 * in GETDRIVERSTATS' pm_alloc_failed).
 */
#define HWPMC_MAPS_RESERVE	64
static struct hwpmc_maps_work *hwpmc_maps_reserve[HWPMC_MAPS_RESERVE];
static unsigned int hwpmc_maps_nreserve;
static DEFINE_RAW_SPINLOCK(hwpmc_maps_reserve_lock);

/* Fill the reserve.  Process context. */
void hwpmc_maps_reserve_fill(void)
{
	struct hwpmc_maps_work *w;
	bool full;

	for (;;) {
		raw_spin_lock(&hwpmc_maps_reserve_lock);
		full = hwpmc_maps_nreserve == HWPMC_MAPS_RESERVE;
		raw_spin_unlock(&hwpmc_maps_reserve_lock);
		if (full)
			return;
		w = kmalloc(sizeof(*w), GFP_KERNEL);
		if (!w)
			return;
		raw_spin_lock(&hwpmc_maps_reserve_lock);
		if (hwpmc_maps_nreserve < HWPMC_MAPS_RESERVE) {
			hwpmc_maps_reserve[hwpmc_maps_nreserve++] = w;
			w = NULL;
		}
		raw_spin_unlock(&hwpmc_maps_reserve_lock);
		kfree(w);
	}
}

static void hwpmc_maps_refill_fn(struct work_struct *work)
{
	hwpmc_maps_reserve_fill();
}

static DECLARE_WORK(hwpmc_maps_refill, hwpmc_maps_refill_fn);

/* Module unload, after the hooks are gone. */
void hwpmc_maps_fini(void)
{
	cancel_work_sync(&hwpmc_maps_refill);
	while (hwpmc_maps_nreserve)
		kfree(hwpmc_maps_reserve[--hwpmc_maps_nreserve]);
}

/* A work from the reserve, or NULL.  Process context, maybe atomic. */
static struct hwpmc_maps_work *hwpmc_maps_work_get(void)
{
	struct hwpmc_maps_work *w = NULL;
	bool low;

	raw_spin_lock(&hwpmc_maps_reserve_lock);
	if (hwpmc_maps_nreserve)
		w = hwpmc_maps_reserve[--hwpmc_maps_nreserve];
	low = hwpmc_maps_nreserve < HWPMC_MAPS_RESERVE / 2;
	raw_spin_unlock(&hwpmc_maps_reserve_lock);
	if (low)
		schedule_work(&hwpmc_maps_refill);
	return w;
}

/*
 * Queue a work for current: PROCEXEC records for its exec of @exec when
 * not NULL, then a mapping scan if @scan (tracepoint context).  False when
 * nothing is queued.
 */
static bool hwpmc_maps_queue_exec(unsigned long addr, bool scan,
				  struct file *exec, u64 base)
{
	struct hwpmc_maps_work *w;

	if (!current->mm || (current->flags & PF_KTHREAD))
		return false;
	w = hwpmc_maps_work_get();
	if (!w) {
		hwpmc_stat_inc(alloc_failed);
		return false;
	}
	/*
	 * A module on its way out queues nothing more.  A work not queued is
	 * freed through RCU: PREEMPT_RT allows no kfree() with preemption off.
	 */
	if (!try_module_get(THIS_MODULE)) {
		kfree_rcu(w, cb);
		return false;
	}
	w->addr = addr;
	w->scan = scan;
	w->exec = exec ? get_file(exec) : NULL;
	w->base = base;
	init_task_work(&w->cb, hwpmc_maps_work_fn);
	if (task_work_add(current, &w->cb, TWA_RESUME)) {
		/* The task is exiting: the work will never run. */
		if (w->exec)
			fput(w->exec);	/* any context: the last put is deferred */
		kfree_rcu(w, cb);
		module_put(THIS_MODULE);
		return false;
	}
	return true;
}

static void hwpmc_maps_queue(unsigned long addr)
{
	hwpmc_maps_queue_exec(addr, true, NULL, 0);
}

/* Does anyone want mappings of @task's process?  Tracepoint context. */
static bool hwpmc_maps_wanted(struct task_struct *task)
{
	struct hwpmc_owner *po[HWPMC_MAPS_MAXLOGS];
	bool wanted;

	rcu_read_lock();
	wanted = hwpmc_interested(task, po, true) > 0;
	rcu_read_unlock();
	return wanted;
}

/* The owners of running system sampling PMCs, each once.  RCU held. */
static unsigned int hwpmc_sys_owners(struct hwpmc_owner **po)
{
	struct hwpmc_pmc *pm;
	unsigned int n = 0;

	list_for_each_entry_rcu(pm, &hwpmc_sys_samplers, ss_node)
		if (hwpmc_running(pm))
			hwpmc_add_owner(po, &n, pm->po);
	return n;
}

/*
 * Process records for the logs of system sampling PMCs, whose samples may
 * name any process: SYSEXIT when the last thread of a process goes,
 * PROCFORK for a new process, PROCEXEC (pmcid PMC_ID_INVALID) when one
 * execs.  Tracepoint context: no sleeping, no allocation.
 */
void hwpmc_maps_sysexit(struct task_struct *task)
{
	struct hwpmc_owner *po[HWPMC_MAPS_MAXLOGS];
	struct pmclog_sysexit *r;
	struct hwpmc_log *log;
	unsigned long flags;
	unsigned int i, n;

	if (list_empty(&hwpmc_sys_samplers))
		return;
	rcu_read_lock();
	n = hwpmc_sys_owners(po);
	for (i = 0; i < n; i++) {
		log = rcu_dereference(po[i]->log);
		r = log ? hwpmc_log_reserve(log, PMCLOG_TYPE_SYSEXIT,
					    sizeof(*r), &flags) : NULL;
		if (r) {
			r->pl_pid = hwpmc_log_pid(log, task_tgid_nr(task));
			hwpmc_log_commit(log, flags);
		}
	}
	rcu_read_unlock();
}

/* @logged[0..@nlogged): owners that already have this fork's PROCFORK. */
void hwpmc_maps_sysfork(struct task_struct *parent, struct task_struct *child,
			struct hwpmc_owner **logged, unsigned int nlogged)
{
	struct hwpmc_owner *po[HWPMC_MAPS_MAXLOGS];
	unsigned int i, j, n;

	if (list_empty(&hwpmc_sys_samplers) || child->signal == parent->signal)
		return;
	rcu_read_lock();
	n = hwpmc_sys_owners(po);
	for (i = 0; i < n; i++) {
		for (j = 0; j < nlogged && logged[j] != po[i]; j++)
			;
		if (j == nlogged)
			hwpmc_log_procfork(po[i], task_tgid_nr(parent),
					   task_tgid_nr(child));
	}
	rcu_read_unlock();
}

/* PROCEXEC records of @task's exec of @path to every log that wants one. */
static void hwpmc_exec_log(struct task_struct *task, u64 base,
			   const char *path)
{
	struct hwpmc_owner *po[HWPMC_MAPS_MAXLOGS];
	unsigned int i, n;

	hwpmc_proc_log_exec(task, base, path);
	if (list_empty(&hwpmc_sys_samplers))
		return;
	rcu_read_lock();
	n = hwpmc_sys_owners(po);
	for (i = 0; i < n; i++)
		hwpmc_log_procexec_id(po[i], PMC_ID_INVALID, task_tgid_nr(task),
				      base, path);
	rcu_read_unlock();
}

/*
 * Exec hook (tracepoint context, after hwpmc_proc_exec(), which says
 * whether PMCs are still attached to @task's process: @monitored).  The
 * PROCEXEC records and the new image's mappings are written by one work
 * that the task runs before it returns to user mode, so no user-mode
 * sample of the new image comes before them.  Without a work (an empty
 * reserve), the records are written here, naming the file as exec was
 * given it.
 */
void hwpmc_maps_exec(struct task_struct *task, struct linux_binprm *bprm,
		     bool monitored)
{
	bool procexec = monitored || !list_empty(&hwpmc_sys_samplers);
	u64 base;

	if (task != current)
		return;
	if (!procexec) {
		if (hwpmc_maps_wanted(task))
			hwpmc_maps_queue(0);
		return;
	}
	base = task->mm ? task->mm->start_code : 0;
	if (!hwpmc_maps_queue_exec(0, hwpmc_maps_wanted(task), bprm->file,
				   base))
		hwpmc_exec_log(task, base, bprm->filename);
}

/*
 * sys_exit hook (only attached while a sampling PMC exists): an mmap()
 * that made code, or a munmap().  Tracepoint context.
 */
void hwpmc_maps_syscall_exit(struct pt_regs *regs, long ret)
{
	long nr = syscall_get_nr(current, regs);
	struct hwpmc_owner *po[HWPMC_MAPS_MAXLOGS];
	unsigned int i, n;

	/*
	 * Only native 64-bit calls: for a 32-bit (ia32 or x32) call the
	 * numbers mean other calls (ia32 9 is link, 11 execve) and the
	 * arguments sit in other registers.  TS_COMPAT is still set here.
	 */
	if (in_32bit_syscall())
		return;
	if (nr == __NR_mmap) {
		if (IS_ERR_VALUE(ret) || !(regs->dx & PROT_EXEC))
			return;
		if (hwpmc_maps_wanted(current))
			hwpmc_maps_queue(ret);
	} else if (nr == __NR_munmap && !ret) {
		rcu_read_lock();
		n = hwpmc_interested(current, po, true);
		for (i = 0; i < n; i++)
			hwpmc_log_map_out(po[i], task_tgid_nr(current),
					  regs->di, regs->di + regs->si);
		rcu_read_unlock();
	}
}
