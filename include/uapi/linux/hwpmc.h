/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hwpmc: FreeBSD's hardware performance-monitoring counter driver for Linux.
 *
 * This header is the ABI between the kernel module and userland.  The rules:
 *  - every structure uses fixed-width types only, with explicit padding;
 *  - every field named "reserved" (and every unused flag bit) must be zero
 *    on input, or the operation fails with EINVAL;
 *  - ioctl numbers are only ever appended, never reused or renumbered;
 *  - HWPMC_VERSION_MAJOR changes only on an incompatible change; a minor
 *    bump is additive (new ops, new record types, new fields carved out of
 *    reserved space that read as zero from older modules).
 *
 * One ioctl exists per FreeBSD PMC_OP_* operation (see hwpmc(4)); the ioctl
 * number's "nr" is the FreeBSD operation number.
 */
#ifndef _UAPI_LINUX_HWPMC_H
#define _UAPI_LINUX_HWPMC_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Version: major << 24 | minor << 16 | patch, as FreeBSD's PMC_VERSION. */
#define HWPMC_VERSION_MAJOR	1
#define HWPMC_VERSION_MINOR	6
#define HWPMC_VERSION_PATCH	0
#define HWPMC_VERSION_MAKE(maj, min, pat) \
	(((__u32)(maj) << 24) | ((__u32)(min) << 16) | (__u32)(pat))
#define HWPMC_VERSION \
	HWPMC_VERSION_MAKE(HWPMC_VERSION_MAJOR, HWPMC_VERSION_MINOR, \
			   HWPMC_VERSION_PATCH)
#define HWPMC_VERSION_TO_MAJOR(v)	(((v) >> 24) & 0xff)
#define HWPMC_VERSION_TO_MINOR(v)	(((v) >> 16) & 0xff)

#define HWPMC_DEVICE_NAME	"hwpmc"	/* /dev/hwpmc */

/*
 * FreeBSD's EDOOFUS ("programming error") has no Linux counterpart.  hwpmc
 * returns EBADFD (77, "file descriptor in bad state") in its place: starting
 * a PMC that needs a log file while no log file is configured.  No other
 * hwpmc operation returns EBADFD.
 */
#define HWPMC_EDOOFUS		77

/* CPU types (GETCPUINFO cputype). */
#define PMC_CPU_GENERIC		0x00	/* no hardware PMU: TSC and SOFT only */
#define PMC_CPU_INTEL_ARCH	0x01	/* Intel architectural PerfMon */
#define PMC_CPU_AMD_K8		0x02	/* AMD legacy 4 counters */
#define PMC_CPU_AMD_EXT		0x03	/* AMD PerfCtrExtCore, 6 counters */
#define PMC_CPU_AMD_V2		0x04	/* AMD PerfMonV2 */

/* PMC classes. */
#define PMC_CLASS_TSC		0x00	/* CPU timestamp counter */
#define PMC_CLASS_K8		0x02	/* AMD core counters */
#define PMC_CLASS_IAF		0x06	/* Intel fixed-function counters */
#define PMC_CLASS_IAP		0x07	/* Intel programmable counters */
#define PMC_CLASS_SOFT		0x13	/* software events, no PMU needed */
#define PMC_CLASS_MAX		0x13

/* PMC modes. */
#define PMC_MODE_SS		0	/* system scope, sampling */
#define PMC_MODE_SC		1	/* system scope, counting */
#define PMC_MODE_TS		2	/* process ("thread") scope, sampling */
#define PMC_MODE_TC		3	/* process scope, counting */
#define PMC_MODE_MAX		3
#define PMC_MODE_INVALID	4

/* PMC states (GETPMCINFO state, PMCADMIN state). */
#define PMC_STATE_DISABLED	0	/* administratively disabled */
#define PMC_STATE_FREE		1	/* not allocated */
#define PMC_STATE_ALLOCATED	2	/* allocated, never started */
#define PMC_STATE_STOPPED	3
#define PMC_STATE_RUNNING	4
#define PMC_STATE_DELETED	5	/* being released */
#define PMC_STATE_MAX		5

/* Row dispositions (see hwpmc(4) "PMC ROW DISPOSITIONS"). */
#define PMC_DISP_STANDALONE	0
#define PMC_DISP_FREE		1
#define PMC_DISP_THREAD		2
#define PMC_DISP_UNKNOWN	3

/* Capabilities. */
#define PMC_CAP_INTERRUPT	0x0001	/* can sample */
#define PMC_CAP_USER		0x0002	/* can count user mode */
#define PMC_CAP_SYSTEM		0x0004	/* can count kernel mode */
#define PMC_CAP_EDGE		0x0008	/* edge detect */
#define PMC_CAP_THRESHOLD	0x0010	/* counter mask */
#define PMC_CAP_READ		0x0020	/* readable */
#define PMC_CAP_WRITE		0x0040	/* writable */
#define PMC_CAP_INVERT		0x0080	/* invert counter mask */
#define PMC_CAP_QUALIFIER	0x0100	/* unit mask */
#define PMC_CAP_PRECISE		0x0200
#define PMC_CAP_TAGGING		0x0400
#define PMC_CAP_CASCADE		0x0800
#define PMC_CAP_SYSWIDE		0x1000
#define PMC_CAP_DOMWIDE		0x2000
#define PMC_CAP_ANYTHREAD	0x4000	/* Intel AnyThread */
#define PMC_CAP_MASK		0x7fff

/* PMCALLOCATE flags. */
#define PMC_F_DESCENDANTS	0x00000004
#define PMC_F_LOG_PROCCSW	0x00000008
#define PMC_F_LOG_PROCEXIT	0x00000010
#define PMC_F_KGMON		0x00000040	/* unimplemented: EOPNOTSUPP */
#define PMC_F_CALLCHAIN		0x00000080
/*
 * Since 1.5 (log minor 3): each sample also carries the user registers
 * and a copy of the top of the user stack (a USERSTACK record), for
 * unwinding after the fact from DWARF CFI (perf's --call-graph dwarf).
 * The copy's size is pm_ustack_size (see PMCALLOCATE).  Sampling modes
 * only (EINVAL); EOPNOTSUPP when the module's max_user_stack is 0;
 * ENOMEM when the first such PMC's per-CPU stack areas cannot be
 * allocated in the caller's memory cgroup.
 */
#define PMC_F_USERSTACK		0x00000400
#define PMC_F_ALLOCATE_MASK	0x000004dc
/* PMCRW flags. */
#define PMC_F_NEWVALUE		0x00000010	/* write pm_value */
#define PMC_F_OLDVALUE		0x00000020	/* return the old value */
#define PMC_F_RW_MASK		0x00000030

#define PMC_CPU_ANY		0xffffffffU
#define PMC_ID_INVALID		0xffffffffU
#define PMC_PID_SELF		0	/* PMCATTACH/PMCDETACH: the caller */

#define PMC_NAME_MAX		64	/* names, NUL-terminated */
#define PMC_CLASS_TABLE_SIZE	16

/* --- per-operation argument structures ---------------------------------- */

/* GETMODULEVERSION: handshake.  in: the caller's HWPMC_VERSION (or 0 to
 * skip the check); out: the module's.  A different major: EPROTO, with
 * version still filled in.
 */
struct pmc_op_getmoduleversion {
	__u32	pm_version;		/* in: user's, out: module's */
	__u32	pm_reserved;
};

struct pmc_classinfo {
	__u32	pm_class;		/* PMC_CLASS_* */
	__u32	pm_caps;		/* PMC_CAP_* */
	__u32	pm_width;		/* counter width in bits */
	__u32	pm_num;			/* rows of this class */
	__u32	pm_firstrow;		/* row index of the first */
	__u32	pm_reserved[3];
};

/* GETCPUINFO. */
struct pmc_op_getcpuinfo {
	__u32	pm_cputype;		/* PMC_CPU_* */
	__u32	pm_ncpu;		/* highest possible CPU number + 1 */
	__u32	pm_npmc;		/* rows per CPU, all classes */
	__u32	pm_nclass;		/* valid entries of pm_classes */
	__u32	pm_reserved[4];
	struct pmc_classinfo pm_classes[PMC_CLASS_TABLE_SIZE];
};

/* One row of one CPU (GETPMCINFO). */
struct pmc_info {
	char	pm_name[PMC_NAME_MAX];	/* e.g. "SOFT-3" */
	__u32	pm_class;
	__u32	pm_enabled;		/* 0: administratively disabled */
	__u32	pm_rowdisp;		/* PMC_DISP_* */
	__s32	pm_ownerpid;		/* system-scope owner here, or -1 */
	__u32	pm_state;		/* PMC_STATE_* of that PMC, or FREE */
	__u32	pm_mode;		/* its mode, or PMC_MODE_INVALID */
	__u32	pm_event;		/* its event: HWPMC_EV_GLOBAL() */
	__u32	pm_flags;		/* its PMC_F_* allocation flags */
	__u64	pm_reloadcount;		/* its sampling period */
	__u32	pm_unavailable;		/* 1: held by another PMU user (perf) */
	__u32	pm_reserved[3];
};

/*
 * A global event number, as FreeBSD's enum pmc_event and libhwpmc's
 * pmc_name_of_event() take it: the class in bits 24-31, the class's event
 * code (pm_event of PMCALLOCATE) in bits 0-23.  Since 1.4 GETPMCINFO's
 * pm_event is in this form (0 for a row without a PMC); modules 1.3 and
 * older gave the class code alone (libhwpmc converts those).
 */
#define HWPMC_EV_GLOBAL(cls, code) \
	((((__u32)(cls) & 0xffU) << 24) | ((__u32)(code) & 0xffffffU))
#define HWPMC_EV_CLASS(ev)	((__u32)(ev) >> 24)
#define HWPMC_EV_CODE(ev)	((__u32)(ev) & 0xffffffU)

/* GETPMCINFO: rows of one CPU.  Pass pm_info = 0 to learn pm_npmc.  If
 * pm_npmc (in: capacity of the array) is smaller than the row count, the
 * call fails with E2BIG and pm_npmc holds the row count.
 */
struct pmc_op_getpmcinfo {
	__u32	pm_cpu;			/* in */
	__u32	pm_npmc;		/* in: capacity, out: rows */
	__u64	pm_info;		/* in: user pointer to pmc_info[] */
	__u32	pm_reserved[4];
};

/* PMCADMIN: enable or disable one row on one CPU (needs privilege). */
struct pmc_op_pmcadmin {
	__u32	pm_cpu;
	__u32	pm_pmcid;		/* the row index */
	__u32	pm_state;		/* PMC_STATE_DISABLED or _FREE */
	__u32	pm_flags;		/* reserved, 0 */
};

/* PMCALLOCATE. */
struct pmc_op_pmcallocate {
	__u32	pm_cpu;			/* CPU, or PMC_CPU_ANY (process) */
	__u32	pm_class;		/* PMC_CLASS_* */
	__u32	pm_event;		/* class-specific event code */
	__u32	pm_mode;		/* PMC_MODE_* */
	__u32	pm_flags;		/* PMC_F_* allocation flags */
	__u32	pm_caps;		/* PMC_CAP_* wanted */
	__u32	pm_pmcid;		/* out: handle */
	__u32	pm_ustack_size;		/* PMC_F_USERSTACK: bytes, see below */
	__u64	pm_count;		/* initial count / sampling period */
	__u64	pm_config;		/* class-specific (x86: see below) */
	__u64	pm_config1;		/* class-specific, 0 if unused */
	__u32	pm_reserved[6];
};

/*
 * pm_ustack_size (since 1.5; pm_reserved0 before): with PMC_F_USERSTACK,
 * the bytes of user stack each sample copies, a multiple of 8 no larger
 * than the module parameter max_user_stack (default 8192), or 0 for
 * PMC_USTACK_DEFAULT (or max_user_stack if smaller); anything else is
 * EINVAL.  Without the flag it must be 0 (EINVAL).
 */
#define PMC_USTACK_DEFAULT	8192
#define PMC_USTACK_MAX		65536	/* the largest max_user_stack */

/*
 * What the copies cost: they wait in per-CPU areas beside the sample
 * rings, one stride per ring slot (nsamples slots per possible CPU),
 * allocated while such PMCs exist.  A PMC whose copy (pm_ustack_size, or
 * its default) is at most PMC_USTACK_SMALL bytes uses areas of stride
 * PMC_USTACK_SMALL: a USERSTACK of at most PMC_USTACK_SMALL bytes costs
 * PMC_USTACK_SMALL bytes per ring slot, nsamples * PMC_USTACK_SMALL per
 * possible CPU, whatever max_user_stack is.  A larger one uses areas of
 * stride max_user_stack.  Each set of areas exists while a PMC that uses
 * it does.
 */
#define PMC_USTACK_SMALL	64

/*
 * x86 classes (IAP, K8): pm_event is the event select (AMD: 12 bits, bits
 * 8-11 being EventSelect[35:32]); pm_config carries event-select bits 8-31
 * in their hardware positions: the unit mask (8-15), usr (16), os (17),
 * edge (18), anythread (21, Intel only), inv (23) and the counter mask
 * (24-31), PMC_X86_CONFIG_MASK; any other bit (pin control 19, interrupt
 * 20, enable 22, which hwpmc sets itself; anything above 31) is EINVAL, and
 * so is anythread on AMD, where bit 21 is reserved.  Neither usr nor os
 * means both.  pm_config1 is reserved and must be 0 (EINVAL otherwise):
 * hwpmc programs no extra register (Intel's OFFCORE_RSP).  IAF: pm_event
 * is the fixed counter (0 instructions retired, 1 core cycles, 2 reference
 * cycles, 3 topdown slots) and only the usr, os and anythread bits of
 * pm_config apply.  Anythread counts the sibling hyperthread's events too,
 * so it needs the privilege of system-scope PMCs (EPERM) and a CPU that
 * has it (EOPNOTSUPP; PMC_CAP_ANYTHREAD in the class's capabilities).
 */
#define PMC_X86_CONFIG_UMASK(c)		(((c) >> 8) & 0xff)
#define PMC_X86_CONFIG_USR		(1ULL << 16)
#define PMC_X86_CONFIG_OS		(1ULL << 17)
#define PMC_X86_CONFIG_EDGE		(1ULL << 18)
#define PMC_X86_CONFIG_ANYTHREAD	(1ULL << 21)
#define PMC_X86_CONFIG_INV		(1ULL << 23)
#define PMC_X86_CONFIG_CMASK(c)		(((c) >> 24) & 0xff)
#define PMC_X86_CONFIG_MASK		0xffa7ff00ULL	/* settable bits */

/* PMCATTACH, PMCDETACH. */
struct pmc_op_pmcattach {
	__u32	pm_pmcid;
	__s32	pm_pid;			/* PMC_PID_SELF: the caller */
	__u32	pm_reserved[2];
};

/* PMCRELEASE, PMCSTART, PMCSTOP. */
struct pmc_op_simple {
	__u32	pm_pmcid;
	__u32	pm_reserved;
};

/* PMCRW. */
struct pmc_op_pmcrw {
	__u32	pm_pmcid;
	__u32	pm_flags;		/* PMC_F_NEWVALUE | PMC_F_OLDVALUE */
	__u64	pm_value;		/* in: new value, out: old value */
};

/* PMCSETCOUNT. */
struct pmc_op_pmcsetcount {
	__u32	pm_pmcid;
	__u32	pm_reserved;
	__u64	pm_count;
};

/* PMCGETMSR (FreeBSD PMC_OP_PMCX86GETMSR): the RDPMC index. */
struct pmc_op_getmsr {
	__u32	pm_pmcid;
	__u32	pm_msr;			/* out: RDPMC ECX value */
	__u32	pm_reserved[2];
};

/* GETCAPS: the capabilities of an allocated PMC. */
struct pmc_op_caps {
	__u32	pm_pmcid;
	__u32	pm_caps;		/* out */
};

/*
 * CONFIGURELOG: fd of a file, pipe or socket; -1 deconfigures.  EBADF for
 * a descriptor not open for writing; EINVAL for one of /dev/hwpmc itself
 * (any owner's) or of a file the kernel cannot write (/dev/null, /dev/full).
 */
struct pmc_op_configurelog {
	__s32	pm_logfd;
	__u32	pm_flags;		/* reserved, 0 */
	__u32	pm_reserved[2];
};

/* WRITELOG: a timestamped USERDATA record. */
struct pmc_op_writelog {
	__u32	pm_userdata;
	__u32	pm_reserved;
};

/* GETDRIVERSTATS. */
struct pmc_op_getdriverstats {
	__u64	pm_intr_ignored;	/* interrupts not ours */
	__u64	pm_intr_processed;	/* interrupts handled */
	__u64	pm_intr_bufferfull;	/* samples dropped: ring full */
	__u64	pm_syscalls;		/* ioctls issued */
	__u64	pm_syscall_errors;	/* ioctls that failed */
	__u64	pm_buffer_requests;	/* log buffers requested */
	__u64	pm_buffer_requests_failed; /* none free */
	__u64	pm_log_sweeps;		/* ring drains */
	__u64	pm_samples_taken;
	__u64	pm_samples_dropped;
	__u64	pm_log_bytes;		/* bytes written to logs */
	__u64	pm_alloc_failed;	/* atomic allocations that failed */
	/*
	 * Since 1.2: samples not taken because their CPU spent too long
	 * sampling: more PMIs or SOFT timer samples in a tick than
	 * kernel.hwpmc.max_sample_rate allows (counted in pm_samples_taken,
	 * not in pm_samples_dropped; the owner's log counts them in
	 * DROPNOTIFY pl_throttled).  pm_samples_taken = samples logged +
	 * pm_samples_dropped + pm_samples_throttled.
	 */
	__u64	pm_samples_throttled;
	__u64	pm_reserved[7];
};

/* One SOFT event (GETDYNEVENTINFO). */
struct pmc_dyn_event_descr {
	char	pm_ev_name[PMC_NAME_MAX];	/* e.g. "CLOCK.PROF" */
	__u32	pm_ev_code;
	__u32	pm_ev_flags;			/* reserved, 0 */
};

/* GETDYNEVENTINFO: the event list of a class with dynamic events (SOFT).
 * Same capacity protocol as GETPMCINFO.
 */
struct pmc_op_getdyneventinfo {
	__u32	pm_class;		/* in: PMC_CLASS_SOFT */
	__u32	pm_nevent;		/* in: capacity, out: events */
	__u64	pm_events;		/* in: user pointer */
	__u32	pm_reserved[4];
};

/* SOFT event codes. */
#define PMC_SOFT_CLOCK_HARD		0	/* scheduler ticks */
#define PMC_SOFT_CLOCK_PROF		1	/* CPU time, nanoseconds */
#define PMC_SOFT_PAGE_FAULT_ALL		2
#define PMC_SOFT_PAGE_FAULT_READ	3
#define PMC_SOFT_PAGE_FAULT_WRITE	4
#define PMC_SOFT_SCHED_SWITCH		5
#define PMC_SOFT_SCHED_MIGRATE		6
#define PMC_SOFT_SYSCALL_ENTER		7
#define PMC_SOFT_NEVENTS		8

/* --- the read page (since 1.6) ------------------------------------------
 *
 * A read of some counting PMCs without a system call, as perf's user page
 * lets a task read its own counters, for the counters perf cannot read that
 * way.  Each open of /dev/hwpmc (an owner) has at most one read page: one
 * page, zeroed when made, that holds that owner's values only (what its fd
 * holder can read with PMCRW anyway), which the kernel keeps current and
 * user space maps read-only:
 *
 *	page = mmap(NULL, HWPMC_READPAGE_SIZE, PROT_READ, MAP_SHARED, fd,
 *		    HWPMC_READPAGE_OFFSET);
 *
 * The first mmap() makes the page; later ones (by any holder of the open)
 * map the same page.  Errors: EINVAL for another length or offset; EPERM
 * for PROT_WRITE or PROT_EXEC; the mapping can never become writable
 * (mprotect(PROT_WRITE): EACCES); ESRCH once the owner was shut down (its
 * opener exited); ENOMEM.  A fork()'s child does not inherit the mapping
 * (it reads through the inherited fd with PMCRW), nor a core dump hold it.
 * The mapping does not keep the open alive: after the last close the page
 * stays mapped, every slot free and HWPMC_RP_F_GONE set, until munmap().
 *
 * Slots.  A PMC allocated while its owner has a read page gets a slot, if
 * one of the HWPMC_READPAGE_NSLOTS is free and the PMC is one the page can
 * answer for:
 *  - a process-scope counting (TC) SOFT PMC of any event but CLOCK.PROF
 *    (whose value holds the in-flight CPU time of running targets);
 *  - a TSC PMC, when user RDTSC reads what the kernel's does: a TSC marked
 *    constant and nonstop (CPUID invariant TSC) and not unstable
 *    (HWPMC_RP_F_TSC).
 * Other PMCs, and those allocated before the page was mapped or when no
 * slot was free, are read with PMCRW only.  GETREADSLOT tells a PMC's slot
 * and generation.  The slot is the PMC's until PMCRELEASE (or the owner's
 * shutdown); a slot freed is reused (with a new generation) only after
 * every kernel path that could credit the old PMC has finished.
 *
 * Consistency.  rs_ctl holds the slot's generation (bits 32-63; 0 when the
 * slot is free) and what it can answer now (bits 0-31, HWPMC_RS_*): both in
 * one aligned 64-bit word, written by the kernel under one lock.  The
 * count, rs_value, is one aligned 64-bit word the kernel adds to with
 * atomic instructions from every CPU that credits the PMC (no sequence
 * count: crediting CPUs never wait for each other or for a writer, and a
 * single load of an aligned 64-bit word is never torn).  A reader:
 *
 *	ctl = load(rs_ctl)			(acquire)
 *	if (HWPMC_RS_GEN(ctl) != gen || !(ctl & (HWPMC_RS_VALUE|HWPMC_RS_TSC)))
 *		use PMCRW
 *	v = load(rs_value)
 *	if (ctl & HWPMC_RS_TSC)
 *		v += RDTSC			(ordered: LFENCE; RDTSC)
 *	if (load(rs_ctl) != ctl)		(after the loads above)
 *		retry, or use PMCRW
 *	the count is v
 *
 * HWPMC_RS_VALUE: rs_value is the count, exactly what PMCRW would read
 * (same events; the kernel adds to the page before it adds to the value
 * PMCRW reads, so a page read after a PMCRW is never below it).  Set while
 * the PMC is allocated or running and attached to at least one process;
 * clear while it is stopped (a stopped PMC's PMCRW first waits for the
 * credits in flight to land) or has no target (PMCRW then raises SIGIO):
 * PMCRW then gives the value and the errors.  HWPMC_RS_TSC: the count is
 * RDTSC plus rs_value (0), as PMCRW's.  Neither flag: use PMCRW.
 */
#define HWPMC_READPAGE_OFFSET	0ULL	/* mmap offset, bytes */
#define HWPMC_READPAGE_SIZE	4096U	/* mmap length, bytes */
#define HWPMC_READPAGE_VERSION	1	/* rp_version */
#define HWPMC_READPAGE_NSLOTS	64

/* rp_flags */
#define HWPMC_RP_F_TSC		0x1	/* TSC PMCs get slots */
#define HWPMC_RP_F_GONE		0x2	/* owner shut down: no slot in use */

/* rs_ctl */
#define HWPMC_RS_VALUE		0x1	/* rs_value is the count */
#define HWPMC_RS_TSC		0x2	/* the count is RDTSC + rs_value */
#define HWPMC_RS_GEN(ctl)	((__u32)((__u64)(ctl) >> 32))

struct hwpmc_readslot {
	__u64	rs_ctl;			/* generation << 32 | HWPMC_RS_* */
	__u64	rs_value;
};

struct hwpmc_readpage {
	__u32	rp_version;		/* HWPMC_READPAGE_VERSION */
	__u32	rp_flags;		/* HWPMC_RP_F_* */
	__u32	rp_nslots;		/* HWPMC_READPAGE_NSLOTS */
	__u32	rp_slot_size;		/* sizeof(struct hwpmc_readslot) */
	__u32	rp_reserved[12];	/* zero */
	struct hwpmc_readslot rp_slots[HWPMC_READPAGE_NSLOTS];
};

/*
 * GETREADSLOT (since 1.6): the read-page slot of PMC pm_pmcid and its
 * generation (never 0).  EINVAL: no such PMC of this owner, or
 * pm_reserved not 0; ESRCH: the owner has no PMC at all; ENOENT: the PMC
 * has no slot (not a kind the page answers for, allocated before the
 * owner's page was mapped, or every slot was taken), or it is a TSC PMC
 * and the caller's RDTSC is disabled (prctl(PR_SET_TSC,
 * PR_TSC_SIGSEGV)): read it with PMCRW.
 */
struct pmc_op_getreadslot {
	__u32	pm_pmcid;		/* in */
	__u32	pm_slot;		/* out: index in rp_slots */
	__u32	pm_gen;			/* out: HWPMC_RS_GEN() while it is its */
	__u32	pm_reserved;		/* in: 0 */
};

/* --- the log file format ------------------------------------------------
 *
 * A log is a sequence of records, each starting with struct pmclog_header.
 * Every record's length is a multiple of 8 and includes the header; a
 * reader that meets an unknown type skips pl_len bytes.  Integers are in
 * the machine's byte order.  Times are nanoseconds of CLOCK_MONOTONIC.
 * Strings (paths, names) are NUL-terminated and padded with NULs to the
 * record's length.  The first record is INITIALIZE, which carries
 * PMCLOG_VERSION: a reader refuses a major version it does not know.
 */
#define PMCLOG_VERSION_MAJOR	1
#define PMCLOG_VERSION_MINOR	3
#define PMCLOG_VERSION \
	HWPMC_VERSION_MAKE(PMCLOG_VERSION_MAJOR, PMCLOG_VERSION_MINOR, 0)

#define PMCLOG_TYPE_INITIALIZE	1
#define PMCLOG_TYPE_CLOSELOG	2
#define PMCLOG_TYPE_DROPNOTIFY	3
#define PMCLOG_TYPE_PMCALLOCATE	4
#define PMCLOG_TYPE_PMCATTACH	5
#define PMCLOG_TYPE_PMCDETACH	6
#define PMCLOG_TYPE_PROCCSW	7
#define PMCLOG_TYPE_PROCEXEC	8
#define PMCLOG_TYPE_PROCEXIT	9
#define PMCLOG_TYPE_PROCFORK	10
#define PMCLOG_TYPE_SYSEXIT	11
#define PMCLOG_TYPE_USERDATA	12
#define PMCLOG_TYPE_MAP_IN	13
#define PMCLOG_TYPE_MAP_OUT	14
#define PMCLOG_TYPE_CALLCHAIN	15
#define PMCLOG_TYPE_USERSTACK	16	/* log minor 3 */
#define PMCLOG_TYPE_MAX		16
/*
 * Types 256 and above are never written by the module: the tools append
 * records of their own after CLOSELOG (256: the kernel symbols that
 * hwpmc-record saves with a log, tools/profile/saved_ksyms.hpp).  A reader
 * skips them as it skips any type above PMCLOG_TYPE_MAX.
 */

#define PMCLOG_PATH_MAX		4096	/* longest path in a record */

struct pmclog_header {
	__u32	pl_type;		/* PMCLOG_TYPE_* */
	__u32	pl_len;			/* bytes, header included */
	__u64	pl_time;		/* ns, CLOCK_MONOTONIC */
};

/* First record of every log. */
struct pmclog_initialize {
	struct pmclog_header pl_hdr;
	__u32	pl_version;		/* PMCLOG_VERSION */
	__u32	pl_cputype;		/* PMC_CPU_* */
	__u64	pl_tsc_freq;		/* Hz, 0 if unknown */
	__u64	pl_wallclock;		/* CLOCK_REALTIME ns at pl_time */
	__u32	pl_ncpu;
	__u32	pl_pagesize;
};

/* CLOSELOG: last record; the log was closed by its owner. */
struct pmclog_closelog {
	struct pmclog_header pl_hdr;
};

/*
 * Samples or records that could not be logged since the last notice.
 * Log minor 1 (module minor 2) appends pl_throttled (pl_len 40): samples
 * of this owner not taken because their CPU was throttled.  A 32-byte
 * DROPNOTIFY (older module) has none.
 */
struct pmclog_dropnotify {
	struct pmclog_header pl_hdr;
	__u64	pl_samples;		/* samples dropped */
	__u64	pl_records;		/* other records dropped */
	__u64	pl_throttled;		/* log minor 1: samples throttled */
};

struct pmclog_pmcallocate {
	struct pmclog_header pl_hdr;
	__u32	pl_pmcid;
	__u32	pl_class;
	__u32	pl_event;
	__u32	pl_mode;
	__u32	pl_flags;
	__u32	pl_cpu;			/* PMC_CPU_ANY for process scope */
	__u64	pl_rate;		/* sampling period, 0 if counting */
	/*
	 * "SOFT-CLOCK.PROF", "TSC", "IAF-INSTR_RETIRED_ANY", or an IAP/K8
	 * event by its codes: "IAP-event=0xc0,umask=0x0".
	 */
	char	pl_name[PMC_NAME_MAX];
};

/* A process-scope PMC was attached to pl_pid, which runs pl_path. */
struct pmclog_pmcattach {
	struct pmclog_header pl_hdr;
	__u32	pl_pmcid;
	__u32	pl_pid;
	char	pl_path[];		/* NUL-terminated, padded */
};

struct pmclog_pmcdetach {
	struct pmclog_header pl_hdr;
	__u32	pl_pmcid;
	__u32	pl_pid;
};

/* PMC_F_LOG_PROCCSW: events seen while thread pl_tid of pl_pid ran. */
struct pmclog_proccsw {
	struct pmclog_header pl_hdr;
	__u32	pl_pmcid;
	__u32	pl_pid;
	__u32	pl_tid;
	__u32	pl_cpu;
	__u64	pl_value;
};

/* A monitored process exec'd pl_path, mapped at pl_base. */
struct pmclog_procexec {
	struct pmclog_header pl_hdr;
	__u32	pl_pid;
	__u32	pl_pmcid;		/* PMC_ID_INVALID: any of the owner's */
	__u64	pl_base;		/* start of the executable's mapping */
	char	pl_path[];
};

/* PMC_F_LOG_PROCEXIT: the count of pl_pid at its exit. */
struct pmclog_procexit {
	struct pmclog_header pl_hdr;
	__u32	pl_pmcid;
	__u32	pl_pid;
	__u64	pl_value;
};

/* A monitored process forked (with PMC_F_DESCENDANTS: it inherits). */
struct pmclog_procfork {
	struct pmclog_header pl_hdr;
	__u32	pl_ppid;
	__u32	pl_pid;
};

/* A process that system-wide sampling saw has exited. */
struct pmclog_sysexit {
	struct pmclog_header pl_hdr;
	__u32	pl_pid;
	__u32	pl_reserved;
};

/* WRITELOG. */
struct pmclog_userdata {
	struct pmclog_header pl_hdr;
	__u32	pl_userdata;
	__u32	pl_pid;			/* the writer */
};

/* An executable file mapping of pl_pid: [pl_start, pl_end) maps the
 * file at offset pl_pgoff (bytes).
 */
struct pmclog_map_in {
	struct pmclog_header pl_hdr;
	__u32	pl_pid;
	__u32	pl_reserved;
	__u64	pl_start;
	__u64	pl_end;
	__u64	pl_pgoff;
	char	pl_path[];
};

struct pmclog_map_out {
	struct pmclog_header pl_hdr;
	__u32	pl_pid;
	__u32	pl_reserved;
	__u64	pl_start;
	__u64	pl_end;
};

/* A sample: pl_npc program counters, innermost first.  The first
 * pl_nkernel are kernel addresses, the rest user addresses.
 *
 * PMCLOG_CC_F_KERNEL_HIDDEN (module minor 3, log minor 2): the sample
 * interrupted kernel mode, but the PMC's owner may not see kernel
 * addresses (it was not CAP_PERFMON at PMCALLOCATE, and
 * kernel.hwpmc.unprivileged_kernel, perf_event_paranoid or kptr_restrict
 * did not allow it): pl_nkernel is 0 and pl_pc holds only the user-mode
 * state the task entered the kernel from (its PC, then its callers), or
 * nothing for a kernel thread.  Such a PMC's records never hold a kernel
 * address.
 */
#define PMCLOG_CC_F_USER	0x1	/* the sample interrupted user mode */
#define PMCLOG_CC_F_TRUNCATED	0x2	/* deeper than callchaindepth */
#define PMCLOG_CC_F_KERNEL_HIDDEN 0x4	/* in the kernel; its frames hidden */

struct pmclog_callchain {
	struct pmclog_header pl_hdr;
	__u32	pl_pid;
	__u32	pl_tid;
	__u32	pl_pmcid;
	__u32	pl_cpu;
	__u32	pl_flags;		/* PMCLOG_CC_F_* */
	__u32	pl_nkernel;
	__u32	pl_npc;
	__u32	pl_reserved;
	__u64	pl_pc[];
};

/*
 * USERSTACK (log minor 3, module minor 5): a sample of a PMC_F_USERSTACK
 * PMC.  It immediately follows its sample's CALLCHAIN record (same
 * pl_time, pid, tid and PMC), and the two are logged or dropped together:
 * the sample counts as one in taken = logged + dropped + throttled.
 *
 * pl_regs are the x86-64 user registers in DWARF register order (0 rax,
 * 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip),
 * valid only with PMCLOG_US_F_REGS: the interrupted user-mode state, or
 * the state the task entered the kernel from, or, for a task sampled
 * while not running (a migration), its saved user state with no stack
 * copy.  None (all zero) for a kernel thread, an exiting task whose
 * memory is gone, or a 32-bit task.
 * pl_stack holds pl_copied bytes of user memory from rsp upward, read in
 * interrupt context without faulting: a copy shorter than pl_size (the
 * size asked for) stops at the end of the stack or at a page that is
 * not resident, and is marked PMCLOG_US_F_SHORT.  The record is padded
 * to a multiple of 8 bytes.
 */
#define PMCLOG_US_NREGS		17
#define PMCLOG_US_REG_RBP	6
#define PMCLOG_US_REG_RSP	7
#define PMCLOG_US_REG_RIP	16
#define PMCLOG_US_F_REGS	0x1	/* pl_regs are valid */
#define PMCLOG_US_F_SHORT	0x2	/* pl_copied < pl_size */

struct pmclog_userstack {
	struct pmclog_header pl_hdr;
	__u32	pl_pid;
	__u32	pl_tid;
	__u32	pl_pmcid;
	__u32	pl_flags;		/* PMCLOG_US_F_* */
	__u32	pl_size;		/* bytes asked for */
	__u32	pl_copied;		/* bytes in pl_stack */
	__u64	pl_regs[PMCLOG_US_NREGS];
	__u8	pl_stack[];
};

/* --- ioctl numbers: nr = FreeBSD PMC_OP_* number; append only ---------- */
#define HWPMC_IOC_MAGIC		0xb7

#define PMC_OP_CONFIGURELOG	0
#define PMC_OP_FLUSHLOG		1
#define PMC_OP_GETCPUINFO	2
#define PMC_OP_GETDRIVERSTATS	3
#define PMC_OP_GETMODULEVERSION	4
#define PMC_OP_GETPMCINFO	5
#define PMC_OP_PMCADMIN		6
#define PMC_OP_PMCALLOCATE	7
#define PMC_OP_PMCATTACH	8
#define PMC_OP_PMCDETACH	9
#define PMC_OP_PMCGETMSR	10	/* FreeBSD PMC_OP_PMCX86GETMSR */
#define PMC_OP_PMCRELEASE	11
#define PMC_OP_PMCRW		12
#define PMC_OP_PMCSETCOUNT	13
#define PMC_OP_PMCSTART		14
#define PMC_OP_PMCSTOP		15
#define PMC_OP_WRITELOG		16
#define PMC_OP_CLOSELOG		17
#define PMC_OP_GETDYNEVENTINFO	18
#define PMC_OP_GETCAPS		19
#define PMC_OP_GETREADSLOT	20	/* since 1.6; hwpmc only */
#define PMC_OP_MAX		20

#define HWPMC_IOC_CONFIGURELOG \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_CONFIGURELOG, struct pmc_op_configurelog)
#define HWPMC_IOC_FLUSHLOG	_IO(HWPMC_IOC_MAGIC, PMC_OP_FLUSHLOG)
#define HWPMC_IOC_GETCPUINFO \
	_IOR(HWPMC_IOC_MAGIC, PMC_OP_GETCPUINFO, struct pmc_op_getcpuinfo)
#define HWPMC_IOC_GETDRIVERSTATS \
	_IOR(HWPMC_IOC_MAGIC, PMC_OP_GETDRIVERSTATS, \
	     struct pmc_op_getdriverstats)
#define HWPMC_IOC_GETMODULEVERSION \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_GETMODULEVERSION, \
	      struct pmc_op_getmoduleversion)
#define HWPMC_IOC_GETPMCINFO \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_GETPMCINFO, struct pmc_op_getpmcinfo)
#define HWPMC_IOC_PMCADMIN \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCADMIN, struct pmc_op_pmcadmin)
#define HWPMC_IOC_PMCALLOCATE \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_PMCALLOCATE, struct pmc_op_pmcallocate)
#define HWPMC_IOC_PMCATTACH \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCATTACH, struct pmc_op_pmcattach)
#define HWPMC_IOC_PMCDETACH \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCDETACH, struct pmc_op_pmcattach)
#define HWPMC_IOC_PMCGETMSR \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_PMCGETMSR, struct pmc_op_getmsr)
#define HWPMC_IOC_PMCRELEASE \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCRELEASE, struct pmc_op_simple)
#define HWPMC_IOC_PMCRW \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_PMCRW, struct pmc_op_pmcrw)
#define HWPMC_IOC_PMCSETCOUNT \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCSETCOUNT, struct pmc_op_pmcsetcount)
#define HWPMC_IOC_PMCSTART \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCSTART, struct pmc_op_simple)
#define HWPMC_IOC_PMCSTOP \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_PMCSTOP, struct pmc_op_simple)
#define HWPMC_IOC_WRITELOG \
	_IOW(HWPMC_IOC_MAGIC, PMC_OP_WRITELOG, struct pmc_op_writelog)
#define HWPMC_IOC_CLOSELOG	_IO(HWPMC_IOC_MAGIC, PMC_OP_CLOSELOG)
#define HWPMC_IOC_GETDYNEVENTINFO \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_GETDYNEVENTINFO, \
	      struct pmc_op_getdyneventinfo)
#define HWPMC_IOC_GETCAPS \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_GETCAPS, struct pmc_op_caps)
#define HWPMC_IOC_GETREADSLOT \
	_IOWR(HWPMC_IOC_MAGIC, PMC_OP_GETREADSLOT, struct pmc_op_getreadslot)

#endif /* _UAPI_LINUX_HWPMC_H */
