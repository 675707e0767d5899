/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <hwpmc/pmclog.h> (also reachable as <pmclog.h>): FreeBSD's pmclog(3) API
 * on Linux, a reader of the log files hwpmc writes (the format is defined in
 * <linux/hwpmc.h>, "the log file format").
 *
 *   void *p = pmclog_open(fd);          // or PMCLOG_FD_NONE + pmclog_feed()
 *   struct pmclog_ev ev;
 *   while (pmclog_read(p, &ev) == 0)
 *       switch (ev.pl_type) { case PMCLOG_TYPE_CALLCHAIN: ... }
 *   // ev.pl_state: PMCLOG_EOF, PMCLOG_REQUIRE_DATA or PMCLOG_ERROR (errno)
 *   pmclog_close(p);
 *
 * Source compatible with FreeBSD's <pmclog.h>: the same functions, struct
 * pmclog_ev with the same members (pl_state, pl_offset, pl_count, pl_ts,
 * pl_type, pl_data, pl_len, and the union pl_u: pl_i, pl_cl, pl_dn, pl_a,
 * pl_t, pl_d, pl_c, pl_x, pl_e, pl_f, pl_se, pl_u, pl_mi, pl_mo, pl_cc),
 * FreeBSD's field names inside them, enum pmclog_state, enum pmclog_type,
 * PMCLOG_FD_NONE, PMC_CALLCHAIN_DEPTH_MAX and the PMC_CALLCHAIN_CPUFLAGS_*
 * macros.  Return convention as FreeBSD: pmclog_read() returns 0 with
 * pl_state PMCLOG_OK, or -1 with pl_state telling why.
 *
 * The reader validates everything it returns and never reads outside the
 * data it was given:
 *  - a record's pl_len is a multiple of 8, at least the header, at most
 *    1 MiB, and at least the fixed part of its type;
 *  - the first record is INITIALIZE, and its major version is
 *    PMCLOG_VERSION_MAJOR (a later minor version is accepted);
 *  - strings end with a NUL inside their record (and fit pl_pathname);
 *  - CALLCHAIN: pl_npc <= PMC_CALLCHAIN_DEPTH_MAX, pl_len is exactly the
 *    fixed part plus pl_npc program counters, pl_nkernel <= pl_npc;
 *  - USERSTACK: pl_copied <= pl_size, pl_len is exactly the fixed part
 *    plus pl_copied bytes rounded up to a multiple of 8;
 *  - record type 0 is corrupt; types above PMCLOG_TYPE_MAX are from a later
 *    minor version: they are skipped (never returned), but counted in
 *    pl_count.  A known record longer than its fixed part is accepted (the
 *    rest is ignored), except CALLCHAIN and USERSTACK, whose lengths are
 *    exact.
 * A violation is PMCLOG_ERROR; it is sticky: every later pmclog_read()
 * returns it again.
 *
 * errno after PMCLOG_ERROR:
 *  - EBADMSG: corrupt data (a bad length, type, count or string), or input
 *    that ends inside a record (truncated log);
 *  - EPROTO: the log's major format version is not PMCLOG_VERSION_MAJOR
 *    (FreeBSD: EPROGMISMATCH, which Linux lacks);
 *  - ENOMEM, or the errno of read(2) for a file descriptor reader;
 *  - EINVAL: a NULL cookie or event.
 * pmclog_errmsg() (an extension) says what was wrong and where.
 *
 * Differences from FreeBSD, forced by Linux or by this port's log format:
 *  - End of input: a file descriptor reader reports PMCLOG_EOF when read(2)
 *    returns 0 at a record boundary (it reads again on the next call, so a
 *    growing file can be followed); inside a record that is a truncated log:
 *    PMCLOG_ERROR, EBADMSG.  A fed reader (PMCLOG_FD_NONE) returns
 *    PMCLOG_REQUIRE_DATA when it has consumed what it was fed; feeding zero
 *    bytes (pmclog_feed(p, NULL, 0), an extension) marks the end of the
 *    input, after which it returns PMCLOG_EOF at a record boundary, or
 *    PMCLOG_ERROR (EBADMSG) inside a record.
 *  - pmclog_feed() copies the data: the caller's buffer may be reused at
 *    once (FreeBSD requires it to stay valid).  It fails with EINVAL on a
 *    file descriptor reader, after the end of input was fed, or for len < 0.
 *  - pl_ts is CLOCK_MONOTONIC (the log's clock).  The wall-clock time of a
 *    record is pl_ts - (INITIALIZE's pl_ts) + (INITIALIZE's pl_u.pl_i.pl_ts).
 *  - pl_data points to the record's raw bytes inside the reader and pl_len
 *    is its length; pl_data is valid until the next pmclog_read(),
 *    pmclog_feed() or pmclog_close().  pl_a.pl_evname points to pl_a.pl_name
 *    of the same struct pmclog_ev (a copy of the struct still points to the
 *    original's).
 *  - pl_count counts every record so far, this one and skipped ones
 *    included (INITIALIZE has pl_count 1); pl_offset is this record's byte
 *    offset in the stream.  When pmclog_read() returns -1, pl_offset is
 *    where the reader stands (with PMCLOG_ERROR: the offset of the bad
 *    record), and only pl_state and pl_offset are set.
 *  - Program counters are uint64_t (FreeBSD: uintfptr_t).
 *  - pl_cc: a CALLCHAIN record holds pl_nkernel kernel addresses followed by
 *    user addresses (FreeBSD writes separate kernel and user records).
 *    pl_cpuflags is PMC_CALLCHAIN_TO_CPUFLAGS(cpu, PMC_CC_F_USERSPACE if the
 *    first address is a user address); pl_cpuflags2 is 0.  Extensions:
 *    pl_cpu (all of it: pl_cpuflags keeps 16 bits), pl_cpumode
 *    (PMCLOG_CPUMODE_USER or _KERNEL, the mode of pl_pc[0]; of the
 *    interrupted code when pl_npc is 0), pl_nkernel, and pl_flags, the
 *    record's PMCLOG_CC_F_* (USER: the sample interrupted user mode;
 *    TRUNCATED: the stack was deeper than the module's callchaindepth;
 *    KERNEL_HIDDEN, log minor 2: the sample interrupted the kernel, whose
 *    frames the module hid from this owner: pl_nkernel is 0, pl_pc holds
 *    the user-mode state it entered the kernel from, and pl_cpumode is
 *    that of pl_pc[0], USER, or KERNEL when pl_npc is 0 (a kernel thread)).
 *  - pl_us (an extension, log minor 3): a USERSTACK record, which follows
 *    its sample's CALLCHAIN: the user registers (pl_regs, x86-64 DWARF
 *    order, PMCLOG_US_REG_*), valid with PMCLOG_US_F_REGS, and pl_copied
 *    bytes of the user stack from the stack pointer up at pl_stack, a
 *    pointer into the record (valid as long as pl_data);
 *    PMCLOG_US_F_SHORT when fewer than the pl_size bytes asked for.
 *  - pl_i: pl_arch is the enum pmc_cputype; pl_version is the log format's
 *    version (PMCLOG_VERSION), not the module's; pl_ts is the wall clock
 *    (CLOCK_REALTIME) at the record's time; pl_cpuid is always "" (the log
 *    names no CPU model) and PMC_NAME_MAX long (FreeBSD: PATH_MAX).
 *    Extensions: pl_ncpu, pl_pagesize.
 *  - pl_dn: DROPNOTIFY carries counts (FreeBSD's is empty): pl_samples,
 *    samples dropped, and pl_records, other records dropped, since the
 *    previous DROPNOTIFY; pl_throttled (log minor 1, 0 before), samples
 *    not taken because their CPU spent too long sampling.
 *  - pl_a: pl_event is an enum pmc_event of <hwpmc/pmc.h>,
 *    PMC_EV_MAKE(pl_class, event code), so pmc_name_of_event() names it;
 *    pl_evname is the name the module logged (e.g. "SOFT-CLOCK.PROF").
 *    Extensions: pl_class, pl_mode, pl_cpu, pl_name.
 *  - pl_x: PROCEXEC gives pl_baseaddr, the start of the executable's
 *    mapping (FreeBSD's pl_baseaddr is the run-time linker's, and it adds
 *    pl_dynaddr; here every mapping comes as a MAP_IN record).
 *  - pl_mi: MAP_IN adds pl_end and pl_pgoff (the file offset in bytes of
 *    pl_start); they cover executable file mappings of user processes.
 *  - pl_c: PROCCSW adds pl_cpu; pl_u: USERDATA adds pl_pid (the writer).
 *  - pl_cl: CLOSELOG has a placeholder member (C has no empty structs).
 *  - No PCSAMPLE, PMCALLOCATEDYN, PROCCREATE, THREADCREATE, THREADEXIT
 *    records: the module does not write them.
 */
#ifndef HWPMC_PMCLOG_H
#define HWPMC_PMCLOG_H

#include <hwpmc/pmc.h>

#include <linux/limits.h> /* PATH_MAX, even in strict ISO C */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
#define HWPMC_ENUM_BASE : uint32_t
extern "C" {
#else
#define HWPMC_ENUM_BASE
#endif

/* The record types, as FreeBSD's enum pmclog_type (values checked at library
 * build time against the ABI header's #defines).
 */
#undef PMCLOG_TYPE_INITIALIZE
#undef PMCLOG_TYPE_CLOSELOG
#undef PMCLOG_TYPE_DROPNOTIFY
#undef PMCLOG_TYPE_PMCALLOCATE
#undef PMCLOG_TYPE_PMCATTACH
#undef PMCLOG_TYPE_PMCDETACH
#undef PMCLOG_TYPE_PROCCSW
#undef PMCLOG_TYPE_PROCEXEC
#undef PMCLOG_TYPE_PROCEXIT
#undef PMCLOG_TYPE_PROCFORK
#undef PMCLOG_TYPE_SYSEXIT
#undef PMCLOG_TYPE_USERDATA
#undef PMCLOG_TYPE_MAP_IN
#undef PMCLOG_TYPE_MAP_OUT
#undef PMCLOG_TYPE_CALLCHAIN
#undef PMCLOG_TYPE_USERSTACK
enum pmclog_type HWPMC_ENUM_BASE {
    PMCLOG_TYPE_INITIALIZE = 1,
    PMCLOG_TYPE_CLOSELOG = 2,
    PMCLOG_TYPE_DROPNOTIFY = 3,
    PMCLOG_TYPE_PMCALLOCATE = 4,
    PMCLOG_TYPE_PMCATTACH = 5,
    PMCLOG_TYPE_PMCDETACH = 6,
    PMCLOG_TYPE_PROCCSW = 7,
    PMCLOG_TYPE_PROCEXEC = 8,
    PMCLOG_TYPE_PROCEXIT = 9,
    PMCLOG_TYPE_PROCFORK = 10,
    PMCLOG_TYPE_SYSEXIT = 11,
    PMCLOG_TYPE_USERDATA = 12,
    PMCLOG_TYPE_MAP_IN = 13,
    PMCLOG_TYPE_MAP_OUT = 14,
    PMCLOG_TYPE_CALLCHAIN = 15,
    PMCLOG_TYPE_USERSTACK = 16, /* log minor 3: a Linux extension */
};
#define PMCLOG_TYPE_INITIALIZE PMCLOG_TYPE_INITIALIZE
#define PMCLOG_TYPE_CLOSELOG PMCLOG_TYPE_CLOSELOG
#define PMCLOG_TYPE_DROPNOTIFY PMCLOG_TYPE_DROPNOTIFY
#define PMCLOG_TYPE_PMCALLOCATE PMCLOG_TYPE_PMCALLOCATE
#define PMCLOG_TYPE_PMCATTACH PMCLOG_TYPE_PMCATTACH
#define PMCLOG_TYPE_PMCDETACH PMCLOG_TYPE_PMCDETACH
#define PMCLOG_TYPE_PROCCSW PMCLOG_TYPE_PROCCSW
#define PMCLOG_TYPE_PROCEXEC PMCLOG_TYPE_PROCEXEC
#define PMCLOG_TYPE_PROCEXIT PMCLOG_TYPE_PROCEXIT
#define PMCLOG_TYPE_PROCFORK PMCLOG_TYPE_PROCFORK
#define PMCLOG_TYPE_SYSEXIT PMCLOG_TYPE_SYSEXIT
#define PMCLOG_TYPE_USERDATA PMCLOG_TYPE_USERDATA
#define PMCLOG_TYPE_MAP_IN PMCLOG_TYPE_MAP_IN
#define PMCLOG_TYPE_MAP_OUT PMCLOG_TYPE_MAP_OUT
#define PMCLOG_TYPE_CALLCHAIN PMCLOG_TYPE_CALLCHAIN
#define PMCLOG_TYPE_USERSTACK PMCLOG_TYPE_USERSTACK

enum pmclog_state {
    PMCLOG_OK,           /* *ev holds a record */
    PMCLOG_EOF,          /* end of the input at a record boundary */
    PMCLOG_REQUIRE_DATA, /* feed more (or, for a descriptor, read later) */
    PMCLOG_ERROR         /* see errno and pmclog_errmsg() */
};

#define PMCLOG_FD_NONE (-1)

/* Callchains. */
#ifndef PMC_CALLCHAIN_DEPTH_MAX
#define PMC_CALLCHAIN_DEPTH_MAX 512
#endif
#ifndef PMC_CC_F_USERSPACE
#define PMC_CC_F_USERSPACE 0x01
#endif
#ifndef PMC_CALLCHAIN_CPUFLAGS_TO_CPU
#define PMC_CALLCHAIN_CPUFLAGS_TO_CPU(CF) (((CF) >> 16) & 0xFFFF)
#define PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(CF) ((CF)&PMC_CC_F_USERSPACE)
#define PMC_CALLCHAIN_TO_CPUFLAGS(CPU, FLAGS) (((CPU) << 16) | ((FLAGS)&0xFFFF))
#endif

/* pl_cc.pl_cpumode (an extension). */
#define PMCLOG_CPUMODE_KERNEL 0
#define PMCLOG_CPUMODE_USER 1

struct pmclog_ev_callchain {
    uint32_t pl_pid;
    uint32_t pl_tid;
    pmc_id_t pl_pmcid;
    uint32_t pl_cpuflags;  /* PMC_CALLCHAIN_TO_CPUFLAGS(cpu, user?) */
    uint32_t pl_cpuflags2; /* 0 */
    uint32_t pl_npc;       /* valid entries of pl_pc */
    /* Linux extensions. */
    uint32_t pl_cpu;
    uint32_t pl_cpumode;                     /* PMCLOG_CPUMODE_* of pl_pc[0] */
    uint32_t pl_nkernel;                     /* pl_pc[0 .. pl_nkernel) are kernel addresses */
    uint32_t pl_flags;                       /* PMCLOG_CC_F_* */
    uint64_t pl_pc[PMC_CALLCHAIN_DEPTH_MAX]; /* innermost first */
};

/* USERSTACK (an extension): see struct pmclog_userstack in <linux/hwpmc.h>. */
struct pmclog_ev_userstack {
    uint32_t pl_pid;
    uint32_t pl_tid;
    pmc_id_t pl_pmcid;
    uint32_t pl_flags;                 /* PMCLOG_US_F_* */
    uint32_t pl_size;                  /* bytes asked for */
    uint32_t pl_copied;                /* bytes at pl_stack */
    uint64_t pl_regs[PMCLOG_US_NREGS]; /* DWARF order; valid with PMCLOG_US_F_REGS */
    const unsigned char *pl_stack;     /* in the record: valid as pl_data */
};

struct pmclog_ev_closelog {
    uint32_t pl_reserved; /* placeholder: 0 */
};

struct pmclog_ev_dropnotify {
    /* Linux extensions: what was lost since the previous DROPNOTIFY. */
    uint64_t pl_samples;
    uint64_t pl_records;
    uint64_t pl_throttled; /* log minor 1; 0 from older modules */
};

struct pmclog_ev_initialize {
    uint32_t pl_version;         /* the log's PMCLOG_VERSION */
    uint32_t pl_arch;            /* enum pmc_cputype */
    uint64_t pl_tsc_freq;        /* Hz, 0 if unknown */
    struct timespec pl_ts;       /* wall clock at this record */
    char pl_cpuid[PMC_NAME_MAX]; /* "" */
    /* Linux extensions. */
    uint32_t pl_ncpu;
    uint32_t pl_pagesize;
};

struct pmclog_ev_map_in {
    pid_t pl_pid;
    uint64_t pl_start;
    /* Linux extensions. */
    uint64_t pl_end;
    uint64_t pl_pgoff; /* file offset of pl_start, bytes */
    char pl_pathname[PATH_MAX];
};

struct pmclog_ev_map_out {
    pid_t pl_pid;
    uint64_t pl_start;
    uint64_t pl_end;
};

struct pmclog_ev_pmcallocate {
    const char *pl_evname; /* points to pl_name */
    uint64_t pl_rate;      /* sampling period, 0 when counting */
    uint32_t pl_event;     /* enum pmc_event: PMC_EV_MAKE(pl_class, code) */
    uint32_t pl_flags;     /* PMC_F_* */
    pmc_id_t pl_pmcid;
    /* Linux extensions. */
    uint32_t pl_class; /* enum pmc_class */
    uint32_t pl_mode;  /* enum pmc_mode */
    uint32_t pl_cpu;   /* PMC_CPU_ANY for process scope */
    char pl_name[PMC_NAME_MAX];
};

struct pmclog_ev_pmcattach {
    pmc_id_t pl_pmcid;
    pid_t pl_pid;
    char pl_pathname[PATH_MAX];
};

struct pmclog_ev_pmcdetach {
    pmc_id_t pl_pmcid;
    pid_t pl_pid;
};

struct pmclog_ev_proccsw {
    pid_t pl_pid;
    pid_t pl_tid;
    pmc_id_t pl_pmcid;
    pmc_value_t pl_value;
    uint32_t pl_cpu; /* a Linux extension */
};

struct pmclog_ev_procexec {
    pid_t pl_pid;
    pmc_id_t pl_pmcid;    /* PMC_ID_INVALID: any of the owner's */
    uint64_t pl_baseaddr; /* start of the executable's mapping */
    char pl_pathname[PATH_MAX];
};

struct pmclog_ev_procexit {
    uint32_t pl_pid;
    pmc_id_t pl_pmcid;
    pmc_value_t pl_value;
};

struct pmclog_ev_procfork {
    pid_t pl_oldpid;
    pid_t pl_newpid;
};

struct pmclog_ev_sysexit {
    pid_t pl_pid;
};

struct pmclog_ev_userdata {
    uint32_t pl_userdata;
    pid_t pl_pid; /* the writer (a Linux extension) */
};

struct pmclog_ev {
    enum pmclog_state pl_state; /* state after pmclog_read() */
    off_t pl_offset;            /* byte offset of the record in the stream */
    size_t pl_count;            /* records so far, this one included */
    struct timespec pl_ts;      /* record time, CLOCK_MONOTONIC */
    enum pmclog_type pl_type;   /* PMCLOG_TYPE_* */
    void *pl_data;              /* the raw record */
    int pl_len;                 /* its length */
    union {
        struct pmclog_ev_callchain pl_cc;
        struct pmclog_ev_closelog pl_cl;
        struct pmclog_ev_dropnotify pl_dn;
        struct pmclog_ev_initialize pl_i;
        struct pmclog_ev_map_in pl_mi;
        struct pmclog_ev_map_out pl_mo;
        struct pmclog_ev_pmcallocate pl_a;
        struct pmclog_ev_pmcattach pl_t;
        struct pmclog_ev_pmcdetach pl_d;
        struct pmclog_ev_proccsw pl_c;
        struct pmclog_ev_procexec pl_x;
        struct pmclog_ev_procexit pl_e;
        struct pmclog_ev_procfork pl_f;
        struct pmclog_ev_sysexit pl_se;
        struct pmclog_ev_userdata pl_u;
        struct pmclog_ev_userstack pl_us; /* an extension */
    } pl_u;
};

#pragma GCC visibility push(default)

/* A reader of the log in file descriptor fd (read with read(2), never
 * closed by the reader), or, with PMCLOG_FD_NONE, of data given to
 * pmclog_feed().  NULL with errno: ENOMEM, or EBADF for fd < -1.
 */
void *pmclog_open(int _fd);

/* Give a PMCLOG_FD_NONE reader len more bytes (copied); len 0 marks the end
 * of the input.  0, or -1 with errno (EINVAL, ENOMEM).
 */
int pmclog_feed(void *_cookie, char *_data, int _len);

/* The next record: 0 with ev->pl_state PMCLOG_OK, or -1 with pl_state
 * PMCLOG_EOF, PMCLOG_REQUIRE_DATA or PMCLOG_ERROR (errno set).
 */
int pmclog_read(void *_cookie, struct pmclog_ev *_ev);

/* Free the reader (NULL: nothing). */
void pmclog_close(void *_cookie);

/* Extension: why the reader's last pmclog_read() returned PMCLOG_ERROR
 * (with the record's offset), or "" if it has not failed.
 */
const char *pmclog_errmsg(void *_cookie);

#pragma GCC visibility pop

#ifdef __cplusplus
} /* extern "C" */
#endif

#undef HWPMC_ENUM_BASE

#endif /* HWPMC_PMCLOG_H */
