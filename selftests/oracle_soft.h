/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF oracle (oracle_soft.bpf.c) and oracle_soft_test share: the
 * per-thread record in the map "tasks".
 */
#ifndef HWPMC_ORACLE_SOFT_H
#define HWPMC_ORACLE_SOFT_H

#include <linux/types.h>

#define ORACLE_MAX_TASKS	4096

/* The events, in the order of the oracle's counters. */
enum {
	ORACLE_SWITCH,		/* SCHED.SWITCH */
	ORACLE_MIGRATE,		/* SCHED.MIGRATE */
	ORACLE_SYSCALL,		/* SYSCALL.ENTER */
	ORACLE_PF_ALL,		/* PAGE_FAULT.ALL */
	ORACLE_PF_READ,		/* PAGE_FAULT.READ */
	ORACLE_PF_WRITE,	/* PAGE_FAULT.WRITE */
	ORACLE_NEV
};

/*
 * The tracepoint records, as tracefs's format files describe them (after
 * the 8-byte common header); the same in 6.1 and 6.12.  oracle_soft_test
 * checks every field the oracle reads against the running kernel's format
 * files before it loads the program.
 */
struct tp_sched_switch {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	long prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

struct tp_sched_migrate_task {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__s32 orig_cpu;
	__s32 dest_cpu;
};

struct tp_sched_process_fork {
	__u64 common;
	char parent_comm[16];
	__s32 parent_pid;
	char child_comm[16];
	__s32 child_pid;
};

struct tp_sched_process_exit {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
};

struct tp_sys_enter {
	__u64 common;
	long id;
	unsigned long args[6];
};

struct tp_page_fault {
	__u64 common;
	unsigned long address;
	unsigned long ip;
	unsigned long error_code;
};

/*
 * Post-exit events kept with their times (the final switch-out, the
 * exit's page faults...).  8 was too few on the debug kernel, where an
 * exiting thread is switched out and faults more often before it is gone.
 */
#define ORACLE_NPOST	32

struct oracle_task {
	__u32 tid;
	__u32 ptid;		/* the creating thread; 0 if put by user space */
	__u32 tgid;		/* learnt when the thread is current; 0 before */
	__u32 running;		/* switched in and not out since */
	__s64 last_state;	/* prev_state of its last switch-out */
	__u64 exit_ns;		/* sched_process_exit time; 0 while alive */
	__u64 switch_in;	/* switches to it */
	__u64 lost;		/* a child of it did not fit in the map */
	__u64 n[ORACLE_NEV];	/* up to its sched_process_exit */
	/* after it: how many, and the first ORACLE_NPOST (event, time) */
	__u64 npost;
	__u64 post_ev[ORACLE_NPOST];
	__u64 post_ns[ORACLE_NPOST];
};

#endif
