// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF oracle of oracle_soft_test (issue 12): counts, per thread, the
 * events hwpmc's SOFT class counts, from the same tracepoints, with no help
 * from the module.
 *
 *   SCHED.SWITCH       sched:sched_switch, for prev (the task switched away
 *                      from, which is current); switch-ins are counted too
 *                      (for next), as a consistency check
 *   SCHED.MIGRATE      sched:sched_migrate_task, for the task moved
 *   SYSCALL.ENTER      raw_syscalls:sys_enter, for current
 *   PAGE_FAULT.*       exceptions:page_fault_user and page_fault_kernel,
 *                      for current; WRITE when error_code has X86_PF_WRITE
 *
 * Only tracked threads are counted: those user space puts in the map
 * "tasks", and every task a tracked task creates (sched:sched_process_fork,
 * threads and processes alike), so that a test sees the whole tree below a
 * process from its first instruction on.  A thread's events after its
 * sched:sched_process_exit are kept apart with their times (npost, post_ev,
 * post_ns): hwpmc stops counting a process when its last thread exits, and
 * user space decides from the exit times which of them hwpmc saw.
 *
 * Written against the tracepoints' format fields (BPF_PROG_TYPE_TRACEPOINT
 * with the record layouts below), not CO-RE: it needs no kernel BTF, so it
 * runs on the debug kernel (built without debug info) as on Debian's.  The
 * layouts are the same in 6.1 and 6.12; oracle_soft_test checks them
 * against tracefs's format files before loading and skips if they differ.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "oracle_soft.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ORACLE_MAX_TASKS);
	__type(key, __u32);			/* tid */
	__type(value, struct oracle_task);
} tasks SEC(".maps");

#define X86_PF_WRITE	2

/*
 * Count one @ev of the tracked thread @t: in n[] while it lives; after its
 * sched_process_exit in npost, the first ORACLE_NPOST with their times.
 */
static __always_inline void count(struct oracle_task *t, int ev)
{
	__u64 i;

	if (ev < 0 || ev >= ORACLE_NEV)
		return;
	if (!t->exit_ns) {
		__sync_fetch_and_add(&t->n[ev], 1);
		return;
	}
	i = __sync_fetch_and_add(&t->npost, 1);
	if (i < ORACLE_NPOST) {
		t->post_ev[i] = ev;
		t->post_ns[i] = bpf_ktime_get_ns();
	}
}

static __always_inline struct oracle_task *current_task(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct oracle_task *t = bpf_map_lookup_elem(&tasks, &tid);

	if (t && !t->tgid)
		t->tgid = id >> 32;
	return t;
}

SEC("tracepoint/sched/sched_switch")
int on_switch(struct tp_sched_switch *ctx)
{
	struct oracle_task *t = current_task();	/* prev is current */
	__u32 next = ctx->next_pid;

	if (t && (__u32)ctx->prev_pid == t->tid) {
		count(t, ORACLE_SWITCH);
		t->last_state = ctx->prev_state;
		t->running = 0;
	}
	t = bpf_map_lookup_elem(&tasks, &next);
	if (t) {
		__sync_fetch_and_add(&t->switch_in, 1);
		t->running = 1;
	}
	return 0;
}

SEC("tracepoint/sched/sched_migrate_task")
int on_migrate(struct tp_sched_migrate_task *ctx)
{
	__u32 tid = ctx->pid;
	struct oracle_task *t = bpf_map_lookup_elem(&tasks, &tid);

	if (t)
		count(t, ORACLE_MIGRATE);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int on_sys_enter(struct tp_sys_enter *ctx)
{
	struct oracle_task *t = current_task();

	if (t)
		count(t, ORACLE_SYSCALL);
	return 0;
}

static __always_inline int page_fault(struct tp_page_fault *ctx)
{
	struct oracle_task *t = current_task();

	if (t) {
		count(t, ORACLE_PF_ALL);
		count(t, (ctx->error_code & X86_PF_WRITE) ? ORACLE_PF_WRITE :
							    ORACLE_PF_READ);
	}
	return 0;
}

SEC("tracepoint/exceptions/page_fault_user")
int on_pf_user(struct tp_page_fault *ctx)
{
	return page_fault(ctx);
}

SEC("tracepoint/exceptions/page_fault_kernel")
int on_pf_kernel(struct tp_page_fault *ctx)
{
	return page_fault(ctx);
}

/* A new thread's record is built here: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct oracle_task);
} scratch SEC(".maps");

SEC("tracepoint/sched/sched_process_fork")
int on_fork(struct tp_sched_process_fork *ctx)
{
	__u32 parent = ctx->parent_pid, child = ctx->child_pid, zero = 0;
	struct oracle_task *c, *p;

	if (!bpf_map_lookup_elem(&tasks, &parent))
		return 0;
	c = bpf_map_lookup_elem(&scratch, &zero);
	if (!c)
		return 0;
	__builtin_memset(c, 0, sizeof(*c));
	c->tid = child;
	c->ptid = parent;
	if (!bpf_map_update_elem(&tasks, &child, c, BPF_NOEXIST))
		return 0;
	/* The map is full: the test fails on it. */
	p = bpf_map_lookup_elem(&tasks, &parent);
	if (p)
		p->lost = 1;
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int on_exit(struct tp_sched_process_exit *ctx)
{
	struct oracle_task *t = current_task();

	if (t && (__u32)ctx->pid == t->tid)
		t->exit_ns = bpf_ktime_get_ns();
	return 0;
}
