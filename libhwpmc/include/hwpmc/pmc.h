/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <hwpmc/pmc.h> (also reachable as <pmc.h>): the FreeBSD pmc(3) API on Linux.
 *
 * Source compatible with FreeBSD's <pmc.h>: same function names, argument
 * order, types and constants.  Every function returns 0 (or a count), or -1
 * with errno set; the name functions return a string, or NULL with errno set
 * to EINVAL.
 *
 * Differences from FreeBSD, forced by Linux or by this port's ABI:
 *  - pmc_init() opens the character device /dev/hwpmc (the environment
 *    variable HWPMC_DEVICE names another path, for tests; it is ignored in
 *    set-uid programs).  Without the device it fails with the errno of
 *    open(2): ENOENT (module not loaded) or ENXIO.  A kernel module whose
 *    major ABI version differs fails with EPROTO (FreeBSD: EPROGMISMATCH,
 *    which Linux lacks).
 *  - The ABI header <linux/hwpmc.h> defines the constants as macros; this
 *    header turns the FreeBSD enumerations (PMC_CLASS_*, PMC_MODE_*,
 *    PMC_STATE_*, PMC_DISP_*, PMC_CPU_*, PMC_CAP_*) into real enumerators of
 *    enum pmc_class, pmc_mode, ... with the same values, and keeps them
 *    visible to #ifdef.  They can no longer be used in #if arithmetic.
 *  - The CPU types and the classes are those of this port (GENERIC,
 *    INTEL_ARCH, AMD_K8, AMD_EXT, AMD_V2; TSC, K8, IAF, IAP, SOFT); FreeBSD's
 *    other CPU types exist for their names only.  FreeBSD's <sys/pmc.h>
 *    layouts (pm_ev, pm_md, pm_pmc ...): the compat include directory
 *    (compat/include/sys/pmc.h).
 *  - struct pmc_classinfo and struct pmc_info are the ABI header's: the same
 *    field names as FreeBSD's, fixed-width types, and a few more fields.
 *  - An event "code" is class specific (enum pmc_event): see
 *    PMC_EV_MAKE() and pmc_name_of_event().
 *  - pmc_errmsg() (an extension) explains the last pmc_allocate() failure.
 */
#ifndef HWPMC_PMC_H
#define HWPMC_PMC_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The ABI header and struct pmc_pmcinfo use C99 flexible array members,
 * which ISO C++ lacks (g++ and clang++ accept them): keep -Wpedantic quiet
 * about them for C++ users.
 */
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif

#include <linux/hwpmc.h>

#ifdef __cplusplus
#define HWPMC_ENUM_BASE : uint32_t
extern "C" {
#else
#define HWPMC_ENUM_BASE
#endif

/* --- enumerations ---------------------------------------------------------
 * The values are the ABI header's (checked at library build time).
 */

#undef PMC_CPU_GENERIC
#undef PMC_CPU_INTEL_ARCH
#undef PMC_CPU_AMD_K8
#undef PMC_CPU_AMD_EXT
#undef PMC_CPU_AMD_V2
enum pmc_cputype HWPMC_ENUM_BASE {
    PMC_CPU_GENERIC = 0x00,    /* no hardware PMU: TSC and SOFT only */
    PMC_CPU_INTEL_ARCH = 0x01, /* Intel architectural PerfMon */
    PMC_CPU_AMD_K8 = 0x02,     /* AMD legacy, 4 counters */
    PMC_CPU_AMD_EXT = 0x03,    /* AMD PerfCtrExtCore, 6 counters */
    PMC_CPU_AMD_V2 = 0x04,     /* AMD PerfMonV2 */
    /*
     * FreeBSD's other CPU types, so that its programs build: the module
     * never reports them.  Each has FreeBSD's number, except AMD_K7, whose
     * FreeBSD number (0) is GENERIC here; numbers are never reused.
     */
    PMC_CPU_AMD_K7 = 0x05,
    PMC_CPU_INTEL_P5 = 0x80,
    PMC_CPU_INTEL_P6 = 0x81,
    PMC_CPU_INTEL_CL = 0x82,
    PMC_CPU_INTEL_PII = 0x83,
    PMC_CPU_INTEL_PIII = 0x84,
    PMC_CPU_INTEL_PM = 0x85,
    PMC_CPU_INTEL_PIV = 0x86,
    PMC_CPU_INTEL_CORE = 0x87,
    PMC_CPU_INTEL_CORE2 = 0x88,
    PMC_CPU_INTEL_CORE2EXTREME = 0x89,
    PMC_CPU_INTEL_ATOM = 0x8A,
    PMC_CPU_INTEL_COREI7 = 0x8B,
    PMC_CPU_INTEL_WESTMERE = 0x8C,
    PMC_CPU_INTEL_SANDYBRIDGE = 0x8D,
    PMC_CPU_INTEL_XSCALE = 0x100,
    PMC_CPU_MIPS_24K = 0x200,
    PMC_CPU_MIPS_OCTEON = 0x201,
    PMC_CPU_PPC_7450 = 0x300,
};
#define PMC_CPU_GENERIC PMC_CPU_GENERIC
#define PMC_CPU_INTEL_ARCH PMC_CPU_INTEL_ARCH
#define PMC_CPU_AMD_K8 PMC_CPU_AMD_K8
#define PMC_CPU_AMD_EXT PMC_CPU_AMD_EXT
#define PMC_CPU_AMD_V2 PMC_CPU_AMD_V2
#define PMC_CPU_FIRST PMC_CPU_GENERIC
#define PMC_CPU_LAST PMC_CPU_AMD_V2 /* the last the module reports */

#undef PMC_CLASS_TSC
#undef PMC_CLASS_K8
#undef PMC_CLASS_IAF
#undef PMC_CLASS_IAP
#undef PMC_CLASS_SOFT
enum pmc_class HWPMC_ENUM_BASE {
    PMC_CLASS_TSC = 0x00,  /* CPU timestamp counter */
    PMC_CLASS_K8 = 0x02,   /* AMD core counters */
    PMC_CLASS_IAF = 0x06,  /* Intel fixed-function counters */
    PMC_CLASS_IAP = 0x07,  /* Intel programmable counters */
    PMC_CLASS_SOFT = 0x13, /* software events */
};
#define PMC_CLASS_TSC PMC_CLASS_TSC
#define PMC_CLASS_K8 PMC_CLASS_K8
#define PMC_CLASS_IAF PMC_CLASS_IAF
#define PMC_CLASS_IAP PMC_CLASS_IAP
#define PMC_CLASS_SOFT PMC_CLASS_SOFT
#define PMC_CLASS_FIRST PMC_CLASS_TSC
#define PMC_CLASS_LAST PMC_CLASS_SOFT

#undef PMC_MODE_SS
#undef PMC_MODE_SC
#undef PMC_MODE_TS
#undef PMC_MODE_TC
enum pmc_mode HWPMC_ENUM_BASE {
    PMC_MODE_SS = 0, /* system scope, sampling */
    PMC_MODE_SC = 1, /* system scope, counting */
    PMC_MODE_TS = 2, /* process scope, sampling */
    PMC_MODE_TC = 3, /* process scope, counting */
};
#define PMC_MODE_SS PMC_MODE_SS
#define PMC_MODE_SC PMC_MODE_SC
#define PMC_MODE_TS PMC_MODE_TS
#define PMC_MODE_TC PMC_MODE_TC
#define PMC_MODE_FIRST PMC_MODE_SS
#define PMC_MODE_LAST PMC_MODE_TC

#define PMC_IS_COUNTING_MODE(mode) ((mode) == PMC_MODE_SC || (mode) == PMC_MODE_TC)
#define PMC_IS_SYSTEM_MODE(mode) ((mode) == PMC_MODE_SS || (mode) == PMC_MODE_SC)
#define PMC_IS_SAMPLING_MODE(mode) ((mode) == PMC_MODE_SS || (mode) == PMC_MODE_TS)
#define PMC_IS_VIRTUAL_MODE(mode) ((mode) == PMC_MODE_TS || (mode) == PMC_MODE_TC)

#undef PMC_STATE_DISABLED
#undef PMC_STATE_FREE
#undef PMC_STATE_ALLOCATED
#undef PMC_STATE_STOPPED
#undef PMC_STATE_RUNNING
#undef PMC_STATE_DELETED
enum pmc_state HWPMC_ENUM_BASE {
    PMC_STATE_DISABLED = 0,
    PMC_STATE_FREE = 1,
    PMC_STATE_ALLOCATED = 2,
    PMC_STATE_STOPPED = 3,
    PMC_STATE_RUNNING = 4,
    PMC_STATE_DELETED = 5,
};
#define PMC_STATE_DISABLED PMC_STATE_DISABLED
#define PMC_STATE_FREE PMC_STATE_FREE
#define PMC_STATE_ALLOCATED PMC_STATE_ALLOCATED
#define PMC_STATE_STOPPED PMC_STATE_STOPPED
#define PMC_STATE_RUNNING PMC_STATE_RUNNING
#define PMC_STATE_DELETED PMC_STATE_DELETED
#define PMC_STATE_FIRST PMC_STATE_DISABLED
#define PMC_STATE_LAST PMC_STATE_DELETED

#undef PMC_DISP_STANDALONE
#undef PMC_DISP_FREE
#undef PMC_DISP_THREAD
#undef PMC_DISP_UNKNOWN
enum pmc_disp HWPMC_ENUM_BASE {
    PMC_DISP_STANDALONE = 0, /* system-scope or disabled */
    PMC_DISP_FREE = 1,
    PMC_DISP_THREAD = 2, /* process-scope PMCs */
    PMC_DISP_UNKNOWN = 3,
};
#define PMC_DISP_STANDALONE PMC_DISP_STANDALONE
#define PMC_DISP_FREE PMC_DISP_FREE
#define PMC_DISP_THREAD PMC_DISP_THREAD
#define PMC_DISP_UNKNOWN PMC_DISP_UNKNOWN
#define PMC_DISP_FIRST PMC_DISP_STANDALONE
#define PMC_DISP_LAST PMC_DISP_THREAD

#undef PMC_CAP_INTERRUPT
#undef PMC_CAP_USER
#undef PMC_CAP_SYSTEM
#undef PMC_CAP_EDGE
#undef PMC_CAP_THRESHOLD
#undef PMC_CAP_READ
#undef PMC_CAP_WRITE
#undef PMC_CAP_INVERT
#undef PMC_CAP_QUALIFIER
#undef PMC_CAP_PRECISE
#undef PMC_CAP_TAGGING
#undef PMC_CAP_CASCADE
#undef PMC_CAP_SYSWIDE
#undef PMC_CAP_DOMWIDE
#undef PMC_CAP_ANYTHREAD
enum pmc_caps HWPMC_ENUM_BASE {
    PMC_CAP_INTERRUPT = 0x0001, /* can sample */
    PMC_CAP_USER = 0x0002,      /* can count user mode */
    PMC_CAP_SYSTEM = 0x0004,    /* can count kernel mode */
    PMC_CAP_EDGE = 0x0008,      /* edge detect */
    PMC_CAP_THRESHOLD = 0x0010, /* counter mask */
    PMC_CAP_READ = 0x0020,      /* readable */
    PMC_CAP_WRITE = 0x0040,     /* writable */
    PMC_CAP_INVERT = 0x0080,    /* invert counter mask */
    PMC_CAP_QUALIFIER = 0x0100, /* unit mask */
    PMC_CAP_PRECISE = 0x0200,
    PMC_CAP_TAGGING = 0x0400,
    PMC_CAP_CASCADE = 0x0800,
    PMC_CAP_SYSWIDE = 0x1000,
    PMC_CAP_DOMWIDE = 0x2000,
    PMC_CAP_ANYTHREAD = 0x4000, /* Intel AnyThread (an extension) */
};
#define PMC_CAP_INTERRUPT PMC_CAP_INTERRUPT
#define PMC_CAP_USER PMC_CAP_USER
#define PMC_CAP_SYSTEM PMC_CAP_SYSTEM
#define PMC_CAP_EDGE PMC_CAP_EDGE
#define PMC_CAP_THRESHOLD PMC_CAP_THRESHOLD
#define PMC_CAP_READ PMC_CAP_READ
#define PMC_CAP_WRITE PMC_CAP_WRITE
#define PMC_CAP_INVERT PMC_CAP_INVERT
#define PMC_CAP_QUALIFIER PMC_CAP_QUALIFIER
#define PMC_CAP_PRECISE PMC_CAP_PRECISE
#define PMC_CAP_TAGGING PMC_CAP_TAGGING
#define PMC_CAP_CASCADE PMC_CAP_CASCADE
#define PMC_CAP_SYSWIDE PMC_CAP_SYSWIDE
#define PMC_CAP_DOMWIDE PMC_CAP_DOMWIDE
#define PMC_CAP_ANYTHREAD PMC_CAP_ANYTHREAD
#define PMC_CAP_FIRST PMC_CAP_INTERRUPT
#define PMC_CAP_LAST PMC_CAP_ANYTHREAD

/*
 * Events.  FreeBSD numbers every event of every class in one enumeration;
 * here an event code is class specific (the pm_event of <linux/hwpmc.h>).
 * An enum pmc_event carries both: the class in bits 24-31, the code in bits
 * 0-23.  pmc_name_of_event() takes this form; PMC_EV_MAKE(pi->pm_class,
 * pi->pm_event) builds it from a struct pmc_info.
 */
enum pmc_event HWPMC_ENUM_BASE {
    PMC_EV_TSC_TSC = 0x00000000,
    PMC_EV_SOFT_CLOCK_HARD = 0x13000000,
    PMC_EV_SOFT_CLOCK_PROF,
    PMC_EV_SOFT_PAGE_FAULT_ALL,
    PMC_EV_SOFT_PAGE_FAULT_READ,
    PMC_EV_SOFT_PAGE_FAULT_WRITE,
    PMC_EV_SOFT_SCHED_SWITCH,
    PMC_EV_SOFT_SCHED_MIGRATE,
    PMC_EV_SOFT_SYSCALL_ENTER,
};
#define PMC_EV_MAKE(cls, code)                                                                     \
    ((enum pmc_event)((((uint32_t)(cls)&0xffu) << 24) | ((uint32_t)(code)&0xffffffu)))
#define PMC_EV_CLASS(ev) ((uint32_t)(ev) >> 24)
#define PMC_EV_CODE(ev) ((uint32_t)(ev)&0xffffffu)

/* --- types ------------------------------------------------------------- */

typedef uint32_t pmc_id_t;    /* an allocated PMC */
typedef uint64_t pmc_value_t; /* a PMC's value or count */

/* Driver statistics (pmc_get_driver_stats()): FreeBSD's fields, then ours. */
struct pmc_driverstats {
    unsigned int pm_intr_ignored;           /* interrupts not ours */
    unsigned int pm_intr_processed;         /* interrupts handled */
    unsigned int pm_intr_bufferfull;        /* samples dropped: ring full */
    unsigned int pm_syscalls;               /* operations issued */
    unsigned int pm_syscall_errors;         /* operations that failed */
    unsigned int pm_buffer_requests;        /* log buffers requested */
    unsigned int pm_buffer_requests_failed; /* none free */
    unsigned int pm_log_sweeps;             /* sample ring drains */
    /* Linux extensions. */
    uint64_t pm_samples_taken;
    uint64_t pm_samples_dropped;
    uint64_t pm_log_bytes;         /* bytes written to logs */
    uint64_t pm_alloc_failed;      /* atomic allocations that failed */
    uint64_t pm_samples_throttled; /* not taken: CPU throttled (module minor 2) */
};

/* CPU information (pmc_cpuinfo()). */
struct pmc_cpuinfo {
    enum pmc_cputype pm_cputype; /* the kind of CPU */
    uint32_t pm_ncpu;            /* highest possible CPU number + 1 */
    uint32_t pm_npmc;            /* PMC rows per CPU, all classes */
    uint32_t pm_nclass;          /* valid entries of pm_classes */
    struct pmc_classinfo pm_classes[PMC_CLASS_TABLE_SIZE];
};

/* The rows of one CPU (pmc_pmcinfo()); free(3) it. */
struct pmc_pmcinfo {
    int32_t pm_cpu;
    uint32_t pm_npmc; /* entries of pm_pmcs (an extension) */
    struct pmc_info pm_pmcs[];
};

/* --- operations -------------------------------------------------------- */

#pragma GCC visibility push(default)

int pmc_init(void);
int pmc_allocate(const char *_ctrspec, enum pmc_mode _mode, uint32_t _flags, int _cpu,
                 pmc_id_t *_pmcid, uint64_t _count);
int pmc_attach(pmc_id_t _pmcid, pid_t _pid);
int pmc_capabilities(pmc_id_t _pmc, uint32_t *_caps);
int pmc_configure_logfile(int _fd);
int pmc_flush_logfile(void);
int pmc_close_logfile(void);
int pmc_detach(pmc_id_t _pmcid, pid_t _pid);
int pmc_disable(int _cpu, int _pmc);
int pmc_enable(int _cpu, int _pmc);
int pmc_get_driver_stats(struct pmc_driverstats *_gms);
int pmc_get_msr(pmc_id_t _pmc, uint32_t *_msr);
int pmc_read(pmc_id_t _pmc, pmc_value_t *_value);
int pmc_release(pmc_id_t _pmc);
int pmc_rw(pmc_id_t _pmc, pmc_value_t _newvalue, pmc_value_t *_oldvalue);
int pmc_set(pmc_id_t _pmc, pmc_value_t _value);
int pmc_start(pmc_id_t _pmc);
int pmc_stop(pmc_id_t _pmc);
int pmc_width(pmc_id_t _pmc, uint32_t *_width);
int pmc_write(pmc_id_t _pmc, pmc_value_t _value);
int pmc_writelog(uint32_t _udata);

/*
 * RDPMC.  pmc_get_msr() asks the kernel for a PMC's RDPMC index
 * (PMCGETMSR).  For a process-scope PMC of a hardware class (IAP, IAF, K8)
 * attached to its owner only, without PMC_F_DESCENDANTS, the kernel also
 * lets the owner's process execute RDPMC on it, until the PMC is detached
 * from the owner or released; it then refuses to attach it to any other
 * process (EPERM).  Such a counting (PMC_MODE_TC) PMC's counter holds its
 * count modulo 2^width (pmc_width(): 48 bits) and raises no interrupt, as
 * on FreeBSD: RDPMC reads those low bits only, while the kernel (PMCRW)
 * still gives all 64.
 *
 * pmc_read() (and hwpmc::pmc::read()) uses RDPMC instead of the ioctl when
 * all of this holds: pmc_get_msr() succeeded for the PMC in this process
 * (not in a parent before fork(2)), it is a counting PMC the library
 * allocated, it was started with pmc_start() and neither stopped nor
 * detached from its owner since, and a read since the start or the last
 * pmc_write(), pmc_rw() or pmc_set() gave the full count.  That first read
 * is the ioctl's; the next ones extend each RDPMC reading to 64 bits with
 * the previous count: exact provided that fewer than 2^(width-1) events
 * (2^47: hours at GHz rates) happen between two reads.  The kernel folds
 * the counter into its own count only when it reads it (the ioctl) or the
 * thread is switched out, modulo 2^width too: a thread that counts 2^width
 * events or more between two such folds leaves the kernel's count (what
 * the ioctl reads after a stop or a detach) short by multiples of 2^width,
 * while the RDPMC reads, frequent enough, are not.  RDPMC reads the
 * counter of the calling thread's CPU, which holds the count of that thread
 * and of the threads switched out before it was switched in: exact for a
 * single-threaded owner; in a multi-threaded one it lacks what the other
 * threads counted meanwhile (the count stays monotonic: a reading behind
 * the previous count gives the previous count).  The library follows the
 * grant through its own calls only: a PMCDETACH or PMCRELEASE ioctl made
 * behind its back revokes it unseen, and RDPMC then raises SIGSEGV.
 * pmc_read() never uses RDPMC on other architectures.
 *
 * The read page (module 1.6; <linux/hwpmc.h>, "the read page").
 * pmc_init() maps the session's read page, and pmc_allocate() of a
 * process-scope counting SOFT PMC (any event but CLOCK.PROF) or of a TSC
 * PMC asks the kernel for its slot there.  pmc_read() of such a PMC then
 * reads the slot, with no system call, whenever the slot answers: the PMC
 * is allocated or running and attached to some process (SOFT), or always
 * (TSC: RDTSC, where the kernel finds the TSC invariant).  Otherwise, and
 * for every other PMC, with a module before 1.6, and in a fork(2)'s child
 * (which does not inherit the mapping), it is the PMCRW ioctl, so values
 * and errors are the ioctl's.  hwpmc::pmc::read() does the same with its
 * device's page (hwpmc::device::open() maps it); pmc_rw() never uses it.
 */

int pmc_ncpu(void);
int pmc_npmc(int _cpu);
int pmc_cpuinfo(const struct pmc_cpuinfo **_cpu_info);
int pmc_pmcinfo(int _cpu, struct pmc_pmcinfo **_pmc_info);

const char *pmc_name_of_capability(enum pmc_caps _c);
const char *pmc_name_of_class(enum pmc_class _pc);
const char *pmc_name_of_cputype(enum pmc_cputype _cp);
const char *pmc_name_of_disposition(enum pmc_disp _pd);
const char *pmc_name_of_event(enum pmc_event _pe);
const char *pmc_name_of_mode(enum pmc_mode _pm);
const char *pmc_name_of_state(enum pmc_state _ps);

/* The event names of a class; free(3) *_eventnames (not the names). */
int pmc_event_names_of_class(enum pmc_class _cl, const char ***_eventnames, int *_nevents);

/*
 * Extension: a message explaining the calling thread's last failed
 * pmc_allocate() (the offending token of the event specifier and the
 * nearest valid names), or "" if there is none.
 */
const char *pmc_errmsg(void);

/*
 * Extension: the generic alias ("instructions", "cycles", ...) that is
 * hardware event _event with unit mask _umask of class _cl (IAP or K8) on
 * a CPU of type _cputype (as a log's INITIALIZE record gives it), or NULL
 * (errno EINVAL) if none is.  Logs name hardware PMCs by their codes,
 * "IAP-event=0xc0,umask=0x0": this gives them back their usual names.
 */
const char *pmc_alias_of_event(enum pmc_cputype _cputype, enum pmc_class _cl, uint32_t _event,
                               uint32_t _umask);

/*
 * Extension: a raw operation on the library's owner (the /dev/hwpmc that
 * pmc_init() opened), as FreeBSD programs issue syscall(pmc_syscall, op,
 * arg) next to libpmc.  _op is a PMC_OP_* number of <linux/hwpmc.h>, _arg
 * its argument structure (of that header's layout; NULL for FLUSHLOG and
 * CLOSELOG).  Returns 0, or -1 with errno (the kernel's, or ENXIO before
 * pmc_init(), EINVAL for an unknown _op).  A PMC allocated this way is the
 * owner's as any other: pmc_read(), pmc_start() ... work on its id.  A
 * PMCDETACH or PMCRELEASE issued here ends the library's RDPMC use of it.
 * FreeBSD's layouts (pm_ev, pm_md, pm_pmc): <sys/pmc.h> of the compat
 * include directory, whose PMC_CALL() translates them.
 */
int pmc_raw_op(int _op, void *_arg);

/*
 * Extension: the library's /dev/hwpmc descriptor (for poll(2), or ioctls
 * of <linux/hwpmc.h>), or -1 with errno ENXIO before pmc_init().  It stays
 * the library's: do not close it.
 */
int pmc_owner_fd(void);

/*
 * FreeBSD's pmc_pmu_* family, served from libpfm4's tables for the CPU's
 * core PMU (FreeBSD: its JSON tables).  The event names are libpfm4's; an
 * index is a position in pmc_pmu_print_counters()'s list.  _cpuid is
 * accepted and ignored (the running CPU's PMU, or LIBPFM_FORCE_PMU's).
 *  - pmc_pmu_enabled(): 1 if libpfm4 knows the CPU's core PMU, else 0.
 *  - pmc_pmu_print_counters(filter): "\tNAME" lines on stdout, names
 *    containing filter (any case; NULL: all).  _desc: "NAME:\tDESCRIPTION";
 *    _desc_long: the same (libpfm4 has one description); _full: name,
 *    desc, event (the event select) and pmu lines.
 *  - pmc_pmu_sample_rate_get(name): PMC_PMU_SAMPLE_COUNT for an event the
 *    tables have (libpfm4 has no per-event period; FreeBSD's JSON "period"),
 *    PMC_PMU_DEFAULT_SAMPLE_COUNT (65536, FreeBSD's "not found") otherwise.
 *  - pmc_pmu_pmcallocate(name, op): fills pm_class (IAP or K8), pm_event,
 *    pm_config (usr and os from PMC_CAP_USER/SYSTEM in pm_caps, both if
 *    neither) and pm_caps |= READ|WRITE; 0, or ENOENT (not found) or
 *    EOPNOTSUPP (no core PMU) returned, not set in errno, as FreeBSD.
 *  - pmc_pmu_stat_mode(&names): pmcstat -s/-p's default counters (the
 *    generic aliases of cycles, instructions, branches, branch misses,
 *    cache references and misses: 6 names), 0; EOPNOTSUPP without a PMU.
 */
#define PMC_PMU_DEFAULT_SAMPLE_COUNT 65536
#define PMC_PMU_SAMPLE_COUNT 100003
int pmc_pmu_enabled(void);
void pmc_pmu_print_counters(const char *_filter);
void pmc_pmu_print_counter_desc(const char *_event);
void pmc_pmu_print_counter_desc_long(const char *_event);
void pmc_pmu_print_counter_full(const char *_event);
uint64_t pmc_pmu_sample_rate_get(const char *_event);
int pmc_pmu_pmcallocate(const char *_event, struct pmc_op_pmcallocate *_op);
const char *pmc_pmu_event_get_by_idx(const char *_cpuid, int _idx);
int pmc_pmu_idx_get_by_event(const char *_cpuid, const char *_event);
int pmc_pmu_stat_mode(const char ***_names);

#pragma GCC visibility pop

#ifdef __cplusplus
} /* extern "C" */
#endif

#undef HWPMC_ENUM_BASE

#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* HWPMC_PMC_H */
